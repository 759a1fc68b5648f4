// Lowering generated from patterns: a graph partitioned by make_fused_property and run on
// oneDNN kernels computes what the unfused graph computes on the reference kernels. Declines
// carry their reasons.
#if defined(__GNUC__) && !defined(__clang__)
// g++ 12 -O3 in C++20 mode reports a false -Wrestrict inside std::string's operator+ (GCC bug
// 105329); sgmatch's headers silence it for their own code (detail/config.hpp), this file too.
#pragma GCC diagnostic ignored "-Wrestrict"
#endif
#include <doctest/doctest.h>

#include <cmath>
#include <cstdlib>
#include <random>
#include <string>
#include <vector>

#include "sgmatch/exec/executor.hpp"
#include "sgmatch/exec/subgraph.hpp"
#include "sgmatch/graph/builders.hpp"
#include "sgmatch/onednn/backend.hpp"
#include "sgmatch/onednn/property.hpp"
#include "sgmatch/partition/dot.hpp"
#include "sgmatch/partition/partition.hpp"
#include "sgmatch/sgmatch.hpp"
#include "support/numeric.hpp"
#include "support/reports.hpp"

using namespace sgmatch;
using namespace sgmatch::ops;
using reference::array;

namespace {

// The report of the ready-made backend's property `name` (without the "onednn." prefix).
const property_report& report(const std::vector<property_report>& reports, const std::string& name) {
    return test::report(reports, "onednn." + name);
}

// Conv, an optional BatchNorm, then up to three of: eltwise ops, a residual Add, binary ops with
// constants.
constexpr auto conv_chain = op<Conv>() >> optional(op<BatchNorm>()) >>
                            repeat<0, 3>(op<Relu>() | op<LeakyRelu>() | op<Clip>() | op<HardSigmoid>() | op<Sigmoid>() |
                                         op<Tanh>() | op<Elu>() | op<Gelu>() | op<Swish>() | op<HardSwish>() |
                                         op<Add>(any()) | op<Mul>(any()) | op<Sub>(any()) | op<Max>(any()));

struct built {
    graph g;
    std::map<std::string, array> inputs;
    std::string ops;
};

// A random conv chain with data, the kind conv_chain matches; residual operands are inputs.
built random_chain(std::mt19937& rng) {
    built b;
    graph& g = b.g;
    auto pick = [&](int n) { return std::uniform_int_distribution<int>(0, n - 1)(rng); };
    const std::int64_t N = pick(3) == 0 ? 2 : 1, C = 4 + 4 * pick(3), O = 4 + 4 * pick(3), H = 5 + pick(6), W = 5 + pick(6);
    const std::int64_t k = std::vector<std::int64_t>{1, 3, 5, 7}[static_cast<std::size_t>(pick(4))];
    const std::int64_t s = 1 + pick(2), p = k / 2, group = pick(4) == 0 ? 2 : 1;
    const std::int64_t oh = (H + 2 * p - k) / s + 1, ow = (W + 2 * p - k) / s + 1;
    const std::vector<std::int64_t> od{N, O, oh, ow};
    auto x = g.add_input("x", tensor_type{dtype::f32, {N, C, H, W}});
    b.inputs["x"] = test::random_array({N, C, H, W}, rng, 1.0f);
    std::vector<input_ref> conv_in{x, g.add_constant("w", {O, C / group, k, k},
                                                     test::random_values(static_cast<std::size_t>(O * C / group * k * k), rng, 0.4f))};
    if (pick(2)) conv_in.push_back(g.add_constant("b", {O}, test::random_values(static_cast<std::size_t>(O), rng, 0.5f)));
    node_id cur = g.add_op("Conv", "conv", conv_in,
                           {{"strides", attribute::ints{s, s}}, {"pads", attribute::ints{p, p, p, p}},
                            {"dilations", attribute::ints{1, 1}}, {"group", group}});
    g.set_type({cur, 0}, tensor_type{dtype::f32, od});
    b.ops = "conv k" + std::to_string(k) + " s" + std::to_string(s) + " g" + std::to_string(group);
    if (pick(2)) {
        auto O_ = static_cast<std::size_t>(O);
        auto var = test::random_values(O_, rng, 0.5f);
        for (auto& v : var) v = v + 1.0f;
        cur = g.add_op("BatchNormalization", "bn",
                       {cur, g.add_constant("bn.s", {O}, test::random_values(O_, rng, 1.0f)),
                        g.add_constant("bn.b", {O}, test::random_values(O_, rng, 1.0f)),
                        g.add_constant("bn.m", {O}, test::random_values(O_, rng, 0.5f)), g.add_constant("bn.v", {O}, var)},
                       {{"epsilon", 1e-5}});
        g.set_type({cur, 0}, tensor_type{dtype::f32, od});
        b.ops += " bn";
    }
    const int chain = pick(4);
    for (int i = 0; i < chain; ++i) {
        const std::string nm = "op" + std::to_string(i);
        const int which = pick(12);
        node_id next;
        if (which == 0) next = g.add_op("Relu", nm, {cur});
        else if (which == 1) next = g.add_op("LeakyRelu", nm, {cur}, {{"alpha", 0.2}});
        else if (which == 2) next = g.add_op("Clip", nm, {cur, g.add_scalar(nm + ".lo", -0.3f), g.add_scalar(nm + ".hi", 0.6f)});
        else if (which == 3) next = g.add_op("HardSigmoid", nm, {cur}, {{"alpha", 0.25}, {"beta", 0.4}});
        else if (which == 4) next = g.add_op("Sigmoid", nm, {cur});
        else if (which == 5) next = g.add_op("Gelu", nm, {cur}, {{"approximate", pick(2) ? "tanh" : "none"}});
        else if (which == 6) next = g.add_op("Elu", nm, {cur}, {{"alpha", 0.5}});
        else if (which == 7) next = g.add_op("HardSwish", nm, {cur});
        else if (which == 8) {  // residual: a runtime tensor of the output's shape, either side
            auto r = g.add_input(nm + ".r", tensor_type{dtype::f32, od});
            b.inputs[nm + ".r"] = test::random_array(od, rng, 1.0f);
            next = pick(2) ? g.add_op("Add", nm, {cur, r}) : g.add_op("Add", nm, {r, cur});
        } else if (which == 9) {  // per-channel constant multiplier
            next = g.add_op("Mul", nm, {cur, g.add_constant(nm + ".c", {1, O, 1, 1}, test::random_values(static_cast<std::size_t>(O), rng, 2.0f))});
        } else if (which == 10) {  // scalar subtraction
            next = g.add_op("Sub", nm, {cur, g.add_scalar(nm + ".c", 0.25f)});
        } else {  // max with a full-shape runtime tensor
            auto r = g.add_input(nm + ".r", tensor_type{dtype::f32, od});
            b.inputs[nm + ".r"] = test::random_array(od, rng, 1.0f);
            next = g.add_op("Max", nm, {cur, r});
        }
        g.set_type({next, 0}, tensor_type{dtype::f32, od});
        b.ops += " " + std::string(g.op_name(next));
        cur = next;
    }
    g.mark_output(cur);
    return b;
}

}  // namespace

TEST_CASE("random conv chains: partitioned on oneDNN == unfused on the reference kernels") {
    std::mt19937 rng(23);
    const auto prop = onednn::make_fused_property<graph>("conv_chain", conv_chain);
    const int rounds = test::sanitized() ? 40 : 300;
    for (int r = 0; r < rounds; ++r) {
        built b = random_chain(rng);
        CAPTURE(b.ops);
        const array expect = exec::executor(b.g)(b.inputs).at(0);
        graph fused = b.g;
        const property_report rep = apply_property(fused, prop);
        REQUIRE(rep.accepted == 1);
        std::size_t op_nodes = 0;
        for (auto n : fused.nodes()) op_nodes += fused.kind(n) == node_kind::op ? 1 : 0;
        CHECK(op_nodes == 1);  // the whole chain is one fused node
        exec::run_stats st;
        const array got = exec::executor(fused)(b.inputs, &st).at(0);
        CHECK(st.fused_nodes == 1);
        CHECK(st.reference_nodes == 0);
        CHECK(test::max_rel_error(got, expect) <= 1e-4);
    }
}

TEST_CASE("ResNet-50-shaped graph: partitioned on oneDNN == unfused reference") {
    const std::int64_t image = test::sanitized() ? 32 : 64;
    const graph g = build::resnet50(1, image, /*data_seed=*/42);
    std::mt19937 rng(1);
    const std::map<std::string, array> in{{"data", test::random_array({1, 3, image, image}, rng, 1.0f)}};
    const array expect = exec::executor(g)(in).at(0);
    graph fused = g;
    const auto prop = onednn::make_fused_property<graph>(
        "conv_bn_add_relu", op<Conv>() >> optional(op<BatchNorm>()) >> optional(op<Add>(any())) >> optional(op<Relu>()));
    const property_report rep = apply_property(fused, prop);
    CHECK(rep.accepted == 53);  // every conv, with its BN, and the residual add + relu where they follow
    CHECK(rep.rejected_check == 0);
    exec::run_stats st;
    const array got = exec::executor(fused)(in, &st).at(0);
    CHECK(st.fused_nodes == 53);
    CHECK(st.reference_nodes == 4);  // maxpool, global pool, flatten, fc
    // Kernels hand NHWC tensors on to each other: only the maxpool's input and the last block's
    // output are converted to plain arrays (plus nothing else).
    CHECK(st.reorders_to_plain == 2);
    CHECK(st.in_place_sums == 16);  // each residual is read last by its block's fused conv: accumulated into
    CHECK(test::max_rel_error(got, expect) <= 1e-4);
}

