// sgmatch/ops/elementwise.hpp - descriptions of the element-wise ops: activations and other
// unary functions, Clip, the binary arithmetic ops and Identity.
#pragma once

#include <vector>

#include "sgmatch/detail/config.hpp"
#include "sgmatch/ops/schema.hpp"
#include "sgmatch/ops/shape_rules.hpp"
#include "sgmatch/pattern/vocabulary.hpp"

SGMATCH_BEGIN_NAMESPACE
namespace ops {
namespace rules {

/// DynamicQuantizeLinear: y of x's shape, a scalar scale and a scalar zero point.
inline std::vector<dims> dynamic_quantize_linear(const shape_inputs& in, const op_attrs&) { return {in.shapes.at(0), dims{}, dims{}}; }
/// QLinearAdd: A and B (inputs 0 and 3) broadcast.
inline std::vector<dims> qlinear_add(const shape_inputs& in, const op_attrs& a) { return {broadcast(a, in.shapes.at(0), in.shapes.at(3))}; }

}  // namespace rules

namespace schemas {

inline constexpr input_spec x_only[] = {{"X"}};
inline constexpr input_spec a_b[] = {{"A"}, {"B"}};
/// Max and Min take one or more inputs in ONNX; the kernels take two (checked when built).
inline constexpr input_spec variadic[] = {{"data_0", input_spec::presence::variadic}};

// ONNX opset < 7 broadcasting: `broadcast` 1 with an `axis` aligns B at that axis (refused here;
// the ONNX front end writes it out as B reshaped with trailing axes of 1); without an axis it is
// numpy's suffix alignment, which is what the kernels do.
inline constexpr attr_spec legacy_broadcast[] = {
    {"broadcast", attr_type::integer, def::value(0), support::any()},
    {"axis", attr_type::integer, def::absent(), support::none("opset < 7 broadcasting at an axis")},
    {"consumed_inputs", attr_type::integers, def::absent(), support::any()},  // opset < 6, no meaning in inference
};

/// Opset < 6: which inputs the op may overwrite, a memory hint with no meaning for the result.
#define SGMATCH_DETAIL_CONSUMED {"consumed_inputs", attr_type::integers, def::absent(), support::any()}
inline constexpr attr_spec consumed[] = {SGMATCH_DETAIL_CONSUMED};
inline constexpr attr_spec alpha_001[] = {{"alpha", attr_type::real, def::value(0.01), support::any()}, SGMATCH_DETAIL_CONSUMED};
inline constexpr attr_spec alpha_1[] = {{"alpha", attr_type::real, def::value(1.0), support::any()}, SGMATCH_DETAIL_CONSUMED};
inline constexpr attr_spec hard_sigmoid_attrs[] = {{"alpha", attr_type::real, def::value(0.2), support::any()},
                                                   {"beta", attr_type::real, def::value(0.5), support::any()},
                                                   SGMATCH_DETAIL_CONSUMED};
inline constexpr attr_spec gelu_attrs[] = {{"approximate", attr_type::string, def::text("none"), support::one_of("none|tanh")}};
/// Clip's bounds: attributes before opset 11, optional inputs 1 and 2 from then on.
inline constexpr attr_spec clip_attrs[] = {{"min", attr_type::real, def::value(-3.4028234663852886e38), support::any()},
                                           {"max", attr_type::real, def::value(3.4028234663852886e38), support::any()},
                                           SGMATCH_DETAIL_CONSUMED};
inline constexpr input_spec clip_inputs[] = {{"input"}, {"min", input_spec::presence::optional},
                                             {"max", input_spec::presence::optional}};

inline constexpr attr_spec selu_attrs[] = {{"alpha", attr_type::real, def::value(1.67326319217681884765625), support::any()},
                                           {"gamma", attr_type::real, def::value(1.05070102214813232421875), support::any()},
                                           SGMATCH_DETAIL_CONSUMED};
inline constexpr attr_spec alpha_1_celu[] = {{"alpha", attr_type::real, def::value(1.0), support::any()}};
inline constexpr input_spec prelu_inputs[] = {{"X"}, {"slope"}};

inline constexpr op_schema relu = describe<Relu>(x_only, consumed);
inline constexpr op_schema neg = typed(describe<Neg>(x_only, consumed), types::signed_numeric);
inline constexpr op_schema reciprocal = describe<Reciprocal>(x_only, consumed);
inline constexpr op_schema softsign = describe<Softsign>(x_only);
inline constexpr op_schema selu = describe<Selu>(x_only, selu_attrs);
inline constexpr op_schema celu = describe<Celu>(x_only, alpha_1_celu);
inline constexpr op_schema thresholded_relu = describe<ThresholdedRelu>(x_only, alpha_1);
inline constexpr op_schema prelu = describe<PRelu>(prelu_inputs, consumed);
inline constexpr op_schema sigmoid = describe<Sigmoid>(x_only, consumed);
inline constexpr op_schema tanh = describe<Tanh>(x_only, consumed);
inline constexpr op_schema hard_swish = describe<HardSwish>(x_only);
inline constexpr op_schema mish = describe<Mish>(x_only);
inline constexpr op_schema softplus = describe<Softplus>(x_only);
inline constexpr op_schema exp = describe<Exp>(x_only, consumed);
inline constexpr op_schema log = describe<Log>(x_only, consumed);
inline constexpr op_schema sqrt = describe<Sqrt>(x_only, consumed);
inline constexpr op_schema square = describe<Square>(x_only);
inline constexpr op_schema abs = typed(describe<Abs>(x_only, consumed), types::numeric);
inline constexpr op_schema round = describe<Round>(x_only);
inline constexpr op_schema erf = describe<Erf>(x_only);
/// Identity: its input, a tensor or a sequence.
inline constexpr input_spec identity_inputs[] = {{"input", input_spec::presence::required, false, value_kind::either}};
inline constexpr op_schema identity =
    output_kind(typed(describe<Identity>(identity_inputs), types::all | types::more_integers), value_kind::either);
inline constexpr op_schema leaky_relu = describe<LeakyRelu>(x_only, alpha_001);
inline constexpr op_schema elu = describe<Elu>(x_only, alpha_1);
inline constexpr op_schema swish = describe<Swish>(x_only, alpha_1);
inline constexpr op_schema hard_sigmoid = describe<HardSigmoid>(x_only, hard_sigmoid_attrs);
inline constexpr op_schema gelu = describe<Gelu>(x_only, gelu_attrs);
inline constexpr op_schema clip = typed(describe<Clip>(clip_inputs, clip_attrs), types::numeric);

// Rounding, sign and trigonometry: f32 (reference kernels); IsNaN and IsInf: bool results.
inline constexpr op_schema ceil = describe<Ceil>(x_only, consumed);
inline constexpr op_schema floor = describe<Floor>(x_only, consumed);
inline constexpr op_schema sign = describe<Sign>(x_only);
inline constexpr op_schema sin = describe<Sin>(x_only);
inline constexpr op_schema cos = describe<Cos>(x_only);
inline constexpr op_schema tan = describe<Tan>(x_only);
inline constexpr op_schema asin = describe<Asin>(x_only);
inline constexpr op_schema acos = describe<Acos>(x_only);
inline constexpr op_schema atan = describe<Atan>(x_only);
inline constexpr op_schema sinh = describe<Sinh>(x_only);
inline constexpr op_schema cosh = describe<Cosh>(x_only);
inline constexpr op_schema asinh = describe<Asinh>(x_only);
inline constexpr op_schema acosh = describe<Acosh>(x_only);
inline constexpr op_schema atanh = describe<Atanh>(x_only);
/// Shrink: x + bias below -lambd, x - bias above lambd, 0 between.
inline constexpr attr_spec shrink_attrs[] = {{"bias", attr_type::real, def::value(0.0), support::any()},
                                             {"lambd", attr_type::real, def::value(0.5), support::any()}};
inline constexpr op_schema shrink = describe<Shrink>(x_only, shrink_attrs);
inline constexpr type_rule to_bool{type_rule::from::fixed, 0, dtype::boolean, {}};
inline constexpr op_schema is_nan = typed(describe<IsNaN>(x_only, to_bool), types::f32 | types::bit(dtype::f64));
inline constexpr attr_spec is_inf_attrs[] = {{"detect_negative", attr_type::integer, def::value(1), support::range(0, 1)},
                                             {"detect_positive", attr_type::integer, def::value(1), support::range(0, 1)}};
inline constexpr op_schema is_inf = typed(describe<IsInf>(x_only, is_inf_attrs, to_bool),
                                          types::f32 | types::bit(dtype::f64));

inline constexpr op_schema add = typed(describe<Add>(a_b, legacy_broadcast), types::numeric | types::more_integers);
inline constexpr op_schema sub = typed(describe<Sub>(a_b, legacy_broadcast), types::numeric | types::more_integers);
inline constexpr op_schema mul = typed(describe<Mul>(a_b, legacy_broadcast), types::numeric | types::more_integers);
inline constexpr op_schema div = typed(describe<Div>(a_b, legacy_broadcast), types::numeric | types::more_integers);
inline constexpr op_schema pow = typed(describe<Pow>(a_b, legacy_broadcast), types::numeric | types::more_integers);
/// Mod: fmod 0 takes the divisor's sign (Python's %, integers only), fmod 1 the dividend's (C's fmod).
inline constexpr attr_spec mod_attrs[] = {{"fmod", attr_type::integer, def::value(0), support::range(0, 1)}};
/// Mod, Max and Min take float16 and bfloat16 too: computed in f32, exactly (kernels/typed.hpp).
inline constexpr std::uint16_t numeric_and_halves = types::numeric | types::bit(dtype::f16) | types::bit(dtype::bf16);
inline constexpr op_schema mod = typed(describe<Mod>(a_b, mod_attrs), numeric_and_halves | types::more_integers);
/// BitShift: X shifted by Y bits, LEFT or RIGHT (the unsigned integers; a shift by the type's
/// width or more gives 0).
inline constexpr attr_spec bit_shift_attrs[] = {{"direction", attr_type::string, def::required(), support::one_of("LEFT|RIGHT")}};
inline constexpr op_schema bit_shift = typed(describe<BitShift>(a_b, bit_shift_attrs), types::bit(dtype::u8) | types::bit(dtype::u16) | types::bit(dtype::u32) | types::bit(dtype::u64));
inline constexpr op_schema max = typed(describe<Max>(variadic, consumed), numeric_and_halves | types::more_integers);
inline constexpr op_schema min = typed(describe<Min>(variadic, consumed), numeric_and_halves | types::more_integers);
inline constexpr op_schema sum = describe<Sum>(variadic, consumed);
inline constexpr op_schema mean = describe<Mean>(variadic, consumed);
// Comparisons and logic: bool results, numpy broadcasting.
inline constexpr op_schema equal = typed(describe<Equal>(a_b, legacy_broadcast, to_bool), types::computing | types::more_integers);
inline constexpr op_schema less = typed(describe<Less>(a_b, legacy_broadcast, to_bool), types::numeric | types::more_integers);
inline constexpr op_schema greater = typed(describe<Greater>(a_b, legacy_broadcast, to_bool), types::numeric | types::more_integers);
inline constexpr op_schema less_or_equal = typed(describe<LessOrEqual>(a_b, to_bool), types::numeric | types::more_integers);
inline constexpr op_schema greater_or_equal = typed(describe<GreaterOrEqual>(a_b, to_bool), types::numeric | types::more_integers);
inline constexpr op_schema logical_and = typed(describe<And>(a_b, legacy_broadcast, to_bool), types::boolean);
inline constexpr op_schema logical_or = typed(describe<Or>(a_b, legacy_broadcast, to_bool), types::boolean);
inline constexpr op_schema logical_xor = typed(describe<Xor>(a_b, legacy_broadcast, to_bool), types::boolean);
inline constexpr op_schema logical_not = typed(describe<Not>(x_only, to_bool), types::boolean);
// Quantization: x with a scale and a zero point, per tensor (a scalar scale) or per axis (a
// 1-D scale of x's extent along `axis`), the zero point of the scale's shape.
inline constexpr input_spec quantize_inputs[] = {{"x"}, {"scale"}, {"zero_point", input_spec::presence::optional}};
inline constexpr attr_spec quantize_attrs[] = {{"axis", attr_type::integer, def::value(1), support::any()}};
/// QuantizeLinear: saturate(round_half_even(x / scale) + zero_point), of the zero point's type
/// (uint8 or int8; uint8 without one); x is f32 or int32.
inline constexpr op_schema quantize_linear =
    typed(describe<QuantizeLinear>(quantize_inputs, quantize_attrs, type_rule{type_rule::from::input, 2, dtype::unknown, {}}),
          types::bit(dtype::u8) | types::bit(dtype::i8));
/// DequantizeLinear: (x - zero_point) * scale, f32; x is uint8, int8 or int32 (int32 without a
/// zero point, or a zero one).
inline constexpr op_schema dequantize_linear =
    typed(describe<DequantizeLinear>(quantize_inputs, quantize_attrs, type_rule{type_rule::from::fixed, 0, dtype::f32, {}}),
          types::bit(dtype::u8) | types::bit(dtype::i8) | types::bit(dtype::i32));
inline constexpr input_spec dynamic_quantize_inputs[] = {{"x"}};
/// DynamicQuantizeLinear: f32 x as uint8 y, with the scale (f32) and zero point (uint8) that map
/// [min(x, 0), max(x, 0)] onto [0, 255].
inline constexpr op_schema dynamic_quantize_linear =
    typed(describe<DynamicQuantizeLinear>(dynamic_quantize_inputs, type_rule{type_rule::from::fixed, 0, dtype::u8, {}, dtype::unknown, dtype::f32}, 3),
          types::f32);

/// QLinearAdd (ONNX Runtime's, domain com.microsoft): C = saturate(round_half_even(((A - A_zp) *
/// A_scale + (B - B_zp) * B_scale) / C_scale) + C_zp), each part in f32 in that order (what
/// DequantizeLinear, DequantizeLinear, Add and QuantizeLinear compute one by one), A and B
/// broadcast, uint8 or int8, one scale and zero point each; C of A's type. The QDQ rewrite
/// (passes/qdq.hpp) makes it from a residual Add between DequantizeLinear and QuantizeLinear.
inline constexpr input_spec qlinear_add_inputs[] = {{"A"}, {"A_scale"}, {"A_zero_point", input_spec::presence::optional},
                                                    {"B"}, {"B_scale"}, {"B_zero_point", input_spec::presence::optional},
                                                    {"C_scale"}, {"C_zero_point", input_spec::presence::optional}};
inline constexpr op_schema qlinear_add =
    typed(describe<QLinearAdd>(qlinear_add_inputs, type_rule{type_rule::from::input, 0, dtype::unknown, {}}),
          types::bit(dtype::u8) | types::bit(dtype::i8));

}  // namespace schemas

// The ops layer's facets of each op's entry (its vocabulary tag): the description and the shape rule.
template <> inline constexpr const op_schema* description<Relu> = &schemas::relu;
template <> inline constexpr shape_rule shape_rule_for<Relu> = rules::same_as_input0;
template <> inline constexpr const op_schema* description<Neg> = &schemas::neg;
template <> inline constexpr shape_rule shape_rule_for<Neg> = rules::same_as_input0;
template <> inline constexpr const op_schema* description<Reciprocal> = &schemas::reciprocal;
template <> inline constexpr shape_rule shape_rule_for<Reciprocal> = rules::same_as_input0;
template <> inline constexpr const op_schema* description<Softsign> = &schemas::softsign;
template <> inline constexpr shape_rule shape_rule_for<Softsign> = rules::same_as_input0;
template <> inline constexpr const op_schema* description<Selu> = &schemas::selu;
template <> inline constexpr shape_rule shape_rule_for<Selu> = rules::same_as_input0;
template <> inline constexpr const op_schema* description<Celu> = &schemas::celu;
template <> inline constexpr shape_rule shape_rule_for<Celu> = rules::same_as_input0;
template <> inline constexpr const op_schema* description<ThresholdedRelu> = &schemas::thresholded_relu;
template <> inline constexpr shape_rule shape_rule_for<ThresholdedRelu> = rules::same_as_input0;
template <> inline constexpr const op_schema* description<PRelu> = &schemas::prelu;
template <> inline constexpr shape_rule shape_rule_for<PRelu> = rules::unidirectional;
template <> inline constexpr const op_schema* description<Sigmoid> = &schemas::sigmoid;
template <> inline constexpr shape_rule shape_rule_for<Sigmoid> = rules::same_as_input0;
template <> inline constexpr const op_schema* description<Tanh> = &schemas::tanh;
template <> inline constexpr shape_rule shape_rule_for<Tanh> = rules::same_as_input0;
template <> inline constexpr const op_schema* description<HardSwish> = &schemas::hard_swish;
template <> inline constexpr shape_rule shape_rule_for<HardSwish> = rules::same_as_input0;
template <> inline constexpr const op_schema* description<Mish> = &schemas::mish;
template <> inline constexpr shape_rule shape_rule_for<Mish> = rules::same_as_input0;
template <> inline constexpr const op_schema* description<Softplus> = &schemas::softplus;
template <> inline constexpr shape_rule shape_rule_for<Softplus> = rules::same_as_input0;
template <> inline constexpr const op_schema* description<Exp> = &schemas::exp;
template <> inline constexpr shape_rule shape_rule_for<Exp> = rules::same_as_input0;
template <> inline constexpr const op_schema* description<Log> = &schemas::log;
template <> inline constexpr shape_rule shape_rule_for<Log> = rules::same_as_input0;
template <> inline constexpr const op_schema* description<Sqrt> = &schemas::sqrt;
template <> inline constexpr shape_rule shape_rule_for<Sqrt> = rules::same_as_input0;
template <> inline constexpr const op_schema* description<Square> = &schemas::square;
template <> inline constexpr shape_rule shape_rule_for<Square> = rules::same_as_input0;
template <> inline constexpr const op_schema* description<Abs> = &schemas::abs;
template <> inline constexpr shape_rule shape_rule_for<Abs> = rules::same_as_input0;
template <> inline constexpr const op_schema* description<Round> = &schemas::round;
template <> inline constexpr shape_rule shape_rule_for<Round> = rules::same_as_input0;
template <> inline constexpr const op_schema* description<Erf> = &schemas::erf;
template <> inline constexpr shape_rule shape_rule_for<Erf> = rules::same_as_input0;
template <> inline constexpr const op_schema* description<Identity> = &schemas::identity;
template <> inline constexpr shape_rule shape_rule_for<Identity> = rules::same_as_input0;
template <> inline constexpr const op_schema* description<LeakyRelu> = &schemas::leaky_relu;
template <> inline constexpr shape_rule shape_rule_for<LeakyRelu> = rules::same_as_input0;
template <> inline constexpr const op_schema* description<Elu> = &schemas::elu;
template <> inline constexpr shape_rule shape_rule_for<Elu> = rules::same_as_input0;
template <> inline constexpr const op_schema* description<Swish> = &schemas::swish;
template <> inline constexpr shape_rule shape_rule_for<Swish> = rules::same_as_input0;
template <> inline constexpr const op_schema* description<HardSigmoid> = &schemas::hard_sigmoid;
template <> inline constexpr shape_rule shape_rule_for<HardSigmoid> = rules::same_as_input0;
template <> inline constexpr const op_schema* description<Gelu> = &schemas::gelu;
template <> inline constexpr shape_rule shape_rule_for<Gelu> = rules::same_as_input0;
template <> inline constexpr const op_schema* description<Clip> = &schemas::clip;
template <> inline constexpr shape_rule shape_rule_for<Clip> = rules::same_as_input0;
template <> inline constexpr const op_schema* description<Ceil> = &schemas::ceil;
template <> inline constexpr shape_rule shape_rule_for<Ceil> = rules::same_as_input0;
template <> inline constexpr const op_schema* description<Floor> = &schemas::floor;
template <> inline constexpr shape_rule shape_rule_for<Floor> = rules::same_as_input0;
template <> inline constexpr const op_schema* description<Sign> = &schemas::sign;
template <> inline constexpr shape_rule shape_rule_for<Sign> = rules::same_as_input0;
template <> inline constexpr const op_schema* description<Sin> = &schemas::sin;
template <> inline constexpr shape_rule shape_rule_for<Sin> = rules::same_as_input0;
template <> inline constexpr const op_schema* description<Cos> = &schemas::cos;
template <> inline constexpr shape_rule shape_rule_for<Cos> = rules::same_as_input0;
template <> inline constexpr const op_schema* description<Tan> = &schemas::tan;
template <> inline constexpr shape_rule shape_rule_for<Tan> = rules::same_as_input0;
template <> inline constexpr const op_schema* description<Asin> = &schemas::asin;
template <> inline constexpr shape_rule shape_rule_for<Asin> = rules::same_as_input0;
template <> inline constexpr const op_schema* description<Acos> = &schemas::acos;
template <> inline constexpr shape_rule shape_rule_for<Acos> = rules::same_as_input0;
template <> inline constexpr const op_schema* description<Atan> = &schemas::atan;
template <> inline constexpr shape_rule shape_rule_for<Atan> = rules::same_as_input0;
template <> inline constexpr const op_schema* description<Sinh> = &schemas::sinh;
template <> inline constexpr shape_rule shape_rule_for<Sinh> = rules::same_as_input0;
template <> inline constexpr const op_schema* description<Cosh> = &schemas::cosh;
template <> inline constexpr shape_rule shape_rule_for<Cosh> = rules::same_as_input0;
template <> inline constexpr const op_schema* description<Asinh> = &schemas::asinh;
template <> inline constexpr shape_rule shape_rule_for<Asinh> = rules::same_as_input0;
template <> inline constexpr const op_schema* description<Acosh> = &schemas::acosh;
template <> inline constexpr shape_rule shape_rule_for<Acosh> = rules::same_as_input0;
template <> inline constexpr const op_schema* description<Atanh> = &schemas::atanh;
template <> inline constexpr shape_rule shape_rule_for<Atanh> = rules::same_as_input0;
template <> inline constexpr const op_schema* description<Shrink> = &schemas::shrink;
template <> inline constexpr shape_rule shape_rule_for<Shrink> = rules::same_as_input0;
template <> inline constexpr const op_schema* description<IsNaN> = &schemas::is_nan;
template <> inline constexpr shape_rule shape_rule_for<IsNaN> = rules::same_as_input0;
template <> inline constexpr const op_schema* description<IsInf> = &schemas::is_inf;
template <> inline constexpr shape_rule shape_rule_for<IsInf> = rules::same_as_input0;
template <> inline constexpr const op_schema* description<Add> = &schemas::add;
template <> inline constexpr shape_rule shape_rule_for<Add> = rules::broadcast_all;
template <> inline constexpr const op_schema* description<Sub> = &schemas::sub;
template <> inline constexpr shape_rule shape_rule_for<Sub> = rules::broadcast_all;
template <> inline constexpr const op_schema* description<Mul> = &schemas::mul;
template <> inline constexpr shape_rule shape_rule_for<Mul> = rules::broadcast_all;
template <> inline constexpr const op_schema* description<Div> = &schemas::div;
template <> inline constexpr shape_rule shape_rule_for<Div> = rules::broadcast_all;
template <> inline constexpr const op_schema* description<Pow> = &schemas::pow;
template <> inline constexpr shape_rule shape_rule_for<Pow> = rules::broadcast_all;
template <> inline constexpr const op_schema* description<Mod> = &schemas::mod;
template <> inline constexpr shape_rule shape_rule_for<Mod> = rules::broadcast_all;
template <> inline constexpr const op_schema* description<BitShift> = &schemas::bit_shift;
template <> inline constexpr shape_rule shape_rule_for<BitShift> = rules::broadcast_all;
template <> inline constexpr const op_schema* description<Max> = &schemas::max;
template <> inline constexpr shape_rule shape_rule_for<Max> = rules::broadcast_all;
template <> inline constexpr const op_schema* description<Min> = &schemas::min;
template <> inline constexpr shape_rule shape_rule_for<Min> = rules::broadcast_all;
template <> inline constexpr const op_schema* description<Sum> = &schemas::sum;
template <> inline constexpr shape_rule shape_rule_for<Sum> = rules::broadcast_all;
template <> inline constexpr const op_schema* description<Mean> = &schemas::mean;
template <> inline constexpr shape_rule shape_rule_for<Mean> = rules::broadcast_all;
template <> inline constexpr const op_schema* description<Equal> = &schemas::equal;
template <> inline constexpr shape_rule shape_rule_for<Equal> = rules::broadcast_all;
template <> inline constexpr const op_schema* description<Less> = &schemas::less;
template <> inline constexpr shape_rule shape_rule_for<Less> = rules::broadcast_all;
template <> inline constexpr const op_schema* description<Greater> = &schemas::greater;
template <> inline constexpr shape_rule shape_rule_for<Greater> = rules::broadcast_all;
template <> inline constexpr const op_schema* description<LessOrEqual> = &schemas::less_or_equal;
template <> inline constexpr shape_rule shape_rule_for<LessOrEqual> = rules::broadcast_all;
template <> inline constexpr const op_schema* description<GreaterOrEqual> = &schemas::greater_or_equal;
template <> inline constexpr shape_rule shape_rule_for<GreaterOrEqual> = rules::broadcast_all;
template <> inline constexpr const op_schema* description<And> = &schemas::logical_and;
template <> inline constexpr shape_rule shape_rule_for<And> = rules::broadcast_all;
template <> inline constexpr const op_schema* description<Or> = &schemas::logical_or;
template <> inline constexpr shape_rule shape_rule_for<Or> = rules::broadcast_all;
template <> inline constexpr const op_schema* description<Xor> = &schemas::logical_xor;
template <> inline constexpr shape_rule shape_rule_for<Xor> = rules::broadcast_all;
template <> inline constexpr const op_schema* description<Not> = &schemas::logical_not;
template <> inline constexpr shape_rule shape_rule_for<Not> = rules::same_as_input0;
template <> inline constexpr const op_schema* description<QuantizeLinear> = &schemas::quantize_linear;
template <> inline constexpr shape_rule shape_rule_for<QuantizeLinear> = rules::same_as_input0;
template <> inline constexpr const op_schema* description<DequantizeLinear> = &schemas::dequantize_linear;
template <> inline constexpr shape_rule shape_rule_for<DequantizeLinear> = rules::same_as_input0;
template <> inline constexpr const op_schema* description<DynamicQuantizeLinear> = &schemas::dynamic_quantize_linear;
template <> inline constexpr shape_rule shape_rule_for<DynamicQuantizeLinear> = rules::dynamic_quantize_linear;
template <> inline constexpr const op_schema* description<QLinearAdd> = &schemas::qlinear_add;
template <> inline constexpr shape_rule shape_rule_for<QLinearAdd> = rules::qlinear_add;

}  // namespace ops
SGMATCH_END_NAMESPACE

#undef SGMATCH_DETAIL_CONSUMED
