// sgmatch/graph/graph.hpp - the built-in graph: compact, integer ids, contiguous storage.
//
// Serves tests, examples and benchmarks, and is a reasonable host graph of its own.
// - Node ids are dense integers; ids of removed nodes are not reused.
// - Nodes are created after their inputs, so creation order is topological until a replace();
//   after a replace the order is recomputed on the next read (Kahn's algorithm, O(N + E)).
// - Users are kept per node and updated by every write.
// - Known limitation: the first read after a write recomputes the order in a const member, so
//   reads of one graph from several threads are safe only once a read has followed the last write.
#pragma once

#include <algorithm>
#include <any>
#include <cstdint>
#include <deque>
#include <initializer_list>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <utility>
#include <vector>

#include "sgmatch/detail/config.hpp"
#include "sgmatch/graph/adapter.hpp"
#include "sgmatch/graph/replacement.hpp"
#include "sgmatch/graph/types.hpp"

SGMATCH_BEGIN_NAMESPACE

/// Handle of a node of sgmatch::graph. Trivial like an integer: `node_id{}` is node 0,
/// `node_id n;` is uninitialized (so arrays of ids cost nothing to create).
struct node_id {
    std::uint32_t value;
    friend bool operator==(node_id a, node_id b) { return a.value == b.value; }
    friend bool operator!=(node_id a, node_id b) { return a.value != b.value; }
    friend bool operator<(node_id a, node_id b) { return a.value < b.value; }
};

/// An input of a node being built: a node (output 0) or an explicit value.
struct input_ref {
    value_ref<node_id> v;
    input_ref(node_id n) : v{n, 0} {}  // NOLINT: implicit on purpose
    input_ref(value_ref<node_id> r) : v(r) {}  // NOLINT
    input_ref(node_id n, std::uint32_t port) : v{n, port} {}
};

class graph {
public:
    using value = value_ref<node_id>;
    using attr_list = std::initializer_list<std::pair<std::string_view, attribute>>;

    graph() = default;

    // ----- building ---------------------------------------------------------------------

    /// A graph input (placeholder) with an optional type.
    node_id add_input(std::string_view name, tensor_type type = {}) {
        node_id id = new_node(node_kind::input, no_op, name, {}, 1);
        set_type(value{id, 0}, std::move(type));
        return id;
    }

    /// A constant with shape `dims`. `data` may be empty (shape only: weights not loaded) or hold
    /// exactly prod(dims) floats.
    node_id add_constant(std::string_view name, std::vector<std::int64_t> dims,
                         std::vector<float> data = {}) {
        std::int64_t count = 1;
        for (auto d : dims) count *= d;
        if (!data.empty() && static_cast<std::int64_t>(data.size()) != count)
            throw graph_error("sgmatch::graph::add_constant: constant '" + std::string(name) +
                              "' has " + std::to_string(data.size()) + " values for " +
                              std::to_string(count) + " elements");
        node_id id = new_node(node_kind::constant, no_op, name, {}, 1);
        cold_.back().extra = static_cast<std::uint32_t>(consts_.size());
        consts_.push_back(constant_data{dims, std::move(data)});
        set_type(value{id, 0}, tensor_type{dtype::f32, std::move(dims)});
        return id;
    }

    /// A scalar f32 constant.
    node_id add_scalar(std::string_view name, float v) { return add_constant(name, {}, {v}); }

    /// An op node. Inputs must already exist (so creation order stays topological).
    node_id add_op(std::string_view op, std::string_view name, std::vector<input_ref> inputs,
                   attr_list attrs = {}, std::uint32_t outputs = 1) {
        for (std::size_t i = 0; i < inputs.size(); ++i) check_value(name, i, inputs[i].v);
        node_id id = new_node(node_kind::op, intern_op(op), name, inputs, outputs);
        for (auto& [k, v] : attrs) set_attr(id, k, v);
        return id;
    }

    void set_attr(node_id n, std::string_view key, attribute v) {
        check_node(n, "set_attr");
        const std::uint32_t k = intern(attr_key_ids_, attr_keys_, key);
        auto& list = attrs_[n.value];
        for (auto& [kk, vv] : list)
            if (kk == k) {
                vv = std::move(v);
                return;
            }
        list.emplace_back(k, std::move(v));
    }

