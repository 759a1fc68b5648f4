// sgmatch/match/engine.hpp - running a compiled pattern at one node (no promises: use
// match.hpp).
//
// One engine per graph type runs every pattern's program (program.hpp): an interpreter in
// continuation-passing style with explicit frames. Search is bounded by the pattern: an
// intermediate's users must all be inside the match, so a node with more users than the pattern
// has nodes left is rejected before any of them is tried. Explanations are compiled in only
// when Explain is true.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "sgmatch/detail/config.hpp"
#include "sgmatch/graph/adapter.hpp"
#include "sgmatch/graph/types.hpp"
#include "sgmatch/match/program.hpp"

SGMATCH_BEGIN_NAMESPACE
namespace detail {

// std::next_permutation over a[0, m), without <algorithm>'s include cost.
inline bool next_permutation(std::uint32_t* a, std::size_t m) {
    if (m < 2) return false;
    std::size_t i = m - 1;
    while (i > 0 && a[i - 1] >= a[i]) --i;
    if (i == 0) return false;
    std::size_t j = m - 1;
    while (a[j] <= a[i - 1]) --j;
    const std::uint32_t t = a[i - 1];
    a[i - 1] = a[j];
    a[j] = t;
    for (std::size_t l = i, r = m - 1; l < r; ++l, --r) {
        const std::uint32_t u = a[l];
        a[l] = a[r];
        a[r] = u;
    }
    return true;
}

/// Where the next element of a chain is matched: at node n, or at a user of output `port` of
/// n (on input `slot`, or any slot when slot < 0).
template <class N>
struct from_t {
    N n;
    bool after;
    std::uint32_t port;
    std::int32_t slot;
};

template <class N>
struct cap_entry {
    std::uint32_t cap;
    N node;
    std::uint32_t port;
};

struct explain_state {
    bool have = false;
    std::size_t depth = 0;
    std::string message;
    std::vector<std::string> matched;
};

enum class fast_result { matched, failed, fallback };


/// Runs compiled patterns (program.hpp) on a graph of type G: one engine per graph type, not
/// per pattern. Continuation-passing with explicit frames: each element matches its node and
/// resumes the frame that says what comes next; a false return backtracks, and whoever changed
/// state restores it before returning false.
template <class G, bool Explain>
class engine {
public:
    using traits = graph_traits<G>;
    using N = typename traits::node_type;
    using from = from_t<N>;

    /// escape_all: every matched node may have users outside the match (MXNet's semantics, for
    /// properties that allow escaping intermediates and for generated selectors).
    engine(const G& g, const program<G>& prog, const std::uint8_t* taken, explain_state* ex, bool escape_all = false)
        : g_(g), prog_(prog), taken_(taken), ex_(ex), nodes_(prog.max_nodes), flags_(prog.max_nodes),
          log_(prog.max_log), esc_depth_(escape_all ? 1 : 0) {}

    /// Set up the straight-line path (programs marked fast; scans call it once, before their
    /// first run_fast).
    void prepare_fast() {
        steps_.clear();
        const instr* root = prog_.root();
        const bool chain = root->kind == instr_kind::chain;
        for (std::size_t i = 0, m = chain ? root->n : 1; i < m; ++i) {
            const instr* e = chain ? prog_.kid(root, i) : root;
            steps_.push_back(fast_step{e, e->kind == instr_kind::op && e->id_count() == 1, e->id_count() > 0 ? prog_.ids[e->first_id()] : 0, e->n});
        }
    }

    /// Match the program with its first node at n. On success the state holds the match.
    bool run(N n) {
        count_ = 0;
        log_n_ = 0;  // esc_depth_ is balanced by every path (and starts at 1 under escape_all)
        const cont done{cont::finish};
        return match_element(prog_.root(), from{n, false, 0, -1}, &done);
    }

