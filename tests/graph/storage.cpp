// The built-in graph's storage under writes: where a replace puts the new node in the order,
// use lists that move and are compacted, copies, and long random runs of rewrites.
#include <doctest/doctest.h>

#include <algorithm>
#include <random>
#include <string>
#include <vector>

#include "sgmatch/graph/builders.hpp"
#include "sgmatch/graph/graph.hpp"
#include "support/graph_check.hpp"

using namespace sgmatch;
using sgmatch_test::graph_problem;

// The built-in graph opts into both optional traits (op_index relies on them for its speed).
static_assert(detail::checked_by_construction_v<graph> && detail::has_op_codes_v<graph>,
              "graph_traits<graph> declares checked_by_construction and op_codes");

namespace {

long position(const graph& g, node_id n) {
    const auto& o = g.nodes();
    const auto it = std::find(o.begin(), o.end(), n);
    return it == o.end() ? -1 : static_cast<long>(it - o.begin());
}

replacement<node_id> fuse(std::vector<node_id> nodes, std::vector<value_ref<node_id>> inputs,
                          std::vector<value_ref<node_id>> outputs) {
    replacement<node_id> r;
    r.nodes = std::move(nodes);
    r.inputs = std::move(inputs);
    r.outputs = std::move(outputs);
    r.name = "f";
    return r;
}

// Is `set` convex in g (no path leaves it and comes back)? Brute force: from every outside
// user of a member, walk forward; reaching a member is a cycle after contraction.
bool convex(const graph& g, const std::vector<node_id>& set) {
    auto in = [&](node_id n) { return std::find(set.begin(), set.end(), n) != set.end(); };
    std::vector<char> seen(g.index_bound(), 0);
    std::vector<node_id> stack;
    for (auto m : set)
        for (auto& u : g.users(m))
            if (!in(u.user)) stack.push_back(u.user);
    while (!stack.empty()) {
        const node_id n = stack.back();
        stack.pop_back();
        if (in(n)) return false;
        if (seen[n.value]) continue;
        seen[n.value] = 1;
        for (auto& u : g.users(n)) stack.push_back(u.user);
    }
    return true;
}

// The nodes on paths from a to one of its descendants b at most 40 nodes away (drawn at random).
template <class Rng>
std::vector<node_id> interval(const graph& g, node_id a, Rng& rng) {
    std::vector<node_id> down{a};
    std::vector<char> in_down(g.index_bound(), 0);
    in_down[a.value] = 1;
    for (std::size_t i = 0; i < down.size() && down.size() < 40; ++i)
        for (auto& u : g.users(down[i]))
            if (!in_down[u.user.value] && down.size() < 40) {
                in_down[u.user.value] = 1;
                down.push_back(u.user);
            }
    const node_id b = down[rng() % down.size()];
    std::vector<node_id> set{b};
    std::vector<char> in_set(g.index_bound(), 0);
    in_set[b.value] = 1;
    for (std::size_t i = 0; i < set.size(); ++i)
        for (auto& v : g.inputs(set[i]))
            if (in_down[v.node.value] && !in_set[v.node.value]) {
                in_set[v.node.value] = 1;
                set.push_back(v.node);
            }
    return set;  // a is in it: every node of `down` descends from a, so b does
}

// The boundary of `set`: outside values it reads (each once) and its values read outside or
// marked as graph outputs.
replacement<node_id> boundary(const graph& g, const std::vector<node_id>& set) {
    auto in = [&](node_id n) { return std::find(set.begin(), set.end(), n) != set.end(); };
    std::vector<value_ref<node_id>> ins, outs;
    for (auto m : set) {
        for (auto& v : g.inputs(m))
            if (!in(v.node) && std::find(ins.begin(), ins.end(), v) == ins.end()) ins.push_back(v);
        for (std::uint32_t p = 0; p < g.output_count(m); ++p) {
            bool out = g.is_graph_output(m, p);
            for (auto& u : g.users(m)) out = out || (u.port == p && !in(u.user));
            if (out) outs.push_back({m, p});
        }
    }
    return fuse(set, ins, outs);
}

}  // namespace

