// examples/minifw/adapter.hpp - sgmatch's view of a minifw graph, read and rewritten in place.
//
// The framework's graph is never converted: minifw_view keeps an index over it (producers-first
// order, positions, users) and translates what sgmatch reads. MXNet op names become sgmatch's
// vocabulary (Convolution -> Conv, Activation with act_type relu -> Relu, FullyConnected -> Gemm
// with transB, Pooling -> MaxPool / AveragePool / GlobalAveragePool, ...), and MXNet's string
// attributes the ONNX-style attributes sgmatch's op descriptions define (kernel "(3, 3)" ->
// kernel_shape [3, 3], pad "(1, 1)" -> pads [1, 1, 1, 1], num_group -> group, eps -> epsilon).
// An attribute with no translation (BatchNorm's fix_gamma=True, an act_type sgmatch has no op
// for) is passed through under its own name, so that sgmatch refuses it by name instead of
// ignoring it. Bound parameters are constants (their data read in place); other variables are
// graph inputs. The write (replace) builds the node the integration asks for
// (`create_node`, the MXNet CreateSubgraphNode hook) and commits with pointer edits only after
// every check has passed.
#pragma once

#include <algorithm>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <utility>
#include <vector>

#include "framework.hpp"
#include "sgmatch/graph/adapter.hpp"
#include "sgmatch/graph/replacement.hpp"
#include "sgmatch/graph/types.hpp"

class minifw_view {
public:
    using node_ptr = const minifw::Node*;
    /// Builds the framework node that replaces a matched set (MXNet's CreateSubgraphNode).
    using node_factory = std::function<std::unique_ptr<minifw::Node>(const sgmatch::replacement<node_ptr>&)>;

    minifw_view(minifw::Graph& g, node_factory create_node) : g_(&g), create_(std::move(create_node)) { reindex(); }

    void reindex() {
        std::vector<node_ptr> order;
        for (minifw::Node* n : minifw::topo_order(*g_)) order.push_back(n);
        std::unordered_map<node_ptr, std::uint32_t> pos;
        for (std::size_t i = 0; i < order.size(); ++i) pos[order[i]] = static_cast<std::uint32_t>(i);
        std::vector<std::vector<sgmatch::use<node_ptr>>> users(order.size());
        std::vector<std::uint32_t> op_of(order.size(), 0);
        std::vector<std::string> names;
        std::vector<translated> tr(order.size());
        for (std::size_t i = 0; i < order.size(); ++i) {
            node_ptr n = order[i];
            for (std::uint32_t s = 0; s < n->inputs.size(); ++s)
                users[pos.at(n->inputs[s].node)].push_back({n, s, static_cast<std::uint32_t>(n->inputs[s].index)});
            if (n->op == "null") continue;
            tr[i] = translate(*n);
            auto it = std::find(names.begin(), names.end(), tr[i].op);
            if (it == names.end()) it = names.insert(names.end(), tr[i].op);
            op_of[i] = static_cast<std::uint32_t>(it - names.begin());
        }
        order_.swap(order);
        pos_.swap(pos);
        users_.swap(users);
        op_of_.swap(op_of);
        op_names_.swap(names);
        tr_.swap(tr);
    }

    const minifw::Graph& graph() const { return *g_; }
    const std::vector<node_ptr>& order() const { return order_; }
    std::size_t position(node_ptr n) const {
        auto it = pos_.find(n);
        return it == pos_.end() ? order_.size() : it->second;
    }
    const std::vector<sgmatch::use<node_ptr>>& users(node_ptr n) const { return users_[position(n)]; }
    std::uint32_t op_id(node_ptr n) const { return op_of_[position(n)]; }
    std::string_view op_name(node_ptr n) const { return n->op == "null" ? std::string_view("null") : std::string_view(tr_[position(n)].op); }
    const std::vector<std::string>& op_names() const { return op_names_; }
    const std::vector<std::pair<std::string, sgmatch::attribute>>& attrs(node_ptr n) const { return tr_[position(n)].attrs; }

