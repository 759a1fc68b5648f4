// sgmatch/analysis/typelist.hpp - the few type-list tools the analyses need (no promises).
#pragma once

#include <cstddef>
#include <type_traits>

#include "sgmatch/detail/config.hpp"

SGMATCH_BEGIN_NAMESPACE
namespace detail {

template <class... Ts>
struct tlist {
    static constexpr std::size_t size = sizeof...(Ts);
};

template <class... As, class... Bs>
constexpr tlist<As..., Bs...> operator+(tlist<As...>, tlist<Bs...>) {
    return {};
}

/// Concatenation of the lists Ls (a fold, not a recursion).
template <class... Ls>
using concat_t = decltype((tlist<>{} + ... + Ls{}));

/// Index of the first T in L, or L::size when absent.
template <class T, class L>
struct index_of;
template <class T, class... Us>
struct index_of<T, tlist<Us...>> {
    static constexpr std::size_t value = [] {
        constexpr bool same[] = {std::is_same_v<T, Us>..., false};
        std::size_t i = 0;
        while (i < sizeof...(Us) && !same[i]) ++i;
        return i;
    }();
};

/// Number of Ts in L.
template <class T, class L>
struct count_of;
template <class T, class... Us>
struct count_of<T, tlist<Us...>> {
    static constexpr std::size_t value = (std::size_t{0} + ... + (std::is_same_v<T, Us> ? 1 : 0));
};

}  // namespace detail
SGMATCH_END_NAMESPACE