TEST_CASE("replace puts the new node in its last member's place when every outside user comes later") {
    graph g;
    auto x = g.add_input("x");
    auto a = g.add_op("A", "a", {x});
    auto b = g.add_op("B", "b", {a});
    auto y = g.add_op("Y", "y", {x});  // between the members, unrelated
    auto c = g.add_op("C", "c", {b, y});
    auto d = g.add_op("D", "d", {c});
    g.mark_output(d);
    const auto f = g.replace(fuse({a, b, c}, {{x, 0}, {y, 0}}, {{c, 0}}));
    CHECK(graph_problem(g) == "");
    CHECK(g.nodes() == std::vector<node_id>{x, y, f, d});  // c's place; a's and b's dropped
    // A node added afterwards goes to the end; the order stays exact.
    auto e = g.add_op("E", "e", {f});
    CHECK(position(g, e) == 4);
    CHECK(graph_problem(g) == "");
}

TEST_CASE("replace puts the new node in its first member's place when an outside user comes between") {
    graph g;
    auto x = g.add_input("x");
    auto conv = g.add_op("Conv", "conv", {x});
    auto bn = g.add_op("BatchNormalization", "bn", {conv});
    auto side = g.add_op("Sigmoid", "side", {conv});  // reads an escaping intermediate
    auto relu = g.add_op("Relu", "relu", {bn});
    auto mul = g.add_op("Mul", "mul", {relu, side});
    g.mark_output(mul);
    const auto f = g.replace(fuse({conv, bn, relu}, {{x, 0}}, {{relu, 0}, {conv, 0}}));
    CHECK(graph_problem(g) == "");
    CHECK(g.nodes() == std::vector<node_id>{x, f, side, mul});
    CHECK(g.input(side, 0).node == f);
    CHECK(g.input(side, 0).port == 1);
}

TEST_CASE("replace recomputes the order when neither member's place will do") {
    graph g;
    auto x = g.add_input("x");
    auto a = g.add_op("A", "a", {x});
    auto side = g.add_op("S", "side", {a});   // after a, reads it
    auto late = g.add_op("L", "late", {x});   // after side, read by b
    auto b = g.add_op("B", "b", {a, late});
    g.mark_output(b);
    g.mark_output(side);
    REQUIRE(convex(g, {a, b}));
    const auto f = g.replace(fuse({a, b}, {{x, 0}, {late, 0}}, {{b, 0}, {a, 0}}));
    CHECK(graph_problem(g) == "");
    CHECK(position(g, late) < position(g, f));
    CHECK(position(g, f) < position(g, side));
    // Later replaces work from the recomputed order.
    const auto f2 = g.replace(fuse({side}, {{f, 1}}, {{side, 0}}));
    CHECK(graph_problem(g) == "");
    CHECK(position(g, f) < position(g, f2));
}

TEST_CASE("a node with many users keeps them through rewrites of its users") {
    graph g;
    auto x = g.add_input("x");
    auto hub = g.add_op("Hub", "hub", {x});
    std::vector<node_id> leaves;
    for (int i = 0; i < 600; ++i) {
        auto a = g.add_op("A", "a" + std::to_string(i), {hub, x});
        leaves.push_back(g.add_op("B", "b" + std::to_string(i), {a, hub}));
        g.mark_output(leaves.back());
    }
    CHECK(g.user_count(hub) == 1200);
    CHECK(graph_problem(g) == "");
    // Fuse each a/b pair: hub loses two uses and gains two, x loses one and gains one.
    for (int i = 0; i < 600; ++i) {
        const node_id b = leaves[static_cast<std::size_t>(i)];
        const node_id a = g.input(b, 0).node;
        leaves[static_cast<std::size_t>(i)] = g.replace(fuse({a, b}, {{hub, 0}, {x, 0}}, {{b, 0}}));
        if (i % 97 == 0) REQUIRE(graph_problem(g) == "");
    }
    CHECK(graph_problem(g) == "");
    CHECK(g.user_count(hub) == 600);
    CHECK(g.user_count(x) == 601);
    // Then fuse pairs of fused nodes: hub's list shrinks, the uses are rewritten in place.
    for (int i = 0; i + 1 < 600; i += 2) {
        const node_id p = leaves[static_cast<std::size_t>(i)], q = leaves[static_cast<std::size_t>(i) + 1];
        g.replace(fuse({p, q}, {{hub, 0}, {x, 0}}, {{p, 0}, {q, 0}}));
    }
    CHECK(graph_problem(g) == "");
    CHECK(g.user_count(hub) == 300);
}

