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
// - This header is the class and its reading and building side; the larger members are defined
//   by concept in graph_replace.hpp (the writes), graph_storage.hpp and graph_order.hpp.
#pragma once

#include <algorithm>
#include <any>
#include <cstdint>
#include <cstring>
#include <initializer_list>
#include <memory>
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
        consts_.push_back(constant_data{dims, dtype::f32, std::move(data), {}, {}});
        set_type(value{id, 0}, tensor_type::of(dtype::f32, std::move(dims)));
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
        consts_.push_back(constant_data{dims, type, {}, std::move(bytes), {}});
        set_type(value{id, 0}, tensor_type::of(type, std::move(dims)));
        return id;
    }
    /// A constant whose bytes another object holds, read in place and never copied (a model's
    /// weights as the file's parser decoded them): `owner` keeps the `bytes` bytes at `data`
    /// alive and unchanged for as long as this graph, a copy of it or what sgmatch made from it
    /// (a fused node sharing the constant as its weights: constant_owner) holds it. `data` is
    /// aligned for `type`.
    node_id add_constant(std::string_view name, std::vector<std::int64_t> dims, dtype type,
                         std::shared_ptr<const void> owner, const void* data, std::size_t bytes) {
        check_constant(name, dims, type, bytes);
        if (bytes != 0 && (data == nullptr || owner == nullptr ||
                           reinterpret_cast<std::uintptr_t>(data) % size_of(type) != 0))
            throw graph_error("sgmatch::graph::add_constant: constant '" + std::string(name) +
                              "' has no owner, no data or data not aligned for its element type");
        room_for(consts_, 1);
        node_id id = new_node(node_kind::constant, no_op, name, nullptr, 0, 1);
        cold_.back().extra = static_cast<std::uint32_t>(consts_.size());
        // The aliasing constructor: shares the owner's count, points at the data.
        consts_.push_back(constant_data{dims, type, {}, {}, bytes != 0 ? std::shared_ptr<const void>(std::move(owner), data) : nullptr});
        set_type(value{id, 0}, tensor_type::of(type, std::move(dims)));
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
        const void* data = !c.data.empty()    ? static_cast<const void*>(c.data.data())
                           : c.held != nullptr ? c.held.get()
                                                  : static_cast<const void*>(c.bytes.empty() ? nullptr : c.bytes.data());
        const_tensor_view v{c.type, c.dims.data(), c.dims.size(), data};
        // A constant of zero elements has its (empty) data: a valid pointer to nothing.
        static const std::int64_t nothing = 0;
        if (v.data == nullptr && v.element_count() == 0) v.data = &nothing;
        return v;
    }
    /// What keeps constant n's data alive and unchanged: the owner of data the graph adopted
    /// (add_constant with an owner: weights as a file's parser decoded them); null for the
    /// graph's own copies and for other nodes.
    std::shared_ptr<const void> constant_owner(node_id n) const {
        if (recs_[n.value].kind != node_kind::constant) return nullptr;
        const auto& c = consts_[cold_[n.value].extra];
        return c.data.empty() ? c.held : nullptr;
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
    void redirect(value from, value to);

    /// Removes a node nothing reads (no users, not a graph output). Strong guarantee.
    void erase(node_id n);

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
                         std::vector<value>& outputs);

