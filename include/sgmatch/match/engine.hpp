// sgmatch/match/engine.hpp - matching one pattern at one node (no promises: use match.hpp).
//
// Matching is one overload set over the pattern's node types, in continuation-passing style:
// each overload matches its node and calls the continuation with where the match goes next;
// a false return backtracks, and whoever changed state restores it before returning false.
// Search is bounded by the pattern: an intermediate's users must all be inside the match, so
// a node with more users than the pattern has nodes left is rejected before any of them is
// tried. Explanations are compiled in only when Explain is true.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <string>
#include <tuple>
#include <type_traits>
#include <utility>
#include <vector>

#include "sgmatch/analysis/anchors.hpp"
#include "sgmatch/analysis/captures.hpp"
#include "sgmatch/analysis/node_count.hpp"
#include "sgmatch/analysis/notation.hpp"
#include "sgmatch/analysis/typelist.hpp"
#include "sgmatch/detail/config.hpp"
#include "sgmatch/detail/type_name.hpp"
#include "sgmatch/graph/adapter.hpp"
#include "sgmatch/match/node_view.hpp"
#include "sgmatch/pattern/ast.hpp"
#include "sgmatch/pattern/tag.hpp"

SGMATCH_BEGIN_NAMESPACE
namespace detail {

// Most capture entries one match can record.
template <class P, class = void>
struct cap_fills {
    static constexpr std::size_t value = 0;
};
template <class P>
struct cap_fills<P, std::void_t<pat::detail::unwrap_t<P>>> : cap_fills<pat::detail::unwrap_t<P>> {};
template <class T, class... Os>
struct cap_fills<pat::op<T, Os...>> {
    static constexpr std::size_t value = (std::size_t{0} + ... + cap_fills<Os>::value);
};
template <class... Ps>
struct cap_fills<pat::chain<Ps...>> {
    static constexpr std::size_t value = (std::size_t{0} + ... + cap_fills<Ps>::value);
};
template <class... Ps>
struct cap_fills<pat::alt<Ps...>> {
    static constexpr std::size_t value = max_of(0, cap_fills<Ps>::value...);
};
template <class P>
struct cap_fills<pat::opt<P>> : cap_fills<P> {};
template <std::size_t Lo, std::size_t Hi, class P>
struct cap_fills<pat::rep<Lo, Hi, P>> {
    static constexpr std::size_t value = Hi * cap_fills<P>::value;
};
template <class T, class P>
struct cap_fills<pat::cap<T, P>> {
    static constexpr std::size_t value = 1 + cap_fills<P>::value;
};

template <class P>
struct is_leaf : std::false_type {};
template <>
struct is_leaf<pat::graph_input> : std::true_type {};
template <>
struct is_leaf<pat::constant> : std::true_type {};
template <class P, class F>
struct is_leaf<pat::filter<P, F>> : is_leaf<P> {};
template <class T, class P>
struct is_leaf<pat::cap<T, P>> : is_leaf<P> {};
template <class T, class P>
struct is_leaf<pat::named<T, P>> : is_leaf<P> {};

// std::next_permutation, without <algorithm>'s include cost.
template <std::size_t M>
bool next_permutation(std::array<std::uint32_t, M>& a) {
    if (M < 2) return false;
    std::size_t i = M - 1;
    while (i > 0 && a[i - 1] >= a[i]) --i;
    if (i == 0) return false;
    std::size_t j = M - 1;
    while (a[j] <= a[i - 1]) --j;
    const std::uint32_t t = a[i - 1];
    a[i - 1] = a[j];
    a[j] = t;
    for (std::size_t l = i, r = M - 1; l < r; ++l, --r) {
        const std::uint32_t u = a[l];
        a[l] = a[r];
        a[r] = u;
    }
    return true;
}

// Op ids of each tag a pattern names, resolved once per graph.
template <class TagList>
struct op_table;
template <class... Ts>
struct op_table<tlist<Ts...>> {
    static constexpr std::size_t tag_count = sizeof...(Ts);
    static constexpr std::size_t width = max_of(1, op_tag_traits<Ts>::alias_count...);
    static constexpr std::uint32_t none = 0xffffffffu;  // never a real op id (ids are < op_count)
    struct ids {
        std::array<std::uint32_t, width> id = filled();
        std::uint32_t n = 0;
        // Compares against every slot (unused ones hold `none`): no loop on n in the hot path.
        bool has(std::uint32_t o) const { return has_impl(o, std::make_index_sequence<width>{}); }
        template <std::size_t... I>
        bool has_impl(std::uint32_t o, std::index_sequence<I...>) const {
            return ((id[I] == o) + ...) != 0;  // no short-circuit branches; an int sum keeps clang quiet
        }
        static constexpr std::array<std::uint32_t, width> filled() {
            std::array<std::uint32_t, width> a{};
            for (auto& x : a) x = none;
            return a;
        }
    };
    std::array<ids, tag_count == 0 ? 1 : tag_count> by_tag{};

