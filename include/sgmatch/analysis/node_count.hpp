// sgmatch/analysis/node_count.hpp - how many graph nodes a pattern can match, at compile time.
//
// Leaves (input(), constant(), any() as an operand, ref<>) match no node of their own; an op
// node counts 1 plus its operands. `max` bounds the backtracking and sizes the result storage.
// A fold over the pattern (pattern/fold.hpp) that counts each sub-pattern both ways: in a chain
// position, and as an operand, where any() is a value and adds no node.
#pragma once

#include <cstddef>
#include <type_traits>

#include "sgmatch/detail/config.hpp"
#include "sgmatch/pattern/ast.hpp"
#include "sgmatch/pattern/fold.hpp"

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

/// A sub-pattern's counts in a chain position (node) and as an operand (value).
template <std::size_t NodeMin, std::size_t NodeMax, std::size_t ValueMin = NodeMin, std::size_t ValueMax = NodeMax>
struct count_result {
    static constexpr counts node{NodeMin, NodeMax};
    static constexpr counts value{ValueMin, ValueMax};
};

// input, constant, ref, invalid: no node; a wrapper (capture, predicate, escaping, port, name):
// its child's
template <class P, class... Rs>
struct count_on {
    using type = pat::detail::only_or_t<count_result<0, 0>, Rs...>;
};
template <>
struct count_on<pat::any> {
    using type = count_result<1, 1, 0, 0>;
};
template <class T, class... Os, class... Rs>
struct count_on<pat::op<T, Os...>, Rs...> {
    using type = count_result<1 + (std::size_t{0} + ... + Rs::value.min), 1 + (std::size_t{0} + ... + Rs::value.max)>;
};
template <class... Ps, class... Rs>
struct count_on<pat::chain<Ps...>, Rs...> {
    using type = count_result<(std::size_t{0} + ... + Rs::node.min), (std::size_t{0} + ... + Rs::node.max)>;
};
template <class... Ps, class... Rs>
struct count_on<pat::alt<Ps...>, Rs...> {
    using type = count_result<min_of(Rs::node.min...), max_of(Rs::node.max...), min_of(Rs::value.min...),
                              max_of(Rs::value.max...)>;
};
template <class P, class R>
struct count_on<pat::opt<P>, R> {
    using type = count_result<0, R::node.max>;
};
template <std::size_t Lo, std::size_t Hi, class P, class R>
struct count_on<pat::rep<Lo, Hi, P>, R> {
    using type = count_result<Lo * R::node.min, Hi * R::node.max>;
};

/// node_count<P>::value: the counts of P in a chain position.
template <class P>
struct node_count {
    static constexpr counts value = pat::fold_t<P, count_on>::node;
};

}  // namespace detail

/// Fewest graph nodes a match of P contains.
template <class P>
constexpr std::size_t min_nodes_v = pat::fold_t<std::decay_t<P>, detail::count_on>::node.min;
/// Most graph nodes a match of P contains.
template <class P>
constexpr std::size_t max_nodes_v = pat::fold_t<std::decay_t<P>, detail::count_on>::node.max;

SGMATCH_END_NAMESPACE
