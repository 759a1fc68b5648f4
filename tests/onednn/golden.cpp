// Golden outputs from an independent implementation: PyTorch computed each case once
// (tests/golden/make_golden.py, committed .bin files). The graph each file describes is
// partitioned (by make_fused_property, or by the ready-made onednn backend) and run on oneDNN;
// the unfused graph runs on the reference kernels; both must match PyTorch. Activations the
// exporters write out (GELU, Swish, HardSwish) are built written out, PyTorch computed the
// function itself.
#if defined(__GNUC__) && !defined(__clang__)
// g++ 12 -O3 in C++20 mode reports a false -Wrestrict inside std::string's operator+ (GCC bug
// 105329); sgmatch's headers silence it for their own code (detail/config.hpp), this file too.
#pragma GCC diagnostic ignored "-Wrestrict"
#endif
#include <doctest/doctest.h>

#include <cstdint>
#include <cstring>
#include <fstream>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "sgmatch/exec/executor.hpp"
#include "sgmatch/onednn/backend.hpp"
#include "sgmatch/onednn/property.hpp"
#include "sgmatch/partition/partition.hpp"
#include "sgmatch/sgmatch.hpp"
#include "support/numeric.hpp"

#ifndef SGMATCH_GOLDEN_DIR
#error "SGMATCH_GOLDEN_DIR must name tests/golden"
#endif

using namespace sgmatch;
using namespace sgmatch::ops;
using reference::array;

namespace {

struct named_tensor {
    std::string name;
    std::vector<std::int64_t> dims;
    std::vector<float> data;
};

std::vector<named_tensor> read_golden(const std::string& path) {
    std::ifstream f(path, std::ios::binary);
    REQUIRE_MESSAGE(f.good(), "cannot open " << path);
    char magic[4];
    f.read(magic, 4);
    REQUIRE(std::string(magic, 4) == "SGG1");
    auto u32 = [&] {
        std::uint32_t v = 0;
        f.read(reinterpret_cast<char*>(&v), 4);
        return v;
    };
    std::vector<named_tensor> out;
    const std::uint32_t count = u32();
    for (std::uint32_t i = 0; i < count; ++i) {
        named_tensor t;
        t.name.resize(u32());
        f.read(t.name.data(), static_cast<std::streamsize>(t.name.size()));
        t.dims.resize(u32());
        f.read(reinterpret_cast<char*>(t.dims.data()), static_cast<std::streamsize>(t.dims.size() * 8));
        std::size_t n = 1;
        for (auto d : t.dims) n *= static_cast<std::size_t>(d);
        t.data.resize(n);
        f.read(reinterpret_cast<char*>(t.data.data()), static_cast<std::streamsize>(n * 4));
        out.push_back(std::move(t));
    }
    REQUIRE(f.good());
    return out;
}

// The file's BatchNorm after cur, when it has one ("bn.*" tensors); else cur.
node_id batch_norm_if_given(graph& g, node_id cur, std::map<std::string, const named_tensor*>& by) {
    if (!by.count("bn.scale")) return cur;
    std::vector<input_ref> bn_in{cur};
    for (const char* k : {"bn.scale", "bn.shift", "bn.mean", "bn.var"}) bn_in.push_back(g.add_constant(k, by[k]->dims, by[k]->data));
    return g.add_op("BatchNormalization", "bn", bn_in, {{"epsilon", 1e-5}});
}

constexpr auto golden_pattern =
    op<Conv>() >> optional(op<BatchNorm>()) >>
    repeat<0, 3>(op<Relu>() | op<Clip>() | op<LeakyRelu>() | op<Swish>() | op<Gelu>() | op<HardSwish>() |
                 op<HardSigmoid>() | op<Mish>() | op<Tanh>() | op<Elu>() | op<Sigmoid>() | op<Add>(any()) |
                 op<Mul>(constant()) | op<Sub>(constant()));

}  // namespace

