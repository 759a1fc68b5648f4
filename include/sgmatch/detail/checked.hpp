// sgmatch/detail/checked.hpp - sizes computed from a model, checked: the one place where dims,
// element counts and byte sizes are multiplied or added without overflowing.
//
//   if (const auto n = detail::checked_product(dims)) ... else refuse("... overflows");
//
// A model is untrusted input: a product of dims that overflows int64 is undefined behaviour in
// C++ and a wrong size after it. Each function returns nullopt instead; the caller refuses the
// node, tensor or file with its name.
#pragma once

#include <cstdint>
#include <limits>
#include <optional>

#include "sgmatch/detail/config.hpp"

SGMATCH_BEGIN_NAMESPACE
namespace detail {

inline constexpr std::int64_t size_max = std::numeric_limits<std::int64_t>::max();

/// a * b for a, b >= 0; nullopt past int64 (or for a negative operand).
constexpr std::optional<std::int64_t> checked_mul(std::int64_t a, std::int64_t b) {
    if (a < 0 || b < 0) return std::nullopt;
    if (a != 0 && b > size_max / a) return std::nullopt;
    return a * b;
}

/// a + b for a, b >= 0; nullopt past int64 (or for a negative operand).
constexpr std::optional<std::int64_t> checked_add(std::int64_t a, std::int64_t b) {
    if (a < 0 || b < 0 || b > size_max - a) return std::nullopt;
    return a + b;
}

/// a + b for any signed a, b; nullopt past int64 either way (pads, starts, offsets).
constexpr std::optional<std::int64_t> checked_signed_add(std::int64_t a, std::int64_t b) {
    if ((b > 0 && a > size_max - b) || (b < 0 && a < std::numeric_limits<std::int64_t>::min() - b)) return std::nullopt;
    return a + b;
}

/// a * b for any signed a, b; nullopt past int64 either way (strides times dims).
constexpr std::optional<std::int64_t> checked_signed_mul(std::int64_t a, std::int64_t b) {
    constexpr std::int64_t lo = std::numeric_limits<std::int64_t>::min();
    if (a == 0 || b == 0) return std::int64_t{0};
    const bool over = a > 0 ? (b > 0 ? a > size_max / b : b < lo / a) : (b > 0 ? a < lo / b : b < size_max / a);
    if (over) return std::nullopt;
    return a * b;
}

/// The product of `dims` (an element count); nullopt when a dim is negative or when the product
/// of the non-zero dims overflows. An empty shape such as {0, 2^40, 2^40} is refused too: its
/// element count is 0, but its strides (products of trailing dims) do not fit in int64.
template <class Range>
std::optional<std::int64_t> checked_product(const Range& dims) {
    std::int64_t n = 1;
    bool empty = false;
    for (const auto d : dims) {
        const auto dim = static_cast<std::int64_t>(d);
        if (dim == 0) {
            empty = true;
            continue;
        }
        const auto next = checked_mul(n, dim);
        if (!next) return std::nullopt;
        n = *next;
    }
    return empty ? 0 : n;
}

/// Bytes of `count` elements of `element_size` bytes; nullopt past int64.
constexpr std::optional<std::int64_t> checked_bytes(std::int64_t count, std::int64_t element_size) {
    return checked_mul(count, element_size);
}

}  // namespace detail
SGMATCH_END_NAMESPACE
