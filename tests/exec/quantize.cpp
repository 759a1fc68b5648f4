// QuantizeLinear and DequantizeLinear (exec/kernels/quantize.hpp): values worked out by hand
// (ties rounded to even, saturation at both ends, per-axis scales along a middle and a negative
// axis, int8 and uint8), the round trip, and every malformed scale or zero point refused naming
// the node; MatMulInteger and QLinearMatMul against loops; DynamicQuantizeLinear by hand;
// ConvInteger and QLinearConv against fp32 Conv of the dequantized values. The ONNX conformance
// cases (test_quantizelinear*, test_dequantizelinear*, test_dynamicquantizelinear*,
// test_matmulinteger, test_qlinearmatmul_*, test_*convinteger*, test_qlinearconv) check them
// too. Runs in every preset.
#include <doctest/doctest.h>

#include <cmath>
#include <cstdint>
#include <limits>
#include <map>
#include <random>
#include <string>
#include <utility>
#include <vector>

#include "sgmatch/exec/executor.hpp"
#include "support/values.hpp"

using namespace sgmatch;
using exec::value;

// Named: the unity build compiles this file with other tests; its helpers stay apart from theirs.
namespace quantize_tests {

using test::elements;

// One op over "x", "scale" and, when given, "zp".
value run_q(const std::string& op, const value& x, const value& scale, const value* zp, std::int64_t axis = 1) {
    graph g;
    std::vector<input_ref> ins{g.add_input("x"), g.add_input("scale")};
    if (zp != nullptr) ins.push_back(g.add_input("zp"));
    g.mark_output(g.add_op(op, "q", ins, {{"axis", axis}}));
    std::map<std::string, value> in{{"x", x}, {"scale", scale}};
    if (zp != nullptr) in.emplace("zp", *zp);
    return exec::executor(g).run(in).at(0);
}

std::string error_of(const std::string& op, const value& x, const value& scale, const value* zp, std::int64_t axis = 1) {
    try {
        (void)run_q(op, x, scale, zp, axis);
    } catch (const exec::exec_error& e) {
        return e.what();
    }
    return "";
}

}  // namespace quantize_tests

using namespace quantize_tests;

TEST_CASE("QuantizeLinear: ties to even, the zero point added after rounding, saturation, uint8 without a zero point") {
    const value x = value::of<float>({8}, {0.0f, 2.5f, 3.5f, -2.5f, 1.49f, 1000.0f, -1000.0f, 7.0f});
    const value scale = value::of<float>({}, {1.0f});
    // uint8, zero point 10: round(x) + 10, clamped to [0, 255].
    const value zp = value::of<std::uint8_t>({}, {10});
    const value y = run_q("QuantizeLinear", x, scale, &zp);
    REQUIRE(y.type() == dtype::u8);
    CHECK(elements<std::uint8_t>(y) == std::vector<std::uint8_t>{10, 12, 14, 8, 11, 255, 0, 17});
    // int8, zero point -3: clamped to [-128, 127].
    const value zi = value::of<std::int8_t>({}, {-3});
    const value yi = run_q("QuantizeLinear", x, scale, &zi);
    REQUIRE(yi.type() == dtype::i8);
    CHECK(elements<std::int8_t>(yi) == std::vector<std::int8_t>{-3, -1, 1, -5, -2, 127, -128, 4});
    // No zero point: uint8, zero point 0 (negatives saturate to 0).
    const value yu = run_q("QuantizeLinear", x, value::of<float>({}, {0.5f}), nullptr);
    REQUIRE(yu.type() == dtype::u8);
    CHECK(elements<std::uint8_t>(yu) == std::vector<std::uint8_t>{0, 5, 7, 0, 3, 255, 0, 14});
}

