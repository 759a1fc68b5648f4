// sgmatch/ops/reduce.hpp - descriptions of the reductions (ReduceMean, ReduceSum, ...): the axes
// as an attribute (before opset 13, or 18 for all but ReduceSum) or as an input; f32 and f64 data.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

#include "sgmatch/detail/config.hpp"
#include "sgmatch/ops/schema.hpp"
#include "sgmatch/ops/shape_rules.hpp"
#include "sgmatch/pattern/vocabulary.hpp"

SGMATCH_BEGIN_NAMESPACE
namespace ops {
namespace rules {

/// The reduced axes, normalized; empty means every axis (or none, with noop_with_empty_axes).
inline std::vector<bool> reduced_axes(const shape_inputs& in, const op_attrs& a) {
    const std::size_t r = in.shapes.at(0).size();
    const auto axes = param(in, a, 1, "axes");
    const bool all = !axes || axes->empty();
    std::vector<bool> red(r, all && a.i("noop_with_empty_axes") == 0);
    if (!all)
        for (auto x : *axes) {
            const std::size_t i = axis(a, x, r, "axes");
            if (red[i]) fail(a, "axis " + std::to_string(x) + " is listed twice");
            red[i] = true;
        }
    return red;
}

inline std::vector<dims> reduce(const shape_inputs& in, const op_attrs& a) {
    const dims& x = in.shapes.at(0);
    const std::vector<bool> red = reduced_axes(in, a);
    dims out;
    for (std::size_t i = 0; i < x.size(); ++i) {
        if (!red[i]) out.push_back(x[i]);
        else if (a.i("keepdims") != 0) out.push_back(1);
    }
    return {out};
}

}  // namespace rules

namespace schemas {

inline constexpr input_spec reduce_inputs[] = {{"data"}, {"axes", input_spec::presence::optional, true}};
inline constexpr attr_spec reduce_attrs[] = {
    {"axes", attr_type::integers, def::absent(), support::any()},
    {"keepdims", attr_type::integer, def::value(1), support::range(0, 1)},
    {"noop_with_empty_axes", attr_type::integer, def::value(0), support::range(0, 1)},
};

/// f32 on the fp32 kernels (oneDNN's reduction or the reference), f64 on the typed ones.
inline constexpr std::uint16_t reduce_types = types::f32 | types::bit(dtype::f64);

inline constexpr op_schema reduce_mean = typed(describe<ReduceMean>(reduce_inputs, reduce_attrs), reduce_types);
inline constexpr op_schema reduce_sum = typed(describe<ReduceSum>(reduce_inputs, reduce_attrs), reduce_types);
inline constexpr op_schema reduce_max = typed(describe<ReduceMax>(reduce_inputs, reduce_attrs), reduce_types);
inline constexpr op_schema reduce_min = typed(describe<ReduceMin>(reduce_inputs, reduce_attrs), reduce_types);
inline constexpr op_schema reduce_prod = typed(describe<ReduceProd>(reduce_inputs, reduce_attrs), reduce_types);
inline constexpr op_schema reduce_sum_square = typed(describe<ReduceSumSquare>(reduce_inputs, reduce_attrs), reduce_types);
inline constexpr op_schema reduce_l1 = typed(describe<ReduceL1>(reduce_inputs, reduce_attrs), reduce_types);
inline constexpr op_schema reduce_l2 = typed(describe<ReduceL2>(reduce_inputs, reduce_attrs), reduce_types);
inline constexpr op_schema reduce_log_sum = typed(describe<ReduceLogSum>(reduce_inputs, reduce_attrs), reduce_types);
inline constexpr op_schema reduce_log_sum_exp = typed(describe<ReduceLogSumExp>(reduce_inputs, reduce_attrs), reduce_types);

}  // namespace schemas

// The ops layer's facets of each op's entry (its vocabulary tag): the description and the shape rule.
template <> inline constexpr const op_schema* description<ReduceMean> = &schemas::reduce_mean;
template <> inline constexpr shape_rule shape_rule_for<ReduceMean> = rules::reduce;
template <> inline constexpr const op_schema* description<ReduceSum> = &schemas::reduce_sum;
template <> inline constexpr shape_rule shape_rule_for<ReduceSum> = rules::reduce;
template <> inline constexpr const op_schema* description<ReduceMax> = &schemas::reduce_max;
template <> inline constexpr shape_rule shape_rule_for<ReduceMax> = rules::reduce;
template <> inline constexpr const op_schema* description<ReduceMin> = &schemas::reduce_min;
template <> inline constexpr shape_rule shape_rule_for<ReduceMin> = rules::reduce;
template <> inline constexpr const op_schema* description<ReduceProd> = &schemas::reduce_prod;
template <> inline constexpr shape_rule shape_rule_for<ReduceProd> = rules::reduce;
template <> inline constexpr const op_schema* description<ReduceSumSquare> = &schemas::reduce_sum_square;
template <> inline constexpr shape_rule shape_rule_for<ReduceSumSquare> = rules::reduce;
template <> inline constexpr const op_schema* description<ReduceL1> = &schemas::reduce_l1;
template <> inline constexpr shape_rule shape_rule_for<ReduceL1> = rules::reduce;
template <> inline constexpr const op_schema* description<ReduceL2> = &schemas::reduce_l2;
template <> inline constexpr shape_rule shape_rule_for<ReduceL2> = rules::reduce;
template <> inline constexpr const op_schema* description<ReduceLogSum> = &schemas::reduce_log_sum;
template <> inline constexpr shape_rule shape_rule_for<ReduceLogSum> = rules::reduce;
template <> inline constexpr const op_schema* description<ReduceLogSumExp> = &schemas::reduce_log_sum_exp;
template <> inline constexpr shape_rule shape_rule_for<ReduceLogSumExp> = rules::reduce;

}  // namespace ops
SGMATCH_END_NAMESPACE
