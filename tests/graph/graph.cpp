// The built-in graph: building, reading, the write side and its strong guarantee.
#include <doctest/doctest.h>

#include <algorithm>
#include <any>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "sgmatch/graph/graph.hpp"
#include "support/graph_check.hpp"

using namespace sgmatch;

using sgmatch_test::fingerprint;

TEST_CASE("building a graph records inputs, users, names, attributes and types") {
    graph g;
    auto x = g.add_input("x", tensor_type{dtype::f32, {1, 3, 8, 8}});
    auto w = g.add_constant("w", {4, 3, 3, 3});
    auto c = g.add_op("Conv", "conv", {x, w}, {{"group", 1}, {"strides", attribute::ints{2, 2}}, {"auto_pad", "NOTSET"}});
    auto r = g.add_op("Relu", "relu", {c});
    g.mark_output(r);

    CHECK(g.node_count() == 4);
    CHECK(g.name(c) == "conv");
    CHECK(g.kind(x) == node_kind::input);
    CHECK(g.kind(w) == node_kind::constant);
    CHECK(g.op_name(c) == "Conv");
    REQUIRE(g.find_op("Relu").has_value());
    CHECK(*g.find_op("Relu") == g.op(r));
    CHECK_FALSE(g.find_op("Sigmoid").has_value());
    CHECK(g.input_count(c) == 2);
    CHECK(g.input(c, 1).node == w);
    REQUIRE(g.user_count(x) == 1);
    CHECK(g.user(x, 0).user == c);
    CHECK(g.user(w, 0).slot == 1);
    CHECK(g.attr(c, "group")->as_int() == 1);
    CHECK(*g.attr(c, "strides")->as_ints() == attribute::ints{2, 2});
    CHECK(g.attr(c, "auto_pad")->as_string() == std::string_view("NOTSET"));
    CHECK_FALSE(g.attr(c, "dilations").has_value());
    CHECK_FALSE(g.attr(r, "group").has_value());
    CHECK(g.value_type(x, 0)->dims == std::vector<std::int64_t>{1, 3, 8, 8});
    CHECK_FALSE(g.value_type(c, 0).has_value());
    CHECK(g.is_graph_output(r, 0));
    CHECK_FALSE(g.is_graph_output(c, 0));
    const auto order = g.nodes();
    CHECK(order == std::vector<node_id>{x, w, c, r});
}

TEST_CASE("constants carry shape and optional data") {
    graph g;
    auto s = g.add_scalar("half", 0.5f);
    auto v = g.add_constant("v", {2}, {1.0f, 2.0f});
    auto shape_only = g.add_constant("big", {1000, 1000});
    CHECK(g.constant(s)->scalar() == doctest::Approx(0.5));
    CHECK_FALSE(g.constant(v)->scalar().has_value());
    CHECK(g.constant(v)->element_count() == 2);
    CHECK(g.constant(shape_only)->data == nullptr);
    CHECK_THROWS_AS(g.add_constant("bad", {3}, {1.0f}), graph_error);
}

TEST_CASE("a constant whose bytes another object holds is read in place, shared by copies, released with the last") {
    auto held = std::make_shared<std::vector<std::int64_t>>(std::vector<std::int64_t>{4, -5, 6});
    std::weak_ptr<std::vector<std::int64_t>> watch = held;
    const void* at = held->data();
    {
        graph g;
        const node_id k = g.add_constant("k", {3}, dtype::i64, held, at, 3 * sizeof(std::int64_t));
        held.reset();
        REQUIRE_FALSE(watch.expired());  // the graph keeps the owner
        CHECK(g.constant(k)->data == at);  // no copy
        CHECK(g.constant(k)->type == dtype::i64);
        CHECK(*g.constant(k)->to_ints() == std::vector<std::int64_t>{4, -5, 6});
        const graph copy = g;
        CHECK(copy.constant(k)->data == at);
        // Sizes that disagree with the dims, a missing owner, misaligned data: refused.
        auto owner = std::make_shared<std::vector<std::int64_t>>(4, 0);
        CHECK_THROWS_AS(g.add_constant("few", {3}, dtype::i64, owner, owner->data(), 2 * sizeof(std::int64_t)), graph_error);
        CHECK_THROWS_AS(g.add_constant("orphan", {3}, dtype::i64, nullptr, owner->data(), 3 * sizeof(std::int64_t)), graph_error);
        CHECK_THROWS_WITH_AS(g.add_constant("skewed", {3}, dtype::i64, owner,
                                            reinterpret_cast<const unsigned char*>(owner->data()) + 4, 3 * sizeof(std::int64_t)),
                             doctest::Contains("not aligned"), graph_error);
    }
    CHECK(watch.expired());  // released with the last graph holding it
}