TEST_CASE("x + conv(x): the residual is the conv's own source, so the sum is not accumulated into it") {
    // r = relu(conv0(in)); y = relu(conv1(r) + r): the fused conv1 reads r once, as its source and
    // as its sum post-op's residual. Accumulating into r in place would overwrite the source.
    graph g;
    std::mt19937 rng(5);
    auto x = g.add_input("x", tensor_type{dtype::f32, {1, 8, 6, 6}});
    auto c0 = g.add_op("Conv", "conv0", {x, g.add_constant("w0", {8, 8, 1, 1}, test::random_values(64, rng, 0.4f))});
    auto r = g.add_op("Relu", "relu0", {c0});
    auto c1 = g.add_op("Conv", "conv1", {r, g.add_constant("w1", {8, 8, 3, 3}, test::random_values(576, rng, 0.2f))},
                       {{"pads", attribute::ints{1, 1, 1, 1}}});
    auto y = g.add_op("Relu", "relu1", {g.add_op("Add", "add", {c1, r})});
    g.mark_output(y);
    const std::map<std::string, array> in{{"x", test::random_array({1, 8, 6, 6}, rng, 1.0f)}};
    const array expect = exec::executor(g)(in).at(0);
    graph fused = g;
    const auto prop = onednn::make_fused_property<graph>("p", op<Conv>() >> optional(op<Add>(any())) >> optional(op<Relu>()));
    CHECK(apply_property(fused, prop).accepted == 2);
    exec::run_stats st;
    CHECK(test::max_rel_error(exec::executor(fused, exec::mode::onednn)(in, &st).at(0), expect) <= 1e-5);
    CHECK(st.fused_nodes == 2);
    CHECK(st.in_place_sums == 0);
}

TEST_CASE("matches that cannot lower are declined with the reason, and the graph is left as it was") {
    SUBCASE("BatchNorm parameters that are not constants") {
        graph g;
        auto x = g.add_input("x", tensor_type{dtype::f32, {1, 4, 6, 6}});
        auto c = g.add_op("Conv", "conv", {x, g.add_constant("w", {4, 4, 1, 1}, std::vector<float>(16, 0.1f))});
        std::vector<input_ref> bn_in{c};
        for (const char* p : {"s", "b", "m", "v"}) bn_in.push_back(g.add_input(p));
        auto bn = g.add_op("BatchNormalization", "bn", bn_in);
        auto r = g.add_op("Relu", "relu", {bn});
        g.mark_output(r);
        const auto prop = onednn::make_fused_property<graph>("p", op<Conv>() >> op<BatchNorm>() >> op<Relu>());
        const std::size_t before = g.node_count();
        const property_report rep = apply_property(g, prop);
        CHECK(rep.accepted == 0);
        REQUIRE(rep.check_reasons.size() == 1);
        CHECK(rep.check_reasons.begin()->first == "BatchNorm 'bn': parameters are not constants with data");
        CHECK(g.node_count() == before);
        CHECK(summary({rep}).find("declined: BatchNorm 'bn'") != std::string::npos);
    }
    SUBCASE("a BatchNorm in training mode (the batch's statistics: nothing to fold)") {
        graph g;
        auto x = g.add_input("x", tensor_type{dtype::f32, {2, 4, 6, 6}});
        auto c = g.add_op("Conv", "conv", {x, g.add_constant("w", {4, 4, 1, 1}, std::vector<float>(16, 0.1f))});
        std::vector<input_ref> bn_in{c};
        for (const char* p : {"s", "b", "m", "v"}) bn_in.push_back(g.add_constant(p, {4}, std::vector<float>(4, 0.5f)));
        auto bn = g.add_op("BatchNormalization", "bn", bn_in, {{"training_mode", 1}});
        g.mark_output(g.add_op("Relu", "relu", {bn}));
        const auto prop = onednn::make_fused_property<graph>("p", op<Conv>() >> op<BatchNorm>() >> op<Relu>());
        std::mt19937 rng(4);
        const std::map<std::string, array> in{{"x", test::random_array({2, 4, 6, 6}, rng, 1.0f)}};
        const array want = exec::executor(g)(in).at(0);
        const property_report rep = apply_property(g, prop);
        CHECK(rep.accepted == 0);
        CHECK(rep.check_reasons.count("BatchNorm 'bn' is in training mode") == 1);
        CHECK(test::max_rel_error(exec::executor(g, exec::mode::onednn)(in).at(0), want) <= 1e-5);
    }
    SUBCASE("the conv on the right of a Sub; a shape the conv cannot take") {
        graph g;
        auto x = g.add_input("x", tensor_type{dtype::f32, {1, 4, 6, 6}});
        auto c = g.add_op("Conv", "conv", {x, g.add_constant("w", {4, 4, 1, 1}, std::vector<float>(16, 0.1f))});
        auto s = g.add_op("Sub", "sub", {g.add_scalar("one", 1.0f), c});
        g.mark_output(s);
        auto y = g.add_input("y", tensor_type{dtype::f32, {1, 3, 6, 6}});  // 3 channels, weights need 4
        auto c2 = g.add_op("Conv", "conv2", {y, g.add_constant("w2", {4, 4, 1, 1}, std::vector<float>(16, 0.1f))});
        g.mark_output(c2);
        const auto prop = onednn::make_fused_property<graph>("p", op<Conv>() >> optional(op<Sub>(any())));
        const property_report rep = apply_property(g, prop);
        // conv alone is still fused (the declined longer match gives way); conv2 is declined.
        CHECK(rep.accepted == 1);
        CHECK(rep.check_reasons.count("Sub 'sub': the convolution is its right operand") == 1);
        bool shape_reason = false;
        for (auto& [why, n] : rep.check_reasons) shape_reason = shape_reason || why.find("3 channels") != std::string::npos;
        CHECK(shape_reason);
        CHECK(g.contains(s));
        CHECK(g.contains(c2));
    }
    SUBCASE("an intermediate used outside the match") {
        graph g;
        auto x = g.add_input("x", tensor_type{dtype::f32, {1, 4, 6, 6}});
        auto c = g.add_op("Conv", "conv", {x, g.add_constant("w", {4, 4, 1, 1}, std::vector<float>(16, 0.1f))});
        auto r = g.add_op("Relu", "relu", {c});
        g.mark_output(r);
        g.mark_output(c);
        auto prop = onednn::make_fused_property<graph>("p", op<Conv>() >> op<Relu>());
        prop.allow_escaping();
        const property_report rep = apply_property(g, prop);
        CHECK(rep.accepted == 0);
        CHECK(rep.check_reasons.count("the value of 'conv' is a graph output") == 1);
    }
}

TEST_CASE("executor modes: one oneDNN primitive per op (format any, or plain NCHW) == reference, unfused and fused") {
    const std::int64_t image = test::sanitized() ? 32 : 64;
    const graph g = build::resnet50(2, image, /*data_seed=*/7);
    std::mt19937 rng(3);
    const std::map<std::string, array> in{{"data", test::random_array({2, 3, image, image}, rng, 1.0f)}};
    const array expect = exec::executor(g)(in).at(0);
    for (exec::mode m : {exec::mode::onednn, exec::mode::onednn_plain}) {
        CAPTURE(static_cast<int>(m));
        exec::run_stats st;
        const array got = exec::executor(g, m)(in, &st).at(0);
        CHECK(test::max_rel_error(got, expect) <= 1e-4);
        CHECK(st.reference_nodes == 0);  // every op of ResNet-50 has a primitive
        CHECK(st.onednn_nodes == 53 + 53 + 16 + 49 + 4);  // conv, bn, add, relu, maxpool/gpool/flatten/fc
        // Fused nodes and single-op primitives together.
        graph fused = g;
        apply_property(fused, onednn::make_fused_property<graph>("cbar", op<Conv>() >> op<BatchNorm>() >>
                                                                              optional(op<Add>(any())) >> optional(op<Relu>())));
        exec::run_stats fs;
        CHECK(test::max_rel_error(exec::executor(fused, m)(in, &fs).at(0), expect) <= 1e-4);
        CHECK(fs.fused_nodes == 53);
        CHECK(fs.onednn_nodes == 4);
        CHECK(fs.reference_nodes == 0);
    }
}

TEST_CASE("LogSoftmax, GlobalMaxPool, Neg and Reciprocal run on oneDNN primitives == reference") {
    graph g;
    const node_id x = g.add_input("x", tensor_type{dtype::f32, {2, 8, 5, 5}});
    g.mark_output(g.add_op("LogSoftmax", "ls", {x}, {{"axis", 1}}));
    g.mark_output(g.add_op("GlobalMaxPool", "gmp", {x}));
    g.mark_output(g.add_op("Neg", "neg", {x}));
    g.mark_output(g.add_op("Reciprocal", "rcp", {g.add_op("Sigmoid", "sig", {x})}));  // of values in (0, 1)
    std::mt19937 rng(5);
    const std::map<std::string, array> in{{"x", test::random_array({2, 8, 5, 5}, rng, 3.0f)}};
    const auto expect = exec::executor(g)(in);
    for (exec::mode m : {exec::mode::onednn, exec::mode::onednn_plain}) {
        exec::run_stats st;
        const auto got = exec::executor(g, m)(in, &st);
        REQUIRE(got.size() == 4);
        for (std::size_t o = 0; o < 4; ++o) {
            CAPTURE(o);
            CHECK(got[o].shape() == expect[o].shape());
            CHECK(test::max_rel_error(got[o], expect[o]) <= 1e-5);
        }
        CHECK(st.onednn_nodes == 5);
        CHECK(st.reference_nodes == 0);
    }
}