private:
    static constexpr std::uint32_t no_op = 0xffffffffu;
    static constexpr std::uint32_t none = 0xffffffffu;
    static constexpr node_id tombstone{none};  // a dead node's place in order_list_

    // x.set, sorted: no repeats, every node in the graph (throws graph_error, prefixed by where()).
    template <class Where>
    void check_set(const Where& where);
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
    void classify_outside(const std::vector<value>& outs, const Missing& missing);

    // payload: moved into the graph at the commit (never before: a failed call leaves it).
    node_id replace_with(const replacement<node_id>& r, std::any& payload);

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
        std::shared_ptr<const void> held;  // bytes another object owns (pointing at them)
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
    bool reaches(node_id from, node_id to) const;
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
    std::uint32_t intern_op(std::string_view s);

    // Where a replacement's `count` inputs can go in place of its members' own: the start of the
    // members' input runs when, taken in the set's order (ids, ascending), they tile one block of
    // at least count entries (the usual case: a pattern's nodes were added one after another),
    // else none (appended). The members die in the same commit, so the block is free; a rewrite
    // then grows ins_ by nothing, where appending faulted fresh pages at a steady rate on a
    // large graph.
    std::uint32_t reusable_inputs(const std::vector<node_id>& set, std::size_t count) const;

    // Capacity for `extra` more elements, growing geometrically (a plain reserve(size + 1) per
    // node would make building quadratic).
    template <class V>
    static void room_for(V& v, std::size_t extra) {
        if (v.capacity() - v.size() < extra) v.reserve(std::max(v.size() + extra, 2 * v.capacity()));
    }

    // Room for one more node with `inputs` inputs (appended to the order, unless it takes the
    // place of a node it replaces).
    void reserve_node(std::string_view name, std::size_t inputs, bool appended = true);

    node_id new_node(node_kind k, std::uint32_t op, std::string_view name, const input_ref* ins,
                     std::size_t count, std::uint32_t outputs) {
        if (outputs == 0 || outputs > 0xffff)
            throw graph_error("sgmatch::graph: node '" + std::string(name) +
                              "' must have 1..65535 outputs");
        reserve_node(name, count);
        // The producers' use lists: room for exactly this node's uses of each (counted by
        // comparing pairs for the usual few inputs, by sorting for many: linear memory and
        // n log n time for a Sum of 100,000 inputs).
        if (count <= 16) {
            for (std::size_t i = 0; i < count; ++i) {
                const node_id p = ins[i].v.node;
                std::size_t add = 0;
                for (std::size_t j = 0; j < count; ++j) add += ins[j].v.node == p;
                reserve_uses(p, recs_[p.value].user_count + add);
            }
        } else {
            std::vector<node_id> producers(count);
            for (std::size_t i = 0; i < count; ++i) producers[i] = ins[i].v.node;
            std::sort(producers.begin(), producers.end());
            for (std::size_t i = 0; i < count;) {
                std::size_t j = i;
                while (j < count && producers[j] == producers[i]) ++j;
                reserve_uses(producers[i], recs_[producers[i].value].user_count + (j - i));
                i = j;
            }
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
                               std::uint32_t in_at = none) noexcept;
    static std::uint64_t value_key(value v) { return (std::uint64_t(v.node.value) << 32) | v.port; }
    static value value_of(const input_ref& r) { return r.v; }
    static value value_of(const value& v) { return v; }

    // Brings order_list_ up to date: drops the dead (stale), or recomputes it (dirty: a replace
    // found no place for its node).
    void settle_order() const;

    // Kahn's algorithm with the order itself as the queue.
    void recompute_order() const;

    // Uses: inline in rec when there is one; a range of uses_ holds all of them when there are
    // more. A list that outgrows its range moves to the end of uses_, leaving a hole; the holes
    // are reclaimed by compact_uses once they are a quarter of uses_.
    // Capacity for n to hold `need` uses, so that add_use cannot throw.
    void reserve_uses(node_id n, std::size_t need);
    // Rebuilds uses_ without holes (may throw before anything changes).
    void compact_uses();
    void free_uses(node_id n) noexcept;
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
    void prune_uses(node_id n, const Gone& gone) noexcept;

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

SGMATCH_END_NAMESPACE

// The members defined apart, by concept.
#include "sgmatch/graph/graph_order.hpp"
#include "sgmatch/graph/graph_replace.hpp"
#include "sgmatch/graph/graph_storage.hpp"

SGMATCH_BEGIN_NAMESPACE

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
    static std::shared_ptr<const void> constant_owner(const graph& g, node_id n) { return g.constant_owner(n); }
    template <class F>
    static void for_each_attr(const graph& g, node_id n, F f) {
        g.for_each_attr(n, f);
    }
    static const std::any* payload(const graph& g, node_id n) { return &g.payload(n); }
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
