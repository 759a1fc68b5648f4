// The typed kernels the executor's oneDNN modes run on oneDNN primitives
// (exec/kernels/typed_onednn.hpp; the recurrent layers have tests/exec/recurrent.cpp).
//
// Resize (kernels/resize_onednn.hpp): the reference kernel is checked against the ONNX
// conformance data (every Resize and Upsample case, also run in the oneDNN modes there); here:
// which forms oneDNN takes (the ones where its taps are ONNX's), closed forms for the usual two
// (nearest upsampling by whole factors repeats each element; bilinear half_pixel of a linear
// ramp is that ramp resampled), and every form, taken or not, giving the reference kernel's
// result in the oneDNN modes.
//
// The comparisons (kernels/compare_onednn.hpp): every mask against comparisons written out here,
// with ties, infinities and NaNs, for each way the operands broadcast.
#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <map>
#include <random>
#include <string>
#include <vector>

#include "sgmatch/exec/executor.hpp"
#include "sgmatch/exec/kernels/typed_onednn.hpp"
#include "sgmatch/ops/attrs.hpp"
#include "support/values.hpp"

using namespace sgmatch;
using exec::value;

namespace resize_test {

struct form {
    const char* mode;
    const char* coordinates;
    const char* nearest;
};

std::vector<unsigned char> int_bytes(const std::vector<std::int64_t>& v) {
    std::vector<unsigned char> b(v.size() * sizeof(std::int64_t));
    if (!v.empty()) std::memcpy(b.data(), v.data(), b.size());
    return b;
}

// x [in] resized by `scales` (sizes empty) or to `sizes`.
graph resize_graph(const std::vector<std::int64_t>& in, const form& f, const std::vector<float>& scales,
                   const std::vector<std::int64_t>& sizes) {
    graph g;
    const node_id x = g.add_input("x", tensor_type{dtype::f32, in});
    const node_id roi = g.add_constant("roi", {0}, std::vector<float>{});
    const node_id sc = g.add_constant("scales", {static_cast<std::int64_t>(scales.size())}, scales);
    std::vector<input_ref> ins{x, roi, sc};
    if (!sizes.empty()) ins.push_back(g.add_constant("sizes", {static_cast<std::int64_t>(sizes.size())}, dtype::i64, int_bytes(sizes)));
    g.mark_output(g.add_op("Resize", "resize", ins,
                           {{"mode", std::string(f.mode)}, {"coordinate_transformation_mode", std::string(f.coordinates)},
                            {"nearest_mode", std::string(f.nearest)}}));
    return g;
}

// The resize_call the kernel sees for that graph and an input of dims `in`.
bool agrees(const std::vector<std::int64_t>& in, const form& f, const std::vector<float>& scales,
            const std::vector<std::int64_t>& sizes = {}) {
    const graph g = resize_graph(in, f, scales, sizes);
    node_id n{};
    for (auto m : g.nodes())
        if (g.name(m) == "resize") n = m;
    const ops::op_attrs a(ops::schemas::resize, ops::node_of<graph>(g, n));
    exec::values xs{value::zeros(dtype::f32, in), value::of<float>({0}, std::vector<float>{}), value::of<float>({static_cast<std::int64_t>(scales.size())}, scales)};
    if (!sizes.empty()) xs.push_back(value::of<std::int64_t>({static_cast<std::int64_t>(sizes.size())}, sizes));
    return exec::typed::onednn_resample_agrees(exec::typed::resize_call_of(a, exec::typed::resize_spec_of(a), xs));
}

value random_input(std::mt19937& rng, const std::vector<std::int64_t>& dims) {
    std::int64_t n = 1;
    for (auto d : dims) n *= d;
    std::uniform_real_distribution<float> u(-2.0f, 2.0f);
    std::vector<float> v(static_cast<std::size_t>(n));
    for (auto& e : v) e = u(rng);
    return value::of<float>(dims, v);
}

}  // namespace resize_test

using namespace resize_test;

