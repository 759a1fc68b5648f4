// sgmatch/ops/schema.hpp - what an op means: one description per op, read by every part that
// runs or lowers it (the reference kernels, the oneDNN kernels and lowering, the copy of a
// subgraph, the front ends).
//
//   const ops::op_schema* s = ops::find_schema("Conv");       // by any alias (ops/table.hpp)
//   s->attrs:   name, type, default, the values the kernels implement
//   s->inputs:  name, required / optional / variadic
//   s->types:   the output element type
//   ops::shape_rule_of(*s): output shapes from input shapes (and constant inputs such as a
//               Reshape's shape), in ops/shape_rule_table.hpp: only what computes shapes (the
//               executor, the ONNX front end) makes the table of the rules, so a TU that only
//               lowers or checks attributes does not compile them
//
// Each description and shape rule is a facet of its op's entry, the vocabulary tag (below,
// description<Tag>): every layer attaches its own facets to the same tag.
//
// A description names its op through the vocabulary's tag (pattern/vocabulary.hpp): the tag is
// what patterns say, the description is what the op computes. Attributes follow ONNX (the
// latest opset the kernels implement); a front end for an older opset or another framework
// writes its nodes in these terms (for example an explicit Softmax axis for opset < 13).
//
// Nothing here includes oneDNN or xtensor; the core (sgmatch.hpp) does not include it.
#pragma once

#include <cstddef>
#include <cstdint>
#include <iterator>
#include <limits>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>
#include <type_traits>
#include <vector>

#include "sgmatch/detail/config.hpp"
#include "sgmatch/graph/types.hpp"