    node_ptr replace(const sgmatch::replacement<node_ptr>& r) {
        auto in_set = [&](node_ptr n) { return std::find(r.nodes.begin(), r.nodes.end(), n) != r.nodes.end(); };
        auto out_index = [&](node_ptr n, std::uint32_t port) -> int {
            for (std::size_t i = 0; i < r.outputs.size(); ++i)
                if (r.outputs[i].node == n && r.outputs[i].port == port) return static_cast<int>(i);
            return -1;
        };
        if (r.nodes.empty()) throw sgmatch::graph_error("minifw_view::replace: no nodes");
        for (auto n : r.nodes)
            if (position(n) == order_.size()) throw sgmatch::graph_error("minifw_view::replace: a node is not in the graph");
        for (auto& v : r.inputs)
            if (position(v.node) == order_.size() || in_set(v.node))
                throw sgmatch::graph_error("minifw_view::replace: an input is not outside the replaced nodes");
        std::vector<std::pair<minifw::Entry*, int>> edits;
        for (auto n : r.nodes)
            for (auto& u : users(n)) {
                if (in_set(u.user)) continue;
                const int k = out_index(n, u.port);
                if (k < 0)
                    throw sgmatch::graph_error("minifw_view::replace: '" + u.user->name + "' reads '" + n->name +
                                               "', which is not an output of the replacement");
                edits.emplace_back(&const_cast<minifw::Node*>(u.user)->inputs[u.slot], k);
            }
        for (auto& e : g_->outputs)
            if (in_set(e.node)) {
                const int k = out_index(e.node, static_cast<std::uint32_t>(e.index));
                if (k < 0) throw sgmatch::graph_error("minifw_view::replace: a graph output is not an output");
                edits.emplace_back(&e, k);
            }
        std::unique_ptr<minifw::Node> made = create_(r);  // may throw: nothing changed yet
        made->num_outputs = static_cast<int>(std::max<std::size_t>(1, r.outputs.size()));
        made->inputs.clear();
        for (auto& v : r.inputs) made->inputs.push_back({const_cast<minifw::Node*>(v.node), static_cast<int>(v.port)});
        g_->nodes.reserve(g_->nodes.size() + 1);  // the commit below does not allocate
        // ---- commit ----
        minifw::Node* fused = made.get();
        g_->nodes.push_back(std::move(made));
        for (auto& [entry, k] : edits) *entry = minifw::Entry{fused, k};
        g_->nodes.erase(std::remove_if(g_->nodes.begin(), g_->nodes.end(),
                                       [&](const std::unique_ptr<minifw::Node>& p) { return in_set(p.get()); }),
                        g_->nodes.end());
        reindex();
        return fused;
    }

private:
    struct translated {
        std::string op;
        std::vector<std::pair<std::string, sgmatch::attribute>> attrs;
    };

    // MXNet's spelling -> sgmatch's vocabulary and attributes.
    static translated translate(const minifw::Node& n) {
        using ints = sgmatch::attribute::ints;
        translated t;
        auto window = [&](bool pads) {
            if (n.attrs.count("kernel")) t.attrs.emplace_back("kernel_shape", ints(minifw::ints_attr(n, "kernel", {})));
            if (n.attrs.count("stride")) t.attrs.emplace_back("strides", ints(minifw::ints_attr(n, "stride", {})));
            if (pads && n.attrs.count("pad")) {
                ints p = minifw::ints_attr(n, "pad", {});
                const std::size_t r = p.size();
                for (std::size_t i = 0; i < r; ++i) p.push_back(p[i]);  // begin and end
                t.attrs.emplace_back("pads", p);
            }
        };
        auto pass_through = [&](std::initializer_list<const char*> known) {
            for (const auto& kv : n.attrs)
                if (std::find_if(known.begin(), known.end(), [&](const char* s) { return kv.first == s; }) == known.end())
                    t.attrs.emplace_back(kv.first, sgmatch::attribute(kv.second));
        };
        if (n.op == "Convolution") {
            t.op = "Conv";
            window(true);
            if (n.attrs.count("dilate")) t.attrs.emplace_back("dilations", ints(minifw::ints_attr(n, "dilate", {})));
            t.attrs.emplace_back("group", minifw::ints_attr(n, "num_group", {1})[0]);
            pass_through({"kernel", "stride", "pad", "dilate", "num_group", "num_filter", "no_bias"});
        } else if (n.op == "BatchNorm") {
            t.op = "BatchNormalization";
            t.attrs.emplace_back("epsilon", minifw::real_attr(n, "eps", 1e-3));
            // fix_gamma=True (MXNet's default) ignores gamma: no ONNX attribute says that.
            if (minifw::bool_attr(n, "fix_gamma", true)) t.attrs.emplace_back("fix_gamma", sgmatch::attribute(std::int64_t{1}));
            pass_through({"eps", "fix_gamma", "momentum", "use_global_stats"});
        } else if (n.op == "Activation") {
            const std::string a = minifw::str_attr(n, "act_type", "");
            t.op = a == "relu" ? "Relu" : a == "sigmoid" ? "Sigmoid" : a == "tanh" ? "Tanh" : "Activation";
            if (t.op == "Activation") t.attrs.emplace_back("act_type", sgmatch::attribute(a));
        } else if (n.op == "elemwise_add") {
            t.op = "Add";
        } else if (n.op == "Pooling") {
            const bool max = minifw::str_attr(n, "pool_type", "max") == "max";
            if (minifw::bool_attr(n, "global_pool", false)) {
                t.op = max ? "GlobalMaxPool" : "GlobalAveragePool";
            } else {
                t.op = max ? "MaxPool" : "AveragePool";
                window(true);
                if (!max) t.attrs.emplace_back("count_include_pad", std::int64_t{1});
            }
            pass_through({"kernel", "stride", "pad", "pool_type", "global_pool"});
        } else if (n.op == "Flatten") {
            t.op = "Flatten";
        } else if (n.op == "FullyConnected") {
            t.op = "Gemm";
            t.attrs.emplace_back("transB", std::int64_t{1});
            pass_through({"num_hidden", "no_bias"});
        } else {
            t.op = n.op;  // ops sgmatch does not know (and subgraph ops) keep their name
            pass_through({});
        }
        return t;
    }

