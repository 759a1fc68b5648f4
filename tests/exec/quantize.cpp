// QuantizeLinear and DequantizeLinear (exec/kernels/quantize.hpp): values worked out by hand
// (ties rounded to even, saturation at both ends, per-axis scales along a middle and a negative
// axis, int8 and uint8), the round trip, and every malformed scale or zero point refused naming
// the node. The ONNX conformance cases (test_quantizelinear*, test_dequantizelinear*, the
// expanded DynamicQuantizeLinear) check them too. Runs in every preset.
#include <doctest/doctest.h>

#include <cmath>
#include <cstdint>
#include <map>
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