TEST_CASE("oneDNN lowering and reference kernels match PyTorch's golden outputs") {
    const char* cases[] = {"k3_bn_relu",    "k1s2_bn_add_relu",  "dw3s2_bn_relu6", "g2k5_bias_leaky",
                           "k7s2_b8_swish", "k3d2_gelu_erf",     "k3_hardswish_mulc", "k3_hardsigmoid",
                           "k3_mish_tanh",  "k1_elu_sigmoid",    "k5s2_gelu_tanh_sub"};
    const auto prop = onednn::make_fused_property<graph>("golden", golden_pattern);
    for (const char* name : cases) {
        const std::string case_name = name;
        CAPTURE(case_name);
        const auto ts = read_golden(std::string(SGMATCH_GOLDEN_DIR) + "/" + name + ".bin");
        std::map<std::string, const named_tensor*> by;
        for (auto& t : ts) by[t.name] = &t;
        REQUIRE(by.count("conv"));
        const auto& ca = by["conv"]->data;
        const auto s = static_cast<std::int64_t>(ca[0]), p = static_cast<std::int64_t>(ca[1]);
        const auto d = static_cast<std::int64_t>(ca[2]), grp = static_cast<std::int64_t>(ca[3]);
        graph g;
        const named_tensor& x = *by["x"];
        auto in = g.add_input("x", tensor_type{dtype::f32, x.dims});
        std::vector<input_ref> conv_in{in, g.add_constant("w", by["w"]->dims, by["w"]->data)};
        if (by.count("b")) conv_in.push_back(g.add_constant("b", by["b"]->dims, by["b"]->data));
        node_id cur = g.add_op("Conv", "conv", conv_in,
                               {{"strides", attribute::ints{s, s}}, {"pads", attribute::ints{p, p, p, p}},
                                {"dilations", attribute::ints{d, d}}, {"group", grp}});
        cur = batch_norm_if_given(g, cur, by);
        std::map<std::string, array> inputs{{"x", test::make_array(x.data, x.dims)}};
        for (const auto& t : ts) {
            if (t.name.rfind("op.", 0) != 0) continue;
            const std::string op = t.name.substr(t.name.find('.', 3) + 1), nm = t.name;
            if (op == "relu") cur = g.add_op("Relu", nm, {cur});
            else if (op == "relu6") cur = g.add_op("Clip", nm, {cur, g.add_scalar(nm + ".lo", 0.0f), g.add_scalar(nm + ".hi", 6.0f)});
            else if (op == "leaky_relu") cur = g.add_op("LeakyRelu", nm, {cur}, {{"alpha", 0.1}});
            else if (op == "swish") cur = g.add_op("SiLU", nm, {cur});
            else if (op == "gelu_erf") cur = g.add_op("Gelu", nm, {cur});
            else if (op == "gelu_tanh") cur = g.add_op("Gelu", nm, {cur}, {{"approximate", "tanh"}});
            else if (op == "hardswish") cur = g.add_op("HardSwish", nm, {cur});
            else if (op == "hardsigmoid") cur = g.add_op("HardSigmoid", nm, {cur}, {{"alpha", 1.0 / 6.0}, {"beta", 0.5}});
            else if (op == "mish") cur = g.add_op("Mish", nm, {cur});
            else if (op == "tanh") cur = g.add_op("Tanh", nm, {cur});
            else if (op == "elu") cur = g.add_op("Elu", nm, {cur}, {{"alpha", 0.5}});
            else if (op == "sigmoid") cur = g.add_op("Sigmoid", nm, {cur});
            else if (op == "add_residual") {
                auto r = g.add_input("residual", tensor_type{dtype::f32, by["residual"]->dims});
                inputs["residual"] = test::make_array(by["residual"]->data, by["residual"]->dims);
                cur = g.add_op("Add", nm, {cur, r});
            } else if (op == "mul_channel") cur = g.add_op("Mul", nm, {cur, g.add_constant("mul", by["mul"]->dims, by["mul"]->data)});
            else if (op == "sub_scalar") cur = g.add_op("Sub", nm, {cur, g.add_scalar(nm + ".c", 0.25f)});
            else FAIL("unknown op in the golden file: " << op);
        }
        g.mark_output(cur);
        const array expect = test::make_array(by["y"]->data, by["y"]->dims);

        CHECK(test::max_rel_error(exec::executor(g)(inputs).at(0), expect) <= 1e-4);  // reference kernels
        graph fused = g;
        const property_report rep = apply_property(fused, prop);
        CHECK(rep.accepted == 1);
        exec::run_stats st;
        CHECK(test::max_rel_error(exec::executor(fused)(inputs, &st).at(0), expect) <= 1e-4);
        CHECK(st.fused_nodes == 1);
        CHECK(st.reference_nodes == 0);
    }
}

