// exec::node_call: a fused node or a region node run by itself, as a framework's executor runs
// it: positional inputs (views), outputs returned or written into the caller's buffers, the
// fused kernel's rejection handled inside (its ops unfused), bad calls refused by name. Runs in
// every preset.
#include <algorithm>
#include <any>
#include <cmath>
#include <map>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include <doctest/doctest.h>

#include "nnvm_adapter.hpp"
#include "sgmatch/exec/call.hpp"
#include "sgmatch/exec/graph_executor.hpp"
#include "sgmatch/exec/subgraph.hpp"
#include "sgmatch/onednn/property.hpp"
#include "sgmatch/pattern/combinators.hpp"
#include "support/numeric.hpp"
#include "support/tiny_graph.hpp"

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

namespace {

/// The model of the nnvm tests: conv, relu, conv, residual add, max pool, sigmoid; weights fed.
mini_nnvm::Symbol nnvm_model() {
    using mini_nnvm::Node;
    using mini_nnvm::NodeEntry;
    mini_nnvm::Symbol sym;
    const NodeEntry data{Node::Variable("data"), 0}, w1{Node::Variable("w1"), 0}, w2{Node::Variable("w2"), 0};
    auto c1 = Node::Create("Conv", "conv1", {data, w1}, {{"kernel_shape", "(3, 3)"}, {"pads", "(1, 1, 1, 1)"}});
    auto r1 = Node::Create("Relu", "relu1", {{c1, 0}});
    auto c2 = Node::Create("Conv", "conv2", {{r1, 0}, w2}, {{"kernel_shape", "(1, 1)"}});
    auto add = Node::Create("Add", "add", {{c2, 0}, {r1, 0}});
    auto pool = Node::Create("MaxPool", "pool", {{add, 0}}, {{"kernel_shape", "(2, 2)"}, {"strides", "(2, 2)"}});
    sym.outputs.push_back({Node::Create("Sigmoid", "out", {{pool, 0}}), 0});
    return sym;
}

}  // namespace