    /// The straight-line path for programs marked fast, on a checked graph (scans only; after
    /// prepare_fast). It
    /// follows single uses; where a node has several users it gives up (fallback) and the
    /// caller runs the general path, so both give the same result. Without choices along the
    /// way, a failure here is a failure there too.
    fast_result run_fast(N n) {
        log_n_ = 0;
        const G& g = g_;
        const fast_step* st = steps_.data();
        const fast_step* const end = st + steps_.size();
        N* const out = nodes_.data();
        std::size_t count = 0;  // a local: the stores to out[] need not reload it
        N cur = n;
        for (bool chained = false;; chained = true) {
            const fast_step& s = *st;
            if (s.simple) {  // one op id, no predicate or capture: the common case, kept tight
                if (traits::kind(g, cur) != node_kind::op || traits::op(g, cur) != s.id || taken(cur) ||
                    (s.inputs != 0 && traits::input_count(g, cur) != s.inputs + (chained ? 1u : 0u))) {
                    count_ = count;
                    return fast_result::failed;
                }
                out[count++] = cur;
            } else {
                count_ = count;
                if (!fast_check(s.e, cur, chained)) return fast_result::failed;
                count = count_;
            }
            if (++st == end) break;
            const std::size_t uc = traits::user_count(g, cur);
            if (uc != 1) {
                count_ = count;
                return uc == 0 ? fast_result::failed : fast_result::fallback;
            }
            const auto u = traits::user(g, cur, 0);
            if (u.port != 0 || adapter<G>::has_graph_output(g, cur)) {
                count_ = count;
                return fast_result::failed;  // not on output 0, or an internal graph output
            }
            cur = u.user;
        }
        count_ = count;
        output_ = cur;
        // No alternatives exist on this path (single uses, no optional parts): a veto fails it.
        if (veto_ != nullptr && !veto_(veto_obj_, nodes_.data(), count_)) return fast_result::failed;
        return fast_result::matched;
    }

    /// A veto consulted when a match is complete: returning false makes the engine go on
    /// searching (shorter alternatives come next, optional and repeat being greedy), so the
    /// first match the veto accepts is the longest acceptable one. Partitioning checks
    /// legality (size, convexity) this way.
    using veto_fn = bool (*)(const void*, const N* nodes, std::size_t count);
    void set_veto(const void* obj, veto_fn f) {
        veto_obj_ = obj;
        veto_ = f;
    }

    // State of a successful match.
    std::size_t count() const { return count_; }
    const N* nodes() const { return nodes_.data(); }
    std::size_t log_size() const { return log_n_; }
    const cap_entry<N>* log() const { return log_.data(); }
    N output() const { return output_; }

private:
    // What to do after an element matched. Frames live on the C++ stack of the element that
    // made them; `next` is the continuation to resume after this one.
    struct cont {
        enum kind_t : std::uint8_t { finish, seq, rep, guard, guard_val, cap, cap_val, esc_exit, out_port, operand };
        cont(kind_t k, const instr* el = nullptr, const cont* nx = nullptr) : kind(k), e(el), next(nx) {}
        kind_t kind;
        const instr* e;
        const cont* next;
        std::uint32_t i = 0;     // seq: next item; rep: iterations so far; operand: next operand
        std::size_t saved = 0;   // rep / guard / cap: count_ when the element started
        value_ref<N> v{};        // guard_val / cap_val: the value; operand: v.node is the op node
        const std::uint32_t* slots = nullptr;  // operand: input slot per operand
        const std::uint32_t* perm = nullptr;   // operand: operand order
    };

    // One element of a fast program. simple: a bare op with one op id (`id`).
    struct fast_step {
        const instr* e;
        bool simple;
        std::uint32_t id;
        std::uint32_t inputs;  // operand count (0: any number of inputs)
    };

