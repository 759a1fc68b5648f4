// sgmatch/analysis/captures.hpp - the captures of a pattern and the type of each result.
//
// A capture outside any optional part yields one node; inside optional() or an alternative it
// yields std::optional<node>; inside repeat<_, Max> with Max > 1 it yields std::vector<node>.
#pragma once

#include <cstddef>
#include <type_traits>

#include "sgmatch/analysis/typelist.hpp"
#include "sgmatch/detail/config.hpp"
#include "sgmatch/pattern/ast.hpp"

SGMATCH_BEGIN_NAMESPACE

/// How many times a capture can be filled in one match.
enum class capture_kind { one = 0, optional = 1, many = 2 };

namespace detail {

template <class Tag, capture_kind K>
struct capinfo {
    using tag = Tag;
    static constexpr capture_kind kind = K;
};

constexpr capture_kind kmax(capture_kind a, capture_kind b) {
    return static_cast<int>(a) > static_cast<int>(b) ? a : b;
}

template <class P, capture_kind K, class = void>
struct captures {
    using type = tlist<>;  // leaves
};
template <class P, capture_kind K>
struct captures<P, K, std::void_t<pat::detail::unwrap_t<P>>> : captures<pat::detail::unwrap_t<P>, K> {};
template <class T, class... Os, capture_kind K>
struct captures<pat::op<T, Os...>, K> {
    using type = concat_t<typename captures<Os, K>::type...>;
};
template <class... Ps, capture_kind K>
struct captures<pat::chain<Ps...>, K> {
    using type = concat_t<typename captures<Ps, K>::type...>;
};
template <class... Ps, capture_kind K>
struct captures<pat::alt<Ps...>, K> {
    using type = concat_t<typename captures<Ps, kmax(K, capture_kind::optional)>::type...>;
};
template <class P, capture_kind K>
struct captures<pat::opt<P>, K> : captures<P, kmax(K, capture_kind::optional)> {};
template <std::size_t Lo, std::size_t Hi, class P, capture_kind K>
struct captures<pat::rep<Lo, Hi, P>, K>
    : captures<P, (Hi > 1 ? capture_kind::many
                          : Lo == 0 ? kmax(K, capture_kind::optional) : K)> {};
template <class T, class P, capture_kind K>
struct captures<pat::cap<T, P>, K> {
    using type = concat_t<tlist<capinfo<T, K>>, typename captures<P, K>::type>;
};

template <class L>
struct tags_of_caps;
template <class... Cs>
struct tags_of_caps<tlist<Cs...>> {
    using type = tlist<typename Cs::tag...>;
};

// Names referenced by ref<>.
template <class P, class = void>
struct refs {
    using type = tlist<>;
};
template <class P>
struct refs<P, std::void_t<pat::detail::unwrap_t<P>>> : refs<pat::detail::unwrap_t<P>> {};
template <class T>
struct refs<pat::ref<T>> {
    using type = tlist<T>;
};
template <class T, class... Os>
struct refs<pat::op<T, Os...>> {
    using type = concat_t<typename refs<Os>::type...>;
};
template <class... Ps>
struct refs<pat::chain<Ps...>> {
    using type = concat_t<typename refs<Ps>::type...>;
};
template <class... Ps>
struct refs<pat::alt<Ps...>> {
    using type = concat_t<typename refs<Ps>::type...>;
};
template <class P>
struct refs<pat::opt<P>> : refs<P> {};
template <std::size_t Lo, std::size_t Hi, class P>
struct refs<pat::rep<Lo, Hi, P>> : refs<P> {};
template <class T, class P>
struct refs<pat::cap<T, P>> : refs<P> {};

template <class Names>
struct all_unique;
template <class... Ns>
struct all_unique<tlist<Ns...>> {
    static constexpr bool value = ((count_of<Ns, tlist<Ns...>>::value == 1) && ...);
};

template <class Refs, class Names>
struct all_known;
template <class... Rs, class Names>
struct all_known<tlist<Rs...>, Names> {
    static constexpr bool value = ((count_of<Rs, Names>::value >= 1) && ...);
};

}  // namespace detail

/// The captures of P, as detail::capinfo<Tag, kind> in pattern order.
template <class P>
using captures_t = typename detail::captures<std::decay_t<P>, capture_kind::one>::type;
/// The capture names (tag types) of P, in pattern order.
template <class P>
using capture_names_t = typename detail::tags_of_caps<captures_t<P>>::type;

/// True when no capture name is used twice in P.
template <class P>
constexpr bool captures_unique_v = detail::all_unique<capture_names_t<P>>::value;
/// True when every ref<Name>() in P names a capture of P.
template <class P>
constexpr bool refs_known_v =
    detail::all_known<typename detail::refs<std::decay_t<P>>::type, capture_names_t<P>>::value;

/// True when Name is a capture of P.
template <class P, class Name>
constexpr bool has_capture_v = detail::count_of<Name, capture_names_t<P>>::value > 0;

namespace detail {
template <std::size_t I, class... Cs>
constexpr capture_kind kind_at(tlist<Cs...>) {
    constexpr capture_kind ks[] = {Cs::kind..., capture_kind::one};
    return ks[I];
}
}  // namespace detail

/// The kind of capture Name in P (P must have it).
template <class P, class Name>
constexpr capture_kind capture_kind_v = [] {
    using L = captures_t<P>;
    constexpr std::size_t i = detail::index_of<Name, capture_names_t<P>>::value;
    return detail::kind_at<i>(L{});
}();

SGMATCH_END_NAMESPACE