TEST_CASE("PRelu, Sum and Mean run on oneDNN primitives == reference, Sum of broadcast inputs on its reference kernel") {
    graph g;
    const node_id x = g.add_input("x", tensor_type{dtype::f32, {2, 8, 5, 5}});
    const node_id y = g.add_input("y", tensor_type{dtype::f32, {2, 8, 5, 5}});
    const node_id slope = g.add_input("slope", tensor_type{dtype::f32, {8, 1, 1}});
    std::mt19937 rng(6);
    const array per_channel = test::random_array({8, 1, 1}, rng, 1.0f);
    const std::vector<float> pc(per_channel.data(), per_channel.data() + 8);
    // Slopes: per channel (a constant, as PyTorch's nn.PReLU(C) exports it), one shared value,
    // the full shape, and a computed per-channel slope.
    g.mark_output(g.add_op("PRelu", "prelu_c", {x, g.add_constant("pc", {8, 1, 1}, pc)}));
    g.mark_output(g.add_op("PRelu", "prelu_1", {x, g.add_constant("one", {1}, {0.25f})}));
    g.mark_output(g.add_op("PRelu", "prelu_full", {x, y}));
    g.mark_output(g.add_op("PRelu", "prelu_computed", {g.add_op("Relu", "r", {x}), slope}));
    g.mark_output(g.add_op("Sum", "sum3", {x, y, g.add_op("Sigmoid", "sig", {y})}));
    g.mark_output(g.add_op("Mean", "mean2", {x, y}));
    g.mark_output(g.add_op("Sum", "sum_bcast", {x, slope}));  // broadcasts: oneDNN's sum does not
    const std::map<std::string, array> in{{"x", test::random_array({2, 8, 5, 5}, rng, 3.0f)},
                                          {"y", test::random_array({2, 8, 5, 5}, rng, 3.0f)},
                                          {"slope", test::random_array({8, 1, 1}, rng, 1.0f)}};
    const auto expect = exec::executor(g)(in);
    // The closed form of one output, against the reference kernel's.
    for (std::size_t i = 0; i < expect[1].size(); ++i) {
        const float v = in.at("x").data()[i];
        CHECK(expect[1].data()[i] == (v >= 0 ? v : 0.25f * v));
    }
    for (exec::mode m : {exec::mode::onednn, exec::mode::onednn_plain}) {
        CAPTURE(static_cast<int>(m));
        exec::run_stats st;
        const auto got = exec::executor(g, m)(in, &st);
        REQUIRE(got.size() == 7);
        for (std::size_t o = 0; o < 7; ++o) {
            CAPTURE(o);
            CHECK(got[o].shape() == expect[o].shape());
            CHECK(test::max_rel_error(got[o], expect[o]) <= 1e-5);
        }
        CHECK(st.onednn_nodes == 4 + 2 + 2);  // four PRelu, two Sum and Mean, Relu and Sigmoid
        CHECK(st.reference_nodes == 1);       // the broadcasting Sum
    }
}

TEST_CASE("single-op oneDNN kernels on random DAGs of element-wise and pooling ops == reference") {
    const char* unary_ops[] = {"Relu", "Sigmoid", "Tanh", "MaxPool", "HardSwish", "Abs"};
    const char* binary_ops[] = {"Add", "Mul", "Max", "Sub", "Min"};
    for (unsigned seed = 1; seed <= (test::sanitized() ? 3u : 20u); ++seed) {
        CAPTURE(seed);
        std::mt19937 rng(seed);
        graph g;
        std::vector<node_id> all;
        std::map<std::string, array> in;
        for (int i = 0; i < 3; ++i) {
            const std::string nm = "in" + std::to_string(i);
            all.push_back(g.add_input(nm, tensor_type{dtype::f32, {2, 8, 5, 5}}));
            in[nm] = test::random_array({2, 8, 5, 5}, rng, 1.0f);
        }
        auto pick = [&](std::size_t n) { return std::uniform_int_distribution<std::size_t>(0, n - 1)(rng); };
        auto recent = [&] { return all[all.size() - 1 - pick(std::min<std::size_t>(all.size(), 12))]; };
        for (int i = 0; i < 60; ++i) {
            const std::string nm = "v" + std::to_string(i);
            if (pick(2)) {
                const char* op = unary_ops[pick(6)];
                all.push_back(std::string(op) == "MaxPool"
                                  ? g.add_op(op, nm, {recent()}, {{"kernel_shape", attribute::ints{3, 3}},
                                                                  {"pads", attribute::ints{1, 1, 1, 1}}})
                                  : g.add_op(op, nm, {recent()}));
            } else {
                all.push_back(g.add_op(binary_ops[pick(5)], nm, {recent(), recent()}));
            }
        }
        g.mark_output(all.back());
        const array expect = exec::executor(g)(in).at(0);
        exec::run_stats st;
        CHECK(test::max_rel_error(exec::executor(g, exec::mode::onednn)(in, &st).at(0), expect) <= 1e-4);
        CHECK(st.reference_nodes == 0);
        CHECK(st.onednn_nodes == 60);
    }
}

TEST_CASE("the ready-made onednn backend, switched on by SGMATCH_BACKEND") {
    CHECK(onednn::register_backend<graph>());
    CHECK(onednn::register_backend<graph>());  // idempotent
    REQUIRE(backend_registry<graph>::instance().find("onednn")->properties().size() == onednn::make_backend<graph>().properties().size());
    const graph g = build::resnet50(1, 32, /*data_seed=*/11);
    std::mt19937 rng(4);
    const std::map<std::string, array> in{{"data", test::random_array({1, 3, 32, 32}, rng, 1.0f)}};
    const array expect = exec::executor(g)(in).at(0);
    graph fused = g;
    ::setenv("SGMATCH_BACKEND", "onednn", 1);
    const auto reports = apply_backend_from_env(fused, environment::read());
    ::unsetenv("SGMATCH_BACKEND");
    REQUIRE(reports.size() == onednn::make_backend<graph>().properties().size());
    CHECK(report(reports, "conv_post_ops").accepted == 53);
    CHECK(report(reports, "matmul_post_ops").accepted == 1);  // the classifier's Gemm
    exec::run_stats st;
    CHECK(test::max_rel_error(exec::executor(fused, exec::mode::onednn)(in, &st).at(0), expect) <= 1e-4);
    CHECK(st.fused_nodes == 54);
    // A bias Add before the BatchNorm is folded; a training graph is left alone (inference_only).
    graph h;
    auto x = h.add_input("x", tensor_type{dtype::f32, {1, 2, 4, 4}});
    auto c = h.add_op("Conv", "c", {x, h.add_constant("w", {2, 2, 1, 1}, {1, 2, 3, 4})});
    auto a = h.add_op("Add", "bias", {c, h.add_constant("b", {1, 2, 1, 1}, {0.5f, -0.5f})});
    auto r = h.add_op("Relu", "r", {a});
    h.mark_output(r);
    graph train = h;
    train.set_needs_gradients(true);
    CHECK(apply_backend(train, "onednn")[0].skipped);
    const std::map<std::string, array> hx{{"x", test::random_array({1, 2, 4, 4}, rng, 1.0f)}};
    const array hexpect = exec::executor(h)(hx).at(0);
    CHECK(report(apply_backend(h, "onednn"), "conv_post_ops").accepted == 1);  // conv + bias + relu
    CHECK(h.node_count() == 4);  // x, w, b and the fused node
    CHECK(test::max_rel_error(exec::executor(h)(hx).at(0), hexpect) <= 1e-5);
}

