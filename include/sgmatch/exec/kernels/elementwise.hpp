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

/// A oneDNN eltwise primitive with the post-ops the op lowers to (lowering<Tag>), or null when
/// the lowering declines the node.
template <class Tag>
std::shared_ptr<const onednn::op_kernel> onednn_eltwise(const node_context& c, bool) {
    try {
        return std::make_shared<onednn::eltwise_kernel>(onednn::lowering<Tag>::post_ops(c.a, ops::node_of<graph>(c.g, c.n)));
    } catch (const onednn::lowering_error&) {
        return nullptr;
    }
}

template <bk K>
reference_fn binary(const node_context&) {
    return [](const std::vector<const array*>& x) { return reference::binary(*x.at(0), *x.at(1), K); };
}

/// A oneDNN binary primitive (the second operand broadcasts), or null when the first operand
/// is a constant or there are not two operands.
template <class Tag>
std::shared_ptr<const onednn::op_kernel> onednn_binary(const node_context& c, bool) {
    if (c.input_count() != 2 || c.input_is_constant(0)) return nullptr;
    return std::make_shared<onednn::binary_kernel>(onednn::lowering<Tag>::alg);
}

/// One eltwise primitive with fixed parameters: Neg (linear: -1 x + 0) and Reciprocal (pow: 1 x^-1).
template <dnnl::algorithm Alg, int Alpha, int Beta>
std::shared_ptr<const onednn::op_kernel> onednn_linear_eltwise(const node_context& c, bool) {
    if (c.input_is_constant(0)) return nullptr;
    return std::make_shared<onednn::eltwise_kernel>(
        std::vector<onednn::post_op>{onednn::post_op::eltwise(Alg, static_cast<float>(Alpha), static_cast<float>(Beta))});
}

/// x ^ c for a one-value constant c: eltwise pow (alpha x^beta); null otherwise.
inline std::shared_ptr<const onednn::op_kernel> onednn_pow(const node_context& c, bool) {
    if (c.input_is_constant(0)) return nullptr;
    const auto v = c.constant_view(1);
    const auto e = v ? v->scalar() : std::nullopt;
    if (!e) return nullptr;
    return std::make_shared<onednn::eltwise_kernel>(
        std::vector<onednn::post_op>{onednn::post_op::eltwise(dnnl::algorithm::eltwise_pow, 1.0f, static_cast<float>(*e))});
}

/// PReLU as oneDNN's prelu primitive (the slope broadcasts to the data), or null when the data
/// is a constant.
inline std::shared_ptr<const onednn::op_kernel> onednn_prelu(const node_context& c, bool) {
    if (c.input_is_constant(0)) return nullptr;
    return std::make_shared<onednn::prelu_kernel>();
}

/// Sum or Mean as oneDNN's sum primitive (scales 1 or 1 / n), or null when the data is a
/// constant or the declared shapes differ (inputs that broadcast run on the reference kernel;
/// undeclared ones that turn out to broadcast fall back to it at run time).
template <bool Mean>
std::shared_ptr<const onednn::op_kernel> onednn_sum(const node_context& c, bool) {
    if (c.input_count() < 1 || c.input_is_constant(0)) return nullptr;
    // oneDNN holds a memory descriptor (about a kilobyte) per source, several times over: past a
    // few hundred inputs the reference kernel's loop is the cheaper one (and oneDNN 2.6 fails to
    // run a sum of 100,000 after building it).
    if (c.input_count() > 256) return nullptr;
    const auto dims_of = [&](std::size_t i) {
        const auto t = c.input_type(i);
        return t && t->ranked() ? std::optional<std::vector<std::int64_t>>(t->dims) : std::nullopt;
    };
    const auto first = dims_of(0);
    for (std::size_t i = 1; i < c.input_count(); ++i) {
        const auto d = dims_of(i);
        if (first && d && *d != *first) return nullptr;
    }
    return std::make_shared<onednn::sum_kernel>(Mean);
}

