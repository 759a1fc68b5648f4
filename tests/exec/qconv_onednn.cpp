// QLinearConv and ConvInteger on oneDNN's int8 convolution (exec/kernels/qconv_onednn.hpp): in
// the oneDNN modes every form it takes equals the reference kernel (the ONNX definition, computed
// op by op: kernels/quantize.hpp) within one step of y, in at most one element in a thousand,
// padded convs with a nonzero input zero point among them, and run_stats says it ran on oneDNN; the forms it does not take (a nonzero
// weight zero point, computed weights) run the reference kernel, with the same result.
#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <map>
#include <optional>
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

namespace qconv_onednn_tests {

// One int8 node of the chain below: its op, its inputs after the first (constants; `from` names
// the node output that replaces slot `computed` of them) and its attributes.
struct chain_node {
    std::string op, name, first;
    std::vector<value> rest;
    std::optional<std::size_t> computed;
    std::string from;
    attrs_list attrs;
};

// x -> c1 (3x3) -> c2 (depthwise 3x3) -> add(c1, c2) -> c3 (1x1), and add -> dq; the outputs are
// c1, c3 and dq.
std::vector<chain_node> int8_chain(std::mt19937& rng) {
    auto f = [](float v) { return value::of<float>({}, {v}); };
    auto u = [](std::uint8_t v) { return value::of<std::uint8_t>({}, {v}); };
    auto conv = [&](std::string name, std::string first, float in_scale, std::uint8_t in_zero, std::vector<std::int64_t> wdims,
                    float out_scale, std::uint8_t out_zero, attrs_list attrs) {
        const value w = test::random_value<std::int8_t>(rng, wdims, -60, 60);
        return chain_node{"QLinearConv", std::move(name), std::move(first),
                          {f(in_scale), u(in_zero), w, f(0.01f), value::of<std::int8_t>({}, {0}), f(out_scale), u(out_zero)},
                          std::nullopt, "", std::move(attrs)};
    };
    const attribute::ints pads{1, 1, 1, 1};
    return {conv("c1", "x", 0.02f, 128, {16, 16, 3, 3}, 0.05f, 120, {{"pads", pads}}),
            conv("c2", "c1", 0.05f, 120, {16, 1, 3, 3}, 0.04f, 125, {{"pads", pads}, {"group", std::int64_t{16}}}),
            chain_node{"QLinearAdd", "add", "c1", {f(0.05f), u(120), value(), f(0.04f), u(125), f(0.06f), u(110)}, 2, "c2", {}},
            conv("c3", "add", 0.06f, 110, {8, 16, 1, 1}, 0.1f, 100, {}),
            chain_node{"DequantizeLinear", "dq", "add", {f(0.06f), u(110)}, std::nullopt, "", {}}};
}

sgmatch::graph chain_graph(const std::vector<chain_node>& nodes) {
    sgmatch::graph g;
    std::map<std::string, node_id> made{{"x", g.add_input("x")}};
    for (const chain_node& c : nodes) {
        std::vector<input_ref> ins{input_ref(made.at(c.first))};
        for (std::size_t i = 0; i < c.rest.size(); ++i)
            ins.push_back(c.computed == i ? input_ref(made.at(c.from)) : input_ref(test::constant_of(g, c.name + "." + std::to_string(i), c.rest[i])));
        const node_id n = g.add_op(c.op, c.name, ins);
        for (const auto& [k, v] : c.attrs) g.set_attr(n, k, v);
        made[c.name] = n;
    }
    for (const char* out : {"c1", "c3", "dq"}) g.mark_output(made.at(out));
    return g;
}

}  // namespace qconv_onednn_tests