TEST_CASE("MatMul and Gemm with constant weights lower to fused matmuls (bias folded, post-ops, residual sum)") {
    std::mt19937 rng(31);
    const auto prop = onednn::make_fused_property<graph>(
        "mm", (op<MatMul>() | op<Gemm>()) >> optional(op<Add>(constant())) >>
                  repeat<0, 3>(op<Relu>() | op<Gelu>() | op<Tanh>() | op<Sigmoid>() | op<Add>(any()) | op<Mul>(constant())));
    auto pick = [&](int n) { return std::uniform_int_distribution<int>(0, n - 1)(rng); };
    for (int r = 0; r < (test::sanitized() ? 20 : 120); ++r) {
        graph g;
        const std::int64_t M = 1 + pick(9), K = 4 + pick(29), N = 3 + pick(30);
        const bool batched = pick(3) == 0, gemm = !batched && pick(2) == 1;
        const std::vector<std::int64_t> xd = batched ? std::vector<std::int64_t>{2, M, K} : std::vector<std::int64_t>{M, K};
        std::vector<std::int64_t> od = xd;
        od.back() = N;
        std::map<std::string, array> in{{"x", test::random_array(xd, rng, 1.0f)}};
        auto x = g.add_input("x", tensor_type{dtype::f32, xd});
        std::string ops;
        node_id cur;
        if (gemm) {  // FullyConnected as exported: Gemm(x, W^T, b), transB = 1
            const bool tb = pick(2) == 1;
            auto w = g.add_constant("W", tb ? std::vector<std::int64_t>{N, K} : std::vector<std::int64_t>{K, N},
                                    test::random_values(static_cast<std::size_t>(K * N), rng, 0.3f));
            std::vector<input_ref> ins{x, w};
            if (pick(2)) ins.push_back(g.add_constant("C", {N}, test::random_values(static_cast<std::size_t>(N), rng, 0.5f)));
            cur = g.add_op("Gemm", "fc", ins, {{"transB", tb ? 1 : 0}, {"alpha", 0.5}, {"beta", 2.0}});
            ops = tb ? "Gemm^T" : "Gemm";
        } else {
            cur = g.add_op("MatMul", "mm", {x, g.add_constant("W", {K, N}, test::random_values(static_cast<std::size_t>(K * N), rng, 0.3f))});
            ops = batched ? "MatMul3d" : "MatMul";
            if (pick(2)) {
                cur = g.add_op("Add", "bias", {cur, g.add_constant("b", {N}, test::random_values(static_cast<std::size_t>(N), rng, 0.5f))});
                ops += " +bias";
            }
        }
        g.set_type({cur, 0}, tensor_type{dtype::f32, od});
        for (int i = 0, n = pick(4); i < n; ++i) {
            const std::string nm = "op" + std::to_string(i);
            const int w = pick(6);
            if (w == 0) cur = g.add_op("Relu", nm, {cur});
            else if (w == 1) cur = g.add_op("Gelu", nm, {cur});
            else if (w == 2) cur = g.add_op("Tanh", nm, {cur});
            else if (w == 3) cur = g.add_op("Sigmoid", nm, {cur});
            else if (w == 4) {
                auto res = g.add_input(nm + ".r", tensor_type{dtype::f32, od});
                in[nm + ".r"] = test::random_array(od, rng, 1.0f);
                cur = g.add_op("Add", nm, {res, cur});
            } else {
                std::vector<std::int64_t> cd(od.size(), 1);
                cd.back() = N;
                cur = g.add_op("Mul", nm, {cur, g.add_constant(nm + ".c", cd, test::random_values(static_cast<std::size_t>(N), rng, 2.0f))});
            }
            g.set_type({cur, 0}, tensor_type{dtype::f32, od});
            ops += " " + std::string(g.op_name(cur));
        }
        g.mark_output(cur);
        CAPTURE(ops);
        const array expect = exec::executor(g)(in).at(0);
        graph fused = g;
        const property_report rep = apply_property(fused, prop);
        CHECK(rep.accepted == 1);
        CHECK(rep.check_reasons.empty());
        exec::run_stats st;
        CHECK(test::max_rel_error(exec::executor(fused)(in, &st).at(0), expect) <= 1e-4);
        CHECK(st.fused_nodes == 1);
        CHECK(st.reference_nodes == 0);
    }
    // Declined: a matmul whose right operand is computed; BatchNorm after a matmul.
    graph g;
    auto a = g.add_input("a", tensor_type{dtype::f32, {4, 8}});
    auto b = g.add_input("b", tensor_type{dtype::f32, {8, 3}});
    g.mark_output(g.add_op("Relu", "r", {g.add_op("MatMul", "mm", {a, b})}));
    const property_report rep = apply_property(g, prop);
    CHECK(rep.accepted == 0);
    CHECK(rep.check_reasons.count("MatMul 'mm': the right operand is not a 2-D constant with data") == 1);
}

TEST_CASE("a kernel that rejects its input at run time: the fused node runs its ops unfused, a single op its reference kernel") {
    // Shapes unknown when the graph is partitioned: a fused matmul takes at most 3 batch dims, so
    // a 6-D input reaches a kernel that rejects it. The residual is computed (a oneDNN relu in
    // mode::onednn), so the fused node would accumulate into it in place: a rejection must leave
    // it intact for the unfused run.
    std::mt19937 rng(77);
    const std::int64_t K = 5, N = 4;
    graph g;
    auto x = g.add_input("x");
    auto res = g.add_op("Relu", "res", {g.add_input("r")});
    auto mm = g.add_op("MatMul", "mm", {x, g.add_constant("W", {K, N}, test::random_values(K * N, rng, 0.4f))});
    auto bias = g.add_op("Add", "bias", {mm, g.add_constant("b", {N}, test::random_values(N, rng, 0.5f))});
    g.mark_output(g.add_op("Relu", "out", {g.add_op("Add", "sum", {bias, res})}));
    graph fused = g;
    const auto prop = onednn::make_fused_property<graph>("mm", op<MatMul>() >> op<Add>(constant()) >> op<Add>(any()) >> op<Relu>());
    REQUIRE(apply_property(fused, prop).accepted == 1);
    const exec::executor reference(g), run(fused, exec::mode::onednn);
    auto check = [&](const std::vector<std::int64_t>& xd, std::size_t fallbacks) {
        std::vector<std::int64_t> rd = xd;
        rd.back() = N;
        const std::map<std::string, array> in{{"x", test::random_array(xd, rng, 1.0f)}, {"r", test::random_array(rd, rng, 1.0f)}};
        exec::run_stats st;
        CHECK(test::max_rel_error(run(in, &st).at(0), reference(in).at(0)) <= 1e-4);
        CHECK(st.fallbacks == fallbacks);
        CHECK(st.fused_nodes == 1 - fallbacks);
        CHECK(st.in_place_sums == 1 - fallbacks);  // the residual is the fused node's destination
    };
    check({3, K}, 0);
    check({1, 2, 1, 2, 3, K}, 1);  // rejected: the ops run unfused
    check({1, 2, 1, 2, 3, K}, 1);  // the same shape again: not offered to the kernel, same result
    check({2, 3, K}, 0);           // other shapes still run fused
    {
        // Both fail (the inner dims differ): one error with both reasons, nothing half done.
        const std::map<std::string, array> in{{"x", test::random_array({3, K + 1}, rng, 1.0f)},
                                              {"r", test::random_array({3, N}, rng, 1.0f)}};
        CHECK_THROWS_WITH_AS(run(in), doctest::Contains("'mm'"), exec::exec_error);
        CHECK_THROWS_WITH_AS(run(in), doctest::Contains("rejected the input"), exec::exec_error);
        CHECK_THROWS_WITH_AS(run(in), doctest::Contains("failed too"), exec::exec_error);
    }
    // A single-op kernel: a 7-D tensor has no plain oneDNN layout here; the op's reference kernel runs.
    graph one;
    one.mark_output(one.add_op("Tanh", "t", {one.add_input("x")}));
    const std::map<std::string, array> in7{{"x", test::random_array({1, 2, 1, 2, 1, 2, 3}, rng, 1.0f)}};
    exec::run_stats st;
    const array y = exec::executor(one, exec::mode::onednn)(in7, &st).at(0);
    CHECK(test::max_rel_error(y, exec::executor(one)(in7).at(0)) <= 1e-6);
    CHECK(st.fallbacks == 1);
    CHECK(st.onednn_nodes == 0);
    CHECK(st.reference_nodes == 1);
}

namespace {

// The activation written out after `x` in one of the forms exporters emit; `variant` picks the
// form. Returns the last node. `ops` names what was built.
node_id write_out(graph& g, node_id x, int act, int variant, std::string& ops) {
    auto k = [&](const char* name, float v) { return g.add_scalar(name, v); };
    auto tail = [&](node_id one_plus) {  // 0.5 * x * one_plus, three ways
        switch (variant % 3) {
            case 0: ops += " Mul(x,.)->Mul(.,0.5)"; return g.add_op("Mul", "half", {g.add_op("Mul", "xm", {x, one_plus}), k("c0.5", 0.5f)});
            case 1: ops += " Mul(Mul(x,0.5),.)"; return g.add_op("Mul", "xm", {one_plus, g.add_op("Mul", "half", {k("c0.5", 0.5f), x})});
            default: ops += " Mul(.,0.5)->Mul(x,.)"; return g.add_op("Mul", "xm", {x, g.add_op("Mul", "half", {one_plus, k("c0.5", 0.5f)})});
        }
    };
    switch (act) {
        case 0: {  // GELU, erf form
            node_id d = variant < 3 ? g.add_op("Div", "div", {x, k("sqrt2", 1.4142135f)})
                                    : g.add_op("Mul", "div", {k("rsqrt2", 0.70710677f), x});
            ops += variant < 3 ? " gelu_erf Div" : " gelu_erf Mul";
            return tail(g.add_op("Add", "one_plus", {g.add_op("Erf", "erf", {d}), k("one", 1.0f)}));
        }
        case 1: {  // GELU, tanh form
            node_id cube = variant < 3 ? g.add_op("Pow", "cube", {x, k("three", 3.0f)})
                                       : g.add_op("Mul", "cube", {g.add_op("Mul", "sq", {x, x}), x});
            ops += variant < 3 ? " gelu_tanh Pow" : " gelu_tanh Mul";
            node_id s = g.add_op("Add", "inner", {x, g.add_op("Mul", "c3", {cube, k("c", 0.044715f)})});
            node_id t = g.add_op("Tanh", "tanh", {g.add_op("Mul", "scale", {k("s", 0.7978846f), s})});
            return tail(g.add_op("Add", "one_plus", {k("one", 1.0f), t}));
        }
        case 2:  // Swish
            ops += " swish";
            return g.add_op("Mul", "swish", variant % 2 ? std::vector<input_ref>{g.add_op("Sigmoid", "sig", {x}), x}
                                                         : std::vector<input_ref>{x, g.add_op("Sigmoid", "sig", {x})});
        default: {  // HardSwish
            if (variant == 4) {
                ops += " x*HardSigmoid";
                return g.add_op("Mul", "hs", {x, g.add_op("HardSigmoid", "hsig", {x}, {{"alpha", 1.0 / 6.0}, {"beta", 0.5}})});
            }
            node_id a = g.add_op("Add", "plus3", {x, k("three", 3.0f)});
            node_id c = variant % 2 ? g.add_op("Clip", "clip", {a, k("lo", 0.0f), k("hi", 6.0f)})
                                    : g.add_op("Clip", "clip", {a}, {{"min", 0.0}, {"max", 6.0}});
            auto sixth = [&](node_id v) {
                return variant < 2 ? g.add_op("Div", "sixth", {v, k("six", 6.0f)}) : g.add_op("Mul", "sixth", {v, k("r6", 1.0f / 6.0f)});
            };
            ops += " hardswish " + std::to_string(variant);
            return variant == 1 || variant == 3 ? g.add_op("Mul", "hs", {x, sixth(c)}) : sixth(g.add_op("Mul", "hs", {c, x}));
        }
    }
}

}  // namespace