namespace {

// An activation written out after x as exporters emit it (PyTorch's ONNX export of GELU; x *
// sigmoid(x); x * clip(x + 3, 0, 6) / 6).
std::optional<node_id> write_out(graph& g, node_id x, const std::string& op, const std::string& nm) {
    auto k = [&](const char* what, float v) { return g.add_scalar(nm + "." + what, v); };
    if (op == "gelu_erf_decomposed") {
        auto e = g.add_op("Erf", nm + ".erf", {g.add_op("Div", nm + ".div", {x, k("sqrt2", 1.4142135f)})});
        auto a = g.add_op("Add", nm + ".add", {e, k("one", 1.0f)});
        return g.add_op("Mul", nm + ".half", {g.add_op("Mul", nm + ".mul", {x, a}), k("half", 0.5f)});
    }
    if (op == "gelu_tanh_decomposed") {
        auto cube = g.add_op("Pow", nm + ".pow", {x, k("three", 3.0f)});
        auto inner = g.add_op("Add", nm + ".inner", {x, g.add_op("Mul", nm + ".c", {cube, k("c", 0.044715f)})});
        auto t = g.add_op("Tanh", nm + ".tanh", {g.add_op("Mul", nm + ".scale", {inner, k("s", 0.7978845608f)})});
        auto a = g.add_op("Add", nm + ".add", {t, k("one", 1.0f)});
        return g.add_op("Mul", nm + ".mul", {g.add_op("Mul", nm + ".half", {x, k("half", 0.5f)}), a});
    }
    if (op == "swish_decomposed") return g.add_op("Mul", nm + ".mul", {x, g.add_op("Sigmoid", nm + ".sig", {x})});
    if (op == "hardswish_decomposed") {
        auto c = g.add_op("Clip", nm + ".clip", {g.add_op("Add", nm + ".add", {x, k("three", 3.0f)}), k("lo", 0.0f), k("hi", 6.0f)});
        return g.add_op("Div", nm + ".div", {g.add_op("Mul", nm + ".mul", {x, c}), k("six", 6.0f)});
    }
    return std::nullopt;
}

}  // namespace

