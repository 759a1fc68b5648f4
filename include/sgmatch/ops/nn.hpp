// sgmatch/ops/nn.hpp - descriptions of the network layers: convolutions, pooling,
// normalizations, Gemm / MatMul, Det and Softmax, and the integer and quantized convolutions and
// matmuls.
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

/// What Conv and ConvTranspose share: input and weights of one rank (3 to 5), the window
/// (kernel_shape from the weights, and agreeing with them when given), the group count, and a
/// bias of one value per output channel.
struct conv_shapes {
    const dims& x;
    const dims& w;
    std::size_t sp;
    window k;
    std::int64_t group;
};
inline conv_shapes conv_shapes_of(const shape_inputs& in, const op_attrs& a, bool transposed) {
    const dims& x = in.shapes.at(0);
    const dims& w = in.shapes.at(1);
    need_rank(a, x, 3);
    if (w.size() != x.size()) fail(a, "weights " + to_string(w) + " and input " + to_string(x) + " differ in rank");
    const std::size_t sp = x.size() - 2;
    conv_shapes c{x, w, sp, window_of(a, sp, &w), a.i("group")};
    for (std::size_t i = 0; i < sp; ++i)
        if (c.k.kernel[i] != w[i + 2]) fail(a, "kernel_shape " + to_string(c.k.kernel) + " disagrees with weights " + to_string(w));
    const std::int64_t out = transposed ? w[1] * c.group : w[0];  // weights [O, C/g, k...] or [C, O/g, k...]
    if (in.shapes.size() > 2 && in.shapes[2] != dims{out})
        fail(a, "bias " + to_string(in.shapes[2]) + " is not [" + std::to_string(out) + "]");
    return c;
}

inline std::vector<dims> conv(const shape_inputs& in, const op_attrs& a) {
    const conv_shapes c = conv_shapes_of(in, a, false);
    const dims &x = c.x, &w = c.w;
    if (x[1] != w[1] * c.group)
        fail(a, "input " + to_string(x) + " has " + std::to_string(x[1]) + " channels; weights " + to_string(w) + " in " +
                    std::to_string(c.group) + " group(s) take " + std::to_string(w[1] * c.group));
    if (w[0] % c.group != 0)
        fail(a, std::to_string(w[0]) + " output channels are not divisible by " + std::to_string(c.group) + " groups");
    dims out{x[0], w[0]};
    for (std::size_t i = 0; i < c.sp; ++i)
        out.push_back(window_out(a, x[i + 2], c.k.kernel[i], c.k.strides[i], c.k.dilations[i], c.k.pads[i], c.k.pads[i + c.sp], false));
    return {out};
}

inline std::vector<dims> conv_transpose(const shape_inputs& in, const op_attrs& a) {
    const conv_shapes c = conv_shapes_of(in, a, true);
    const dims &x = c.x, &w = c.w;
    if (x[1] != w[0]) fail(a, "input " + to_string(x) + " does not have the weights' " + std::to_string(w[0]) + " channels");
    const dims op = a.ints("output_padding", c.sp);
    if (op.size() != c.sp) fail(a, "output_padding has " + std::to_string(op.size()) + " values");
    dims out{x[0], mul(a, w[1], c.group, "channels times groups")};
    for (std::size_t i = 0; i < c.sp; ++i) {
        const char* what = "the output size's terms";
        std::int64_t o = mul(a, c.k.strides[i], x[i + 2] - 1, what);
        o = add(a, o, op[i], what);
        o = add(a, o, add(a, mul(a, c.k.kernel[i] - 1, c.k.dilations[i], what), 1, what), what);
        o = add(a, o, -c.k.pads[i], what);
        o = add(a, o, -c.k.pads[i + c.sp], what);
        if (o < 1) fail(a, "the output would be empty");
        out.push_back(o);
    }
    return {out};
}

inline std::vector<dims> pool(const shape_inputs& in, const op_attrs& a) {
    const dims& x = in.shapes.at(0);
    need_rank(a, x, 3);
    const std::size_t sp = x.size() - 2;
    const window k = window_of(a, sp);
    dims out{x[0], x[1]};
    for (std::size_t i = 0; i < sp; ++i)
        out.push_back(window_out(a, x[i + 2], k.kernel[i], k.strides[i], k.dilations[i], k.pads[i], k.pads[i + sp],
                                 a.i("ceil_mode") != 0));
    return {out};
}

