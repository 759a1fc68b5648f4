// QLinearMatMul and MatMulInteger on oneDNN's int8 matmul (exec/kernels/qmatmul_onednn.hpp): in
// the oneDNN modes every form it takes equals the reference kernel (the ONNX definition, computed
// op by op: kernels/quantize.hpp): MatMulInteger exactly, QLinearMatMul within one step of y in at
// most one element in a thousand; uint8 B (shifted to int8) and batched, broadcast operands among
// them, and run_stats says it ran on oneDNN. The forms it does not take (a zero point per row or
// per column, a 1-D operand) run the reference kernel, with the same result.
#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <map>
#include <random>
#include <string>
#include <utility>
#include <vector>

#include "sgmatch/exec/executor.hpp"
#include "support/values.hpp"

using namespace sgmatch;
using exec::value;

// Named: the unity build compiles this file with other tests.
namespace qmatmul_onednn_tests {

struct qmatmul_case {
    std::string op = "QLinearMatMul";
    value a, b;
    std::vector<value> params;  // the node's inputs after a, in ONNX's order; b in its slot
    bool computed_b = false;    // b a graph input, not a constant
};

void check_same(const qmatmul_case& c, bool onednn_expected) {
    const std::size_t b_slot = c.op == "QLinearMatMul" ? 2 : 0;
    const test::int_difference d = test::onednn_against_reference(
        c.op, c.a, c.params, c.computed_b ? std::optional<std::size_t>(b_slot) : std::nullopt, {}, onednn_expected);
    CAPTURE(d.count);
    CAPTURE(d.differ);
    if (c.op == "MatMulInteger") {
        CHECK(d.differ == 0);  // int32 sums: exact
    } else {
        CHECK(d.worst <= 1);
        CHECK(d.differ * 1000 <= d.count);
    }
}

qmatmul_case qlinear(std::mt19937& rng, std::vector<std::int64_t> ad, std::vector<std::int64_t> bd, bool b_unsigned) {
    qmatmul_case c;
    c.a = test::random_value<std::uint8_t>(rng, ad, 0, 255);
    c.b = b_unsigned ? test::random_value<std::uint8_t>(rng, bd, 0, 255) : test::random_value<std::int8_t>(rng, bd, -128, 127);
    const value bz = b_unsigned ? value::of<std::uint8_t>({}, {131}) : value::of<std::int8_t>({}, {-3});
    c.params = {value::of<float>({}, {0.02f}), value::of<std::uint8_t>({}, {121}), c.b, value::of<float>({}, {0.004f}),
                bz, value::of<float>({}, {0.3f}), value::of<std::uint8_t>({}, {110})};
    return c;
}

}  // namespace qmatmul_onednn_tests

using namespace qmatmul_onednn_tests;

TEST_CASE("QLinearMatMul on oneDNN int8: uint8 A with a zero point, int8 and uint8 constant B with zero points, uint8 y") {
    std::mt19937 rng(51);
    for (const bool b_unsigned : {false, true}) {
        CAPTURE(b_unsigned);
        check_same(qlinear(rng, {33, 64}, {64, 48}, b_unsigned), true);
        // batched A against a 2-D B (a transformer's projection), and B computed at run time
        qmatmul_case c = qlinear(rng, {2, 17, 40}, {40, 24}, b_unsigned);
        check_same(c, true);
        c.computed_b = true;
        check_same(c, true);
    }
}

TEST_CASE("QLinearMatMul on oneDNN int8: int8 y, both operands batched with a broadcast batch dim") {
    std::mt19937 rng(52);
    qmatmul_case c = qlinear(rng, {3, 1, 9, 20}, {1, 2, 20, 7}, false);
    c.params[6] = value::of<std::int8_t>({}, {-7});  // y zero point int8: y is int8
    check_same(c, true);
}

TEST_CASE("QLinearMatMul with a b scale per column: as ONNX defines it (brute force), and on oneDNN int8 within one step") {
    std::mt19937 rng(55);
    qmatmul_case c = qlinear(rng, {2, 9, 40}, {40, 24}, false);
    std::vector<float> bs(24);
    for (std::size_t n = 0; n < bs.size(); ++n) bs[n] = 0.001f * static_cast<float>(1 + n % 6);
    c.params[3] = value::of<float>({24}, bs);
    check_same(c, true);
    // The ONNX definition computed here, element by element, on a small case.
    qmatmul_case s = qlinear(rng, {3, 5}, {5, 4}, false);
    s.params[3] = value::of<float>({4}, {0.01f, 0.02f, 0.005f, 0.03f});
    s.params[4] = value::of<std::int8_t>({4}, {0, -3, 2, 1});  // per column too (the reference kernel)
    const value y = test::run_one(s.op, s.a, s.params, std::nullopt, {}, exec::mode::reference).first;
    const auto A = s.a.to_ints(), B = s.b.to_ints(), Y = y.to_ints(), zb = s.params[4].to_ints();
    const float* sb = s.params[3].as<float>();
    for (int m = 0; m < 3; ++m)
        for (int n = 0; n < 4; ++n) {
            std::int64_t acc = 0;
            for (int k = 0; k < 5; ++k) acc += (A[static_cast<std::size_t>(m * 5 + k)] - 121) * (B[static_cast<std::size_t>(k * 4 + n)] - zb[static_cast<std::size_t>(n)]);
            const float scale = 0.02f * sb[n] / 0.3f;
            const std::int64_t want = std::clamp<std::int64_t>(static_cast<std::int64_t>(std::nearbyint(static_cast<float>(acc) * scale)) + 110, 0, 255);
            CHECK(Y[static_cast<std::size_t>(m * 4 + n)] == want);
        }
    check_same(s, false);  // a zero point per column: the reference kernel
}

TEST_CASE("MatMulInteger on oneDNN int8: int32 sums, with and without zero points, exact") {
    std::mt19937 rng(53);
    qmatmul_case c;
    c.op = "MatMulInteger";
    c.a = test::random_value<std::uint8_t>(rng, {16, 30}, 0, 255);
    c.b = test::random_value<std::int8_t>(rng, {30, 12}, -128, 127);
    c.params = {c.b, value::of<std::uint8_t>({}, {7}), value::of<std::int8_t>({}, {5})};
    check_same(c, true);
    c.params = {c.b};  // no zero points
    check_same(c, true);
    c.b = test::random_value<std::uint8_t>(rng, {30, 12}, 0, 255);  // uint8 B
    c.params = {c.b, value::of<std::uint8_t>({}, {7}), value::of<std::uint8_t>({}, {200})};
    check_same(c, true);
}

TEST_CASE("int8 matmuls: a zero point per row or per column, and a 1-D operand, run the reference kernel") {
    std::mt19937 rng(54);
    qmatmul_case c;
    c.op = "MatMulInteger";
    c.a = test::random_value<std::int8_t>(rng, {4, 6}, -128, 127);
    c.b = test::random_value<std::int8_t>(rng, {6, 5}, -128, 127);
    c.params = {c.b, value::of<std::int8_t>({4}, {1, 2, 3, 4}), value::of<std::int8_t>({}, {0})};  // per row of A
    check_same(c, false);
    c.params = {c.b, value::of<std::int8_t>({}, {1}), value::of<std::int8_t>({5}, {0, 1, 2, 3, 4})};  // per column of B
    check_same(c, false);
    c.a = test::random_value<std::int8_t>(rng, {6}, -128, 127);  // 1-D A
    c.params = {c.b};
    check_same(c, false);
}
