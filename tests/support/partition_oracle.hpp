// tests/support/partition_oracle.hpp - the partition rules written out by brute force, and a
// check of sgmatch's partition of a graph against them: used by tests/partition/partition.cpp
// (small random DAGs) and by the fuzz target tests/fuzz/partition_graph.cpp (fuzzer-built graphs).
#pragma once

#include <algorithm>
#include <any>
#include <cstdint>
#include <functional>
#include <map>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "sgmatch/graph/graph.hpp"
#include "sgmatch/partition/partition.hpp"
#include "sgmatch/sgmatch.hpp"

namespace sgtest {

using sgmatch::graph;
using sgmatch::node_id;
using sgmatch::node_kind;

// The partition rules, written out by brute force for chains of optional steps (an oracle for
// small graphs): properties in order, each on the graph the earlier ones left; anchors in
// topological order; at an anchor the candidates in the matcher's order (take an optional step
// before skipping it), the first legal one wins; legal = every intermediate used only inside
// and not a graph output, and no path that leaves the set and comes back (checked by search on
// the graph with this pass's accepted sets contracted); taken nodes are not available.
struct step {
    std::vector<std::pair<std::string, int>> ops;  // op name, input count it needs (-1: any; an op
                                                   // with operands has exactly that many + 1)
    bool optional;
};

inline std::vector<std::vector<node_id>> oracle_pass(const graph& g, const std::vector<step>& steps) {
    std::vector<std::vector<node_id>> accepted;
    std::map<std::uint32_t, std::size_t> group;  // node -> accepted set
    std::set<std::uint32_t> taken;
    auto is = [&](node_id n, const step& s) {
        if (g.kind(n) != node_kind::op || taken.count(n.value)) return false;
        for (auto& [o, ins] : s.ops)
            if (g.op_name(n) == o && (ins < 0 || g.input_count(n) == static_cast<std::size_t>(ins))) return true;
        return false;
    };
    // Convex: no path from the set through an outside node back into it, where a node of an
    // accepted set stands for its whole set.
    auto convex = [&](const std::vector<node_id>& set) {
        std::set<std::uint32_t> in;
        for (auto n : set) in.insert(n.value);
        std::vector<node_id> stack;
        std::set<std::uint32_t> seen;
        auto push_users = [&](node_id n) {
            for (const auto& u : g.users(n)) stack.push_back(u.user);
        };
        for (auto n : set) push_users(n);  // start outside: users of the set not in it
        while (!stack.empty()) {
            node_id n = stack.back();
            stack.pop_back();
            if (in.count(n.value)) continue;  // still inside: not a path that left
            if (!seen.insert(n.value).second) continue;
            // n is outside; anything reachable from it that is in the set is a re-entry.
            std::vector<node_id> expand{n};
            auto it = group.find(n.value);
            if (it != group.end()) expand = accepted[it->second];
            for (auto m : expand) {
                seen.insert(m.value);
                for (const auto& u : g.users(m)) {
                    if (in.count(u.user.value)) return false;
                    stack.push_back(u.user);
                }
            }
        }
        return true;
    };
    auto legal = [&](const std::vector<node_id>& set) {
        for (std::size_t i = 0; i + 1 < set.size(); ++i) {
            if (g.has_graph_output(set[i])) return false;
            for (const auto& u : g.users(set[i]))
                if (std::find(set.begin(), set.end(), u.user) == set.end()) return false;
        }
        return convex(set);
    };
    for (node_id anchor : g.nodes()) {
        if (!is(anchor, steps[0])) continue;
        // Candidates in the matcher's order: each later step taken (by each user reading output
        // 0, in user order) before it is skipped.
        std::vector<std::vector<node_id>> cands;
        std::vector<node_id> cur{anchor};
        std::function<void(std::size_t)> grow = [&](std::size_t i) {
            if (i == steps.size()) {
                cands.push_back(cur);
                return;
            }
            for (const auto& u : g.users(cur.back()))
                if (u.port == 0 && is(u.user, steps[i]) &&
                    std::find(cur.begin(), cur.end(), u.user) == cur.end()) {
                    cur.push_back(u.user);
                    grow(i + 1);
                    cur.pop_back();
                }
            if (steps[i].optional) grow(i + 1);
        };
        grow(1);
        for (const auto& c : cands)
            if (legal(c)) {
                for (auto n : c) {
                    taken.insert(n.value);
                    group[n.value] = accepted.size();
                }
                accepted.push_back(c);
                break;
            }
    }
    return accepted;
}

inline std::set<std::vector<std::string>> as_names(const graph& g, const std::vector<std::vector<node_id>>& sets) {
    std::set<std::vector<std::string>> out;
    for (const auto& s : sets) {
        std::vector<std::string> v;
        for (auto n : s) v.emplace_back(g.name(n));
        out.insert(v);
    }
    return out;
}


/// sgmatch's partition of g by two properties in turn, against oracle_pass for each:
///   p1 = Conv >> BatchNorm? >> Relu?          p2 = BatchNorm >> (Relu | Add(any)) >> Relu?
/// mismatch: empty when both agree, else which property differs and both partitions.
struct oracle_result {
    std::string mismatch;
    std::size_t fused = 0;
};

inline oracle_result partition_against_oracle(const graph& g) {
    using namespace sgmatch;
    using sgmatch::ops::Add;
    using sgmatch::ops::BatchNorm;
    using sgmatch::ops::Conv;
    using sgmatch::ops::Relu;
    const std::vector<step> p1{{{{"Conv", -1}}, false}, {{{"BatchNormalization", -1}}, true}, {{{"Relu", -1}}, true}};
    const std::vector<step> p2{
        {{{"BatchNormalization", -1}}, false}, {{{"Relu", -1}, {"Add", 2}}, false}, {{{"Relu", -1}}, true}};
    auto keep_nodes = [](const subgraph<graph>& s) { return s.nodes; };
    auto fused_sets = [](const graph& h, std::string_view op) {
        std::vector<std::vector<node_id>> sets;
        for (auto n : h.nodes())
            if (h.payload(n).has_value() && h.op_name(n) == op) sets.push_back(std::any_cast<const std::vector<node_id>&>(h.payload(n)));
        return sets;
    };
    auto text = [](const std::set<std::vector<std::string>>& sets) {
        std::string t;
        for (const auto& s : sets) {
            t += "{";
            for (const auto& n : s) t += n + " ";
            t += "} ";
        }
        return t;
    };
    oracle_result r;
    graph h = g;
    const auto want1 = as_names(g, oracle_pass(g, p1));
    r.fused += apply_property(h, make_property<graph>("p1", op<Conv>() >> optional(op<BatchNorm>()) >> optional(op<Relu>()), keep_nodes))
                   .accepted;
    const auto got1 = as_names(g, fused_sets(h, "sgmatch.p1"));
    if (got1 != want1) {
        r.mismatch = "p1: sgmatch " + text(got1) + "oracle " + text(want1);
        return r;
    }
    // The oracle runs each pass on the graph as the earlier passes left it.
    const graph mid = h;
    const auto want2 = as_names(mid, oracle_pass(mid, p2));
    r.fused += apply_property(h, make_property<graph>("p2", op<BatchNorm>() >> (op<Relu>() | op<Add>(any())) >> optional(op<Relu>()),
                                                      keep_nodes))
                   .accepted;
    const auto got2 = as_names(mid, fused_sets(h, "sgmatch.p2"));
    if (got2 != want2) r.mismatch = "p2: sgmatch " + text(got2) + "oracle " + text(want2);
    return r;
}

}  // namespace sgtest