TEST_CASE("matmuls, Gemm and ConvTranspose through the ready-made backend match PyTorch, written-out activations included") {
    onednn::register_backend<graph>();
    const char* cases[] = {"mm3d_bias_gelu_erf_decomposed",   "gemm_t_relu_add",
                           "mm_bn_swish_decomposed",          "mm_gelu_tanh_decomposed_tanh",
                           "convT_k3s2_op1_bn_relu",          "convT_g2k4s2_hardswish_decomposed",
                           "convT_k2s2_gelu_tanh_decomposed", "convT_k3d2_bias_sigmoid_mul"};
    for (const char* name : cases) {
        const std::string case_name = name;
        CAPTURE(case_name);
        const auto ts = read_golden(std::string(SGMATCH_GOLDEN_DIR) + "/" + name + ".bin");
        std::map<std::string, const named_tensor*> by;
        for (auto& t : ts) by[t.name] = &t;
        REQUIRE(by.count("main"));
        const auto& m = by["main"]->data;
        const int kind = static_cast<int>(m[0]);
        const auto s = static_cast<std::int64_t>(m[1]), p = static_cast<std::int64_t>(m[2]);
        const auto d = static_cast<std::int64_t>(m[3]), grp = static_cast<std::int64_t>(m[4]);
        const auto op_pad = static_cast<std::int64_t>(m[5]);
        graph g;
        const named_tensor& x = *by["x"];
        auto in = g.add_input("x", tensor_type{dtype::f32, x.dims});
        auto w = g.add_constant("w", by["w"]->dims, by["w"]->data);
        node_id cur;
        if (kind == 1) {
            cur = g.add_op("MatMul", "mm", {in, w});
            if (by.count("b")) cur = g.add_op("Add", "bias", {cur, g.add_constant("b", by["b"]->dims, by["b"]->data)});
        } else if (kind == 2) {
            cur = g.add_op("Gemm", "fc", {in, w, g.add_constant("b", by["b"]->dims, by["b"]->data)}, {{"transB", 1}});
        } else {
            std::vector<input_ref> ins{in, w};
            if (by.count("b")) ins.push_back(g.add_constant("b", by["b"]->dims, by["b"]->data));
            cur = g.add_op("ConvTranspose", "up", ins,
                           {{"strides", attribute::ints{s, s}}, {"pads", attribute::ints{p, p, p, p}},
                            {"dilations", attribute::ints{d, d}}, {"group", grp},
                            {"output_padding", attribute::ints{op_pad, op_pad}}});
        }
        cur = batch_norm_if_given(g, cur, by);
        std::map<std::string, array> inputs{{"x", test::make_array(x.data, x.dims)}};
        for (const auto& t : ts) {
            if (t.name.rfind("op.", 0) != 0) continue;
            const std::string op = t.name.substr(t.name.find('.', 3) + 1), nm = t.name;
            if (op == "relu") cur = g.add_op("Relu", nm, {cur});
            else if (op == "tanh") cur = g.add_op("Tanh", nm, {cur});
            else if (op == "sigmoid") cur = g.add_op("Sigmoid", nm, {cur});
            else if (op == "add_residual") {
                auto r = g.add_input("residual", tensor_type{dtype::f32, by["residual"]->dims});
                inputs["residual"] = test::make_array(by["residual"]->data, by["residual"]->dims);
                cur = g.add_op("Add", nm, {cur, r});
            } else if (op == "mul_channel") cur = g.add_op("Mul", nm, {cur, g.add_constant("mul", by["mul"]->dims, by["mul"]->data)});
            else {
                const auto n = write_out(g, cur, op, nm);
                REQUIRE_MESSAGE(n.has_value(), "unknown op in the golden file: " << op);
                cur = *n;
            }
        }
        g.mark_output(cur);
        const named_tensor& y = *by["y"];
        const array expect = test::make_array(y.data, y.dims);

        CHECK(test::max_rel_error(exec::executor(g)(inputs).at(0), expect) <= 1e-4);  // reference kernels
        graph fused = g;
        const auto reports = apply_backend(fused, "onednn");
        std::size_t accepted = 0, op_nodes = 0;
        for (const auto& r : reports) accepted += r.accepted;
        for (auto n : fused.nodes()) op_nodes += fused.kind(n) == node_kind::op ? 1 : 0;
        CHECK(accepted == 1);
        CHECK(op_nodes == 1);  // everything, written-out activations included, in one fused node
        exec::run_stats st;
        CHECK(test::max_rel_error(exec::executor(fused, exec::mode::onednn)(inputs, &st).at(0), expect) <= 1e-4);
        CHECK(st.fused_nodes == 1);
        CHECK(st.reference_nodes == 0);
    }
}
