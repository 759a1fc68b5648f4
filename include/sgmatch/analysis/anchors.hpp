// sgmatch/analysis/anchors.hpp - op tags used by a pattern, and the ops its first node can be.
//
// The anchor set indexes candidates: a whole-graph scan visits only nodes whose op is one of
// the anchor tags. A pattern whose first node can be anything (any(), input(), constant()) has
// a wildcard anchor and is tried at every node. Both are folds over the pattern
// (pattern/fold.hpp); tag lists are hana::basic_tuples of hana::types.
#pragma once

#include <boost/hana/basic_tuple.hpp>
#include <boost/hana/type.hpp>

#include <cstddef>
#include <type_traits>

#include "sgmatch/analysis/node_count.hpp"
#include "sgmatch/detail/config.hpp"
#include "sgmatch/pattern/ast.hpp"
#include "sgmatch/pattern/fold.hpp"

SGMATCH_BEGIN_NAMESPACE
namespace detail {

// Every tag named anywhere in P (duplicates allowed), in pattern order.
template <class P, class... Rs>
struct tags_on {
    using type = pat::detail::cat_t<Rs...>;
};
template <class... Ts, class... Os, class... Rs>
struct tags_on<pat::op<pat::tags<Ts...>, Os...>, Rs...> {
    using type = pat::detail::cat_t<boost::hana::basic_tuple<boost::hana::type<Ts>...>, Rs...>;
};

// The tags the first matched node may have; wildcard when it may be any node.
template <class Tags, bool Wild>
struct first_set {
    using tags = Tags;
    static constexpr bool wildcard = Wild;
};
using wildcard_first = first_set<boost::hana::basic_tuple<>, true>;

template <class... Fs>
struct first_union {
    using type = first_set<pat::detail::cat_t<typename Fs::tags...>, (Fs::wildcard || ...)>;
};
template <class... Fs>
using first_union_t = typename first_union<Fs...>::type;

// A chain's first set: its first element's, plus the next one's while elements can be empty.
template <class Ps, class Fs>
struct chain_first;
template <>
struct chain_first<boost::hana::basic_tuple<>, boost::hana::basic_tuple<>> {
    using type = wildcard_first;
};
template <class P, class... Ps, class F, class... Fs>
struct chain_first<boost::hana::basic_tuple<P, Ps...>, boost::hana::basic_tuple<F, Fs...>> {
    static constexpr bool can_skip = node_count<P>::value.min == 0 && node_count<P>::value.max > 0;
    using type = typename std::conditional_t<
        can_skip,
        first_union<F, typename chain_first<boost::hana::basic_tuple<Ps...>, boost::hana::basic_tuple<Fs...>>::type>,
        first_union<F>>::type;
};

// any, input, constant, ref: any node; a wrapper: its child's (opt's empty case is the
// chain's to handle)
template <class P, class... Rs>
struct first_on {
    using type = pat::detail::only_or_t<wildcard_first, Rs...>;
};
template <class... Ts, class... Os, class... Rs>
struct first_on<pat::op<pat::tags<Ts...>, Os...>, Rs...> {
    using type = first_set<boost::hana::basic_tuple<boost::hana::type<Ts>...>, false>;
};
template <class... Ps, class... Rs>
struct first_on<pat::alt<Ps...>, Rs...> : first_union<Rs...> {};
template <class... Ps, class... Rs>
struct first_on<pat::chain<Ps...>, Rs...>
    : chain_first<boost::hana::basic_tuple<Ps...>, boost::hana::basic_tuple<Rs...>> {};

}  // namespace detail

/// Every op tag P mentions (may repeat), as a hana::basic_tuple of hana::types.
template <class P>
using tags_t = pat::fold_t<std::decay_t<P>, detail::tags_on>;
/// The anchor tags of P (the ops its first node may have), as a hana::basic_tuple of hana::types.
template <class P>
using anchor_tags_t = typename pat::fold_t<std::decay_t<P>, detail::first_on>::tags;
/// True when the first node of P may be any node.
template <class P>
constexpr bool anchor_is_wildcard_v = pat::fold_t<std::decay_t<P>, detail::first_on>::wildcard;

SGMATCH_END_NAMESPACE
