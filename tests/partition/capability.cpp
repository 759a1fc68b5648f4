// Capability partitioning: connected, convex, maximal regions of supported nodes.
#include <doctest/doctest.h>

#include <any>
#include <cmath>
#include <cstdlib>
#include <map>
#include <set>
#include <vector>

#include "sgmatch/graph/builders.hpp"
#include "sgmatch/partition/capability.hpp"
#include "sgmatch/partition/partition.hpp"
#include "sgmatch/sgmatch.hpp"
#include "support/quotient.hpp"

using namespace sgmatch;
using namespace sgmatch::ops;

namespace {

using regions_t = std::vector<std::vector<node_id>>;

bool connected(const graph& g, const std::vector<node_id>& r) {
    std::set<std::uint32_t> in;
    for (auto n : r) in.insert(n.value);
    std::set<std::uint32_t> seen{r[0].value};
    std::vector<node_id> todo{r[0]};
    while (!todo.empty()) {
        const node_id n = todo.back();
        todo.pop_back();
        std::vector<node_id> next;
        for (auto& u : g.users(n)) next.push_back(u.user);
        for (std::size_t i = 0; i < g.input_count(n); ++i) next.push_back(g.input(n, i).node);
        for (auto m : next)
            if (in.count(m.value) && seen.insert(m.value).second) todo.push_back(m);
    }
    return seen.size() == in.size();
}

// Every supported node in exactly one region; each region connected; all of them contracted
// together acyclic; and no edge between two regions whose merge would stay acyclic.
void check_regions(const graph& g, const regions_t& regions, const std::vector<bool>& supported,
                   std::size_t max_size = static_cast<std::size_t>(-1)) {
    std::map<std::uint32_t, std::size_t> region_of;
    for (std::size_t i = 0; i < regions.size(); ++i) {
        CHECK(connected(g, regions[i]));
        CHECK(regions[i].size() <= max_size);
        for (auto n : regions[i]) {
            CHECK(supported[n.value]);
            CHECK(region_of.emplace(n.value, i).second);
        }
    }
    for (auto n : g.nodes()) CHECK(region_of.count(n.value) == (supported[n.value] ? 1u : 0u));
    REQUIRE(sgtest::quotient_acyclic(g, regions));
    std::set<std::pair<std::size_t, std::size_t>> tried;
    for (auto n : g.nodes())
        for (auto& u : g.users(n)) {
            auto a = region_of.find(n.value), b = region_of.find(u.user.value);
            if (a == region_of.end() || b == region_of.end() || a->second == b->second) continue;
            if (!tried.insert({a->second, b->second}).second) continue;
            if (regions[a->second].size() + regions[b->second].size() > max_size) continue;
            regions_t merged;
            for (std::size_t i = 0; i < regions.size(); ++i)
                if (i != a->second && i != b->second) merged.push_back(regions[i]);
            merged.push_back(regions[a->second]);
            merged.back().insert(merged.back().end(), regions[b->second].begin(), regions[b->second].end());
            CHECK_MESSAGE(!sgtest::quotient_acyclic(g, merged), "two regions could merge: not maximal");
        }
}

}  // namespace

TEST_CASE("a path through an unsupported node splits a region - an outside input does not") {
    graph g;
    auto x = g.add_input("x");
    auto s1 = g.add_op("Conv", "s1", {x});
    auto u = g.add_op("TopK", "u", {s1});  // unsupported
    auto s3 = g.add_op("Relu", "s3", {s1});
    auto s2 = g.add_op("Add", "s2", {u, s3});  // s1 -> u -> s2: s2 cannot join s1's region
    auto w = g.add_op("TopK", "w", {x});
    auto s4 = g.add_op("Relu", "s4", {s2});
    auto s5 = g.add_op("Add", "s5", {s4, w});  // w feeds s5 from outside: s5 joins s2's region
    g.mark_output(s5);
    const op_index<graph> idx(g);
    const auto regions = capability_regions(idx, supported_ops<Conv, Relu, Add>{});
    REQUIRE(regions.size() == 2);
    CHECK(regions[0] == std::vector<node_id>{s1, s3});
    CHECK(regions[1] == std::vector<node_id>{s2, s4, s5});
    std::vector<bool> sup(g.index_bound(), false);
    for (auto n : {s1, s2, s3, s4, s5}) sup[n.value] = true;
    check_regions(g, regions, sup);
}

TEST_CASE("random DAGs: regions are connected, convex, cover the supported nodes and are maximal") {
    std::size_t total = 0, multi = 0;
    for (std::uint64_t seed = 0; seed < 600; ++seed) {
        const std::size_t n = seed < 400 ? 3 + seed % 10 : 40 + seed % 160;  // up to 12 nodes, then larger
        build::random_dag_options o;
        o.ops = {"Conv", "Relu", "Add", "TopK", "Conv", "Mul", "Relu", "NonZero", "Add", "Sigmoid"};
        const graph g = build::random_dag(n, seed, o);
        const op_index<graph> idx(g);
        auto supported = [](node_view<graph> v) { return v.op_name() != "TopK" && v.op_name() != "NonZero"; };
        const std::size_t max_size = seed % 3 == 0 ? 4 : static_cast<std::size_t>(-1);
        // What a gap out of precision takes, forced at every merge: seed % 3 == 1 renumbers the
        // contracted graph, seed % 3 == 2 relabels the window around the gap. Neither may change
        // the regions (the numbering only guides the searches).
        const auto regions = capability_regions(idx, supported, max_size);
        if (seed % 3 != 0) {
            const auto forced = sgmatch::detail::region_builder<graph>(idx, sgmatch::detail::supported_mask(idx, supported),
                                                                       max_size, seed % 3 == 1, seed % 3 == 2)
                                    .run();
            CHECK(forced == regions);
        }
        std::vector<bool> sup(g.index_bound(), false);
        for (auto v : g.nodes()) sup[v.value] = g.kind(v) == node_kind::op && supported(node_view<graph>(g, v));
        check_regions(g, regions, sup, max_size);
        total += regions.size();
        for (auto& r : regions) multi += r.size() > 1;
    }
    CHECK(multi > 300);  // real merges happened
    CHECK(total > multi);
}

