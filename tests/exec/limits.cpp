// The executor's limits (exec/limits.hpp): the memory budget on every kernel path, checked
// before a node allocates (one value; the values live at once), and the bound on a Loop's
// iterations, shared by the bodies of control-flow nodes. Each refusal names the node; a run
// inside the limits computes what a run without them does. Runs in every preset.
#include <doctest/doctest.h>

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "sgmatch/exec/executor.hpp"
#include "sgmatch/exec/subgraph.hpp"
#include "sgmatch/onednn/backend.hpp"

using namespace sgmatch;
using exec::value;

namespace limits_tests {

value floats(std::vector<std::int64_t> dims, float fill) {
    std::int64_t n = 1;
    for (auto d : dims) n *= d;
    return value::of<float>(std::move(dims), std::vector<float>(static_cast<std::size_t>(n), fill));
}

// x [1, 4] -> Expand to [rows, 4] -> Relu: the Expand's output is rows * 16 bytes in f32.
graph expand_graph(std::int64_t rows) {
    graph g;
    const node_id x = g.add_input("x");
    const std::vector<std::int64_t> shape{rows, 4};
    const node_id s = g.add_constant("shape", {2}, dtype::i64,
                                     std::vector<unsigned char>(reinterpret_cast<const unsigned char*>(shape.data()),
                                                                reinterpret_cast<const unsigned char*>(shape.data() + 2)));
    const node_id e = g.add_op("Expand", "expand", {x, s});
    g.mark_output(g.add_op("Relu", "relu", {e}));
    return g;
}

exec::limits bytes(std::uint64_t one, std::uint64_t live) {
    exec::limits l;
    l.max_allocation = one;
    l.max_live = live;
    return l;
}

}  // namespace limits_tests

using namespace limits_tests;

TEST_CASE("limits: one value over max_allocation is refused before it is computed, in every mode") {
    for (const exec::mode m : {exec::mode::reference, exec::mode::onednn, exec::mode::onednn_plain}) {
        const graph g = expand_graph(1 << 20);  // 16 MiB
        exec::executor run(g, m);
        run.set_limits(bytes(std::uint64_t{8} << 20, std::uint64_t{1} << 30));
        CHECK_THROWS_WITH_AS(run.run({{"x", floats({1, 4}, 1.0f)}}),
                             doctest::Contains("node 'expand' (Expand) would compute 16777216 bytes, over the memory budget of 8388608"),
                             exec::exec_error);
        // Inside the budget: the same values as without one.
        run.set_limits(bytes(std::uint64_t{32} << 20, std::uint64_t{64} << 20));
        const auto out = run.run({{"x", floats({1, 4}, -2.0f)}});
        REQUIRE(out.at(0).dims() == exec::shape{1 << 20, 4});
        CHECK(out[0].as<float>()[12345] == 0.0f);
    }
}

TEST_CASE("limits: the values live at once are bounded, a value read for the last time is freed") {
    // a = Expand(x) 4 MiB; b = Relu(a) 4 MiB; c = Neg(b): a is freed once b is computed, so two
    // values at a time, 8 MiB, fit a budget of 9 MiB; a budget of 7 MiB refuses b.
    graph g;
    const node_id x = g.add_input("x");
    const std::vector<std::int64_t> shape{1 << 18, 4};
    const node_id s = g.add_constant("shape", {2}, dtype::i64,
                                     std::vector<unsigned char>(reinterpret_cast<const unsigned char*>(shape.data()),
                                                                reinterpret_cast<const unsigned char*>(shape.data() + 2)));
    const node_id a = g.add_op("Expand", "a", {x, s});
    const node_id b = g.add_op("Relu", "b", {a});
    g.mark_output(g.add_op("Neg", "c", {b}));
    exec::executor run(g);
    run.set_limits(bytes(std::uint64_t{8} << 20, std::uint64_t{9} << 20));
    const auto out = run.run({{"x", floats({1, 4}, 3.0f)}});
    CHECK(out.at(0).as<float>()[7] == -3.0f);
    run.set_limits(bytes(std::uint64_t{8} << 20, std::uint64_t{7} << 20));
    CHECK_THROWS_WITH_AS(run.run({{"x", floats({1, 4}, 3.0f)}}),
                         doctest::Contains("node 'b' (Relu) would compute 4194304 bytes while the run holds 4194304"), exec::exec_error);
}

TEST_CASE("limits: a fused node's output is bounded by its ops' shape rules") {
    // Conv (1x1, 4 -> 4 channels) + Relu on [1, 4, 512, 512]: a fused node of 4 MiB output.
    graph g;
    const node_id x = g.add_input("x");
    const std::vector<float> w(16, 0.25f);
    const node_id wc = g.add_constant("w", {4, 4, 1, 1}, w);
    const node_id conv = g.add_op("Conv", "conv", {x, wc});
    g.mark_output(g.add_op("Relu", "relu", {conv}));
    onednn::register_backend<graph>();
    (void)apply_backend(g, "onednn");
    REQUIRE(g.node_count() < 5);  // fused
    exec::executor run(g, exec::mode::onednn);
    run.set_limits(bytes(std::uint64_t{2} << 20, std::uint64_t{1} << 30));
    CHECK_THROWS_WITH_AS(run.run({{"x", floats({1, 4, 512, 512}, 1.0f)}}), doctest::Contains("would compute 4194304 bytes"),
                         exec::exec_error);
    run.set_limits(bytes(std::uint64_t{8} << 20, std::uint64_t{1} << 30));
    CHECK(run.run({{"x", floats({1, 4, 512, 512}, 1.0f)}}).at(0).as<float>()[99] == doctest::Approx(1.0f));
}