SGMATCH_BEGIN_NAMESPACE
namespace ops {

using dims = std::vector<std::int64_t>;

/// Raised when a node's attributes, inputs or shapes do not fit its op's description. The
/// message names the node (when known), the op and every problem found, not only the first.
class op_error : public std::runtime_error {
public:
    using std::runtime_error::runtime_error;
};

/// Raised where a node's sizes overflow (an output's element count past int64): never a valid
/// model, so what skips a shape it cannot compute (ops::fill_shapes) still raises this one.
class size_overflow : public op_error {
public:
    using op_error::op_error;
};

/// Raised by a shape rule that needs the value of an input computed at run time (a Reshape's
/// shape from a Shape subgraph): the shape is unknown until the op runs.
class unknown_value : public op_error {
public:
    unknown_value(const std::string& what, std::size_t slot) : op_error(what), slot_(slot) {}
    std::size_t slot() const { return slot_; }

private:
    std::size_t slot_;
};

/// The type of an attribute's value (attribute::type, plus tensors that the built-in graph
/// keeps as a flat list with a shape).
/// `type`: a type in ONNX's notation, held as a string (tensor(float), seq(tensor(int64)):
/// ops::type_notation), written to ONNX as a TypeProto.
enum class attr_type : std::uint8_t { integer, real, string, integers, reals, graph, type };

/// How an absent attribute gets its value.
struct attr_default {
    enum class from : std::uint8_t {
        absent,    // no value: the op reads the attribute only when given
        required,  // the node must carry it
        value,     // `number` (integers and reals) or `text` (strings)
        per_axis,  // a list of `number`, one per spatial axis
        per_axis2  // a list of `number`, two per spatial axis (begins, then ends)
    };
    from how = from::absent;
    double number = 0;
    std::string_view text{};
};

namespace def {
constexpr attr_default absent() { return {}; }
constexpr attr_default required() { return {attr_default::from::required, 0, {}}; }
constexpr attr_default value(double v) { return {attr_default::from::value, v, {}}; }
constexpr attr_default text(std::string_view s) { return {attr_default::from::value, 0, s}; }
constexpr attr_default per_axis(double v) { return {attr_default::from::per_axis, v, {}}; }
constexpr attr_default per_axis2(double v) { return {attr_default::from::per_axis2, v, {}}; }
}  // namespace def

/// What the kernels implement of an attribute. A node whose attribute lies outside is refused
/// when an executor or a lowering is built, with the node and the attribute named.
struct attr_support {
    double lo = -std::numeric_limits<double>::infinity();  // numbers (each element of a list)
    double hi = std::numeric_limits<double>::infinity();
    std::string_view values{};  // strings: the implemented values, '|'-separated; empty: any
    bool implemented = true;    // false: present at all is refused (`why` says what is missing)
    std::string_view why{};
};

namespace support {
constexpr attr_support any() { return {}; }
constexpr attr_support range(double lo, double hi) { return {lo, hi, {}, true, {}}; }
constexpr attr_support at_least(double lo) { return {lo, std::numeric_limits<double>::infinity(), {}, true, {}}; }
constexpr attr_support only(double v, std::string_view why) { return {v, v, {}, true, why}; }
constexpr attr_support one_of(std::string_view values, std::string_view why = {}) {
    return {-std::numeric_limits<double>::infinity(), std::numeric_limits<double>::infinity(), values, true, why};
}
constexpr attr_support none(std::string_view why) { return {0, 0, {}, false, why}; }
}  // namespace support

struct attr_spec {
    std::string_view name;
    attr_type type;
    attr_default def;
    attr_support sup;
};

/// What a value is: a tensor, a sequence of tensors (ONNX's sequence type), either (an op that
/// passes its input through, Identity: its output is what its input is, an optional too), what
/// a body makes it (a control-flow op's inputs and outputs, as its body graph reads or computes
/// them: checked when the body runs), an optional (ONNX's optional type: empty, or a tensor or a
/// sequence; as an input, any of those is read), or the element of input 0's optional (a tensor
/// or a sequence, as the optional holds).
enum class value_kind : std::uint8_t { tensor, sequence, either, body, optional, element };

struct input_spec {
    /// variadic: one or more; any_number: none or more (a control-flow node's enclosing values).
    enum class presence : std::uint8_t { required, optional, variadic, any_number };
    std::string_view name;
    presence p = presence::required;
    /// A parameter (a shape, starts, pads) the kernels also read when it is computed at run time;
    /// the output's shape is then unknown until the op runs. Without it, a computed parameter
    /// is refused.
    bool run_time = false;
    value_kind kind = value_kind::tensor;
    /// Whether a value of any kind may come here (a tensor, a sequence, an optional, empty or
    /// not): a pass-through (either), a body's (body) or an optional's reader (optional).
    constexpr bool any_kind() const { return kind == value_kind::either || kind == value_kind::body || kind == value_kind::optional; }
};

/// What a shape rule sees: every input's shape, and the values of the inputs that are small
/// constants (integers or reals, as int64 after truncation: a Reshape's shape, Pad's pads).
struct shape_inputs {
    std::vector<dims> shapes;
    std::vector<std::optional<std::vector<std::int64_t>>> values;  // integer parameters, where known
    std::vector<std::optional<std::vector<double>>> reals;          // real parameters (Resize's scales), where known; may be shorter
};

class op_attrs;

/// Output shapes from input shapes; throws op_error when the inputs cannot go together.
using shape_rule = std::vector<dims> (*)(const shape_inputs&, const op_attrs&);

/// The element type of the outputs. `input` is also the data input whose type the kernels
/// must take (op_schema::dtypes).
struct type_rule {
    enum class from : std::uint8_t { input, fixed, attribute } how = from::input;
    std::size_t input = 0;           // from::input: the type of this input
    dtype fixed = dtype::unknown;    // from::fixed
    std::string_view attr{};         // from::attribute: an ONNX element type code (Cast's `to`)
    dtype rest = dtype::unknown;     // outputs 1, 2, ... when their type is another (Dropout's mask)
    dtype second = dtype::unknown;   // output 1 alone, when its type is yet another (DynamicQuantizeLinear's scale)
};

/// Sets of element types, one bit per dtype.
namespace types {
constexpr std::uint16_t bit(dtype t) { return static_cast<std::uint16_t>(1u << static_cast<unsigned>(t)); }
constexpr std::uint16_t f32 = bit(dtype::f32);
constexpr std::uint16_t integers = bit(dtype::i64) | bit(dtype::i32) | bit(dtype::i8) | bit(dtype::u8);
constexpr std::uint16_t numeric = f32 | bit(dtype::f64) | integers;
constexpr std::uint16_t signed_numeric = f32 | bit(dtype::f64) | bit(dtype::i64) | bit(dtype::i32) | bit(dtype::i8);
constexpr std::uint16_t boolean = bit(dtype::boolean);
constexpr std::uint16_t computing = numeric | boolean;                       // what typed kernels compute on
constexpr std::uint16_t all = computing | bit(dtype::f16) | bit(dtype::bf16);  // what moves as bytes
// The 16-bit and unsigned 32/64-bit integers: what Cast, the element-wise arithmetic and
// comparisons, Max, Min, Mod and BitShift take besides (exec::visit_any_type).
constexpr std::uint16_t more_integers = bit(dtype::i16) | bit(dtype::u16) | bit(dtype::u32) | bit(dtype::u64);
constexpr bool has(std::uint16_t set, dtype t) { return (set & bit(t)) != 0; }
}  // namespace types

/// An ONNX TensorProto element type code (Cast's `to`) as a dtype; unknown for the others.
constexpr dtype dtype_of_onnx(std::int64_t code) {
    switch (code) {
        case 1: return dtype::f32;
        case 2: return dtype::u8;
        case 3: return dtype::i8;
        case 4: return dtype::u16;
        case 5: return dtype::i16;
        case 12: return dtype::u32;
        case 13: return dtype::u64;
        case 6: return dtype::i32;
        case 7: return dtype::i64;
        case 9: return dtype::boolean;
        case 10: return dtype::f16;
        case 11: return dtype::f64;
        case 16: return dtype::bf16;
        default: return dtype::unknown;
    }
}

/// One op's description.
struct op_schema {
    const std::string_view* names;  // the vocabulary tag's names; names[0] is the canonical one
    std::size_t name_count;
    const input_spec* inputs;
    std::size_t input_spec_count;
    const attr_spec* attrs;
    std::size_t attr_count;
    std::size_t outputs;            // outputs the kernels compute (a node may not declare more)
    type_rule types;
    bool open = false;  // attributes not described: none refused for being unknown (ops::undescribed)
    std::uint16_t dtypes = types::f32;  // the element types the kernels take on the data input (types.input)
    value_kind output_kind = value_kind::tensor;  // output 0: a sequence holds tensors of the type `types` gives

