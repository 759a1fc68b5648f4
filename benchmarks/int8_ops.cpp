// The int8 operators on oneDNN's int8 primitives against the f32 operator of the same shape on
// oneDNN (the executor's oneDNN mode, one node each): QLinearConv (exec/kernels/qconv_onednn.hpp)
// at ResNet-50's conv shapes and QLinearMatMul (exec/kernels/qmatmul_onednn.hpp) at a BERT-base
// layer's projection shapes. What running a quantized operator costs against the f32 one, the
// plain-layout reorders of a typed value in and out included (a QLinear node reads and writes
// plain uint8).
//
//   int8 - exec::mode::onednn over a QLinearConv node (uint8 x with a zero point, int8 weights
//          with per-channel scales, int32 bias, uint8 y) or a QLinearMatMul node (uint8 A with a
//          zero point, int8 constant B with a zero point, uint8 y)
//   f32  - exec::mode::onednn over a Conv node with bias, or a MatMul node with constant weights
//          (the single-op oneDNN kernels)
//
// Timed by Google Benchmark (gbench.hpp: repetitions, random interleaving, medians; its flags
// pass through); the ratios int8 / f32 follow the table. Before anything is timed, the int8
// node's output is compared with the reference kernel's (the ONNX definition, op by op): within
// one step of y in at most one element in a thousand (printed), and oneDNN must have run it
// (run_stats::onednn_typed_nodes).
// usage: int8_ops [--check] [--benchmark_...]
#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <map>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include "gbench.hpp"
#include "sgmatch/exec/executor.hpp"

using namespace sgmatch;
using exec::value;

