// sgmatch/match/match.hpp - match one pattern at one node; typed captures; explain.
//
//   struct conv; struct bn;
//   constexpr auto p = op<Conv>().as<conv>() >> optional(op<BatchNorm>().as<bn>()) >> op<Relu>();
//   if (auto m = sgmatch::match(g, n, p)) {
//       auto [c, b] = m.get<conv, bn>();   // node_type, std::optional<node_type>
//   }
//   std::cout << sgmatch::explain(g, n, p);  // why it did not match
//
// A result is filled only on success. Rules (docs/design.md): `a >> b` - b reads output 0 of
// a's last node on any input unless pinned; every user of a matched node other than the last
// one must be inside the match (unless marked escaping), and an internal node may not be a graph
// output; commutative ops match operands in either order; alternatives are ordered; optional
// and repeat are greedy and backtrack.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <stdexcept>
#include <string>
#include <tuple>
#include <type_traits>
#include <vector>

#include "sgmatch/analysis/captures.hpp"
#include "sgmatch/analysis/node_count.hpp"
#include "sgmatch/analysis/notation.hpp"
#include "sgmatch/detail/config.hpp"
#include "sgmatch/graph/adapter.hpp"
#include "sgmatch/match/engine.hpp"
#include "sgmatch/pattern/ast.hpp"

SGMATCH_BEGIN_NAMESPACE

template <class G>
class op_index;
template <class G, class P>
class match_list;

/// The result of matching P on a graph of type G. Converts to true only on success.
template <class G, class P>
class match_result {
    static constexpr std::size_t max_n = max_nodes_v<P> == 0 ? 1 : max_nodes_v<P>;
    static constexpr std::size_t max_log = detail::cap_fills_v<P> == 0 ? 1 : detail::cap_fills_v<P>;

public:
    using node_type = typename graph_traits<G>::node_type;

    match_result() = default;

    explicit operator bool() const { return count_ != 0; }
    bool has_value() const { return count_ != 0; }

    /// The matched nodes, in pattern order (the anchor first).
    std::size_t size() const { return count_; }
    const node_type* begin() const { return nodes_.data(); }
    const node_type* end() const { return nodes_.data() + count_; }
    node_type operator[](std::size_t i) const { return nodes_[i]; }
    /// The first matched node (where the pattern was anchored, for op-first patterns).
    node_type front() const { return nodes_[0]; }
    /// The last node: the one whose outputs leave the match.
    node_type output() const { return output_; }
    bool contains(node_type n) const {
        for (std::size_t i = 0; i < count_; ++i)
            if (nodes_[i] == n) return true;
        return false;
    }

    /// The capture Name: a node_type, std::optional<node_type> or std::vector<node_type>
    /// depending on where it sits in the pattern (see capture_kind). Several names give a tuple,
    /// for structured bindings. On a failed match: std::logic_error (check the result first).
    template <class Name, class... More>
    auto get() const {
        if (count_ == 0)
            throw std::logic_error("sgmatch::match_result::get<Name>(): the match failed; check it first (if (m) ...)");
        if constexpr (sizeof...(More) > 0) {
            return std::make_tuple(get<Name>(), get<More>()...);
        } else {
            static_assert(has_capture_v<P, Name>,
                          "sgmatch::match_result::get<Name>(): Name is not a capture of this "
                          "pattern (capture with p.as<Name>() or capture<Name>(p))");
            if constexpr (!has_capture_v<P, Name>) {
                return node_type{};
            } else {
                constexpr auto kind = capture_kind_v<P, Name>;
                constexpr auto idx = static_cast<std::uint32_t>(capture_index_v<P, Name>);
                if constexpr (kind == capture_kind::many) {
                    std::vector<node_type> out;
                    for (std::size_t i = 0; i < log_n_; ++i)
                        if (log_[i].cap == idx) out.push_back(log_[i].node);
                    return out;
                } else {
                    std::optional<node_type> out;
                    for (std::size_t i = 0; i < log_n_; ++i)
                        if (log_[i].cap == idx) out = log_[i].node;
                    if constexpr (kind == capture_kind::one)
                        return *out;  // always filled on success
                    else
                        return out;
                }
            }
        }
    }

    /// The captured value (node and output port) of a one- or optional-kind capture.
    template <class Name>
    std::optional<value_ref<node_type>> value() const {
        static_assert(has_capture_v<P, Name>,
                      "sgmatch::match_result::value<Name>(): Name is not a capture of this pattern");
        constexpr auto idx = static_cast<std::uint32_t>(capture_index_v<P, Name>);
        std::optional<value_ref<node_type>> out;
        for (std::size_t i = 0; i < log_n_; ++i)
            if (log_[i].cap == idx) out = value_ref<node_type>{log_[i].node, log_[i].port};
        return out;
    }

private:
    template <class, class>
    friend class matcher;
    template <class G2, class P2, class F>
    friend std::size_t for_each_match(const op_index<G2>&, const P2&, F&&, std::vector<std::uint8_t>&);