    minifw::Graph* g_;
    node_factory create_;
    std::vector<node_ptr> order_;
    std::unordered_map<node_ptr, std::uint32_t> pos_;
    std::vector<std::vector<sgmatch::use<node_ptr>>> users_;
    std::vector<std::uint32_t> op_of_;
    std::vector<std::string> op_names_;
    std::vector<translated> tr_;
};

template <>
struct sgmatch::graph_traits<minifw_view> {
    using G = minifw_view;
    using node_type = const minifw::Node*;
    static const std::vector<node_type>& nodes(const G& g) { return g.order(); }
    static std::size_t node_count(const G& g) { return g.order().size(); }
    static std::size_t index_bound(const G& g) { return g.order().size() + 1; }
    static std::size_t index(const G& g, node_type n) { return g.position(n); }
    static std::string_view name(const G&, node_type n) { return n->name; }
    static node_kind kind(const G&, node_type n) {
        if (n->op != "null") return node_kind::op;
        return n->param ? node_kind::constant : node_kind::input;
    }
    static std::uint32_t op(const G& g, node_type n) { return g.op_id(n); }
    static std::size_t op_count(const G& g) { return g.op_names().size(); }
    static std::string_view op_name(const G& g, node_type n) { return g.op_name(n); }
    static std::optional<std::uint32_t> find_op(const G& g, std::string_view s) {
        const auto& names = g.op_names();
        for (std::size_t i = 0; i < names.size(); ++i)
            if (names[i] == s) return static_cast<std::uint32_t>(i);
        return std::nullopt;
    }
    static std::size_t input_count(const G&, node_type n) { return n->inputs.size(); }
    static value_ref<node_type> input(const G&, node_type n, std::size_t i) {
        return {n->inputs[i].node, static_cast<std::uint32_t>(n->inputs[i].index)};
    }
    static std::size_t output_count(const G&, node_type n) { return static_cast<std::size_t>(n->num_outputs); }
    static std::size_t user_count(const G& g, node_type n) { return g.users(n).size(); }
    static use<node_type> user(const G& g, node_type n, std::size_t i) { return g.users(n)[i]; }
    static std::size_t graph_output_count(const G& g) { return g.graph().outputs.size(); }
    static value_ref<node_type> graph_output(const G& g, std::size_t i) {
        return {g.graph().outputs[i].node, static_cast<std::uint32_t>(g.graph().outputs[i].index)};
    }
    static bool needs_gradients(const G&) { return false; }
    static std::optional<attribute> attr(const G& g, node_type n, std::string_view key) {
        if (n->op == "null") return std::nullopt;
        for (const auto& [k, v] : g.attrs(n))
            if (k == key) return v;
        return std::nullopt;
    }
    template <class F>
    static void for_each_attr(const G& g, node_type n, F&& f) {
        if (n->op == "null") return;
        for (const auto& [k, v] : g.attrs(n)) f(k, v);
    }
    static std::optional<const_tensor_view> constant(const G&, node_type n) {
        if (n->op != "null" || !n->param) return std::nullopt;
        return const_tensor_view{dtype::f32, n->param->shape.data(), n->param->shape.size(), n->param->data.data()};
    }
    static node_type replace(G& g, const replacement<node_type>& r) { return g.replace(r); }
    static const std::any* payload(const G&, node_type n) { return &n->parsed; }
};