TEST_CASE("decomposed GELU / Swish / HardSwish after a conv or matmul: one kernel with one eltwise post-op") {
    onednn::register_backend<graph>();
    std::mt19937 rng(77);
    const dnnl::algorithm expect_alg[] = {dnnl::algorithm::eltwise_gelu_erf, dnnl::algorithm::eltwise_gelu_tanh,
                                          dnnl::algorithm::eltwise_swish, dnnl::algorithm::eltwise_hardswish};
    const int variants[] = {6, 6, 2, 5};
    int cases = 0;
    for (int main = 0; main < 3; ++main)
        for (int act = 0; act < 4; ++act)
            for (int variant = 0; variant < variants[act]; ++variant)
                for (int after = 0; after < 2; ++after) {
                    graph g;
                    std::map<std::string, array> in;
                    std::string ops;
                    node_id x;
                    std::vector<std::int64_t> od;
                    if (main == 0) {  // Conv + BatchNorm, NCHW
                        const std::int64_t C = 3, O = 8;
                        od = {1, O, 6, 6};
                        auto src = g.add_input("src", tensor_type{dtype::f32, {1, C, 6, 6}});
                        in["src"] = test::random_array({1, C, 6, 6}, rng, 1.5f);
                        x = g.add_op("Conv", "conv", {src, g.add_constant("w", {O, C, 3, 3}, test::random_values(O * C * 9, rng, 0.5f))},
                                     {{"pads", attribute::ints{1, 1, 1, 1}}});
                        std::vector<input_ref> bn{x};
                        for (const char* p : {"scale", "shift", "mean", "var"}) {
                            auto v = test::random_values(O, rng, 0.5f);
                            if (std::string(p) == "var")
                                for (auto& e : v) e = 0.5f + std::abs(e);
                            bn.push_back(g.add_constant(p, {O}, v));
                        }
                        x = g.add_op("BatchNormalization", "bn", bn);
                        ops = "Conv+BN";
                    } else {  // MatMul + bias, or Gemm
                        const std::int64_t M = 5, K = 12, N = 16;
                        od = {M, N};
                        auto src = g.add_input("src", tensor_type{dtype::f32, {M, K}});
                        in["src"] = test::random_array({M, K}, rng, 1.5f);
                        auto w = g.add_constant("W", {K, N}, test::random_values(K * N, rng, 0.5f));
                        if (main == 1)
                            x = g.add_op("Add", "bias", {g.add_op("MatMul", "mm", {src, w}), g.add_constant("b", {N}, test::random_values(N, rng, 0.5f))});
                        else
                            x = g.add_op("Gemm", "fc", {src, w, g.add_constant("C", {N}, test::random_values(N, rng, 0.5f))});
                        ops = main == 1 ? "MatMul+bias" : "Gemm";
                    }
                    node_id last = write_out(g, x, act, variant, ops);
                    if (after) {  // a post-op after the activation: a residual input
                        auto r = g.add_input("r", tensor_type{dtype::f32, od});
                        in["r"] = test::random_array(od, rng, 1.0f);
                        last = g.add_op("Add", "residual", {last, r});
                        ops += " +residual";
                    }
                    for (auto n : g.nodes())
                        if (g.kind(n) == node_kind::op) g.set_type({n, 0}, tensor_type{dtype::f32, od});
                    g.mark_output(last);
                    CAPTURE(ops);
                    const array expect = exec::executor(g)(in).at(0);
                    graph fused = g;
                    const auto reports = apply_backend(fused, "onednn");
                    CHECK(report(reports, main == 0 ? "conv_post_ops" : "matmul_post_ops").accepted == 1);
                    node_id fn{};
                    std::size_t op_nodes = 0;
                    for (auto n : fused.nodes())
                        if (fused.kind(n) == node_kind::op) ++op_nodes, fn = n;
                    REQUIRE(op_nodes == 1);  // everything in one fused node
                    const auto* node = std::any_cast<std::shared_ptr<const onednn::fused_node>>(&fused.payload(fn));
                    REQUIRE(node != nullptr);
                    const auto& pops = (*node)->kernel->post_ops();
                    std::size_t eltwise = 0;
                    for (const auto& p : pops)
                        if (const auto* e = p.as<onednn::post_op::eltwise_op>()) {
                            ++eltwise;
                            CHECK(e->alg == expect_alg[act]);
                        }
                    CHECK(eltwise == 1);
                    exec::run_stats st;
                    CHECK(test::max_rel_error(exec::executor(fused)(in, &st).at(0), expect) <= 1e-4);
                    CHECK(st.fused_nodes == 1);
                    ++cases;
                }
    CHECK(cases == 3 * 19 * 2);
}

TEST_CASE("near misses of decomposed activations are not fused as one (and still compute the same)") {
    onednn::register_backend<graph>();
    std::mt19937 rng(78);
    for (int miss = 0; miss < 4; ++miss) {
        graph g;
        auto src = g.add_input("src", tensor_type{dtype::f32, {4, 8}});
        const std::map<std::string, array> in{{"src", test::random_array({4, 8}, rng, 1.5f)}};
        node_id x = g.add_op("MatMul", "mm", {src, g.add_constant("W", {8, 8}, test::random_values(64, rng, 0.5f))});
        std::string ops;
        node_id d = g.add_op("Div", "div", {x, g.add_scalar("sqrt2", miss == 0 ? 1.5f : 1.4142135f)});
        node_id e = g.add_op("Erf", "erf", {d});
        node_id a = g.add_op("Add", "one_plus", {e, g.add_scalar("one", 1.0f)});
        node_id m = g.add_op("Mul", "xm", {x, a});
        node_id last = g.add_op("Mul", "half", {m, g.add_scalar("half", miss == 1 ? 0.6f : 0.5f)});
        if (miss == 2) g.mark_output(e);  // an intermediate the kernel would not produce
        if (miss == 3) g.mark_output(g.add_op("Mul", "other", {g.add_op("Sigmoid", "sig", {src}), x}));  // x used outside
        g.mark_output(last);
        for (auto n : g.nodes())
            if (g.kind(n) == node_kind::op) g.set_type({n, 0}, tensor_type{dtype::f32, {4, 8}});
        CAPTURE(miss);
        std::vector<array> expect = exec::executor(g)(in);
        graph fused = g;
        apply_backend(fused, "onednn");
        std::size_t erfs = 0;
        for (auto n : fused.nodes()) erfs += fused.kind(n) == node_kind::op && fused.op_name(n) == "Erf" ? 1 : 0;
        CHECK(erfs == 1);  // the written-out GELU stays
        const std::vector<array> got = exec::executor(fused)(in);
        REQUIRE(got.size() == expect.size());
        for (std::size_t i = 0; i < got.size(); ++i) CHECK(test::max_rel_error(got[i], expect[i]) <= 1e-4);
    }
}

TEST_CASE("BatchNorm after a 2-D matmul is folded into its weights - after a 3-D one it is declined") {
    onednn::register_backend<graph>();
    std::mt19937 rng(79);
    for (int rank = 2; rank <= 3; ++rank) {
        graph g;
        const std::int64_t M = 6, K = 10, N = 7;
        const std::vector<std::int64_t> xd = rank == 2 ? std::vector<std::int64_t>{M, K} : std::vector<std::int64_t>{2, M, K};
        std::vector<std::int64_t> od = xd;
        od.back() = N;
        auto x = g.add_input("x", tensor_type{dtype::f32, xd});
        const std::map<std::string, array> in{{"x", test::random_array(xd, rng, 1.0f)}};
        auto mm = g.add_op("MatMul", "mm", {x, g.add_constant("W", {K, N}, test::random_values(K * N, rng, 0.4f))});
        auto b = g.add_op("Add", "bias", {mm, g.add_constant("b", {N}, test::random_values(N, rng, 0.5f))});
        // BatchNormalization's channel axis is 1: N for a 2-D matmul, M for a 3-D one.
        const std::int64_t C = rank == 2 ? N : M;
        std::vector<input_ref> bn{b};
        for (const char* p : {"scale", "shift", "mean", "var"}) {
            auto v = test::random_values(static_cast<std::size_t>(C), rng, 0.5f);
            if (std::string(p) == "var")
                for (auto& e : v) e = 0.5f + std::abs(e);
            bn.push_back(g.add_constant(p, {C}, v));
        }
        auto n = g.add_op("BatchNormalization", "bn", bn, {{"epsilon", 1e-3}});
        auto r = g.add_op("Relu", "relu", {n});
        for (auto v : {mm, b, n, r}) g.set_type({v, 0}, tensor_type{dtype::f32, od});
        g.mark_output(r);
        CAPTURE(rank);
        const array expect = exec::executor(g)(in).at(0);
        graph fused = g;
        const auto reports = apply_backend(fused, "onednn");
        exec::run_stats st;
        CHECK(test::max_rel_error(exec::executor(fused)(in, &st).at(0), expect) <= 1e-4);
        if (rank == 2) {
            CHECK(report(reports, "matmul_post_ops").accepted == 1);
            CHECK(st.fused_nodes == 1);
            CHECK(st.reference_nodes == 0);
        } else {
            CHECK(report(reports, "matmul_post_ops").check_reasons.count("BatchNorm 'bn' after a 3-D matmul normalizes another axis than the "
                                                 "matmul's columns") == 1);
            CHECK(report(reports, "matmul_post_ops").accepted == 1);  // the matmul + bias alone
            CHECK(report(reports, "batch_norm_relu").accepted == 1);  // then BatchNorm + Relu on their own
            CHECK(st.fused_nodes == 2);
        }
    }
}

