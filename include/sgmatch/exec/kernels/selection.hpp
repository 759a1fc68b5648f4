// sgmatch/exec/kernels/selection.hpp - kernels over typed values for the ops whose output size
// depends on the data (ops/positions.hpp): NonZero, Compress and Unique; and EyeLike.
//
// NonZero and Compress take every element type sgmatch computes on (Compress moves bytes, so
// float16 and bfloat16 too); Unique compares elements (or slices along an axis,
// lexicographically) by value and refuses a NaN, which has no place in their order.
#pragma once

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <numeric>
#include <string>
#include <type_traits>
#include <vector>

#include "sgmatch/detail/config.hpp"
#include "sgmatch/exec/kernels/typed_support.hpp"
#include "sgmatch/exec/value.hpp"
#include "sgmatch/ops/positions.hpp"

SGMATCH_BEGIN_NAMESPACE
namespace exec {
namespace typed {

/// EyeLike: ones on diagonal k (above the main one for k > 0), zeros elsewhere.
inline typed_fn eye_like(const ops::op_attrs& a0, const ops::node_source&) {
    return [a = a0](const values& xs) {
        const value& x = in(xs, 0, a);
        const shape out_dims = rule(a, xs).at(0);
        const dtype t = a.has("dtype") ? ops::dtype_of_onnx(a.i("dtype")) : x.type();
        if (!ops::types::has(ops::types::computing, t)) fail(a, "dtype " + std::to_string(a.i("dtype")) + " is not one the kernel makes");
        value out = value::zeros(t, out_dims);
        const std::int64_t k = a.i("k"), rows = out_dims[0], cols = out_dims[1];
        visit_type(t, [&](auto tag) {
            using T = typename decltype(tag)::type;
            T* o = out.as<T>();
            for (std::int64_t r = 0; r < rows; ++r)
                if (r + k >= 0 && r + k < cols) o[r * cols + r + k] = static_cast<T>(1);
        });
        return values{out};
    };
}

/// NonZero: [rank, count] int64, column j the coordinates of the j-th element (row-major) that
/// is not zero.
inline typed_fn non_zero(const ops::op_attrs& a0, const ops::node_source&) {
    return [a = a0](const values& xs) {
        const value x = in(xs, 0, a).dense_value();
        require_type(a, x);
        std::vector<std::int64_t> hits;
        visit_type(x.type(), [&](auto t) {
            using T = typename decltype(t)::type;
            const T* p = x.as<T>();
            for (std::int64_t i = 0; i < x.size(); ++i)
                if (p[i] != T{}) hits.push_back(i);
        });
        const shape& d = x.dims();
        const auto n = static_cast<std::int64_t>(hits.size());
        value out = value::zeros(dtype::i64, {static_cast<std::int64_t>(d.size()), n});
        std::int64_t* o = out.as<std::int64_t>();
        for (std::int64_t j = 0; j < n; ++j) {
            std::int64_t i = hits[static_cast<std::size_t>(j)];
            for (std::size_t k = d.size(); k-- > 0;) {
                o[static_cast<std::int64_t>(k) * n + j] = i % d[k];
                i /= d[k];
            }
        }
        return values{out};
    };
}

/// Compress: the slices along the axis (of the flattened input without one) whose condition is
/// true; a condition longer than the axis is refused.
inline typed_fn compress(const ops::op_attrs& a0, const ops::node_source&) {
    return [a = a0](const values& xs) {
        const value x = in(xs, 0, a).dense_value(), c = in(xs, 1, a).dense_value();
        if (c.type() != dtype::boolean) fail(a, "the condition is " + std::string(name_of(c.type())) + " (bool taken)");
        if (c.rank() != 1) fail(a, "the condition has rank " + std::to_string(c.rank()) + " (1 taken)");
        shape d = a.has("axis") ? x.dims() : shape{x.size()};
        const std::size_t ax = a.has("axis") ? ops::rules::axis(a, a.i("axis"), d.size()) : 0;
        if (c.size() > d[ax])
            fail(a, "the condition has " + std::to_string(c.size()) + " values for an axis of " + std::to_string(d[ax]));
        std::int64_t outer = 1, inner = 1;
        for (std::size_t k = 0; k < d.size(); ++k)
            if (k != ax) (k < ax ? outer : inner) *= d[k];
        const bool* keep = c.as<bool>();
        const std::int64_t kept = std::count(keep, keep + c.size(), true);
        const std::int64_t length = d[ax];
        d[ax] = kept;
        value out = value::zeros(x.type(), d);
        const auto es = static_cast<std::int64_t>(size_of(x.type()));
        const std::byte* s = bytes_of(x);
        std::byte* o = bytes_of(out);
        for (std::int64_t r = 0; r < outer; ++r)
            for (std::int64_t j = 0; j < c.size(); ++j)
                if (keep[j]) {
                    std::memcpy(o, s + (r * length + j) * inner * es, static_cast<std::size_t>(inner * es));
                    o += inner * es;
                }
        return values{out};
    };
}

/// Unique: Y, the first appearance of each, the inverse indices and the counts (see the top).
inline typed_fn unique(const ops::op_attrs& a0, const ops::node_source&) {
    return [a = a0, sorted = a0.i("sorted") != 0](const values& xs) {
        const value x = in(xs, 0, a).dense_value();
        require_type(a, x);
        const bool by_axis = a.has("axis");
        const shape d = by_axis ? x.dims() : shape{x.size()};
        const std::size_t ax = by_axis ? ops::rules::axis(a, a.i("axis"), d.size()) : 0;
        std::int64_t outer = 1, inner = 1;
        for (std::size_t k = 0; k < d.size(); ++k)
            if (k != ax) (k < ax ? outer : inner) *= d[k];
        const std::int64_t length = d[ax];
        std::vector<std::int64_t> order(static_cast<std::size_t>(length));  // slice numbers, sorted
        std::iota(order.begin(), order.end(), std::int64_t{0});
        std::vector<std::int64_t> first, inverse(order.size()), counts;
        value y;
        visit_type(x.type(), [&](auto t) {
            using T = typename decltype(t)::type;
            const T* p = x.as<T>();
            if constexpr (std::is_floating_point_v<T>)
                for (std::int64_t i = 0; i < x.size(); ++i)
                    if (std::isnan(p[i])) fail(a, "X holds a NaN, which has no place in the order of the values");
            auto at = [&](std::int64_t slice, std::int64_t e) { return p[((e / inner) * length + slice) * inner + e % inner]; };
            const std::int64_t per = outer * inner;
            auto less = [&](std::int64_t u, std::int64_t v) {
                for (std::int64_t e = 0; e < per; ++e)
                    if (at(u, e) != at(v, e)) return at(u, e) < at(v, e);
                return false;
            };
            std::stable_sort(order.begin(), order.end(), less);  // equal slices keep their order: the first comes first
            std::vector<std::int64_t> group(order.size());  // the group (in sorted order) of each sorted position
            std::int64_t groups = 0;
            for (std::size_t i = 0; i < order.size(); ++i) {
                if (i > 0 && less(order[i - 1], order[i])) ++groups;
                group[i] = groups;
            }
            const std::size_t n = order.empty() ? 0 : static_cast<std::size_t>(groups + 1);
            std::vector<std::int64_t> leader(n, -1), count(n, 0);  // each group's first slice, its size
            for (std::size_t i = 0; i < order.size(); ++i) {
                const auto g = static_cast<std::size_t>(group[i]);
                if (leader[g] < 0) leader[g] = order[i];
                ++count[g];
            }
            // The output order of the groups: sorted, or by first appearance.
            std::vector<std::size_t> rank(n);
            std::iota(rank.begin(), rank.end(), std::size_t{0});
            if (!sorted) std::sort(rank.begin(), rank.end(), [&](std::size_t u, std::size_t v) { return leader[u] < leader[v]; });
            std::vector<std::int64_t> slot(n);  // a group's place in the output
            for (std::size_t i = 0; i < n; ++i) slot[rank[i]] = static_cast<std::int64_t>(i);
            for (std::size_t i = 0; i < order.size(); ++i)
                inverse[static_cast<std::size_t>(order[i])] = slot[static_cast<std::size_t>(group[i])];
            for (std::size_t i = 0; i < n; ++i) {
                first.push_back(leader[rank[i]]);
                counts.push_back(count[rank[i]]);
            }
            shape yd = d;
            yd[ax] = static_cast<std::int64_t>(n);
            y = value::zeros(x.type(), yd);
            T* o = y.as<T>();
            for (std::size_t i = 0; i < n; ++i)
                for (std::int64_t e = 0; e < per; ++e)
                    o[((e / inner) * static_cast<std::int64_t>(n) + static_cast<std::int64_t>(i)) * inner + e % inner] = at(first[i], e);
        });
        auto as_value = [](const std::vector<std::int64_t>& v) { return value::of<std::int64_t>({static_cast<std::int64_t>(v.size())}, v); };
        return values{y, as_value(first), as_value(inverse), as_value(counts)};
    };
}

}  // namespace typed
namespace kernels {

// The typed_kernels<Tag> facets of this family's ops.
template <> inline constexpr typed_binding typed_kernels<ops::EyeLike>{typed::eye_like};
template <> inline constexpr typed_binding typed_kernels<ops::NonZero>{typed::non_zero};
template <> inline constexpr typed_binding typed_kernels<ops::Compress>{typed::compress};
template <> inline constexpr typed_binding typed_kernels<ops::Unique>{typed::unique};

}  // namespace kernels
}  // namespace exec
SGMATCH_END_NAMESPACE