TEST_CASE("long random runs of rewrites keep the graph consistent, and copies are independent") {
    const std::size_t nodes = 3000;
    for (std::uint64_t seed : {1u, 2u, 3u}) {
        CAPTURE(seed);
        graph g = build::random_dag(nodes, seed);
        std::mt19937_64 rng(seed * 7919);
        std::size_t done = 0, big = 0;
        graph snapshot;
        std::string snapshot_print;
        for (int attempt = 0; attempt < 6000 && g.node_count() > 50; ++attempt) {
            // A random op node, grown by up to three random neighbours (users or producers).
            const auto& order = g.nodes();
            const node_id seed_node = order[std::uniform_int_distribution<std::size_t>(0, order.size() - 1)(rng)];
            if (g.kind(seed_node) != node_kind::op) continue;
            std::vector<node_id> set{seed_node};
            // One time in four, every node on a path from the seed to one of its descendants
            // (convex by construction, often with more than 8 members, inputs or outputs: the
            // paths a replace takes for large sets); otherwise a seed and up to 3 neighbours.
            if (rng() % 4 == 0) set = interval(g, seed_node, rng);
            const int grow = set.size() > 1 ? 0 : static_cast<int>(rng() % 4);
            for (int k = 0; k < grow; ++k) {
                const node_id from = set[rng() % set.size()];
                std::vector<node_id> near;
                for (auto& u : g.users(from)) near.push_back(u.user);
                for (auto& v : g.inputs(from))
                    if (g.kind(v.node) == node_kind::op) near.push_back(v.node);
                if (near.empty()) continue;
                const node_id pick = near[rng() % near.size()];
                if (std::find(set.begin(), set.end(), pick) == set.end()) set.push_back(pick);
            }
            if (!convex(g, set)) continue;
            const auto before = g.node_count();
            const auto r = boundary(g, set);
            big += set.size() > 8 && (r.inputs.size() > 8 || r.outputs.size() > 8);
            g.replace(r);
            ++done;
            REQUIRE(g.node_count() == before - set.size() + 1);
            if (done % 50 == 0) REQUIRE(graph_problem(g) == "");
            if (done == 300) {
                snapshot = g;
                snapshot_print = sgmatch_test::fingerprint(g);
                CHECK(sgmatch_test::fingerprint(snapshot) == snapshot_print);
            }
        }
        CHECK(done > 1000);
        CHECK(big > 10);
        CHECK(graph_problem(g) == "");
        // Writes to g after the copy left the copy as it was, and it is writable on its own.
        CHECK(sgmatch_test::fingerprint(snapshot) == snapshot_print);
        CHECK(graph_problem(snapshot) == "");
        const node_id last = snapshot.nodes().back();
        if (snapshot.kind(last) == node_kind::op) {
            snapshot.replace(boundary(snapshot, {last}));
            CHECK(graph_problem(snapshot) == "");
        }
    }
}

TEST_CASE("a replace of a set that a path leaves and re-enters is reported by the next read") {
    // graph::replace does not check convexity (the partitioner does, before it writes): the
    // cycle it makes is a graph_error on the next read of the order, never a silent bad order.
    graph g;
    auto x = g.add_input("x");
    auto a = g.add_op("A", "a", {x});
    auto out = g.add_op("Out", "out", {a});  // leaves the set ...
    auto b = g.add_op("B", "b", {out});      // ... and comes back
    g.mark_output(b);
    REQUIRE_FALSE(convex(g, {a, b}));
    g.replace(fuse({a, b}, {{x, 0}, {out, 0}}, {{b, 0}, {a, 0}}));
    CHECK_THROWS_WITH_AS(g.nodes(), doctest::Contains("the graph has a cycle"), graph_error);
}