    // ----- state helpers -----
    bool contains(N n) const {
        for (std::size_t i = 0; i < count_; ++i)
            if (nodes_[i] == n) return true;
        return false;
    }
    bool taken(N n) const { return taken_ != nullptr && taken_[traits::index(g_, n)] != 0; }
    void push(N n) {
        nodes_[count_] = n;
        flags_[count_] = esc_depth_ > 0 ? escaping_flag : 0;
        ++count_;
    }
    // Marks t (if matched) as closed: the closure rule holds for it whenever it is not the
    // last node. Set when t has a single use, is not a graph output, and the match is about to
    // continue through that use: every later element that consumes t's output matches that
    // user, or t stays the last node.
    void mark_closed(N t) {
        if (!adapter<G>::has_graph_output(g_, t))
            for (std::size_t i = count_; i-- > 0;)
                if (nodes_[i] == t) {
                    flags_[i] |= closed_flag;
                    return;
                }
    }
    std::string quoted_name(N n) const { return "'" + std::string(traits::name(g_, n)) + "'"; }

    template <class F>
    void fail(F&& make, bool prefer = false) {
        if constexpr (Explain) {
            if (!ex_->have || count_ > ex_->depth || (prefer && count_ == ex_->depth)) {
                ex_->have = true;
                ex_->depth = count_;
                ex_->message = make();
                ex_->matched.clear();
                for (std::size_t i = 0; i < count_; ++i)
                    ex_->matched.push_back(std::string(traits::name(g_, nodes_[i])) + " (" +
                                           std::string(traits::op_name(g_, nodes_[i])) + ")");
            }
        } else {
            (void)make;
            (void)prefer;
        }
    }

    bool pred(const instr* e, N n) const {
        const pred_slot<G>& p = prog_.preds[e->predicate()];
        return p.test(p.obj, g_, n);
    }
    void fail_pred(const instr* e, N n) {
        if constexpr (Explain) {
            const pred_slot<G>& p = prog_.preds[e->predicate()];
            fail([&] { return "node " + quoted_name(n) + " fails the predicate {" + p.describe(p.obj) + "}"; });
        } else {
            (void)e;
            (void)n;
        }
    }

    // The producer of input `slot` of n, checked against the adapter's own counts.
    value_ref<N> input_of(N n, std::size_t slot) const {
        auto v = traits::input(g_, n, slot);
        const std::size_t outs = traits::output_count(g_, v.node);
        if (v.port >= outs)
            throw graph_error("sgmatch::graph_error: node '" + std::string(traits::name(g_, n)) +
                              "' input " + std::to_string(slot) + " reads output " +
                              std::to_string(v.port) + " of '" +
                              std::string(traits::name(g_, v.node)) + "', which has " +
                              std::to_string(outs) + " output(s)");
        return v;
    }

    // ----- the straight-line path's element checks -----
    bool fast_check(const instr* e, N n, bool chained) {
        switch (e->kind) {
        case instr_kind::op:
            if (traits::kind(g_, n) != node_kind::op || !prog_.op_is(e, traits::op(g_, n)) || taken(n)) return false;
            if (e->n > 0 && traits::input_count(g_, n) != e->n + (chained ? 1u : 0u)) return false;
            push(n);
            return true;
        case instr_kind::guard:
            return fast_check(prog_.kid(e, 0), n, chained) && pred(e, n);
        case instr_kind::cap:
            if (!fast_check(prog_.kid(e, 0), n, chained)) return false;
            log_[log_n_++] = cap_entry<N>{e->capture(), n, 0};
            return true;
        default:
            return false;  // not emitted for fast programs
        }
    }