inline const kernel_binding elementwise[] = {
    {&ops::schemas::relu, plain_unary<uk::relu>, onednn_eltwise<ops::Relu>},
    {&ops::schemas::sigmoid, plain_unary<uk::sigmoid>, onednn_eltwise<ops::Sigmoid>},
    {&ops::schemas::tanh, plain_unary<uk::tanh>, onednn_eltwise<ops::Tanh>},
    {&ops::schemas::hard_swish, plain_unary<uk::hardswish>, onednn_eltwise<ops::HardSwish>},
    {&ops::schemas::mish, plain_unary<uk::mish>, onednn_eltwise<ops::Mish>},
    {&ops::schemas::softplus, plain_unary<uk::softplus>, onednn_eltwise<ops::Softplus>},
    {&ops::schemas::exp, plain_unary<uk::exp>, onednn_eltwise<ops::Exp>},
    {&ops::schemas::log, plain_unary<uk::log>, onednn_eltwise<ops::Log>},
    {&ops::schemas::sqrt, plain_unary<uk::sqrt>, onednn_eltwise<ops::Sqrt>},
    {&ops::schemas::square, plain_unary<uk::square>, onednn_eltwise<ops::Square>},
    {&ops::schemas::abs, plain_unary<uk::abs>, onednn_eltwise<ops::Abs>},
    {&ops::schemas::round, plain_unary<uk::round>, onednn_eltwise<ops::Round>},
    {&ops::schemas::erf, plain_unary<uk::erf>, nullptr},
    {&ops::schemas::shrink,
     [](const node_context& c) { return unary(uk::shrink, static_cast<float>(c.a.f("lambd")), static_cast<float>(c.a.f("bias"))); }, nullptr},
    {&ops::schemas::ceil, plain_unary<uk::ceil>, nullptr},
    {&ops::schemas::floor, plain_unary<uk::floor>, nullptr},
    {&ops::schemas::sign, plain_unary<uk::sign>, nullptr},
    {&ops::schemas::sin, plain_unary<uk::sin>, nullptr},
    {&ops::schemas::cos, plain_unary<uk::cos>, nullptr},
    {&ops::schemas::tan, plain_unary<uk::tan>, nullptr},
    {&ops::schemas::asin, plain_unary<uk::asin>, nullptr},
    {&ops::schemas::acos, plain_unary<uk::acos>, nullptr},
    {&ops::schemas::atan, plain_unary<uk::atan>, nullptr},
    {&ops::schemas::sinh, plain_unary<uk::sinh>, nullptr},
    {&ops::schemas::cosh, plain_unary<uk::cosh>, nullptr},
    {&ops::schemas::asinh, plain_unary<uk::asinh>, nullptr},
    {&ops::schemas::acosh, plain_unary<uk::acosh>, nullptr},
    {&ops::schemas::atanh, plain_unary<uk::atanh>, nullptr},
    {&ops::schemas::identity, plain_unary<uk::identity>, nullptr},
    {&ops::schemas::leaky_relu, [](const node_context& c) { return unary(uk::leaky_relu, static_cast<float>(c.a.f("alpha"))); },
     onednn_eltwise<ops::LeakyRelu>},
    {&ops::schemas::elu, [](const node_context& c) { return unary(uk::elu, static_cast<float>(c.a.f("alpha"))); },
     onednn_eltwise<ops::Elu>},
    {&ops::schemas::swish, [](const node_context& c) { return unary(uk::swish, static_cast<float>(c.a.f("alpha"))); },
     onednn_eltwise<ops::Swish>},
    {&ops::schemas::hard_sigmoid,
     [](const node_context& c) {
         return unary(uk::hardsigmoid, static_cast<float>(c.a.f("alpha")), static_cast<float>(c.a.f("beta")));
     },
     onednn_eltwise<ops::HardSigmoid>},
    {&ops::schemas::gelu, [](const node_context& c) { return unary(c.a.s("approximate") == "tanh" ? uk::gelu_tanh : uk::gelu_erf); },
     onednn_eltwise<ops::Gelu>},
    {&ops::schemas::clip, clip, onednn_eltwise<ops::Clip>},
    {&ops::schemas::neg, plain_unary<uk::neg>, onednn_linear_eltwise<dnnl::algorithm::eltwise_linear, -1, 0>},
    {&ops::schemas::reciprocal, plain_unary<uk::reciprocal>, onednn_linear_eltwise<dnnl::algorithm::eltwise_pow, 1, -1>},
    {&ops::schemas::softsign, plain_unary<uk::softsign>, nullptr},
    {&ops::schemas::selu,
     [](const node_context& c) { return unary(uk::selu, static_cast<float>(c.a.f("alpha")), static_cast<float>(c.a.f("gamma"))); },
     nullptr},
    {&ops::schemas::celu, [](const node_context& c) { return unary(uk::celu, static_cast<float>(c.a.f("alpha"))); }, nullptr},
    {&ops::schemas::thresholded_relu,
     [](const node_context& c) { return unary(uk::thresholded_relu, static_cast<float>(c.a.f("alpha"))); }, nullptr},
    {&ops::schemas::prelu,
     [](const node_context&) -> reference_fn {
         return [](const std::vector<const array*>& x) { return reference::prelu(*x.at(0), *x.at(1)); };
     },
     onednn_prelu},
    {&ops::schemas::sum, fold<bk::add>, onednn_sum<false>},
    {&ops::schemas::mean, fold<bk::add, true>, onednn_sum<true>},
    {&ops::schemas::add, binary<bk::add>, onednn_binary<ops::Add>},
    {&ops::schemas::sub, binary<bk::sub>, onednn_binary<ops::Sub>},
    {&ops::schemas::mul, binary<bk::mul>, onednn_binary<ops::Mul>},
    {&ops::schemas::div, binary<bk::div>, onednn_binary<ops::Div>},
    {&ops::schemas::max, fold<bk::max>, onednn_binary<ops::Max>},
    {&ops::schemas::min, fold<bk::min>, onednn_binary<ops::Min>},
    {&ops::schemas::pow, binary<bk::pow>, onednn_pow},
};

}  // namespace kernels
}  // namespace exec
SGMATCH_END_NAMESPACE