TEST_CASE("Resize on oneDNN: the forms whose taps are ONNX's are taken, the others are not") {
    const form nearest_floor{"nearest", "asymmetric", "floor"};  // PyTorch's nearest upsampling
    const form nearest_half{"nearest", "half_pixel", "round_prefer_ceil"};
    const form nearest_half_floor{"nearest", "half_pixel", "round_prefer_floor"};
    const form bilinear{"linear", "half_pixel", "round_prefer_floor"};
    const form bilinear_pt{"linear", "pytorch_half_pixel", "round_prefer_floor"};
    const form corners{"linear", "align_corners", "round_prefer_floor"};
    const form cubic{"cubic", "half_pixel", "round_prefer_floor"};
    // Taken.
    CHECK(agrees({1, 3, 5, 7}, nearest_floor, {1, 1, 2, 2}));
    CHECK(agrees({2, 3, 5, 7}, nearest_floor, {1, 1, 3, 4}));
    CHECK(agrees({1, 3, 4, 5, 6}, nearest_floor, {1, 1, 2, 2, 2}));
    CHECK(agrees({1, 3, 5, 7}, nearest_half, {}, {1, 3, 7, 17}));  // sizes: scales are out / in
    CHECK(agrees({1, 3, 5, 7}, bilinear, {1, 1, 2, 2}));
    CHECK(agrees({1, 3, 8, 8}, bilinear, {1, 1, 0.5f, 0.5f}));
    CHECK(agrees({1, 3, 5, 7}, bilinear, {}, {1, 3, 9, 13}));
    CHECK(agrees({1, 3, 5, 7}, bilinear_pt, {1, 1, 2, 3}));
    CHECK(agrees({1, 3, 7}, bilinear, {1, 1, 3}));
    // Not taken: other coordinates or roundings, cubic, scales that are not out / in, resized
    // channels, rank 2.
    CHECK_FALSE(agrees({1, 3, 5, 7}, corners, {1, 1, 2, 2}));
    CHECK_FALSE(agrees({1, 3, 5, 7}, cubic, {1, 1, 2, 2}));
    CHECK_FALSE(agrees({1, 3, 8, 8}, nearest_half_floor, {1, 1, 0.5f, 0.5f}));  // ties at .5 go down in ONNX, up in oneDNN
    CHECK(agrees({1, 3, 8, 8}, nearest_half, {1, 1, 0.5f, 0.5f}));              // round_prefer_ceil: the same ties go up
    CHECK_FALSE(agrees({1, 3, 4, 4}, bilinear, {1, 1, 1.3f, 1.3f}));           // out 5: x = (o + 0.5) / 1.3 - 0.5, not * 4 / 5
    CHECK_FALSE(agrees({1, 3, 4, 4}, nearest_floor, {1, 2, 2, 2}));
    CHECK_FALSE(agrees({6, 8}, bilinear, {2, 2}));
    CHECK_FALSE(agrees({1, 3, 5, 7}, form{"nearest", "tf_half_pixel_for_nn", "round_prefer_floor"}, {1, 1, 2, 2}));
}

TEST_CASE("Resize on oneDNN: nearest upsampling repeats each element, bilinear of a ramp is the ramp resampled") {
    std::mt19937 rng(4);
    const value x = random_input(rng, {2, 3, 4, 5});
    for (exec::mode m : {exec::mode::reference, exec::mode::onednn, exec::mode::onednn_plain}) {
        CAPTURE(static_cast<int>(m));
        const auto y = exec::executor(resize_graph({2, 3, 4, 5}, {"nearest", "asymmetric", "floor"}, {1, 1, 2, 3}, {}), m).run({{"x", x}});
        REQUIRE(y.at(0).dims() == exec::shape{2, 3, 8, 15});
        const float* in = x.as<float>();
        const float* out = y[0].as<float>();
        for (std::int64_t nc = 0; nc < 6; ++nc)
            for (std::int64_t h = 0; h < 8; ++h)
                for (std::int64_t w = 0; w < 15; ++w) CHECK(out[(nc * 8 + h) * 15 + w] == in[(nc * 4 + h / 2) * 5 + w / 3]);
        // A ramp along the width, r(i) = i: half_pixel bilinear gives r at the source coordinate
        // (o + 0.5) * 6 / 15 - 0.5, clamped to [0, 5] (the edge taps repeat the edge).
        std::vector<float> ramp(2 * 3 * 4 * 6);
        for (std::size_t i = 0; i < ramp.size(); ++i) ramp[i] = static_cast<float>(i % 6);
        const auto z = exec::executor(resize_graph({2, 3, 4, 6}, {"linear", "half_pixel", "round_prefer_floor"}, {}, {2, 3, 4, 15}), m)
                           .run({{"x", value::of<float>({2, 3, 4, 6}, ramp)}});
        REQUIRE(z.at(0).dims() == exec::shape{2, 3, 4, 15});
        for (std::int64_t i = 0; i < z[0].size(); ++i) {
            const double src = (static_cast<double>(i % 15) + 0.5) * 6.0 / 15.0 - 0.5;
            CHECK(std::abs(z[0].as<float>()[i] - std::min(std::max(src, 0.0), 5.0)) < 1e-5);
        }
    }
}

