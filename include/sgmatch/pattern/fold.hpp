// sgmatch/pattern/fold.hpp - the one recursion over a pattern's AST.
//
//   pat::with_children(p, f)   f(children of p...): an op's operands, a chain's or an
//                              alternative's items, a wrapper's one child (optional, repeat,
//                              capture, predicate, escaping, pinned port, name), none for a leaf
//   pat::fold(p, alg)          alg(p, fold(child, alg)...), bottom-up, on values
//   pat::fold_t<P, On>         On<P, fold_t<child, On>...>::type, bottom-up, on types
//   pat::nodes(p)              every node of p in pre-order, as a hana::basic_tuple
//
// Every analysis of a pattern is folded over it. Those that need only types (captures,
// back-references, op tags, anchors, node counts, the lowering's units) are class templates On,
// specialized for the node kinds they treat differently from "combine the children"; their
// lists are hana::basic_tuples of hana::types. The notation is a value algebra. The matcher's
// program emitter walks the same children top-down. A new combinator adds its children here and
// a case to the analyses that treat it specially.
#pragma once

#include <boost/hana/basic_tuple.hpp>
#include <boost/hana/flatten.hpp>
#include <boost/hana/type.hpp>

#include <cstddef>
#include <tuple>
#include <type_traits>
#include <utility>

#include "sgmatch/detail/config.hpp"
#include "sgmatch/pattern/ast.hpp"

SGMATCH_BEGIN_NAMESPACE
namespace pat {

/// Leaves (any, input, constant, ref, invalid) have no children.
template <class P, class F>
constexpr decltype(auto) with_children(const P&, F&& f) {
    return static_cast<F&&>(f)();
}
namespace detail {
template <class T, class... Os, class F, std::size_t... I>
constexpr decltype(auto) with_operands(const op<T, Os...>& p, F&& f, std::index_sequence<I...>) {
    return static_cast<F&&>(f)(std::get<I>(p.operands)...);
}
}  // namespace detail
template <class T, class... Os, class F>
constexpr decltype(auto) with_children(const op<T, Os...>& p, F&& f) {
    return detail::with_operands(p, static_cast<F&&>(f), std::index_sequence_for<Os...>{});
}
template <class... Ps, class F>
constexpr decltype(auto) with_children(const chain<Ps...>& p, F&& f) {
    return p.items.apply(static_cast<F&&>(f));
}
template <class... Ps, class F>
constexpr decltype(auto) with_children(const alt<Ps...>& p, F&& f) {
    return p.items.apply(static_cast<F&&>(f));
}
template <class P, class F>
constexpr decltype(auto) with_children(const opt<P>& p, F&& f) {
    return static_cast<F&&>(f)(p.p);
}
template <std::size_t Lo, std::size_t Hi, class P, class F>
constexpr decltype(auto) with_children(const rep<Lo, Hi, P>& p, F&& f) {
    return static_cast<F&&>(f)(p.p);
}
template <class P, class Pred, class F>
constexpr decltype(auto) with_children(const guarded<P, Pred>& p, F&& f) {
    return static_cast<F&&>(f)(p.p);
}
template <class Tag, class P, class F>
constexpr decltype(auto) with_children(const cap<Tag, P>& p, F&& f) {
    return static_cast<F&&>(f)(p.p);
}
template <class P, class F>
constexpr decltype(auto) with_children(const esc<P>& p, F&& f) {
    return static_cast<F&&>(f)(p.p);
}
template <std::size_t I, class P, class F>
constexpr decltype(auto) with_children(const in_port<I, P>& p, F&& f) {
    return static_cast<F&&>(f)(p.p);
}
template <std::size_t I, class P, class F>
constexpr decltype(auto) with_children(const out_port<I, P>& p, F&& f) {
    return static_cast<F&&>(f)(p.p);
}
template <class Tag, class P, class F>
constexpr decltype(auto) with_children(const named<Tag, P>& p, F&& f) {
    return static_cast<F&&>(f)(p.p);
}

/// alg(p, fold(children of p, alg)...): the results of p's children, combined at p.
template <class P, class Alg>
constexpr auto fold(const P& p, const Alg& alg) {
    return with_children(p, [&](const auto&... c) { return alg(p, pat::fold(c, alg)...); });
}

namespace detail {
struct child_types_fn {
    template <class... Cs>
    constexpr auto operator()(const Cs&...) const -> boost::hana::basic_tuple<boost::hana::type<Cs>...> {
        return {};
    }
};
}  // namespace detail

/// The types of P's children, as a hana::basic_tuple of hana::types.
template <class P>
using children_t = decltype(pat::with_children(std::declval<const P&>(), detail::child_types_fn{}));

namespace detail {
template <class P, template <class...> class On, class Kids = children_t<P>>
struct fold_type;
template <class P, template <class...> class On, class... Ks>
struct fold_type<P, On, boost::hana::basic_tuple<Ks...>> {
    using type = typename On<P, typename fold_type<typename Ks::type, On>::type...>::type;
};
}  // namespace detail

/// fold on types: On<P, results of P's children...>::type for a pattern type P, computed
/// bottom-up. Each node's children are listed once for every analysis (children_t); an
/// analysis is a class template On, specialized for the node kinds it treats differently from
/// its primary template.
template <class P, template <class...> class On>
using fold_t = typename detail::fold_type<P, On>::type;

namespace detail {
template <class L>
struct cat_arg {
    using type = L;
};
template <class... As, class... Bs>
constexpr cat_arg<boost::hana::basic_tuple<As..., Bs...>> operator+(cat_arg<boost::hana::basic_tuple<As...>>,
                                                                    cat_arg<boost::hana::basic_tuple<Bs...>>) {
    return {};
}
/// The concatenation of hana::basic_tuples, as a type.
template <class... Ls>
using cat_t = typename decltype((cat_arg<boost::hana::basic_tuple<>>{} + ... + cat_arg<Ls>{}))::type;

/// R when there is exactly one R (a wrapper's child result), else Default (a leaf).
template <class Default, class... Rs>
struct only_or {
    using type = Default;
};
template <class Default, class R>
struct only_or<Default, R> {
    using type = R;
};
template <class Default, class... Rs>
using only_or_t = typename only_or<Default, Rs...>::type;

struct nodes_alg {
    template <class P, class... Rs>
    constexpr auto operator()(const P& p, const Rs&... rs) const {
        return boost::hana::flatten(boost::hana::make_basic_tuple(boost::hana::make_basic_tuple(p), rs...));
    }
};
}  // namespace detail

/// Every node of p (p itself, then each child's nodes in order), copied into a
/// hana::basic_tuple: `hana::for_each(pat::nodes(p), f)` visits them.
template <class P>
constexpr auto nodes(const P& p) {
    return pat::fold(p, detail::nodes_alg{});
}

}  // namespace pat
SGMATCH_END_NAMESPACE
