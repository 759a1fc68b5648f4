// sgmatch/pattern/combinators.hpp - the factories and operators that build patterns.
//
//   op<Conv>()                 an op node of kind Conv
//   op<Relu, Clip>()           one of several kinds
//   op<Add>(p1, p2)            operand patterns; any order when the tag is commutative
//   any()                      any op node (in a chain) / any value (as an operand)
//   input(), constant()        a graph input / a constant (never part of the match)
//   a >> b                     b consumes output 0 of a's last node on any input
//   a | b                      ordered alternatives
//   optional(p)                p or nothing (greedy)
//   repeat<Min, Max>(p)        p, Min..Max times (greedy)
//   p.where(pred)              keep p's last node only if pred(node_view) holds
//   p.as<Tag>() / capture<Tag>(p)   capture under a tag type name
//   ref<Tag>()                 the value captured as Tag (diamonds)
//   p.escaping()               p's values may be used outside the match
//   p.input<I>(), p.output<O>()     pin the slot / port of a chain edge
//   named<Tag>(p)              a reusable sub-pattern with a name
//
// Operands of an op that follows `>>` describe the inputs other than the one the chain enters.
// Known limitations: `>>`, optional() and repeat() cannot appear as operands.
#pragma once

#include <cstddef>
#include <tuple>
#include <type_traits>

#include "sgmatch/detail/config.hpp"
#include "sgmatch/pattern/ast.hpp"
#include "sgmatch/pattern/tag.hpp"

SGMATCH_BEGIN_NAMESPACE
namespace detail {

template <class P>
struct is_value_pattern : std::false_type {};
template <class T, class... Os>
struct is_value_pattern<pat::op<T, Os...>> : std::true_type {};
template <>
struct is_value_pattern<pat::any> : std::true_type {};
template <>
struct is_value_pattern<pat::graph_input> : std::true_type {};
template <>
struct is_value_pattern<pat::constant> : std::true_type {};
template <class T>
struct is_value_pattern<pat::ref<T>> : std::true_type {};
template <class T, class P>
struct is_value_pattern<pat::cap<T, P>> : is_value_pattern<P> {};
template <class P, class F>
struct is_value_pattern<pat::guarded<P, F>> : is_value_pattern<P> {};
template <class P>
struct is_value_pattern<pat::esc<P>> : is_value_pattern<P> {};
template <std::size_t O, class P>
struct is_value_pattern<pat::out_port<O, P>> : is_value_pattern<P> {};
template <class T, class P>
struct is_value_pattern<pat::named<T, P>> : is_value_pattern<P> {};
template <class... Ps>
struct is_value_pattern<pat::alt<Ps...>> : std::conjunction<is_value_pattern<Ps>...> {};

template <class P>
constexpr auto items_of(const P& p) {
    return pat::detail::pack<P>(p);
}
template <class... Ps>
constexpr auto items_of(const pat::chain<Ps...>& c) {
    return c.items;
}
template <class P>
constexpr auto alts_of(const P& p) {
    return pat::detail::pack<P>(p);
}
template <class... Ps>
constexpr auto alts_of(const pat::alt<Ps...>& a) {
    return a.items;
}
// The largest arity of Tags, or -1 if one of them takes any number of inputs.
template <class... Tags>
constexpr int arity_of_tags() {
    int a = -1;
    ((a = (op_tag_traits<Tags>::arity > a ? op_tag_traits<Tags>::arity : a)), ...);
    if (((op_tag_traits<Tags>::arity < 0) || ...)) a = -1;
    return a;
}

// Whether P, as the step after >> (which reads the step before as one of its inputs), describes
// with its operands every input its ops have: then no node can match it. Seen through the
// wrappers that do not change which node a step matches; an alternative, optional or repeat
// counts if any step it may take does.
template <class P, class = void>
struct chained_overfull : std::false_type {};
template <class... Tags, class... Operands>
struct chained_overfull<pat::op<pat::tags<Tags...>, Operands...>>
    : std::bool_constant<(arity_of_tags<Tags...>() >= 0 && static_cast<int>(sizeof...(Operands)) >= arity_of_tags<Tags...>())> {};
// The wrappers analyses look through (pat::detail::unwrap), and a capture.
template <class P>
struct chained_overfull<P, std::void_t<pat::detail::unwrap_t<P>>> : chained_overfull<pat::detail::unwrap_t<P>> {};
template <class T, class P>
struct chained_overfull<pat::cap<T, P>> : chained_overfull<P> {};
template <class P>
struct chained_overfull<pat::opt<P>> : chained_overfull<P> {};
template <std::size_t Min, std::size_t Max, class P>
struct chained_overfull<pat::rep<Min, Max, P>> : chained_overfull<P> {};
template <class... Ps>
struct chained_overfull<pat::alt<Ps...>> : std::bool_constant<(chained_overfull<Ps>::value || ...)> {};
template <class P, class... Ps>
struct chained_overfull<pat::chain<P, Ps...>> : chained_overfull<P> {};

template <class... Ps>
constexpr pat::chain<Ps...> make_chain(pat::detail::pack<Ps...> t) {
    return pat::chain<Ps...>(t);
}
template <class... Ps>
constexpr pat::alt<Ps...> make_alt(pat::detail::pack<Ps...> t) {
    return pat::alt<Ps...>(t);
}

}  // namespace detail

