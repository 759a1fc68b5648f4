// sgmatch/exec/kernels/reduce_typed.hpp - the reductions (ReduceSum, ReduceMean, ...,
// ReduceLogSumExp) over typed values: f64 data, which the fp32 kernels (exec/kernels/reduce.hpp)
// do not take. They sum in double and write the data's type; the axes come from the attribute
// or the axes input, as the op's description reads them. ReduceLogSumExp subtracts each output's
// maximum before exponentiating (log(sum(exp(x - m))) + m), so that large inputs do not overflow.
#pragma once

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <limits>
#include <type_traits>
#include <vector>

#include "sgmatch/detail/config.hpp"
#include "sgmatch/exec/kernels/typed_support.hpp"
#include "sgmatch/exec/value.hpp"
#include "sgmatch/ops/reduce.hpp"

SGMATCH_BEGIN_NAMESPACE
namespace exec {
namespace typed {

enum class reduction { sum, mean, max, min, prod, sum_square, l1, l2, log_sum, log_sum_exp };

namespace detail {

// For each element of x (row-major), the flat index of the output element it reduces into.
inline std::vector<std::int64_t> reduced_positions(const shape& dims, const std::vector<bool>& reduced) {
    const std::size_t r = dims.size();
    shape out_stride(r, 0);  // 0 along reduced axes
    std::int64_t s = 1;
    for (std::size_t k = r; k-- > 0;)
        if (!reduced[k]) {
            out_stride[k] = s;
            s *= dims[k];
        }
    std::int64_t n = 1;
    for (auto d : dims) n *= d;
    std::vector<std::int64_t> at(static_cast<std::size_t>(n));
    shape idx(r, 0);
    std::int64_t o = 0;
    for (std::int64_t i = 0; i < n; ++i) {
        at[static_cast<std::size_t>(i)] = o;
        for (std::size_t k = r; k-- > 0;) {  // next index, carrying
            o += out_stride[k];
            if (++idx[k] < dims[k]) break;
            o -= out_stride[k] * dims[k];
            idx[k] = 0;
        }
    }
    return at;
}

}  // namespace detail

template <reduction R>
typed_fn reduce(const ops::op_attrs& a0, const ops::node_source&) {
    return [a = a0](const values& xs) {
        const value x = in(xs, 0, a).dense_value();
        require_type(a, x);
        const ops::shape_inputs si = shapes_of(xs);
        const shape out_dims = rule(a, si).at(0);
        const std::vector<bool> reduced = ops::rules::reduced_axes(si, a);
        bool none = true;
        for (bool b : reduced) none = none && !b;
        if (none) return values{x};  // noop_with_empty_axes and no axes: the data as it is
        value out = value::zeros(x.type(), out_dims);
        const std::vector<std::int64_t> at = detail::reduced_positions(x.dims(), reduced);
        visit_type(x.type(), [&](auto t) {
            using T = typename decltype(t)::type;
            if constexpr (std::is_floating_point_v<T>) {
                const T* p = x.as<T>();
                T* o = static_cast<T*>(out.mutable_data());
                const auto m = static_cast<std::size_t>(out.size());
                constexpr double inf = std::numeric_limits<double>::infinity();
                const double init = R == reduction::prod ? 1.0 : R == reduction::max ? -inf : R == reduction::min ? inf : 0.0;
                // Every output reduces the same number of elements.
                const double count = m == 0 ? 0.0 : static_cast<double>(at.size()) / static_cast<double>(m);
                std::vector<double> acc(m, init), peak(R == reduction::log_sum_exp ? m : 0, -inf);
                if constexpr (R == reduction::log_sum_exp)
                    for (std::size_t i = 0; i < at.size(); ++i) {
                        const auto j = static_cast<std::size_t>(at[i]);
                        peak[j] = std::max(peak[j], static_cast<double>(p[i]));
                    }
                for (std::size_t i = 0; i < at.size(); ++i) {
                    const auto j = static_cast<std::size_t>(at[i]);
                    const double v = static_cast<double>(p[i]);
                    double& s = acc[j];
                    switch (R) {
                        case reduction::sum: case reduction::mean: case reduction::log_sum: s += v; break;
                        case reduction::max: s = std::isnan(v) || v > s ? v : s; break;
                        case reduction::min: s = std::isnan(v) || v < s ? v : s; break;
                        case reduction::prod: s *= v; break;
                        case reduction::sum_square: case reduction::l2: s += v * v; break;
                        case reduction::l1: s += std::fabs(v); break;
                        case reduction::log_sum_exp: s += std::isinf(peak[j]) ? std::exp(v) : std::exp(v - peak[j]); break;
                    }
                }
                for (std::size_t j = 0; j < m; ++j) {
                    double s = acc[j];
                    if constexpr (R == reduction::mean) s /= count;
                    if constexpr (R == reduction::l2) s = std::sqrt(s);
                    if constexpr (R == reduction::log_sum) s = std::log(s);
                    if constexpr (R == reduction::log_sum_exp) s = std::log(s) + (std::isinf(peak[j]) ? 0.0 : peak[j]);
                    o[j] = static_cast<T>(s);
                }
            }
        });
        return values{out};
    };
}

}  // namespace typed
namespace kernels {

// The typed_kernels<Tag> facets of this family's ops.
template <> inline constexpr typed_binding typed_kernels<ops::ReduceMean>{typed::reduce<typed::reduction::mean>};
template <> inline constexpr typed_binding typed_kernels<ops::ReduceSum>{typed::reduce<typed::reduction::sum>};
template <> inline constexpr typed_binding typed_kernels<ops::ReduceMax>{typed::reduce<typed::reduction::max>};
template <> inline constexpr typed_binding typed_kernels<ops::ReduceMin>{typed::reduce<typed::reduction::min>};
template <> inline constexpr typed_binding typed_kernels<ops::ReduceProd>{typed::reduce<typed::reduction::prod>};
template <> inline constexpr typed_binding typed_kernels<ops::ReduceSumSquare>{typed::reduce<typed::reduction::sum_square>};
template <> inline constexpr typed_binding typed_kernels<ops::ReduceL1>{typed::reduce<typed::reduction::l1>};
template <> inline constexpr typed_binding typed_kernels<ops::ReduceL2>{typed::reduce<typed::reduction::l2>};
template <> inline constexpr typed_binding typed_kernels<ops::ReduceLogSum>{typed::reduce<typed::reduction::log_sum>};
template <> inline constexpr typed_binding typed_kernels<ops::ReduceLogSumExp>{typed::reduce<typed::reduction::log_sum_exp>};

}  // namespace kernels
}  // namespace exec
SGMATCH_END_NAMESPACE