TEST_CASE("QuantizeLinear and DequantizeLinear per axis: the scale along a middle or a negative axis, the round trip") {
    // x [2, 3, 2]; per channel (axis 1, or -2) scales 0.5, 1, 2 and zero points 1, 2, 3.
    std::vector<float> xv;
    for (int i = 0; i < 12; ++i) xv.push_back(static_cast<float>(i) - 4.0f);
    const value x = value::of<float>({2, 3, 2}, xv);
    const value scale = value::of<float>({3}, {0.5f, 1.0f, 2.0f});
    const value zp = value::of<std::uint8_t>({3}, {1, 2, 3});
    for (std::int64_t axis : {1, -2}) {
        CAPTURE(axis);
        const value q = run_q("QuantizeLinear", x, scale, &zp, axis);
        const auto qv = elements<std::uint8_t>(q);
        for (std::size_t i = 0; i < 12; ++i) {
            const std::size_t c = (i / 2) % 3;
            const float s = elements<float>(scale)[c];
            const float want = std::nearbyint(xv[i] / s) + static_cast<float>(c + 1);
            CHECK(qv[i] == static_cast<std::uint8_t>(want < 0 ? 0 : want));
        }
        // Back: (q - zp) * scale; x itself where x / scale was an integer and not clamped.
        const value back = run_q("DequantizeLinear", q, scale, &zp, axis);
        REQUIRE(back.type() == dtype::f32);
        const auto bv = elements<float>(back);
        for (std::size_t i = 0; i < 12; ++i) {
            const std::size_t c = (i / 2) % 3;
            CHECK(bv[i] == (static_cast<float>(qv[i]) - static_cast<float>(c + 1)) * elements<float>(scale)[c]);
        }
        CHECK(bv[11] == 8.0f);  // x = 7 at scale 2: 3.5 rounds to 4 (even), q = 4 + 3, back (7 - 3) * 2
    }
}

TEST_CASE("QuantizeLinear and DequantizeLinear in the oneDNN modes, split across threads, equal the reference kernels element for element") {
    // Large enough to be split; every tie, both saturations, NaN and infinities among the values.
    std::mt19937 rng(77);
    std::uniform_real_distribution<float> u(-300.0f, 300.0f);
    std::vector<float> xs(3 * 64 * 41 * 17);
    for (auto& v : xs) v = u(rng);
    for (std::size_t i = 0; i < 3600; ++i) xs[i * 37] = static_cast<float>(static_cast<int>(i) - 2000) * 0.5f;  // ties at scale 1 (3599 * 37 < 133,824)
    xs[5] = std::nanf("");
    xs[6] = std::numeric_limits<float>::infinity();
    xs[7] = -std::numeric_limits<float>::infinity();
    xs[8] = 1e30f;
    const value x = value::of<float>({3, 64, 41, 17}, xs);
    std::vector<float> per_channel(64);
    for (std::size_t c = 0; c < per_channel.size(); ++c) per_channel[c] = 0.25f + 0.125f * static_cast<float>(c % 9);
    const std::vector<std::int8_t> zs8(64, -3);
    struct form {
        value scale, zp;
    };
    const form forms[] = {{value::of<float>({}, {1.0f}), value::of<std::uint8_t>({}, {128})},
                          {value::of<float>({}, {0.7f}), value::of<std::int8_t>({}, {-5})},
                          {value::of<float>({64}, per_channel), value::of<std::int8_t>({64}, zs8)}};
    for (const auto& f : forms) {
        const auto [want, st0] = test::run_one("QuantizeLinear", x, {f.scale, f.zp}, std::nullopt, {}, exec::mode::reference);
        const auto [got, st1] = test::run_one("QuantizeLinear", x, {f.scale, f.zp}, std::nullopt, {}, exec::mode::onednn);
        REQUIRE(got.type() == want.type());
        CHECK(got.to_ints() == want.to_ints());
        // and back
        const auto [back_want, st2] = test::run_one("DequantizeLinear", want, {f.scale, f.zp}, std::nullopt, {}, exec::mode::reference);
        const auto [back_got, st3] = test::run_one("DequantizeLinear", want, {f.scale, f.zp}, std::nullopt, {}, exec::mode::onednn);
        CHECK(elements<float>(back_got) == elements<float>(back_want));
        (void)st0, (void)st1, (void)st2, (void)st3;
    }
    // The values by hand at scale 1, zero point 128: ties to even, saturation, NaN to the zero point.
    const auto [y, st] = test::run_one("QuantizeLinear", x, {forms[0].scale, forms[0].zp}, std::nullopt, {}, exec::mode::onednn);
    const auto q = y.to_ints();
    CHECK(q[5] == 128);
    CHECK(q[6] == 255);
    CHECK(q[7] == 0);
    CHECK(q[8] == 255);
    CHECK(q[37 * 1999] == 128 + 0);   // -0.5 -> -0 (even)
    CHECK(q[37 * 2001] == 128 + 0);   // 0.5 -> 0
    CHECK(q[37 * 2003] == 128 + 2);   // 1.5 -> 2
    CHECK(q[37 * 2005] == 128 + 2);   // 2.5 -> 2
    (void)st;
}

