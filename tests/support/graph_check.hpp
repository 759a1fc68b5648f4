// Checks of the built-in graph's invariants, for tests that write to it.
#pragma once

#include <algorithm>
#include <cstdint>
#include <string>
#include <vector>

#include "sgmatch/graph/graph.hpp"

namespace sgmatch_test {

/// "" when g is consistent, else what is wrong: every input of a live node is a live value and
/// has exactly one matching use at its producer, every use is such an input, nodes() lists each
/// live node once in a topological order, op_codes() agrees with op() and kind(), graph outputs
/// are live values.
inline std::string graph_problem(const sgmatch::graph& g) {
    using namespace sgmatch;
    const auto& order = g.nodes();
    if (order.size() != g.node_count()) return "nodes() lists " + std::to_string(order.size()) + " of " +
                                               std::to_string(g.node_count()) + " nodes";
    std::vector<long> pos(g.index_bound(), -1);
    for (std::size_t i = 0; i < order.size(); ++i) {
        const node_id n = order[i];
        if (!g.contains(n)) return "nodes() lists dead node " + std::to_string(n.value);
        if (pos[n.value] >= 0) return "nodes() lists node " + std::to_string(n.value) + " twice";
        pos[n.value] = static_cast<long>(i);
    }
    std::size_t inputs = 0, uses = 0;
    for (const node_id n : order) {
        for (std::size_t s = 0; s < g.input_count(n); ++s) {
            const auto v = g.input(n, s);
            const std::string at = "input " + std::to_string(s) + " of node " + std::to_string(n.value);
            if (!g.contains(v.node)) return at + " reads a dead node";
            if (v.port >= g.output_count(v.node)) return at + " reads a missing port";
            if (pos[v.node.value] >= pos[n.value]) return at + " comes later in nodes()";
            std::size_t seen = 0;
            for (const auto& u : g.users(v.node)) seen += u.user == n && u.slot == s && u.port == v.port;
            if (seen != 1) return at + " has " + std::to_string(seen) + " matching uses at its producer";
            ++inputs;
        }
        if (g.users(n).size() != g.user_count(n)) return "users(" + std::to_string(n.value) + ") disagrees with user_count";
        const std::uint32_t code = g.kind(n) == node_kind::op ? g.op(n) : 0xffffffffu;
        if (g.op_codes()[n.value] != code) return "op_codes() disagrees with op(" + std::to_string(n.value) + ")";
        for (std::size_t i = 0; i < g.user_count(n); ++i) {
            const auto u = g.user(n, i);
            if (!g.contains(u.user) || u.slot >= g.input_count(u.user) || g.input(u.user, u.slot).node != n ||
                g.input(u.user, u.slot).port != u.port)
                return "use " + std::to_string(i) + " of node " + std::to_string(n.value) + " is not an input";
            ++uses;
        }
    }
    if (inputs != uses) return std::to_string(inputs) + " inputs but " + std::to_string(uses) + " uses";
    for (std::size_t i = 0; i < g.graph_output_count(); ++i) {
        const auto v = g.graph_output(i);
        if (!g.contains(v.node) || v.port >= g.output_count(v.node) || !g.is_graph_output(v.node, v.port))
            return "graph output " + std::to_string(i) + " is not a live value";
    }
    return "";
}

/// Everything observable about a graph, to compare before and after a failed write.
inline std::string fingerprint(const sgmatch::graph& g) {
    std::string s;
    for (auto n : g.nodes()) {
        s += std::string(g.name(n)) + ":" + std::string(g.op_name(n)) + "(";
        for (auto& v : g.inputs(n)) s += std::to_string(v.node.value) + "." + std::to_string(v.port) + ",";
        s += ")[";
        for (auto& u : g.users(n)) s += std::to_string(u.user.value) + "@" + std::to_string(u.slot) + ",";
        s += "];";
    }
    for (std::size_t i = 0; i < g.graph_output_count(); ++i) s.append("out").append(std::to_string(g.graph_output(i).node.value));
    return s;
}

}  // namespace sgmatch_test
