// sgmatch/analysis/captures.hpp - the captures of a pattern and the type of each result.
//
// A capture outside any optional part yields one node; inside optional() or an alternative it
// yields std::optional<node>; inside repeat<_, Max> with Max > 1 it yields std::vector<node>.
// Lists are hana::basic_tuples of hana::types, computed by folds over the pattern
// (pattern/fold.hpp).
#pragma once

#include <boost/hana/basic_tuple.hpp>
#include <boost/hana/type.hpp>

#include <cstddef>
#include <type_traits>

#include "sgmatch/detail/config.hpp"
#include "sgmatch/pattern/ast.hpp"
#include "sgmatch/pattern/fold.hpp"

SGMATCH_BEGIN_NAMESPACE

/// How many times a capture can be filled in one match.
enum class capture_kind { one = 0, optional = 1, many = 2 };

namespace detail {
namespace hana = boost::hana;

template <class Tag, capture_kind K>
struct capinfo {
    using tag = Tag;
    static constexpr capture_kind kind = K;
};

constexpr capture_kind kmax(capture_kind a, capture_kind b) {
    return static_cast<int>(a) > static_cast<int>(b) ? a : b;
}

/// Every capture of a list at least as optional as K.
template <capture_kind K, class L>
struct at_least;
template <capture_kind K, class... Cs>
struct at_least<K, hana::basic_tuple<Cs...>> {
    using type = hana::basic_tuple<hana::type<capinfo<typename Cs::type::tag, kmax(Cs::type::kind, K)>>...>;
};
template <capture_kind K, class L>
using at_least_t = typename at_least<K, L>::type;

// The captures: the children's in order; alternatives and optional parts make theirs optional,
// a repeat of more than one makes them many.
template <class P, class... Rs>
struct captures_on {
    using type = pat::detail::cat_t<Rs...>;
};
template <class... Ps, class... Rs>
struct captures_on<pat::alt<Ps...>, Rs...> {
    using type = at_least_t<capture_kind::optional, pat::detail::cat_t<Rs...>>;
};
template <class P, class R>
struct captures_on<pat::opt<P>, R> {
    using type = at_least_t<capture_kind::optional, R>;
};
template <std::size_t Lo, std::size_t Hi, class P, class R>
struct captures_on<pat::rep<Lo, Hi, P>, R> {
    using type = at_least_t<(Hi > 1 ? capture_kind::many : Lo == 0 ? capture_kind::optional : capture_kind::one), R>;
};
template <class T, class P, class R>
struct captures_on<pat::cap<T, P>, R> {
    using type = pat::detail::cat_t<hana::basic_tuple<hana::type<capinfo<T, capture_kind::one>>>, R>;
};

// The names referenced by ref<>.
template <class P, class... Rs>
struct refs_on {
    using type = pat::detail::cat_t<Rs...>;
};
template <class T>
struct refs_on<pat::ref<T>> {
    using type = hana::basic_tuple<hana::type<T>>;
};

template <class... Cs>
constexpr auto tags_of(hana::basic_tuple<Cs...>) {
    return hana::basic_tuple<hana::type<typename Cs::type::tag>...>{};
}

/// Index of the first hana::type<T> in a list of types (its length when absent).
template <class T, class... Xs>
constexpr std::size_t index_in(hana::basic_tuple<Xs...>) {
    constexpr bool same[] = {std::is_same_v<Xs, hana::type<T>>..., false};
    std::size_t i = 0;
    while (i < sizeof...(Xs) && !same[i]) ++i;
    return i;
}
/// How often hana::type<T> is in a list of types.
template <class T, class... Xs>
constexpr std::size_t count_in(hana::basic_tuple<Xs...>) {
    return (std::size_t{0} + ... + (std::is_same_v<Xs, hana::type<T>> ? 1 : 0));
}

template <class... Ns>
constexpr bool all_unique(hana::basic_tuple<Ns...>) {
    return ((count_in<typename Ns::type>(hana::basic_tuple<Ns...>{}) == 1) && ...);
}
template <class... Rs, class Names>
constexpr bool all_known(hana::basic_tuple<Rs...>, Names) {
    return ((count_in<typename Rs::type>(Names{}) >= 1) && ...);
}

template <std::size_t I, class... Cs>
constexpr capture_kind kind_at(hana::basic_tuple<Cs...>) {
    constexpr capture_kind ks[] = {Cs::type::kind..., capture_kind::one};
    return ks[I];
}

}  // namespace detail

/// The captures of P in pattern order: a hana::basic_tuple of hana::type<detail::capinfo<Tag,
/// kind>>.
template <class P>
using captures_t = pat::fold_t<std::decay_t<P>, detail::captures_on>;
/// The capture names of P in pattern order: a hana::basic_tuple of hana::type<Tag>.
template <class P>
using capture_names_t = decltype(detail::tags_of(captures_t<P>{}));

/// True when no capture name is used twice in P.
template <class P>
constexpr bool captures_unique_v = detail::all_unique(capture_names_t<P>{});
/// True when every ref<Name>() in P names a capture of P.
template <class P>
constexpr bool refs_known_v = detail::all_known(pat::fold_t<std::decay_t<P>, detail::refs_on>{}, capture_names_t<P>{});

/// True when Name is a capture of P.
template <class P, class Name>
constexpr bool has_capture_v = detail::count_in<Name>(capture_names_t<P>{}) > 0;

/// The position of capture Name among P's captures (their count when absent).
template <class P, class Name>
constexpr std::size_t capture_index_v = detail::index_in<Name>(capture_names_t<P>{});

/// The kind of capture Name in P (P must have it).
template <class P, class Name>
constexpr capture_kind capture_kind_v = detail::kind_at<capture_index_v<P, Name>>(captures_t<P>{});

SGMATCH_END_NAMESPACE
