// examples/nnvm_adapter.hpp - sgmatch over a graph shaped like MXNet's nnvm, in place.
//
// The graph here is deliberately unlike sgmatch::graph: nodes are shared_ptr objects, inputs are
// (node, index) entries, ops are looked up by name in a global registry, attributes are strings,
// and the graph is just the list of output entries (a Symbol). Parameters are variables marked
// as such. The adapter keeps an index (topological order, users), like nnvm's IndexedGraph; the
// graph itself is read and rewritten where it lives, never converted.
#pragma once

#include <algorithm>
#include <any>
#include <cstdint>
#include <cstdlib>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <utility>
#include <vector>

#include "sgmatch/graph/adapter.hpp"
#include "sgmatch/graph/replacement.hpp"

namespace mini_nnvm {

struct Op {
    std::string name;
    std::uint32_t index;
    std::uint32_t num_outputs;

    // A process-wide registry, like NNVM_REGISTER_OP.
    static std::vector<std::unique_ptr<Op>>& registry() {
        static std::vector<std::unique_ptr<Op>> r;
        return r;
    }
    static const Op* Register(const std::string& name, std::uint32_t outputs = 1) {
        if (auto* o = Find(name)) return o;
        auto& r = registry();
        r.push_back(std::make_unique<Op>(Op{name, static_cast<std::uint32_t>(r.size()), outputs}));
        return r.back().get();
    }
    static const Op* Find(std::string_view name) {
        for (auto& o : registry())
            if (o->name == name) return o.get();
        return nullptr;
    }
};

struct Node;
using NodePtr = std::shared_ptr<Node>;

struct NodeEntry {
    NodePtr node;
    std::uint32_t index = 0;
};

struct Node {
    const Op* op = nullptr;  // null: a variable (data or parameter)
    std::string name;
    std::vector<NodeEntry> inputs;
    std::unordered_map<std::string, std::string> dict;  // attributes, as strings
    std::any payload;                                   // set on fused nodes

    bool is_variable() const { return op == nullptr; }
    std::uint32_t num_outputs() const { return op ? op->num_outputs : 1; }

    static NodePtr Variable(std::string name, bool is_param = false) {
        auto n = std::make_shared<Node>();
        n->name = std::move(name);
        if (is_param) n->dict["__param__"] = "1";
        return n;
    }
    static NodePtr Create(const std::string& op, std::string name, std::vector<NodeEntry> inputs,
                          std::unordered_map<std::string, std::string> dict = {}) {
        auto n = std::make_shared<Node>();
        n->op = Op::Register(op);
        n->name = std::move(name);
        n->inputs = std::move(inputs);
        n->dict = std::move(dict);
        return n;
    }
};

struct Symbol {
    std::vector<NodeEntry> outputs;
};

}  // namespace mini_nnvm

/// The index an adapter keeps over a Symbol: order, positions, users. Rebuilt after writes.
class nnvm_view {
public:
    using node_ptr = const mini_nnvm::Node*;

    explicit nnvm_view(mini_nnvm::Symbol& sym) : sym_(&sym) { reindex(); }

    /// Rebuild the index from the symbol (after the user changed the graph by hand).
    /// Throws sgmatch::graph_error on a cycle, naming a node on it.
    void reindex() {
        std::vector<node_ptr> order;
        std::unordered_map<node_ptr, std::uint32_t> pos;
        std::unordered_map<node_ptr, int> state;  // 1 = on the stack, 2 = done
        // Iterative post-order DFS from the outputs (nnvm's DFSVisit, without recursion).
        std::vector<std::pair<node_ptr, std::size_t>> stack;
        for (auto& e : sym_->outputs) {
            if (!e.node) throw sgmatch::graph_error("sgmatch::graph_error: a graph output is a null entry");
            if (state[e.node.get()] == 2) continue;
            stack.emplace_back(e.node.get(), 0);
            state[e.node.get()] = 1;
            while (!stack.empty()) {
                auto& [n, next] = stack.back();
                if (next < n->inputs.size()) {
                    const auto& in = n->inputs[next++];
                    if (!in.node)
                        throw sgmatch::graph_error("sgmatch::graph_error: node '" + n->name + "' input " +
                                                   std::to_string(next - 1) + " refers to no node");
                    int& s = state[in.node.get()];
                    if (s == 1)
                        throw sgmatch::graph_error("sgmatch::graph_error: the graph has a cycle through node '" +
                                                   in.node->name + "'");
                    if (s == 0) {
                        s = 1;
                        stack.emplace_back(in.node.get(), 0);
                    }
                } else {
                    state[n] = 2;
                    pos[n] = static_cast<std::uint32_t>(order.size());
                    order.push_back(n);
                    stack.pop_back();
                }
            }
        }
        std::vector<std::vector<sgmatch::use<node_ptr>>> users(order.size());
        for (auto* n : order)
            for (std::uint32_t s = 0; s < n->inputs.size(); ++s)
                users[pos[n->inputs[s].node.get()]].push_back({n, s, n->inputs[s].index});
        order_.swap(order);
        pos_.swap(pos);
        users_.swap(users);
    }