TEST_CASE("limits: a Loop past max_loop_iterations is refused, and its body shares the bound") {
    // Loop(M absent = unbounded, cond true) whose body passes its condition through: it never
    // ends by itself. An inner Loop in the body is bounded by the same setting.
    auto loop_of = [](graph body, const std::string& name, graph& g, node_id m, node_id c, node_id v) {
        const node_id l = g.add_op("Loop", name, {m, c, v});
        g.set_attr(l, "body", attribute(graph_body{std::make_shared<const graph>(std::move(body)), 3}));
        return l;
    };
    graph body;
    const node_id i = body.add_input("i"), c = body.add_input("c"), v = body.add_input("v");
    (void)i;
    body.mark_output(body.add_op("Identity", "keep", {c}));
    body.mark_output(body.add_op("Neg", "flip", {v}));
    graph g;
    const node_id m = g.add_input("M"), cond = g.add_input("cond"), v0 = g.add_input("v0");
    g.mark_output(loop_of(body, "forever", g, m, cond, v0));
    exec::executor run(g);
    exec::limits l;
    l.max_loop_iterations = 1000;
    run.set_limits(l);
    const std::map<std::string, value> in{{"M", value::of<std::int64_t>({}, {INT64_MAX})}, {"cond", value::of<bool>({}, {true})},
                                          {"v0", floats({2}, 1.0f)}};
    CHECK_THROWS_WITH_AS(run.run(in), doctest::Contains("node 'forever' (Loop): ran 1000 iterations"), exec::exec_error);
    // A bounded trip count under the bound runs: 7 sign flips.
    auto bounded = in;
    bounded["M"] = value::of<std::int64_t>({}, {7});
    CHECK(run.run(bounded).at(0).as<float>()[0] == -1.0f);
    // The bound reaches a Loop inside a body.
    graph outer_body;
    const node_id oi = outer_body.add_input("i"), oc = outer_body.add_input("c"), ov = outer_body.add_input("v");
    (void)oi;
    const std::vector<std::int64_t> huge{INT64_MAX};
    const node_id trips = outer_body.add_constant("trips", {}, dtype::i64,
                                                  std::vector<unsigned char>(reinterpret_cast<const unsigned char*>(huge.data()),
                                                                             reinterpret_cast<const unsigned char*>(huge.data() + 1)));
    const node_id inner = loop_of(body, "inner", outer_body, trips, oc, ov);
    outer_body.mark_output(outer_body.add_op("Identity", "keep_outer", {oc}));
    outer_body.mark_output(inner);
    graph g2;
    const node_id m2 = g2.add_input("M"), c2 = g2.add_input("cond"), w2 = g2.add_input("v0");
    g2.mark_output(loop_of(outer_body, "outer", g2, m2, c2, w2));
    exec::executor run2(g2);
    run2.set_limits(l);
    CHECK_THROWS_WITH_AS(run2.run(bounded), doctest::Contains("node 'inner' (Loop): ran 1000 iterations"), exec::exec_error);
    // With no bound set (ONNX's meaning), the trip count decides.
    exec::executor free_run(g);
    CHECK(free_run.run(bounded).at(0).as<float>()[1] == -1.0f);
}

TEST_CASE("limits: a condition that is not bool is refused, naming the node") {
    graph body;
    const node_id i = body.add_input("i"), c = body.add_input("c"), v = body.add_input("v");
    (void)i;
    const node_id f = body.add_op("Cast", "as_float", {c});
    body.set_attr(f, "to", attribute(std::int64_t{1}));
    body.mark_output(f);
    body.mark_output(body.add_op("Neg", "flip", {v}));
    graph g;
    const node_id l = g.add_op("Loop", "loop", {g.add_input("M"), g.add_input("cond"), g.add_input("v0")});
    g.set_attr(l, "body", attribute(graph_body{std::make_shared<const graph>(std::move(body)), 3}));
    g.mark_output(l);
    exec::executor run(g);
    CHECK_THROWS_WITH_AS(run.run({{"M", value::of<std::int64_t>({}, {3})}, {"cond", value::of<bool>({}, {true})}, {"v0", floats({1}, 1.0f)}}),
                         doctest::Contains("node 'loop' (Loop): the body's condition is float"), exec::exec_error);
}

TEST_CASE("limits: a region node's ops run under the limits of the executor that runs the region") {
    // x [2^18, 4] -> Relu -> Neg, one region node: its executor was made by the backend with
    // default limits; the outer executor's budget of 2 MiB for one value refuses the region's
    // Relu (4 MiB), naming it.
    graph g;
    const node_id x = g.add_input("x");
    g.mark_output(g.add_op("Neg", "neg", {g.add_op("Relu", "relu", {x})}));
    exec::register_region_backend();
    REQUIRE(apply_backend(g, "onednn.regions").at(0).accepted == 1);
    exec::executor run(g, exec::mode::onednn);
    run.set_limits(bytes(std::uint64_t{8} << 20, std::uint64_t{1} << 30));
    CHECK(run.run({{"x", floats({1 << 18, 4}, -1.0f)}}).at(0).as<float>()[5] == -0.0f);
    run.set_limits(bytes(std::uint64_t{2} << 20, std::uint64_t{1} << 30));
    CHECK_THROWS_WITH_AS(run.run({{"x", floats({1 << 18, 4}, -1.0f)}}),
                         doctest::Contains("node 'relu' (Relu) would compute 4194304 bytes"), exec::exec_error);
}