TEST_CASE("bad inputs raise graph_error naming the node") {
    graph g;
    auto x = g.add_input("x");
    CHECK_THROWS_WITH_AS(g.add_op("Relu", "r", {node_id{7}}), doctest::Contains("node 'r' input 0 refers to missing node 7"),
                         graph_error);
    CHECK_THROWS_WITH_AS(g.add_op("Relu", "r", {input_ref(x, 1)}),
                         doctest::Contains("node 'r' input 0 reads output 1 of 'x', which has 1 output(s)"), graph_error);
    CHECK(g.node_count() == 1);  // nothing was added
}

TEST_CASE("replace fuses a chain, redirects users and graph outputs, and keeps a topological order") {
    graph g;
    auto x = g.add_input("x");
    auto c = g.add_op("Conv", "conv", {x});
    auto b = g.add_op("BatchNormalization", "bn", {c});
    auto r = g.add_op("Relu", "relu", {b});
    auto side = g.add_op("Sigmoid", "side", {x});  // created before the fused node exists
    auto m = g.add_op("Mul", "mul", {r, side});
    g.mark_output(m);
    g.mark_output(r);

    replacement<node_id> rep;
    rep.nodes = {c, b, r};
    rep.inputs = {{x, 0}};
    rep.outputs = {{r, 0}};
    rep.name = "fused";
    rep.op_name = "ConvBnRelu";
    rep.payload = std::string("kernel-42");
    auto f = g.replace(rep);

    CHECK(g.node_count() == 4);
    CHECK_FALSE(g.contains(c));
    CHECK(g.op_name(f) == "ConvBnRelu");
    CHECK(std::any_cast<std::string>(g.payload(f)) == "kernel-42");
    CHECK(g.input(m, 0).node == f);
    CHECK(g.input(f, 0).node == x);
    REQUIRE(g.user_count(x) == 2);
    CHECK(g.graph_output(1).node == f);
    CHECK(g.is_graph_output(f, 0));
    // The order is recomputed: f comes before mul although its id is larger.
    const auto& order = g.nodes();
    auto pos = [&](node_id n) { return std::find(order.begin(), order.end(), n) - order.begin(); };
    CHECK(order.size() == 4);
    CHECK(pos(x) < pos(f));
    CHECK(pos(f) < pos(m));
    CHECK(pos(side) < pos(m));
}

TEST_CASE("a replace whose node reads other values than its members did: the members' producers lose those uses") {
    // The QDQ rewrite reads a DequantizeLinear's input instead of its output, and leaves the
    // DequantizeLinear for its other users.
    graph g;
    auto x = g.add_input("x");
    auto d = g.add_op("DequantizeLinear", "dq", {x});
    auto c0 = g.add_op("Conv", "c0", {d});
    auto c1 = g.add_op("Conv", "c1", {d});
    g.mark_output(c0);
    g.mark_output(c1);
    replacement<node_id> rep;
    rep.nodes = {c0};
    rep.inputs = {{x, 0}};
    rep.outputs = {{c0, 0}};
    rep.name = "q0";
    rep.op_name = "QLinearConv";
    const node_id q0 = g.replace(rep);
    REQUIRE(g.user_count(d) == 1);
    CHECK(g.users(d)[0].user == c1);
    CHECK(g.user_count(x) == 2);  // d and q0
    rep.nodes = {c1};
    rep.outputs = {{c1, 0}};
    rep.name = "q1";
    const node_id q1 = g.replace(rep);
    CHECK(g.user_count(d) == 0);
    g.erase(d);  // nothing reads it now
    CHECK(g.user_count(x) == 2);
    CHECK(g.input(q0, 0).node == x);
    CHECK(g.input(q1, 0).node == x);
}