namespace {

// A conv (n, c, h, w; m output channels, k x k, stride) or, with matmul, A [n, h, c] times
// B [c, m] (h, w, k, stride unused).
struct op_shape {
    std::string id;
    std::int64_t n, c, h, w, m, k, stride;
    bool matmul = false;
};

template <class T>
value random_of(std::mt19937& rng, const exec::shape& dims, int lo, int hi) {
    std::uniform_int_distribution<int> d(lo, hi);
    std::int64_t count = 1;
    for (auto x : dims) count *= x;
    std::vector<T> v(static_cast<std::size_t>(count));
    for (auto& x : v) x = static_cast<T>(d(rng));
    return value::of<T>(dims, v);
}

node_id constant_of(graph& g, const std::string& name, const value& v) {
    const auto* p = static_cast<const unsigned char*>(v.data());
    return g.add_constant(name, std::vector<std::int64_t>(v.dims().begin(), v.dims().end()), v.type(),
                          std::vector<unsigned char>(p, p + v.size() * static_cast<std::int64_t>(size_of(v.type()))));
}

struct bench_case {
    graph q, f;
    std::unique_ptr<exec::executor> int8, f32, reference;
    std::map<std::string, value> qin, fin;
};

std::unique_ptr<bench_case> make_matmul(const op_shape& s, std::mt19937& rng) {
    auto b = std::make_unique<bench_case>();
    const exec::shape ad{s.n, s.h, s.c}, bd{s.c, s.m};
    const value a = random_of<std::uint8_t>(rng, ad, 0, 255);
    const value w = random_of<std::int8_t>(rng, bd, -127, 127);
    graph& q = b->q;
    q.mark_output(q.add_op("QLinearMatMul", "qmatmul",
                           {q.add_input("x", tensor_type{dtype::u8, ad}), constant_of(q, "as", value::of<float>({}, {0.02f})),
                            constant_of(q, "az", value::of<std::uint8_t>({}, {128})), constant_of(q, "w", w),
                            constant_of(q, "ws", value::of<float>({}, {0.001f})), constant_of(q, "wz", value::of<std::int8_t>({}, {0})),
                            constant_of(q, "ys", value::of<float>({}, {0.05f})), constant_of(q, "yz", value::of<std::uint8_t>({}, {100}))}));
    b->qin.emplace("x", a);
    graph& f = b->f;
    std::vector<float> fw(static_cast<std::size_t>(w.size())), fx(static_cast<std::size_t>(a.size()));
    for (std::size_t i = 0; i < fw.size(); ++i) fw[i] = static_cast<float>(w.as<std::int8_t>()[i]) * 0.01f;
    for (std::size_t i = 0; i < fx.size(); ++i) fx[i] = static_cast<float>(a.as<std::uint8_t>()[i]) * 0.01f;
    f.mark_output(f.add_op("MatMul", "matmul", {f.add_input("x", tensor_type{dtype::f32, ad}), f.add_constant("w", bd, fw)}));
    b->fin.emplace("x", value::of<float>(ad, fx));
    b->int8 = std::make_unique<exec::executor>(q, exec::mode::onednn);
    b->reference = std::make_unique<exec::executor>(q, exec::mode::reference);
    b->f32 = std::make_unique<exec::executor>(f, exec::mode::onednn);
    return b;
}

std::unique_ptr<bench_case> make_case(const op_shape& s, std::mt19937& rng) {
    if (s.matmul) return make_matmul(s, rng);
    auto b = std::make_unique<bench_case>();
    const exec::shape xd{s.n, s.c, s.h, s.w}, wd{s.m, s.c, s.k, s.k};
    const std::int64_t pad = s.k / 2;
    const std::vector<std::pair<std::string, attribute>> attrs{
        {"pads", attribute::ints{pad, pad, pad, pad}}, {"strides", attribute::ints{s.stride, s.stride}}};
    // int8: QLinearConv, its parameters constants.
    const value x = random_of<std::uint8_t>(rng, xd, 0, 255);
    const value w = random_of<std::int8_t>(rng, wd, -127, 127);
    std::vector<float> ws(static_cast<std::size_t>(s.m));
    std::vector<std::int32_t> bias(static_cast<std::size_t>(s.m));
    for (std::size_t i = 0; i < ws.size(); ++i) ws[i] = 0.001f + 0.00001f * static_cast<float>(i), bias[i] = static_cast<std::int32_t>(i % 97) * 31;
    graph& q = b->q;
    std::vector<input_ref> ins{q.add_input("x", tensor_type{dtype::u8, xd}),
                               constant_of(q, "xs", value::of<float>({}, {0.02f})),
                               constant_of(q, "xz", value::of<std::uint8_t>({}, {128})),
                               constant_of(q, "w", w),
                               constant_of(q, "ws", value::of<float>({s.m}, ws)),
                               constant_of(q, "wz", value::of<std::int8_t>({s.m}, std::vector<std::int8_t>(ws.size(), 0))),
                               constant_of(q, "ys", value::of<float>({}, {0.05f})),
                               constant_of(q, "yz", value::of<std::uint8_t>({}, {100})),
                               constant_of(q, "b", value::of<std::int32_t>({s.m}, bias))};
    const node_id qn = q.add_op("QLinearConv", "qconv", ins);
    for (const auto& [k, v] : attrs) q.set_attr(qn, k, v);
    q.mark_output(qn);
    b->qin.emplace("x", x);
    // f32: Conv with bias, the same shapes.
    graph& f = b->f;
    std::vector<float> fw(static_cast<std::size_t>(w.size())), fb(bias.begin(), bias.end()), fx(static_cast<std::size_t>(x.size()));
    for (std::size_t i = 0; i < fw.size(); ++i) fw[i] = static_cast<float>(w.as<std::int8_t>()[i]) * 0.01f;
    for (std::size_t i = 0; i < fx.size(); ++i) fx[i] = static_cast<float>(x.as<std::uint8_t>()[i]) * 0.01f;
    const node_id fn = f.add_op("Conv", "conv", {f.add_input("x", tensor_type{dtype::f32, xd}), f.add_constant("w", wd, fw),
                                                 f.add_constant("b", {s.m}, fb)});
    for (const auto& [k, v] : attrs) f.set_attr(fn, k, v);
    f.mark_output(fn);
    b->fin.emplace("x", value::of<float>(xd, fx));
    b->int8 = std::make_unique<exec::executor>(q, exec::mode::onednn);
    b->reference = std::make_unique<exec::executor>(q, exec::mode::reference);
    b->f32 = std::make_unique<exec::executor>(f, exec::mode::onednn);
    return b;
}

}  // namespace