TEST_CASE("A chain of int8 convs and a QLinearAdd keeps channels-last between them: one reorder, at its input, and each node's own result") {
    std::mt19937 rng(45);
    const std::vector<chain_node> nodes = int8_chain(rng);
    const sgmatch::graph g = chain_graph(nodes);
    const value x = test::random_value<std::uint8_t>(rng, {2, 16, 14, 14}, 0, 255);
    exec::run_stats st, ref_st;
    const auto got = exec::executor(g, exec::mode::onednn).run({{"x", x}}, &st);
    CHECK(st.onednn_typed_nodes == 3);
    CHECK(st.typed_reorders == 1);  // c1's x, dense NCHW, into the primitive's channels-last
    REQUIRE(got.size() == 3);

    // The oracle of the layouts: each node run alone in the oneDNN mode on dense values (its
    // input and output graph values), the same arithmetic: equal integers.
    std::map<std::string, value> alone{{"x", x}};
    std::size_t reorders = 0;
    for (const chain_node& c : nodes) {
        std::vector<value> rest = c.rest;
        if (c.computed) rest[*c.computed] = alone.at(c.from);
        auto [y, s] = test::run_one(c.op, alone.at(c.first), rest, c.computed, c.attrs, exec::mode::onednn);
        reorders += s.typed_reorders;
        alone[c.name] = y;
    }
    CHECK(reorders == 3);  // each conv run alone reorders its dense x (its y is made dense as a graph output)
    const char* names[] = {"c1", "c3", "dq"};
    for (std::size_t i = 0; i < 3; ++i) {
        CAPTURE(names[i]);
        const value& want = alone.at(names[i]);
        CHECK(got[i].dense());  // graph outputs are returned dense
        REQUIRE(got[i].type() == want.type());
        REQUIRE(got[i].dims() == want.dims());
        if (i < 2) CHECK(test::compare_ints(got[i], want).differ == 0);
        else CHECK(test::elements<float>(got[i]) == test::elements<float>(want));
    }

    // And the reference kernels: within a step or two (a tie c1 rounds the other way moves
    // what reads it), rarely.
    const auto ref = exec::executor(g, exec::mode::reference).run({{"x", x}}, &ref_st);
    CHECK(ref_st.typed_reorders == 0);
    for (std::size_t i = 0; i < 2; ++i) {
        CAPTURE(names[i]);
        const test::int_difference d = test::compare_ints(got[i], ref[i]);
        CAPTURE(d.differ);
        CHECK(d.worst <= 2);
        CHECK(d.differ * 20 <= d.count);
    }
}

TEST_CASE("exec::value in packed layouts: channels-last strides are packed, read dense, copied between layouts") {
    const value dense = value::of<std::int32_t>({2, 3, 2, 2}, [] {
        std::vector<std::int32_t> v(24);
        for (std::size_t i = 0; i < v.size(); ++i) v[i] = static_cast<std::int32_t>(i);
        return v;
    }());
    const exec::shape nhwc{12, 1, 6, 3};  // N, C, H, W strides of channels-last
    CHECK(value::packed_strides({2, 3, 2, 2}, nhwc));
    CHECK_FALSE(value::packed_strides({2, 3, 2, 2}, {12, 1, 6, 2}));  // two elements in one slot
    CHECK(value::packed_strides({1, 3, 1, 1}, {99, 1, 7, 5}));        // extents of 1 step anywhere
    const value cl = dense.in_layout(nhwc);
    CHECK_FALSE(cl.dense());
    CHECK(cl.packed());
    CHECK(cl.strides() == nhwc);
    const auto* raw = static_cast<const std::int32_t*>(cl.data());
    CHECK(raw[1] == 4);  // (n0, c1, h0, w0) is element 4 of the dense order, next to c0 in memory
    CHECK(raw[3] == 1);  // (n0, c0, h0, w1)
    CHECK(test::elements<std::int32_t>(cl.dense_value()) == test::elements<std::int32_t>(dense));
    CHECK(test::elements<std::int32_t>(cl.in_layout(value::dense_strides(cl.dims()))) == test::elements<std::int32_t>(dense));
    CHECK_THROWS_AS(value::zeros_in_layout(dtype::u8, {2, 3}, {1, 1}), exec::value_error);
}