    // ----- resuming a continuation -----
    SGMATCH_NOINLINE bool resume(const cont* k, const from& f) {
        switch (k->kind) {
        case cont::finish:
            return finish(f);
        case cont::seq:
            return seq(k->e, k->i, f, k->next);
        case cont::rep:
            return count_ > k->saved && rep_step(k->e, k->i + 1, f, k->next);  // no empty iterations
        case cont::guard:
            if ((count_ > k->saved || k->e->leaf) && !pred(k->e, f.n)) {
                fail_pred(k->e, f.n);
                return false;
            }
            return resume(k->next, f);
        case cont::guard_val:
            if (!pred(k->e, k->v.node)) {
                fail_pred(k->e, k->v.node);
                return false;
            }
            return resume(k->next, f);
        case cont::cap:
            if (count_ == k->saved && !k->e->leaf) return resume(k->next, f);
            return record(k->e->capture(), f.n, 0, k->next, f);
        case cont::cap_val:
            return record(k->e->capture(), k->v.node, k->v.port, k->next, f);
        case cont::esc_exit: {
            --esc_depth_;
            const bool r = resume(k->next, f);
            ++esc_depth_;
            return r;
        }
        case cont::out_port: {
            from f3 = f;
            f3.port = k->e->port();
            return resume(k->next, f3);
        }
        case cont::operand:
            return operand_seq(k->e, k->v.node, k->slots, k->perm, k->i, k->next);
        }
        return false;
    }

    bool record(std::uint32_t cap, N n, std::uint32_t port, const cont* k, const from& f) {
        log_[log_n_++] = cap_entry<N>{cap, n, port};
        if (resume(k, f)) return true;
        --log_n_;
        return false;
    }

    // ----- op nodes (both positions); k is resumed at after(n) -----
    SGMATCH_NOINLINE bool op_at(const instr* e, N n, std::int32_t in_slot, const cont* k) {
        if (traits::kind(g_, n) != node_kind::op) {
            if constexpr (Explain) fail([&] { return "node " + quoted_name(n) + " is a graph input or constant, expected " + prog_.tag_names(e); });
            return false;
        }
        const std::uint32_t o = traits::op(g_, n);
        if (!prog_.op_is(e, o)) {
            if constexpr (Explain) fail([&] {
                return "node " + quoted_name(n) + " is " + std::string(traits::op_name(g_, n)) + ", expected " +
                       prog_.tag_names(e);
            });
            return false;
        }
        if (taken(n)) {
            if constexpr (Explain) fail([&] { return "node " + quoted_name(n) + " already belongs to another match"; });
            return false;
        }
        // A user of the chain's tail is downstream of every matched node, so in a DAG it cannot
        // be one of them; only anchors and operands (producers) are checked.
        if (in_slot < 0 && contains(n)) {
            if constexpr (Explain) fail([&] { return "node " + quoted_name(n) + " is already part of this match"; });
            return false;
        }
        const std::size_t saved = count_;
        push(n);
        const bool ok = e->n == 0 ? resume(k, after(n)) : operands(e, n, o, in_slot, k);
        if (!ok) count_ = saved;
        return ok;
    }

    SGMATCH_NOINLINE bool operands(const instr* e, N n, std::uint32_t o, std::int32_t in_slot, const cont* k) {
        const std::size_t m = e->n;
        const std::size_t have = traits::input_count(g_, n);
        const std::size_t need = m + (in_slot >= 0 ? 1 : 0);
        if (have != need) {
            if constexpr (Explain) fail([&] {
                return "node " + quoted_name(n) + " has " + std::to_string(have) + " input(s), the pattern expects " +
                       std::to_string(need);
            });
            return false;
        }
        std::uint32_t slots[max_operands];
        for (std::size_t s = 0, j = 0; s < have; ++s)
            if (static_cast<std::int32_t>(s) != in_slot) slots[j++] = static_cast<std::uint32_t>(s);
        std::uint32_t perm[max_operands];
        for (std::size_t i = 0; i < m; ++i) perm[i] = static_cast<std::uint32_t>(i);
        const bool comm = m > 1 && prog_.commutative(e, o);
        do {
            if (operand_seq(e, n, slots, perm, 0, k)) return true;
        } while (comm && next_permutation(perm, m));
        return false;
    }

    bool operand_seq(const instr* e, N n, const std::uint32_t* slots, const std::uint32_t* perm, std::uint32_t i,
                     const cont* k) {
        if (i == e->n) return resume(k, after(n));
        cont c{cont::operand, e, k};
        c.i = i + 1;
        c.v.node = n;
        c.slots = slots;
        c.perm = perm;
        return match_value(prog_.kid(e, i), input_of(n, slots[perm[i]]), 0, &c);
    }

