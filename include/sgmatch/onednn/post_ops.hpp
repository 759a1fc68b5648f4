// sgmatch/onednn/post_ops.hpp - the post-op chain of a fused kernel, as data.
//
// A fused kernel = one main primitive (conv, ...) + a list of post-ops applied to its output in
// pattern order. Lowering (lowering.hpp) fills the list from the matched nodes; the kernel turns
// it into dnnl::post_ops when it builds its primitive for given shapes.
#pragma once

#include <cstdint>
#include <string>
#include <unordered_map>
#include <vector>

#include <oneapi/dnnl/dnnl.hpp>

#include "sgmatch/detail/config.hpp"
#include "sgmatch/onednn/compat.hpp"
#include "sgmatch/onednn/tensor.hpp"

SGMATCH_BEGIN_NAMESPACE
namespace onednn {

/// How a binary post-op's second operand broadcasts against the destination.
enum class broadcast { scalar, per_channel, full };

struct post_op {
    enum class kind { eltwise, sum, binary };
    kind k = kind::eltwise;
    dnnl::algorithm alg = dnnl::algorithm::eltwise_relu;  // eltwise or binary algorithm
    float alpha = 0.0f, beta = 0.0f;                      // eltwise parameters
    // sum and binary: the operand is the kernel's runtime input `input` (index into the extra
    // inputs of run()), or, for binary with input < 0, the constant `values`.
    int input = -1;
    std::vector<float> values;
    broadcast bcast = broadcast::full;
    bool swap = false;  // binary only: the operand is the left side (c - y, c / y); rejected for now

    static post_op eltwise(dnnl::algorithm a, float alpha = 0.0f, float beta = 0.0f) {
        post_op p;
        p.k = kind::eltwise;
        p.alg = a;
        p.alpha = alpha;
        p.beta = beta;
        return p;
    }
    /// Accumulate runtime input `input` (same shape as the destination) into it.
    static post_op sum(int input) {
        post_op p;
        p.k = kind::sum;
        p.input = input;
        return p;
    }
    static post_op binary_input(dnnl::algorithm a, int input, broadcast b) {
        post_op p;
        p.k = kind::binary;
        p.alg = a;
        p.input = input;
        p.bcast = b;
        return p;
    }
    static post_op binary_constant(dnnl::algorithm a, std::vector<float> v, broadcast b) {
        post_op p;
        p.k = kind::binary;
        p.alg = a;
        p.values = std::move(v);
        p.bcast = b;
        return p;
    }
};

/// A short name for verbose output and errors ("relu", "sum", "binary_add", ...).
inline std::string describe(const post_op& p) {
    using a = dnnl::algorithm;
    if (p.k == post_op::kind::sum) return "sum";
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
    auto it = names.find(static_cast<int>(p.alg));
    return it == names.end() ? "post_op" : it->second;
}

namespace detail {

/// The shape of a binary operand against a destination of shape dst.
inline dims operand_dims(broadcast b, const dims& dst) {
    dims d(dst.size(), 1);
    if (b == broadcast::full) return dst;
    if (b == broadcast::per_channel && dst.size() > 1) d[1] = dst[1];
    return d;
}

/// dnnl::post_ops for `ops` against a destination of shape dst.
inline dnnl::post_ops make_post_ops(const std::vector<post_op>& ops, const dims& dst) {
    dnnl::post_ops po;
    for (const auto& p : ops) {
        switch (p.k) {
            case post_op::kind::eltwise: compat::append_eltwise(po, p.alg, p.alpha, p.beta); break;
            case post_op::kind::sum: po.append_sum(1.0f); break;
            case post_op::kind::binary: po.append_binary(p.alg, plain_desc(operand_dims(p.bcast, dst))); break;
        }
    }
    return po;
}

}  // namespace detail
}  // namespace onednn
SGMATCH_END_NAMESPACE