TEST_CASE("DequantizeLinear: int8 with a zero point, int32 without one") {
    const value x = value::of<std::int8_t>({4}, {-128, -1, 0, 127});
    const value zp = value::of<std::int8_t>({}, {-1});
    const auto y = elements<float>(run_q("DequantizeLinear", x, value::of<float>({}, {0.25f}), &zp));
    CHECK(y == std::vector<float>{-31.75f, 0.0f, 0.25f, 32.0f});
    const value xi = value::of<std::int32_t>({3}, {-7, 0, 100000});
    CHECK(elements<float>(run_q("DequantizeLinear", xi, value::of<float>({}, {2.0f}), nullptr)) == std::vector<float>{-14.0f, 0.0f, 200000.0f});
}

TEST_CASE("QuantizeLinear and DequantizeLinear refuse a malformed scale, zero point or axis, naming the node") {
    const value x = value::of<float>({2, 3}, {1, 2, 3, 4, 5, 6});
    const value zp3 = value::of<std::uint8_t>({3}, {0, 0, 0});
    CHECK(error_of("QuantizeLinear", x, value::of<float>({1, 3}, {1, 1, 1}), nullptr).find("'q'") != std::string::npos);
    CHECK(error_of("QuantizeLinear", x, value::of<float>({1, 3}, {1, 1, 1}), nullptr).find("the scale has rank 2") != std::string::npos);
    CHECK(error_of("QuantizeLinear", x, value::of<float>({2}, {1, 1}), nullptr).find("2 values for an axis of extent 3") != std::string::npos);
    CHECK(error_of("QuantizeLinear", x, value::of<float>({3}, {1, 1, 1}), &zp3, 2).find("axis 2 is out of range") != std::string::npos);
    const value zp2 = value::of<std::uint8_t>({2}, {0, 0});
    CHECK(error_of("QuantizeLinear", x, value::of<float>({3}, {1, 1, 1}), &zp2).find("the zero point's shape differs") != std::string::npos);
    const value zf = value::of<float>({}, {0});
    CHECK(error_of("QuantizeLinear", x, value::of<float>({}, {1}), &zf).find("uint8 or int8 taken") != std::string::npos);
    CHECK(error_of("QuantizeLinear", x, value::of<double>({}, {1}), nullptr).find("f32 taken") != std::string::npos);
    const value q = value::of<std::uint8_t>({2}, {1, 2});
    const value zi8 = value::of<std::int8_t>({}, {0});
    CHECK(error_of("DequantizeLinear", q, value::of<float>({}, {1}), &zi8).find("the zero point is int8, x uint8") != std::string::npos);
    const value xi = value::of<std::int32_t>({2}, {1, 2});
    const value zi = value::of<std::int32_t>({}, {3});
    CHECK(error_of("DequantizeLinear", xi, value::of<float>({}, {1}), &zi).find("int32 x takes no zero point but 0") != std::string::npos);
    CHECK(error_of("DequantizeLinear", x, value::of<float>({}, {1}), nullptr).find("uint8, int8 or int32 taken") != std::string::npos);
}