/// An op node of one of the kinds Tags, with optional operand patterns.
template <class... Tags, class... Operands>
constexpr auto op(Operands... operands) {
    static_assert(sizeof...(Tags) > 0, "sgmatch::op<T...>(): name at least one op tag");
    static_assert((is_op_tag_v<Tags> && ...),
                  "sgmatch::op<T...>(): each T must be an op tag declaring "
                  "`static constexpr std::string_view names[] = {...}` -- see "
                  "sgmatch/pattern/tag.hpp");
    static_assert((detail::is_value_pattern<Operands>::value && ...),
                  "sgmatch::op<T...>(operands...): each operand must be a value pattern: any(), "
                  "input(), constant(), ref<Name>(), op<...>(...), or those with "
                  ".as<>() / .where() / |  (>>, optional() and repeat() are not operands)");
    if constexpr (sizeof...(Tags) > 0 && (is_op_tag_v<Tags> && ...) &&
                  (detail::is_value_pattern<Operands>::value && ...)) {
        constexpr int arity = detail::arity_of_tags<Tags...>();
        static_assert(arity < 0 || static_cast<int>(sizeof...(Operands)) <= arity,
                      "sgmatch::op<T...>(operands...): more operands than the tag's arity");
        static_assert(sizeof...(Operands) <= detail::max_operands,
                      "sgmatch::op<T...>(operands...): at most 16 operands");
        return pat::op<pat::tags<Tags...>, Operands...>(std::tuple<Operands...>(operands...));
    } else {
        return pat::invalid{};
    }
}

/// Any op node (in a chain) or any value (as an operand).
constexpr pat::any any() { return {}; }
/// A graph input.
constexpr pat::graph_input input() { return {}; }
/// A constant.
constexpr pat::constant constant() { return {}; }

template <class P>
constexpr auto optional(P p) {
    static_assert(is_pattern_v<P>, "sgmatch::optional(p): p must be a pattern");
    if constexpr (is_pattern_v<P>)
        return pat::opt<P>(p);
    else
        return pat::invalid{};
}

template <std::size_t Min, std::size_t Max, class P>
constexpr auto repeat(P p) {
    static_assert(is_pattern_v<P>, "sgmatch::repeat<Min, Max>(p): p must be a pattern");
    static_assert(Min <= Max && Max > 0,
                  "sgmatch::repeat<Min, Max>(p): requires Min <= Max and Max > 0");
    if constexpr (is_pattern_v<P> && Min <= Max && Max > 0)
        return pat::rep<Min, Max, P>(p);
    else
        return pat::invalid{};
}

template <class Tag, class P>
constexpr auto capture(P p) {
    static_assert(is_pattern_v<P>, "sgmatch::capture<Name>(p): p must be a pattern");
    if constexpr (is_pattern_v<P>)
        return pat::cap<Tag, P>(p);
    else
        return pat::invalid{};
}

template <class Tag>
constexpr pat::ref<Tag> ref() {
    return {};
}

template <class P>
constexpr auto escaping(P p) {
    static_assert(is_pattern_v<P>, "sgmatch::escaping(p): p must be a pattern");
    if constexpr (is_pattern_v<P>)
        return pat::esc<P>(p);
    else
        return pat::invalid{};
}

template <class Tag, class P>
constexpr auto named(P p) {
    static_assert(is_pattern_v<P>, "sgmatch::named<Name>(p): p must be a pattern");
    if constexpr (is_pattern_v<P>)
        return pat::named<Tag, P>(p);
    else
        return pat::invalid{};
}

namespace pat {

/// a >> b. Flattens: chain<A, B> >> C is chain<A, B, C>.
template <class A, class B, std::enable_if_t<is_pattern_v<A> || is_pattern_v<B>, int> = 0>
constexpr auto operator>>(const A& a, const B& b) {
    static_assert(is_pattern_v<A> && is_pattern_v<B>,
                  "sgmatch: operator>>(a, b): both sides must be patterns");
    if constexpr (is_pattern_v<A> && is_pattern_v<B>) {
        constexpr bool overfull = sgmatch::detail::chained_overfull<B>::value;
        static_assert(!overfull,
                      "sgmatch: operator>>(a, op<T>(operands...)): the op after >> reads a's value as one of its "
                      "inputs, so its operands describe only the others; here they describe every input the op has, "
                      "and it can never match (drop the operand that stands for a)");
        if constexpr (!overfull)
            return sgmatch::detail::make_chain(pat::detail::cat(sgmatch::detail::items_of(a), sgmatch::detail::items_of(b)));
        else
            return invalid{};
    } else {
        return invalid{};
    }
}

/// a | b. Flattens like >>.
template <class A, class B, std::enable_if_t<is_pattern_v<A> || is_pattern_v<B>, int> = 0>
constexpr auto operator|(const A& a, const B& b) {
    static_assert(is_pattern_v<A> && is_pattern_v<B>,
                  "sgmatch: operator|(a, b): both sides must be patterns");
    if constexpr (is_pattern_v<A> && is_pattern_v<B>)
        return sgmatch::detail::make_alt(pat::detail::cat(sgmatch::detail::alts_of(a), sgmatch::detail::alts_of(b)));
    else
        return invalid{};
}

}  // namespace pat
SGMATCH_END_NAMESPACE