/// MaxPool: the maxima and their indices, of one shape.
inline std::vector<dims> max_pool(const shape_inputs& in, const op_attrs& a) {
    const dims out = pool(in, a).at(0);
    return {out, out};
}

inline std::vector<dims> global_pool(const shape_inputs& in, const op_attrs& a) {
    dims x = in.shapes.at(0);
    need_rank(a, x, 3);
    for (std::size_t i = 2; i < x.size(); ++i) x[i] = 1;
    return {x};
}

inline std::vector<dims> per_channel_same(const shape_inputs& in, const op_attrs& a) {
    const dims& x = in.shapes.at(0);
    need_rank(a, x, 2);
    for (std::size_t i = 1; i < in.shapes.size(); ++i)
        if (in.shapes[i] != dims{x[1]})
            fail(a, "input " + std::to_string(i) + " " + to_string(in.shapes[i]) + " is not one value per channel of " + to_string(x));
    return {x};
}

/// BatchNormalization: Y, then the running mean and variance (one value per channel).
inline std::vector<dims> batch_norm(const shape_inputs& in, const op_attrs& a) {
    const dims x = per_channel_same(in, a).at(0);
    return {x, dims{x[1]}, dims{x[1]}};
}

inline std::vector<dims> gemm(const shape_inputs& in, const op_attrs& a) {
    const dims& A = in.shapes.at(0);
    const dims& B = in.shapes.at(1);
    if (A.size() != 2 || B.size() != 2) fail(a, "A " + to_string(A) + " and B " + to_string(B) + " must be 2-D");
    const bool ta = a.i("transA") != 0, tb = a.i("transB") != 0;
    const std::int64_t M = ta ? A[1] : A[0], K = ta ? A[0] : A[1];
    const std::int64_t KB = tb ? B[1] : B[0], N = tb ? B[0] : B[1];
    if (K != KB) fail(a, "A " + to_string(A) + " and B " + to_string(B) + " do not agree on K");
    const dims out{M, N};
    if (in.shapes.size() > 2 && broadcast(a, out, in.shapes[2]) != out)
        fail(a, "C " + to_string(in.shapes[2]) + " does not broadcast to " + to_string(out));
    return {out};
}

inline std::vector<dims> matmul(const shape_inputs& in, const op_attrs& a) {
    dims A = in.shapes.at(0), B = in.shapes.at(1);
    if (A.empty() || B.empty()) fail(a, "MatMul of a scalar");
    const bool a1 = A.size() == 1, b1 = B.size() == 1;
    if (a1) A.insert(A.begin(), 1);
    if (b1) B.push_back(1);
    if (A.back() != B[B.size() - 2])
        fail(a, "A " + to_string(in.shapes[0]) + " and B " + to_string(in.shapes[1]) + " do not agree on K");
    dims batch = broadcast(a, dims(A.begin(), A.end() - 2), dims(B.begin(), B.end() - 2));
    if (!a1) batch.push_back(A[A.size() - 2]);
    if (!b1) batch.push_back(B.back());
    return {batch};
}

/// QLinearMatMul: the MatMul of inputs 0 and 3 (a and b; their scales and zero points between).
inline std::vector<dims> qlinear_matmul(const shape_inputs& in, const op_attrs& a) {
    shape_inputs ab;
    ab.shapes = {in.shapes.at(0), in.shapes.at(3)};
    return matmul(ab, a);
}

/// ConvInteger and QLinearConv: Conv's shapes from x and w (inputs 0 and 1, or 0 and 3), and
/// QLinearConv's bias (input 8).
inline std::vector<dims> conv_integer(const shape_inputs& in, const op_attrs& a) {
    shape_inputs xw;
    xw.shapes = {in.shapes.at(0), in.shapes.at(1)};
    return conv(xw, a);
}
inline std::vector<dims> qlinear_conv(const shape_inputs& in, const op_attrs& a) {
    shape_inputs xw;
    xw.shapes = {in.shapes.at(0), in.shapes.at(3)};
    if (in.shapes.size() > 8) xw.shapes.push_back(in.shapes[8]);
    return conv(xw, a);
}

/// Det: the batch dims of square matrices.
inline std::vector<dims> det(const shape_inputs& in, const op_attrs& a) {
    const dims& x = in.shapes.at(0);
    if (x.size() < 2 || x[x.size() - 1] != x[x.size() - 2]) fail(a, "the input " + to_string(x) + " is not a (batch of) square matrices");
    return {dims(x.begin(), x.end() - 2)};
}

inline std::vector<dims> softmax(const shape_inputs& in, const op_attrs& a) {
    (void)axis(a, a.i("axis"), in.shapes.at(0).size());
    return {in.shapes[0]};
}