TEST_CASE("Resize in the oneDNN modes == the reference kernel, in every form, taken by oneDNN or not") {
    std::mt19937 rng(9);
    const form forms[] = {{"nearest", "asymmetric", "floor"},        {"nearest", "half_pixel", "round_prefer_ceil"},
                          {"nearest", "half_pixel", "round_prefer_floor"}, {"nearest", "align_corners", "round_prefer_floor"},
                          {"linear", "half_pixel", "round_prefer_floor"},  {"linear", "pytorch_half_pixel", "round_prefer_floor"},
                          {"linear", "align_corners", "round_prefer_floor"}, {"linear", "asymmetric", "round_prefer_floor"},
                          {"cubic", "half_pixel", "round_prefer_floor"}};
    const std::vector<std::vector<float>> scale_sets{{1, 1, 2, 2}, {1, 1, 0.5f, 0.5f}, {1, 1, 3, 1.5f}, {1, 1, 1.7f, 0.6f}};
    int taken = 0, total = 0;
    for (const form& f : forms)
        for (const auto& sc : scale_sets)
            for (bool by_sizes : {false, true}) {
                CAPTURE(f.mode);
                CAPTURE(f.coordinates);
                CAPTURE(f.nearest);
                CAPTURE(sc[2]);
                CAPTURE(by_sizes);
                const std::vector<std::int64_t> in{2, 3, 6, 8};
                std::vector<std::int64_t> sizes;
                if (by_sizes)
                    for (std::size_t i = 0; i < 4; ++i) sizes.push_back(static_cast<std::int64_t>(std::floor(static_cast<double>(in[i]) * sc[i])));
                const graph g = resize_graph(in, f, by_sizes ? std::vector<float>{} : sc, sizes);
                const value x = random_input(rng, in);
                const auto want = exec::executor(g, exec::mode::reference).run({{"x", x}});
                taken += agrees(in, f, by_sizes ? std::vector<float>{} : sc, sizes) ? 1 : 0;
                ++total;
                for (exec::mode m : {exec::mode::onednn, exec::mode::onednn_plain}) {
                    const auto got = exec::executor(g, m).run({{"x", x}});
                    REQUIRE(got.at(0).dims() == want.at(0).dims());
                    double worst = 0;
                    for (std::int64_t i = 0; i < want[0].size(); ++i)
                        worst = std::max(worst, static_cast<double>(std::abs(got[0].as<float>()[i] - want[0].as<float>()[i])));
                    CHECK(worst < 1e-5);
                }
            }
    // Both paths were exercised.
    CHECK(taken > 10);
    CHECK(taken < total);
}

TEST_CASE("Resize on oneDNN: an output larger than the caches (written with non-temporal stores) == the reference kernel") {
    // oneDNN's resampling stores a large output with non-temporal stores, which need 64-byte
    // aligned data: the executor's values are.
    std::mt19937 rng(12);
    const std::vector<std::int64_t> in{1, 64, 64, 64};
    const value x = random_input(rng, in);
    for (const form f : {form{"nearest", "asymmetric", "floor"}, form{"linear", "half_pixel", "round_prefer_floor"}}) {
        CAPTURE(f.mode);
        REQUIRE(agrees(in, f, {1, 1, 2, 2}));
        const graph g = resize_graph(in, f, {1, 1, 2, 2}, {});
        const auto want = exec::executor(g, exec::mode::reference).run({{"x", x}});
        const auto got = exec::executor(g, exec::mode::onednn).run({{"x", x}});
        REQUIRE(got.at(0).dims() == exec::shape{1, 64, 128, 128});
        CHECK(reinterpret_cast<std::uintptr_t>(got[0].data()) % 64 == 0);
        double worst = 0;
        for (std::int64_t i = 0; i < want[0].size(); ++i)
            worst = std::max(worst, static_cast<double>(std::abs(got[0].as<float>()[i] - want[0].as<float>()[i])));
        CHECK(worst < 1e-5);
    }
}