    // ----- chain position -----
    static from after(N n) { return from{n, true, 0, -1}; }

    // Try `attempt(user, slot)` on each user of the value f points after.
    template <class A, class D>
    bool for_users(const from& f, A&& attempt, D&& describe) {
        const N t = f.n;
        const std::size_t uc = traits::user_count(g_, t);
        if (uc == 1) mark_closed(t);
        const std::size_t room = prog_.max_nodes - count_;
        if (uc > room && traits::kind(g_, t) == node_kind::op && !may_escape(t) &&
            distinct_users_exceed(t, uc, room)) {
            if constexpr (Explain) fail([&] {
                std::string users;
                for (std::size_t i = 0; i < uc; ++i)
                    users += (i ? ", " : "") + quoted_name(traits::user(g_, t, i).user);
                return "node " + quoted_name(t) + ": its output is used by " + std::to_string(uc) + " nodes (" + users +
                       ") but the rest of the pattern has room for " + std::to_string(room) +
                       "; an intermediate's users must all be inside the match";
            });
            return false;
        }
        for (std::size_t i = 0; i < uc; ++i) {
            const auto u = traits::user(g_, t, i);
            if (u.port != f.port) continue;
            if (f.slot >= 0 && u.slot != static_cast<std::uint32_t>(f.slot)) continue;
            if (attempt(u.user, static_cast<std::int32_t>(u.slot))) return true;
        }
        if constexpr (Explain) fail(
            [&] {
                std::string s = "node " + quoted_name(t) + ": no user of output " + std::to_string(f.port) +
                                (f.slot >= 0 ? " on input " + std::to_string(f.slot) : std::string()) +
                                " is " + describe();
                std::string users;
                for (std::size_t i = 0; i < uc; ++i) {
                    const auto u = traits::user(g_, t, i);
                    if (u.port != f.port) continue;
                    users += (users.empty() ? "" : ", ") + quoted_name(u.user) + " (" +
                             std::string(traits::op_name(g_, u.user)) + ")";
                }
                return s + (users.empty() ? " (it has no users)" : " (users: " + users + ")");
            },
            /*prefer=*/true);
        else
            (void)describe;
        return false;
    }

    // Whether t has more than `limit` distinct users (a user reading t twice counts once).
    bool distinct_users_exceed(N t, std::size_t uc, std::size_t limit) const {
        std::size_t distinct = 0;
        for (std::size_t i = 0; i < uc; ++i) {
            const N u = traits::user(g_, t, i).user;
            bool seen = false;
            for (std::size_t j = 0; j < i && !seen; ++j) seen = traits::user(g_, t, j).user == u;
            if (!seen && ++distinct > limit) return true;
        }
        return false;
    }

    bool may_escape(N n) const {
        for (std::size_t i = 0; i < count_; ++i)
            if (nodes_[i] == n) return (flags_[i] & escaping_flag) != 0;
        return false;
    }

    SGMATCH_NOINLINE bool any_at(N n, const cont* k) {
        if (traits::kind(g_, n) != node_kind::op) {
            if constexpr (Explain) fail([&] { return "node " + quoted_name(n) + " is not an op node"; });
            return false;
        }
        if (taken(n) || contains(n)) {
            if constexpr (Explain) fail([&] { return "node " + quoted_name(n) + " already belongs to a match"; });
            return false;
        }
        const std::size_t saved = count_;
        push(n);
        if (resume(k, after(n))) return true;
        count_ = saved;
        return false;
    }

    SGMATCH_NOINLINE bool leaf_at(const from& f, node_kind want, const cont* k) {
        if (f.after) {
            if constexpr (Explain) fail([&] { return "a graph input or constant cannot follow node " + quoted_name(f.n); });
            return false;
        }
        if (traits::kind(g_, f.n) != want) {
            if constexpr (Explain) fail([&] {
                return "node " + quoted_name(f.n) + " is not a " +
                       std::string(want == node_kind::input ? "graph input" : "constant");
            });
            return false;
        }
        return resume(k, after(f.n));
    }

