// sgmatch/ops/losses.hpp - descriptions of the losses: NegativeLogLikelihoodLoss (the negated
// input at each target class, weighted, reduced) and SoftmaxCrossEntropyLoss (the same on the
// log-softmax of the scores along axis 1, which it can also return).
//
// Both read input [N, C] or [N, C, d1, ..., dk] and targets [N] or [N, d1, ..., dk] (int32 or
// int64), an optional weight per class [C]; `reduction` none keeps the targets' shape, sum and
// mean give one value. A target equal to `ignore_index` contributes nothing (and no weight to a
// mean); any other target outside [0, C) is an error naming the node.
#pragma once

#include <cstddef>
#include <string>
#include <vector>

#include "sgmatch/detail/config.hpp"
#include "sgmatch/ops/schema.hpp"
#include "sgmatch/ops/shape_rules.hpp"
#include "sgmatch/pattern/vocabulary.hpp"

SGMATCH_BEGIN_NAMESPACE
namespace ops {
namespace rules {

/// The loss: the targets' shape (reduction none) or a scalar; SoftmaxCrossEntropyLoss's second
/// output, the log-probabilities, has the scores' shape.
inline std::vector<dims> loss(const shape_inputs& in, const op_attrs& a) {
    const dims& x = in.shapes.at(0);
    const dims& t = in.shapes.at(1);
    if (x.size() < 2) fail(a, "the input " + to_string(x) + " has rank " + std::to_string(x.size()) + " (at least 2: N, C)");
    dims want = x;
    want.erase(want.begin() + 1);
    if (t != want) fail(a, "the targets " + to_string(t) + " are not the input " + to_string(x) + " without its class axis");
    if (in.shapes.size() > 2 && in.shapes[2] != dims{x[1]})
        fail(a, "the weights " + to_string(in.shapes[2]) + " are not one per class (" + std::to_string(x[1]) + ")");
    dims out = a.s("reduction") == "none" ? t : dims{};
    return {out, x};
}

}  // namespace rules

namespace schemas {

inline constexpr attr_spec loss_attrs[] = {
    {"reduction", attr_type::string, def::text("mean"), support::one_of("none|sum|mean")},
    {"ignore_index", attr_type::integer, def::absent(), support::any()},
};
inline constexpr input_spec nll_loss_inputs[] = {{"input"}, {"target"}, {"weight", input_spec::presence::optional}};
inline constexpr op_schema nll_loss =
    typed(describe<NegativeLogLikelihoodLoss>(nll_loss_inputs, loss_attrs), types::f32 | types::bit(dtype::f64));
inline constexpr input_spec softmax_cross_entropy_inputs[] = {{"scores"}, {"labels"}, {"weights", input_spec::presence::optional}};
/// SoftmaxCrossEntropyLoss: the loss, and (output 1, optional) the log-probabilities.
inline constexpr op_schema softmax_cross_entropy = typed(
    describe<SoftmaxCrossEntropyLoss>(softmax_cross_entropy_inputs, loss_attrs, {}, 2), types::f32 | types::bit(dtype::f64));

}  // namespace schemas

// The ops layer's facets of each op's entry (its vocabulary tag): the description and the shape rule.
template <> inline constexpr const op_schema* description<NegativeLogLikelihoodLoss> = &schemas::nll_loss;
template <> inline constexpr shape_rule shape_rule_for<NegativeLogLikelihoodLoss> = rules::loss;
template <> inline constexpr const op_schema* description<SoftmaxCrossEntropyLoss> = &schemas::softmax_cross_entropy;
template <> inline constexpr shape_rule shape_rule_for<SoftmaxCrossEntropyLoss> = rules::loss;

}  // namespace ops
SGMATCH_END_NAMESPACE
