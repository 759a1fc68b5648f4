// sgmatch/ops/sequence.hpp - descriptions of the ops on sequences of tensors (ONNX's sequence
// type): SequenceEmpty, SequenceConstruct, SequenceInsert, SequenceAt, SequenceErase,
// SequenceLength, SplitToSequence and ConcatFromSequence.
//
// A sequence's type is the type of its tensors (the type rule gives it, as for a tensor); the
// output of SequenceEmpty, SequenceConstruct, SequenceInsert, SequenceErase and SplitToSequence
// is a sequence (op_schema::output_kind), and an input that must be one says so
// (input_spec::kind): the executor refuses a tensor where a sequence belongs and the
// reverse, naming the node. A position is an int32 or int64 scalar in [-n, n) (SequenceInsert:
// [-n, n]), counted from the end when negative. Only SequenceLength has a shape rule (a scalar):
// what the others compute depends on the sequence.
#pragma once

#include <vector>

#include "sgmatch/detail/config.hpp"
#include "sgmatch/ops/schema.hpp"
#include "sgmatch/ops/shape_rules.hpp"
#include "sgmatch/pattern/vocabulary.hpp"

SGMATCH_BEGIN_NAMESPACE
namespace ops {
namespace rules {

inline std::vector<dims> sequence_length(const shape_inputs&, const op_attrs&) { return {dims{}}; }

}  // namespace rules

namespace schemas {

/// SequenceEmpty: a sequence of no tensors of type `dtype` (float when absent).
inline constexpr attr_spec sequence_empty_attrs[] = {{"dtype", attr_type::integer, def::value(1), support::any()}};
inline constexpr op_schema sequence_empty = output_kind(typed(
    op_schema{SequenceEmpty::names, 1, nullptr, 0, sequence_empty_attrs, 1, 1, type_rule{type_rule::from::attribute, 0, dtype::unknown, "dtype"}},
    types::all), value_kind::sequence);
/// SequenceConstruct: the inputs (tensors of one type), in order.
inline constexpr input_spec sequence_construct_inputs[] = {{"inputs", input_spec::presence::variadic}};
inline constexpr op_schema sequence_construct = output_kind(typed(describe<SequenceConstruct>(sequence_construct_inputs), types::all), value_kind::sequence);
/// SequenceInsert: the sequence with `tensor` inserted before `position` (appended without one).
inline constexpr input_spec sequence_insert_inputs[] = {
    {"input_sequence", input_spec::presence::required, false, value_kind::sequence}, {"tensor"}, {"position", input_spec::presence::optional, true}};
inline constexpr op_schema sequence_insert = output_kind(typed(describe<SequenceInsert>(sequence_insert_inputs), types::all), value_kind::sequence);
/// SequenceAt: the tensor at `position`.
inline constexpr input_spec sequence_at_inputs[] = {{"input_sequence", input_spec::presence::required, false, value_kind::sequence}, {"position", input_spec::presence::required, true}};
inline constexpr op_schema sequence_at = typed(describe<SequenceAt>(sequence_at_inputs), types::all);
/// SequenceErase: the sequence without the tensor at `position` (the last without one).
inline constexpr input_spec sequence_erase_inputs[] = {{"input_sequence", input_spec::presence::required, false, value_kind::sequence},
                                                       {"position", input_spec::presence::optional, true}};
inline constexpr op_schema sequence_erase = output_kind(typed(describe<SequenceErase>(sequence_erase_inputs), types::all), value_kind::sequence);
/// SequenceLength: the number of tensors, an int64 scalar.
inline constexpr input_spec sequence_length_inputs[] = {{"input_sequence", input_spec::presence::required, false, value_kind::sequence}};
inline constexpr op_schema sequence_length =
    typed(describe<SequenceLength>(sequence_length_inputs, type_rule{type_rule::from::fixed, 0, dtype::i64, {}}), types::all);
/// SplitToSequence: the input cut along `axis` into pieces of the lengths `split` gives (one
/// length: pieces of it, the last one shorter where it does not divide; a list: those lengths),
/// or without `split` into pieces of 1, that axis dropped when keepdims is 0.
inline constexpr input_spec split_to_sequence_inputs[] = {{"input"}, {"split", input_spec::presence::optional, true}};
inline constexpr attr_spec split_to_sequence_attrs[] = {{"axis", attr_type::integer, def::value(0), support::any()},
                                                        {"keepdims", attr_type::integer, def::value(1), support::range(0, 1)}};
inline constexpr op_schema split_to_sequence =
    output_kind(typed(describe<SplitToSequence>(split_to_sequence_inputs, split_to_sequence_attrs), types::all), value_kind::sequence);
/// ConcatFromSequence: the tensors joined along `axis`, or stacked along a new axis at `axis`
/// (new_axis 1, axis then in [-rank - 1, rank]). An empty sequence has no result: refused.
inline constexpr input_spec concat_from_sequence_inputs[] = {{"input_sequence", input_spec::presence::required, false, value_kind::sequence}};
inline constexpr attr_spec concat_from_sequence_attrs[] = {{"axis", attr_type::integer, def::required(), support::any()},
                                                           {"new_axis", attr_type::integer, def::value(0), support::range(0, 1)}};
inline constexpr op_schema concat_from_sequence =
    typed(describe<ConcatFromSequence>(concat_from_sequence_inputs, concat_from_sequence_attrs), types::all);

}  // namespace schemas

// The ops layer's facets of each op's entry (its vocabulary tag): the description and the shape rule.
template <> inline constexpr const op_schema* description<SequenceEmpty> = &schemas::sequence_empty;
template <> inline constexpr shape_rule shape_rule_for<SequenceEmpty> = rules::known_when_run;
template <> inline constexpr const op_schema* description<SequenceConstruct> = &schemas::sequence_construct;
template <> inline constexpr shape_rule shape_rule_for<SequenceConstruct> = rules::known_when_run;
template <> inline constexpr const op_schema* description<SequenceInsert> = &schemas::sequence_insert;
template <> inline constexpr shape_rule shape_rule_for<SequenceInsert> = rules::known_when_run;
template <> inline constexpr const op_schema* description<SequenceAt> = &schemas::sequence_at;
template <> inline constexpr shape_rule shape_rule_for<SequenceAt> = rules::known_when_run;
template <> inline constexpr const op_schema* description<SequenceErase> = &schemas::sequence_erase;
template <> inline constexpr shape_rule shape_rule_for<SequenceErase> = rules::known_when_run;
template <> inline constexpr const op_schema* description<SequenceLength> = &schemas::sequence_length;
template <> inline constexpr shape_rule shape_rule_for<SequenceLength> = rules::sequence_length;
template <> inline constexpr const op_schema* description<SplitToSequence> = &schemas::split_to_sequence;
template <> inline constexpr shape_rule shape_rule_for<SplitToSequence> = rules::known_when_run;
template <> inline constexpr const op_schema* description<ConcatFromSequence> = &schemas::concat_from_sequence;
template <> inline constexpr shape_rule shape_rule_for<ConcatFromSequence> = rules::known_when_run;

}  // namespace ops
SGMATCH_END_NAMESPACE
