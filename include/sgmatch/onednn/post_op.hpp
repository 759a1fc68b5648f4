// sgmatch/onednn/post_op.hpp - one operation a fused kernel applies to its main primitive's result
// (an eltwise function, a sum, a binary op, a depthwise conv), as data; and the shapes of its
// operands.
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <string>
#include <unordered_map>
#include <variant>
#include <vector>

#include <oneapi/dnnl/dnnl.hpp>

#include "sgmatch/detail/config.hpp"
#include "sgmatch/onednn/tensor.hpp"

SGMATCH_BEGIN_NAMESPACE
namespace onednn {

/// How a binary post-op's second operand broadcasts against the destination.
enum class broadcast { scalar, per_channel, full };

namespace detail {
struct eltwise_post_op {
    dnnl::algorithm alg = dnnl::algorithm::eltwise_relu;
    float alpha = 0.0f, beta = 0.0f;
};
/// Accumulate the kernel's runtime input `input` (same shape as the destination) into it.
struct sum_post_op {
    int input = 0;
};
/// The operand is the runtime input `input` (an index into the extra inputs of run()), or, with
/// input < 0, the constant `values`.
struct binary_post_op {
    dnnl::algorithm alg = dnnl::algorithm::binary_add;
    int input = -1;
    std::vector<float> values;
    broadcast bcast = broadcast::full;
};
/// A 3x3 depthwise convolution, pad 1, stride `stride` (1 or 2): weights [O, 1, 3, 3], bias O
/// values or none.
struct depthwise_post_op {
    std::vector<float> weights, bias;
    std::int64_t stride = 1;
};
}  // namespace detail

/// One operation a kernel applies to its main primitive's result, in order: an elementwise
/// function, the sum of a runtime input, a binary op with a runtime or constant operand, or a
/// 3x3 depthwise convolution (after a 1x1 one). A sum type: each kind holds only its own fields.
struct post_op {
    using eltwise_op = detail::eltwise_post_op;
    using sum_op = detail::sum_post_op;
    using binary_op = detail::binary_post_op;
    using depthwise_op = detail::depthwise_post_op;

    std::variant<eltwise_op, sum_op, binary_op, depthwise_op> op;

    static post_op eltwise(dnnl::algorithm a, float alpha = 0.0f, float beta = 0.0f) {
        return post_op{eltwise_op{a, alpha, beta}};
    }
    static post_op sum(int input) { return post_op{sum_op{input}}; }
    static post_op binary_input(dnnl::algorithm a, int input, broadcast b) {
        return post_op{binary_op{a, input, {}, b}};
    }
    static post_op binary_constant(dnnl::algorithm a, std::vector<float> v, broadcast b) {
        return post_op{binary_op{a, -1, std::move(v), b}};
    }
    static post_op depthwise(std::vector<float> weights, std::vector<float> bias, std::int64_t stride) {
        return post_op{depthwise_op{std::move(weights), std::move(bias), stride}};
    }

    /// The kind's fields, or nullptr for another kind: `if (auto* e = p.as<post_op::eltwise_op>())`.
    template <class Kind>
    const Kind* as() const { return std::get_if<Kind>(&op); }
    template <class Kind>
    Kind* as() { return std::get_if<Kind>(&op); }
    template <class Kind>
    bool is() const { return std::holds_alternative<Kind>(op); }
    /// The index of the runtime input a sum or binary op reads; -1 for none.
    int input() const {
        if (auto* s = as<sum_op>()) return s->input;
        if (auto* b = as<binary_op>()) return b->input;
        return -1;
    }
};

/// A short name for verbose output and errors ("relu", "sum", "binary_add", ...).
inline std::string describe(const post_op& p) {
    using a = dnnl::algorithm;
    if (p.is<post_op::sum_op>()) return "sum";
    if (auto* d = p.as<post_op::depthwise_op>()) return d->stride == 2 ? "depthwise_s2" : "depthwise";
    static const std::unordered_map<int, const char*> names = {
        {static_cast<int>(a::eltwise_relu), "relu"},         {static_cast<int>(a::eltwise_tanh), "tanh"},
        {static_cast<int>(a::eltwise_elu), "elu"},           {static_cast<int>(a::eltwise_square), "square"},
        {static_cast<int>(a::eltwise_abs), "abs"},           {static_cast<int>(a::eltwise_sqrt), "sqrt"},
        {static_cast<int>(a::eltwise_linear), "linear"},     {static_cast<int>(a::eltwise_soft_relu), "soft_relu"},
        {static_cast<int>(a::eltwise_logistic), "logistic"}, {static_cast<int>(a::eltwise_exp), "exp"},
        {static_cast<int>(a::eltwise_gelu_tanh), "gelu_tanh"}, {static_cast<int>(a::eltwise_gelu_erf), "gelu_erf"},
        {static_cast<int>(a::eltwise_swish), "swish"},       {static_cast<int>(a::eltwise_log), "log"},
        {static_cast<int>(a::eltwise_clip_v2), "clip"},      {static_cast<int>(a::eltwise_round), "round"},
        {static_cast<int>(a::eltwise_mish), "mish"},         {static_cast<int>(a::eltwise_hardswish), "hardswish"},
        {static_cast<int>(a::binary_add), "binary_add"},     {static_cast<int>(a::binary_sub), "binary_sub"},
        {static_cast<int>(a::binary_mul), "binary_mul"},     {static_cast<int>(a::binary_div), "binary_div"},
        {static_cast<int>(a::binary_max), "binary_max"},     {static_cast<int>(a::binary_min), "binary_min"},
    };
    auto* e = p.as<post_op::eltwise_op>();
    auto it = names.find(static_cast<int>(e != nullptr ? e->alg : p.as<post_op::binary_op>()->alg));
    return it == names.end() ? "post_op" : it->second;
}

namespace detail {

/// How many runtime operands a post-op list reads (1 + the largest input index).
inline std::size_t extra_inputs(const std::vector<post_op>& ops) {
    std::size_t n = 0;
    for (const auto& p : ops)
        if (p.input() >= 0) n = std::max(n, static_cast<std::size_t>(p.input()) + 1);
    return n;
}

/// The shape of a binary operand against a destination of shape dst; per_channel broadcasts
/// along `axis` (1 for convolutions, the last axis for matmuls).
inline dims operand_dims(broadcast b, const dims& dst, std::size_t axis = 1) {
    dims d(dst.size(), 1);
    if (b == broadcast::full) return dst;
    if (b == broadcast::per_channel && axis < dst.size()) d[axis] = dst[axis];
    return d;
}
/// The shape of a sum's or a binary op's operand against a destination of shape dst.
inline dims operand_dims(const post_op& p, const dims& dst, std::size_t axis = 1) {
    auto* b = p.as<post_op::binary_op>();
    return b != nullptr ? operand_dims(b->bcast, dst, axis) : dst;
}

}  // namespace detail
}  // namespace onednn
SGMATCH_END_NAMESPACE
