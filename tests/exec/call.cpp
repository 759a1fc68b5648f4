// exec::node_call: a fused node or a region node run by itself, as a framework's executor runs
// it: positional inputs (views), outputs returned or written into the caller's buffers, the
// fused kernel's rejection handled inside (its ops unfused), bad calls refused by name. Runs in
// every preset.
#include <any>
#include <map>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include <doctest/doctest.h>

#include "nnvm_adapter.hpp"
#include "sgmatch/exec/call.hpp"
#include "sgmatch/exec/subgraph.hpp"
#include "sgmatch/onednn/property.hpp"
#include "sgmatch/pattern/combinators.hpp"
#include "support/numeric.hpp"

using namespace sgmatch;
using sgmatch::ops::Add;
using sgmatch::ops::MatMul;
using sgmatch::ops::Relu;

namespace {

/// The one node of g with a payload.
node_id payload_node(const graph& g) {
    for (node_id n : g.nodes())
        if (g.payload(n).has_value()) return n;
    FAIL("no node with a payload");
    return node_id{};
}

/// The node's inputs as a framework hands them: its graph inputs fed, constants viewed in place.
std::vector<exec::value> positional(const graph& g, node_id n, const std::map<std::string, xt::xarray<float>>& feeds) {
    std::vector<exec::value> xs;
    for (std::size_t i = 0; i < g.input_count(n); ++i) {
        const node_id p = g.input(n, i).node;
        if (g.kind(p) == node_kind::constant) {
            const auto c = g.constant(p);
            REQUIRE(c.has_value());
            xs.push_back(exec::value::view(c->data, c->type, exec::shape(c->dims, c->dims + c->rank)));
        } else {
            const auto& a = feeds.at(std::string(g.name(p)));
            xs.push_back(exec::value::view(a.data(), dtype::f32, exec::shape(a.shape().begin(), a.shape().end())));
        }
    }
    return xs;
}

xt::xarray<float> array_of(const exec::value& v) {
    xt::xarray<float> a = xt::zeros<float>(std::vector<std::size_t>(v.dims().begin(), v.dims().end()));
    std::copy(v.as<float>(), v.as<float>() + v.size(), a.begin());
    return a;
}

}  // namespace

TEST_CASE("node_call runs a fused node by itself: views in, outputs back or into the caller's buffer, rejections handled inside") {
    std::mt19937 rng(3);
    const std::int64_t K = 6, N = 5;
    graph g;
    auto x = g.add_input("x");
    auto mm = g.add_op("MatMul", "mm", {x, g.add_constant("W", {K, N}, test::random_values(K * N, rng, 0.4f))});
    auto bias = g.add_op("Add", "bias", {mm, g.add_constant("b", {N}, test::random_values(N, rng, 0.5f))});
    g.mark_output(g.add_op("Relu", "out", {bias}));
    graph fused = g;
    REQUIRE(apply_property(fused, onednn::make_fused_property<graph>("mm", op<MatMul>() >> op<Add>(constant()) >> op<Relu>()))
                .accepted == 1);
    const node_id fn = payload_node(fused);
    const exec::node_call call = exec::node_call::of(fused.payload(fn), std::string(fused.name(fn)));
    CHECK_FALSE(call.is_region());
    const exec::executor reference(g);

    // A 2-D input: the fused kernel; a 6-D one: more batch dims than a fused matmul takes, so the
    // call runs the three ops one primitive each, with the same result.
    for (const std::vector<std::int64_t>& xd : {std::vector<std::int64_t>{3, K}, std::vector<std::int64_t>{2, 1, 2, 1, 2, K}}) {
        CAPTURE(xd.size());
        const std::map<std::string, xt::xarray<float>> feeds{{"x", test::random_array(xd, rng, 1.0f)}};
        const auto want = reference(feeds).at(0);
        const auto xs = positional(fused, fn, feeds);
        exec::run_stats st;
        const auto ys = call(xs, &st);
        REQUIRE(ys.size() == 1);
        CHECK(ys[0].type() == dtype::f32);
        CHECK(test::max_rel_error(array_of(ys[0]), want) <= 1e-5);
        const bool fused_ran = xd.size() == 2;
        CHECK(st.fused_nodes == (fused_ran ? 1u : 0u));
        CHECK(st.fallbacks == (fused_ran ? 0u : 1u));
        // Into the framework's own buffer.
        std::vector<float> buffer(want.size(), -7.0f);
        std::vector<exec::value> outs{exec::value::output_view(buffer.data(), dtype::f32, ys[0].dims())};
        call.run_into(xs, outs);
        CHECK(test::max_rel_error(test::make_array(buffer, ys[0].dims()), want) <= 1e-5);
    }

    // Refused by name: a wrong element type, too few inputs, an output buffer of another shape.
    const std::vector<float> xf(3 * K, 1.0f);
    const std::vector<std::int64_t> xi(3 * K, 1);
    auto xs = positional(fused, fn, {{"x", test::make_array(xf, {3, K})}});
    xs[0] = exec::value::view(xi.data(), dtype::i64, {3, K});
    CHECK_THROWS_WITH_AS(call(xs), doctest::Contains("input 0 is int64; its kernel reads float"), exec::exec_error);
    CHECK_THROWS_WITH_AS(call({}), doctest::Contains("reads input 0; 0 were given"), exec::exec_error);
    std::vector<float> small(2);
    std::vector<exec::value> bad{exec::value::output_view(small.data(), dtype::f32, {2})};
    CHECK_THROWS_WITH_AS(call.run_into(positional(fused, fn, {{"x", test::make_array(xf, {3, K})}}), bad),
                         doctest::Contains("output 0 is float [3, 5]; the buffer given is float [2]"), exec::exec_error);
    CHECK_THROWS_WITH_AS(exec::node_call::of(std::any(42), "n7"), doctest::Contains("node 'n7' carries neither"),
                         exec::exec_error);
}