TEST_CASE("ConvTranspose + bias + BatchNorm + post-ops: one fused kernel (oneDNN deconvolution) - unsupported attributes declined") {
    onednn::register_backend<graph>();
    std::mt19937 rng(80);
    auto build = [&](graph& g, std::map<std::string, array>& in, int variant) {
        const std::int64_t C = 6, Og = 4, G = variant == 1 ? 2 : 1, O = Og * G;
        auto x = g.add_input("x", tensor_type{dtype::f32, {2, C, 5, 5}});
        in["x"] = test::random_array({2, C, 5, 5}, rng, 1.0f);
        auto ct = g.add_op("ConvTranspose", "up",
                           {x, g.add_constant("w", {C, Og, 3, 3}, test::random_values(static_cast<std::size_t>(C * Og * 9), rng, 0.5f)),
                            g.add_constant("b", {O}, test::random_values(static_cast<std::size_t>(O), rng, 0.5f))},
                           {{"strides", attribute::ints{2, 2}}, {"pads", attribute::ints{1, 1, 1, 1}},
                            {"output_padding", attribute::ints{1, 1}}, {"group", G}});
        if (variant == 2) g.set_attr(ct, "output_shape", attribute::ints{10, 10});
        if (variant == 3) g.set_attr(ct, "pads", attribute::ints{1, 1, 0, 0});  // output_padding 1 > pads_end 0
        std::vector<input_ref> bn{ct};
        for (const char* p : {"scale", "shift", "mean", "var"}) {
            auto v = test::random_values(static_cast<std::size_t>(O), rng, 0.5f);
            if (std::string(p) == "var")
                for (auto& e : v) e = 0.5f + std::abs(e);
            bn.push_back(g.add_constant(p, {O}, v));
        }
        auto n = g.add_op("BatchNormalization", "bn", bn);
        auto r = g.add_op("LeakyRelu", "act", {n}, {{"alpha", 0.2}});
        const std::vector<std::int64_t> od{2, O, variant == 3 ? 11 : 10, variant == 3 ? 11 : 10};
        for (auto v : {ct, n, r}) g.set_type({v, 0}, tensor_type{dtype::f32, od});
        g.mark_output(r);
    };
    for (int variant = 0; variant < 4; ++variant) {
        CAPTURE(variant);
        graph g;
        std::map<std::string, array> in;
        build(g, in, variant);
        graph fused = g;
        const auto reports = apply_backend(fused, "onednn");
        if (variant >= 2) {
            CHECK(report(reports, "conv_transpose_post_ops").accepted == 0);
            CHECK(report(reports, "conv_transpose_post_ops").check_reasons.begin()->first.find(variant == 2 ? "node 'up' (ConvTranspose): attribute output_shape is not implemented"
                                                                            : "output_padding [1,1] above pads_end [0,0]") !=
                  std::string::npos);
            CHECK(fused.node_count() == g.node_count());  // the graph is left as it was
            continue;
        }
        const array expect = exec::executor(g)(in).at(0);
        CHECK(report(reports, "conv_transpose_post_ops").accepted == 1);
        exec::run_stats st;
        CHECK(test::max_rel_error(exec::executor(fused, exec::mode::onednn)(in, &st).at(0), expect) <= 1e-4);
        CHECK(st.fused_nodes == 1);
        CHECK(st.onednn_nodes == 0);
        CHECK(st.reference_nodes == 0);
        // Unfused, one oneDNN primitive per op: the deconvolution on its own.
        exec::run_stats su;
        CHECK(test::max_rel_error(exec::executor(g, exec::mode::onednn)(in, &su).at(0), expect) <= 1e-4);
        CHECK(su.reference_nodes == 0);
    }
}

TEST_CASE("batchnorm + relu outside a conv: one oneDNN batch normalization with fused relu, in its input's layout") {
    onednn::register_backend<graph>();
    std::mt19937 rng(81);
    graph g;
    const std::int64_t C = 8;
    auto x = g.add_input("x", tensor_type{dtype::f32, {2, C, 6, 6}});
    const std::map<std::string, array> in{{"x", test::random_array({2, C, 6, 6}, rng, 1.0f)}};
    auto conv = [&](const char* nm, input_ref src) {
        return g.add_op("Conv", nm, {src, g.add_constant(std::string(nm) + ".w", {C, C, 3, 3}, test::random_values(C * C * 9, rng, 0.3f))},
                        {{"pads", attribute::ints{1, 1, 1, 1}}});
    };
    auto bn = [&](const char* nm, input_ref src) {
        std::vector<input_ref> ins{src};
        for (const char* p : {"scale", "shift", "mean", "var"}) {
            auto v = test::random_values(C, rng, 0.5f);
            if (std::string(p) == "var")
                for (auto& e : v) e = 0.5f + std::abs(e);
            ins.push_back(g.add_constant(std::string(nm) + "." + p, {C}, v));
        }
        return g.add_op("BatchNormalization", nm, ins);
    };
    // Pre-activation residual block: c1 feeds both the BN and the residual Add, so it is fused
    // alone and hands its own (blocked / NHWC) layout to the BatchNorm.
    auto c1 = conv("c1", x);
    auto r = g.add_op("Relu", "r", {bn("bn", c1)});
    auto c2 = conv("c2", r);
    auto out = g.add_op("Add", "add", {c2, c1});
    g.mark_output(out);
    for (auto n : {c1, c2, out}) g.set_type({n, 0}, tensor_type{dtype::f32, {2, C, 6, 6}});
    const array expect = exec::executor(g)(in).at(0);
    graph fused = g;
    const auto reports = apply_backend(fused, "onednn");
    CHECK(report(reports, "conv_post_ops").accepted == 2);  // c1 alone, c2 + residual sum
    CHECK(report(reports, "batch_norm_relu").accepted == 1);  // bn + r
    exec::run_stats st;
    CHECK(test::max_rel_error(exec::executor(fused, exec::mode::onednn)(in, &st).at(0), expect) <= 1e-4);
    CHECK(st.fused_nodes == 3);
    CHECK(st.onednn_nodes == 0);
    CHECK(st.reorders_to_plain == 1);  // the graph output only
    // What oneDNN's BatchNorm cannot fuse is declined with the reason.
    const auto prop = onednn::make_fused_property<graph>("bn_tanh", op<BatchNorm>() >> op<Tanh, Relu>());
    g.mark_output(g.add_op("Tanh", "t", {bn("bn2", x)}));
    const property_report rep = apply_property(g, prop);
    CHECK(rep.accepted == 1);  // bn + r, as above
    CHECK(rep.check_reasons.count("after BatchNorm 'bn2' only one Relu fuses (oneDNN's fuse_norm_relu), not Tanh 't'") == 1);
}

TEST_CASE("ops without a oneDNN kernel (Pad, an LRN of even size) run on the reference kernels next to fused nodes") {
    onednn::register_backend<graph>();
    std::mt19937 rng(82);
    graph g;
    auto x = g.add_input("x", tensor_type{dtype::f32, {1, 4, 6, 6}});
    const std::map<std::string, array> in{{"x", test::random_array({1, 4, 6, 6}, rng, 1.0f)}};
    // Pad as opset 11 writes it: pads as an int64 constant input; reflect mode.
    const std::vector<std::int64_t> pads{0, 0, 1, 2, 0, 0, 1, 2};
    auto pad = g.add_op("Pad", "pad", {x, g.add_constant("pads", {8}, std::vector<float>(pads.begin(), pads.end()))},
                        {{"mode", "reflect"}});
    const auto w = test::random_values(8 * 4 * 9, rng, 0.3f);
    auto conv = g.add_op("Conv", "conv", {pad, g.add_constant("w", {8, 4, 3, 3}, w)});
    auto relu = g.add_op("Relu", "relu", {conv});
    // ONNX's window for an even size leans one channel up; oneDNN's is centred: no kernel.
    auto lrn = g.add_op("LRN", "lrn", {relu}, {{"size", 4}, {"alpha", 0.001}, {"beta", 0.75}, {"bias", 1.0}});
    g.mark_output(lrn);
    // The same by hand on the reference kernels.
    const array padded = reference::pad(in.at("x"), pads, reference::pad_mode::reflect);
    REQUIRE(padded.shape() == std::vector<std::size_t>{1, 4, 8, 10});
    const array expect = reference::lrn(
        reference::unary(reference::conv(padded, test::make_array(w, {8, 4, 3, 3}), xt::zeros<float>({std::size_t(0)}),
                                         {{1, 1}, {0, 0}, {0, 0}, {1, 1}, 1}),
                         reference::unary_kind::relu),
        4, 0.001f, 0.75f, 1.0f);
    CHECK(test::max_rel_error(exec::executor(g)(in).at(0), expect) <= 1e-5);
    graph fused = g;
    CHECK(report(apply_backend(fused, "onednn"), "conv_post_ops").accepted == 1);  // conv + relu
    exec::run_stats st;
    CHECK(test::max_rel_error(exec::executor(fused, exec::mode::onednn)(in, &st).at(0), expect) <= 1e-4);
    CHECK(st.fused_nodes == 1);
    CHECK(st.reference_nodes == 2);  // Pad and LRN
}