    std::string_view name() const { return names[0]; }
    const attr_spec* attr(std::string_view key) const {
        for (std::size_t i = 0; i < attr_count; ++i)
            if (attrs[i].name == key) return &attrs[i];
        return nullptr;
    }
    std::size_t min_inputs() const {
        std::size_t n = 0;
        for (std::size_t i = 0; i < input_spec_count; ++i)
            if (inputs[i].p != input_spec::presence::optional && inputs[i].p != input_spec::presence::any_number)
                n = i + 1;  // a variadic input takes at least one
        return n;
    }
    /// The most inputs the op takes (SIZE_MAX when the last is variadic).
    /// Whether output 0 is a sequence, when input 0 is one or not.
    bool sequence_output(bool input0_sequence) const {
        return output_kind == value_kind::sequence ||
               ((output_kind == value_kind::either || output_kind == value_kind::optional || output_kind == value_kind::element) &&
                input0_sequence);
    }
    /// Whether output 0 is an optional, when input 0 is one or not.
    bool optional_output(bool input0_optional) const {
        return output_kind == value_kind::optional || (output_kind == value_kind::either && input0_optional);
    }
    /// The description of input `slot` (the last one for the inputs of a variadic one); null past
    /// the last.
    const input_spec* input(std::size_t slot) const {
        if (slot < input_spec_count) return &inputs[slot];
        return max_inputs() == static_cast<std::size_t>(-1) ? &inputs[input_spec_count - 1] : nullptr;
    }
    std::size_t max_inputs() const {
        if (input_spec_count > 0 && (inputs[input_spec_count - 1].p == input_spec::presence::variadic ||
                                     inputs[input_spec_count - 1].p == input_spec::presence::any_number))
            return static_cast<std::size_t>(-1);
        return input_spec_count;
    }
};

/// A description of the op named by Tag: `describe<Tag>(inputs, attrs, types, outputs)`, attached
/// to the tag as description<Tag> beside its shape_rule_for<Tag>.
template <class Tag, std::size_t I, std::size_t A>
constexpr op_schema describe(const input_spec (&in)[I], const attr_spec (&at)[A], type_rule types = {}, std::size_t outputs = 1) {
    return op_schema{Tag::names, std::size(Tag::names), in, I, at, A, outputs, types};
}
template <class Tag, std::size_t I>
constexpr op_schema describe(const input_spec (&in)[I], type_rule types = {}, std::size_t outputs = 1) {
    return op_schema{Tag::names, std::size(Tag::names), in, I, nullptr, 0, outputs, types};
}

/// An op's entry is its vocabulary tag (pattern/vocabulary.hpp): each layer attaches its facet
/// to it by specializing a template of its own, in that layer's header for the op's family.
/// This layer's two, beside the description in ops/<family>.hpp:
///
///   template <> inline constexpr const op_schema* description<Relu> = &schemas::relu;
///   template <> inline constexpr shape_rule shape_rule_for<Relu> = rules::same_as_input0;
///
/// The others: exec::kernels::f32_kernels<Tag>, typed_kernels<Tag> and onednn_typed_kernels<Tag>
/// (exec/kernels/), onednn::lowering<Tag> (onednn/lowering/roles.hpp), testing::generator<Tag>
/// (testing/generators.hpp). Every list of ops is a fold over ops::vocabulary that reads these
/// (ops/table.hpp: all_schemas, facet_table); none is written out.
///
/// A facet template's primary is a no_facet: an op without the facet has no value of the facet's
/// type at all, and has_facet_v tells the two apart at compile time by type (comparing a
/// specialization's address with null is not a constant expression under GCC's UBSan).
struct no_facet {};
template <class T>
constexpr bool has_facet_v = !std::is_same_v<std::remove_cv_t<T>, no_facet>;

/// The description of the op of Tag (not specialized: the op has none).
template <class Tag>
inline constexpr no_facet description{};
/// The shape rule of the op of Tag: every described op has one, rules::known_when_run where its
/// output shapes depend on the values it reads (NonZero) or on a body it runs (Loop).
template <class Tag>
inline constexpr no_facet shape_rule_for{};
/// Whether the op of Tag has a description.
template <class Tag>
constexpr bool described_v = has_facet_v<decltype(description<Tag>)>;

/// The same description, with kernels for the element types in `set` (ops::types).
constexpr op_schema typed(op_schema s, std::uint16_t set) {
    s.dtypes = set;
    return s;
}

/// The same description, its output of kind `k`.
constexpr op_schema output_kind(op_schema s, value_kind k) {
    s.output_kind = k;
    return s;
}

/// The description of an op that has none: any inputs, no attributes read with defaults, none
/// refused (what a user's own op lowered by its own code reads through).
inline const op_schema& undescribed() {
    static constexpr std::string_view names[] = {"(undescribed)"};
    static constexpr input_spec inputs[] = {{"inputs", input_spec::presence::variadic}};
    static const op_schema s{names, 1, inputs, 1, nullptr, 0, static_cast<std::size_t>(-1), {}, true};
    return s;
}

inline std::string to_string(const dims& d) {
    std::string s = "[";
    for (std::size_t i = 0; i < d.size(); ++i) s += (i ? ", " : "") + std::to_string(d[i]);
    return s + "]";
}

}  // namespace ops
SGMATCH_END_NAMESPACE