TEST_CASE("DequantizeLinear -> an f32 op -> QuantizeLinear between int8 convs keeps channels-last too: one reorder, each node's own result") {
    std::mt19937 rng(46);
    auto f = [](float v) { return value::of<float>({}, {v}); };
    auto u = [](std::uint8_t v) { return value::of<std::uint8_t>({}, {v}); };
    auto conv = [&](std::string name, std::string first, std::vector<std::int64_t> wdims, float out_scale) {
        const value w = test::random_value<std::int8_t>(rng, wdims, -60, 60);
        return chain_node{"QLinearConv", std::move(name), std::move(first),
                          {f(0.05f), u(120), w, f(0.01f), value::of<std::int8_t>({}, {0}), f(out_scale), u(120)},
                          std::nullopt, "", {{"pads", attribute::ints{1, 1, 1, 1}}}};
    };
    const std::vector<chain_node> nodes{conv("c1", "x", {16, 16, 3, 3}, 0.05f),
                                        chain_node{"DequantizeLinear", "dq", "c1", {f(0.05f), u(120)}, std::nullopt, "", {}},
                                        chain_node{"Relu", "relu", "dq", {}, std::nullopt, "", {}},
                                        chain_node{"QuantizeLinear", "q", "relu", {f(0.05f), u(120)}, std::nullopt, "", {}},
                                        conv("c3", "q", {8, 16, 3, 3}, 0.1f)};
    sgmatch::graph g;
    std::map<std::string, node_id> made{{"x", g.add_input("x")}};
    for (const chain_node& c : nodes) {
        std::vector<input_ref> ins{input_ref(made.at(c.first))};
        for (std::size_t i = 0; i < c.rest.size(); ++i) ins.push_back(input_ref(test::constant_of(g, c.name + "." + std::to_string(i), c.rest[i])));
        const node_id n = g.add_op(c.op, c.name, ins);
        for (const auto& [key, v] : c.attrs) g.set_attr(n, key, v);
        made[c.name] = n;
    }
    g.mark_output(made.at("c3"));
    g.mark_output(made.at("relu"));  // an f32 output kept channels-last inside, returned dense
    const value x = test::random_value<std::uint8_t>(rng, {1, 16, 12, 10}, 0, 255);
    exec::run_stats st;
    const auto got = exec::executor(g, exec::mode::onednn).run({{"x", x}}, &st);
    CHECK(st.typed_reorders == 1);  // c1's x; c3 reads q's y in place
    std::map<std::string, value> alone{{"x", x}};
    for (const chain_node& c : nodes) {
        alone[c.name] = test::run_one(c.op, alone.at(c.first), c.rest, std::nullopt, c.attrs, exec::mode::onednn).first;
    }
    REQUIRE(got.size() == 2);
    CHECK(got[0].dense());
    CHECK(got[1].dense());
    CHECK(test::compare_ints(got[0], alone.at("c3")).differ == 0);
    CHECK(test::elements<float>(got[1]) == test::elements<float>(alone.at("relu")));
}

TEST_CASE("QuantizeLinear and DequantizeLinear on a channels-last value keep its layout and compute the dense result, per-axis ones read it dense") {
    std::mt19937 rng(47);
    const value u = test::random_value<std::uint8_t>(rng, {2, 4, 3, 5}, 0, 255);
    const exec::shape nhwc{60, 1, 20, 4};
    const value cl = u.in_layout(nhwc);
    auto one = [](const char* op, const value& x, std::vector<value> rest, attrs_list attrs = {}) {
        return test::run_one(op, x, rest, std::nullopt, attrs, exec::mode::onednn).first;
    };
    const value f = one("DequantizeLinear", u, {value::of<float>({}, {0.1f}), value::of<std::uint8_t>({}, {100})});
    const value f_cl = one("DequantizeLinear", cl, {value::of<float>({}, {0.1f}), value::of<std::uint8_t>({}, {100})});
    CHECK(test::elements<float>(f_cl) == test::elements<float>(f));  // returned dense, equal
    const value per_axis = one("DequantizeLinear", cl, {value::of<float>({4}, {0.1f, 0.2f, 0.3f, 0.4f}), value::of<std::uint8_t>({4}, {1, 2, 3, 4})},
                               {{"axis", std::int64_t{1}}});
    const value per_axis_dense = one("DequantizeLinear", u, {value::of<float>({4}, {0.1f, 0.2f, 0.3f, 0.4f}), value::of<std::uint8_t>({4}, {1, 2, 3, 4})},
                                     {{"axis", std::int64_t{1}}});
    CHECK(test::elements<float>(per_axis) == test::elements<float>(per_axis_dense));
    const value q = one("QuantizeLinear", f.in_layout(nhwc), {value::of<float>({}, {0.07f}), value::of<std::uint8_t>({}, {90})});
    const value q_dense = one("QuantizeLinear", f, {value::of<float>({}, {0.07f}), value::of<std::uint8_t>({}, {90})});
    CHECK(test::compare_ints(q, q_dense).differ == 0);
}