namespace quantize_tests {

// sum_k (a[.., m, k] - za[m or 0]) * (b[.., k, n] - zb[n or 0]) for 3-D a and b of equal batch.
std::vector<std::int64_t> product_by_hand(const std::vector<int>& a, const std::vector<int>& b, std::int64_t batch, std::int64_t M,
                                          std::int64_t K, std::int64_t N, const std::vector<int>& za, const std::vector<int>& zb) {
    std::vector<std::int64_t> y(static_cast<std::size_t>(batch * M * N), 0);
    for (std::int64_t t = 0; t < batch; ++t)
        for (std::int64_t m = 0; m < M; ++m)
            for (std::int64_t n = 0; n < N; ++n) {
                std::int64_t s = 0;
                for (std::int64_t k = 0; k < K; ++k)
                    s += static_cast<std::int64_t>(a[static_cast<std::size_t>((t * M + m) * K + k)] - za[za.size() == 1 ? 0 : static_cast<std::size_t>(m)]) *
                         (b[static_cast<std::size_t>((t * K + k) * N + n)] - zb[zb.size() == 1 ? 0 : static_cast<std::size_t>(n)]);
                y[static_cast<std::size_t>((t * M + m) * N + n)] = s;
            }
    return y;
}

template <class T>
std::vector<int> ints_of(const value& v) {
    const auto e = elements<T>(v);
    return std::vector<int>(e.begin(), e.end());
}

}  // namespace quantize_tests

TEST_CASE("MatMulInteger: uint8 and int8 operands less zero points (one, per row, per column), batch broadcast, against loops") {
    std::mt19937 rng(21);
    const std::int64_t M = 3, K = 5, N = 4;
    const value a = test::random_value<std::uint8_t>(rng, {2, M, K}, 0, 255);
    const value b = test::random_value<std::int8_t>(rng, {2, K, N}, -128, 127);
    const value za = value::of<std::uint8_t>({M}, {3, 200, 128});  // per row of A
    const value zb = value::of<std::int8_t>({N}, {0, -5, 7, 127});  // per column of B
    graph g;
    g.mark_output(g.add_op("MatMulInteger", "mm", {g.add_input("a"), g.add_input("b"), g.add_input("za"), g.add_input("zb")}));
    const value y = exec::executor(g).run({{"a", a}, {"b", b}, {"za", za}, {"zb", zb}}).at(0);
    REQUIRE(y.type() == dtype::i32);
    REQUIRE(y.dims() == exec::shape{2, M, N});
    const auto want = product_by_hand(ints_of<std::uint8_t>(a), ints_of<std::int8_t>(b), 2, M, K, N, ints_of<std::uint8_t>(za), ints_of<std::int8_t>(zb));
    const auto got = elements<std::int32_t>(y);
    CHECK(std::vector<std::int64_t>(got.begin(), got.end()) == want);
    // B without a batch dim is broadcast over A's; no zero points: 0.
    const value b2 = test::random_value<std::uint8_t>(rng, {K, N}, 0, 255);
    graph h;
    h.mark_output(h.add_op("MatMulInteger", "mm", {h.add_input("a"), h.add_input("b")}));
    const value y2 = exec::executor(h).run({{"a", a}, {"b", b2}}).at(0);
    auto bb = ints_of<std::uint8_t>(b2);
    bb.insert(bb.end(), bb.begin(), bb.end());  // the same B for both batches
    const auto got2 = elements<std::int32_t>(y2);
    CHECK(std::vector<std::int64_t>(got2.begin(), got2.end()) == product_by_hand(ints_of<std::uint8_t>(a), bb, 2, M, K, N, {0}, {0}));
    // A zero point of the wrong size is refused, naming the node.
    const value z2 = value::of<std::uint8_t>({2}, {1, 2});
    CHECK(test::run_error(exec::executor(g), {{"a", a}, {"b", b}, {"za", z2}, {"zb", zb}}).find("'mm'") != std::string::npos);
}

