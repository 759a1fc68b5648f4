// sgmatch/onednn/lowering/roles.hpp - what each op tag becomes in a fused oneDNN kernel.
//
// lowering<Tag> says the role of an op (the main conv, a BatchNorm to fold, an eltwise or
// binary post-op). The standard vocabulary's tags are specialized here (the vocabulary itself
// knows nothing of oneDNN); specialize lowering<YourTag> for your own ops. An eltwise lowering's
// post_ops(a, n) reads the node's attributes through ops::op_attrs (checked against the op's
// description, with its defaults) and its constant inputs through n. For an op with no
// description (ops/table.hpp) `a` has no attributes: read them from n.attr(key).
#pragma once

#include <stdexcept>
#include <string>
#include <type_traits>
#include <vector>

#include <oneapi/dnnl/dnnl.hpp>

#include "sgmatch/detail/config.hpp"
#include "sgmatch/onednn/post_ops.hpp"
#include "sgmatch/ops/attrs.hpp"
#include "sgmatch/pattern/vocabulary.hpp"

SGMATCH_BEGIN_NAMESPACE
namespace onednn {

enum class lowering_role { none, conv, conv_transpose, matmul, batch_norm, eltwise, binary, identity, composite };

/// Raised by a lowering that cannot take a node; lower_match turns it into a decline reason.
struct lowering_error : std::runtime_error {
    using std::runtime_error::runtime_error;
};

/// The role of Tag in a fused kernel: the oneDNN layer's facet of the op's entry (ops/schema.hpp).
/// Not specialized: the op cannot lower.
///
/// Minimal complete definition: `role`; with the eltwise role, `static std::vector<post_op>
/// post_ops(const ops::op_attrs&, const ops::node_source&)` (throwing lowering_error, with the
/// reason, for a node it cannot take); with the binary role, `static constexpr dnnl::algorithm
/// alg`. Checked by one static_assert where the backend reads the lowerings (table.hpp).
/// Optional: `keeps_layout` (default false), true for an op that a conv's output may pass
/// through in the blocked layout the conv wrote (layout_plan.hpp).
/// Laws (tested, not checkable at compile time): the post-ops compute the op on every node they
/// accept, on f32 values (the differential tests draw the op through its testing::generator<Tag>
/// and compare with its reference kernel); an op that keeps the layout is element-wise. The lists
/// built from these (lists.hpp: the post-op patterns, the ops that keep a layout) are derived
/// from the specializations over ops::vocabulary, never written out.
template <class Tag>
struct lowering {
    static constexpr lowering_role role = lowering_role::none;
};

template <class Tag>
constexpr bool lowerable_v = lowering<Tag>::role != lowering_role::none;

namespace detail {
template <class L, class = void>
struct keeps_layout_of {
    static constexpr bool value = false;
};
template <class L>
struct keeps_layout_of<L, std::void_t<decltype(L::keeps_layout)>> {
    static constexpr bool value = L::keeps_layout;
};
}  // namespace detail

/// Whether a conv's blocked output may pass through Tag and keep its layout.
template <class Tag>
constexpr bool keeps_layout_v = detail::keeps_layout_of<lowering<Tag>>::value;

namespace detail {

template <dnnl::algorithm A>
struct simple_eltwise {
    static constexpr lowering_role role = lowering_role::eltwise;
    static std::vector<post_op> post_ops(const ops::op_attrs&, const ops::node_source&) { return {post_op::eltwise(A)}; }
};

template <dnnl::algorithm A>
struct binary_op {
    static constexpr lowering_role role = lowering_role::binary;
    static constexpr dnnl::algorithm alg = A;
};

}  // namespace detail

template <>
struct lowering<ops::Conv> {
    static constexpr lowering_role role = lowering_role::conv;
};
/// ConvTranspose: a fused_conv with a transposed spec (oneDNN's deconvolution).
template <>
struct lowering<ops::ConvTranspose> {
    static constexpr lowering_role role = lowering_role::conv_transpose;
};
/// MatMul and Gemm / FullyConnected with constant weights: a fused_matmul.
template <>
struct lowering<ops::MatMul> {
    static constexpr lowering_role role = lowering_role::matmul;
};
template <>
struct lowering<ops::Gemm> {
    static constexpr lowering_role role = lowering_role::matmul;
};
template <>
struct lowering<ops::BatchNorm> {
    static constexpr lowering_role role = lowering_role::batch_norm;
    static constexpr bool keeps_layout = true;
};
template <>
struct lowering<ops::Identity> {
    static constexpr lowering_role role = lowering_role::identity;
    static constexpr bool keeps_layout = true;
};

template <>
struct lowering<ops::Relu> : detail::simple_eltwise<dnnl::algorithm::eltwise_relu> {
    static constexpr bool keeps_layout = true;
};
template <>
struct lowering<ops::Sigmoid> : detail::simple_eltwise<dnnl::algorithm::eltwise_logistic> {
    static constexpr bool keeps_layout = true;
};
template <>
struct lowering<ops::Tanh> : detail::simple_eltwise<dnnl::algorithm::eltwise_tanh> {
    static constexpr bool keeps_layout = true;
};
template <>
struct lowering<ops::HardSwish> : detail::simple_eltwise<dnnl::algorithm::eltwise_hardswish> {
    static constexpr bool keeps_layout = true;
};
template <>
struct lowering<ops::Mish> : detail::simple_eltwise<dnnl::algorithm::eltwise_mish> {};
template <>
struct lowering<ops::Softplus> : detail::simple_eltwise<dnnl::algorithm::eltwise_soft_relu> {};
template <>
struct lowering<ops::Exp> : detail::simple_eltwise<dnnl::algorithm::eltwise_exp> {};
template <>
struct lowering<ops::Log> : detail::simple_eltwise<dnnl::algorithm::eltwise_log> {};
template <>
struct lowering<ops::Sqrt> : detail::simple_eltwise<dnnl::algorithm::eltwise_sqrt> {};
template <>
struct lowering<ops::Square> : detail::simple_eltwise<dnnl::algorithm::eltwise_square> {};
template <>
struct lowering<ops::Abs> : detail::simple_eltwise<dnnl::algorithm::eltwise_abs> {};
template <>
struct lowering<ops::Round> : detail::simple_eltwise<dnnl::algorithm::eltwise_round> {};

template <>
struct lowering<ops::LeakyRelu> {
    static constexpr lowering_role role = lowering_role::eltwise;
    static constexpr bool keeps_layout = true;
    static std::vector<post_op> post_ops(const ops::op_attrs& a, const ops::node_source&) {
        return {post_op::eltwise(dnnl::algorithm::eltwise_relu, a.f("alpha"))};
    }
};
template <>
struct lowering<ops::Elu> {
    static constexpr lowering_role role = lowering_role::eltwise;
    static constexpr bool keeps_layout = true;
    static std::vector<post_op> post_ops(const ops::op_attrs& a, const ops::node_source&) {
        return {post_op::eltwise(dnnl::algorithm::eltwise_elu, a.f("alpha"))};
    }
};
/// ONNX Clip: bounds as attributes (opset < 11) or as constant inputs 1 and 2 (opset >= 11).
template <>
struct lowering<ops::Clip> {
    static constexpr lowering_role role = lowering_role::eltwise;
    static constexpr bool keeps_layout = true;
    static std::vector<post_op> post_ops(const ops::op_attrs& a, const ops::node_source& n) {
        float lo = static_cast<float>(a.f("min")), hi = static_cast<float>(a.f("max"));
        for (std::size_t slot = 1; slot < n.input_count() && slot < 3; ++slot) {
            auto v = n.scalar_input(slot);
            if (!v) throw lowering_error("Clip bound on input " + std::to_string(slot) + " is not a scalar constant");
            (slot == 1 ? lo : hi) = static_cast<float>(*v);
        }
        return {post_op::eltwise(dnnl::algorithm::eltwise_clip_v2, lo, hi)};
    }
};
/// Gelu: approximate="tanh" gives the tanh form, anything else the erf form.
template <>
struct lowering<ops::Gelu> {
    static constexpr lowering_role role = lowering_role::eltwise;
    static std::vector<post_op> post_ops(const ops::op_attrs& a, const ops::node_source&) {
        const bool tanh_form = a.s("approximate") == "tanh";
        return {post_op::eltwise(tanh_form ? dnnl::algorithm::eltwise_gelu_tanh : dnnl::algorithm::eltwise_gelu_erf)};
    }
};
/// Swish / SiLU: x * sigmoid(alpha x), alpha 1 unless given.
template <>
struct lowering<ops::Swish> {
    static constexpr lowering_role role = lowering_role::eltwise;
    static std::vector<post_op> post_ops(const ops::op_attrs& a, const ops::node_source&) {
        return {post_op::eltwise(dnnl::algorithm::eltwise_swish, a.f("alpha"))};
    }
};
/// HardSigmoid: oneDNN 2.6 has no such eltwise; linear(alpha, beta) then clip to [0, 1].
template <>
struct lowering<ops::HardSigmoid> {
    static constexpr lowering_role role = lowering_role::eltwise;
    static constexpr bool keeps_layout = true;
    static std::vector<post_op> post_ops(const ops::op_attrs& a, const ops::node_source&) {
        return {post_op::eltwise(dnnl::algorithm::eltwise_linear, a.f("alpha"),
                                 a.f("beta")),
                post_op::eltwise(dnnl::algorithm::eltwise_clip_v2, 0.0f, 1.0f)};
    }
};

/// Sum (any number of inputs) is no post-op; like Add, it lets a conv's blocked output through
/// for the layout plan (its oneDNN kernel reads and writes that layout).
template <>
struct lowering<ops::Sum> {
    static constexpr lowering_role role = lowering_role::none;
    static constexpr bool keeps_layout = true;
};

template <>
struct lowering<ops::Add> : detail::binary_op<dnnl::algorithm::binary_add> {
    static constexpr bool keeps_layout = true;
};
template <>
struct lowering<ops::Sub> : detail::binary_op<dnnl::algorithm::binary_sub> {};
template <>
struct lowering<ops::Mul> : detail::binary_op<dnnl::algorithm::binary_mul> {
    static constexpr bool keeps_layout = true;
};
template <>
struct lowering<ops::Div> : detail::binary_op<dnnl::algorithm::binary_div> {};
template <>
struct lowering<ops::Max> : detail::binary_op<dnnl::algorithm::binary_max> {};
template <>
struct lowering<ops::Min> : detail::binary_op<dnnl::algorithm::binary_min> {};

}  // namespace onednn
SGMATCH_END_NAMESPACE