TEST_CASE("relabel_window: the positions around a gap out of precision spread over a window, in order") {
    // Vertices at 0..999, then a gap near 500 halved until doubles cannot split it.
    std::vector<double> pos(1000);
    for (std::size_t i = 0; i < pos.size(); ++i) pos[i] = static_cast<double>(i);
    double from = 500, to = 501;
    for (int i = 0; i < 60; ++i) {
        pos.push_back((from + to) / 2);  // a vertex placed into the gap, as merges do
        to = pos.back();
    }
    to = std::nextafter(from, 1e9);  // out of precision
    pos.push_back(500.25);           // equal positions must stay equal
    pos.push_back(500.25);
    const std::vector<double> before = pos;
    auto visit = [&](auto&& f) {
        for (double& p : pos) f(p);
    };
    REQUIRE(sgmatch::detail::relabel_window(from, to, visit));
    CHECK(to - from >= 1.0 / 64);
    bool order_kept = true;  // ties included
    for (std::size_t i = 0; i < pos.size(); ++i)
        for (std::size_t j = 0; j < pos.size(); ++j) order_kept = order_kept && (before[i] < before[j]) == (pos[i] < pos[j]);
    CHECK(order_kept);
    bool outside_kept = true;
    for (std::size_t i = 0; i < 1000; ++i)
        if (before[i] <= 500 - 65 || before[i] >= 501 + 65) outside_kept = outside_kept && pos[i] == before[i];
    CHECK(outside_kept);
    // The gap sits where it was in the order: after everything at or below 500, before the rest.
    bool gap_in_place = true;
    for (std::size_t i = 0; i < pos.size(); ++i)
        gap_in_place = gap_in_place && (before[i] <= 500 ? pos[i] <= from : pos[i] >= to);
    CHECK(gap_in_place);
    // A window that never thins out (more than 64 positions per unit however wide, up to 2^16
    // either side: here nine million vertices at one position): false, the caller renumbers.
    double a = 0.5, b = std::nextafter(0.5, 1.0);
    double packed = 0.75;
    CHECK_FALSE(sgmatch::detail::relabel_window(a, b, [&](auto&& f) {
        for (int i = 0; i < 9'000'000; ++i) f(packed);
    }));
    CHECK(packed == 0.75);
}

TEST_CASE("a capability property rewrites each region into one engine node") {
    const graph before = build::resnet50();
    graph g = before;
    std::vector<std::vector<node_id>> seen;
    auto prop = make_capability_property<graph>("engine", supported_ops<Conv, BatchNorm, Relu, Add>{},
                                                [&](const subgraph<graph>& s) {
                                                    seen.push_back(s.nodes);
                                                    return s.nodes.size();
                                                });
    prop.min_size(2);
    const auto rep = apply_property(g, prop);
    // MaxPool and the head (GlobalAveragePool, Flatten, Gemm) are unsupported: the body before
    // the pool and everything after it up to the global pool are two regions.
    CHECK(rep.accepted == 2);
    CHECK(count_if(g.nodes().begin(), g.nodes().end(), [&](node_id n) { return g.op_name(n) == "sgmatch.engine"; }) == 2);
    const op_index<graph> checked(g);
    std::size_t fused = 0;
    for (auto& s : seen) fused += s.size();
    CHECK(g.node_count() == before.node_count() - fused + 2);
}

TEST_CASE("capability(g, supported, min_size): the regions with their boundaries, the graph unchanged (GetCapability)") {
    // x -> conv1 -> relu1 -> Softsign -> conv2 -> relu2 -> out; relu1 also read by an outside Sigmoid.
    graph g;
    auto x = g.add_input("x");
    auto c1 = g.add_op("Conv", "conv1", {x});
    auto r1 = g.add_op("Relu", "relu1", {c1});
    auto s = g.add_op("Softsign", "soft", {r1});
    auto side = g.add_op("Sigmoid", "side", {r1});
    auto c2 = g.add_op("Conv", "conv2", {s});
    auto r2 = g.add_op("Relu", "relu2", {c2});
    auto lone = g.add_op("Relu", "lone", {side});
    g.mark_output(r2);
    g.mark_output(lone);
    const std::size_t before = g.node_count();
    const auto regions = capability(g, supported_ops<Conv, Relu>{}, 2);
    CHECK(g.node_count() == before);
    REQUIRE(regions.size() == 2);  // "lone" is a region of one: below min_size
    CHECK(regions[0].nodes == std::vector<node_id>{c1, r1});
    CHECK(regions[0].inputs == std::vector<value_ref<node_id>>{{x, 0}});
    CHECK(regions[0].outputs == std::vector<value_ref<node_id>>{{r1, 0}});  // read by soft and side
    CHECK(regions[1].nodes == std::vector<node_id>{c2, r2});
    CHECK(regions[1].inputs == std::vector<value_ref<node_id>>{{s, 0}});
    CHECK(regions[1].outputs == std::vector<value_ref<node_id>>{{r2, 0}});  // a graph output
    CHECK(regions[1].id == 1);
    CHECK(capability(g, supported_ops<Conv, Relu>{}, 1).size() == 3);
}