    const mini_nnvm::Symbol& symbol() const { return *sym_; }
    mini_nnvm::Symbol& symbol() { return *sym_; }
    const std::vector<node_ptr>& order() const { return order_; }
    std::size_t position(node_ptr n) const {
        auto it = pos_.find(n);
        return it == pos_.end() ? order_.size() : it->second;
    }
    const std::vector<sgmatch::use<node_ptr>>& users(node_ptr n) const { return users_[position(n)]; }

    /// The in-place write: a new node replaces `r.nodes`; users and graph outputs are redirected.
    /// Checks everything first, so a throw leaves the graph as it was.
    node_ptr replace(const sgmatch::replacement<node_ptr>& r) {
        auto in_set = [&](node_ptr n) { return std::find(r.nodes.begin(), r.nodes.end(), n) != r.nodes.end(); };
        auto out_index = [&](node_ptr n, std::uint32_t port) -> long {
            for (std::size_t i = 0; i < r.outputs.size(); ++i)
                if (r.outputs[i].node == n && r.outputs[i].port == port) return static_cast<long>(i);
            return -1;
        };
        if (r.nodes.empty()) throw sgmatch::graph_error("nnvm_view::replace: no nodes");
        for (auto n : r.nodes)
            if (position(n) == order_.size())
                throw sgmatch::graph_error("nnvm_view::replace: a node is not in the graph");
        for (auto& v : r.inputs)
            if (position(v.node) == order_.size() || in_set(v.node))
                throw sgmatch::graph_error("nnvm_view::replace: an input is not outside the replaced nodes");
        for (auto& v : r.outputs)
            if (!in_set(v.node)) throw sgmatch::graph_error("nnvm_view::replace: an output is not produced inside");
        std::vector<std::pair<mini_nnvm::NodeEntry*, std::uint32_t>> edits;
        for (auto n : r.nodes)
            for (auto& u : users(n)) {
                if (in_set(u.user)) continue;
                const long k = out_index(n, u.port);
                if (k < 0)
                    throw sgmatch::graph_error("nnvm_view::replace: '" + u.user->name + "' uses '" + n->name +
                                               "', which is not an output of the replacement");
                auto* user = const_cast<mini_nnvm::Node*>(u.user);  // we own the graph being rewritten
                edits.emplace_back(&user->inputs[u.slot], static_cast<std::uint32_t>(k));
            }
        for (auto& e : sym_->outputs)
            if (in_set(e.node.get())) {
                const long k = out_index(e.node.get(), e.index);
                if (k < 0) throw sgmatch::graph_error("nnvm_view::replace: a graph output is not an output");
                edits.emplace_back(&e, static_cast<std::uint32_t>(k));
            }
        // Build the new node, then commit with pointer assignments.
        const std::string op = r.op_name.empty() ? "_sg_fused" : r.op_name;
        auto fused = std::make_shared<mini_nnvm::Node>();
        fused->op = mini_nnvm::Op::Register(op, static_cast<std::uint32_t>(std::max<std::size_t>(1, r.outputs.size())));
        fused->name = r.name;
        fused->payload = r.payload;
        for (auto& v : r.inputs) fused->inputs.push_back(entry_of(v));
        if (fused->op->num_outputs < r.outputs.size())
            throw sgmatch::graph_error("nnvm_view::replace: op '" + op + "' has too few outputs");
        for (auto& [entry, k] : edits) *entry = mini_nnvm::NodeEntry{fused, k};
        reindex();
        return fused.get();
    }

private:
    // The shared_ptr entry that points at n (found through a user's inputs or the outputs).
    mini_nnvm::NodeEntry entry_of(const sgmatch::value_ref<node_ptr>& v) const {
        for (auto& u : users(v.node)) {
            const auto& e = u.user->inputs[u.slot];
            if (e.node.get() == v.node) return mini_nnvm::NodeEntry{e.node, v.port};
        }
        for (auto& e : sym_->outputs)
            if (e.node.get() == v.node) return mini_nnvm::NodeEntry{e.node, v.port};
        throw sgmatch::graph_error("nnvm_view: no entry refers to '" + v.node->name + "'");
    }

