// sgmatch/ops/table.hpp - every op description of the standard vocabulary, looked up by any
// of the op's names.
//
//   if (const ops::op_schema* s = ops::find_schema(g.op_name(n))) ...
//
// An op's description lives in its family's header and has one line in `all_schemas` below; what
// else adding an op takes, in every layer: docs/design.md, "Adding an op".
#pragma once

#include <cstddef>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "sgmatch/detail/config.hpp"
#include "sgmatch/ops/attrs.hpp"
#include "sgmatch/ops/control.hpp"
#include "sgmatch/ops/einsum.hpp"
#include "sgmatch/ops/elementwise.hpp"
#include "sgmatch/ops/losses.hpp"
#include "sgmatch/ops/nn.hpp"
#include "sgmatch/ops/optional.hpp"
#include "sgmatch/ops/positions.hpp"
#include "sgmatch/ops/recurrent.hpp"
#include "sgmatch/ops/reduce.hpp"
#include "sgmatch/ops/schema.hpp"
#include "sgmatch/ops/sequence.hpp"
#include "sgmatch/ops/signal.hpp"
#include "sgmatch/ops/tensor.hpp"
#include "sgmatch/ops/text.hpp"
#include "sgmatch/ops/vision.hpp"

SGMATCH_BEGIN_NAMESPACE
namespace ops {

/// Every description, in no particular order.
inline const std::vector<const op_schema*>& all_schemas() {
    using namespace schemas;
    static const std::vector<const op_schema*> all{
        &relu, &sigmoid, &tanh, &hard_swish, &mish, &softplus, &exp, &log, &sqrt, &square, &abs, &round, &erf, &identity,
        &leaky_relu, &elu, &swish, &hard_sigmoid, &gelu, &clip, &add, &sub, &mul, &div, &pow, &max, &min,
        &conv, &conv_transpose, &max_pool, &average_pool, &global_average_pool, &batch_norm, &layer_norm, &lrn, &gemm,
        &matmul, &softmax, &concat, &reshape, &flatten, &transpose, &pad, &constant,
        &neg, &reciprocal, &softsign, &selu, &celu, &thresholded_relu, &prelu, &sum, &mean,
        &reduce_mean, &reduce_sum, &reduce_max, &reduce_min, &reduce_prod, &reduce_sum_square, &reduce_l1, &reduce_l2,
        &reduce_log_sum, &reduce_log_sum_exp, &log_softmax, &global_max_pool,
        &unsqueeze, &squeeze, &slice, &resize, &gather, &expand, &dropout, &cast,
        &split, &shape, &size, &constant_of_shape, &where, &equal, &less, &greater, &less_or_equal, &greater_or_equal,
        &logical_and, &logical_or, &logical_xor, &logical_not, &mod, &tile, &trilu, &range, &cumsum, &arg_max, &arg_min, &hardmax, &one_hot,
        &ceil, &floor, &sign, &sin, &cos, &tan, &asin, &acos, &atan, &sinh, &cosh, &asinh, &acosh, &atanh, &is_nan, &is_inf,
        &gather_elements, &scatter_elements, &gather_nd, &scatter_nd, &eye_like, &non_zero, &compress, &unique, &reverse_sequence, &hann_window, &hamming_window, &blackman_window, &det, &mean_variance_norm, &depth_to_space, &space_to_depth, &cast_like, &shrink,
        &top_k, &einsum, &quantize_linear, &dequantize_linear, &matmul_integer, &qlinear_matmul, &dynamic_quantize_linear, &conv_integer, &qlinear_conv, &nll_loss, &softmax_cross_entropy, &instance_norm, &rnn, &gru, &lstm,
        &sequence_empty, &sequence_construct, &sequence_insert, &sequence_at, &sequence_erase, &sequence_length, &split_to_sequence, &concat_from_sequence,
        &non_max_suppression, &roi_align, &grid_sample, &max_unpool, &if_op, &loop, &scan, &sequence_map, &bit_shift, &dft, &stft, &mel_weight_matrix, &tfidf_vectorizer,
        &optional, &optional_has_element, &optional_get_element};
    return all;
}

/// The description of the op named `op` (any alias), or null.
inline const op_schema* find_schema(std::string_view op) {
    static const std::unordered_map<std::string_view, const op_schema*> by_name = [] {
        std::unordered_map<std::string_view, const op_schema*> m;
        for (const op_schema* s : all_schemas())
            for (std::size_t i = 0; i < s->name_count; ++i) m.emplace(s->names[i], s);
        return m;
    }();
    const auto it = by_name.find(op);
    return it == by_name.end() ? nullptr : it->second;
}

/// The description of the op of Tag.
template <class Tag>
const op_schema& schema_of() {
    const op_schema* s = find_schema(Tag::names[0]);
    if (s == nullptr) throw op_error("sgmatch: op " + std::string(Tag::names[0]) + " has no description");
    return *s;
}

/// Every attribute name some description knows, each once (what a copy of a node reads from
/// an adapter that cannot list attributes).
inline const std::vector<std::string_view>& all_attribute_names() {
    static const std::vector<std::string_view> names = [] {
        std::vector<std::string_view> v;
        for (const op_schema* s : all_schemas())
            for (std::size_t i = 0; i < s->attr_count; ++i) {
                bool seen = false;
                for (auto n : v) seen = seen || n == s->attrs[i].name;
                if (!seen) v.push_back(s->attrs[i].name);
            }
        return v;
    }();
    return names;
}

/// The element type of a node's outputs from its inputs' types (unknown where an input's type
/// is, or for an element type code sgmatch has no type for).
inline dtype output_type(const op_attrs& a, const std::vector<dtype>& inputs, std::size_t port = 0) {
    const type_rule& r = a.schema().types;
    if (port == 1 && r.second != dtype::unknown) return r.second;
    if (port > 0 && r.rest != dtype::unknown) return r.rest;
    switch (r.how) {
        case type_rule::from::fixed: return r.fixed;
        case type_rule::from::input: return r.input < inputs.size() ? inputs[r.input] : dtype::unknown;
        case type_rule::from::attribute:
            if (r.attr.empty()) return dtype::unknown;
            if (!a.has(r.attr)) {
                const attr_spec* spec = a.schema().attr(r.attr);
                if (spec == nullptr) return dtype::unknown;
                // The input's type where the attribute may be absent (EyeLike's dtype).
                if (spec->def.how == attr_default::from::absent) return r.input < inputs.size() ? inputs[r.input] : dtype::unknown;
            }
            return dtype_of_onnx(a.i(r.attr));
    }
    return dtype::unknown;
}

}  // namespace ops
SGMATCH_END_NAMESPACE