    template <class G>
    explicit op_table(const G& g) {
        std::size_t t = 0;
        (fill<Ts>(g, by_tag[t++]), ...);
    }
    op_table() = default;

    template <class Tag, class G>
    static void fill(const G& g, ids& out) {
        for (std::size_t a = 0; a < op_tag_traits<Tag>::alias_count; ++a) {
            auto o = graph_traits<G>::find_op(g, op_tag_traits<Tag>::alias(a));
            if (o && !out.has(*o)) out.id[out.n++] = *o;
        }
    }
    template <class Tag>
    const ids& of() const {
        return by_tag[index_of<Tag, tlist<Ts...>>::value];
    }
};

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

// Patterns the straight-line path handles: chains of op elements whose operands are all plain
// any(), with captures, predicates and names allowed.
template <class E>
struct fast_elem : std::false_type {};
template <class T, class... Os>
struct fast_elem<pat::op<T, Os...>> : std::bool_constant<(std::is_same_v<Os, pat::any> && ...)> {};
template <class P, class F>
struct fast_elem<pat::filter<P, F>> : fast_elem<P> {};
template <class Tag, class P>
struct fast_elem<pat::cap<Tag, P>> : fast_elem<P> {};
template <class Tag, class P>
struct fast_elem<pat::named<Tag, P>> : fast_elem<P> {};
template <class P>
struct fast_pattern : fast_elem<P> {};
template <class... Ps>
struct fast_pattern<pat::chain<Ps...>> : std::bool_constant<(fast_elem<Ps>::value && ...)> {};

enum class fast_result { matched, failed, fallback };

template <class P>
struct is_chain : std::false_type {};
template <class... Ps>
struct is_chain<pat::chain<Ps...>> : std::true_type {};

template <class G, class P, bool Explain>
class engine {
public:
    using traits = graph_traits<G>;
    using N = typename traits::node_type;
    using from = from_t<N>;
    using table = op_table<tags_t<P>>;
    using names = capture_names_t<P>;
    static constexpr std::size_t max_n = max_nodes_v<P> == 0 ? 1 : max_nodes_v<P>;
    static constexpr std::size_t max_log = cap_fills<P>::value == 0 ? 1 : cap_fills<P>::value;

    engine(const G& g, const table& ops, const std::uint8_t* taken, explain_state* ex)
        : g_(g), ops_(ops), taken_(taken), ex_(ex) {}

    /// Match p with its first node at n. On success the state holds the match.
    bool run(const P& p, N n) {
        count_ = 0;
        log_n_ = 0;  // esc_depth_ is balanced by every path
        return elem(p, from{n, false, 0, -1}, [&](const from& f) { return finish(f); });
    }

