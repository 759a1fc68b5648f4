// sgmatch/graph/graph.hpp - the built-in graph: compact, integer ids, contiguous storage.
//
// Serves tests, examples and benchmarks, and is a reasonable host graph of its own.
// - Node ids are dense integers; ids of removed nodes are not reused.
// - Nodes are created after their inputs, so creation order is topological. A replace() puts
//   the new node in the place of its last member when every outside user comes later, else in
//   its first member's when every input comes earlier (the next read drops the dead from the
//   order, one pass); otherwise the order is recomputed on the next read (Kahn, O(N + E)).
// - Storage: a 32-byte hot record per node (op, first user, where its inputs are); inputs in one
//   array, lists of 2+ users in another (a list that grows moves to the end, holes reclaimed
//   when they reach a quarter); names, types, attributes and payloads apart, set only where given.
// - Users are kept per node and updated by every write. A replace's new node takes the types
//   (dims and element type) of the values it replaces.
// - Known limitation: the first read after a write recomputes the order in a const member, so
//   reads of one graph from several threads are safe only once a read has followed the last write.
#pragma once

#include <algorithm>
#include <any>
#include <cstdint>
#include <cstring>
#include <initializer_list>
#include <optional>
#include <string>
#include <string_view>
#include <type_traits>
#include <unordered_map>
#include <utility>
#include <vector>