TEST_CASE("a replace's inputs take its members' input storage only when that is one free block") {
    // Each case: the fused node reads exactly what it declared, in order, and every other node
    // still reads what it read before (the graph reuses the members' input runs when they tile
    // one block large enough, and appends otherwise: seen here in where the new run sits).
    auto inputs_of = [](const graph& g, node_id n) {
        std::vector<graph::value> v;
        for (auto& i : g.inputs(n)) v.push_back(i);
        return v;
    };
    graph g;
    auto x = g.add_input("x");
    auto w = g.add_constant("w", {1});
    auto s = g.add_constant("s", {1});
    auto c = g.add_op("Conv", "conv", {x, w});              // runs of 2 and 2, adjacent
    auto b = g.add_op("BatchNormalization", "bn", {c, s});
    auto a = g.add_op("Add", "a", {b, x});                  // 2, then 1 adjacent
    auto between = g.add_op("Sigmoid", "between", {x});
    auto m = g.add_op("Mul", "m", {a, w});                  // 2, then 1 adjacent
    auto tail = g.add_op("Relu", "tail", {m});
    g.mark_output(tail);
    g.mark_output(between);

    auto fuse = [&](std::vector<node_id> nodes, std::vector<graph::value> ins, std::vector<graph::value> outs,
                    const char* name) {
        std::vector<std::vector<graph::value>> expect;  // every other node's inputs, users redirected
        for (auto n : g.nodes())
            if (std::find(nodes.begin(), nodes.end(), n) == nodes.end()) expect.push_back(inputs_of(g, n));
        replacement<node_id> r;
        r.nodes = nodes;
        r.inputs = ins;
        r.outputs = outs;
        r.name = name;
        r.op_name = "Fused";
        const node_id f = g.replace(r);
        for (auto& v : expect)
            for (auto& i : v)
                for (std::size_t k = 0; k < outs.size(); ++k)
                    if (i == outs[k]) i = {f, static_cast<std::uint32_t>(k)};
        std::vector<std::vector<graph::value>> after;
        for (auto n : g.nodes())
            if (n != f) after.push_back(inputs_of(g, n));
        CHECK(inputs_of(g, f) == ins);
        CHECK(after == expect);
        CHECK(sgmatch_test::graph_problem(g) == "");
        return f;
    };
    // Where a node's inputs sit, relative to a node the replace leaves alone (a reserve may
    // move the whole array, never the distance between two runs).
    auto at = [&](node_id n, node_id anchor) { return g.inputs(n).begin() - g.inputs(anchor).begin(); };
    // conv + bn: one block of 4 for 3 inputs: reused.
    const auto conv_run = at(c, between);
    const node_id f1 = fuse({c, b}, {{x, 0}, {w, 0}, {s, 0}}, {{b, 0}}, "f1");
    CHECK(at(f1, between) == conv_run);
    // m + tail: one block of 3, but 4 inputs declared: appended.
    const auto m_run = at(m, between);
    const node_id f2 = fuse({m, tail}, {{a, 0}, {w, 0}, {s, 0}, {x, 0}}, {{tail, 0}}, "f2");
    CHECK(at(f2, between) > m_run);
    CHECK(g.graph_output(0).node == f2);
    // a + between: one block of 3 for 2 inputs, two outputs: reused.
    const auto a_run = at(a, f1);
    const node_id f3 = fuse({a, between}, {{f1, 0}, {x, 0}}, {{a, 0}, {between, 0}}, "f3");
    CHECK(at(f3, f1) == a_run);
    CHECK(g.input(f2, 0) == graph::value{f3, 0});
    CHECK(g.graph_output(1) == graph::value{f3, 1});
    // f1 + f3: f1 kept 3 of its block's 4 entries and f3 starts right after the 4: not one block.
    const node_id f4 = fuse({f1, f3}, {{x, 0}, {w, 0}, {s, 0}}, {{f3, 0}, {f3, 1}}, "f4");
    CHECK(at(f4, f2) > 0);  // after f2's run: appended
    CHECK(g.node_count() == 5);  // x, w, s, f2, f4
}