    void set_type(value v, tensor_type t) {
        check_node(v.node, "set_type");
        if (v.port >= recs_[v.node.value].outputs)
            throw graph_error("sgmatch::graph::set_type: node '" + std::string(name_of(v.node)) +
                              "' has no output " + std::to_string(v.port));
        types_[cold_[v.node.value].type_begin + v.port] = std::move(t);
    }

    void mark_output(input_ref r) {
        const value v = r.v;
        check_value("<graph output>", graph_outputs_.size(), v);
        graph_outputs_.push_back(v);
        recs_[v.node.value].is_output = true;
    }
    void set_needs_gradients(bool b) { needs_gradients_ = b; }

    // ----- reading ------------------------------------------------------------------------

    std::size_t node_count() const { return live_; }
    std::size_t index_bound() const { return recs_.size(); }
    bool contains(node_id n) const { return n.value < recs_.size() && recs_[n.value].alive; }

    /// Live nodes in a topological order.
    const std::vector<node_id>& nodes() const {
        if (order_dirty_) recompute_order();
        return order_;
    }

    std::string_view name(node_id n) const { return name_of(n); }
    node_kind kind(node_id n) const { return recs_[n.value].kind; }
    std::uint32_t op(node_id n) const { return recs_[n.value].op; }
    std::size_t op_count() const { return op_names_.size(); }
    std::string_view op_name(node_id n) const {
        auto o = recs_[n.value].op;
        return o == no_op ? std::string_view(kind_name(recs_[n.value].kind)) : op_names_[o];
    }
    std::optional<std::uint32_t> find_op(std::string_view s) const {
        auto it = op_ids_.find(std::string(s));
        if (it == op_ids_.end()) return std::nullopt;
        return it->second;
    }
    std::string_view op_name_of_id(std::uint32_t o) const { return op_names_[o]; }

    std::size_t input_count(node_id n) const { return inputs_[n.value].size(); }
    value input(node_id n, std::size_t i) const { return inputs_[n.value][i]; }
    const std::vector<value>& inputs(node_id n) const { return inputs_[n.value]; }
    std::size_t output_count(node_id n) const { return recs_[n.value].outputs; }
    std::size_t user_count(node_id n) const { return recs_[n.value].user_count; }
    use<node_id> user(node_id n, std::size_t i) const {
        const rec& r = recs_[n.value];
        return r.user_count == 1 ? r.first : users_[n.value][i];
    }
    /// The users of n, every use of every output (a contiguous range).
    struct user_span {
        const use<node_id>* b;
        std::size_t n;
        const use<node_id>* begin() const { return b; }
        const use<node_id>* end() const { return b + n; }
        std::size_t size() const { return n; }
        const use<node_id>& operator[](std::size_t i) const { return b[i]; }
    };
    user_span users(node_id n) const {
        const rec& r = recs_[n.value];
        return r.user_count <= 1 ? user_span{&r.first, r.user_count} : user_span{users_[n.value].data(), r.user_count};
    }

    std::size_t graph_output_count() const { return graph_outputs_.size(); }
    value graph_output(std::size_t i) const { return graph_outputs_[i]; }
    bool is_graph_output(node_id n, std::uint32_t port) const {
        if (!recs_[n.value].is_output) return false;
        for (auto& v : graph_outputs_)
            if (v.node == n && v.port == port) return true;
        return false;
    }
    bool has_graph_output(node_id n) const { return recs_[n.value].is_output; }
    bool needs_gradients() const { return needs_gradients_; }

    std::optional<attribute> attr(node_id n, std::string_view key) const {
        auto it = attr_key_ids_.find(std::string(key));
        if (it == attr_key_ids_.end()) return std::nullopt;
        for (auto& [k, v] : attrs_[n.value])
            if (k == it->second) return v;
        return std::nullopt;
    }
    /// Every attribute of n, as f(key, value), in the order they were set.
    template <class F>
    void for_each_attr(node_id n, F f) const {
        for (auto& [k, v] : attrs_[n.value]) f(std::string_view(attr_keys_[k]), v);
    }
    std::optional<tensor_type> value_type(node_id n, std::uint32_t port) const {
        if (port >= recs_[n.value].outputs || !types_[cold_[n.value].type_begin + port].known()) return std::nullopt;
        return types_[cold_[n.value].type_begin + port];
    }
    std::optional<const_tensor_view> constant(node_id n) const {
        if (recs_[n.value].kind != node_kind::constant) return std::nullopt;
        const auto& c = consts_[cold_[n.value].extra];
        return const_tensor_view{dtype::f32, c.dims.data(), c.dims.size(),
                                 c.data.empty() ? nullptr : c.data.data()};
    }
    /// The payload a replace() stored on a fused node (empty for other nodes).
    const std::any& payload(node_id n) const {
        static const std::any none;
        const auto& r = cold_[n.value];
        return r.payload == no_payload ? none : payloads_[r.payload];
    }

