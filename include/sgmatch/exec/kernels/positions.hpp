// sgmatch/exec/kernels/positions.hpp - kernels over typed values for the ops that work by
// element position (ops/positions.hpp): Tile, Trilu, GatherElements, DepthToSpace,
// SpaceToDepth, Pad and GatherND move bytes, so they take every element type; Range, CumSum, ArgMax,
// ArgMin, ScatterElements and ScatterND (with their reductions) compute on the numeric types and bool; TopK on the
// numeric types; Hardmax on f32 and f64; OneHot takes indices of any numeric type and values of any type but f16 / bf16.
//
// Integer sums wrap around (two's complement), as the element-wise integer kernels do; ArgMax
// and ArgMin skip nothing: a NaN compares false, so the first element of a row of NaNs wins.
#pragma once

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <array>
#include <cstring>
#include <string_view>
#include <vector>
#include <string>
#include <type_traits>

#include "sgmatch/detail/config.hpp"
#include "sgmatch/exec/kernels/typed_support.hpp"
#include "sgmatch/exec/value.hpp"
#include "sgmatch/ops/positions.hpp"

SGMATCH_BEGIN_NAMESPACE
namespace exec {
namespace typed {

/// The extents around axis `ax` of `d`: elements before it (outer), along it, after it (inner).
struct axis_extents {
    std::int64_t outer = 1, length = 1, inner = 1;
};
inline axis_extents extents_around(const shape& d, std::size_t ax) {
    axis_extents e;
    for (std::size_t k = 0; k < d.size(); ++k) (k < ax ? e.outer : k == ax ? e.length : e.inner) *= d[k];
    return e;
}

/// One value of a one-value integer input (CumSum's axis, Trilu's k).
inline std::int64_t one_int(const ops::op_attrs& a, const value& v, const char* what) {
    if (v.type() != dtype::i64 && v.type() != dtype::i32) fail(a, std::string(what) + " is " + std::string(name_of(v.type())) + " (int64 or int32 expected)");
    if (v.size() != 1) fail(a, std::string(what) + " has " + std::to_string(v.size()) + " values, not one");
    return v.dense_value().to_ints()[0];
}

inline typed_fn tile(const ops::op_attrs& a0, const ops::node_source&) {
    return [a = a0](const values& xs) {
        const value x = in(xs, 0, a).dense_value();
        const shape out_dims = rule(a, xs).at(0);
        value out = value::zeros(x.type(), out_dims);
        if (out.size() == 0) return values{out};
        const std::size_t rank = x.rank(), es = size_of(x.type());
        const std::int64_t row = rank == 0 ? 1 : x.dims().back();  // one source row, repeated along the last axis
        const std::int64_t copies = rank == 0 ? 1 : out_dims.back() / row;
        const shape src_strides = value::dense_strides(x.dims());
        std::byte* o = bytes_of(out);
        const std::byte* s = bytes_of(x);
        shape idx(rank > 0 ? rank - 1 : 0, 0);  // the output row's index over the leading axes
        for (std::int64_t r = 0, rows = out.size() / (row * copies); r < rows; ++r) {
            std::int64_t src = 0;
            for (std::size_t k = 0; k < idx.size(); ++k) src += (idx[k] % x.dims()[k]) * src_strides[k];
            for (std::int64_t c = 0; c < copies; ++c, o += row * static_cast<std::int64_t>(es))
                std::memcpy(o, s + src * static_cast<std::int64_t>(es), static_cast<std::size_t>(row) * es);
            for (std::size_t k = idx.size(); k-- > 0;) {
                if (++idx[k] < out_dims[k]) break;
                idx[k] = 0;
            }
        }
        return values{out};
    };
}

inline typed_fn trilu(const ops::op_attrs& a0, const ops::node_source&) {
    return [a = a0, upper = a0.i("upper") != 0](const values& xs) {
        value out = in(xs, 0, a).clone();
        rule(a, xs);
        const std::int64_t k = xs.size() > 1 && xs[1].size() > 0 ? one_int(a, xs[1], "k") : 0;
        const shape& d = out.dims();
        const std::int64_t rows = d[d.size() - 2], cols = d.back(), es = static_cast<std::int64_t>(size_of(out.type()));
        std::byte* o = bytes_of(out);
        for (std::int64_t m = 0, count = rows * cols == 0 ? 0 : out.size() / (rows * cols); m < count; ++m)
            for (std::int64_t i = 0; i < rows; ++i)
                for (std::int64_t j = 0; j < cols; ++j) {
                    // Kept: on or above diagonal k (upper), on or below it (lower).
                    const bool keep = upper ? j - i >= k : j - i <= k;
                    if (!keep) std::memset(o + ((m * rows + i) * cols + j) * es, 0, static_cast<std::size_t>(es));
                }
        return values{out};
    };
}

inline typed_fn range(const ops::op_attrs& a0, const ops::node_source&) {
    return [a = a0](const values& xs) {
        const value& s0 = in(xs, 0, a);
        for (std::size_t i = 1; i < 3; ++i)
            if (in(xs, i, a).type() != s0.type())
                fail(a, "start is " + std::string(name_of(s0.type())) + ", input " + std::to_string(i) + " is " + std::string(name_of(xs[i].type())));
        require_type(a, s0);
        const std::int64_t n = rule(a, xs).at(0).at(0);
        value out = value::zeros(s0.type(), shape{n});
        visit_type(s0.type(), [&](auto t) {
            using T = typename decltype(t)::type;
            if constexpr (!std::is_same_v<T, bool>) {
                const value sv = s0.dense_value(), dv = xs[2].dense_value();
                const T start = sv.as<T>()[0], delta = dv.as<T>()[0];
                T* o = out.as<T>();
                // Each value from start, not by repeated addition: no rounding drift along the range.
                for (std::int64_t i = 0; i < n; ++i) {
                    if constexpr (std::is_integral_v<T>)
                        o[i] = wrap(start, wrap(static_cast<T>(i), delta, [](auto p, auto q) { return p * q; }), [](auto p, auto q) { return p + q; });
                    else
                        o[i] = static_cast<T>(start + static_cast<T>(i) * delta);
                }
            }
        });
        return values{out};
    };
}

inline typed_fn cumsum(const ops::op_attrs& a0, const ops::node_source&) {
    return [a = a0, exclusive = a0.i("exclusive") != 0, reverse = a0.i("reverse") != 0](const values& xs) {
        const value x = in(xs, 0, a).dense_value();
        require_type(a, x);
        const std::int64_t given = one_int(a, in(xs, 1, a), "axis");
        rule(a, xs);  // checks the axis against the rank
        const std::size_t ax = ops::rules::axis(a, given, x.rank());
        value out = value::zeros(x.type(), x.dims());
        const axis_extents e = extents_around(x.dims(), ax);
        visit_type(x.type(), [&](auto t) {
            using T = typename decltype(t)::type;
            if constexpr (!std::is_same_v<T, bool>) {
                const T* p = x.as<T>();
                T* o = out.as<T>();
                for (std::int64_t r = 0; r < e.outer; ++r)
                    for (std::int64_t c = 0; c < e.inner; ++c) {
                        T sum{};
                        for (std::int64_t s = 0; s < e.length; ++s) {
                            const std::int64_t j = reverse ? e.length - 1 - s : s, at = (r * e.length + j) * e.inner + c;
                            if (exclusive) o[at] = sum;
                            sum = wrap(sum, p[at], [](auto u, auto v) { return u + v; });
                            if (!exclusive) o[at] = sum;
                        }
                    }
            }
        });
        return values{out};
    };
}

/// ArgMax (Max = true) or ArgMin: the first index of the extreme along the axis, or the last
/// with select_last_index.
template <bool Max>
typed_fn arg_reduce(const ops::op_attrs& a0, const ops::node_source&) {
    return [a = a0, last = a0.i("select_last_index") != 0](const values& xs) {
        const value x = in(xs, 0, a).dense_value();
        require_type(a, x);
        const shape out_dims = rule(a, xs).at(0);
        const axis_extents e = extents_around(x.dims(), ops::rules::axis(a, a.i("axis"), x.rank()));
        value out = value::zeros(dtype::i64, out_dims);
        std::int64_t* o = out.as<std::int64_t>();
        visit_type(x.type(), [&](auto t) {
            using T = typename decltype(t)::type;
            const T* p = x.as<T>();
            for (std::int64_t r = 0; r < e.outer; ++r)
                for (std::int64_t c = 0; c < e.inner; ++c) {
                    const T* row = p + r * e.length * e.inner + c;
                    std::int64_t best = 0;
                    for (std::int64_t j = 1; j < e.length; ++j) {
                        const T v = row[j * e.inner], b = row[best * e.inner];
                        const bool better = Max ? (last ? v >= b : v > b) : (last ? v <= b : v < b);
                        if (better) best = j;
                    }
                    o[r * e.inner + c] = best;
                }
        });
        return values{out};
    };
}

/// Hardmax: 1 at the first maximum along the axis, 0 elsewhere (a row of NaNs: its first element).
inline typed_fn hardmax(const ops::op_attrs& a0, const ops::node_source&) {
    return [a = a0](const values& xs) {
        const value x = in(xs, 0, a).dense_value();
        require_type(a, x);
        const axis_extents e = extents_around(x.dims(), ops::rules::axis(a, a.i("axis"), x.rank()));
        value out = value::zeros(x.type(), rule(a, xs).at(0));
        visit_type(x.type(), [&](auto t) {
            using T = typename decltype(t)::type;
            const T* p = x.as<T>();
            T* o = static_cast<T*>(out.mutable_data());
            for (std::int64_t r = 0; r < e.outer; ++r)
                for (std::int64_t c = 0; c < e.inner; ++c) {
                    const std::int64_t base = r * e.length * e.inner + c;
                    std::int64_t best = 0;
                    for (std::int64_t j = 1; j < e.length; ++j)
                        if (p[base + j * e.inner] > p[base + best * e.inner]) best = j;
                    if (e.length > 0) o[base + best * e.inner] = T(1);
                }
        });
        return values{out};
    };
}

/// Pad on any element type: constant (the value, in the data's type), reflect (mirrored about the
/// edge element, again and again where a pad is longer than the axis) and edge (the edge element
/// repeated); a negative pad crops.
inline typed_fn pad(const ops::op_attrs& a0, const ops::node_source&) {
    const std::string_view mode = a0.s("mode");
    return [a = a0, reflect = mode == "reflect", edge = mode == "edge"](const values& xs) {
        const value x = in(xs, 0, a).dense_value();
        const shape out_dims = rule(a, xs).at(0);
        const std::vector<std::int64_t> pads = xs.size() > 1 && xs[1].size() > 0 ? xs[1].dense_value().to_ints() : a.ints("pads");
        const value fill = cast_to(xs.size() > 2 && xs[2].size() == 1 ? xs[2] : value::of<double>({}, {a.f("value")}), x.type());
        value out = value::zeros(x.type(), out_dims);
        const std::size_t r = x.rank();
        const auto es = static_cast<std::int64_t>(size_of(x.type()));
        if (out.size() == 0) return values{out};
        if (reflect || edge)
            for (std::size_t k = 0; k < r; ++k)
                if (x.dims()[k] == 0) fail(a, "axis " + std::to_string(k) + " is empty: nothing to " + (reflect ? "reflect" : "repeat"));
        const shape src_strides = value::dense_strides(x.dims());
        const std::byte* s = bytes_of(x);
        std::byte* o = bytes_of(out);
        shape idx(r, 0);
        for (std::int64_t e = 0, n = out.size(); e < n; ++e, o += es) {
            bool inside = true;
            std::int64_t at = 0;
            for (std::size_t k = 0; k < r && inside; ++k) {
                const std::int64_t d = x.dims()[k];
                std::int64_t c = idx[k] - pads[k];
                if (c < 0 || c >= d) {
                    if (edge) {
                        c = std::clamp<std::int64_t>(c, 0, d - 1);
                    } else if (reflect) {
                        const std::int64_t period = 2 * (d - 1);
                        c = period == 0 ? 0 : ((c % period) + period) % period;
                        if (c >= d) c = period - c;
                    } else {
                        inside = false;
                    }
                }
                at += c * src_strides[k];
            }
            std::memcpy(o, inside ? s + at * es : bytes_of(fill), static_cast<std::size_t>(es));
            for (std::size_t k = r; k-- > 0;) {
                if (++idx[k] < out_dims[k]) break;
                idx[k] = 0;
            }
        }
        return values{out};
    };
}

/// TopK: the k largest (or smallest) along the axis, in that order (also with sorted = 0), and
/// their indices; equal values in the order of their indices; NaN above every number.
inline typed_fn top_k(const ops::op_attrs& a0, const ops::node_source&) {
    return [a = a0, largest = a0.i("largest") != 0](const values& xs) {
        const value x = in(xs, 0, a).dense_value();
        require_type(a, x);
        const std::vector<ops::dims> out_dims = rule(a, xs);
        const std::size_t ax = ops::rules::axis(a, a.i("axis"), x.rank());
        const axis_extents e = extents_around(x.dims(), ax);
        const std::int64_t k = out_dims.at(0)[ax];
        value vals = value::zeros(x.type(), out_dims[0]), idx = value::zeros(dtype::i64, out_dims[1]);
        std::int64_t* io = idx.as<std::int64_t>();
        visit_type(x.type(), [&](auto t) {
            using T = typename decltype(t)::type;
            if constexpr (!std::is_same_v<T, bool>) {
                const T* p = x.as<T>();
                T* vo = vals.as<T>();
                std::vector<std::int64_t> order(static_cast<std::size_t>(e.length));
                for (std::int64_t r = 0; r < e.outer; ++r)
                    for (std::int64_t c = 0; c < e.inner; ++c) {
                        const T* row = p + r * e.length * e.inner + c;
                        auto above = [&](std::int64_t i, std::int64_t j) {  // row[i] ranks before row[j]
                            const T u = row[i * e.inner], v = row[j * e.inner];
                            if constexpr (std::is_floating_point_v<T>) {
                                if (std::isnan(u) || std::isnan(v)) return largest ? std::isnan(u) && !std::isnan(v) : !std::isnan(u) && std::isnan(v);
                            }
                            return largest ? u > v : u < v;
                        };
                        for (std::int64_t j = 0; j < e.length; ++j) order[static_cast<std::size_t>(j)] = j;
                        std::stable_sort(order.begin(), order.end(), above);
                        for (std::int64_t j = 0; j < k; ++j) {
                            const std::int64_t at = (r * k + j) * e.inner + c;
                            io[at] = order[static_cast<std::size_t>(j)];
                            vo[at] = row[io[at] * e.inner];
                        }
                    }
            }
        });
        return values{vals, idx};
    };
}

/// OneHot: values[0] everywhere, values[1] where the axis' coordinate is the index (an index in
/// [-depth, depth), a negative one counted from the end; others give a row of values[0]).
inline typed_fn one_hot(const ops::op_attrs& a0, const ops::node_source&) {
    return [a = a0](const values& xs) {
        const value ind = in(xs, 0, a).dense_value();
        const value vals = in(xs, 2, a).dense_value();
        require_type(a, vals);
        if (!ops::types::has(ops::types::numeric, ind.type()))
            fail(a, "indices of type " + std::string(name_of(ind.type())) + " (a numeric type expected)");
        const shape out_dims = rule(a, xs).at(0);
        const std::int64_t r = static_cast<std::int64_t>(ind.rank());
        std::int64_t ax = a.i("axis");
        if (ax < 0) ax += r + 1;
        const std::int64_t depth = out_dims[static_cast<std::size_t>(ax)];
        value out = value::zeros(vals.type(), out_dims);
        const axis_extents e = extents_around(out_dims, static_cast<std::size_t>(ax));  // e.length == depth
        std::vector<double> idx(static_cast<std::size_t>(ind.size()));
        const const_tensor_view iv = ind.as_constant();
        for (std::size_t i = 0; i < idx.size(); ++i) idx[i] = std::trunc(iv.at(i));
        const std::size_t size = size_of(vals.type());
        const auto* off = static_cast<const unsigned char*>(vals.data());
        const unsigned char* on = off + size;
        auto* o = static_cast<unsigned char*>(out.mutable_data());
        for (std::int64_t k = 0, n = element_count(out_dims); k < n; ++k) std::memcpy(o + k * static_cast<std::int64_t>(size), off, size);
        for (std::int64_t outer = 0; outer < e.outer; ++outer)
            for (std::int64_t inner = 0; inner < e.inner; ++inner) {
                double i = idx[static_cast<std::size_t>(outer * e.inner + inner)];
                if (i < 0) i += static_cast<double>(depth);
                if (!(i >= 0 && i < static_cast<double>(depth))) continue;
                const std::int64_t at = (outer * depth + static_cast<std::int64_t>(i)) * e.inner + inner;
                std::memcpy(o + at * static_cast<std::int64_t>(size), on, size);
            }
        return values{out};
    };
}

/// The indices of GatherElements / ScatterElements as int64, each checked against the axis'
/// extent and made non-negative.
inline std::vector<std::int64_t> element_indices(const ops::op_attrs& a, const value& ind, std::int64_t extent) {
    if (ind.type() != dtype::i64 && ind.type() != dtype::i32)
        fail(a, "indices of type " + std::string(name_of(ind.type())) + " (int64 or int32 expected)");
    std::vector<std::int64_t> idx = ind.dense_value().to_ints();
    for (auto& i : idx) {
        if (i < -extent || i >= extent) fail(a, "index " + std::to_string(i) + " is out of range for an axis of " + std::to_string(extent));
        if (i < 0) i += extent;
    }
    return idx;
}

/// For each element e of `dims` (row-major), f(e, offset of e in `of` with the axis coordinate
/// replaced by idx[e]); `of` has the rank of `dims`.
template <class F>
void along_indices(const shape& dims, const shape& of, std::size_t ax, const std::vector<std::int64_t>& idx, F&& f) {
    const shape st = value::dense_strides(of);
    shape pos(dims.size(), 0);
    std::int64_t base = 0;  // the offset in `of` of pos with the axis coordinate 0
    for (std::int64_t e = 0, n = element_count(dims); e < n; ++e) {
        f(e, base + idx[static_cast<std::size_t>(e)] * st[ax]);
        for (std::size_t k = dims.size(); k-- > 0;) {
            if (++pos[k] < dims[k]) {
                if (k != ax) base += st[k];
                break;
            }
            if (k != ax) base -= st[k] * (dims[k] - 1);
            pos[k] = 0;
        }
    }
}

inline typed_fn gather_elements(const ops::op_attrs& a0, const ops::node_source&) {
    return [a = a0](const values& xs) {
        const value x = in(xs, 0, a).dense_value();
        const shape out_dims = rule(a, xs).at(0);
        const std::size_t ax = ops::rules::axis(a, a.i("axis"), x.rank());
        const std::vector<std::int64_t> idx = element_indices(a, in(xs, 1, a), x.dims()[ax]);
        value out = value::zeros(x.type(), out_dims);
        const auto es = static_cast<std::int64_t>(size_of(x.type()));
        std::byte* o = bytes_of(out);
        const std::byte* s = bytes_of(x);
        along_indices(out_dims, x.dims(), ax, idx,
                      [&](std::int64_t e, std::int64_t at) { std::memcpy(o + e * es, s + at * es, static_cast<std::size_t>(es)); });
        return values{out};
    };
}

namespace detail {

/// ScatterElements' and ScatterND's reductions: none (0), add, mul, max, min.
inline int reduction_of(const ops::op_attrs& a) {
    const std::string_view r = a.s("reduction");
    return r == "add" ? 1 : r == "mul" ? 2 : r == "max" ? 3 : r == "min" ? 4 : 0;
}

/// d = reduce(d, u) by reduction `how` (integer sums and products wrap; on bool, add and max are
/// or, mul and min are and).
template <class T>
void reduce_into(T& d, T u, int how) {
    if constexpr (std::is_same_v<T, bool>) {
        d = how == 1 || how == 3 ? (d || u) : how == 2 || how == 4 ? (d && u) : u;
    } else {
        switch (how) {
            case 1: d = wrap(d, u, [](auto p, auto q) { return p + q; }); break;
            case 2: d = wrap(d, u, [](auto p, auto q) { return p * q; }); break;
            case 3: d = u > d ? u : d; break;
            case 4: d = u < d ? u : d; break;
            default: d = u;
        }
    }
}

/// ScatterElements' and ScatterND's updates (input 2), of the data's type, one the kernels compute on.
inline value updates_of(const ops::op_attrs& a, const values& xs, const value& x) {
    const value up = in(xs, 2, a).dense_value();
    if (up.type() != x.type()) fail(a, "updates are " + std::string(name_of(up.type())) + ", data " + std::string(name_of(x.type())));
    require_type(a, x);
    return up;
}

/// The offsets in data (dims `x`, from dim `first` on, within one batch) of the slices that
/// GatherND's and ScatterND's index tuples name: one per tuple, each index checked against its
/// dim (negative counts from the end).
inline std::vector<std::int64_t> tuple_offsets(const ops::op_attrs& a, const value& ind, const shape& x, std::size_t first) {
    if (ind.type() != dtype::i64) fail(a, "indices of type " + std::string(name_of(ind.type())) + " (int64 taken)");
    const std::vector<std::int64_t> idx = ind.dense_value().to_ints();
    const auto k = static_cast<std::size_t>(ind.dims().back());
    const shape st = value::dense_strides(shape(x.begin() + static_cast<std::ptrdiff_t>(first), x.end()));
    std::vector<std::int64_t> out(idx.size() / k);
    for (std::size_t t = 0; t < out.size(); ++t) {
        std::int64_t off = 0;
        for (std::size_t j = 0; j < k; ++j) {
            const std::int64_t extent = x[first + j];
            std::int64_t i = idx[t * k + j];
            if (i < -extent || i >= extent)
                fail(a, "index " + std::to_string(i) + " is out of range for a dim of " + std::to_string(extent));
            off += (i < 0 ? i + extent : i) * st[j];
        }
        out[t] = off;
    }
    return out;
}

}  // namespace detail

inline typed_fn scatter_elements(const ops::op_attrs& a0, const ops::node_source&) {
    return [a = a0, how = detail::reduction_of(a0)](const values& xs) {
        const value x = in(xs, 0, a).dense_value(), up = detail::updates_of(a, xs, x);
        rule(a, xs);
        const std::size_t ax = ops::rules::axis(a, a.i("axis"), x.rank());
        const std::vector<std::int64_t> idx = element_indices(a, in(xs, 1, a), x.dims()[ax]);
        value out = x.clone();
        visit_type(x.type(), [&](auto t) {
            using T = typename decltype(t)::type;
            T* o = out.as<T>();
            const T* u = up.as<T>();
            along_indices(up.dims(), x.dims(), ax, idx, [&](std::int64_t e, std::int64_t at) { detail::reduce_into(o[at], u[e], how); });
        });
        return values{out};
    };
}

/// GatherND: the slices the index tuples name, copied in the tuples' order, batch by batch.
inline typed_fn gather_nd(const ops::op_attrs& a0, const ops::node_source&) {
    return [a = a0](const values& xs) {
        const value x = in(xs, 0, a).dense_value();
        const value& ind = in(xs, 1, a);
        const shape out_dims = rule(a, xs).at(0);
        const auto b = static_cast<std::size_t>(a.i("batch_dims"));
        const shape& xd = x.dims();
        const std::int64_t batches = element_count(shape(xd.begin(), xd.begin() + static_cast<std::ptrdiff_t>(b)));
        const std::int64_t batch_size = element_count(shape(xd.begin() + static_cast<std::ptrdiff_t>(b), xd.end()));
        const std::int64_t slice =
            element_count(shape(xd.begin() + static_cast<std::ptrdiff_t>(b) + ind.dims().back(), xd.end()));
        const std::vector<std::int64_t> at = detail::tuple_offsets(a, ind, xd, b);
        const std::int64_t per_batch = batches == 0 ? 1 : static_cast<std::int64_t>(at.size()) / batches;
        value out = value::zeros(x.type(), out_dims);
        const auto es = static_cast<std::int64_t>(size_of(x.type()));
        std::byte* o = bytes_of(out);
        const std::byte* src = bytes_of(x);
        for (std::int64_t t = 0; t < static_cast<std::int64_t>(at.size()); ++t)
            std::memcpy(o + t * slice * es, src + ((t / per_batch) * batch_size + at[static_cast<std::size_t>(t)]) * es,
                        static_cast<std::size_t>(slice * es));
        return values{out};
    };
}

/// ScatterND: a copy of data with each updates slice written (or reduced) into the slice its
/// index tuple names, in the tuples' order.
inline typed_fn scatter_nd(const ops::op_attrs& a0, const ops::node_source&) {
    return [a = a0, how = detail::reduction_of(a0)](const values& xs) {
        const value x = in(xs, 0, a).dense_value(), up = detail::updates_of(a, xs, x);
        rule(a, xs);
        const value& ind = in(xs, 1, a);
        const std::vector<std::int64_t> at = detail::tuple_offsets(a, ind, x.dims(), 0);
        const std::int64_t slice = element_count(shape(x.dims().begin() + ind.dims().back(), x.dims().end()));
        value out = x.clone();
        visit_type(x.type(), [&](auto t) {
            using T = typename decltype(t)::type;
            T* o = out.as<T>();
            const T* u = up.as<T>();
            for (std::size_t k = 0; k < at.size(); ++k)
                for (std::int64_t e = 0; e < slice; ++e) detail::reduce_into(o[at[k] + e], u[static_cast<std::int64_t>(k) * slice + e], how);
        });
        return values{out};
    };
}

/// ReverseSequence: for each batch b, steps t < sequence_lens[b] along the time axis come from
/// step sequence_lens[b] - 1 - t; the others are copied.
inline typed_fn reverse_sequence(const ops::op_attrs& a0, const ops::node_source&) {
    return [a = a0](const values& xs) {
        const value x = in(xs, 0, a).dense_value();
        const value& lens = in(xs, 1, a);
        if (lens.type() != dtype::i64) fail(a, "sequence_lens is " + std::string(name_of(lens.type())) + " (int64 taken)");
        rule(a, xs);
        const std::vector<std::int64_t> len = lens.dense_value().to_ints();
        const bool batch_first = a.i("batch_axis") == 0;
        const shape& d = x.dims();
        const std::int64_t steps = d[batch_first ? 1 : 0], batches = d[batch_first ? 0 : 1];
        const std::int64_t inner = element_count(shape(d.begin() + 2, d.end()));
        const auto es = static_cast<std::int64_t>(size_of(x.type()));
        value out = value::zeros(x.type(), d);
        const std::byte* s = bytes_of(x);
        std::byte* o = bytes_of(out);
        for (std::int64_t b = 0; b < batches; ++b) {
            const std::int64_t l = len[static_cast<std::size_t>(b)];
            if (l < 0 || l > steps) fail(a, "sequence_lens " + std::to_string(l) + " for " + std::to_string(steps) + " steps");
            for (std::int64_t t = 0; t < steps; ++t) {
                const std::int64_t from = t < l ? l - 1 - t : t;
                auto at = [&](std::int64_t step) { return (batch_first ? b * steps + step : step * batches + b) * inner * es; };
                std::memcpy(o + at(t), s + at(from), static_cast<std::size_t>(inner * es));
            }
        }
        return values{out};
    };
}

/// DepthToSpace (mode DCR or CRD) and SpaceToDepth: one permuted copy of the
/// input read as 6 dims.
template <ops::rules::block_move M>
typed_fn blocks(const ops::op_attrs& a0, const ops::node_source&) {
    bool crd = false;  // DepthToSpace's mode
    if (M == ops::rules::block_move::depth_to_space) crd = a0.s("mode") == "CRD";
    return [a = a0, crd](const values& xs) {
        const value x = in(xs, 0, a).dense_value();
        const shape out_dims = rule(a, xs).at(0);
        const std::int64_t b = a.i("blocksize"), n = x.dims()[0], c = x.dims()[1], h = x.dims()[2], w = x.dims()[3];
        shape six;
        std::array<std::size_t, 6> perm{};
        if (M == ops::rules::block_move::space_to_depth) six = {n, c, h / b, b, w / b, b}, perm = {0, 3, 5, 1, 2, 4};
        else if (crd) six = {n, c / (b * b), b, b, h, w}, perm = {0, 1, 4, 2, 5, 3};
        else six = {n, b, b, c / (b * b), h, w}, perm = {0, 3, 4, 1, 5, 2};
        const shape src = value::dense_strides(six);
        shape dims(6), st(6);
        for (std::size_t k = 0; k < 6; ++k) dims[k] = six[perm[k]], st[k] = src[perm[k]];
        return values{strided_copy(x, dims, st, out_dims)};
    };
}

}  // namespace typed
namespace kernels {

// The typed_kernels<Tag> facets of this family's ops.
template <> inline constexpr typed_binding typed_kernels<ops::Tile>{typed::tile};
template <> inline constexpr typed_binding typed_kernels<ops::Trilu>{typed::trilu};
template <> inline constexpr typed_binding typed_kernels<ops::Range>{typed::range};
template <> inline constexpr typed_binding typed_kernels<ops::CumSum>{typed::cumsum};
template <> inline constexpr typed_binding typed_kernels<ops::ArgMax>{typed::arg_reduce<true>};
template <> inline constexpr typed_binding typed_kernels<ops::ArgMin>{typed::arg_reduce<false>};
template <> inline constexpr typed_binding typed_kernels<ops::Hardmax>{typed::hardmax};
template <> inline constexpr typed_binding typed_kernels<ops::OneHot>{typed::one_hot};
template <> inline constexpr typed_binding typed_kernels<ops::GatherElements>{typed::gather_elements};
template <> inline constexpr typed_binding typed_kernels<ops::ScatterElements>{typed::scatter_elements};
template <> inline constexpr typed_binding typed_kernels<ops::GatherND>{typed::gather_nd};
template <> inline constexpr typed_binding typed_kernels<ops::ScatterND>{typed::scatter_nd};
template <> inline constexpr typed_binding typed_kernels<ops::ReverseSequence>{typed::reverse_sequence};
template <> inline constexpr typed_binding typed_kernels<ops::DepthToSpace>{typed::blocks<ops::rules::block_move::depth_to_space>};
template <> inline constexpr typed_binding typed_kernels<ops::SpaceToDepth>{typed::blocks<ops::rules::block_move::space_to_depth>};
template <> inline constexpr typed_binding typed_kernels<ops::TopK>{typed::top_k};
template <> inline constexpr typed_binding typed_kernels<ops::Pad>{typed::pad};

}  // namespace kernels
}  // namespace exec
SGMATCH_END_NAMESPACE
