// sgmatch/exec/kernels/elementwise.hpp - the element-wise ops' kernels: reference::unary and
// reference::binary, and oneDNN eltwise / binary primitives made from the ops' lowerings.
#pragma once

#include <cfloat>
#include <memory>
#include <vector>

#include "sgmatch/detail/config.hpp"
#include "sgmatch/exec/node_kernels.hpp"
#include "sgmatch/onednn/lowering/roles.hpp"
#include "sgmatch/onednn/op_kernels.hpp"
#include "sgmatch/ops/elementwise.hpp"
#include "sgmatch/pattern/tag.hpp"
#include "sgmatch/reference/kernels.hpp"
#include "sgmatch/reference/tensor_ops.hpp"

SGMATCH_BEGIN_NAMESPACE
namespace exec {
namespace kernels {

using uk = reference::unary_kind;
using bk = reference::binary_kind;

inline reference_fn unary(uk k, float alpha = 0, float beta = 0) {
    return [k, alpha, beta](const std::vector<const array*>& x) { return reference::unary(*x.at(0), k, alpha, beta); };
}
template <uk K>
reference_fn plain_unary(const node_context&) {
    return unary(K);
}

/// Clip: the bounds from the attributes (opset < 11) or inputs 1 and 2, each a one-value tensor,
/// constant or computed.
inline reference_fn clip(const node_context& c) {
    const float lo = static_cast<float>(c.a.f("min")), hi = static_cast<float>(c.a.f("max"));
    return [lo, hi, a = c.a](const std::vector<const array*>& x) {
        float b[2] = {lo, hi};
        for (std::size_t slot = 1; slot < x.size() && slot < 3; ++slot) {
            if (x[slot]->size() != 1)
                throw exec_error("sgmatch::exec::executor: " + a.where() + ": the bound on input " + std::to_string(slot) +
                                 " has " + std::to_string(x[slot]->size()) + " values, not 1");
            b[slot - 1] = x[slot]->data()[0];
        }
        return reference::unary(*x.at(0), uk::clip, b[0], b[1]);
    };
}

/// Sum, Mean, Max and Min of one or more inputs, with numpy broadcasting.
template <bk K, bool Mean = false>
reference_fn fold(const node_context&) {
    return [](const std::vector<const array*>& x) {
        array y = *x.at(0);
        for (std::size_t i = 1; i < x.size(); ++i) y = reference::binary(y, *x[i], K);
        if (Mean) y = y / static_cast<float>(x.size());
        return y;
    };
}

/// A oneDNN eltwise primitive with the post-ops the op lowers to (lowering<Tag>), or the
/// lowering's reason to decline the node.
template <class Tag>
onednn_choice onednn_eltwise(const node_context& c, bool) {
    try {
        return std::make_shared<onednn::eltwise_kernel>(onednn::lowering<Tag>::post_ops(c.a, ops::node_of<graph>(c.g, c.n)));
    } catch (const onednn::lowering_error& e) {
        return decline(e.what());
    }
}

template <bk K>
reference_fn binary(const node_context&) {
    return [](const std::vector<const array*>& x) { return reference::binary(*x.at(0), *x.at(1), K); };
}

/// A oneDNN binary primitive (the second operand broadcasts); declined when the first operand
/// is a constant or there are not two operands.
template <class Tag>
onednn_choice onednn_binary(const node_context& c, bool) {
    if (c.input_count() != 2) return decline(std::to_string(c.input_count()) + " operands (oneDNN's binary primitive takes two)");
    if (c.input_is_constant(0)) {
        // Add(b, x): the operands swapped, where the op allows it.
        if (op_tag_traits<Tag>::commutative && !c.input_is_constant(1))
            return std::make_shared<onednn::swapped_binary_kernel>(onednn::lowering<Tag>::alg);
        return decline("input 0 is a constant: the reference kernel computes it (the clean-up passes fold it)");
    }
    return std::make_shared<onednn::binary_kernel>(onednn::lowering<Tag>::alg);
}

/// One eltwise primitive with fixed parameters: Neg (linear: -1 x + 0) and Reciprocal (pow: 1 x^-1).
template <dnnl::algorithm Alg, int Alpha, int Beta>
onednn_choice onednn_linear_eltwise(const node_context& c, bool) {
    if (c.input_is_constant(0)) return decline("input 0 is a constant: the reference kernel computes it (the clean-up passes fold it)");
    return std::make_shared<onednn::eltwise_kernel>(
        std::vector<onednn::post_op>{onednn::post_op::eltwise(Alg, static_cast<float>(Alpha), static_cast<float>(Beta))});
}

/// x ^ c for a one-value constant c: eltwise pow (alpha x^beta); declined otherwise.
inline onednn_choice onednn_pow(const node_context& c, bool) {
    if (c.input_is_constant(0)) return decline("input 0 is a constant: the reference kernel computes it (the clean-up passes fold it)");
    const auto v = c.constant_view(1);
    const auto e = v ? v->scalar() : std::nullopt;
    if (!e) return decline("the exponent is not a one-value constant (oneDNN's pow eltwise takes a fixed exponent)");
    return std::make_shared<onednn::eltwise_kernel>(
        std::vector<onednn::post_op>{onednn::post_op::eltwise(dnnl::algorithm::eltwise_pow, 1.0f, static_cast<float>(*e))});
}

/// PReLU as oneDNN's prelu primitive (the slope broadcasts to the data); declined when the data
/// is a constant.
inline onednn_choice onednn_prelu(const node_context& c, bool) {
    if (c.input_is_constant(0)) return decline("input 0 is a constant: the reference kernel computes it (the clean-up passes fold it)");
    return std::make_shared<onednn::prelu_kernel>();
}

/// Sum or Mean as oneDNN's sum primitive (scales 1 or 1 / n); declined when the data is a
/// constant or the declared shapes differ (inputs that broadcast run on the reference kernel;
/// undeclared ones that turn out to broadcast fall back to it at run time).
template <bool Mean>
onednn_choice onednn_sum(const node_context& c, bool) {
    if (c.input_count() < 1) return decline("no inputs");
    if (c.input_is_constant(0)) return decline("input 0 is a constant: the reference kernel computes it (the clean-up passes fold it)");
    // oneDNN holds a memory descriptor (about a kilobyte) per source, several times over: past a
    // few hundred inputs the reference kernel's loop is the cheaper one (and oneDNN 2.6 fails to
    // run a sum of 100,000 after building it).
    if (c.input_count() > 256) return decline(std::to_string(c.input_count()) + " inputs: past 256, the reference kernel's loop is the cheaper one");
    const auto dims_of = [&](std::size_t i) {
        const auto t = c.input_type(i);
        return t && t->ranked() ? std::optional<std::vector<std::int64_t>>(t->dims) : std::nullopt;
    };
    const auto first = dims_of(0);
    for (std::size_t i = 1; i < c.input_count(); ++i) {
        const auto d = dims_of(i);
        if (first && d && *d != *first)
            return decline("input " + std::to_string(i) + " " + ops::to_string(*d) + " broadcasts to " + ops::to_string(*first) +
                           " (oneDNN's sum takes equal shapes)");
    }
    return std::make_shared<onednn::sum_kernel>(Mean);
}

template <> inline constexpr kernel_binding f32_kernels<ops::Relu>{plain_unary<uk::relu>, onednn_eltwise<ops::Relu>};
template <> inline constexpr kernel_binding f32_kernels<ops::Sigmoid>{plain_unary<uk::sigmoid>, onednn_eltwise<ops::Sigmoid>};
template <> inline constexpr kernel_binding f32_kernels<ops::Tanh>{plain_unary<uk::tanh>, onednn_eltwise<ops::Tanh>};
template <> inline constexpr kernel_binding f32_kernels<ops::HardSwish>{plain_unary<uk::hardswish>, onednn_eltwise<ops::HardSwish>};
template <> inline constexpr kernel_binding f32_kernels<ops::Mish>{plain_unary<uk::mish>, onednn_eltwise<ops::Mish>};
template <> inline constexpr kernel_binding f32_kernels<ops::Softplus>{plain_unary<uk::softplus>, onednn_eltwise<ops::Softplus>};
template <> inline constexpr kernel_binding f32_kernels<ops::Exp>{plain_unary<uk::exp>, onednn_eltwise<ops::Exp>};
template <> inline constexpr kernel_binding f32_kernels<ops::Log>{plain_unary<uk::log>, onednn_eltwise<ops::Log>};
template <> inline constexpr kernel_binding f32_kernels<ops::Sqrt>{plain_unary<uk::sqrt>, onednn_eltwise<ops::Sqrt>};
template <> inline constexpr kernel_binding f32_kernels<ops::Square>{plain_unary<uk::square>, onednn_eltwise<ops::Square>};
template <> inline constexpr kernel_binding f32_kernels<ops::Abs>{plain_unary<uk::abs>, onednn_eltwise<ops::Abs>};
template <> inline constexpr kernel_binding f32_kernels<ops::Round>{plain_unary<uk::round>, onednn_eltwise<ops::Round>};
template <> inline constexpr kernel_binding f32_kernels<ops::Erf>{plain_unary<uk::erf>, nullptr};
template <> inline constexpr kernel_binding f32_kernels<ops::Shrink>{[](const node_context& c) { return unary(uk::shrink, static_cast<float>(c.a.f("lambd")), static_cast<float>(c.a.f("bias"))); }, nullptr};
template <> inline constexpr kernel_binding f32_kernels<ops::Ceil>{plain_unary<uk::ceil>, nullptr};
template <> inline constexpr kernel_binding f32_kernels<ops::Floor>{plain_unary<uk::floor>, nullptr};
template <> inline constexpr kernel_binding f32_kernels<ops::Sign>{plain_unary<uk::sign>, nullptr};
template <> inline constexpr kernel_binding f32_kernels<ops::Sin>{plain_unary<uk::sin>, nullptr};
template <> inline constexpr kernel_binding f32_kernels<ops::Cos>{plain_unary<uk::cos>, nullptr};
template <> inline constexpr kernel_binding f32_kernels<ops::Tan>{plain_unary<uk::tan>, nullptr};
template <> inline constexpr kernel_binding f32_kernels<ops::Asin>{plain_unary<uk::asin>, nullptr};
template <> inline constexpr kernel_binding f32_kernels<ops::Acos>{plain_unary<uk::acos>, nullptr};
template <> inline constexpr kernel_binding f32_kernels<ops::Atan>{plain_unary<uk::atan>, nullptr};
template <> inline constexpr kernel_binding f32_kernels<ops::Sinh>{plain_unary<uk::sinh>, nullptr};
template <> inline constexpr kernel_binding f32_kernels<ops::Cosh>{plain_unary<uk::cosh>, nullptr};
template <> inline constexpr kernel_binding f32_kernels<ops::Asinh>{plain_unary<uk::asinh>, nullptr};
template <> inline constexpr kernel_binding f32_kernels<ops::Acosh>{plain_unary<uk::acosh>, nullptr};
template <> inline constexpr kernel_binding f32_kernels<ops::Atanh>{plain_unary<uk::atanh>, nullptr};
template <> inline constexpr kernel_binding f32_kernels<ops::Identity>{plain_unary<uk::identity>, nullptr};
template <> inline constexpr kernel_binding f32_kernels<ops::LeakyRelu>{[](const node_context& c) { return unary(uk::leaky_relu, static_cast<float>(c.a.f("alpha"))); },
     onednn_eltwise<ops::LeakyRelu>};
template <> inline constexpr kernel_binding f32_kernels<ops::Elu>{[](const node_context& c) { return unary(uk::elu, static_cast<float>(c.a.f("alpha"))); },
     onednn_eltwise<ops::Elu>};
template <> inline constexpr kernel_binding f32_kernels<ops::Swish>{[](const node_context& c) { return unary(uk::swish, static_cast<float>(c.a.f("alpha"))); },
     onednn_eltwise<ops::Swish>};
template <> inline constexpr kernel_binding f32_kernels<ops::HardSigmoid>{[](const node_context& c) {
         return unary(uk::hardsigmoid, static_cast<float>(c.a.f("alpha")), static_cast<float>(c.a.f("beta")));
     },
     onednn_eltwise<ops::HardSigmoid>};
template <> inline constexpr kernel_binding f32_kernels<ops::Gelu>{[](const node_context& c) { return unary(c.a.s("approximate") == "tanh" ? uk::gelu_tanh : uk::gelu_erf); },
     onednn_eltwise<ops::Gelu>};
template <> inline constexpr kernel_binding f32_kernels<ops::Clip>{clip, onednn_eltwise<ops::Clip>};
template <> inline constexpr kernel_binding f32_kernels<ops::Neg>{plain_unary<uk::neg>, onednn_linear_eltwise<dnnl::algorithm::eltwise_linear, -1, 0>};
template <> inline constexpr kernel_binding f32_kernels<ops::Reciprocal>{plain_unary<uk::reciprocal>, onednn_linear_eltwise<dnnl::algorithm::eltwise_pow, 1, -1>};
template <> inline constexpr kernel_binding f32_kernels<ops::Softsign>{plain_unary<uk::softsign>, nullptr};
template <> inline constexpr kernel_binding f32_kernels<ops::Selu>{[](const node_context& c) { return unary(uk::selu, static_cast<float>(c.a.f("alpha")), static_cast<float>(c.a.f("gamma"))); },
     nullptr};
template <> inline constexpr kernel_binding f32_kernels<ops::Celu>{[](const node_context& c) { return unary(uk::celu, static_cast<float>(c.a.f("alpha"))); }, nullptr};
template <> inline constexpr kernel_binding f32_kernels<ops::ThresholdedRelu>{[](const node_context& c) { return unary(uk::thresholded_relu, static_cast<float>(c.a.f("alpha"))); }, nullptr};
template <> inline constexpr kernel_binding f32_kernels<ops::PRelu>{[](const node_context&) -> reference_fn {
         return [](const std::vector<const array*>& x) { return reference::prelu(*x.at(0), *x.at(1)); };
     },
     onednn_prelu};
template <> inline constexpr kernel_binding f32_kernels<ops::Sum>{fold<bk::add>, onednn_sum<false>};
template <> inline constexpr kernel_binding f32_kernels<ops::Mean>{fold<bk::add, true>, onednn_sum<true>};
template <> inline constexpr kernel_binding f32_kernels<ops::Add>{binary<bk::add>, onednn_binary<ops::Add>};
template <> inline constexpr kernel_binding f32_kernels<ops::Sub>{binary<bk::sub>, onednn_binary<ops::Sub>};
template <> inline constexpr kernel_binding f32_kernels<ops::Mul>{binary<bk::mul>, onednn_binary<ops::Mul>};
template <> inline constexpr kernel_binding f32_kernels<ops::Div>{binary<bk::div>, onednn_binary<ops::Div>};
template <> inline constexpr kernel_binding f32_kernels<ops::Max>{fold<bk::max>, onednn_binary<ops::Max>};
template <> inline constexpr kernel_binding f32_kernels<ops::Min>{fold<bk::min>, onednn_binary<ops::Min>};
template <> inline constexpr kernel_binding f32_kernels<ops::Pow>{binary<bk::pow>, onednn_pow};

}  // namespace kernels
}  // namespace exec
SGMATCH_END_NAMESPACE