inline std::vector<dims> lp_normalization(const shape_inputs& in, const op_attrs& a) {
    (void)axis(a, a.i("axis"), in.shapes.at(0).size());
    return {in.shapes[0]};
}

inline std::vector<dims> layer_norm(const shape_inputs& in, const op_attrs& a) {
    const dims& x = in.shapes.at(0);
    const std::size_t ax = axis(a, a.i("axis"), x.size());
    const dims norm(x.begin() + static_cast<std::ptrdiff_t>(ax), x.end());
    for (std::size_t i = 1; i < in.shapes.size(); ++i)
        if (broadcast(a, norm, in.shapes[i]) != norm)
            fail(a, "input " + std::to_string(i) + " " + to_string(in.shapes[i]) + " does not broadcast to " + to_string(norm));
    dims stat = x;  // Mean and InvStdDev: the normalized axes kept as 1
    for (std::size_t i = ax; i < stat.size(); ++i) stat[i] = 1;
    return {x, stat, stat};
}

}  // namespace rules

namespace schemas {

/// auto_pad SAME / VALID depend on the input's dims: the ONNX front end writes them out as pads.
inline constexpr std::string_view auto_pad_why = "give explicit pads (the ONNX front end writes SAME and VALID out)";
inline constexpr input_spec conv_inputs[] = {{"X"}, {"W"}, {"B", input_spec::presence::optional}};
inline constexpr attr_spec conv_attrs[] = {
    {"auto_pad", attr_type::string, def::text("NOTSET"), support::one_of("NOTSET", auto_pad_why)},
    {"dilations", attr_type::integers, def::per_axis(1), support::at_least(1)},
    {"group", attr_type::integer, def::value(1), support::at_least(1)},
    {"kernel_shape", attr_type::integers, def::absent(), support::at_least(1)},
    {"pads", attr_type::integers, def::per_axis2(0), support::at_least(0)},
    {"strides", attr_type::integers, def::per_axis(1), support::at_least(1)},
};
inline constexpr attr_spec conv_transpose_attrs[] = {
    {"auto_pad", attr_type::string, def::text("NOTSET"), support::one_of("NOTSET", auto_pad_why)},
    {"dilations", attr_type::integers, def::per_axis(1), support::at_least(1)},
    {"group", attr_type::integer, def::value(1), support::at_least(1)},
    {"kernel_shape", attr_type::integers, def::absent(), support::at_least(1)},
    {"output_padding", attr_type::integers, def::per_axis(0), support::at_least(0)},
    {"output_shape", attr_type::integers, def::absent(), support::none("give pads and output_padding (the ONNX front end writes them out)")},
    {"pads", attr_type::integers, def::per_axis2(0), support::at_least(0)},
    {"strides", attr_type::integers, def::per_axis(1), support::at_least(1)},
};
inline constexpr input_spec pool_inputs[] = {{"X"}};
inline constexpr attr_spec max_pool_attrs[] = {
    {"auto_pad", attr_type::string, def::text("NOTSET"), support::one_of("NOTSET", auto_pad_why)},
    {"ceil_mode", attr_type::integer, def::value(0), support::range(0, 1)},
    {"dilations", attr_type::integers, def::per_axis(1), support::at_least(1)},
    {"kernel_shape", attr_type::integers, def::required(), support::at_least(1)},
    {"pads", attr_type::integers, def::per_axis2(0), support::at_least(0)},
    {"storage_order", attr_type::integer, def::value(0), support::range(0, 1)},  // the Indices: row- or column-major
    {"strides", attr_type::integers, def::per_axis(1), support::at_least(1)},
};
inline constexpr attr_spec avg_pool_attrs[] = {
    {"auto_pad", attr_type::string, def::text("NOTSET"), support::one_of("NOTSET", auto_pad_why)},
    {"ceil_mode", attr_type::integer, def::value(0), support::range(0, 1)},  // not with count_include_pad 1
    {"count_include_pad", attr_type::integer, def::value(0), support::range(0, 1)},
    {"kernel_shape", attr_type::integers, def::required(), support::at_least(1)},
    {"pads", attr_type::integers, def::per_axis2(0), support::at_least(0)},
    {"strides", attr_type::integers, def::per_axis(1), support::at_least(1)},
};
inline constexpr input_spec batch_norm_inputs[] = {{"X"}, {"scale"}, {"B"}, {"input_mean"}, {"input_var"}};
inline constexpr attr_spec batch_norm_attrs[] = {
    {"epsilon", attr_type::real, def::value(1e-5), support::any()},
    {"momentum", attr_type::real, def::value(0.9), support::any()},  // training only
    {"spatial", attr_type::integer, def::value(1), support::only(1, "per-element statistics (opset < 9)")},
    {"training_mode", attr_type::integer, def::value(0), support::range(0, 1)},  // 1: the batch's statistics
    {"is_test", attr_type::integer, def::value(1), support::only(1, "training mode (opset < 7): inference only")},  // opset < 7
    {"consumed_inputs", attr_type::integers, def::absent(), support::any()},  // opset < 6
};
inline constexpr input_spec layer_norm_inputs[] = {{"X"}, {"Scale"}, {"B", input_spec::presence::optional}};
inline constexpr attr_spec layer_norm_attrs[] = {
    {"axis", attr_type::integer, def::value(-1), support::any()},
    {"epsilon", attr_type::real, def::value(1e-5), support::any()},
    {"stash_type", attr_type::integer, def::value(1), support::only(1, "the mean's precision is float")},
};
inline constexpr attr_spec lrn_attrs[] = {
    {"size", attr_type::integer, def::required(), support::at_least(1)},
    {"alpha", attr_type::real, def::value(1e-4), support::any()},
    {"beta", attr_type::real, def::value(0.75), support::any()},
    {"bias", attr_type::real, def::value(1.0), support::any()},
};
inline constexpr input_spec gemm_inputs[] = {{"A"}, {"B"}, {"C", input_spec::presence::optional}};
inline constexpr attr_spec gemm_attrs[] = {
    {"alpha", attr_type::real, def::value(1.0), support::any()},
    {"beta", attr_type::real, def::value(1.0), support::any()},
    {"transA", attr_type::integer, def::value(0), support::range(0, 1)},
    {"transB", attr_type::integer, def::value(0), support::range(0, 1)},
    {"broadcast", attr_type::integer, def::value(0), support::any()},  // opset < 7
};
inline constexpr input_spec a_b_inputs[] = {{"A"}, {"B"}};
/// The axis default is opset 13's (-1); a front end for an older opset gives it explicitly.
inline constexpr attr_spec softmax_attrs[] = {{"axis", attr_type::integer, def::value(-1), support::any()}};

inline constexpr op_schema conv = describe<Conv>(conv_inputs, conv_attrs);
inline constexpr op_schema conv_transpose = describe<ConvTranspose>(conv_inputs, conv_transpose_attrs);
/// MaxPool: the maxima, and (output 1, optional) their int64 indices; the typed kernel takes
/// every numeric type and computes both (exec/kernels/max_pool.hpp).
inline constexpr op_schema max_pool =
    typed(describe<MaxPool>(pool_inputs, max_pool_attrs, type_rule{type_rule::from::input, 0, dtype::unknown, {}, dtype::i64}, 2),
          types::numeric);
inline constexpr op_schema average_pool = describe<AveragePool>(pool_inputs, avg_pool_attrs);
inline constexpr op_schema global_average_pool = describe<GlobalAveragePool>(pool_inputs);
/// BatchNormalization: Y and, in training mode (outputs 1 and 2, optional), the running mean and
/// variance updated with the batch's. The typed kernel (exec/kernels/losses.hpp) takes f64 and
/// training mode; the fp32 kernels and the fusions take inference on f32.
inline constexpr op_schema batch_norm =
    typed(describe<BatchNorm>(batch_norm_inputs, batch_norm_attrs, {}, 3), types::f32 | types::bit(dtype::f64));
inline constexpr input_spec instance_norm_inputs[] = {{"input"}, {"scale"}, {"B"}};
inline constexpr attr_spec instance_norm_attrs[] = {
    {"epsilon", attr_type::real, def::value(1e-5), support::any()},
    {"consumed_inputs", attr_type::integers, def::absent(), support::any()},  // opset < 6
};
/// InstanceNormalization: each (n, c) plane normalized by its own mean and variance, then scaled
/// and shifted per channel.
inline constexpr op_schema instance_norm = typed(describe<InstanceNormalization>(instance_norm_inputs, instance_norm_attrs),
                                                 types::f32 | types::bit(dtype::f64));
/// MeanVarianceNormalization: (x - mean) / (sqrt(variance) + 1e-9) over `axes` (0, 2 and 3 when
/// absent), the variance E[x^2] - E[x]^2, as ONNX's function body computes it.
inline constexpr attr_spec mean_variance_norm_attrs[] = {{"axes", attr_type::integers, def::absent(), support::any()}};
inline constexpr op_schema mean_variance_norm =
    typed(describe<MeanVarianceNormalization>(pool_inputs, mean_variance_norm_attrs), types::f32 | types::bit(dtype::f64));
/// LayerNorm: Y, and (outputs 1, 2, optional) the mean and the inverse standard deviation.
inline constexpr op_schema layer_norm = describe<LayerNorm>(layer_norm_inputs, layer_norm_attrs, {}, 3);
inline constexpr op_schema lrn = describe<LRN>(pool_inputs, lrn_attrs);
/// LpNormalization: x divided by its L1 or L2 norm along `axis`, with no epsilon (a vector of
/// zeros gives NaNs, as in ONNX's definition).
inline constexpr input_spec lp_normalization_inputs[] = {{"input"}};
inline constexpr attr_spec lp_normalization_attrs[] = {{"axis", attr_type::integer, def::value(-1), support::any()},
                                                       {"p", attr_type::integer, def::value(2), support::range(1, 2)}};
inline constexpr op_schema lp_normalization = describe<LpNormalization>(lp_normalization_inputs, lp_normalization_attrs);
inline constexpr op_schema gemm = describe<Gemm>(gemm_inputs, gemm_attrs);
inline constexpr op_schema matmul = describe<MatMul>(a_b_inputs);
/// Det: the determinant of each square matrix in the last two dims (LU with partial pivoting, in
/// double).
inline constexpr op_schema det = typed(describe<Det>(pool_inputs), types::f32 | types::bit(dtype::f64));
/// MatMulInteger: (A - a_zero_point) x (B - b_zero_point) as int32; A and B uint8 or int8, each
/// zero point a scalar (or per row of A, per column of B).
inline constexpr input_spec matmul_integer_inputs[] = {{"A"},
                                                       {"B"},
                                                       {"a_zero_point", input_spec::presence::optional},
                                                       {"b_zero_point", input_spec::presence::optional}};
inline constexpr op_schema matmul_integer =
    typed(describe<MatMulInteger>(matmul_integer_inputs, type_rule{type_rule::from::fixed, 0, dtype::i32, {}}),
          types::bit(dtype::u8) | types::bit(dtype::i8));
/// QLinearMatMul: saturate(round_half_even((a - a_zp) x (b - b_zp) * a_scale * b_scale / y_scale)
/// + y_zp), of y_zp's type; scales and zero points per tensor.
inline constexpr input_spec qlinear_matmul_inputs[] = {{"a"}, {"a_scale"}, {"a_zero_point"}, {"b"},
                                                       {"b_scale"}, {"b_zero_point"}, {"y_scale"}, {"y_zero_point"}};
inline constexpr op_schema qlinear_matmul =
    typed(describe<QLinearMatMul>(qlinear_matmul_inputs, type_rule{type_rule::from::input, 7, dtype::unknown, {}}),
          types::bit(dtype::u8) | types::bit(dtype::i8));
/// ConvInteger: Conv (no bias) of uint8 / int8 x and w less their zero points (x's one value,
/// w's one or one per output channel) as int32; padding adds nothing.
inline constexpr input_spec conv_integer_inputs[] = {
    {"x"}, {"w"}, {"x_zero_point", input_spec::presence::optional}, {"w_zero_point", input_spec::presence::optional}};
inline constexpr op_schema conv_integer =
    typed(describe<ConvInteger>(conv_integer_inputs, conv_attrs, type_rule{type_rule::from::fixed, 0, dtype::i32, {}}),
          types::bit(dtype::u8) | types::bit(dtype::i8));
/// QLinearConv: ConvInteger's sum plus an int32 bias, rescaled by x_scale * w_scale / y_scale (f32,
/// ties to even) onto y's zero point, saturated; w's scale and zero point one or one per output
/// channel, the others one value.
inline constexpr input_spec qlinear_conv_inputs[] = {{"x"},       {"x_scale"},      {"x_zero_point"},
                                                     {"w"},       {"w_scale"},      {"w_zero_point"},
                                                     {"y_scale"}, {"y_zero_point"}, {"B", input_spec::presence::optional}};
inline constexpr op_schema qlinear_conv =
    typed(describe<QLinearConv>(qlinear_conv_inputs, conv_attrs, type_rule{type_rule::from::input, 7, dtype::unknown, {}}),
          types::bit(dtype::u8) | types::bit(dtype::i8));
inline constexpr op_schema softmax = describe<Softmax>(pool_inputs, softmax_attrs);
inline constexpr op_schema log_softmax = describe<LogSoftmax>(pool_inputs, softmax_attrs);
inline constexpr op_schema global_max_pool = describe<GlobalMaxPool>(pool_inputs);

}  // namespace schemas