TEST_CASE("node_call runs a region node by itself") {
    std::mt19937 rng(8);
    graph g;
    auto x = g.add_input("x", tensor_type{dtype::f32, {1, 4, 6, 6}});
    auto c = g.add_op("Conv", "conv", {x, g.add_constant("w", {4, 4, 3, 3}, test::random_values(144, rng, 0.3f))},
                      {{"pads", attribute::ints{1, 1, 1, 1}}});
    auto r = g.add_op("Relu", "relu", {c});
    auto p = g.add_op("MaxPool", "pool", {r}, {{"kernel_shape", attribute::ints{2, 2}}, {"strides", attribute::ints{2, 2}}});
    g.mark_output(g.add_op("Sigmoid", "sig", {p}));
    graph regions = g;
    REQUIRE(apply_property(regions, exec::make_region_property<graph>()).accepted == 1);
    const node_id rn = payload_node(regions);
    const auto call = exec::node_call::of(regions.payload(rn));
    CHECK(call.is_region());
    const std::map<std::string, xt::xarray<float>> feeds{{"x", test::random_array({1, 4, 6, 6}, rng, 1.0f)}};
    exec::run_stats st;
    const auto ys = call(positional(regions, rn, feeds), &st);
    REQUIRE(ys.size() == 1);
    CHECK(test::max_rel_error(array_of(ys[0]), exec::executor(g)(feeds).at(0)) <= 1e-5);
    CHECK(st.region_nodes == 1);
    CHECK(st.fused_nodes == 1);  // conv + relu, fused inside the region
}

TEST_CASE("an nnvm-style graph with its weights fed as inputs: partitioned in place, its region run through node_call") {
    // examples/nnvm_adapter.hpp: shared_ptr nodes, string attributes, weights as plain variables
    // (fed at run time, as nnvm graphs take them). The same model as a built-in graph is the oracle.
    using mini_nnvm::Node;
    using mini_nnvm::NodeEntry;
    std::mt19937 rng(21);
    mini_nnvm::Symbol sym;
    const NodeEntry data{Node::Variable("data"), 0}, w1{Node::Variable("w1"), 0}, w2{Node::Variable("w2"), 0};
    auto c1 = Node::Create("Conv", "conv1", {data, w1}, {{"kernel_shape", "(3, 3)"}, {"pads", "(1, 1, 1, 1)"}});
    auto r1 = Node::Create("Relu", "relu1", {{c1, 0}});
    auto c2 = Node::Create("Conv", "conv2", {{r1, 0}, w2}, {{"kernel_shape", "(1, 1)"}});
    auto add = Node::Create("Add", "add", {{c2, 0}, {r1, 0}});
    auto pool = Node::Create("MaxPool", "pool", {{add, 0}}, {{"kernel_shape", "(2, 2)"}, {"strides", "(2, 2)"}});
    sym.outputs.push_back({Node::Create("Sigmoid", "out", {{pool, 0}}), 0});
    nnvm_view view(sym);
    REQUIRE(apply_property(view, exec::make_region_property<nnvm_view>()).accepted == 1);
    REQUIRE(view.order().size() == 4);  // data, w1, w2 and the region node
    const mini_nnvm::Node* region = sym.outputs[0].node.get();
    REQUIRE(region->payload.has_value());

    graph g;  // the same model, built-in, for the reference executor
    auto gx = g.add_input("data"), gw1 = g.add_input("w1"), gw2 = g.add_input("w2");
    auto gc1 = g.add_op("Conv", "conv1", {gx, gw1}, {{"kernel_shape", attribute::ints{3, 3}}, {"pads", attribute::ints{1, 1, 1, 1}}});
    auto gr1 = g.add_op("Relu", "relu1", {gc1});
    auto gc2 = g.add_op("Conv", "conv2", {gr1, gw2}, {{"kernel_shape", attribute::ints{1, 1}}});
    auto gp = g.add_op("MaxPool", "pool", {g.add_op("Add", "add", {gc2, gr1})},
                       {{"kernel_shape", attribute::ints{2, 2}}, {"strides", attribute::ints{2, 2}}});
    g.mark_output(g.add_op("Sigmoid", "out", {gp}));
    const std::map<std::string, xt::xarray<float>> feeds{{"data", test::random_array({2, 4, 6, 6}, rng, 1.0f)},
                                                         {"w1", test::random_array({4, 4, 3, 3}, rng, 0.3f)},
                                                         {"w2", test::random_array({4, 4, 1, 1}, rng, 0.5f)}};
    const auto want = exec::executor(g)(feeds).at(0);

    // The framework runs the region node with its inputs, in the node's order.
    const auto call = exec::node_call::of(region->payload, region->name);
    std::vector<exec::value> xs;
    for (const auto& in : region->inputs) {
        const auto& a = feeds.at(in.node->name);
        xs.push_back(exec::value::view(a.data(), dtype::f32, exec::shape(a.shape().begin(), a.shape().end())));
    }
    REQUIRE(xs.size() == 3);
    exec::run_stats st;
    const auto ys = call(xs, &st);
    REQUIRE(ys.size() == 1);
    CHECK(test::max_rel_error(array_of(ys[0]), want) <= 1e-5);
    CHECK(st.region_nodes == 1);
    CHECK(st.fused_nodes == 0);  // convs with computed weights are not fused: each runs on its own kernel
}
