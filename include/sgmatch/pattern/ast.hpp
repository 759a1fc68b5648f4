// sgmatch/pattern/ast.hpp - the node types of a pattern. A pattern's type is its AST.
//
// Stateless nodes are empty structs; nodes holding predicates hold them by value, so a pattern
// is a constexpr value whenever its predicates are. Multi-child nodes are flat packs.
// Node types live in sgmatch::pat so that symbols and error messages stay short.
#pragma once

#include <cstddef>
#include <tuple>
#include <type_traits>
#include <utility>

#include "sgmatch/detail/config.hpp"

SGMATCH_BEGIN_NAMESPACE
namespace detail {
// Most operands one op element may have (each is a separate input of the node).
constexpr std::size_t max_operands = 16;
}  // namespace detail

namespace pat {

namespace detail {

/// One element of a flat pack, at index I.
template <std::size_t I, class P>
struct leaf {
    P value;
};

template <class Seq, class... Ps>
struct pack_impl;
template <std::size_t... I, class... Ps>
struct pack_impl<std::index_sequence<I...>, Ps...> : leaf<I, Ps>... {
    constexpr explicit pack_impl(const Ps&... ps) : leaf<I, Ps>{ps}... {}

    /// f(element) for each element in order while it returns false; true if one returned true.
    template <class F>
    constexpr bool any_of(F&& f) const {
        return (f(static_cast<const leaf<I, Ps>&>(*this).value) || ...);
    }
    template <class F>
    constexpr void for_each(F&& f) const {
        (f(static_cast<const leaf<I, Ps>&>(*this).value), ...);
    }
    /// f(elements...)
    template <class F>
    constexpr decltype(auto) apply(F&& f) const {
        return static_cast<F&&>(f)(static_cast<const leaf<I, Ps>&>(*this).value...);
    }
};

/// The children of a chain or an alternative: a flat pack of indexed leaves. Unlike std::tuple
/// (recursive) and tuple_cat, building `a >> b >> ... ` costs O(1) per element and step.
template <class... Ps>
struct pack : pack_impl<std::index_sequence_for<Ps...>, Ps...> {
    using pack_impl<std::index_sequence_for<Ps...>, Ps...>::pack_impl;
    static constexpr std::size_t size = sizeof...(Ps);
};

template <class... As, class... Bs, std::size_t... I, std::size_t... J>
constexpr pack<As..., Bs...> cat(const pack<As...>& a, const pack<Bs...>& b, std::index_sequence<I...>,
                                 std::index_sequence<J...>) {
    return pack<As..., Bs...>(static_cast<const leaf<I, As>&>(a).value..., static_cast<const leaf<J, Bs>&>(b).value...);
}
template <class... As, class... Bs>
constexpr pack<As..., Bs...> cat(const pack<As...>& a, const pack<Bs...>& b) {
    return cat(a, b, std::index_sequence_for<As...>{}, std::index_sequence_for<Bs...>{});
}

}  // namespace detail

template <class Tag, class P> struct cap;
template <class P, class Pred> struct guarded;
template <class P> struct esc;
template <std::size_t Slot, class P> struct in_port;
template <std::size_t Port, class P> struct out_port;

/// Every pattern node derives from base<Self>; it gives the postfix modifiers.
template <class D>
struct base {
    /// Keep the node only if pred(view) holds; view is a sgmatch::node_view.
    template <class Pred>
    constexpr pat::guarded<D, Pred> where(Pred pred) const { return {self(), pred}; }
    /// Capture what this pattern matched under the name Tag (a tag type: `struct conv;`).
    template <class Tag>
    constexpr pat::cap<Tag, D> as() const { return pat::cap<Tag, D>{self()}; }
    /// Let the values this pattern matches be used outside the match (MXNet semantics: they
    /// become extra outputs of a fused node).
    constexpr pat::esc<D> escaping() const { return pat::esc<D>{self()}; }
    /// In a chain: consume the previous element's output on input slot I of this node.
    template <std::size_t I>
    constexpr pat::in_port<I, D> input() const { return pat::in_port<I, D>{self()}; }
    /// In a chain: the next element consumes output port O of this pattern's last node.
    template <std::size_t O>
    constexpr pat::out_port<O, D> output() const { return pat::out_port<O, D>{self()}; }

private:
    constexpr const D& self() const { return static_cast<const D&>(*this); }
};

/// A list of op tags (one of several kinds).
template <class... Tags>
struct tags {};

/// An op node whose op is one of Tags; Operands describe its inputs (see combinators.hpp).
template <class Tags, class... Operands>
struct op : base<op<Tags, Operands...>> {
    std::tuple<Operands...> operands;
    constexpr op() = default;
    constexpr explicit op(std::tuple<Operands...> t) : operands(t) {}
};

/// Any op node (in a chain) or any value (as an operand).
struct any : base<any> {};
/// A graph input (placeholder).
struct graph_input : base<graph_input> {};
/// A constant / initializer.
struct constant : base<constant> {};

/// a >> b >> c: each consumes output 0 (or a pinned port) of the previous one.
template <class... Ps>
struct chain : base<chain<Ps...>> {
    detail::pack<Ps...> items;
    constexpr explicit chain(detail::pack<Ps...> t) : items(t) {}
};

/// a | b | c: ordered alternatives.
template <class... Ps>
struct alt : base<alt<Ps...>> {
    detail::pack<Ps...> items;
    constexpr explicit alt(detail::pack<Ps...> t) : items(t) {}
};

/// optional(p): p or nothing; greedy.
template <class P>
struct opt : base<opt<P>> {
    P p;
    constexpr explicit opt(P x) : p(x) {}
};

/// repeat<Min, Max>(p): p between Min and Max times; greedy.
template <std::size_t Min, std::size_t Max, class P>
struct rep : base<rep<Min, Max, P>> {
    P p;
    constexpr explicit rep(P x) : p(x) {}
};

/// p.where(pred)
template <class P, class Pred>
struct guarded : base<guarded<P, Pred>> {
    P p;
    Pred pred;
    constexpr guarded(P x, Pred f) : p(x), pred(f) {}
};

template <class Tag, class P>
struct cap : base<cap<Tag, P>> {
    P p;
    constexpr explicit cap(P x) : p(x) {}
};

/// ref<Tag>(): the value already captured as Tag (diamonds).
template <class Tag>
struct ref : base<ref<Tag>> {};

template <class P>
struct esc : base<esc<P>> {
    P p;
    constexpr explicit esc(P x) : p(x) {}
};

template <std::size_t Slot, class P>
struct in_port : base<in_port<Slot, P>> {
    P p;
    constexpr explicit in_port(P x) : p(x) {}
};

template <std::size_t Port, class P>
struct out_port : base<out_port<Port, P>> {
    P p;
    constexpr explicit out_port(P x) : p(x) {}
};

/// A reusable sub-pattern with a name of its own (shown in notation and explain text).
template <class Tag, class P>
struct named : base<named<Tag, P>> {
    P p;
    constexpr explicit named(P x) : p(x) {}
};

/// What a failed construction returns after its static_assert, so that no cascade follows.
struct invalid : base<invalid> {};

namespace detail {
/// The child of a wrapper that changes how its child matches (a predicate, escaping, a pinned
/// port, a name) but not which nodes, tags or captures it has: analyses look through it.
template <class P>
struct unwrap {};
template <class P, class F>
struct unwrap<guarded<P, F>> {
    using type = P;
};
template <class P>
struct unwrap<esc<P>> {
    using type = P;
};
template <std::size_t I, class P>
struct unwrap<in_port<I, P>> {
    using type = P;
};
template <std::size_t I, class P>
struct unwrap<out_port<I, P>> {
    using type = P;
};
template <class T, class P>
struct unwrap<named<T, P>> {
    using type = P;
};
template <class P>
using unwrap_t = typename unwrap<P>::type;
}  // namespace detail

}  // namespace pat

/// True for pattern types.
template <class T>
constexpr bool is_pattern_v = std::is_base_of_v<pat::base<std::decay_t<T>>, std::decay_t<T>>;

SGMATCH_END_NAMESPACE