    bool seq(const instr* e, std::uint32_t i, const from& f, const cont* k) {
        if (i == e->n) return resume(k, f);
        cont c{cont::seq, e, k};
        c.i = i + 1;
        return match_element(prog_.kid(e, i), f, &c);
    }

    bool rep_step(const instr* e, std::uint32_t i, const from& at, const cont* k) {
        if (i < e->max_count()) {
            cont c{cont::rep, e, k};
            c.i = i;
            c.saved = count_;
            if (match_element(prog_.kid(e, 0), at, &c)) return true;
        }
        return i >= e->min_count() && resume(k, at);
    }

    SGMATCH_NOINLINE bool match_element(const instr* e, const from& f, const cont* k) {
        switch (e->kind) {
        case instr_kind::op:
            if (!f.after) return op_at(e, f.n, -1, k);
            return for_users(
                f, [&](N u, std::int32_t slot) { return op_at(e, u, slot, k); },
                [&] { return prog_.tag_names(e); });
        case instr_kind::any:
            if (!f.after) return any_at(f.n, k);
            return for_users(f, [&](N u, std::int32_t) { return any_at(u, k); },
                             [] { return std::string("an op node"); });
        case instr_kind::input:
            return leaf_at(f, node_kind::input, k);
        case instr_kind::constant:
            return leaf_at(f, node_kind::constant, k);
        case instr_kind::chain:
            return seq(e, 0, f, k);
        case instr_kind::alt:
            for (std::uint32_t i = 0; i < e->n; ++i)
                if (match_element(prog_.kid(e, i), f, k)) return true;
            return false;
        case instr_kind::opt:
            return match_element(prog_.kid(e, 0), f, k) || resume(k, f);
        case instr_kind::rep:
            return rep_step(e, 0, f, k);
        case instr_kind::guard:
        case instr_kind::cap: {  // the predicate or the capture applies once the inner element matched
            cont c{e->kind == instr_kind::guard ? cont::guard : cont::cap, e, k};
            c.saved = count_;
            return match_element(prog_.kid(e, 0), f, &c);
        }
        case instr_kind::esc:
            return escaping(e, k, [&](const cont* c) { return match_element(prog_.kid(e, 0), f, c); });
        case instr_kind::in_port: {
            from f1 = f;
            if (f.after) f1.slot = static_cast<std::int32_t>(e->port());
            return match_element(prog_.kid(e, 0), f1, k);
        }
        case instr_kind::out_port: {
            const cont c{cont::out_port, e, k};
            return match_element(prog_.kid(e, 0), f, &c);
        }
        case instr_kind::ref:      // rejected at compile time in chain position
        case instr_kind::invalid:
            return false;
        }
        return false;
    }

    template <class F>
    bool escaping(const instr* e, const cont* k, F&& inner) {
        const cont c{cont::esc_exit, e, k};
        ++esc_depth_;
        const bool ok = inner(&c);
        --esc_depth_;
        return ok;
    }

