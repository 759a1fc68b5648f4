// sgmatch/exec/kernels/reduce.hpp - the reductions' kernels (reference::reduce, and a oneDNN
// reduction primitive for all but ReduceLogSum / LogSumExp), their axes read once, when the
// executor is built, from the attribute or a constant input, or at each run when the axes input
// is computed (the reference kernel then).
#pragma once

#include <vector>

#include "sgmatch/detail/config.hpp"
#include "sgmatch/exec/node_kernels.hpp"
#include "sgmatch/onednn/op_kernels.hpp"
#include "sgmatch/ops/reduce.hpp"
#include "sgmatch/reference/tensor_ops.hpp"

SGMATCH_BEGIN_NAMESPACE
namespace exec {
namespace kernels {

template <reference::reduce_kind K>
reference_fn reduce(const node_context& c) {
    const bool keep = c.a.i("keepdims") != 0;
    if (c.input_count() > 1 && !c.input_is_constant(1)) {
        // The axes (int64) come as exact numbers (executor: integer parameters of fp32 kernels).
        return [a = c.a, keep, noop = c.a.i("noop_with_empty_axes") != 0](const std::vector<const array*>& x) {
            const ops::dims axes = int_values(in(x, 1, a), a, "axes");
            if (axes.empty() && noop) return array(*x[0]);
            return array(reference::reduce(*x[0], K, axes, keep));
        };
    }
    const auto axes = c.ints_param(1, "axes").value_or(ops::dims{});
    if (axes.empty() && c.a.i("noop_with_empty_axes") != 0)
        return [](const std::vector<const array*>& x) { return *x.at(0); };
    return [axes, keep](const std::vector<const array*>& x) { return reference::reduce(*x.at(0), K, axes, keep); };
}

/// A oneDNN reduction primitive: constant axes (or none: every axis), not the identity of
/// noop_with_empty_axes, not a scalar result (each declined with its reason). ReduceL1 / L2 / SumSquare are oneDNN's p-norms with p 1, 2 and the
/// p-th power sum with p 2.
template <dnnl::algorithm Alg, int P = 0>
onednn_choice onednn_reduce(const node_context& c, bool) {
    if (c.input_count() > 1 && !c.input_is_constant(1)) return decline("the axes (input 1) are computed at run time");
    const auto axes = c.ints_param(1, "axes").value_or(ops::dims{});
    if (axes.empty() && c.a.i("noop_with_empty_axes") != 0) return decline("no axes with noop_with_empty_axes: the identity");
    // A scalar result (every axis reduced and dropped) has rank 0, which a oneDNN tensor has not:
    // the reference kernel makes it.
    if (c.a.i("keepdims") == 0) {
        if (axes.empty()) return decline("every axis reduced and dropped: a scalar, which a oneDNN tensor cannot hold");
        const auto t = c.input_type(0);
        if (t && !t->dims.empty() && axes.size() >= t->dims.size())  // (else the kernel refuses at run time)
            return decline("every axis reduced and dropped: a scalar, which a oneDNN tensor cannot hold");
    }
    return std::make_shared<onednn::reduce_kernel>(Alg, static_cast<float>(P), axes, c.a.i("keepdims") != 0);
}

using rk = reference::reduce_kind;
using ra = dnnl::algorithm;
template <> inline constexpr kernel_binding f32_kernels<ops::ReduceMean>{reduce<rk::mean>, onednn_reduce<ra::reduction_mean>};
template <> inline constexpr kernel_binding f32_kernels<ops::ReduceSum>{reduce<rk::sum>, onednn_reduce<ra::reduction_sum>};
template <> inline constexpr kernel_binding f32_kernels<ops::ReduceMax>{reduce<rk::max>, onednn_reduce<ra::reduction_max>};
template <> inline constexpr kernel_binding f32_kernels<ops::ReduceMin>{reduce<rk::min>, onednn_reduce<ra::reduction_min>};
template <> inline constexpr kernel_binding f32_kernels<ops::ReduceProd>{reduce<rk::prod>, onednn_reduce<ra::reduction_mul>};
template <> inline constexpr kernel_binding f32_kernels<ops::ReduceSumSquare>{reduce<rk::sum_square>, onednn_reduce<ra::reduction_norm_lp_power_p_sum, 2>};
template <> inline constexpr kernel_binding f32_kernels<ops::ReduceL1>{reduce<rk::l1>, onednn_reduce<ra::reduction_norm_lp_sum, 1>};
template <> inline constexpr kernel_binding f32_kernels<ops::ReduceL2>{reduce<rk::l2>, onednn_reduce<ra::reduction_norm_lp_sum, 2>};
template <> inline constexpr kernel_binding f32_kernels<ops::ReduceLogSum>{reduce<rk::log_sum>, nullptr};
template <> inline constexpr kernel_binding f32_kernels<ops::ReduceLogSumExp>{reduce<rk::log_sum_exp>, nullptr};

}  // namespace kernels
}  // namespace exec
SGMATCH_END_NAMESPACE
