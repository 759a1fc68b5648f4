// sgmatch/partition/copy.hpp - a matched subgraph of any adapter graph, copied into a built-in
// graph of its own.
//
//   auto c = sgmatch::copy_subgraph(s);          // constants copied in; or at most n values each
//   // c.g: the ops of s in topological order, graph inputs "0", "1", ... for the boundary
//   // inputs listed in c.runtime_inputs, s.outputs as the graph outputs in order
//
// What runs a matched subgraph apart from the user's graph uses it: a capability region
// (exec/subgraph.hpp) and a fused node's ops, kept for when its kernel rejects an input shape
// (onednn/property.hpp). Attributes are copied through the adapter's optional for_each_attr,
// else every attribute name an op description knows (ops::all_attribute_names); output types through value_type.
// A boundary input that is a constant with data and at most max_constant_values values is
// copied in as a constant of its element type; every other boundary input becomes a graph
// input. (exec::graph_executor copies a whole graph with the same two helpers, copy_constant and
// copy_op.)
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "sgmatch/detail/config.hpp"
#include "sgmatch/graph/adapter.hpp"
#include "sgmatch/graph/graph.hpp"
#include "sgmatch/ops/table.hpp"
#include "sgmatch/partition/property.hpp"

SGMATCH_BEGIN_NAMESPACE

/// A subgraph as a built-in graph: `g`, and which boundary inputs of the subgraph (indices into
/// subgraph::inputs) its graph inputs "0", "1", ... stand for, in that order.
struct copied_subgraph {
    std::shared_ptr<graph> g;
    std::vector<std::size_t> runtime_inputs;
};

namespace detail {

/// Constant `n` of g copied into `to` under `name`, with its element type, dims and data;
/// nullopt when the adapter gives no data for it (constant(g, n)) or it holds more than
/// `max_values` elements.
template <class G>
std::optional<node_id> copy_constant(graph& to, const G& g, typename graph_traits<G>::node_type n, const std::string& name,
                                     std::size_t max_values = static_cast<std::size_t>(-1)) {
    const auto k = adapter<G>::constant(g, n);
    if (!k || k->data == nullptr || k->type == dtype::unknown || static_cast<std::size_t>(k->element_count()) > max_values)
        return std::nullopt;
    std::vector<unsigned char> bytes(static_cast<std::size_t>(k->element_count()) * size_of(k->type));
    if (!bytes.empty()) std::memcpy(bytes.data(), k->data, bytes.size());
    return to.add_constant(name, std::vector<std::int64_t>(k->dims, k->dims + k->rank), k->type, std::move(bytes));
}

/// Op `n` of g added to `to`, reading `ins`: its op, name, outputs and the output types the
/// adapter knows, and (with `attrs`) every attribute of the vocabulary it carries.
template <class G>
node_id copy_op(graph& to, const G& g, typename graph_traits<G>::node_type n, const std::vector<input_ref>& ins, bool attrs = true) {
    using traits = graph_traits<G>;
    const auto outs = static_cast<std::uint32_t>(traits::output_count(g, n));
    const node_id r = to.add_op(std::string(traits::op_name(g, n)), std::string(traits::name(g, n)), ins, {}, outs);
    if (attrs)
        adapter<G>::for_each_attr(g, n, ops::all_attribute_names(), [&](std::string_view k, const attribute& a) { to.set_attr(r, k, a); });
    for (std::uint32_t p = 0; p < outs; ++p)
        if (const auto t = adapter<G>::value_type(g, n, p)) to.set_type({r, p}, *t);
    return r;
}

}  // namespace detail

/// The ops of s (read through graph_traits<G> from s.graph) copied into a new built-in graph.
/// A boundary input that is a constant of at most `max_constant_values` elements, with data, is
/// copied in as a constant of its element type; every other one becomes a graph input.
template <class G>
copied_subgraph copy_subgraph(const subgraph<G>& s, std::size_t max_constant_values = static_cast<std::size_t>(-1)) {
    using traits = graph_traits<G>;
    using N = typename traits::node_type;
    const G& g = *s.graph;
    copied_subgraph out{std::make_shared<graph>(), {}};
    graph& c = *out.g;
    std::unordered_map<std::uint64_t, input_ref> map;  // outer value -> copied value
    auto key = [&](value_ref<N> v) { return (std::uint64_t{traits::index(g, v.node)} << 16) | v.port; };
    for (std::size_t i = 0; i < s.inputs.size(); ++i) {
        const auto v = s.inputs[i];
        if (const auto copied = detail::copy_constant(c, g, v.node, std::string(traits::name(g, v.node)), max_constant_values)) {
            map.emplace(key(v), input_ref(*copied));
            continue;
        }
        const auto t = adapter<G>::value_type(g, v.node, v.port);
        map.emplace(key(v), input_ref(c.add_input(std::to_string(out.runtime_inputs.size()), t ? *t : tensor_type{})));
        out.runtime_inputs.push_back(i);
    }
    // The members in a topological order of their own (Kahn's algorithm over the edges between
    // members; s.nodes is in pattern order): O(size of s), whatever the size of g.
    std::unordered_map<std::uint64_t, std::size_t> at;  // member index in g -> position in s.nodes
    for (std::size_t i = 0; i < s.nodes.size(); ++i) at.emplace(traits::index(g, s.nodes[i]), i);
    std::vector<std::uint32_t> pending(s.nodes.size(), 0);
    std::vector<std::vector<std::size_t>> next(s.nodes.size());
    for (std::size_t i = 0; i < s.nodes.size(); ++i)
        for (std::size_t k = 0; k < traits::input_count(g, s.nodes[i]); ++k) {
            const auto it = at.find(traits::index(g, traits::input(g, s.nodes[i], k).node));
            if (it == at.end()) continue;
            ++pending[i];
            next[it->second].push_back(i);
        }
    std::vector<std::size_t> order;
    for (std::size_t i = 0; i < s.nodes.size(); ++i)
        if (pending[i] == 0) order.push_back(i);
    for (std::size_t h = 0; h < order.size(); ++h)
        for (const std::size_t j : next[order[h]])
            if (--pending[j] == 0) order.push_back(j);
    for (const std::size_t i : order) {
        const N n = s.nodes[i];
        std::vector<input_ref> ins;
        for (std::size_t k = 0; k < traits::input_count(g, n); ++k) ins.push_back(map.at(key(traits::input(g, n, k))));
        const node_id r = detail::copy_op(c, g, n, ins);
        for (std::uint32_t p = 0; p < c.output_count(r); ++p) map.emplace(key({n, p}), input_ref(value_ref<node_id>{r, p}));
    }
    for (const auto v : s.outputs) c.mark_output(map.at(key(v)));
    return out;
}

SGMATCH_END_NAMESPACE