TEST_CASE("QLinearMatMul: the integer product rescaled onto y's zero point, ties to even, saturated, against loops") {
    std::mt19937 rng(22);
    const std::int64_t M = 4, K = 6, N = 3;
    const value a = test::random_value<std::uint8_t>(rng, {1, M, K}, 0, 255);
    const value b = test::random_value<std::uint8_t>(rng, {1, K, N}, 0, 255);
    const float as = 0.02f, bs = 0.05f, ys = 0.3f;
    graph g;
    std::vector<input_ref> ins;
    for (const char* n : {"a", "as", "az", "b", "bs", "bz", "ys", "yz"}) ins.push_back(g.add_input(n));
    g.mark_output(g.add_op("QLinearMatMul", "q", ins));
    for (const int yz : {0, 100}) {
        CAPTURE(yz);
        const value y = exec::executor(g)
                            .run({{"a", a},
                                  {"as", value::of<float>({}, {as})},
                                  {"az", value::of<std::uint8_t>({}, {113})},
                                  {"b", b},
                                  {"bs", value::of<float>({}, {bs})},
                                  {"bz", value::of<std::uint8_t>({}, {114})},
                                  {"ys", value::of<float>({}, {ys})},
                                  {"yz", value::of<std::uint8_t>({}, {static_cast<std::uint8_t>(yz)})}})
                            .at(0);
        REQUIRE(y.type() == dtype::u8);
        const auto acc = product_by_hand(ints_of<std::uint8_t>(a), ints_of<std::uint8_t>(b), 1, M, K, N, {113}, {114});
        const auto got = elements<std::uint8_t>(y);
        const float m = as * bs / ys;
        for (std::size_t i = 0; i < acc.size(); ++i) {
            const float v = std::nearbyint(static_cast<float>(acc[i]) * m) + static_cast<float>(yz);
            CHECK(static_cast<int>(got[i]) == static_cast<int>(v < 0 ? 0 : v > 255 ? 255 : v));
        }
    }
}

TEST_CASE("DynamicQuantizeLinear: the range stretched to hold 0, the zero point rounded to even, three outputs of their own types") {
    graph g;
    const node_id n = g.add_op("DynamicQuantizeLinear", "dq", {g.add_input("x")}, {}, 3);
    for (std::uint32_t o = 0; o < 3; ++o) g.mark_output(input_ref(value_ref<node_id>{n, o}));
    const exec::executor run(g);
    // [-1, 1.55]: scale 2.55 / 255 = 0.01, zero point round(1 / 0.01) = 100.
    const auto out = run.run({{"x", value::of<float>({2, 3}, {-1.0f, 0.0f, 0.5f, 1.55f, 0.005f, 0.015f})}});
    REQUIRE(out.size() == 3);
    REQUIRE(out[0].type() == dtype::u8);
    REQUIRE(out[1].type() == dtype::f32);
    REQUIRE(out[2].type() == dtype::u8);
    CHECK(out[0].dims() == exec::shape{2, 3});
    CHECK(out[1].dims().empty());
    CHECK(out[2].dims().empty());
    const float scale = elements<float>(out[1])[0];
    CHECK(scale == doctest::Approx(0.01f));
    CHECK(elements<std::uint8_t>(out[2])[0] == 100);
    const auto y = elements<std::uint8_t>(out[0]);
    const std::vector<float> x{-1.0f, 0.0f, 0.5f, 1.55f, 0.005f, 0.015f};
    for (std::size_t i = 0; i < x.size(); ++i) CHECK(static_cast<int>(y[i]) == static_cast<int>(std::nearbyint(x[i] / scale)) + 100);
    // Positive only: the range starts at 0, so the zero point is 0 and the maximum maps to 255.
    const auto pos = run.run({{"x", value::of<float>({3}, {1.0f, 2.0f, 5.1f})}});
    CHECK(elements<std::uint8_t>(pos[2])[0] == 0);
    CHECK(elements<std::uint8_t>(pos[0]) == std::vector<std::uint8_t>{50, 100, 255});
    // Negative only: the maximum is 0, the zero point 255.
    const auto neg = run.run({{"x", value::of<float>({2}, {-5.1f, -2.0f})}});
    CHECK(elements<std::uint8_t>(neg[2])[0] == 255);
    CHECK(elements<std::uint8_t>(neg[0]) == std::vector<std::uint8_t>{0, 155});
    // All zeros: scale 0, zero point 0, y 0 (no division by the zero scale).
    const auto zero = run.run({{"x", value::of<float>({2}, {0.0f, 0.0f})}});
    CHECK(elements<float>(zero[1])[0] == 0.0f);
    CHECK(elements<std::uint8_t>(zero[0]) == std::vector<std::uint8_t>{0, 0});
    // A value that is not finite has no scale: refused, naming the node.
    const std::string e = test::run_error(run, {{"x", value::of<float>({2}, {1.0f, std::nanf("")})}});
    CHECK(e.find("'dq'") != std::string::npos);
    CHECK(e.find("not finite") != std::string::npos);
}

