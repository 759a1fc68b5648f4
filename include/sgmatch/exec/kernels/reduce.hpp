// sgmatch/exec/kernels/reduce.hpp - the reductions' kernels (reference::reduce), their axes read
// once, when the executor is built, from the attribute or a constant input, or at each run when
// the axes input is computed.
#pragma once

#include <vector>

#include "sgmatch/detail/config.hpp"
#include "sgmatch/exec/node_kernels.hpp"
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

using rk = reference::reduce_kind;
inline const kernel_binding reductions[] = {
    {&ops::schemas::reduce_mean, reduce<rk::mean>, nullptr},
    {&ops::schemas::reduce_sum, reduce<rk::sum>, nullptr},
    {&ops::schemas::reduce_max, reduce<rk::max>, nullptr},
    {&ops::schemas::reduce_min, reduce<rk::min>, nullptr},
    {&ops::schemas::reduce_prod, reduce<rk::prod>, nullptr},
    {&ops::schemas::reduce_sum_square, reduce<rk::sum_square>, nullptr},
    {&ops::schemas::reduce_l1, reduce<rk::l1>, nullptr},
    {&ops::schemas::reduce_l2, reduce<rk::l2>, nullptr},
    {&ops::schemas::reduce_log_sum, reduce<rk::log_sum>, nullptr},
    {&ops::schemas::reduce_log_sum_exp, reduce<rk::log_sum_exp>, nullptr},
};

}  // namespace kernels
}  // namespace exec
SGMATCH_END_NAMESPACE