    template <class, class>
    friend class match_list;

    explicit match_result(const detail::engine<G, false>& e)
        : match_result(e.nodes(), e.count(), e.log(), e.log_size(), e.output()) {}
    match_result(const node_type* nodes, std::size_t n, const detail::cap_entry<node_type>* log, std::size_t log_n,
                 node_type output)
        : count_(n), log_n_(log_n), output_(output) {
        for (std::size_t i = 0; i < count_; ++i) nodes_[i] = nodes[i];
        for (std::size_t i = 0; i < log_n_; ++i) log_[i] = log[i];
    }

    std::array<node_type, max_n> nodes_;  // valid below count_
    std::array<detail::cap_entry<node_type>, max_log> log_;  // valid below log_n_
    std::size_t count_ = 0;
    std::size_t log_n_ = 0;
    node_type output_{};
};

/// A pattern bound to one graph: op names resolved to the graph's op ids once.
template <class G, class P>
class matcher {
public:
    using node_type = typename graph_traits<G>::node_type;
    using result = match_result<G, P>;

    matcher(const G& g, const P& p) : g_(&g), p_(p) { detail::compile(g, p_, prog_); }
    // The program points into p_: no copies.
    matcher(const matcher&) = delete;
    matcher& operator=(const matcher&) = delete;

    /// Match with the pattern's first node at n. `taken`, when given, is indexed by
    /// graph_traits<G>::index and marks nodes that may not be used.
    /// escape_all: every matched node may have users outside the match (MXNet's semantics).
    result at(node_type n, const std::uint8_t* taken = nullptr, bool escape_all = false) const {
        detail::engine<G, false> e(*g_, prog_, taken, nullptr, escape_all);
        if (e.run(n)) return result(e);
        return result();
    }

    /// Why the pattern does or does not match at n.
    std::string explain(node_type n, const std::uint8_t* taken = nullptr) const {
        using traits = graph_traits<G>;
        detail::explain_state ex;
        detail::engine<G, true> e(*g_, prog_, taken, &ex);
        const std::string head = "pattern " + notation(p_) + " at node '" +
                                 std::string(traits::name(*g_, n)) + "' (" +
                                 std::string(traits::op_name(*g_, n)) + "): ";
        if (e.run(n)) {
            std::string s = head + "matched " + std::to_string(e.count()) + " node(s):";
            for (std::size_t i = 0; i < e.count(); ++i)
                s += " " + std::string(traits::name(*g_, e.nodes()[i]));
            return s;
        }
        std::string s = head + "no match\n  reason: " + ex.message;
        if (!ex.matched.empty()) {
            s += "\n  matched so far:";
            for (auto& m : ex.matched) s += " " + m;
        }
        return s;
    }

    const G& graph() const { return *g_; }
    const P& pattern() const { return p_; }
    const detail::program<G>& program() const { return prog_; }

private:
    const G* g_;
    P p_;
    detail::program<G> prog_;
};

namespace detail {

// The checks every entry point makes first: one static_assert for the first problem found.
template <class G, class P>
constexpr bool check_entry() {
    if constexpr (!check_graph<G>()) {
        return false;
    } else {
        static_assert(is_pattern_v<P>,
                      "sgmatch::match / explain / find_all(g, ..., p): p is not a pattern (build one "
                      "with op<T>(), any(), input(), constant(), >>, |, optional(), repeat<>())");
        if constexpr (!is_pattern_v<P>) {
            return false;
        } else {
            static_assert(captures_unique_v<P>,
                          "sgmatch: a capture name is used twice in this pattern; each "
                          "p.as<Name>() / capture<Name>(p) needs its own name");
            static_assert(refs_known_v<P>,
                          "sgmatch: ref<Name>() names a capture that this pattern never makes");
            return captures_unique_v<P> && refs_known_v<P>;
        }
    }
}

}  // namespace detail

/// Match p with its first node at n. The result converts to true on success.
template <class G, class Node, class P>
auto match(const G& g, const Node& n, const P& p) {
    if constexpr (detail::check_entry<G, P>())
        return matcher<G, P>(g, p).at(n);
    else
        return false;
}

/// Text saying whether p matches at n and, if not, where and why it failed.
template <class G, class Node, class P>
std::string explain(const G& g, const Node& n, const P& p) {
    if constexpr (detail::check_entry<G, P>())
        return matcher<G, P>(g, p).explain(n);
    else
        return {};
}

SGMATCH_END_NAMESPACE
