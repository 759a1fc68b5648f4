// sgmatch/ops/optional.hpp - descriptions of the ops on ONNX's optional type: Optional,
// OptionalHasElement and OptionalGetElement; and ONNX's notation of a type, which Optional's
// `type` attribute is held in.
//
// An optional either holds a tensor or a sequence of tensors, or is empty (exec::value::none).
// Optional makes one: of its input, or an empty one of the type its `type` attribute gives
// ("seq(tensor(float))"). OptionalHasElement says whether it holds a value (true for a plain
// tensor or sequence too, as opset 18 defines it); OptionalGetElement gives the value, and is an
// error naming the node for an empty optional.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "sgmatch/detail/config.hpp"
#include "sgmatch/graph/types.hpp"
#include "sgmatch/ops/schema.hpp"
#include "sgmatch/ops/shape_rules.hpp"
#include "sgmatch/pattern/vocabulary.hpp"

SGMATCH_BEGIN_NAMESPACE
namespace ops {

/// A type in ONNX's notation: tensor(float), seq(tensor(int64)), optional(seq(tensor(bool))).
/// Dims are not part of it.
inline std::string type_notation(const tensor_type& t) {
    std::string s = "tensor(" + std::string(name_of(t.type)) + ")";
    if (t.sequence) s = "seq(" + s + ")";
    if (t.optional) s = "optional(" + s + ")";
    return s;
}

/// The type a notation names (its element type known: not "unknown"); nullopt for anything else
/// (maps, sparse tensors, sequences of sequences, a misspelling).
inline std::optional<tensor_type> parse_type_notation(std::string_view s) {
    tensor_type t;
    auto unwrap = [&s](std::string_view head) {
        if (s.size() <= head.size() + 2 || s.substr(0, head.size()) != head || s[head.size()] != '(' || s.back() != ')') return false;
        s = s.substr(head.size() + 1, s.size() - head.size() - 2);
        return true;
    };
    t.optional = unwrap("optional");
    t.sequence = unwrap("seq");
    if (!unwrap("tensor")) return std::nullopt;
    for (dtype d : {dtype::f32, dtype::f16, dtype::bf16, dtype::f64, dtype::i8, dtype::u8, dtype::i32, dtype::i64, dtype::boolean,
                    dtype::i16, dtype::u16, dtype::u32, dtype::u64})
        if (name_of(d) == s) t.type = d;
    if (t.type == dtype::unknown) return std::nullopt;
    return t;
}

namespace rules {

inline std::vector<dims> has_element(const shape_inputs&, const op_attrs&) { return {dims{}}; }

}  // namespace rules

namespace schemas {

/// Optional: an optional holding input 0 (a tensor or a sequence), or, without it, an empty one
/// of the type `type` names (type_notation; required then).
inline constexpr input_spec optional_inputs[] = {{"input", input_spec::presence::optional, false, value_kind::either}};
inline constexpr attr_spec optional_attrs[] = {{"type", attr_type::type, def::absent(), support::any()}};
inline constexpr op_schema optional = output_kind(typed(describe<Optional>(optional_inputs, optional_attrs), types::all), value_kind::optional);
/// OptionalHasElement: whether input 0 holds a value (a bool scalar; false for an absent input).
inline constexpr input_spec optional_has_element_inputs[] = {{"input", input_spec::presence::optional, false, value_kind::optional}};
inline constexpr op_schema optional_has_element =
    typed(describe<OptionalHasElement>(optional_has_element_inputs, type_rule{type_rule::from::fixed, 0, dtype::boolean, {}}), types::all);
/// OptionalGetElement: the value input 0 holds.
inline constexpr input_spec optional_get_element_inputs[] = {{"input", input_spec::presence::required, false, value_kind::optional}};
inline constexpr op_schema optional_get_element =
    output_kind(typed(describe<OptionalGetElement>(optional_get_element_inputs), types::all), value_kind::element);

}  // namespace schemas

// The ops layer's facets of each op's entry (its vocabulary tag): the description and the shape rule.
template <> inline constexpr const op_schema* description<Optional> = &schemas::optional;
template <> inline constexpr shape_rule shape_rule_for<Optional> = rules::known_when_run;
template <> inline constexpr const op_schema* description<OptionalHasElement> = &schemas::optional_has_element;
template <> inline constexpr shape_rule shape_rule_for<OptionalHasElement> = rules::has_element;
template <> inline constexpr const op_schema* description<OptionalGetElement> = &schemas::optional_get_element;
template <> inline constexpr shape_rule shape_rule_for<OptionalGetElement> = rules::same_as_input0;

}  // namespace ops
SGMATCH_END_NAMESPACE
