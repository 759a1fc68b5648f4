// QLinearConv and ConvInteger on oneDNN's int8 convolution (exec/kernels/qconv_onednn.hpp): in
// the oneDNN modes every form it takes equals the reference kernel (the ONNX definition, computed
// op by op: kernels/quantize.hpp) within one step of y, in at most one element in a thousand,
// padded convs with a nonzero input zero point among them, and run_stats says it ran on oneDNN; the forms it does not take (a nonzero
// weight zero point, computed weights) run the reference kernel, with the same result.
#include <doctest/doctest.h>

#include <algorithm>
#include <cstdint>
#include <cstring>
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
namespace qconv_onednn_tests {

using attrs_list = std::vector<std::pair<std::string, attribute>>;

struct qconv_case {
    std::string op = "QLinearConv";
    value x, w;
    std::vector<value> params;  // the node's other inputs after x (and w), in ONNX's order; w in its slot
    attrs_list attrs;
    bool computed_weights = false;  // w a graph input, not a constant
};

void check_same(const qconv_case& c, bool onednn_expected) {
    const std::size_t w_slot = c.op == "QLinearConv" ? 2 : 0;
    const test::int_difference d = test::onednn_against_reference(
        c.op, c.x, c.params, c.computed_weights ? std::optional<std::size_t>(w_slot) : std::nullopt, c.attrs, onednn_expected);
    // Within one step of y, and rarely that: oneDNN's kernels may order the f32 rescale
    // differently (its 1x1 brgemm kernel rounds a few ties the other way).
    CAPTURE(d.count);
    CAPTURE(d.differ);
    CHECK(d.worst <= 1);
    CHECK(d.differ * 1000 <= d.count);
}

}  // namespace qconv_onednn_tests

using namespace qconv_onednn_tests;

TEST_CASE("QLinearConv on oneDNN int8: uint8 x with a zero point, padded and strided, per-channel w scales, bias, uint8 y") {
    std::mt19937 rng(41);
    qconv_case c;
    c.x = test::random_value<std::uint8_t>(rng, {2, 16, 11, 9}, 0, 255);
    c.w = test::random_value<std::int8_t>(rng, {8, 16, 3, 3}, -127, 127);
    std::vector<float> ws(8);
    for (std::size_t m = 0; m < ws.size(); ++m) ws[m] = 0.002f + 0.0007f * static_cast<float>(m);
    std::vector<std::int32_t> bias(8);
    for (std::size_t m = 0; m < bias.size(); ++m) bias[m] = static_cast<std::int32_t>(m * 997) - 3000;
    c.params = {value::of<float>({}, {0.02f}),          value::of<std::uint8_t>({}, {17}),        c.w,
                value::of<float>({8}, ws),               value::of<std::int8_t>({8}, std::vector<std::int8_t>(8, 0)),
                value::of<float>({}, {0.5f}),            value::of<std::uint8_t>({}, {128}),       value::of<std::int32_t>({8}, bias)};
    c.attrs = {{"pads", attribute::ints{1, 1, 1, 1}}, {"strides", attribute::ints{2, 1}}};
    check_same(c, true);
}

TEST_CASE("QLinearConv on oneDNN int8: int8 x, grouped, dilated, uneven pads, one w scale, no bias, int8 y") {
    std::mt19937 rng(42);
    qconv_case c;
    c.x = test::random_value<std::int8_t>(rng, {1, 8, 10, 12}, -128, 127);
    c.w = test::random_value<std::int8_t>(rng, {6, 4, 3, 2}, -100, 100);
    c.params = {value::of<float>({}, {0.05f}),  value::of<std::int8_t>({}, {-5}), c.w,
                value::of<float>({}, {0.01f}),  value::of<std::int8_t>({}, {0}),  value::of<float>({}, {0.9f}),
                value::of<std::int8_t>({}, {3})};
    c.attrs = {{"group", std::int64_t{2}}, {"dilations", attribute::ints{2, 1}}, {"pads", attribute::ints{0, 1, 2, 0}}};
    check_same(c, true);
}

TEST_CASE("ConvInteger on oneDNN int8: uint8 x less its zero point, padded, int32 sums") {
    std::mt19937 rng(43);
    qconv_case c;
    c.op = "ConvInteger";
    c.x = test::random_value<std::uint8_t>(rng, {1, 5, 7, 7}, 0, 255);
    c.w = test::random_value<std::int8_t>(rng, {4, 5, 3, 3}, -128, 127);
    c.params = {c.w, value::of<std::uint8_t>({}, {9})};
    c.attrs = {{"pads", attribute::ints{1, 1, 1, 1}}};
    check_same(c, true);
}

TEST_CASE("int8 convolutions: a weight zero point runs the reference kernel, computed weights and parameters run on oneDNN") {
    std::mt19937 rng(44);
    qconv_case c;
    c.op = "ConvInteger";
    c.x = test::random_value<std::uint8_t>(rng, {1, 3, 6, 6}, 0, 255);
    c.w = test::random_value<std::int8_t>(rng, {2, 3, 3, 3}, -128, 127);
    c.params = {c.w, value::of<std::uint8_t>({}, {4}), value::of<std::int8_t>({}, {2})};  // w's zero point 2
    check_same(c, false);
    c.computed_weights = true;
    check_same(c, false);
    c.params.pop_back();  // no w zero point: taken, weights constant or computed
    check_same(c, true);
    c.computed_weights = false;
    check_same(c, true);
}