TEST_CASE("conv 1x1 + depthwise 3x3 (MobileNet's expansion): one primitive with a depthwise post-op, kept where oneDNN runs it as one kernel") {
    onednn::register_backend<graph>();
    std::mt19937 rng(83);
    auto block = [&](graph& g, std::map<std::string, array>& in, std::int64_t n, std::int64_t hw, std::int64_t stride) {
        const std::int64_t C = 16, E = 96;
        auto x = g.add_input("x", tensor_type{dtype::f32, {n, C, hw, hw}});
        in["x"] = test::random_array({n, C, hw, hw}, rng, 1.0f);
        auto bn = [&](const std::string& nm, node_id src, std::int64_t ch) {
            std::vector<input_ref> ins{src};
            for (const char* p : {"scale", "shift", "mean", "var"}) {
                auto v = test::random_values(static_cast<std::size_t>(ch), rng, 0.5f);
                if (std::string(p) == "var")
                    for (auto& e : v) e = 0.5f + std::abs(e);
                ins.push_back(g.add_constant(nm + "." + p, {ch}, v));
            }
            return g.add_op("BatchNormalization", nm, ins);
        };
        auto relu6 = [&](const std::string& nm, node_id src) {
            return g.add_op("Clip", nm, {src, g.add_scalar(nm + ".lo", 0.0f), g.add_scalar(nm + ".hi", 6.0f)});
        };
        auto e = g.add_op("Conv", "expand", {x, g.add_constant("we", {E, C, 1, 1}, test::random_values(E * C, rng, 0.3f))});
        auto a = relu6("r1", bn("bn1", e, E));
        auto d = g.add_op("Conv", "dw", {a, g.add_constant("wd", {E, 1, 3, 3}, test::random_values(E * 9, rng, 0.3f))},
                          {{"group", E}, {"pads", attribute::ints{1, 1, 1, 1}}, {"strides", attribute::ints{stride, stride}}});
        auto b = relu6("r2", bn("bn2", d, E));
        auto p = g.add_op("Conv", "project", {b, g.add_constant("wp", {C, E, 1, 1}, test::random_values(C * E, rng, 0.3f))});
        g.mark_output(bn("bn3", p, C));
    };
    // The lowering, without the gain check: a user property on the same pattern.
    for (std::int64_t stride : {1, 2}) {
        CAPTURE(stride);
        graph g;
        std::map<std::string, array> in;
        block(g, in, 2, 9, stride);
        const array expect = exec::executor(g)(in).at(0);
        graph fused = g;
        CHECK(apply_property(fused, onednn::make_fused_property<graph>("dw", onednn::conv1x1_depthwise)).accepted == 1);
        exec::run_stats st;
        CHECK(test::max_rel_error(exec::executor(fused, exec::mode::onednn)(in, &st).at(0), expect) <= 1e-4);
        CHECK(st.fused_nodes == 1);
        CHECK(st.onednn_nodes == 2);  // the projection conv and its BatchNorm
    }
    // The backend keeps the fusion only where oneDNN runs it as one kernel, in the layout the 1x1
    // conv alone takes; either way the graph computes the same.
    for (std::int64_t n : {1, 8}) {
        CAPTURE(n);
        graph g;
        std::map<std::string, array> in;
        block(g, in, n, test::sanitized() ? 14 : 28, 2);
        const array expect = exec::executor(g)(in).at(0);
        graph fused = g;
        const auto reports = apply_backend(fused, "onednn");
        const auto& r = report(reports, "conv1x1_depthwise");
        std::size_t no_gain = 0;
        for (const auto& [why, count] : r.check_reasons)
            if (why.find("runs this 1x1 + depthwise fusion as two primitives") != std::string::npos ||
                why.find("the reorders into and out of it cost more than the fusion saves") != std::string::npos)
                no_gain += count;
        CHECK(r.accepted + (no_gain > 0 ? 1 : 0) == 1);
        MESSAGE("batch " << n << ": 1x1 + depthwise " << std::string(r.accepted ? "fused" : "left as two convs (no gain)"));
        CHECK(report(reports, "conv_post_ops").accepted == (r.accepted ? 1u : 3u));
        CHECK(test::max_rel_error(exec::executor(fused, exec::mode::onednn)(in).at(0), expect) <= 1e-4);
    }
}

TEST_CASE("the network's convolutions run blocked where it is made of 1x1 + depthwise blocks, in oneDNN's own choice elsewhere") {
    onednn::register_backend<graph>();
    std::mt19937 rng(85);
    enum class variant { blocks, concat_reads_a_conv, no_depthwise };
    // x -> 1x1 (16 -> 32) -> Relu -> 3x3 (depthwise, or ungrouped) -> Relu -> 1x1 (32 -> 16) + x,
    // and for concat_reads_a_conv a Concat of the depthwise conv's output with itself as a
    // second graph output.
    auto build = [&](graph& g, std::map<std::string, array>& in, variant v) {
        const std::int64_t n = 2, C = 16, E = 32, hw = 14;
        auto x = g.add_input("x", tensor_type{dtype::f32, {n, C, hw, hw}});
        in["x"] = test::random_array({n, C, hw, hw}, rng, 1.0f);
        auto e = g.add_op("Relu", "r1", {g.add_op("Conv", "expand", {x, g.add_constant("we", {E, C, 1, 1}, test::random_values(E * C, rng, 0.3f))})});
        const bool dw = v != variant::no_depthwise;
        auto d = g.add_op("Conv", "dw",
                          {e, g.add_constant("wd", {E, dw ? 1 : E, 3, 3}, test::random_values(static_cast<std::size_t>(E * (dw ? 1 : E) * 9), rng, 0.3f))},
                          {{"group", dw ? E : 1}, {"pads", attribute::ints{1, 1, 1, 1}}});
        auto r = g.add_op("Relu", "r2", {d});
        auto p = g.add_op("Conv", "project", {r, g.add_constant("wp", {C, E, 1, 1}, test::random_values(C * E, rng, 0.3f))});
        auto sum = g.add_op("Add", "residual", {p, x});
        for (auto k : {e, d, r}) g.set_type({k, 0}, tensor_type{dtype::f32, {n, E, hw, hw}});
        for (auto k : {p, sum}) g.set_type({k, 0}, tensor_type{dtype::f32, {n, C, hw, hw}});
        g.mark_output(sum);
        if (v == variant::concat_reads_a_conv) g.mark_output(g.add_op("Concat", "cat", {d, d}, {{"axis", 1}}));
    };
    for (const variant v : {variant::blocks, variant::concat_reads_a_conv, variant::no_depthwise}) {
        CAPTURE(static_cast<int>(v));
        graph g;
        std::map<std::string, array> in;
        build(g, in, v);
        const auto want = v == variant::blocks ? onednn::conv_spec::layout_choice::blocked : onednn::conv_spec::layout_choice::any;
        CHECK(onednn::conv_layout_of(g) == want);
        const auto expect = exec::executor(g)(in);
        graph fused = g;
        (void)apply_backend(fused, "onednn");
        CHECK(onednn::conv_layout_of(fused) == want);  // the same answer after the fusions
        std::size_t convs = 0;
        for (auto n : fused.nodes()) {
            if (fused.kind(n) != node_kind::op) continue;
            const auto* node = std::any_cast<std::shared_ptr<const onednn::fused_node>>(&fused.payload(n));
            if (node == nullptr) continue;
            const auto* conv = dynamic_cast<const onednn::fused_conv*>((*node)->kernel.get());
            if (conv == nullptr) continue;
            ++convs;
            CHECK(conv->spec().layout == want);
            if (v == variant::blocks) {  // the source, 16 or 32 channels, in channel blocks
                const auto src = fused.value_type(fused.input(n, (*node)->src).node, fused.input(n, (*node)->src).port);
                REQUIRE(src);
                CHECK(conv->described(src->dims).src == dnnl::memory::desc(src->dims, dnnl::memory::data_type::f32, onednn::blocked_tag(4)));
            }
        }
        CHECK(convs >= 2);  // the 1x1 + depthwise pair fused or not, and the projection
        const auto got = exec::executor(fused, exec::mode::onednn)(in);
        REQUIRE(got.size() == expect.size());
        for (std::size_t i = 0; i < got.size(); ++i) CHECK(test::max_rel_error(got[i], expect[i]) <= 1e-4);
    }
}

