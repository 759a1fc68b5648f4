// sgmatch/ops/shape_rule_table.hpp - every op description's shape rule, looked up by the
// description.
//
//   const std::vector<ops::dims> outs = ops::infer_shapes(attrs, inputs);
//
// Apart from the descriptions (ops/table.hpp) because only what computes shapes needs them (the
// executor's typed kernels, the ONNX front end, the graph generators): a translation unit that
// only lowers or checks attributes (the one registering the oneDNN backend) does not compile a
// hundred shape rules it never calls, which a table of their addresses would make it do.
// Adding an op: its rule here, beside its description in ops/table.hpp.
#pragma once

#include <string>
#include <unordered_map>
#include <vector>

#include "sgmatch/detail/checked.hpp"
#include "sgmatch/detail/config.hpp"
#include "sgmatch/ops/table.hpp"

SGMATCH_BEGIN_NAMESPACE
namespace ops {

/// The shape rule of description `s` (null: its shape is not known before the op runs).
inline shape_rule shape_rule_of(const op_schema& s) {
    static const std::unordered_map<const op_schema*, shape_rule> rules_by_schema{
        {&schemas::relu, rules::same_as_input0},
        {&schemas::neg, rules::same_as_input0},
        {&schemas::reciprocal, rules::same_as_input0},
        {&schemas::softsign, rules::same_as_input0},
        {&schemas::selu, rules::same_as_input0},
        {&schemas::celu, rules::same_as_input0},
        {&schemas::thresholded_relu, rules::same_as_input0},
        {&schemas::prelu, rules::unidirectional},
        {&schemas::sigmoid, rules::same_as_input0},
        {&schemas::tanh, rules::same_as_input0},
        {&schemas::hard_swish, rules::same_as_input0},
        {&schemas::mish, rules::same_as_input0},
        {&schemas::softplus, rules::same_as_input0},
        {&schemas::exp, rules::same_as_input0},
        {&schemas::log, rules::same_as_input0},
        {&schemas::sqrt, rules::same_as_input0},
        {&schemas::square, rules::same_as_input0},
        {&schemas::abs, rules::same_as_input0},
        {&schemas::round, rules::same_as_input0},
        {&schemas::erf, rules::same_as_input0},
        {&schemas::identity, rules::same_as_input0},
        {&schemas::leaky_relu, rules::same_as_input0},
        {&schemas::elu, rules::same_as_input0},
        {&schemas::swish, rules::same_as_input0},
        {&schemas::hard_sigmoid, rules::same_as_input0},
        {&schemas::gelu, rules::same_as_input0},
        {&schemas::clip, rules::same_as_input0},
        {&schemas::ceil, rules::same_as_input0},
        {&schemas::floor, rules::same_as_input0},
        {&schemas::sign, rules::same_as_input0},
        {&schemas::sin, rules::same_as_input0},
        {&schemas::cos, rules::same_as_input0},
        {&schemas::tan, rules::same_as_input0},
        {&schemas::asin, rules::same_as_input0},
        {&schemas::acos, rules::same_as_input0},
        {&schemas::atan, rules::same_as_input0},
        {&schemas::sinh, rules::same_as_input0},
        {&schemas::cosh, rules::same_as_input0},
        {&schemas::asinh, rules::same_as_input0},
        {&schemas::acosh, rules::same_as_input0},
        {&schemas::atanh, rules::same_as_input0},
        {&schemas::shrink, rules::same_as_input0},
        {&schemas::is_nan, rules::same_as_input0},
        {&schemas::is_inf, rules::same_as_input0},
        {&schemas::add, rules::broadcast_all},
        {&schemas::sub, rules::broadcast_all},
        {&schemas::mul, rules::broadcast_all},
        {&schemas::div, rules::broadcast_all},
        {&schemas::pow, rules::broadcast_all},
        {&schemas::mod, rules::broadcast_all},
        {&schemas::bit_shift, rules::broadcast_all},
        {&schemas::max, rules::broadcast_all},
        {&schemas::min, rules::broadcast_all},
        {&schemas::sum, rules::broadcast_all},
        {&schemas::mean, rules::broadcast_all},
        {&schemas::equal, rules::broadcast_all},
        {&schemas::less, rules::broadcast_all},
        {&schemas::greater, rules::broadcast_all},
        {&schemas::less_or_equal, rules::broadcast_all},
        {&schemas::greater_or_equal, rules::broadcast_all},
        {&schemas::logical_and, rules::broadcast_all},
        {&schemas::logical_or, rules::broadcast_all},
        {&schemas::logical_xor, rules::broadcast_all},
        {&schemas::logical_not, rules::same_as_input0},
        {&schemas::softmax_cross_entropy, rules::loss},
        {&schemas::conv, rules::conv},
        {&schemas::conv_transpose, rules::conv_transpose},
        {&schemas::max_pool, rules::max_pool},
        {&schemas::average_pool, rules::pool},
        {&schemas::global_average_pool, rules::global_pool},
        {&schemas::batch_norm, rules::batch_norm},
        {&schemas::instance_norm, rules::per_channel_same},
        {&schemas::layer_norm, rules::layer_norm},
        {&schemas::lrn, rules::same_as_input0},
        {&schemas::gemm, rules::gemm},
        {&schemas::matmul, rules::matmul},
        {&schemas::softmax, rules::softmax},
        {&schemas::log_softmax, rules::softmax},
        {&schemas::global_max_pool, rules::global_pool},
        {&schemas::tile, rules::tile},
        {&schemas::trilu, rules::trilu},
        {&schemas::einsum, rules::einsum},
        {&schemas::quantize_linear, rules::same_as_input0},
        {&schemas::dequantize_linear, rules::same_as_input0},
        {&schemas::matmul_integer, rules::matmul},
        {&schemas::qlinear_matmul, rules::qlinear_matmul},
        {&schemas::conv_integer, rules::conv_integer},
        {&schemas::qlinear_conv, rules::qlinear_conv},
        {&schemas::dynamic_quantize_linear, rules::dynamic_quantize_linear},
        {&schemas::range, rules::range},
        {&schemas::cumsum, rules::cumsum},
        {&schemas::arg_max, rules::arg_reduce},
        {&schemas::arg_min, rules::arg_reduce},
        {&schemas::hardmax, rules::hardmax},
        {&schemas::top_k, rules::top_k},
        {&schemas::rnn, rules::recurrent},
        {&schemas::gru, rules::recurrent},
        {&schemas::lstm, rules::recurrent},
        {&schemas::one_hot, rules::one_hot},
        {&schemas::depth_to_space, rules::blocks<true>},
        {&schemas::space_to_depth, rules::blocks<false>},
        {&schemas::reduce_mean, rules::reduce},
        {&schemas::reduce_sum, rules::reduce},
        {&schemas::reduce_max, rules::reduce},
        {&schemas::reduce_min, rules::reduce},
        {&schemas::reduce_prod, rules::reduce},
        {&schemas::reduce_sum_square, rules::reduce},
        {&schemas::reduce_l1, rules::reduce},
        {&schemas::reduce_l2, rules::reduce},
        {&schemas::reduce_log_sum, rules::reduce},
        {&schemas::reduce_log_sum_exp, rules::reduce},
        {&schemas::concat, rules::concat},
        {&schemas::unsqueeze, rules::unsqueeze},
        {&schemas::squeeze, rules::squeeze},
        {&schemas::slice, rules::slice},
        {&schemas::resize, rules::resize},
        {&schemas::gather, rules::gather},
        {&schemas::expand, rules::expand},
        {&schemas::dropout, rules::dropout},
        {&schemas::cast, rules::same_as_input0},
        {&schemas::cast_like, rules::same_as_input0},
        {&schemas::shape, rules::shape},
        {&schemas::size, rules::size},
        {&schemas::where, rules::broadcast_all},
        {&schemas::split, rules::split},
        {&schemas::reshape, rules::reshape},
        {&schemas::flatten, rules::flatten},
        {&schemas::transpose, rules::transpose},
        {&schemas::pad, rules::pad},
        {&schemas::constant_of_shape, rules::constant_of_shape},
        {&schemas::constant, rules::constant},
        {&schemas::gather_elements, rules::gather_elements},
        {&schemas::scatter_elements, rules::scatter_elements},
        {&schemas::gather_nd, rules::gather_nd},
        {&schemas::scatter_nd, rules::scatter_nd},
        {&schemas::eye_like, rules::eye_like},
        {&schemas::reverse_sequence, rules::reverse_sequence},
        {&schemas::sequence_length, rules::sequence_length},
        {&schemas::optional_has_element, rules::has_element},
        {&schemas::optional_get_element, rules::same_as_input0},
        {&schemas::roi_align, rules::roi_align},
        {&schemas::grid_sample, rules::grid_sample},
        {&schemas::max_unpool, rules::max_unpool},
        {&schemas::hann_window, rules::window_op},
        {&schemas::hamming_window, rules::window_op},
        {&schemas::blackman_window, rules::window_op},
        {&schemas::dft, rules::dft},
        {&schemas::stft, rules::stft},
        {&schemas::mel_weight_matrix, rules::mel_weight_matrix},
        {&schemas::tfidf_vectorizer, rules::tfidf},
        {&schemas::det, rules::det},
        {&schemas::mean_variance_norm, rules::same_as_input0},
        {&schemas::nll_loss, rules::loss},
    };
    const auto it = rules_by_schema.find(&s);
    return it == rules_by_schema.end() ? nullptr : it->second;
}

/// The output shapes of a node of description `a.schema()` from its inputs' shapes (and the
/// values of its small constant inputs); the op's own check of its attributes comes first.
inline std::vector<dims> infer_shapes(const op_attrs& a, const shape_inputs& in) {
    const shape_rule rule = shape_rule_of(a.schema());
    if (rule == nullptr) throw op_error("sgmatch: " + a.where() + ": no shape rule");
    std::vector<dims> out = rule(in, a);
    for (std::size_t p = 0; p < out.size(); ++p)
        if (!sgmatch::detail::checked_product(out[p])) {
            std::string d;
            for (auto k : out[p]) d += (d.empty() ? "" : ", ") + std::to_string(k);
            throw size_overflow("sgmatch: " + a.where() + ": output " + std::to_string(p) + " of shape [" + d +
                                "] holds more elements than int64 counts (overflow)");
        }
    return out;
}

}  // namespace ops
SGMATCH_END_NAMESPACE