namespace quantize_tests {

// The integers of v less its zero point(s) (one, or one per slice of `per` elements), as f32.
template <class T>
value offset_f32(const value& v, const std::vector<int>& z, std::int64_t per) {
    const auto e = elements<T>(v);
    std::vector<float> f(e.size());
    for (std::size_t i = 0; i < e.size(); ++i)
        f[i] = static_cast<float>(static_cast<int>(e[i]) - z[z.size() == 1 ? 0 : static_cast<std::size_t>(static_cast<std::int64_t>(i) / per)]);
    return value::of<float>(v.dims(), f);
}

using conv_attrs = std::vector<std::pair<std::string, attribute>>;

// Node `op` over `ins` with the convolution attributes given.
input_ref conv_node(graph& g, const std::string& op, const std::string& name, std::vector<input_ref> ins, const conv_attrs& attrs) {
    const node_id n = g.add_op(op, name, std::move(ins));
    for (const auto& [k, v] : attrs) g.set_attr(n, k, v);
    return input_ref(n);
}

// An fp32 Conv of x and w with the attributes given (the oracle for the integer convolutions).
value float_conv(const value& x, const value& w, const conv_attrs& attrs) {
    graph g;
    g.mark_output(conv_node(g, "Conv", "c", {g.add_input("x"), g.add_input("w")}, attrs));
    return exec::executor(g).run({{"x", x}, {"w", w}}).at(0);
}

}  // namespace quantize_tests

TEST_CASE("ConvInteger: groups, strides, dilations, uneven pads and per-channel zero points, against fp32 Conv of the offset values") {
    std::mt19937 rng(31);
    // Small magnitudes keep every fp32 sum exact.
    const value x = test::random_value<std::uint8_t>(rng, {2, 4, 9, 8}, 0, 40);
    const value w = test::random_value<std::int8_t>(rng, {6, 2, 3, 2}, -20, 20);
    const conv_attrs attrs{{"group", 2}, {"strides", attribute::ints{2, 1}}, {"dilations", attribute::ints{1, 2}},
                          {"pads", attribute::ints{1, 0, 2, 1}}};
    const std::vector<int> zw{0, -3, 5, 1, -7, 2};  // one per output channel
    graph g;
    g.mark_output(conv_node(g, "ConvInteger", "ci", {g.add_input("x"), g.add_input("w"), g.add_input("zx"), g.add_input("zw")}, attrs));
    std::vector<std::int8_t> zw8(zw.begin(), zw.end());
    const value y = exec::executor(g)
                        .run({{"x", x}, {"w", w}, {"zx", value::of<std::uint8_t>({}, {17})}, {"zw", value::of<std::int8_t>({6}, zw8)}})
                        .at(0);
    REQUIRE(y.type() == dtype::i32);
    const value want = float_conv(offset_f32<std::uint8_t>(x, {17}, 1), offset_f32<std::int8_t>(w, zw, 2 * 3 * 2), attrs);
    REQUIRE(y.dims() == want.dims());
    const auto got = elements<std::int32_t>(y);
    const auto ref = elements<float>(want);
    for (std::size_t i = 0; i < got.size(); ++i) CHECK(static_cast<float>(got[i]) == ref[i]);
    // A padded position adds nothing, whatever the zero point: with zero points 0 it is the
    // plain convolution of the raw integers.
    graph h;
    h.mark_output(conv_node(h, "ConvInteger", "ci", {h.add_input("x"), h.add_input("w")}, attrs));
    const value y0 = exec::executor(h).run({{"x", x}, {"w", w}}).at(0);
    const auto ref0 = elements<float>(float_conv(offset_f32<std::uint8_t>(x, {0}, 1), offset_f32<std::int8_t>(w, {0}, 1), attrs));
    const auto got0 = elements<std::int32_t>(y0);
    for (std::size_t i = 0; i < got0.size(); ++i) CHECK(static_cast<float>(got0[i]) == ref0[i]);
    // w's zero point with neither one nor one value per output channel is refused, naming the node.
    const std::string e = test::run_error(
        exec::executor(g), {{"x", x}, {"w", w}, {"zx", value::of<std::uint8_t>({}, {17})}, {"zw", value::of<std::int8_t>({2}, {1, 2})}});
    CHECK(e.find("'ci'") != std::string::npos);
    CHECK(e.find("one per output channel") != std::string::npos);
}

