// tests/support/tiny_graph.hpp - a minimal adapter over plain vectors, for tests.
// It trusts whatever it is given, so tests can hand sgmatch dangling inputs, cycles and bad
// ports, and it counts calls so that tests can bound the matcher's work.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "sgmatch/graph/adapter.hpp"

namespace sgtest {

struct tiny_graph {
    struct node {
        std::string name;
        sgmatch::node_kind kind = sgmatch::node_kind::op;
        std::uint32_t op = 0;
        std::vector<sgmatch::value_ref<int>> inputs;
        std::uint32_t outputs = 1;
    };
    std::vector<node> nodes;
    std::vector<int> order;  // topological order as the adapter claims it
    std::vector<std::string> ops;
    std::vector<sgmatch::value_ref<int>> outputs;
    mutable std::size_t user_calls = 0;

    std::uint32_t op_id(std::string_view s) {
        for (std::uint32_t i = 0; i < ops.size(); ++i)
            if (ops[i] == s) return i;
        ops.emplace_back(s);
        return static_cast<std::uint32_t>(ops.size() - 1);
    }
    int add(std::string name, sgmatch::node_kind k, std::string_view op,
            std::vector<sgmatch::value_ref<int>> ins, std::uint32_t outs = 1) {
        node n{std::move(name), k, k == sgmatch::node_kind::op ? op_id(op) : 0, std::move(ins), outs};
        nodes.push_back(n);
        order.push_back(static_cast<int>(nodes.size() - 1));
        return static_cast<int>(nodes.size() - 1);
    }
    int input(std::string name) { return add(std::move(name), sgmatch::node_kind::input, "", {}); }
    int op(std::string_view op, std::string name, std::vector<sgmatch::value_ref<int>> ins, std::uint32_t outs = 1) {
        return add(std::move(name), sgmatch::node_kind::op, op, std::move(ins), outs);
    }
    bool forget_users = false;  // an adapter bug on purpose: no node has users
    std::vector<sgmatch::use<int>> users_of(int n) const {
        std::vector<sgmatch::use<int>> u;
        if (forget_users) return u;
        for (int i : order)
            for (std::uint32_t s = 0; s < nodes[static_cast<std::size_t>(i)].inputs.size(); ++s)
                if (nodes[static_cast<std::size_t>(i)].inputs[s].node == n)
                    u.push_back({i, s, nodes[static_cast<std::size_t>(i)].inputs[s].port});
        return u;
    }
};

}  // namespace sgtest

template <>
struct sgmatch::graph_traits<sgtest::tiny_graph> {
    using G = sgtest::tiny_graph;
    using node_type = int;
    static const std::vector<int>& nodes(const G& g) { return g.order; }
    static std::size_t node_count(const G& g) { return g.order.size(); }
    static std::size_t index_bound(const G& g) { return g.nodes.size(); }
    static std::size_t index(const G&, int n) { return static_cast<std::size_t>(n); }
    static std::string_view name(const G& g, int n) {
        return static_cast<std::size_t>(n) < g.nodes.size() ? std::string_view(g.nodes[static_cast<std::size_t>(n)].name)
                                                            : std::string_view("<missing>");
    }
    static node_kind kind(const G& g, int n) { return g.nodes[static_cast<std::size_t>(n)].kind; }
    static std::uint32_t op(const G& g, int n) { return g.nodes[static_cast<std::size_t>(n)].op; }
    static std::size_t op_count(const G& g) { return g.ops.size(); }
    static std::string_view op_name(const G& g, int n) {
        return kind(g, n) == node_kind::op ? std::string_view(g.ops[op(g, n)]) : std::string_view("<leaf>");
    }
    static std::optional<std::uint32_t> find_op(const G& g, std::string_view s) {
        for (std::uint32_t i = 0; i < g.ops.size(); ++i)
            if (g.ops[i] == s) return i;
        return std::nullopt;
    }
    static std::size_t input_count(const G& g, int n) { return g.nodes[static_cast<std::size_t>(n)].inputs.size(); }
    static value_ref<int> input(const G& g, int n, std::size_t i) { return g.nodes[static_cast<std::size_t>(n)].inputs[i]; }
    static std::size_t output_count(const G& g, int n) {
        return static_cast<std::size_t>(n) < g.nodes.size() ? g.nodes[static_cast<std::size_t>(n)].outputs : 0;
    }
    static std::size_t user_count(const G& g, int n) { return g.users_of(n).size(); }
    static use<int> user(const G& g, int n, std::size_t i) {
        ++g.user_calls;
        return g.users_of(n)[i];
    }
    static std::size_t graph_output_count(const G& g) { return g.outputs.size(); }
    static value_ref<int> graph_output(const G& g, std::size_t i) { return g.outputs[i]; }
    static bool needs_gradients(const G&) { return false; }
    static std::optional<attribute> attr(const G&, int, std::string_view) { return std::nullopt; }
};