    /// The straight-line path for fast_pattern<P> on a checked graph (scans only). It follows
    /// single uses; where a node has several users it gives up (fallback) and the caller runs
    /// the general engine, so both give the same result. Without choices along the way, a
    /// failure here is a failure there too.
    fast_result run_fast(const P& p, N n) {
        static_assert(fast_pattern<P>::value, "sgmatch: internal: run_fast on a pattern it cannot handle");
        count_ = 0;
        log_n_ = 0;
        N cur = n;
        fast_result r = fast_result::matched;
        bool chained = false;
        auto step = [&](const auto& e) {  // returns true to stop
            if (chained) {
                const std::size_t uc = traits::user_count(g_, cur);
                if (uc != 1) {
                    r = uc == 0 ? fast_result::failed : fast_result::fallback;
                    return true;
                }
                const auto u = traits::user(g_, cur, 0);
                if (u.port != 0 || adapter<G>::has_graph_output(g_, cur)) {
                    r = fast_result::failed;  // not on output 0, or an internal graph output
                    return true;
                }
                cur = u.user;
            }
            if (!fast_check(e, cur, chained)) {
                r = fast_result::failed;
                return true;
            }
            chained = true;
            return false;
        };
        if constexpr (is_chain<P>::value)
            p.items.any_of(step);
        else
            step(p);
        output_ = cur;
        return r;
    }

    // State of a successful match.
    std::size_t count() const { return count_; }
    const N* nodes() const { return nodes_.data(); }
    std::size_t log_size() const { return log_n_; }
    const cap_entry<N>* log() const { return log_.data(); }
    N output() const { return output_; }

private:
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
    std::string nm(N n) const { return "'" + std::string(traits::name(g_, n)) + "'"; }

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