TEST_CASE("an nnvm-style graph with its weights fed as inputs: partitioned in place, its region run through node_call") {
    // examples/nnvm_adapter.hpp: shared_ptr nodes, string attributes, weights as plain variables
    // (fed at run time, as nnvm graphs take them). The same model as a built-in graph is the oracle.
    std::mt19937 rng(21);
    mini_nnvm::Symbol sym = nnvm_model();
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

TEST_CASE("graph_executor runs a whole nnvm-style graph: as it is on the reference kernels, and partitioned in place with its region node") {
    std::mt19937 rng(22);
    const std::map<std::string, xt::xarray<float>> feeds{{"data", test::random_array({2, 4, 6, 6}, rng, 1.0f)},
                                                         {"w1", test::random_array({4, 4, 3, 3}, rng, 0.3f)},
                                                         {"w2", test::random_array({4, 4, 1, 1}, rng, 0.5f)}};
    auto view_of = [&](const std::string& name) {
        const auto& a = feeds.at(name);
        return exec::value::view(a.data(), dtype::f32, exec::shape(a.shape().begin(), a.shape().end()));
    };
    // The oracle: one output element of the plain run computed by hand; the fused run against the
    // plain one.
    mini_nnvm::Symbol sym = nnvm_model();
    nnvm_view view(sym);
    const exec::graph_executor<nnvm_view> plain(view);  // reference kernels, the graph as it is
    CHECK(plain.input_names().size() == 3);
    CHECK(plain.output_names() == std::vector<std::string>{"out"});
    std::vector<exec::value> xs;
    for (const auto& name : plain.input_names()) xs.push_back(view_of(name));
    const auto want = plain.run(xs);
    REQUIRE(want.size() == 1);
    REQUIRE(want[0].dims() == exec::shape{2, 4, 3, 3});
    {
        // out[0, 1, 0, 0] by hand: sigmoid(max over the 2x2 window of conv2(relu(conv1)) + relu(conv1)).
        const auto& x = feeds.at("data");
        const auto& w1 = feeds.at("w1");
        const auto& w2 = feeds.at("w2");
        auto r1 = [&](std::size_t c, std::ptrdiff_t h, std::ptrdiff_t w) {
            double s = 0;
            for (std::size_t ci = 0; ci < 4; ++ci)
                for (std::ptrdiff_t kh = 0; kh < 3; ++kh)
                    for (std::ptrdiff_t kw = 0; kw < 3; ++kw) {
                        const std::ptrdiff_t ih = h + kh - 1, iw = w + kw - 1;
                        if (ih < 0 || iw < 0 || ih >= 6 || iw >= 6) continue;
                        s += static_cast<double>(x(0, ci, ih, iw)) * w1(c, ci, kh, kw);
                    }
            return std::max(0.0, s);
        };
        double m = -1e30;
        for (std::ptrdiff_t h = 0; h < 2; ++h)
            for (std::ptrdiff_t w = 0; w < 2; ++w) {
                double c2 = 0;
                for (std::size_t ci = 0; ci < 4; ++ci) c2 += r1(ci, h, w) * w2(1, ci, 0, 0);
                m = std::max(m, c2 + r1(1, h, w));
            }
        const double expect = 1.0 / (1.0 + std::exp(-m));
        CHECK(std::abs(static_cast<double>(want[0].as<float>()[1 * 9]) - expect) <= 1e-5);
    }

    // Partitioned in place: the region node runs through its payload, which the adapter gives.
    REQUIRE(apply_property(view, exec::make_region_property<nnvm_view>()).accepted == 1);
    const exec::graph_executor<nnvm_view> fused(view, exec::mode::onednn);
    CHECK(fused.plan().node_count() == 4);  // three inputs and the region node
    exec::run_stats st;
    xs.clear();
    for (const auto& name : fused.input_names()) xs.push_back(view_of(name));
    const auto got = fused.run(xs, &st);
    REQUIRE(got.size() == 1);
    CHECK(st.region_nodes == 1);
    CHECK(test::max_rel_error(array_of(got[0]), array_of(want[0])) <= 1e-5);
    // By name, in any order; the outputs by name.
    std::map<std::string, exec::value> named;
    for (const auto& [name, a] : feeds) named.emplace(name, view_of(name));
    const auto by_name = fused.run_by_name(named);
    REQUIRE(fused.output_names().size() == 1);  // named after its producer now: the region node
    REQUIRE(by_name.count(fused.output_names()[0]) == 1);
    CHECK(test::max_rel_error(array_of(by_name.at(fused.output_names()[0])), array_of(want[0])) <= 1e-5);

    // Bad calls are refused by name.
    CHECK_THROWS_WITH_AS(fused.run({view_of("data")}), doctest::Contains("the graph takes 3 inputs"), exec::exec_error);
    named.erase("w2");
    CHECK_THROWS_WITH_AS(fused.run_by_name(named), doctest::Contains("input 'w2' is not given"), exec::exec_error);
    named.emplace("w3", view_of("w2"));
    CHECK_THROWS_WITH_AS(fused.run_by_name(named), doctest::Contains("no input 'w3'"), exec::exec_error);
}

TEST_CASE("graph_executor refuses what it cannot run, by name, when it is built") {
    // A parameter whose data the adapter does not give (nnvm's parameters are variables).
    mini_nnvm::Symbol sym = nnvm_model();
    sym.outputs[0].node->inputs[0].node->inputs[0].node->inputs[0].node->inputs[1].node->dict["__param__"] = "1";
    nnvm_view view(sym);
    CHECK_THROWS_WITH_AS(exec::graph_executor<nnvm_view>{view}, doctest::Contains("constant 'w2' has no data"), exec::exec_error);
    // An op no kernel implements.
    mini_nnvm::Symbol odd;
    odd.outputs.push_back({mini_nnvm::Node::Create("Frobnicate", "frob", {{mini_nnvm::Node::Variable("x"), 0}}), 0});
    nnvm_view odd_view(odd);
    CHECK_THROWS_WITH_AS(exec::graph_executor<nnvm_view>{odd_view}, doctest::Contains("frob"), exec::exec_error);
}

TEST_CASE("graph_executor over an adapter without payload(g, n) says that a node a partition made needs it") {
    sgtest::tiny_graph g;  // no payload() in its traits
    const int x = g.input("x");
    g.outputs.push_back({g.op("sgmatch.matmul_bias_relu", "fused0", {{x, 0}}), 0});
    CHECK_THROWS_WITH_AS(exec::graph_executor<sgtest::tiny_graph>{g},
                         doctest::Contains("node 'fused0' (op 'sgmatch.matmul_bias_relu') is no op sgmatch knows, and "
                                           "graph_traits<G> defines no payload(g, n)"),
                         exec::exec_error);
    // The ops sgmatch knows run without it.
    sgtest::tiny_graph plain;
    const int y = plain.input("y");
    plain.outputs.push_back({plain.op("Relu", "r", {{y, 0}}), 0});
    const exec::graph_executor<sgtest::tiny_graph> run(plain);
    std::vector<float> v{-1.0f, 2.0f};
    const auto out = run.run({exec::value::view(v.data(), dtype::f32, {2})}).at(0).to_floats();
    CHECK(out == std::vector<float>{0.0f, 2.0f});
}

TEST_CASE("graph_executor names two outputs whose producers share a name apart") {
    mini_nnvm::Symbol two;
    const auto x = mini_nnvm::Node::Variable("x");
    two.outputs.push_back({mini_nnvm::Node::Create("Relu", "act", {{x, 0}}), 0});
    two.outputs.push_back({mini_nnvm::Node::Create("Sigmoid", "act", {{x, 0}}), 0});
    two.outputs.push_back(two.outputs[0]);  // one value listed twice keeps its name
    nnvm_view view(two);
    const exec::graph_executor<nnvm_view> run(view);
    CHECK(run.output_names() == std::vector<std::string>{"act", "act#1", "act"});
    const auto out = run.run_by_name({{"x", exec::value::of<float>({2}, {-1.0f, 1.0f})}});
    REQUIRE(out.size() == 2);
    CHECK(out.at("act").as<float>()[0] == 0.0f);  // Relu(-1)
    CHECK(std::abs(out.at("act#1").as<float>()[0] - 1.0f / (1.0f + std::exp(1.0f))) <= 1e-6f);  // Sigmoid(-1)
}