int main(int argc, char** argv) {
    auto [check, rest] = sgbench::take_check(argc, argv);
    // ResNet-50's convs: a stage's 3x3, its 1x1 expansion, a strided 3x3, at batch 1 and 8; a
    // BERT-base layer's projections (sequence 128): Q, K or V (768 -> 768) and the FFN's first
    // (768 -> 3072), at batch 1 and 8.
    const std::vector<op_shape> all{
        {"matmul 768 -> 768 [1, 128, 768]", 1, 768, 128, 0, 768, 0, 0, true},
        {"conv 3x3 64 -> 64 [1, 64, 56, 56]", 1, 64, 56, 56, 64, 3, 1},
        {"conv 1x1 64 -> 256 [1, 64, 56, 56]", 1, 64, 56, 56, 256, 1, 1},
        {"conv 3x3 256 -> 256 [1, 256, 14, 14]", 1, 256, 14, 14, 256, 3, 1},
        {"conv 3x3 128 -> 128 s2 [8, 128, 56, 56]", 8, 128, 56, 56, 128, 3, 2},
        {"conv 3x3 64 -> 64 [8, 64, 56, 56]", 8, 64, 56, 56, 64, 3, 1},
        {"matmul 768 -> 3072 [1, 128, 768]", 1, 768, 128, 0, 3072, 0, 0, true},
        {"matmul 768 -> 768 [8, 128, 768]", 8, 768, 128, 0, 768, 0, 0, true},
    };
    std::mt19937 rng(11);
    std::vector<std::unique_ptr<bench_case>> cases;
    std::vector<sgbench::ratio> ratios;
    int bad = 0;
    for (std::size_t i = 0; i < all.size(); ++i) {
        auto b = make_case(all[i], rng);
        exec::run_stats st;
        const value got = b->int8->run(b->qin, &st).at(0);
        if (st.onednn_typed_nodes != 1) {
            std::printf("NOT ON ONEDNN %s\n", all[i].id.c_str());
            ++bad;
        }
        if (i < 3) {  // the reference loops take seconds on the larger shapes
            const auto a = got.to_ints(), r = b->reference->run(b->qin).at(0).to_ints();
            std::size_t differ = 0;
            std::int64_t worst = a.size() == r.size() ? 0 : 255;
            for (std::size_t j = 0; j < a.size() && j < r.size(); ++j) {
                differ += a[j] != r[j];
                worst = std::max(worst, a[j] > r[j] ? a[j] - r[j] : r[j] - a[j]);
            }
            std::printf("%s: %zu of %zu elements one step of y off the reference kernel's\n", all[i].id.c_str(), differ, a.size());
            if (worst > 1 || differ * 1000 > a.size()) {
                std::printf("MISMATCH %s: off by up to %lld\n", all[i].id.c_str(), static_cast<long long>(worst));
                ++bad;
            }
        }
        if (check) continue;
        const bench_case* k = b.get();
        sgbench::register_pair(
            all[i].id, "f32", [k] { benchmark::DoNotOptimize(k->f32->run(k->fin)); }, "int8",
            [k] { benchmark::DoNotOptimize(k->int8->run(k->qin)); }, ratios);
        cases.push_back(std::move(b));
    }
    if (bad) return 1;
    if (check) {
        std::printf("check: every QLinearConv and QLinearMatMul ran on oneDNN, within one step of y of the reference kernel where that was run\n");
        return 0;
    }
    return sgbench::run(static_cast<int>(rest.size()), rest.data(), ratios);
}