    template <class... Ts>
    bool op_is(pat::tags<Ts...>, std::uint32_t o) const {
        return (ops_.template of<Ts>().has(o) || ...);
    }
    template <class... Ts>
    bool commutative(pat::tags<Ts...>, std::uint32_t o) const {
        return ((ops_.template of<Ts>().has(o) && op_tag_traits<Ts>::commutative) || ...);
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
    template <class T, class... Os>
    bool fast_check(const pat::op<T, Os...>&, N n, bool chained) {
        if (traits::kind(g_, n) != node_kind::op || !op_is(T{}, traits::op(g_, n)) || taken(n)) return false;
        if constexpr (sizeof...(Os) > 0)
            if (traits::input_count(g_, n) != sizeof...(Os) + (chained ? 1 : 0)) return false;
        push(n);
        return true;
    }
    template <class P2, class F>
    bool fast_check(const pat::filter<P2, F>& w, N n, bool chained) {
        return fast_check(w.p, n, chained) && w.pred(node_view<G>(g_, n));
    }
    template <class T, class P2>
    bool fast_check(const pat::cap<T, P2>& c, N n, bool chained) {
        if (!fast_check(c.p, n, chained)) return false;
        push_capture<T>(n, 0);
        return true;
    }
    template <class T, class P2>
    bool fast_check(const pat::named<T, P2>& e, N n, bool chained) {
        return fast_check(e.p, n, chained);
    }

    // ----- op nodes (both positions) -----
    template <class T, class... Os, class K>
    bool op_at(const pat::op<T, Os...>& e, N n, std::int32_t in_slot, K&& k) {
        if (traits::kind(g_, n) != node_kind::op) {
            if constexpr (Explain) fail([&] { return "node " + nm(n) + " is a graph input or constant, expected " + tag_names(T{}); });
            return false;
        }
        const std::uint32_t o = traits::op(g_, n);
        if (!op_is(T{}, o)) {
            if constexpr (Explain) fail([&] {
                return "node " + nm(n) + " is " + std::string(traits::op_name(g_, n)) + ", expected " +
                       tag_names(T{});
            });
            return false;
        }
        if (taken(n)) {
            if constexpr (Explain) fail([&] { return "node " + nm(n) + " already belongs to another match"; });
            return false;
        }
        // A user of the chain's tail is downstream of every matched node, so in a DAG it cannot
        // be one of them; only anchors and operands (producers) are checked.
        if (in_slot < 0 && contains(n)) {
            if constexpr (Explain) fail([&] { return "node " + nm(n) + " is already part of this match"; });
            return false;
        }
        const std::size_t saved = count_;
        push(n);
        bool ok;
        if constexpr (sizeof...(Os) == 0)
            ok = k();
        else
            ok = operands(e, n, o, in_slot, k);
        if (!ok) count_ = saved;
        return ok;
    }

    template <class T, class... Os, class K>
    bool operands(const pat::op<T, Os...>& e, N n, std::uint32_t o, std::int32_t in_slot, K& k) {
        constexpr std::size_t M = sizeof...(Os);
        const std::size_t have = traits::input_count(g_, n);
        const std::size_t need = M + (in_slot >= 0 ? 1 : 0);
        if (have != need) {
            if constexpr (Explain) fail([&] {
                return "node " + nm(n) + " has " + std::to_string(have) + " input(s), the pattern expects " +
                       std::to_string(need);
            });
            return false;
        }
        std::array<std::uint32_t, M> slots{};
        for (std::size_t s = 0, j = 0; s < have; ++s)
            if (static_cast<std::int32_t>(s) != in_slot) slots[j++] = static_cast<std::uint32_t>(s);
        std::array<std::uint32_t, M> perm{};
        for (std::size_t i = 0; i < M; ++i) perm[i] = static_cast<std::uint32_t>(i);
        const bool comm = M > 1 && commutative(T{}, o);
        do {
            if (operand_seq<0>(e.operands, n, slots, perm, k)) return true;
        } while (comm && next_permutation(perm));
        return false;
    }

    template <std::size_t I, class Tup, std::size_t M, class K>
    bool operand_seq(const Tup& ops, N n, const std::array<std::uint32_t, M>& slots,
                     const std::array<std::uint32_t, M>& perm, K& k) {
        if constexpr (I == M) {
            return k();
        } else {
            const std::uint32_t slot = slots[perm[I]];
            return val(std::get<I>(ops), input_of(n, slot), 0,
                       [&] { return operand_seq<I + 1>(ops, n, slots, perm, k); });
        }
    }

    // ----- chain position -----
    static from after(N n) { return from{n, true, 0, -1}; }

    // Try `attempt(user, slot)` on each user of the value f points after.
    template <class A, class D>
    bool for_users(const from& f, A&& attempt, D&& describe) {
        const N t = f.n;
        const std::size_t uc = traits::user_count(g_, t);
        if (uc == 1) mark_closed(t);
        if (uc > max_n - count_ && traits::kind(g_, t) == node_kind::op && !may_escape(t) &&
            distinct_users_exceed(t, uc, max_n - count_)) {
            if constexpr (Explain) fail([&] {
                std::string users;
                for (std::size_t i = 0; i < uc; ++i)
                    users += (i ? ", " : "") + nm(traits::user(g_, t, i).user);
                return "node " + nm(t) + ": its output is used by " + std::to_string(uc) + " nodes (" + users +
                       ") but the rest of the pattern has room for " + std::to_string(max_n - count_) +
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
                std::string s = "node " + nm(t) + ": no user of output " + std::to_string(f.port) +
                                (f.slot >= 0 ? " on input " + std::to_string(f.slot) : std::string()) +
                                " is " + describe();
                std::string users;
                for (std::size_t i = 0; i < uc; ++i) {
                    const auto u = traits::user(g_, t, i);
                    if (u.port != f.port) continue;
                    users += (users.empty() ? "" : ", ") + nm(u.user) + " (" +
                             std::string(traits::op_name(g_, u.user)) + ")";
                }
                return s + (users.empty() ? " (it has no users)" : " (users: " + users + ")");
            },
            /*prefer=*/true);
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

    template <class T, class... Os, class K>
    bool elem(const pat::op<T, Os...>& e, const from& f, K&& k) {
        if (!f.after) return op_at(e, f.n, -1, [&] { return k(after(f.n)); });
        return for_users(
            f, [&](N u, std::int32_t slot) { return op_at(e, u, slot, [&] { return k(after(u)); }); },
            [&] { return tag_names(T{}); });
    }

    template <class K>
    bool any_at(N n, K& k) {
        if (traits::kind(g_, n) != node_kind::op) {
            if constexpr (Explain) fail([&] { return "node " + nm(n) + " is not an op node"; });
            return false;
        }
        if (taken(n) || contains(n)) {
            if constexpr (Explain) fail([&] { return "node " + nm(n) + " already belongs to a match"; });
            return false;
        }
        const std::size_t saved = count_;
        push(n);
        if (k(after(n))) return true;
        count_ = saved;
        return false;
    }
    template <class K>
    bool elem(const pat::any&, const from& f, K&& k) {
        if (!f.after) return any_at(f.n, k);
        return for_users(f, [&](N u, std::int32_t) { return any_at(u, k); }, [] { return std::string("an op node"); });
    }

    template <class K>
    bool leaf_at(const from& f, node_kind want, K& k) {
        if (f.after) {
            if constexpr (Explain) fail([&] { return "a graph input or constant cannot follow node " + nm(f.n); });
            return false;
        }
        if (traits::kind(g_, f.n) != want) {
            if constexpr (Explain) fail([&] {
                return "node " + nm(f.n) + " is not a " +
                       std::string(want == node_kind::input ? "graph input" : "constant");
            });
            return false;
        }
        return k(after(f.n));
    }
    template <class K>
    bool elem(const pat::graph_input&, const from& f, K&& k) {
        return leaf_at(f, node_kind::input, k);
    }
    template <class K>
    bool elem(const pat::constant&, const from& f, K&& k) {
        return leaf_at(f, node_kind::constant, k);
    }
    template <class T, class K>
    bool elem(const pat::ref<T>&, const from&, K&&) {
        static_assert(sizeof(T*) == 0,
                      "sgmatch: ref<Name>() can only be an operand, as in op<Mul>(ref<Name>())");
        return false;
    }
    template <class K>
    bool elem(const pat::invalid&, const from&, K&&) {
        return false;
    }

    template <class... Ps, class K>
    bool elem(const pat::chain<Ps...>& c, const from& f, K&& k) {
        return seq(c.items, leaves_of(tlist<Ps...>{}, std::index_sequence_for<Ps...>{}), f, k);
    }
    // The leaves of a chain as a type list, so that each step names its own element directly.
    template <class... Ps, std::size_t... I>
    static tlist<pat::detail::leaf<I, Ps>...> leaves_of(tlist<Ps...>, std::index_sequence<I...>) {
        return {};
    }
    template <class Pack, class K>
    bool seq(const Pack&, tlist<>, const from& f, K& k) {
        return k(f);
    }
    template <class Pack, std::size_t I, class E, class... Rest, class K>
    bool seq(const Pack& items, tlist<pat::detail::leaf<I, E>, Rest...>, const from& f, K& k) {
        return elem(static_cast<const pat::detail::leaf<I, E>&>(items).value, f,
                    [&](const from& f2) { return seq(items, tlist<Rest...>{}, f2, k); });
    }

    template <class... Ps, class K>
    bool elem(const pat::alt<Ps...>& a, const from& f, K&& k) {
        return a.items.any_of([&](const auto& e) { return elem(e, f, k); });
    }

    template <class P2, class K>
    bool elem(const pat::opt<P2>& o, const from& f, K&& k) {
        return elem(o.p, f, k) || k(f);
    }

    template <std::size_t Lo, std::size_t Hi, class P2, class K>
    bool elem(const pat::rep<Lo, Hi, P2>& r, const from& f, K&& k) {
        auto step = [&](auto& self, std::size_t i, const from& at) -> bool {
            if (i < Hi) {
                const std::size_t start = count_;
                if (elem(r.p, at, [&](const from& f2) {
                        return count_ > start && self(self, i + 1, f2);  // no empty iterations
                    }))
                    return true;
            }
            if constexpr (Lo == 0)
                return k(at);
            else
                return i >= Lo && k(at);
        };
        return step(step, 0, f);
    }

    template <class P2, class F, class K>
    bool elem(const pat::filter<P2, F>& w, const from& f, K&& k) {
        const std::size_t saved = count_;
        return elem(w.p, f, [&](const from& f2) {
            if ((count_ > saved || is_leaf<P2>::value) && !w.pred(node_view<G>(g_, f2.n))) {
                if constexpr (Explain) fail([&] { return "node " + nm(f2.n) + " fails the predicate {" + describe_pred(w.pred) + "}"; });
                return false;
            }
            return k(f2);
        });
    }

    template <class T, class P2, class K>
    bool elem(const pat::cap<T, P2>& c, const from& f, K&& k) {
        const std::size_t saved = count_;
        return elem(c.p, f, [&](const from& f2) {
            if (count_ == saved && !is_leaf<P2>::value) return k(f2);
            return record<T>(f2.n, 0, [&] { return k(f2); });
        });
    }

    template <class P2, class K>
    bool elem(const pat::esc<P2>& e, const from& f, K&& k) {
        ++esc_depth_;
        const bool ok = elem(e.p, f, [&](const from& f2) {
            --esc_depth_;
            const bool r = k(f2);
            ++esc_depth_;
            return r;
        });
        --esc_depth_;
        return ok;
    }

    template <std::size_t I, class P2, class K>
    bool elem(const pat::in_port<I, P2>& e, const from& f, K&& k) {
        from f1 = f;
        if (f.after) f1.slot = static_cast<std::int32_t>(I);
        return elem(e.p, f1, k);
    }

    template <std::size_t I, class P2, class K>
    bool elem(const pat::out_port<I, P2>& e, const from& f, K&& k) {
        return elem(e.p, f, [&](const from& f2) {
            from f3 = f2;
            f3.port = static_cast<std::uint32_t>(I);
            return k(f3);
        });
    }

    template <class T, class P2, class K>
    bool elem(const pat::named<T, P2>& e, const from& f, K&& k) {
        return elem(e.p, f, k);
    }

    // ----- operand position: p describes the value v -----
    template <class T, class... Os, class K>
    bool val(const pat::op<T, Os...>& e, value_ref<N> v, std::uint32_t want, K&& k) {
        if (v.port != want) {
            if constexpr (Explain) fail([&] {
                return "node " + nm(v.node) + ": output " + std::to_string(v.port) +
                       " is used where output " + std::to_string(want) + " was expected";
            });
            return false;
        }
        return op_at(e, v.node, -1, k);
    }
    template <class K>
    bool val(const pat::any&, value_ref<N>, std::uint32_t, K&& k) {
        return k();
    }
    template <class K>
    bool val(const pat::graph_input&, value_ref<N> v, std::uint32_t, K&& k) {
        if (traits::kind(g_, v.node) != node_kind::input) {
            if constexpr (Explain) fail([&] { return "node " + nm(v.node) + " is not a graph input"; });
            return false;
        }
        return k();
    }
    template <class K>
    bool val(const pat::constant&, value_ref<N> v, std::uint32_t, K&& k) {
        if (traits::kind(g_, v.node) != node_kind::constant) {
            if constexpr (Explain) fail([&] { return "node " + nm(v.node) + " is not a constant"; });
            return false;
        }
        return k();
    }
    template <class T, class K>
    bool val(const pat::ref<T>&, value_ref<N> v, std::uint32_t, K&& k) {
        constexpr auto idx = static_cast<std::uint32_t>(index_of<T, names>::value);
        for (std::size_t i = log_n_; i-- > 0;) {
            if (log_[i].cap != idx) continue;
            if (log_[i].node == v.node && log_[i].port == v.port) return k();
            if constexpr (Explain) fail([&] {
                return "node " + nm(v.node) + " is not " + type_name<T>() + " (captured as " +
                       nm(log_[i].node) + ")";
            });
            return false;
        }
        if constexpr (Explain) fail([&] { return type_name<T>() + " is not captured before its ref<>"; });
        return false;
    }
    template <class K>
    bool val(const pat::invalid&, value_ref<N>, std::uint32_t, K&&) {
        return false;
    }
    template <class... Ps, class K>
    bool val(const pat::alt<Ps...>& a, value_ref<N> v, std::uint32_t want, K&& k) {
        return a.items.any_of([&](const auto& e) { return val(e, v, want, k); });
    }
    template <class P2, class F, class K>
    bool val(const pat::filter<P2, F>& w, value_ref<N> v, std::uint32_t want, K&& k) {
        return val(w.p, v, want, [&] {
            if (!w.pred(node_view<G>(g_, v.node))) {
                if constexpr (Explain) fail([&] { return "node " + nm(v.node) + " fails the predicate {" + describe_pred(w.pred) + "}"; });
                return false;
            }
            return k();
        });
    }
    template <class T, class P2, class K>
    bool val(const pat::cap<T, P2>& c, value_ref<N> v, std::uint32_t want, K&& k) {
        return val(c.p, v, want, [&] { return record<T>(v.node, v.port, k); });
    }
    template <class P2, class K>
    bool val(const pat::esc<P2>& e, value_ref<N> v, std::uint32_t want, K&& k) {
        ++esc_depth_;
        const bool ok = val(e.p, v, want, [&] {
            --esc_depth_;
            const bool r = k();
            ++esc_depth_;
            return r;
        });
        --esc_depth_;
        return ok;
    }
    template <std::size_t I, class P2, class K>
    bool val(const pat::out_port<I, P2>& e, value_ref<N> v, std::uint32_t, K&& k) {
        return val(e.p, v, static_cast<std::uint32_t>(I), k);
    }
    template <class T, class P2, class K>
    bool val(const pat::named<T, P2>& e, value_ref<N> v, std::uint32_t want, K&& k) {
        return val(e.p, v, want, k);
    }

    template <class T>
    void push_capture(N n, std::uint32_t port) {
        log_[log_n_++] = cap_entry<N>{static_cast<std::uint32_t>(index_of<T, names>::value), n, port};
    }
    template <class T, class K>
    bool record(N n, std::uint32_t port, K&& k) {
        push_capture<T>(n, port);
        if (k()) return true;
        --log_n_;
        return false;
    }

    // ----- the end of a candidate match: the closure rule -----
    bool finish(const from& f) {
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
                            return "node " + nm(m) + ": its output is also used by " + nm(u) +
                                   ", outside the match";
                        },
                        /*prefer=*/true);  // a complete candidate's reason beats a partial one's
                    return false;
                }
            }
            if (adapter<G>::has_graph_output(g_, m)) {
                if constexpr (Explain) fail([&] { return "node " + nm(m) + ": its output is a graph output, so it cannot be internal"; },
                     /*prefer=*/true);
                return false;
            }
        }
        output_ = out;
        return true;
    }

    const G& g_;
    const table& ops_;
    const std::uint8_t* taken_;
    explain_state* ex_;
    std::array<N, max_n> nodes_;  // valid below count_
    static constexpr std::uint8_t escaping_flag = 1, closed_flag = 2;
    std::array<std::uint8_t, max_n> flags_;
    std::size_t count_ = 0;
    std::array<cap_entry<N>, max_log> log_;  // valid below log_n_
    std::size_t log_n_ = 0;
    int esc_depth_ = 0;
    N output_{};
};

}  // namespace detail
SGMATCH_END_NAMESPACE