#include "sgmatch/detail/config.hpp"
#include "sgmatch/detail/pod_array.hpp"
#include "sgmatch/detail/unique_in_order.hpp"
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
        node_id id = new_node(node_kind::input, no_op, name, nullptr, 0, 1);
        if (type.known()) set_type(value{id, 0}, std::move(type));
        return id;
    }

    /// An f32 constant with shape `dims`. `data` may be empty (shape only: weights not loaded) or
    /// hold exactly prod(dims) floats.
    node_id add_constant(std::string_view name, std::vector<std::int64_t> dims,
                         std::vector<float> data = {}) {
        check_constant(name, dims, dtype::f32, data.size() * sizeof(float));
        room_for(consts_, 1);
        node_id id = new_node(node_kind::constant, no_op, name, nullptr, 0, 1);
        cold_.back().extra = static_cast<std::uint32_t>(consts_.size());
        consts_.push_back(constant_data{dims, dtype::f32, std::move(data), {}});
        set_type(value{id, 0}, tensor_type{dtype::f32, std::move(dims)});
        return id;
    }
    /// A constant of any element type: `bytes` empty (shape only) or exactly prod(dims) elements
    /// of `type` in its native layout (bool and int8 one byte each, f16 as IEEE half bits).
    node_id add_constant(std::string_view name, std::vector<std::int64_t> dims, dtype type,
                         std::vector<unsigned char> bytes) {
        // f32 too is kept as given (no copy: a model's weights are most of its bytes); the
        // allocator aligns the bytes for any element type.
        check_constant(name, dims, type, bytes.size());
        room_for(consts_, 1);
        node_id id = new_node(node_kind::constant, no_op, name, nullptr, 0, 1);
        cold_.back().extra = static_cast<std::uint32_t>(consts_.size());
        consts_.push_back(constant_data{dims, type, {}, std::move(bytes)});
        set_type(value{id, 0}, tensor_type{type, std::move(dims)});
        return id;
    }

    /// A scalar f32 constant.
    node_id add_scalar(std::string_view name, float v) { return add_constant(name, {}, {v}); }

    /// An op node. Inputs must already exist (so creation order stays topological).
    node_id add_op(std::string_view op, std::string_view name, std::vector<input_ref> inputs,
                   attr_list attrs = {}, std::uint32_t outputs = 1) {
        for (std::size_t i = 0; i < inputs.size(); ++i) check_value(name, i, inputs[i].v);
        node_id id = new_node(node_kind::op, intern_op(op), name, inputs.data(), inputs.size(), outputs);
        for (auto& [k, v] : attrs) set_attr(id, k, v);
        return id;
    }

    void set_attr(node_id n, std::string_view key, attribute v) {
        check_node(n, "set_attr");
        const std::uint32_t k = intern(attr_key_ids_, attr_keys_, key);
        std::uint32_t& a = cold_[n.value].attrs;
        if (a == none) {
            attrs_.emplace_back();  // an empty list left behind by a throw below changes nothing
            a = static_cast<std::uint32_t>(attrs_.size() - 1);
        }
        auto& list = attrs_[a];
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
        std::uint32_t& b = cold_[v.node.value].type_begin;
        if (b == none) {  // slots for every output, made on the first type set
            types_.resize(types_.size() + recs_[v.node.value].outputs);
            b = static_cast<std::uint32_t>(types_.size() - recs_[v.node.value].outputs);
        }
        types_[b + v.port] = std::move(t);
    }

    void mark_output(input_ref r) {
        const value v = r.v;
        check_value("<graph output>", graph_outputs_.size(), v);
        graph_outputs_.push_back(v);
        recs_[v.node.value].flags |= rec::output_flag;
        ++writes_;
    }
    void set_needs_gradients(bool b) { needs_gradients_ = b; }

    // ----- reading ------------------------------------------------------------------------

    std::size_t node_count() const { return live_; }
    std::size_t index_bound() const { return recs_.size(); }
    bool contains(node_id n) const { return n.value < recs_.size() && recs_[n.value].alive(); }

    /// Live nodes in a topological order.
    const std::vector<node_id>& nodes() const {
        if (order_ != order_state::clean) settle_order();
        return order_list_;
    }

    std::string_view name(node_id n) const { return name_of(n); }
    node_kind kind(node_id n) const { return recs_[n.value].kind; }
    std::uint32_t op(node_id n) const { return recs_[n.value].op; }
    /// Every node's op id by node index (0xffffffff for inputs and constants), as one array:
    /// what op_index reads (graph_traits<graph>::op_codes).
    const std::uint32_t* op_codes() const { return op_codes_.data(); }
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

    /// A contiguous run of T (inputs or users of a node).
    template <class T>
    struct span {
        const T* b;
        std::size_t n;
        const T* begin() const { return b; }
        const T* end() const { return b + n; }
        std::size_t size() const { return n; }
        bool empty() const { return n == 0; }
        const T& operator[](std::size_t i) const { return b[i]; }
    };

    std::size_t input_count(node_id n) const { return recs_[n.value].in_count; }
    value input(node_id n, std::size_t i) const { return ins_[recs_[n.value].in_begin + i]; }
    span<value> inputs(node_id n) const {
        const rec& r = recs_[n.value];
        return {ins_.data() + r.in_begin, r.in_count};
    }
    std::size_t output_count(node_id n) const { return recs_[n.value].outputs; }
    std::size_t user_count(node_id n) const { return recs_[n.value].user_count; }
    use<node_id> user(node_id n, std::size_t i) const { return users(n)[i]; }
    /// The users of n, every use of every output.
    span<use<node_id>> users(node_id n) const {
        const rec& r = recs_[n.value];
        return r.user_count <= 1 ? span<use<node_id>>{&r.first, r.user_count}
                                 : span<use<node_id>>{uses_.data() + use_at_[n.value].begin, r.user_count};
    }
    using user_span = span<use<node_id>>;

    std::size_t graph_output_count() const { return graph_outputs_.size(); }
    value graph_output(std::size_t i) const { return graph_outputs_[i]; }
    bool is_graph_output(node_id n, std::uint32_t port) const {
        if (!recs_[n.value].is_output()) return false;
        for (auto& v : graph_outputs_)
            if (v.node == n && v.port == port) return true;
        return false;
    }
    bool has_graph_output(node_id n) const { return recs_[n.value].is_output(); }
    bool needs_gradients() const { return needs_gradients_; }

    std::optional<attribute> attr(node_id n, std::string_view key) const {
        const std::uint32_t a = cold_[n.value].attrs;
        if (a == none) return std::nullopt;
        auto it = attr_key_ids_.find(std::string(key));
        if (it == attr_key_ids_.end()) return std::nullopt;
        for (auto& [k, v] : attrs_[a])
            if (k == it->second) return v;
        return std::nullopt;
    }
    /// Every attribute of n, as f(key, value), in the order they were set.
    template <class F>
    void for_each_attr(node_id n, F f) const {
        const std::uint32_t a = cold_[n.value].attrs;
        if (a == none) return;
        for (auto& [k, v] : attrs_[a]) f(std::string_view(attr_keys_[k]), v);
    }
    std::optional<tensor_type> value_type(node_id n, std::uint32_t port) const {
        const std::uint32_t b = cold_[n.value].type_begin;
        if (port >= recs_[n.value].outputs || b == none || !types_[b + port].known()) return std::nullopt;
        return types_[b + port];
    }
    std::optional<const_tensor_view> constant(node_id n) const {
        if (recs_[n.value].kind != node_kind::constant) return std::nullopt;
        const auto& c = consts_[cold_[n.value].extra];
        const void* data = !c.data.empty() ? static_cast<const void*>(c.data.data())
                                           : static_cast<const void*>(c.bytes.empty() ? nullptr : c.bytes.data());
        const_tensor_view v{c.type, c.dims.data(), c.dims.size(), data};
        // A constant of zero elements has its (empty) data: a valid pointer to nothing.
        static const std::int64_t nothing = 0;
        if (v.data == nullptr && v.element_count() == 0) v.data = &nothing;
        return v;
    }
    /// The payload a replace() stored on a fused node (empty for other nodes).
    const std::any& payload(node_id n) const {
        static const std::any empty;
        const auto& r = cold_[n.value];
        return r.payload == none ? empty : payloads_[r.payload];
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

    /// Every use of `from` - users' inputs and graph outputs - reads `to` instead (what removing
    /// an Identity or folding a value into a constant needs). `to` may not depend on `from`'s
    /// node (that would make a cycle). Strong guarantee: the checks and allocations come first.
    void redirect(value from, value to) {
        check_value("redirect", 0, from);
        check_value("redirect", 1, to);
        if (from == to) return;
        if (reaches(from.node, to.node))
            throw graph_error("sgmatch::graph::redirect: '" + std::string(name_of(to.node)) + "' depends on '" +
                              std::string(name_of(from.node)) + "': redirecting its uses there would make a cycle");
        std::size_t moved = 0;
        for (const auto& u : users(from.node)) moved += u.port == from.port;
        reserve_uses(to.node, recs_[to.node.value].user_count + moved);
        scratch_.uses.clear();
        scratch_.uses.reserve(moved);
        for (const auto& u : users(from.node))
            if (u.port == from.port) scratch_.uses.push_back(u);
        // ---- commit: nothing below throws ----
        ++writes_;
        scratch_.prepared = false;
        bool later = false;  // a user placed before `to`: the order is recomputed on the next read
        for (const auto& u : scratch_.uses) {
            ins_[recs_[u.user.value].in_begin + u.slot] = to;
            add_use(to.node, use<node_id>{u.user, u.slot, to.port});
            later = later || order_ == order_state::dirty || key_[u.user.value] < key_[to.node.value];
        }
        prune_uses(from.node, [&](const use<node_id>& u) { return u.port == from.port; });
        bool still_output = false;
        for (auto& o : graph_outputs_) {
            if (o == from) {
                o = to;
                recs_[to.node.value].flags |= rec::output_flag;
            }
            still_output = still_output || o.node == from.node;
        }
        if (!still_output) recs_[from.node.value].flags &= static_cast<std::uint8_t>(~rec::output_flag);
        if (later) order_ = order_state::dirty;
    }

    /// Removes a node nothing reads (no users, not a graph output). Strong guarantee.
    void erase(node_id n) {
        check_node(n, "erase");
        if (recs_[n.value].user_count != 0 || recs_[n.value].is_output())
            throw graph_error("sgmatch::graph::erase: '" + std::string(name_of(n)) + "' is still read (" +
                              std::to_string(recs_[n.value].user_count) + " users" +
                              (recs_[n.value].is_output() ? ", a graph output)" : ")"));
        // ---- commit: nothing below throws ----
        ++writes_;
        scratch_.prepared = false;
        const rec& r = recs_[n.value];
        for (std::uint32_t i = 0; i < r.in_count; ++i)
            prune_uses(ins_[r.in_begin + i].node, [n](const use<node_id>& u) { return u.user == n; });
        rec& m = recs_[n.value];
        m.flags &= static_cast<std::uint8_t>(~rec::alive_flag);
        free_uses(n);
        --live_;
        if (order_ != order_state::dirty) {
            order_list_[key_[n.value]] = tombstone;
            order_ = order_state::stale;
        }
    }

    /// The boundary of the node set nodes[0, count), as sgmatch computes it for a rewrite:
    /// `inputs`, the values read from outside, each once, in order of first use (members in the
    /// order given, inputs in slot order); `outputs`, the values used outside the set or graph
    /// outputs, first those of members no other member reads, then the others, each group in
    /// the order given, ports in order. Both are cleared first.
    /// It reads every edge at the set's border with a replace in mind: if the next write to the
    /// graph is a replace of exactly these nodes (in this order), inputs and outputs, that
    /// replace reuses what was learned here instead of classifying every edge again (any other
    /// write, or a replace of anything else, forgets it; the result is the same either way).
    /// Throws graph_error for an empty set, a node not in the graph or one listed twice (before
    /// touching `inputs` and `outputs`). The graph itself is never changed.
    void prepare_replace(const node_id* nodes, std::size_t count, std::vector<value>& inputs,
                         std::vector<value>& outputs) {
        scratch& x = scratch_;
        x.prepared = false;
        x.set.assign(nodes, nodes + count);
        check_set([] { return std::string("sgmatch::graph::prepare_replace: "); });
        inputs.clear();
        outputs.clear();
        const member_marks marks(*this);
        // Inputs: each producer once by a flag on its record (a value read twice, or a second
        // port of a producer, is looked for among the inputs so far; for many inputs, by one
        // sort at the end instead).
        x.producers.clear();
        struct producer_marks {  // cleared on every way out
            graph& g;
            ~producer_marks() {
                for (auto pn : g.scratch_.producers)
                    g.recs_[pn.value].flags &= static_cast<std::uint8_t>(~rec::producer_flag);
            }
        } const unmark_producers{*this};
        bool repeats = false;
        for (std::size_t i = 0; i < count; ++i) {
            const rec& m = recs_[nodes[i].value];
            const value* in = ins_.data() + m.in_begin;
            for (std::uint32_t k = 0; k < m.in_count; ++k) {
                const value v = in[k];
                rec& p = recs_[v.node.value];
                if (p.flags & rec::member_flag) continue;
                if (!(p.flags & rec::producer_flag)) {
                    x.producers.push_back(v.node);
                    p.flags |= rec::producer_flag;
                    inputs.push_back(v);
                } else if (inputs.size() <= 32) {
                    if (std::find(inputs.begin(), inputs.end(), v) == inputs.end()) inputs.push_back(v);
                } else {
                    inputs.push_back(v);
                    repeats = true;
                }
            }
        }
        if (repeats) detail::unique_in_order(inputs, value_key);
        // Outputs: one pass over each member's users tells whether another member reads it and
        // which of its ports (below 64: a mask) are read outside; graph outputs are looked up
        // only for members that produce one.
        auto escapes = [&](node_id n, std::uint64_t mask, std::uint32_t port) {
            if (port < 64) {
                if ((mask >> port) & 1) return true;
            } else {
                for (auto& u : users(n))
                    if (u.port == port && !(recs_[u.user.value].flags & rec::member_flag)) return true;
            }
            return recs_[n.value].is_output() && is_graph_output(n, port);
        };
        x.read_inside.assign(count, 0);
        x.read_outside.resize(count);
        for (std::size_t i = 0; i < count; ++i) {
            std::uint64_t mask = 0;
            for (auto& u : users(nodes[i])) {
                if (recs_[u.user.value].flags & rec::member_flag) x.read_inside[i] = 1;
                else if (u.port < 64) mask |= std::uint64_t(1) << u.port;
            }
            x.read_outside[i] = mask;
        }
        for (int pass = 0; pass < 2; ++pass)
            for (std::size_t i = 0; i < count; ++i) {
                if ((x.read_inside[i] != 0) != (pass == 1)) continue;
                const std::uint32_t outs = recs_[nodes[i].value].outputs;
                for (std::uint32_t port = 0; port < outs; ++port)
                    if (escapes(nodes[i], x.read_outside[i], port)) outputs.push_back(value{nodes[i], port});
            }
        // What the replace will need: the uses to redirect and graph outputs to move (every one
        // is a declared output by construction).
        classify_outside(outputs, [](const auto&) {
            throw graph_error("sgmatch::graph::prepare_replace: internal error, a use outside the set escaped");
        });
        x.prepared_inputs.assign(inputs.begin(), inputs.end());
        x.prepared_outputs.assign(outputs.begin(), outputs.end());
        x.prepared_nodes.assign(nodes, nodes + count);
        x.prepared_at = writes_;
        x.prepared = true;
    }

private:
    static constexpr std::uint32_t no_op = 0xffffffffu;
    static constexpr std::uint32_t none = 0xffffffffu;
    static constexpr node_id tombstone{none};  // a dead node's place in order_list_

    // x.set, sorted: no repeats, every node in the graph (throws graph_error, prefixed by where()).
    template <class Where>
    void check_set(const Where& where) {
        std::vector<node_id>& set = scratch_.set;
        if (set.empty()) throw graph_error(where() + "no nodes to replace");
        sort_ids(set);
        if (std::adjacent_find(set.begin(), set.end()) != set.end()) throw graph_error(where() + "a node is listed twice");
        for (auto n : set)
            if (!contains(n)) throw graph_error(where() + "node " + std::to_string(n.value) + " is not in the graph");
    }
    // The members of x.set (checked) flagged in their records while this lives: a membership
    // test reads one byte of a record the write touches anyway, and every way out clears them.
    struct member_marks {
        graph& g;
        explicit member_marks(graph& gr) : g(gr) {
            for (auto n : g.scratch_.set) g.recs_[n.value].flags |= rec::member_flag;
        }
        ~member_marks() {
            for (auto n : g.scratch_.set) g.recs_[n.value].flags &= static_cast<std::uint8_t>(~rec::member_flag);
        }
        member_marks(const member_marks&) = delete;
        member_marks& operator=(const member_marks&) = delete;
    };
    bool member(node_id n) const { return (recs_[n.value].flags & rec::member_flag) != 0; }

    // Every use of a member (flagged) from outside the set, and every graph output a member
    // produces, against the declared outputs: x.redirects (the port: which output the user
    // reads) and x.out_redirects. missing(what) is called for one that is not declared (and
    // must throw).
    template <class Missing>
    void classify_outside(const std::vector<value>& outs, const Missing& missing) {
        scratch& x = scratch_;
        // Which declared output a value is (the first if declared twice): a scan of a few, a
        // binary search of many.
        const bool many = outs.size() > 8;
        if (many) {
            x.outputs.clear();
            for (std::size_t i = 0; i < outs.size(); ++i) x.outputs.emplace_back(value_key(outs[i]), i);
            std::sort(x.outputs.begin(), x.outputs.end());
        }
        auto out_index = [&](value v) -> std::ptrdiff_t {
            if (many) {
                const auto it = std::lower_bound(x.outputs.begin(), x.outputs.end(),
                                                 std::pair<std::uint64_t, std::size_t>(value_key(v), 0));
                return it != x.outputs.end() && it->first == value_key(v) ? static_cast<std::ptrdiff_t>(it->second) : -1;
            }
            for (std::size_t i = 0; i < outs.size(); ++i)
                if (outs[i] == v) return static_cast<std::ptrdiff_t>(i);
            return -1;
        };
        x.redirects.clear();
        bool produces_output = false;  // the graph outputs are scanned only when it matters
        for (auto n : x.set) {
            produces_output = produces_output || recs_[n.value].is_output();
            for (auto& u : users(n)) {
                if (member(u.user)) continue;
                auto k = out_index(value{n, u.port});
                if (k < 0) missing(u);
                x.redirects.push_back(use<node_id>{u.user, u.slot, static_cast<std::uint32_t>(k)});
            }
        }
        x.out_redirects.clear();
        for (std::size_t i = 0; produces_output && i < graph_outputs_.size(); ++i) {
            if (!member(graph_outputs_[i].node)) continue;
            auto k = out_index(graph_outputs_[i]);
            if (k < 0) missing(graph_outputs_[i]);
            x.out_redirects.emplace_back(i, static_cast<std::uint32_t>(k));
        }
    }

    // payload: moved into the graph at the commit (never before: a failed call leaves it).
    node_id replace_with(const replacement<node_id>& r, std::any& payload) {
        auto where = [&] { return "sgmatch::graph::replace('" + r.name + "'): "; };  // for errors only
        scratch& x = scratch_;
        // The boundary prepare_replace read, with no write since: its classification holds.
        // (Never an empty set: prepare_replace refuses one; a moved-from graph's lists are empty.)
        const bool prepared = x.prepared && x.prepared_at == writes_ && !r.nodes.empty() && r.nodes == x.prepared_nodes &&
                              r.inputs == x.prepared_inputs && r.outputs == x.prepared_outputs;
        x.prepared = false;
        if (!prepared) {
            x.set.assign(r.nodes.begin(), r.nodes.end());
            check_set(where);
        }
        const auto& set = x.set;
        const member_marks marks(*this);
        auto in_set = [this](node_id n) { return member(n); };
        if (!prepared) {
            for (std::size_t i = 0; i < r.inputs.size(); ++i) {
                check_value(r.name, i, r.inputs[i]);
                if (in_set(r.inputs[i].node))
                    throw graph_error(where() + "input " + std::to_string(i) + " is produced by '" +
                                      std::string(name_of(r.inputs[i].node)) + "', a node being replaced");
            }
            for (std::size_t i = 0; i < r.outputs.size(); ++i) {
                const auto& v = r.outputs[i];
                if (!in_set(v.node) || v.port >= recs_[v.node.value].outputs)
                    throw graph_error(where() + "output " + std::to_string(i) +
                                      " is not an output of a node being replaced");
            }
            // Every use of a replaced node from outside the set, and every graph output it
            // produces, must be one of the declared outputs; otherwise the write would dangle.
            classify_outside(r.outputs, [&](const auto& what) {
                if constexpr (std::is_same_v<std::decay_t<decltype(what)>, use<node_id>>) {
                    const value used = ins_[recs_[what.user.value].in_begin + what.slot];
                    throw graph_error(where() + "'" + std::string(name_of(what.user)) + "' uses output " +
                                      std::to_string(used.port) + " of '" + std::string(name_of(used.node)) +
                                      "', which is not an output of the replacement");
                } else {
                    throw graph_error(where() + "graph output '" + std::string(name_of(what.node)) +
                                      "' is not an output of the replacement");
                }
            });
        }

        // Reserve everything, then commit with operations that cannot throw.
        const auto outputs = static_cast<std::uint32_t>(std::max<std::size_t>(1, r.outputs.size()));
        if (outputs > 0xffff) throw graph_error(where() + "more than 65535 outputs");
        // The inputs go into the members' own runs when those are one block large enough (no
        // room to reserve then), else at the end.
        const std::uint32_t in_at = reusable_inputs(set, r.inputs.size());
        reserve_node(r.name, in_at == none ? r.inputs.size() : 0, /*appended=*/false);
        room_for(payloads_, 1);
        // The inputs' producers lose their uses inside the set and gain the new node's: room
        // for what they will hold (moving a list inside the pool changes nothing observable).
        // Each producer once, with the number of inputs it feeds (sorted when there are many).
        // A prepared boundary needs none: its inputs are distinct values each read by a member,
        // so no producer gains more uses than it loses.
        if (!prepared) {
            x.producers.clear();
            for (auto& v : r.inputs) x.producers.push_back(v.node);
            sort_ids(x.producers);
            for (std::size_t i = 0; i < x.producers.size();) {
                const node_id p = x.producers[i];
                std::size_t add = 0;
                while (i < x.producers.size() && x.producers[i] == p) ++i, ++add;
                std::size_t keep = 0;
                for (auto& u : users(p)) keep += !in_set(u.user);
                reserve_uses(p, keep + add);
            }
            x.producers.erase(std::unique(x.producers.begin(), x.producers.end()), x.producers.end());
        }
        const std::size_t uses = x.redirects.size();  // the new node's own list, after the above
        if (uses >= 2) {
            if (uses_.size() + uses >= none) throw graph_error(where() + "more than 2^32 - 2 uses");
            room_for(uses_, uses);
        }
        const std::uint32_t op_id = intern_op(r.op_name.empty() ? std::string_view("sgmatch.fused")
                                                                : std::string_view(r.op_name));
        // Where the new node goes in the order: the slot of the last member when every outside
        // user comes after it, else the first member's when every input comes before it, else
        // the order is recomputed on the next read.
        std::uint32_t slot = none;
        if (order_ != order_state::dirty) {
            std::uint32_t lo = none, hi = 0;
            for (auto n : set) {
                lo = std::min(lo, key_[n.value]);
                hi = std::max(hi, key_[n.value]);
            }
            bool after = true, before = true;
            for (auto& u : x.redirects) after = after && key_[u.user.value] > hi;
            if (after) {
                slot = hi;
            } else {
                for (auto& v : r.inputs) before = before && key_[v.node.value] < lo;
                if (before) slot = lo;
            }
        }

        // The replaced values' types go to the new node's outputs (copied, and room made, here).
        std::vector<std::optional<tensor_type>> out_types;
        bool typed = false;
        out_types.reserve(r.outputs.size());
        for (const auto& v : r.outputs) {
            out_types.push_back(value_type(v.node, v.port));
            typed = typed || out_types.back().has_value();
        }
        if (typed) types_.reserve(types_.size() + outputs);

        // ---- commit: nothing below throws (all capacity reserved above) ----
        ++writes_;
        if (slot == none) {
            order_ = order_state::dirty;
        } else {
            for (auto n : set) order_list_[key_[n.value]] = tombstone;  // the new node takes one
            order_ = order_state::stale;
        }
        const node_id id = new_node_unchecked(node_kind::op, op_id, r.name, r.inputs.data(), r.inputs.size(),
                                              outputs, slot, in_at);
        if (uses >= 2) {
            use_at_[id.value] = use_range{static_cast<std::uint32_t>(uses_.size()), static_cast<std::uint32_t>(uses)};
            recs_[id.value].flags |= rec::ranged_flag;
            uses_.resize(uses_.size() + uses);
        }
        cold_[id.value].payload = static_cast<std::uint32_t>(payloads_.size());
        payloads_.push_back(std::move(payload));
        if (typed) {
            cold_[id.value].type_begin = static_cast<std::uint32_t>(types_.size());
            types_.resize(types_.size() + outputs);  // within the capacity reserved above
            for (std::size_t i = 0; i < out_types.size(); ++i)
                if (out_types[i]) types_[cold_[id.value].type_begin + i] = std::move(*out_types[i]);
        }
        for (auto p : x.producers) prune_uses(p, [&](const use<node_id>& u) { return in_set(u.user); });
        for (std::size_t i = 0; i < r.inputs.size(); ++i)
            add_use(r.inputs[i].node, use<node_id>{id, static_cast<std::uint32_t>(i), r.inputs[i].port});
        for (auto& u : x.redirects) {
            ins_[recs_[u.user.value].in_begin + u.slot] = value{id, u.port};
            add_use(id, use<node_id>{u.user, u.slot, u.port});
        }
        for (auto& [i, k] : x.out_redirects) {
            graph_outputs_[i] = value{id, k};
            recs_[id.value].flags |= rec::output_flag;
        }
        for (auto n : set) {
            rec& m = recs_[n.value];
            m.flags &= static_cast<std::uint8_t>(~rec::alive_flag);
            free_uses(n);
            m.user_count = 0;
            --live_;
        }
        return id;
    }

    // The hot part of a node, 32 bytes: what matching reads. The first user is kept inline, so
    // following a single-use chain touches one record per node.
    struct rec {
        std::uint32_t op = no_op;
        std::uint32_t user_count = 0;
        use<node_id> first{};       // valid when user_count == 1; uses_ holds all when >= 2
        std::uint32_t in_begin = 0;  // inputs: ins_[in_begin, in_begin + in_count)
        std::uint32_t in_count = 0;
        std::uint16_t outputs = 1;
        node_kind kind = node_kind::op;
        std::uint8_t flags = alive_flag;
        // ranged: has a range in uses_ (read use_at_ only then); member: in the set a replace is
        // replacing, producer: already seen as one of its inputs' producers (both set and
        // cleared within one call)
        static constexpr std::uint8_t alive_flag = 1, output_flag = 2, ranged_flag = 4, member_flag = 8,
                                      producer_flag = 16;
        bool alive() const { return flags & alive_flag; }
        bool is_output() const { return flags & output_flag; }
    };
    static_assert(sizeof(rec) == 32, "sgmatch::graph: a node's hot record is meant to be 32 bytes");
    // The cold part: names, types, attributes, constants, payloads (none: not set).
    struct cold_rec {
        std::uint32_t name_begin = 0, name_len = 0;
        std::uint32_t type_begin = none;
        std::uint32_t attrs = none;
        std::uint32_t extra = 0;  // constant index
        std::uint32_t payload = none;
    };
    // Where a node's list of 2+ uses lives in uses_.
    struct use_range {
        std::uint32_t begin = 0, capacity = 0;
    };
    struct constant_data {
        std::vector<std::int64_t> dims;
        dtype type = dtype::f32;
        std::vector<float> data;           // f32 given as floats
        std::vector<unsigned char> bytes;  // every type given as bytes (f32 too)
    };
    // A constant's dims and data size agree (no negative dim, no overflow); raises graph_error.
    static void check_constant(std::string_view name, const std::vector<std::int64_t>& dims, dtype type,
                               std::size_t bytes) {
        std::uint64_t count = 1;
        for (auto d : dims) {
            if (d < 0 || (d > 0 && count > (std::uint64_t{1} << 62) / static_cast<std::uint64_t>(d)))
                throw graph_error("sgmatch::graph::add_constant: constant '" + std::string(name) + "' has a negative or too large dim");
            count *= static_cast<std::uint64_t>(d);
        }
        if (size_of(type) == 0) throw graph_error("sgmatch::graph::add_constant: constant '" + std::string(name) + "' has no element type");
        if (bytes != 0 && bytes != count * size_of(type))
            throw graph_error("sgmatch::graph::add_constant: constant '" + std::string(name) + "' has " +
                              std::to_string(bytes / size_of(type)) + " values for " + std::to_string(count) + " elements");
    }
    // How order_list_ relates to the graph: exact; holding dead nodes (a replace put the new
    // node in a member's place: drop the dead on the next read); or unknown (recompute).
    enum class order_state : std::uint8_t { clean, stale, dirty };
    // Buffers a replace reuses; a copy of the graph starts with empty ones.
    struct scratch {
        std::vector<node_id> set, producers;
        std::vector<use<node_id>> redirects;  // port: the new node's output the user reads
        std::vector<use<node_id>> uses;       // redirect(): the uses it moves
        std::vector<std::pair<std::size_t, std::uint32_t>> out_redirects;  // (graph output, new port)
        std::vector<std::pair<std::uint64_t, std::size_t>> outputs;  // (value, index) sorted, when many
        std::vector<std::uint8_t> read_inside;       // per member, prepare_replace
        std::vector<std::uint64_t> read_outside;     // per member: ports read outside (below 64)
        // What prepare_replace read: valid for a replace of exactly this boundary while writes_
        // is still prepared_at (x.set, redirects, out_redirects and producers hold its results).
        bool prepared = false;
        std::uint64_t prepared_at = 0;
        std::vector<node_id> prepared_nodes;
        std::vector<value> prepared_inputs, prepared_outputs;
        scratch() = default;
        scratch(const scratch&) {}
        scratch& operator=(const scratch&) {
            prepared = false;  // the graph assigned to is another graph
            return *this;
        }
        scratch(scratch&&) noexcept = default;
        scratch& operator=(scratch&&) noexcept = default;
    };

    static const char* kind_name(node_kind k) {
        return k == node_kind::input ? "<input>" : k == node_kind::constant ? "<constant>" : "<op>";
    }

    std::string_view name_of(node_id n) const {
        const auto& r = cold_[n.value];
        return std::string_view(names_.data() + r.name_begin, r.name_len);
    }

    // Whether `to` depends on `from` (is reachable from it along uses).
    bool reaches(node_id from, node_id to) const {
        if (from == to) return true;
        (void)nodes();  // settles the order: the keys below are exact
        if (key_[to.value] < key_[from.value]) return false;
        std::vector<node_id> stack{from};
        std::vector<bool> seen(recs_.size(), false);
        while (!stack.empty()) {
            const node_id n = stack.back();
            stack.pop_back();
            for (const auto& u : users(n)) {
                if (u.user == to) return true;
                if (seen[u.user.value] || key_[u.user.value] > key_[to.value]) continue;
                seen[u.user.value] = true;
                stack.push_back(u.user);
            }
        }
        return false;
    }
    void check_node(node_id n, const char* what) const {
        if (n.value >= recs_.size() || !recs_[n.value].alive())
            throw graph_error(std::string("sgmatch::graph::") + what + ": node " +
                              std::to_string(n.value) + " is not in the graph");
    }

    // A replace sorts a few ids twice: an insertion sort in place for those (std::sort's setup
    // costs more than the sort).
    static void sort_ids(std::vector<node_id>& v) {
        if (v.size() > 16) {
            std::sort(v.begin(), v.end());
            return;
        }
        for (std::size_t i = 1; i < v.size(); ++i) {
            const node_id x = v[i];
            std::size_t j = i;
            for (; j > 0 && x < v[j - 1]; --j) v[j] = v[j - 1];
            v[j] = x;
        }
    }

    // The test inline, the message out of line (a replace checks every input).
    void check_value(std::string_view consumer, std::size_t slot, value v) const {
        if (v.node.value >= recs_.size() || !recs_[v.node.value].alive() || v.port >= recs_[v.node.value].outputs)
            bad_value(consumer, slot, v);
    }
    [[noreturn]] SGMATCH_NOINLINE void bad_value(std::string_view consumer, std::size_t slot, value v) const {
        if (v.node.value >= recs_.size() || !recs_[v.node.value].alive())
            throw graph_error("sgmatch::graph_error: node '" + std::string(consumer) + "' input " +
                              std::to_string(slot) + " refers to missing node " +
                              std::to_string(v.node.value));
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
    // Interning the op a run of replaces shares costs a string compare, not a hash lookup.
    std::uint32_t intern_op(std::string_view s) {
        if (last_op_ != none && op_names_[last_op_] == s) return last_op_;
        last_op_ = intern(op_ids_, op_names_, s);
        return last_op_;
    }

    // Where a replacement's `count` inputs can go in place of its members' own: the start of the
    // members' input runs when, taken in the set's order (ids, ascending), they tile one block of
    // at least count entries (the usual case: a pattern's nodes were added one after another),
    // else none (appended). The members die in the same commit, so the block is free; a rewrite
    // then grows ins_ by nothing, where appending faulted fresh pages at a steady rate on a
    // large graph.
    std::uint32_t reusable_inputs(const std::vector<node_id>& set, std::size_t count) const {
        std::uint32_t begin = none, end = none;
        for (auto m : set) {
            const rec& r = recs_[m.value];
            if (r.in_count == 0) continue;
            if (begin == none) {
                begin = r.in_begin;
            } else if (r.in_begin != end) {
                return none;
            }
            end = r.in_begin + r.in_count;
        }
        return begin != none && end - begin >= count ? begin : none;
    }

    // Capacity for `extra` more elements, growing geometrically (a plain reserve(size + 1) per
    // node would make building quadratic).
    template <class V>
    static void room_for(V& v, std::size_t extra) {
        if (v.capacity() - v.size() < extra) v.reserve(std::max(v.size() + extra, 2 * v.capacity()));
    }

    // Room for one more node with `inputs` inputs (appended to the order, unless it takes the
    // place of a node it replaces).
    void reserve_node(std::string_view name, std::size_t inputs, bool appended = true) {
        if (recs_.size() >= none - 1 || ins_.size() + inputs >= none || names_.size() + name.size() >= none)
            throw graph_error("sgmatch::graph: more than 2^32 - 2 nodes, inputs or name bytes");
        room_for(recs_, 1);
        room_for(op_codes_, 1);
        room_for(cold_, 1);
        room_for(key_, 1);
        room_for(use_at_, 1);
        room_for(ins_, inputs);
        room_for(names_, name.size());
        if (appended && order_ != order_state::dirty) room_for(order_list_, 1);
    }

    node_id new_node(node_kind k, std::uint32_t op, std::string_view name, const input_ref* ins,
                     std::size_t count, std::uint32_t outputs) {
        if (outputs == 0 || outputs > 0xffff)
            throw graph_error("sgmatch::graph: node '" + std::string(name) +
                              "' must have 1..65535 outputs");
        reserve_node(name, count);
        // The producers' use lists: room for this node's uses (exact for the usual few inputs).
        for (std::size_t i = 0; i < count; ++i) {
            const node_id p = ins[i].v.node;
            std::size_t add = count;
            if (count <= 16) {
                add = 0;
                for (std::size_t j = 0; j < count; ++j) add += ins[j].v.node == p;
            }
            reserve_uses(p, recs_[p.value].user_count + add);
        }
        // commit
        const node_id id = new_node_unchecked(k, op, name, ins, count, outputs, none);
        for (std::size_t i = 0; i < count; ++i)
            add_use(ins[i].v.node, use<node_id>{id, static_cast<std::uint32_t>(i), ins[i].v.port});
        return id;
    }

    // Appends the node (capacity reserved by the caller; nothing here throws). slot: its place
    // in the order, or none for the end.
    // in_at: where in ins_ its inputs go (none: appended; else a run of at least count entries
    // no live node uses).
    template <class In>
    node_id new_node_unchecked(node_kind k, std::uint32_t op, std::string_view name, const In* ins,
                               std::size_t count, std::uint32_t outputs, std::uint32_t slot,
                               std::uint32_t in_at = none) noexcept {
        const node_id id{static_cast<std::uint32_t>(recs_.size())};
        rec r;
        r.op = op;
        r.kind = k;
        r.outputs = static_cast<std::uint16_t>(outputs);
        r.in_begin = in_at == none ? static_cast<std::uint32_t>(ins_.size()) : in_at;
        r.in_count = static_cast<std::uint32_t>(count);
        ++writes_;
        if (in_at == none) {
            for (std::size_t i = 0; i < count; ++i) ins_.push_back(value_of(ins[i]));
        } else {
            for (std::size_t i = 0; i < count; ++i) ins_[in_at + i] = value_of(ins[i]);
        }
        cold_rec c;
        c.name_begin = static_cast<std::uint32_t>(names_.size());
        c.name_len = static_cast<std::uint32_t>(name.size());
        const std::size_t at = names_.size();
        names_.resize(at + name.size());
        if (!name.empty()) std::memcpy(names_.data() + at, name.data(), name.size());
        recs_.push_back(r);
        op_codes_.push_back(op);
        cold_.push_back(c);
        use_at_.push_back(use_range{});
        ++live_;
        if (order_ == order_state::dirty) {
            key_.push_back(0);
        } else if (slot == none) {
            key_.push_back(static_cast<std::uint32_t>(order_list_.size()));
            order_list_.push_back(id);
        } else {
            key_.push_back(slot);
            order_list_[slot] = id;
        }
        return id;
    }
    static std::uint64_t value_key(value v) { return (std::uint64_t(v.node.value) << 32) | v.port; }
    static value value_of(const input_ref& r) { return r.v; }
    static value value_of(const value& v) { return v; }

    // Brings order_list_ up to date: drops the dead (stale), or recomputes it (dirty: a replace
    // found no place for its node).
    void settle_order() const {
        if (order_ == order_state::stale) {
            std::size_t w = 0;
            for (std::size_t i = 0; i < order_list_.size(); ++i) {
                const node_id n = order_list_[i];
                if (n == tombstone) continue;
                key_[n.value] = static_cast<std::uint32_t>(w);
                order_list_[w++] = n;
            }
            order_list_.resize(w);
        } else {
            recompute_order();
        }
        order_ = order_state::clean;
    }

    // Kahn's algorithm with the order itself as the queue.
    void recompute_order() const {
        std::vector<std::uint32_t> pending(recs_.size(), 0);
        std::vector<node_id> order;
        order.reserve(live_);
        for (std::uint32_t i = 0; i < recs_.size(); ++i) {
            if (!recs_[i].alive()) continue;
            pending[i] = recs_[i].in_count;
            if (pending[i] == 0) order.push_back(node_id{i});
        }
        for (std::size_t h = 0; h < order.size(); ++h)
            for (auto& u : users(order[h]))
                if (--pending[u.user.value] == 0) order.push_back(u.user);
        if (order.size() != live_)
            throw graph_error("sgmatch::graph: the graph has a cycle (a replace of a node set that a path "
                              "leaves and re-enters)");
        for (std::size_t i = 0; i < order.size(); ++i) key_[order[i].value] = static_cast<std::uint32_t>(i);
        order_list_.swap(order);
    }

    // Uses: inline in rec when there is one; a range of uses_ holds all of them when there are
    // more. A list that outgrows its range moves to the end of uses_, leaving a hole; the holes
    // are reclaimed by compact_uses once they are a quarter of uses_.
    // Capacity for n to hold `need` uses, so that add_use cannot throw.
    void reserve_uses(node_id n, std::size_t need) {
        if (need < 2) return;
        use_range& at = use_at_[n.value];
        if (at.capacity >= need) return;
        const std::size_t cap = std::max<std::size_t>({need, 2 * std::size_t(at.capacity), 4});
        if (uses_.size() + cap >= none) throw graph_error("sgmatch::graph: more than 2^32 - 2 uses");
        // Compact once the holes are a quarter of the pool and pay for the pass over every node.
        if (uses_garbage_ >= 64 && 4 * uses_garbage_ > uses_.size() && 8 * uses_garbage_ > recs_.size()) compact_uses();
        room_for(uses_, cap);
        // nothing below throws
        const rec& r = recs_[n.value];
        const auto begin = static_cast<std::uint32_t>(uses_.size());
        uses_.resize(uses_.size() + cap);
        if (r.user_count == 1) uses_[begin] = r.first;
        if (r.user_count >= 2) std::copy_n(uses_.begin() + at.begin, r.user_count, uses_.begin() + begin);
        uses_garbage_ += at.capacity;
        at = use_range{begin, static_cast<std::uint32_t>(cap)};
        recs_[n.value].flags |= rec::ranged_flag;
    }
    // Rebuilds uses_ without holes (may throw before anything changes).
    void compact_uses() {
        std::size_t live = 0;  // counted, not derived from uses_garbage_: the loop must not throw
        for (std::size_t i = 0; i < recs_.size(); ++i) live += recs_[i].alive() ? use_at_[i].capacity : 0;
        detail::pod_array<use<node_id>> fresh;
        fresh.reserve(live + live / 4);
        // nothing below throws
        for (std::size_t i = 0; i < recs_.size(); ++i) {
            use_range& at = use_at_[i];
            if (at.capacity == 0) continue;
            if (!recs_[i].alive()) {
                at = use_range{};
                continue;
            }
            const auto begin = static_cast<std::uint32_t>(fresh.size());
            fresh.resize(begin + at.capacity);
            std::copy_n(uses_.begin() + at.begin, at.capacity, fresh.begin() + begin);
            at.begin = begin;
        }
        uses_.swap(fresh);
        uses_garbage_ = 0;
    }
    void free_uses(node_id n) noexcept {
        rec& r = recs_[n.value];
        if (!(r.flags & rec::ranged_flag)) return;
        uses_garbage_ += use_at_[n.value].capacity;
        use_at_[n.value] = use_range{};
        r.flags &= static_cast<std::uint8_t>(~rec::ranged_flag);
    }
    void add_use(node_id n, use<node_id> u) noexcept {  // capacity reserved by the caller
        rec& r = recs_[n.value];
        if (r.user_count == 0) {
            r.first = u;
        } else {
            use<node_id>* list = uses_.data() + use_at_[n.value].begin;
            if (r.user_count == 1) list[0] = r.first;
            list[r.user_count] = u;
        }
        ++r.user_count;
    }
    // Drop the uses u of n for which gone(u) holds; never allocates.
    template <class Gone>
    void prune_uses(node_id n, const Gone& gone) noexcept {
        rec& r = recs_[n.value];
        if (r.user_count == 0) return;
        if (r.user_count == 1) {
            if (gone(r.first)) r.user_count = 0;
            return;
        }
        use<node_id>* list = uses_.data() + use_at_[n.value].begin;
        std::uint32_t k = 0;
        for (std::uint32_t i = 0; i < r.user_count; ++i)
            if (!gone(list[i])) list[k++] = list[i];
        r.user_count = k;
        if (k == 1) r.first = list[0];
    }

    // The arrays a rewrite grows are pod_arrays (grown by realloc, not copied).
    detail::pod_array<rec, 32> recs_;
    detail::pod_array<std::uint32_t> op_codes_;  // recs_[i].op again, dense (for op_index)
    detail::pod_array<cold_rec> cold_;
    detail::pod_array<value> ins_;              // every node's inputs, in runs
    detail::pod_array<use<node_id>> uses_;      // lists of 2+ uses, in ranges (with holes)
    detail::pod_array<use_range> use_at_;       // per node
    std::size_t uses_garbage_ = 0;       // elements of uses_ in no node's range
    std::vector<std::vector<std::pair<std::uint32_t, attribute>>> attrs_;  // per node that has any
    std::vector<tensor_type> types_;     // per output of nodes that have a type set
    std::vector<constant_data> consts_;
    std::vector<std::any> payloads_;
    detail::pod_array<char> names_;
    std::vector<std::string> op_names_;
    std::unordered_map<std::string, std::uint32_t> op_ids_;
    std::uint32_t last_op_ = none;
    std::vector<std::string> attr_keys_;
    std::unordered_map<std::string, std::uint32_t> attr_key_ids_;
    std::vector<value> graph_outputs_;
    std::size_t live_ = 0;
    bool needs_gradients_ = false;
    std::uint64_t writes_ = 0;  // counts the writes that change nodes, edges or graph outputs
    scratch scratch_;
    mutable std::vector<node_id> order_list_;  // see order_state
    mutable detail::pod_array<std::uint32_t> key_;   // a node's place in order_list_ (while not dirty)
    mutable order_state order_ = order_state::clean;
};

/// The built-in graph implements the whole contract, write side included.
template <>
struct graph_traits<graph> {
    using node_type = node_id;
    // Every write checks its inputs and ports, and nodes() is a topological order or throws.
    static constexpr bool checked_by_construction = true;
    static const std::vector<node_id>& nodes(const graph& g) { return g.nodes(); }
    static std::size_t node_count(const graph& g) { return g.node_count(); }
    static std::size_t index_bound(const graph& g) { return g.index_bound(); }
    static std::size_t index(const graph&, node_id n) { return n.value; }
    static std::string_view name(const graph& g, node_id n) { return g.name(n); }
    static node_kind kind(const graph& g, node_id n) { return g.kind(n); }
    static std::uint32_t op(const graph& g, node_id n) { return g.op(n); }
    static const std::uint32_t* op_codes(const graph& g) { return g.op_codes(); }
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
    static void redirect(graph& g, value_ref<node_id> from, value_ref<node_id> to) { g.redirect(from, to); }
    static void erase(graph& g, node_id n) { g.erase(n); }
    static node_id add_constant(graph& g, std::string_view name, std::vector<std::int64_t> dims, dtype type,
                                std::vector<unsigned char> bytes) {
        return g.add_constant(name, std::move(dims), type, std::move(bytes));
    }
    static node_id replace(graph& g, replacement<node_id>&& r) { return g.replace(std::move(r)); }
    static void prepare_replace(graph& g, const node_id* nodes, std::size_t count, std::vector<graph::value>& inputs,
                                std::vector<graph::value>& outputs) {
        g.prepare_replace(nodes, count, inputs, outputs);
    }
};

SGMATCH_END_NAMESPACE
