// QLinearMatMul and MatMulInteger on oneDNN's int8 matmul (exec/kernels/qmatmul_onednn.hpp): in
// the oneDNN modes every form it takes equals the reference kernel (the ONNX definition, computed
// op by op: kernels/quantize.hpp): MatMulInteger exactly, QLinearMatMul within one step of y in at
// most one element in a thousand; uint8 B (shifted to int8) and batched, broadcast operands among
// them, and run_stats says it ran on oneDNN. The forms it does not take (a zero point per row or
// per column, a 1-D operand) run the reference kernel, with the same result.
#include <doctest/doctest.h>

#include <algorithm>
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