TEST_CASE("comparisons on oneDNN: every mask as written out, with ties, infinities and NaNs, however the operands broadcast") {
    std::mt19937 rng(21);
    // Values on a grid of halves (ties are common), with infinities and NaNs.
    auto operand = [&](const std::vector<std::int64_t>& dims) {
        std::int64_t n = 1;
        for (auto d : dims) n *= d;
        std::uniform_int_distribution<int> q(-4, 4), special(0, 40);
        std::vector<float> v(static_cast<std::size_t>(n));
        for (auto& e : v) {
            const int k = special(rng);
            e = k == 0 ? std::nanf("") : k == 1 ? INFINITY : k == 2 ? -INFINITY : 0.5f * static_cast<float>(q(rng));
        }
        return value::of<float>(dims, v);
    };
    struct shapes {
        std::vector<std::int64_t> a, b;
    };
    const shapes cases[] = {
        {{2, 8, 32, 32}, {2, 8, 32, 32}},  // the same shape
        {{2, 8, 32, 32}, {8, 1, 1}},       // the second broadcasts
        {{1, 1, 32, 32}, {2, 8, 32, 32}},  // the first broadcasts: the operands swap
        {{2, 1, 32, 32}, {1, 8, 1, 32}},   // both broadcast: the typed kernel
        {{4, 4}, {4, 4}},                  // under onednn_compare_min_elements: the typed kernel
    };
    const char* ops[] = {"Equal", "Less", "Greater", "LessOrEqual", "GreaterOrEqual"};
    for (const shapes& c : cases) {
        const value a = operand(c.a), b = operand(c.b);
        for (const char* op : ops) {
            const std::string name = op;
            CAPTURE(name);
            CAPTURE(c.a.size());
            CAPTURE(c.b.size());
            graph g;
            g.mark_output(g.add_op(op, "cmp", {g.add_input("a", tensor_type{dtype::f32, c.a}), g.add_input("b", tensor_type{dtype::f32, c.b})}));
            // The broadcast shape and the mask written out.
            std::vector<std::int64_t> out(std::max(c.a.size(), c.b.size()), 1);
            auto padded = [&](std::vector<std::int64_t> d) {
                d.insert(d.begin(), out.size() - d.size(), 1);
                return d;
            };
            const auto pa = padded(c.a), pb = padded(c.b);
            for (std::size_t i = 0; i < out.size(); ++i) out[i] = std::max(pa[i], pb[i]);
            std::int64_t n = 1;
            for (auto d : out) n *= d;
            std::vector<bool> want(static_cast<std::size_t>(n));
            for (std::int64_t i = 0; i < n; ++i) {
                std::int64_t rest = i, ia = 0, ib = 0, sa = 1, sb = 1;
                for (std::size_t k = out.size(); k-- > 0;) {
                    const std::int64_t at = rest % out[k];
                    rest /= out[k];
                    ia += (pa[k] == 1 ? 0 : at) * sa;
                    ib += (pb[k] == 1 ? 0 : at) * sb;
                    sa *= pa[k];
                    sb *= pb[k];
                }
                const float x = a.as<float>()[ia], y = b.as<float>()[ib];
                const std::string o = op;
                want[static_cast<std::size_t>(i)] = o == "Equal" ? x == y : o == "Less" ? x < y : o == "Greater" ? x > y : o == "LessOrEqual" ? x <= y : x >= y;
            }
            for (exec::mode m : {exec::mode::reference, exec::mode::onednn, exec::mode::onednn_plain}) {
                CAPTURE(static_cast<int>(m));
                const auto got = exec::executor(g, m).run({{"a", a}, {"b", b}});
                REQUIRE(got.at(0).type() == dtype::boolean);
                REQUIRE(got[0].dims() == out);
                int wrong = 0;
                for (std::int64_t i = 0; i < n; ++i) wrong += got[0].as<bool>()[i] != want[static_cast<std::size_t>(i)] ? 1 : 0;
                CHECK(wrong == 0);
            }
        }
    }
}