    // ----- writing ------------------------------------------------------------------------

    /// Replace `r.nodes` by one node; see sgmatch::replacement. Strong guarantee: every check
    /// runs and every allocation happens before the first change.
    node_id replace(const replacement<node_id>& r) {
        std::any payload = r.payload;  // a copy may throw: before any change
        return replace_with(r, payload);
    }
    /// The same, moving r's payload in (no copy) once nothing can fail.
    node_id replace(replacement<node_id>&& r) { return replace_with(r, r.payload); }

private:
    // payload: moved into the graph at the commit (never before: a failed call leaves it).
    node_id replace_with(const replacement<node_id>& r, std::any& payload) {
        auto where = [&] { return "sgmatch::graph::replace('" + r.name + "'): "; };  // for errors only
        if (r.nodes.empty()) throw graph_error(where() + "no nodes to replace");
        std::vector<node_id> set = r.nodes;
        std::sort(set.begin(), set.end());
        if (std::adjacent_find(set.begin(), set.end()) != set.end())
            throw graph_error(where() + "a node is listed twice");
        auto in_set = [&](node_id n) { return std::binary_search(set.begin(), set.end(), n); };
        for (auto n : set) {
            if (!contains(n))
                throw graph_error(where() + "node " + std::to_string(n.value) + " is not in the graph");
        }
        for (std::size_t i = 0; i < r.inputs.size(); ++i) {
            check_value(r.name, i, r.inputs[i]);
            if (in_set(r.inputs[i].node))
                throw graph_error(where() + "input " + std::to_string(i) + " is produced by '" +
                                  std::string(name_of(r.inputs[i].node)) +
                                  "', a node being replaced");
        }
        for (std::size_t i = 0; i < r.outputs.size(); ++i) {
            const auto& v = r.outputs[i];
            if (!in_set(v.node) || v.port >= recs_[v.node.value].outputs)
                throw graph_error(where() + "output " + std::to_string(i) +
                                  " is not an output of a node being replaced");
        }
        auto out_index = [&](value v) -> std::ptrdiff_t {
            for (std::size_t i = 0; i < r.outputs.size(); ++i)
                if (r.outputs[i] == v) return static_cast<std::ptrdiff_t>(i);
            return -1;
        };
        // Every use of a replaced node from outside the set, and every graph output it
        // produces, must be one of the declared outputs; otherwise the write would dangle.
        std::vector<std::pair<use<node_id>, std::uint32_t>> redirects;
        for (auto n : set) {
            for (auto& u : users(n)) {
                if (in_set(u.user)) continue;
                auto k = out_index(value{n, u.port});
                if (k < 0)
                    throw graph_error(where() + "'" + std::string(name_of(u.user)) + "' uses output " +
                                      std::to_string(u.port) + " of '" +
                                      std::string(name_of(n)) +
                                      "', which is not an output of the replacement");
                redirects.emplace_back(u, static_cast<std::uint32_t>(k));
            }
        }
        std::vector<std::size_t> out_redirects;
        for (std::size_t i = 0; i < graph_outputs_.size(); ++i) {
            if (!in_set(graph_outputs_[i].node)) continue;
            if (out_index(graph_outputs_[i]) < 0)
                throw graph_error(where() + "graph output '" +
                                  std::string(name_of(graph_outputs_[i].node)) +
                                  "' is not an output of the replacement");
            out_redirects.push_back(i);
        }

        // Reserve everything, then commit with operations that cannot throw.
        const auto outputs = static_cast<std::uint32_t>(std::max<std::size_t>(1, r.outputs.size()));
        std::vector<input_ref> ins(r.inputs.begin(), r.inputs.end());
        reserve_one_more(outputs, r.name);
        std::vector<use<node_id>> new_users;
        new_users.reserve(redirects.size());
        for (auto& [u, k] : redirects) new_users.push_back(use<node_id>{u.user, u.slot, k});
        // The inputs' producers lose their uses inside the set (in place, at the commit) and
        // gain the new node's: room for those now.
        std::vector<node_id> producers;
        producers.reserve(r.inputs.size());
        for (auto& v : r.inputs) {
            if (std::find(producers.begin(), producers.end(), v.node) != producers.end()) continue;
            producers.push_back(v.node);
            reserve_use(v.node, r.inputs.size());
        }
        std::string op = r.op_name.empty() ? std::string("sgmatch.fused") : r.op_name;
        op_ids_.reserve(op_ids_.size() + 1);
        room_for(op_names_, 1);
        room_for(payloads_, 1);
        const std::uint32_t op_id = intern_op(op);  // may throw; harmless if it does

        // ---- commit: nothing below throws (all capacity reserved above) ----
        node_id id = new_node(node_kind::op, op_id, r.name, ins, outputs, /*link=*/false);
        cold_[id.value].payload = static_cast<std::uint32_t>(payloads_.size());
        payloads_.push_back(std::move(payload));
        for (auto p : producers) prune_uses(p, in_set);
        for (std::size_t i = 0; i < ins.size(); ++i)
            add_use(ins[i].v.node, use<node_id>{id, static_cast<std::uint32_t>(i), ins[i].v.port});
        for (auto& [u, k] : redirects) inputs_[u.user.value][u.slot] = value{id, k};
        set_uses(id, new_users);
        for (auto i : out_redirects) {
            graph_outputs_[i] = value{id, static_cast<std::uint32_t>(out_index(graph_outputs_[i]))};
            recs_[id.value].is_output = true;
        }
        for (auto n : set) {
            recs_[n.value].alive = false;
            recs_[n.value].user_count = 0;
            users_[n.value].clear();
            --live_;
        }
        order_dirty_ = true;
        return id;
    }