TEST_CASE("capability regions run as region nodes: a graph of their own with the fusions applied inside, one executor each") {
    CHECK(exec::register_region_backend());
    CHECK(exec::register_region_backend());  // idempotent
    // ResNet-50: every op but the graph input has a oneDNN kernel: one region.
    const std::int64_t image = test::sanitized() ? 32 : 64;
    const graph g = build::resnet50(1, image, /*data_seed=*/5);
    std::mt19937 rng(84);
    const std::map<std::string, array> in{{"data", test::random_array({1, 3, image, image}, rng, 1.0f)}};
    const array expect = exec::executor(g)(in).at(0);
    graph regions = g;
    ::setenv("SGMATCH_BACKEND", "onednn.regions", 1);
    const auto reports = apply_backend_from_env(regions, environment::read());
    ::unsetenv("SGMATCH_BACKEND");
    REQUIRE(reports.size() == 1);
    CHECK(reports[0].accepted == 1);
    exec::run_stats st;
    CHECK(test::max_rel_error(exec::executor(regions, exec::mode::onednn)(in, &st).at(0), expect) <= 1e-4);
    CHECK(st.region_nodes == 1);
    CHECK(st.fused_nodes == 54);      // the backend's fusions inside the region: 53 convs, the Gemm
    CHECK(st.onednn_nodes == 3);      // maxpool, global pool, flatten
    CHECK(st.reference_nodes == 0);
    CHECK(st.reorders_to_plain == 1);  // the graph output only
    // Run twice: primitives cached, same result.
    CHECK(test::max_rel_error(exec::executor(regions, exec::mode::onednn)(in).at(0), expect) <= 1e-4);

    // Unsupported ops split regions; a region output used by two consumers outside, and a graph
    // output in the middle of a region, stay outputs of its node.
    graph h;
    auto x = h.add_input("x", tensor_type{dtype::f32, {1, 4, 8, 8}});
    const std::map<std::string, array> hx{{"x", test::random_array({1, 4, 8, 8}, rng, 1.0f)}};
    auto conv = [&](const char* nm, input_ref src) {
        return h.add_op("Conv", nm, {src, h.add_constant(std::string(nm) + ".w", {4, 4, 3, 3}, test::random_values(144, rng, 0.3f))},
                        {{"pads", attribute::ints{1, 1, 1, 1}}});
    };
    auto c1 = conv("c1", x);
    auto r1 = h.add_op("Relu", "r1", {c1});
    auto c2 = conv("c2", r1);
    auto sm = h.add_op("Pad", "pad", {c2}, {{"pads", attribute::ints{0, 0, 0, 0, 0, 0, 0, 0}}});  // not in regions: splits
    auto c3 = conv("c3", sm);
    auto a = h.add_op("Add", "a", {c3, r1});  // r1 is read after the Pad too
    auto t = h.add_op("Tanh", "t", {a});
    h.mark_output(r1);  // a graph output inside the first region
    h.mark_output(t);
    const std::vector<array> hexpect = exec::executor(h)(hx);
    graph hr = h;
    const auto rep = apply_backend(hr, "onednn.regions");
    CHECK(rep[0].accepted == 2);
    std::size_t region_nodes = 0, pad = 0;
    for (auto n : hr.nodes()) {
        region_nodes += hr.kind(n) == node_kind::op && hr.op_name(n) == "onednn.region" ? 1 : 0;
        pad += hr.kind(n) == node_kind::op && hr.op_name(n) == "Pad" ? 1 : 0;
    }
    CHECK(region_nodes == 2);
    CHECK(pad == 1);
    exec::run_stats hs;
    const std::vector<array> got = exec::executor(hr, exec::mode::onednn)(hx, &hs);
    REQUIRE(got.size() == 2);
    CHECK(test::max_rel_error(got[0], hexpect[0]) <= 1e-4);
    CHECK(test::max_rel_error(got[1], hexpect[1]) <= 1e-4);
    CHECK(hs.region_nodes == 2);
    CHECK(hs.reference_nodes == 1);  // the Pad, between the regions
}

TEST_CASE("a match whose result nothing reads (dead code) is declined, and the backend applies to the rest") {
    // Found by the differential test's random graphs (tests/testing): a MatMul nothing read made
    // the fused-node factory throw from apply_backend, after earlier properties had rewritten.
    graph g;
    std::mt19937 rng(3);
    const auto x = g.add_input("x", tensor_type{dtype::f32, {4, 8}});
    const node_id dead = g.add_op("MatMul", "dead", {x, g.add_constant("w0", {8, 16}, test::random_values(128, rng, 0.5f))});
    g.set_type({dead, 0}, tensor_type{dtype::f32, {4, 16}});
    const node_id mm = g.add_op("MatMul", "live", {x, g.add_constant("w1", {8, 16}, test::random_values(128, rng, 0.5f))});
    g.set_type({mm, 0}, tensor_type{dtype::f32, {4, 16}});
    const node_id r = g.add_op("Relu", "relu", {mm});
    g.set_type({r, 0}, tensor_type{dtype::f32, {4, 16}});
    g.mark_output(r);
    const std::map<std::string, array> in{{"x", test::random_array({4, 8}, rng, 1.0f)}};
    const array want = exec::executor(g)(in).at(0);
    std::vector<property_report> reps;
    REQUIRE_NOTHROW(reps = apply_backend(g, onednn::make_backend<graph>()));
    const property_report& mmr = report(reps, "matmul_post_ops");
    CHECK(mmr.accepted == 1);
    CHECK(mmr.rejected_check == 1);
    CHECK(mmr.check_reasons.count("the result of 'dead' is not used") == 1);
    CHECK(test::max_rel_error(exec::executor(g)(in).at(0), want) <= 1e-5);
}

TEST_CASE("Gemm with a scalar or an [M, N] C, one primitive per op: the scalar broadcast on the primitive, the matrix on the reference kernel") {
    // Found by the differential test's random graphs through the region backend (tests/testing):
    // a scalar C made the gemm kernel's factory throw, and the region property with it.
    std::mt19937 rng(4);
    for (int form = 0; form < 2; ++form) {
        CAPTURE(form);
        graph g;
        const auto x = g.add_input("x", tensor_type{dtype::f32, {4, 16}});
        const std::vector<std::int64_t> c_dims = form == 0 ? std::vector<std::int64_t>{} : std::vector<std::int64_t>{4, 8};
        const node_id gemm = g.add_op("Gemm", "gemm",
                                      {x, g.add_constant("b", {16, 8}, test::random_values(128, rng, 0.5f)),
                                       g.add_constant("c", c_dims, test::random_values(form == 0 ? 1 : 32, rng, 1.0f))},
                                      {{"beta", 0.5}});
        g.set_type({gemm, 0}, tensor_type{dtype::f32, {4, 8}});
        g.mark_output(gemm);
        const std::map<std::string, array> in{{"x", test::random_array({4, 16}, rng, 1.0f)}};
        const array want = exec::executor(g)(in).at(0);
        exec::run_stats st;
        const array got = exec::executor(g, exec::mode::onednn)(in, &st).at(0);
        CHECK(st.onednn_nodes == (form == 0 ? 1u : 0u));
        CHECK(st.reference_nodes == (form == 0 ? 0u : 1u));
        CHECK(test::max_rel_error(got, want) <= 1e-5);
    }
}

namespace lowering_hints {
struct cv;
}

TEST_CASE("a SiLU written out in the pattern is declined with the ready-made form named, which fuses") {
    graph g;
    auto x = g.add_input("x", tensor_type{dtype::f32, {1, 4, 6, 6}});
    auto c = g.add_op("Conv", "conv1", {x, g.add_constant("w", {4, 4, 1, 1}, std::vector<float>(16, 0.1f))});
    g.mark_output(g.add_op("Mul", "silu", {c, g.add_op("Sigmoid", "sig", {c})}));
    using lowering_hints::cv;
    graph by_hand = g;
    const auto written = onednn::make_fused_property<graph>("conv_silu", op<Conv>().as<cv>() >> op<Sigmoid>() >> op<Mul>(ref<cv>()));
    const property_report rep = apply_property(by_hand, written);
    CHECK(rep.accepted == 0);
    REQUIRE(rep.check_reasons.size() == 1);
    const std::string why = rep.check_reasons.begin()->first;
    CHECK(why.find("node 'conv1' feeds more than one node of the match (Mul, Sigmoid)") != std::string::npos);
    CHECK(why.find("onednn::swish<X>()") != std::string::npos);
    // The form it names fuses the same nodes.
    const auto ready = onednn::make_fused_property<graph>("conv_silu", capture<cv>(op<Conv>()) >> onednn::swish<cv>());
    CHECK(apply_property(g, ready).accepted == 1);
}

TEST_CASE("a fused node whose post-ops run after its conv (the fused primitive a reference one) is counted by the run") {
    // relu(dwconv(x)) + x on [1, 32, 56, 56]: a network with a depthwise 3x3 conv runs blocked,
    // where oneDNN 2.6 has only ref:any for this fusion; the kernel runs its post-ops after the
    // jit conv, and run_stats::unfused_post_ops says so. Same values as the reference run.
    std::mt19937 rng(61);
    graph g;
    auto x = g.add_input("x", tensor_type{dtype::f32, {1, 32, 56, 56}});
    auto c = g.add_op("Conv", "dw", {x, g.add_constant("w", {32, 1, 3, 3}, test::random_values(288, rng, 0.3f))},
                      {{"group", 32}, {"pads", attribute::ints{1, 1, 1, 1}}});
    g.mark_output(g.add_op("Add", "res", {g.add_op("Relu", "relu", {c}), x}));
    const std::map<std::string, array> feeds{{"x", test::random_array({1, 32, 56, 56}, rng, 1.0f)}};
    const auto want = exec::executor(g)(feeds).at(0);
    const auto prop = onednn::make_fused_property<graph>("dw_relu_add", op<Conv>() >> op<Relu>() >> op<Add>(any()));
    REQUIRE(apply_property(g, prop).accepted == 1);
    exec::run_stats st;
    const auto got = exec::executor(g, exec::mode::onednn)(feeds, &st).at(0);
    CHECK(test::max_rel_error(got, want) <= 1e-4);
    CHECK(st.fused_nodes == 1);
    const onednn::fused_node* fused = nullptr;
    for (node_id n : g.nodes())
        if (g.payload(n).has_value()) fused = std::any_cast<std::shared_ptr<const onednn::fused_node>>(g.payload(n)).get();
    REQUIRE(fused != nullptr);
    CHECK(st.unfused_post_ops == (fused->kernel->unfused_shapes() != 0 ? 1u : 0u));
    MESSAGE("post-ops unfused: " << st.unfused_post_ops);
#if DNNL_VERSION_MAJOR < 3
    const auto avx512 = static_cast<unsigned>(dnnl::cpu_isa::avx512_core);
    if ((static_cast<unsigned>(dnnl::get_effective_cpu_isa()) & avx512) == avx512)
        CHECK(st.unfused_post_ops == 1);  // oneDNN 2.6 on AVX-512: ref:any fused, jit_dw alone
#endif
}