TEST_CASE("QLinearConv: equals DequantizeLinear, fp32 Conv with the bias, QuantizeLinear when every product is exact in f32") {
    std::mt19937 rng(32);
    const value x = test::random_value<std::uint8_t>(rng, {1, 3, 7, 6}, 0, 60);
    const value w = test::random_value<std::int8_t>(rng, {4, 3, 3, 3}, -30, 30);
    const value bias = value::of<std::int32_t>({4}, {-400, 0, 250, 1000});
    // Powers of two: x_scale * w_scale / y_scale and every rescaled sum are exact, so ties fall
    // the same way on both sides. w's scale is per output channel.
    const float xs = 0.5f, ys = 4.0f;
    const std::vector<float> ws{0.25f, 0.5f, 1.0f, 0.125f};
    const conv_attrs attrs{{"pads", attribute::ints{1, 1, 1, 1}}, {"strides", attribute::ints{1, 2}}};
    graph g;
    std::vector<input_ref> ins;
    for (const char* n : {"x", "xs", "xz", "w", "ws", "wz", "ys", "yz", "b"}) ins.push_back(g.add_input(n));
    g.mark_output(conv_node(g, "QLinearConv", "qc", ins, attrs));
    for (const int yz : {0, 128}) {
        CAPTURE(yz);
        const value y = exec::executor(g)
                            .run({{"x", x},
                                  {"xs", value::of<float>({}, {xs})},
                                  {"xz", value::of<std::uint8_t>({}, {20})},
                                  {"w", w},
                                  {"ws", value::of<float>({4}, ws)},
                                  {"wz", value::of<std::int8_t>({}, {0})},
                                  {"ys", value::of<float>({}, {ys})},
                                  {"yz", value::of<std::uint8_t>({}, {static_cast<std::uint8_t>(yz)})},
                                  {"b", bias}})
                            .at(0);
        REQUIRE(y.type() == dtype::u8);
        // The oracle, through other ops: the real values convolved, the bias (scale x_scale *
        // w_scale) added, quantized onto y's scale and zero point.
        value xf = offset_f32<std::uint8_t>(x, {20}, 1), wf = offset_f32<std::int8_t>(w, {0}, 1);
        for (std::int64_t i = 0; i < xf.size(); ++i) xf.as<float>()[i] *= xs;
        for (std::int64_t i = 0; i < wf.size(); ++i) wf.as<float>()[i] *= ws[static_cast<std::size_t>(i / 27)];
        const value conv = float_conv(xf, wf, attrs);
        const std::int64_t plane = conv.size() / 4;
        const auto c = elements<float>(conv);
        const auto got = elements<std::uint8_t>(y);
        int saturated = 0;
        for (std::size_t i = 0; i < c.size(); ++i) {
            const std::size_t m = static_cast<std::size_t>(static_cast<std::int64_t>(i) / plane);
            const float real = c[i] + static_cast<float>(elements<std::int32_t>(bias)[m]) * xs * ws[m];
            const float q = std::nearbyint(real / ys) + static_cast<float>(yz);
            saturated += q < 0 || q > 255;
            CHECK(static_cast<int>(got[i]) == static_cast<int>(q < 0 ? 0 : q > 255 ? 255 : q));
        }
        CHECK(saturated > 0);  // the bias pushes some sums past the ends
    }
}