    static constexpr std::uint32_t no_op = 0xffffffffu;
    static constexpr std::uint32_t no_payload = 0xffffffffu;

    // The hot part of a node, 32 bytes: what matching reads. The first user is kept inline, so
    // following a single-use chain touches one record per node.
    struct alignas(32) rec {
        std::uint32_t op = no_op;
        std::uint32_t user_count = 0;
        use<node_id> first{};  // valid when user_count == 1; users_[n] holds all when >= 2
        std::uint16_t outputs = 1;
        node_kind kind = node_kind::op;
        bool alive = true;
        bool is_output = false;
    };
    // The cold part: names, types, constants, payloads.
    struct cold_rec {
        std::uint32_t name_begin = 0, name_len = 0;
        std::uint32_t type_begin = 0;
        std::uint32_t extra = 0;  // constant index
        std::uint32_t payload = no_payload;
    };
    struct constant_data {
        std::vector<std::int64_t> dims;
        std::vector<float> data;
    };

    static const char* kind_name(node_kind k) {
        return k == node_kind::input ? "<input>" : k == node_kind::constant ? "<constant>" : "<op>";
    }

    std::string_view name_of(node_id n) const {
        const auto& r = cold_[n.value];
        return std::string_view(names_).substr(r.name_begin, r.name_len);
    }

    void check_node(node_id n, const char* what) const {
        if (n.value >= recs_.size() || !recs_[n.value].alive)
            throw graph_error(std::string("sgmatch::graph::") + what + ": node " +
                              std::to_string(n.value) + " is not in the graph");
    }

    void check_value(std::string_view consumer, std::size_t slot, value v) const {
        if (v.node.value >= recs_.size() || !recs_[v.node.value].alive)
            throw graph_error("sgmatch::graph_error: node '" + std::string(consumer) + "' input " +
                              std::to_string(slot) + " refers to missing node " +
                              std::to_string(v.node.value));
        if (v.port >= recs_[v.node.value].outputs)
            throw graph_error("sgmatch::graph_error: node '" + std::string(consumer) + "' input " +
                              std::to_string(slot) + " reads output " + std::to_string(v.port) +
                              " of '" + std::string(name_of(v.node)) + "', which has " +
                              std::to_string(recs_[v.node.value].outputs) + " output(s)");
    }

    static std::uint32_t intern(std::unordered_map<std::string, std::uint32_t>& ids,
                                std::vector<std::string>& names, std::string_view s) {
        auto [it, fresh] = ids.emplace(std::string(s), static_cast<std::uint32_t>(names.size()));
        if (fresh) {
            try {
                names.emplace_back(s);
            } catch (...) {
                ids.erase(it);
                throw;
            }
        }
        return it->second;
    }
    std::uint32_t intern_op(std::string_view s) { return intern(op_ids_, op_names_, s); }

