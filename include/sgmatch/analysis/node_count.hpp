// sgmatch/analysis/node_count.hpp - how many graph nodes a pattern can match, at compile time.
//
// Leaves (input(), constant(), any() as an operand, ref<>) match no node of their own; an op
// node counts 1 plus its operands. `max` bounds the backtracking and sizes the result storage.
#pragma once

#include <cstddef>
#include <type_traits>

#include "sgmatch/detail/config.hpp"
#include "sgmatch/pattern/ast.hpp"

SGMATCH_BEGIN_NAMESPACE
namespace detail {

struct counts {
    std::size_t min, max;
};

template <class... T>
constexpr std::size_t min_of(std::size_t a, T... b) {
    ((a = b < a ? b : a), ...);
    return a;
}
template <class... T>
constexpr std::size_t max_of(std::size_t a, T... b) {
    ((a = b > a ? b : a), ...);
    return a;
}

template <class P, class = void>
struct node_count;  // chain position
template <class P, class = void>
struct value_count;  // operand position

// Wrappers count as their child; a capture too.
template <class P>
struct node_count<P, std::void_t<pat::detail::unwrap_t<P>>> : node_count<pat::detail::unwrap_t<P>> {};
template <class P>
struct value_count<P, std::void_t<pat::detail::unwrap_t<P>>> : value_count<pat::detail::unwrap_t<P>> {};

template <class T, class... Os>
struct node_count<pat::op<T, Os...>> {
    static constexpr counts value{1 + (std::size_t{0} + ... + value_count<Os>::value.min),
                                  1 + (std::size_t{0} + ... + value_count<Os>::value.max)};
};
template <>
struct node_count<pat::any> {
    static constexpr counts value{1, 1};
};
template <>
struct node_count<pat::graph_input> {
    static constexpr counts value{0, 0};
};
template <>
struct node_count<pat::constant> {
    static constexpr counts value{0, 0};
};
template <class T>
struct node_count<pat::ref<T>> {
    static constexpr counts value{0, 0};
};
template <>
struct node_count<pat::invalid> {
    static constexpr counts value{0, 0};
};
template <class... Ps>
struct node_count<pat::chain<Ps...>> {
    static constexpr counts value{(std::size_t{0} + ... + node_count<Ps>::value.min),
                                  (std::size_t{0} + ... + node_count<Ps>::value.max)};
};
template <class... Ps>
struct node_count<pat::alt<Ps...>> {
    static constexpr counts value{min_of(node_count<Ps>::value.min...), max_of(node_count<Ps>::value.max...)};
};
template <class P>
struct node_count<pat::opt<P>> {
    static constexpr counts value{0, node_count<P>::value.max};
};
template <std::size_t Lo, std::size_t Hi, class P>
struct node_count<pat::rep<Lo, Hi, P>> {
    static constexpr counts value{Lo * node_count<P>::value.min, Hi * node_count<P>::value.max};
};
template <class T, class P>
struct node_count<pat::cap<T, P>> : node_count<P> {};

// Operand position: like chain position, except that any() is a value and adds no node.
template <class P, class>
struct value_count : node_count<P> {};
template <>
struct value_count<pat::any> {
    static constexpr counts value{0, 0};
};
template <class... Ps>
struct value_count<pat::alt<Ps...>> {
    static constexpr counts value{min_of(value_count<Ps>::value.min...), max_of(value_count<Ps>::value.max...)};
};
template <class T, class P>
struct value_count<pat::cap<T, P>> : value_count<P> {};

}  // namespace detail

/// Fewest graph nodes a match of P contains.
template <class P>
constexpr std::size_t min_nodes_v = detail::node_count<std::decay_t<P>>::value.min;
/// Most graph nodes a match of P contains.
template <class P>
constexpr std::size_t max_nodes_v = detail::node_count<std::decay_t<P>>::value.max;

SGMATCH_END_NAMESPACE