    // ----- operand position: e describes the value v -----
    SGMATCH_NOINLINE bool match_value(const instr* e, value_ref<N> v, std::uint32_t want, const cont* k) {
        switch (e->kind) {
        case instr_kind::op:
            if (v.port != want) {
                if constexpr (Explain) fail([&] {
                    return "node " + quoted_name(v.node) + ": output " + std::to_string(v.port) +
                           " is used where output " + std::to_string(want) + " was expected";
                });
                return false;
            }
            return op_at(e, v.node, -1, k);
        case instr_kind::any:
            return resume(k, after(v.node));
        case instr_kind::input:
            if (traits::kind(g_, v.node) != node_kind::input) {
                if constexpr (Explain) fail([&] { return "node " + quoted_name(v.node) + " is not a graph input"; });
                return false;
            }
            return resume(k, after(v.node));
        case instr_kind::constant:
            if (traits::kind(g_, v.node) != node_kind::constant) {
                if constexpr (Explain) fail([&] { return "node " + quoted_name(v.node) + " is not a constant"; });
                return false;
            }
            return resume(k, after(v.node));
        case instr_kind::ref:
            for (std::size_t i = log_n_; i-- > 0;) {
                if (log_[i].cap != e->capture()) continue;
                if (log_[i].node == v.node && log_[i].port == v.port) return resume(k, after(v.node));
                if constexpr (Explain) fail([&] {
                    return "node " + quoted_name(v.node) + " is not " + prog_.ref_names[e->capture()]() + " (captured as " +
                           quoted_name(log_[i].node) + ")";
                });
                return false;
            }
            if constexpr (Explain) fail([&] { return prog_.ref_names[e->capture()]() + " is not captured before its ref<>"; });
            return false;
        case instr_kind::alt:
            for (std::uint32_t i = 0; i < e->n; ++i)
                if (match_value(prog_.kid(e, i), v, want, k)) return true;
            return false;
        case instr_kind::guard:
        case instr_kind::cap: {  // the predicate or the capture applies to v once the inner pattern matched
            cont c{e->kind == instr_kind::guard ? cont::guard_val : cont::cap_val, e, k};
            c.v = v;
            return match_value(prog_.kid(e, 0), v, want, &c);
        }
        case instr_kind::esc:
            return escaping(e, k, [&](const cont* c) { return match_value(prog_.kid(e, 0), v, want, c); });
        case instr_kind::out_port:
            return match_value(prog_.kid(e, 0), v, e->port(), k);
        default:  // not value patterns: rejected by op<T>(operands...)
            return false;
        }
    }

    // ----- the end of a candidate match: the closure rule -----
    SGMATCH_NOINLINE bool finish(const from& f) {
        if (count_ == 0) {
            if constexpr (Explain) fail([&] { return std::string("the pattern matched no node of its own"); });
            return false;
        }
        const N out = f.n;
        for (std::size_t i = 0; i < count_; ++i) {
            const N m = nodes_[i];
            if (flags_[i] != 0 || m == out) continue;  // escaping, or closed (checked on the way)
            const std::size_t uc = traits::user_count(g_, m);
            for (std::size_t j = 0; j < uc; ++j) {
                const N u = traits::user(g_, m, j).user;
                if (!contains(u)) {
                    if constexpr (Explain) fail(
                        [&] {
                            return "node " + quoted_name(m) + ": its output is also used by " + quoted_name(u) +
                                   ", outside the match";
                        },
                        /*prefer=*/true);  // a complete candidate's reason beats a partial one's
                    return false;
                }
            }
            if (adapter<G>::has_graph_output(g_, m)) {
                if constexpr (Explain) fail([&] { return "node " + quoted_name(m) + ": its output is a graph output, so it cannot be internal"; },
                     /*prefer=*/true);
                return false;
            }
        }
        if (veto_ != nullptr && !veto_(veto_obj_, nodes_.data(), count_)) {
            if constexpr (Explain) fail([&] { return std::string("the match was declined (size or legality)"); }, true);
            return false;
        }
        output_ = out;
        return true;
    }

    const G& g_;
    const program<G>& prog_;
    const std::uint8_t* taken_;
    explain_state* ex_;
    std::vector<N> nodes_;  // valid below count_
    static constexpr std::uint8_t escaping_flag = 1, closed_flag = 2;
    std::vector<std::uint8_t> flags_;
    std::size_t count_ = 0;
    std::vector<cap_entry<N>> log_;  // valid below log_n_
    std::size_t log_n_ = 0;
    int esc_depth_ = 0;
    N output_{};
    std::vector<fast_step> steps_;
    const void* veto_obj_ = nullptr;
    veto_fn veto_ = nullptr;
};

}  // namespace detail
SGMATCH_END_NAMESPACE