    // Capacity for `extra` more elements, growing geometrically (a plain reserve(size + 1) per
    // node would make building quadratic).
    template <class V>
    static void room_for(V& v, std::size_t extra) {
        if (v.capacity() - v.size() < extra) v.reserve(std::max(v.size() + extra, 2 * v.capacity()));
    }

    void reserve_one_more(std::size_t outputs, std::string_view name) {
        room_for(recs_, 1);
        room_for(cold_, 1);
        room_for(inputs_, 1);
        room_for(users_, 1);
        room_for(attrs_, 1);
        room_for(types_, outputs);
        room_for(names_, name.size());
        if (!order_dirty_) room_for(order_, 1);
    }

    node_id new_node(node_kind k, std::uint32_t op, std::string_view name,
                     const std::vector<input_ref>& ins, std::uint32_t outputs, bool link = true) {
        if (outputs == 0 || outputs > 0xffff)
            throw graph_error("sgmatch::graph: node '" + std::string(name) +
                              "' must have 1..65535 outputs");
        if (link) reserve_one_more(outputs, name);
        rec r;
        r.op = op;
        r.kind = k;
        r.outputs = static_cast<std::uint16_t>(outputs);
        cold_rec c;
        c.name_begin = static_cast<std::uint32_t>(names_.size());
        c.name_len = static_cast<std::uint32_t>(name.size());
        c.type_begin = static_cast<std::uint32_t>(types_.size());
        std::vector<value> in;
        in.reserve(ins.size());
        for (auto& i : ins) in.push_back(i.v);
        const node_id id{static_cast<std::uint32_t>(recs_.size())};
        if (link)
            for (std::size_t i = 0; i < in.size(); ++i) reserve_use(in[i].node, in.size());
        // commit
        names_.append(name);
        recs_.push_back(r);
        cold_.push_back(c);
        types_.resize(types_.size() + outputs);
        inputs_.push_back(std::move(in));
        users_.emplace_back();
        attrs_.emplace_back();
        if (link)
            for (std::size_t i = 0; i < inputs_[id.value].size(); ++i) {
                auto v = inputs_[id.value][i];
                add_use(v.node, use<node_id>{id, static_cast<std::uint32_t>(i), v.port});
            }
        ++live_;
        if (!order_dirty_) order_.push_back(id);
        return id;
    }

    void recompute_order() const {
        std::vector<std::uint32_t> pending(recs_.size(), 0);
        std::vector<node_id> order;
        order.reserve(live_);
        std::deque<node_id> ready;
        for (std::uint32_t i = 0; i < recs_.size(); ++i) {
            if (!recs_[i].alive) continue;
            pending[i] = static_cast<std::uint32_t>(inputs_[i].size());
            if (pending[i] == 0) ready.push_back(node_id{i});
        }
        while (!ready.empty()) {
            node_id n = ready.front();
            ready.pop_front();
            order.push_back(n);
            for (auto& u : users(n))
                if (--pending[u.user.value] == 0) ready.push_back(u.user);
        }
        if (order.size() != live_)
            throw graph_error("sgmatch::graph: the graph has a cycle");  // unreachable by construction
        order_.swap(order);
        order_dirty_ = false;
    }

    // Users: inline in rec when there is one; users_[n] holds all of them when there are more.
    // Capacity for `more` further uses of n, so that add_use cannot throw.
    void reserve_use(node_id n, std::size_t more) {
        auto& v = users_[n.value];
        const std::size_t need = recs_[n.value].user_count + more;
        if (need >= 2 && v.capacity() < need) v.reserve(std::max(need, 2 * v.capacity()));
    }
    void add_use(node_id n, use<node_id> u) noexcept {  // capacity reserved by the caller
        rec& r = recs_[n.value];
        auto& v = users_[n.value];
        if (r.user_count == 0) {
            r.first = u;
        } else {
            if (r.user_count == 1) {
                v.clear();
                v.push_back(r.first);
            }
            v.push_back(u);
        }
        ++r.user_count;
    }
    // Drop the uses of n by nodes for which gone(user) holds; never allocates.
    template <class Gone>
    void prune_uses(node_id n, const Gone& gone) noexcept {
        rec& r = recs_[n.value];
        if (r.user_count == 0) return;
        if (r.user_count == 1) {
            if (gone(r.first.user)) r.user_count = 0;
            return;
        }
        auto& v = users_[n.value];
        std::size_t k = 0;
        for (std::size_t i = 0; i < v.size(); ++i)
            if (!gone(v[i].user)) v[k++] = v[i];
        v.resize(k);
        r.user_count = static_cast<std::uint32_t>(k);
        if (k == 1) r.first = v[0];
    }
    void set_uses(node_id n, std::vector<use<node_id>>& list) noexcept {
        rec& r = recs_[n.value];
        r.user_count = static_cast<std::uint32_t>(list.size());
        if (list.size() == 1) r.first = list[0];
        users_[n.value].swap(list);
    }

