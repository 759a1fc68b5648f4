// sgmatch/detail/unique_in_order.hpp - drop repeated values from a list, keeping the first of each
// in its place: what a boundary does with the values a large set reads from outside.
#pragma once

#include <algorithm>
#include <cstddef>
#include <vector>

#include "sgmatch/detail/config.hpp"

SGMATCH_BEGIN_NAMESPACE
namespace detail {

// key(v): a totally ordered key equal exactly for equal values. O(n log n): a stable sort of the
// positions by key, the first position of each run, back in order.
template <class V, class Key>
void unique_in_order(std::vector<V>& vs, const Key& key) {
    std::vector<std::size_t> by_key(vs.size());
    for (std::size_t i = 0; i < by_key.size(); ++i) by_key[i] = i;
    std::stable_sort(by_key.begin(), by_key.end(), [&](std::size_t a, std::size_t b) { return key(vs[a]) < key(vs[b]); });
    std::vector<std::size_t> firsts;
    for (std::size_t i = 0; i < by_key.size(); ++i)
        if (i == 0 || key(vs[by_key[i]]) != key(vs[by_key[i - 1]])) firsts.push_back(by_key[i]);
    std::sort(firsts.begin(), firsts.end());
    std::vector<V> kept;
    kept.reserve(firsts.size());
    for (std::size_t i : firsts) kept.push_back(vs[i]);
    vs.swap(kept);
}

}  // namespace detail
SGMATCH_END_NAMESPACE
