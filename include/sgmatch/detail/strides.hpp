// sgmatch/detail/strides.hpp - whether strides lay out dims packed: a permutation of the dims'
// dense layout (channels-last, say), every element in one of size() consecutive slots.
#pragma once

#include <cstddef>
#include <cstdint>
#include <utility>
#include <vector>

#include "sgmatch/detail/config.hpp"

SGMATCH_BEGIN_NAMESPACE
namespace detail {

/// Ordered by stride, each axis of extent over 1 steps by the product of the extents inside
/// it, the innermost by 1 (axes of extent 1 may step anything; no elements: any strides).
template <class Dims, class Strides>
bool packed_strides(const Dims& dims, const Strides& strides) {
    if (strides.size() != dims.size()) return false;
    std::vector<std::size_t> axes;
    for (std::size_t k = 0; k < dims.size(); ++k) {
        if (dims[k] == 0) return true;
        if (dims[k] > 1) axes.push_back(k);
    }
    for (std::size_t i = 1; i < axes.size(); ++i)  // by stride, innermost last (insertion sort: a few axes)
        for (std::size_t j = i; j > 0 && strides[axes[j - 1]] < strides[axes[j]]; --j) std::swap(axes[j - 1], axes[j]);
    std::int64_t step = 1;
    for (std::size_t i = axes.size(); i-- > 0;) {
        if (static_cast<std::int64_t>(strides[axes[i]]) != step) return false;
        step *= static_cast<std::int64_t>(dims[axes[i]]);
    }
    return true;
}

}  // namespace detail
SGMATCH_END_NAMESPACE