    std::vector<rec> recs_;
    std::vector<cold_rec> cold_;
    std::vector<std::vector<value>> inputs_;
    std::vector<std::vector<use<node_id>>> users_;
    std::vector<std::vector<std::pair<std::uint32_t, attribute>>> attrs_;
    std::vector<tensor_type> types_;
    std::vector<constant_data> consts_;
    std::vector<std::any> payloads_;
    std::string names_;
    std::vector<std::string> op_names_;
    std::unordered_map<std::string, std::uint32_t> op_ids_;
    std::vector<std::string> attr_keys_;
    std::unordered_map<std::string, std::uint32_t> attr_key_ids_;
    std::vector<value> graph_outputs_;
    std::size_t live_ = 0;
    bool needs_gradients_ = false;
    mutable std::vector<node_id> order_;
    mutable bool order_dirty_ = false;
};

/// The built-in graph implements the whole contract, write side included.
template <>
struct graph_traits<graph> {
    using node_type = node_id;
    static const std::vector<node_id>& nodes(const graph& g) { return g.nodes(); }
    static std::size_t node_count(const graph& g) { return g.node_count(); }
    static std::size_t index_bound(const graph& g) { return g.index_bound(); }
    static std::size_t index(const graph&, node_id n) { return n.value; }
    static std::string_view name(const graph& g, node_id n) { return g.name(n); }
    static node_kind kind(const graph& g, node_id n) { return g.kind(n); }
    static std::uint32_t op(const graph& g, node_id n) { return g.op(n); }
    static std::size_t op_count(const graph& g) { return g.op_count(); }
    static std::string_view op_name(const graph& g, node_id n) { return g.op_name(n); }
    static std::optional<std::uint32_t> find_op(const graph& g, std::string_view s) {
        return g.find_op(s);
    }
    static std::size_t input_count(const graph& g, node_id n) { return g.input_count(n); }
    static value_ref<node_id> input(const graph& g, node_id n, std::size_t i) {
        return g.input(n, i);
    }
    static std::size_t output_count(const graph& g, node_id n) { return g.output_count(n); }
    static std::size_t user_count(const graph& g, node_id n) { return g.user_count(n); }
    static use<node_id> user(const graph& g, node_id n, std::size_t i) { return g.user(n, i); }
    static std::size_t graph_output_count(const graph& g) { return g.graph_output_count(); }
    static value_ref<node_id> graph_output(const graph& g, std::size_t i) {
        return g.graph_output(i);
    }
    static bool is_graph_output(const graph& g, node_id n, std::uint32_t port) {
        return g.is_graph_output(n, port);
    }
    static bool has_graph_output(const graph& g, node_id n) { return g.has_graph_output(n); }
    static bool needs_gradients(const graph& g) { return g.needs_gradients(); }
    static std::optional<attribute> attr(const graph& g, node_id n, std::string_view k) {
        return g.attr(n, k);
    }
    static std::optional<tensor_type> value_type(const graph& g, node_id n, std::uint32_t port) {
        return g.value_type(n, port);
    }
    static std::optional<const_tensor_view> constant(const graph& g, node_id n) {
        return g.constant(n);
    }
    template <class F>
    static void for_each_attr(const graph& g, node_id n, F f) {
        g.for_each_attr(n, f);
    }
    static node_id replace(graph& g, const replacement<node_id>& r) { return g.replace(r); }
    static node_id replace(graph& g, replacement<node_id>&& r) { return g.replace(std::move(r)); }
};

SGMATCH_END_NAMESPACE