TEST_CASE("a replace that throws leaves nothing behind that changes a later replace") {
    // The write marks the nodes it replaces while it checks them; a throw must clear the marks,
    // or a later replace would take a node of the failed set for one of its own members.
    graph g;
    auto x = g.add_input("x");
    auto a = g.add_op("Relu", "a", {x});
    auto b = g.add_op("Relu", "b", {a});
    auto c = g.add_op("Relu", "c", {b});
    auto side = g.add_op("Relu", "side", {b});  // b escapes a fusion of {b, c}
    g.mark_output(c);
    g.mark_output(side);
    replacement<node_id> bad;
    bad.nodes = {b, c};
    bad.inputs = {{a, 0}};
    bad.outputs = {{c, 0}};
    bad.name = "bad";
    CHECK_THROWS_WITH_AS(g.replace(bad), doctest::Contains("'side' uses output 0 of 'b'"), graph_error);
    bad.nodes = {a, b, b};  // a repeat, found after the first members are looked at
    CHECK_THROWS_AS(g.replace(bad), graph_error);

    // {c} alone reads b: b must not count as a member (input produced inside), and {a} alone
    // has the user b outside (which must be redirected, not skipped as a member).
    replacement<node_id> ok;
    ok.nodes = {c};
    ok.inputs = {{b, 0}};
    ok.outputs = {{c, 0}};
    ok.name = "fc";
    auto fc = g.replace(ok);
    CHECK(g.input(fc, 0).node == b);
    ok.nodes = {a};
    ok.inputs = {{x, 0}};
    ok.outputs = {{a, 0}};
    ok.name = "fa";
    auto fa = g.replace(ok);
    CHECK(g.input(b, 0).node == fa);
    CHECK(g.user_count(fa) == 1);
    CHECK(sgmatch_test::graph_problem(g).empty());
}

TEST_CASE("replace that would dangle or is malformed throws and leaves the graph unchanged") {
    graph g;
    auto x = g.add_input("x");
    auto c = g.add_op("Conv", "conv", {x});
    auto b = g.add_op("BatchNormalization", "bn", {c});
    auto pool = g.add_op("MaxPool", "pool", {c});  // conv's output escapes
    g.mark_output(b);
    g.mark_output(pool);
    const std::string before = fingerprint(g);

    replacement<node_id> rep;
    rep.nodes = {c, b};
    rep.inputs = {{x, 0}};
    rep.outputs = {{b, 0}};
    rep.name = "f";
    CHECK_THROWS_WITH_AS(g.replace(rep), doctest::Contains("'pool' uses output 0 of 'conv'"), graph_error);
    CHECK(fingerprint(g) == before);

    rep.outputs = {{c, 0}};  // bn is a graph output but not declared
    CHECK_THROWS_WITH_AS(g.replace(rep), doctest::Contains("graph output 'bn'"), graph_error);
    CHECK(fingerprint(g) == before);

    rep.outputs = {{b, 0}, {c, 0}};
    rep.inputs = {{c, 0}};  // an input produced inside
    CHECK_THROWS_AS(g.replace(rep), graph_error);
    rep.inputs = {{x, 0}};
    rep.nodes = {c, c};
    CHECK_THROWS_AS(g.replace(rep), graph_error);
    CHECK(fingerprint(g) == before);

    // Declaring the escaping value as an extra output makes the write legal (MXNet semantics).
    rep.nodes = {c, b};
    auto f = g.replace(rep);
    CHECK(g.output_count(f) == 2);
    CHECK(g.input(pool, 0).node == f);
    CHECK(g.input(pool, 0).port == 1);
    CHECK(g.graph_output(0).node == f);
    CHECK(g.graph_output(0).port == 0);
}
