// sgmatch/ops/control.hpp - descriptions of the control-flow ops, whose bodies are graphs
// (graph-valued attributes, graph_body): If, Loop, Scan (opset 9 and later) and SequenceMap.
//
// A node's inputs are the op's own (If's condition; Loop's trip count, condition and carried
// values; Scan's states and scanned inputs; SequenceMap's sequence and extra inputs) followed by
// the enclosing graph's values its bodies read (graph_body: the ONNX front end makes them
// inputs, so that a value read inside a body is an edge of the graph like any other). What the
// outputs are (tensors or sequences, their types and shapes) is what the body computes: no shape
// rule, and the executor checks each computed value against the declared one.
//
// Loop's trip count and condition are always present (the front end fills an absent trip count
// with the largest int64 and an absent condition with true). Scan before opset 9 (a batch axis
// first) is not described: the front end writes it as a Loop over the batch whose body runs the
// opset-9 Scan on one batch element (its sequence_lens input is refused, naming the node).
#pragma once

#include "sgmatch/detail/config.hpp"
#include "sgmatch/ops/schema.hpp"
#include "sgmatch/ops/shape_rules.hpp"
#include "sgmatch/pattern/vocabulary.hpp"

SGMATCH_BEGIN_NAMESPACE
namespace ops {
namespace schemas {

/// The most outputs a control-flow node may have.
inline constexpr std::size_t control_outputs = 1u << 16;

/// If: the outputs of then_branch when `cond` (one bool) is true, else else_branch's.
inline constexpr input_spec if_inputs[] = {{"cond"}, {"captured", input_spec::presence::any_number, false, value_kind::body}};
inline constexpr attr_spec if_attrs[] = {{"then_branch", attr_type::graph, def::required(), support::any()},
                                         {"else_branch", attr_type::graph, def::required(), support::any()}};
inline constexpr op_schema if_op = output_kind(
    typed(describe<If>(if_inputs, if_attrs, type_rule{type_rule::from::fixed, 0, dtype::unknown, {}}, control_outputs), types::boolean),
    value_kind::body);

/// Loop: the body run while the iteration number is below M and the condition holds; the body
/// reads (iteration number, condition, carried values...) and makes (condition, carried
/// values..., scan outputs...). Outputs: the final carried values, then each scan output's values
/// of every iteration stacked along a new first axis.
inline constexpr input_spec loop_inputs[] = {{"M"}, {"cond"}, {"inputs", input_spec::presence::any_number, false, value_kind::body}};
inline constexpr attr_spec loop_attrs[] = {{"body", attr_type::graph, def::required(), support::any()}};
inline constexpr op_schema loop = output_kind(
    typed(describe<Loop>(loop_inputs, loop_attrs, type_rule{type_rule::from::fixed, 0, dtype::unknown, {}}, control_outputs), types::integers),
    value_kind::body);

/// Scan (opset 9 and later): the body run once per slice of the scanned inputs along their scan
/// axes (in the given directions), carrying the states; outputs: the final states, then the
/// scan outputs' slices joined along their axes.
inline constexpr input_spec scan_inputs[] = {{"inputs", input_spec::presence::variadic, false, value_kind::body}};
inline constexpr attr_spec scan_attrs[] = {{"body", attr_type::graph, def::required(), support::any()},
                                           {"num_scan_inputs", attr_type::integer, def::required(), support::at_least(1)},
                                           {"scan_input_axes", attr_type::integers, def::absent(), support::any()},
                                           {"scan_input_directions", attr_type::integers, def::absent(), support::range(0, 1)},
                                           {"scan_output_axes", attr_type::integers, def::absent(), support::any()},
                                           {"scan_output_directions", attr_type::integers, def::absent(), support::range(0, 1)},
                                           {"directions", attr_type::integers, def::absent(), support::none("opset 8's attribute (the ONNX front end writes that Scan as a Loop of opset-9 Scans)")}};
inline constexpr op_schema scan = output_kind(
    typed(describe<Scan>(scan_inputs, scan_attrs, type_rule{type_rule::from::fixed, 0, dtype::unknown, {}}, control_outputs), types::all),
    value_kind::body);

/// SequenceMap: the body run on each tensor of the input sequence (and the tensors at the same
/// position of the extra sequences; an extra tensor is read whole each time); each output is a
/// sequence of what the body made.
inline constexpr input_spec sequence_map_inputs[] = {{"input_sequence", input_spec::presence::required, false, value_kind::sequence},
                                                     {"additional_inputs", input_spec::presence::any_number, false, value_kind::body}};
inline constexpr attr_spec sequence_map_attrs[] = {{"body", attr_type::graph, def::required(), support::any()}};
inline constexpr op_schema sequence_map = output_kind(
    typed(describe<SequenceMap>(sequence_map_inputs, sequence_map_attrs, type_rule{type_rule::from::fixed, 0, dtype::unknown, {}},
                                control_outputs),
          types::all),
    value_kind::sequence);

}  // namespace schemas

/// Whether an op's description has a graph-valued attribute (a control-flow op).
constexpr bool has_body(const op_schema& s) {
    for (std::size_t i = 0; i < s.attr_count; ++i)
        if (s.attrs[i].type == attr_type::graph) return true;
    return false;
}


// The ops layer's facets of each op's entry (its vocabulary tag): the description and the shape rule.
template <> inline constexpr const op_schema* description<If> = &schemas::if_op;
template <> inline constexpr shape_rule shape_rule_for<If> = rules::known_when_run;
template <> inline constexpr const op_schema* description<Loop> = &schemas::loop;
template <> inline constexpr shape_rule shape_rule_for<Loop> = rules::known_when_run;
template <> inline constexpr const op_schema* description<Scan> = &schemas::scan;
template <> inline constexpr shape_rule shape_rule_for<Scan> = rules::known_when_run;
template <> inline constexpr const op_schema* description<SequenceMap> = &schemas::sequence_map;
template <> inline constexpr shape_rule shape_rule_for<SequenceMap> = rules::known_when_run;

}  // namespace ops
SGMATCH_END_NAMESPACE
