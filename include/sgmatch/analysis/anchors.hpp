// sgmatch/analysis/anchors.hpp - op tags used by a pattern, and the ops its first node can be.
//
// The anchor set indexes candidates: a whole-graph scan visits only nodes whose op is one of
// the anchor tags. A pattern whose first node can be anything (any(), input(), constant()) has
// a wildcard anchor and is tried at every node.
#pragma once

#include <cstddef>
#include <type_traits>

#include "sgmatch/analysis/node_count.hpp"
#include "sgmatch/analysis/typelist.hpp"
#include "sgmatch/detail/config.hpp"
#include "sgmatch/pattern/ast.hpp"

SGMATCH_BEGIN_NAMESPACE
namespace detail {

// Every tag named anywhere in P (duplicates allowed), in pattern order.
template <class P, class = void>
struct all_tags {
    using type = tlist<>;
};
template <class P>
struct all_tags<P, std::void_t<pat::detail::unwrap_t<P>>> : all_tags<pat::detail::unwrap_t<P>> {};
template <class... Ts, class... Os>
struct all_tags<pat::op<pat::tags<Ts...>, Os...>> {
    using type = concat_t<tlist<Ts...>, typename all_tags<Os>::type...>;
};
template <class... Ps>
struct all_tags<pat::chain<Ps...>> {
    using type = concat_t<typename all_tags<Ps>::type...>;
};
template <class... Ps>
struct all_tags<pat::alt<Ps...>> {
    using type = concat_t<typename all_tags<Ps>::type...>;
};
template <class P>
struct all_tags<pat::opt<P>> : all_tags<P> {};
template <std::size_t Lo, std::size_t Hi, class P>
struct all_tags<pat::rep<Lo, Hi, P>> : all_tags<P> {};
template <class T, class P>
struct all_tags<pat::cap<T, P>> : all_tags<P> {};

// first<P>: the tags the first matched node may have; wildcard when it may be any node.
template <class Tags, bool Wild>
struct first_set {
    using tags = Tags;
    static constexpr bool wildcard = Wild;
};

template <class P, class = void>
struct first {
    using type = first_set<tlist<>, true>;  // any, input, constant, ref
};
template <class P>
struct first<P, std::void_t<pat::detail::unwrap_t<P>>> : first<pat::detail::unwrap_t<P>> {};
template <class... Ts, class... Os>
struct first<pat::op<pat::tags<Ts...>, Os...>> {
    using type = first_set<tlist<Ts...>, false>;
};
template <class... Fs>
struct first_union {
    using type = first_set<concat_t<typename Fs::tags...>, (Fs::wildcard || ...)>;
};
template <class... Ps>
struct first<pat::alt<Ps...>> {
    using type = typename first_union<typename first<Ps>::type...>::type;
};
template <class P>
struct first<pat::opt<P>> : first<P> {};  // the empty case is handled by the chain
template <std::size_t Lo, std::size_t Hi, class P>
struct first<pat::rep<Lo, Hi, P>> : first<P> {};
template <class T, class P>
struct first<pat::cap<T, P>> : first<P> {};

// A chain's first set: its first element's, plus the next one's while elements can be empty.
template <class... Ps>
struct chain_first;
template <>
struct chain_first<> {
    using type = first_set<tlist<>, true>;
};
template <class P, class... Rest>
struct chain_first<P, Rest...> {
    static constexpr bool can_skip = node_count<P>::value.min == 0 && node_count<P>::value.max > 0;
    using head = typename first<P>::type;
    using type = std::conditional_t<
        can_skip, typename first_union<head, typename chain_first<Rest...>::type>::type, head>;
};
template <class... Ps>
struct first<pat::chain<Ps...>> : chain_first<Ps...> {};

}  // namespace detail

/// Every op tag P mentions (may repeat).
template <class P>
using tags_t = typename detail::all_tags<std::decay_t<P>>::type;
/// The anchor tags of P (the ops its first node may have).
template <class P>
using anchor_tags_t = typename detail::first<std::decay_t<P>>::type::tags;
/// True when the first node of P may be any node.
template <class P>
constexpr bool anchor_is_wildcard_v = detail::first<std::decay_t<P>>::type::wildcard;

SGMATCH_END_NAMESPACE