// The ops layer's facets of each op's entry (its vocabulary tag): the description and the shape rule.
template <> inline constexpr const op_schema* description<Conv> = &schemas::conv;
template <> inline constexpr shape_rule shape_rule_for<Conv> = rules::conv;
template <> inline constexpr const op_schema* description<ConvTranspose> = &schemas::conv_transpose;
template <> inline constexpr shape_rule shape_rule_for<ConvTranspose> = rules::conv_transpose;
template <> inline constexpr const op_schema* description<MaxPool> = &schemas::max_pool;
template <> inline constexpr shape_rule shape_rule_for<MaxPool> = rules::max_pool;
template <> inline constexpr const op_schema* description<AveragePool> = &schemas::average_pool;
template <> inline constexpr shape_rule shape_rule_for<AveragePool> = rules::pool;
template <> inline constexpr const op_schema* description<GlobalAveragePool> = &schemas::global_average_pool;
template <> inline constexpr shape_rule shape_rule_for<GlobalAveragePool> = rules::global_pool;
template <> inline constexpr const op_schema* description<BatchNorm> = &schemas::batch_norm;
template <> inline constexpr shape_rule shape_rule_for<BatchNorm> = rules::batch_norm;
template <> inline constexpr const op_schema* description<InstanceNormalization> = &schemas::instance_norm;
template <> inline constexpr shape_rule shape_rule_for<InstanceNormalization> = rules::per_channel_same;
template <> inline constexpr const op_schema* description<MeanVarianceNormalization> = &schemas::mean_variance_norm;
template <> inline constexpr shape_rule shape_rule_for<MeanVarianceNormalization> = rules::same_as_input0;
template <> inline constexpr const op_schema* description<LayerNorm> = &schemas::layer_norm;
template <> inline constexpr shape_rule shape_rule_for<LayerNorm> = rules::layer_norm;
template <> inline constexpr const op_schema* description<LRN> = &schemas::lrn;
template <> inline constexpr shape_rule shape_rule_for<LRN> = rules::same_as_input0;
template <> inline constexpr const op_schema* description<LpNormalization> = &schemas::lp_normalization;
template <> inline constexpr shape_rule shape_rule_for<LpNormalization> = rules::lp_normalization;
template <> inline constexpr const op_schema* description<Gemm> = &schemas::gemm;
template <> inline constexpr shape_rule shape_rule_for<Gemm> = rules::gemm;
template <> inline constexpr const op_schema* description<MatMul> = &schemas::matmul;
template <> inline constexpr shape_rule shape_rule_for<MatMul> = rules::matmul;
template <> inline constexpr const op_schema* description<Det> = &schemas::det;
template <> inline constexpr shape_rule shape_rule_for<Det> = rules::det;
template <> inline constexpr const op_schema* description<MatMulInteger> = &schemas::matmul_integer;
template <> inline constexpr shape_rule shape_rule_for<MatMulInteger> = rules::matmul;
template <> inline constexpr const op_schema* description<QLinearMatMul> = &schemas::qlinear_matmul;
template <> inline constexpr shape_rule shape_rule_for<QLinearMatMul> = rules::qlinear_matmul;
template <> inline constexpr const op_schema* description<ConvInteger> = &schemas::conv_integer;
template <> inline constexpr shape_rule shape_rule_for<ConvInteger> = rules::conv_integer;
template <> inline constexpr const op_schema* description<QLinearConv> = &schemas::qlinear_conv;
template <> inline constexpr shape_rule shape_rule_for<QLinearConv> = rules::qlinear_conv;
template <> inline constexpr const op_schema* description<Softmax> = &schemas::softmax;
template <> inline constexpr shape_rule shape_rule_for<Softmax> = rules::softmax;
template <> inline constexpr const op_schema* description<LogSoftmax> = &schemas::log_softmax;
template <> inline constexpr shape_rule shape_rule_for<LogSoftmax> = rules::softmax;
template <> inline constexpr const op_schema* description<GlobalMaxPool> = &schemas::global_max_pool;
template <> inline constexpr shape_rule shape_rule_for<GlobalMaxPool> = rules::global_pool;

}  // namespace ops
SGMATCH_END_NAMESPACE
