// QuantizeLinear and DequantizeLinear (exec/kernels/quantize.hpp): values worked out by hand
// (ties rounded to even, saturation at both ends, per-axis scales along a middle and a negative
// axis, int8 and uint8), the round trip, and every malformed scale or zero point refused naming
// the node; MatMulInteger and QLinearMatMul against loops. The ONNX conformance cases
// (test_quantizelinear*, test_dequantizelinear*, the expanded DynamicQuantizeLinear,
// test_matmulinteger, test_qlinearmatmul_*) check them too. Runs in every preset.
#include <doctest/doctest.h>

#include <cmath>
#include <cstdint>
#include <map>
#include <random>
#include <string>
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
