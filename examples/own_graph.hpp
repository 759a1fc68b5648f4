// examples/own_graph.hpp - a graph type sgmatch has never seen, and its adapter: what the README's
// "Fuse your own graph" walks through (examples/own_graph.cpp).
//
// The graph is a framework's: nodes in a vector, ONNX op names, weights held by constant nodes.
// The adapter (graph_traits<my::graph>) gives sgmatch the minimal definition (matching), replace
// (partitioning) and value_type, constant and payload (sgmatch's executor over this graph).
#pragma once

#include <algorithm>
#include <any>
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "sgmatch/graph/adapter.hpp"
#include "sgmatch/graph/replacement.hpp"

namespace my {

struct graph {
    using value = sgmatch::value_ref<int>;
    struct node {
        std::string name, op;  // op: "" for an input or a constant
        std::vector<value> inputs;
        std::map<std::string, sgmatch::attribute> attrs;
        std::vector<std::int64_t> dims;  // an input's or a constant's shape
        std::vector<float> data;         // a constant's values
        std::uint32_t outputs = 1;
        std::any payload;  // what sgmatch made for a fused node
    };
    std::vector<node> nodes;        // never shrinks: an index is a node's handle for good
    std::vector<int> order;         // the nodes of the graph, producers first
    std::vector<std::string> ops;   // op names by op id
    std::vector<std::uint32_t> op_ids;  // by node
    value output{};

    int add(node n) {
        auto id = std::find(ops.begin(), ops.end(), n.op);
        if (!n.op.empty() && id == ops.end()) id = ops.insert(ops.end(), n.op);
        op_ids.push_back(n.op.empty() ? 0 : static_cast<std::uint32_t>(id - ops.begin()));
        nodes.push_back(std::move(n));
        order.push_back(static_cast<int>(nodes.size() - 1));
        return order.back();
    }
    int input(std::string name, std::vector<std::int64_t> dims) {
        node n;
        n.name = std::move(name);
        n.dims = std::move(dims);
        return add(std::move(n));
    }
    int constant(std::string name, std::vector<std::int64_t> dims, std::vector<float> data) {
        node n;
        n.name = std::move(name);
        n.dims = std::move(dims);
        n.data = std::move(data);
        return add(std::move(n));
    }
    int op(std::string op, std::string name, std::vector<value> inputs, std::map<std::string, sgmatch::attribute> attrs = {}) {
        node n;
        n.name = std::move(name);
        n.op = std::move(op);
        n.inputs = std::move(inputs);
        n.attrs = std::move(attrs);
        return add(std::move(n));
    }
    // Every use of node n: (user, input slot, port read).
    std::vector<sgmatch::use<int>> users(int n) const {
        std::vector<sgmatch::use<int>> u;
        for (int m : order)
            for (std::uint32_t s = 0; s < nodes[m].inputs.size(); ++s)
                if (nodes[m].inputs[s].node == n) u.push_back({m, s, nodes[m].inputs[s].port});
        return u;
    }
};

}  // namespace my

template <>
struct sgmatch::graph_traits<my::graph> {
    using G = my::graph;
    using node_type = int;
    // Matching: the minimal complete definition (sgmatch/graph/adapter.hpp).
    static const std::vector<int>& nodes(const G& g) { return g.order; }
    static std::size_t node_count(const G& g) { return g.order.size(); }
    static std::size_t index_bound(const G& g) { return g.nodes.size(); }
    static std::size_t index(const G&, int n) { return static_cast<std::size_t>(n); }
    static std::string_view name(const G& g, int n) { return g.nodes[n].name; }
    static node_kind kind(const G& g, int n) {
        const auto& x = g.nodes[n];
        return !x.op.empty() ? node_kind::op : x.data.empty() ? node_kind::input : node_kind::constant;
    }
    static std::uint32_t op(const G& g, int n) { return g.op_ids[n]; }
    static std::size_t op_count(const G& g) { return g.ops.size(); }
    static std::string_view op_name(const G& g, int n) { return g.nodes[n].op; }
    static std::optional<std::uint32_t> find_op(const G& g, std::string_view s) {
        const auto it = std::find(g.ops.begin(), g.ops.end(), s);
        if (it == g.ops.end()) return std::nullopt;
        return static_cast<std::uint32_t>(it - g.ops.begin());
    }
    static std::size_t input_count(const G& g, int n) { return g.nodes[n].inputs.size(); }
    static value_ref<int> input(const G& g, int n, std::size_t i) { return g.nodes[n].inputs[i]; }
    static std::size_t output_count(const G& g, int n) { return g.nodes[n].outputs; }
    static std::size_t user_count(const G& g, int n) { return g.users(n).size(); }
    static use<int> user(const G& g, int n, std::size_t i) { return g.users(n)[i]; }
    static std::size_t graph_output_count(const G&) { return 1; }
    static value_ref<int> graph_output(const G& g, std::size_t) { return g.output; }
    static bool needs_gradients(const G&) { return false; }
    static std::optional<attribute> attr(const G& g, int n, std::string_view key) {
        const auto it = g.nodes[n].attrs.find(std::string(key));
        if (it == g.nodes[n].attrs.end()) return std::nullopt;
        return it->second;
    }

    // Partitioning: the one write. The new node takes the place of the last node it replaces
    // (so the order stays topological); its output takes the place of the match's output.
    static int replace(G& g, const replacement<int>& r) {
        my::graph::node fused;
        fused.name = r.name;
        fused.op = r.op_name;
        fused.inputs = r.inputs;
        fused.outputs = static_cast<std::uint32_t>(r.outputs.size());
        fused.payload = r.payload;
        const int id = g.add(std::move(fused));
        g.order.pop_back();
        auto replaced = [&](int n) { return std::find(r.nodes.begin(), r.nodes.end(), n) != r.nodes.end(); };
        for (int n : g.order)
            if (!replaced(n))
                for (auto& in : g.nodes[n].inputs)
                    for (std::uint32_t k = 0; k < r.outputs.size(); ++k)
                        if (in == r.outputs[k]) in = {id, k};
        for (std::uint32_t k = 0; k < r.outputs.size(); ++k)
            if (g.output == r.outputs[k]) g.output = {id, k};
        auto last = std::find_if(g.order.rbegin(), g.order.rend(), replaced);
        *last = id;
        g.order.erase(std::remove_if(g.order.begin(), g.order.end(), [&](int n) { return n != id && replaced(n); }), g.order.end());
        return id;
    }

    // sgmatch's executor over this graph: shapes of the inputs, the weights, the fused nodes.
    static std::optional<tensor_type> value_type(const G& g, int n, std::uint32_t) {
        if (g.nodes[n].dims.empty()) return std::nullopt;
        return tensor_type::of(dtype::f32, g.nodes[n].dims);
    }
    static std::optional<const_tensor_view> constant(const G& g, int n) {
        const auto& x = g.nodes[n];
        if (x.data.empty()) return std::nullopt;
        return const_tensor_view{dtype::f32, x.dims.data(), x.dims.size(), x.data.data()};
    }
    static const std::any* payload(const G& g, int n) { return g.nodes[n].payload.has_value() ? &g.nodes[n].payload : nullptr; }
};