    mini_nnvm::Symbol* sym_;
    std::vector<node_ptr> order_;
    std::unordered_map<node_ptr, std::uint32_t> pos_;
    std::vector<std::vector<sgmatch::use<node_ptr>>> users_;
};

namespace nnvm_detail {
// MXNet attribute strings: "(3, 3)" -> ints, "1" -> int, "1e-5" -> real, else string.
inline sgmatch::attribute parse(const std::string& s) {
    if (!s.empty() && (s.front() == '(' || s.front() == '[')) {
        sgmatch::attribute::ints v;
        const char* p = s.c_str() + 1;
        while (*p) {
            char* end = nullptr;
            long long x = std::strtoll(p, &end, 10);
            if (end == p) {
                ++p;
                continue;
            }
            v.push_back(x);
            p = end;
        }
        return v;
    }
    char* end = nullptr;
    long long i = std::strtoll(s.c_str(), &end, 10);
    if (!s.empty() && *end == '\0') return i;
    double d = std::strtod(s.c_str(), &end);
    if (!s.empty() && *end == '\0') return d;
    return s;
}
}  // namespace nnvm_detail

template <>
struct sgmatch::graph_traits<nnvm_view> {
    using G = nnvm_view;
    using node_type = const mini_nnvm::Node*;
    static const std::vector<node_type>& nodes(const G& g) { return g.order(); }
    static std::size_t node_count(const G& g) { return g.order().size(); }
    static std::size_t index_bound(const G& g) { return g.order().size() + 1; }  // + 1: "not here"
    static std::size_t index(const G& g, node_type n) { return g.position(n); }
    static std::string_view name(const G&, node_type n) { return n->name; }
    static node_kind kind(const G&, node_type n) {
        if (!n->is_variable()) return node_kind::op;
        return n->dict.count("__param__") ? node_kind::constant : node_kind::input;
    }
    static std::uint32_t op(const G&, node_type n) { return n->op->index; }
    static std::size_t op_count(const G&) { return mini_nnvm::Op::registry().size(); }
    static std::string_view op_name(const G&, node_type n) { return n->op ? std::string_view(n->op->name) : "null"; }
    static std::optional<std::uint32_t> find_op(const G&, std::string_view s) {
        if (auto* o = mini_nnvm::Op::Find(s)) return o->index;
        return std::nullopt;
    }
    static std::size_t input_count(const G&, node_type n) { return n->inputs.size(); }
    static value_ref<node_type> input(const G&, node_type n, std::size_t i) {
        return {n->inputs[i].node.get(), n->inputs[i].index};
    }
    static std::size_t output_count(const G&, node_type n) { return n->num_outputs(); }
    static std::size_t user_count(const G& g, node_type n) { return g.users(n).size(); }
    static use<node_type> user(const G& g, node_type n, std::size_t i) { return g.users(n)[i]; }
    static std::size_t graph_output_count(const G& g) { return g.symbol().outputs.size(); }
    static value_ref<node_type> graph_output(const G& g, std::size_t i) {
        return {g.symbol().outputs[i].node.get(), g.symbol().outputs[i].index};
    }
    static bool needs_gradients(const G&) { return false; }
    static std::optional<attribute> attr(const G&, node_type n, std::string_view key) {
        auto it = n->dict.find(std::string(key));
        if (it == n->dict.end()) return std::nullopt;
        return nnvm_detail::parse(it->second);
    }
    static node_type replace(G& g, const replacement<node_type>& r) { return g.replace(r); }
    static const std::any* payload(const G&, node_type n) { return &n->payload; }
};
