// sgmatch/exec/kernels/nn.hpp - the network layers' kernels: convolutions, pooling,
// normalizations (LpNormalization's oneDNN kernel among them), Gemm / MatMul and Softmax.
#pragma once

#include <memory>
#include <utility>
#include <vector>

#include "sgmatch/detail/config.hpp"
#include "sgmatch/exec/node_kernels.hpp"
#include "sgmatch/onednn/fused_conv.hpp"
#include "sgmatch/onednn/lowering.hpp"
#include "sgmatch/onednn/op_kernels.hpp"
#include "sgmatch/ops/nn.hpp"
#include "sgmatch/reference/kernels.hpp"
#include "sgmatch/reference/tensor_ops.hpp"

SGMATCH_BEGIN_NAMESPACE
namespace exec {
namespace kernels {

/// Conv and ConvTranspose read the same window attributes.
inline reference::conv_attrs conv_attrs_of(const ops::op_attrs& a, std::size_t sp) {
    reference::conv_attrs c;
    c.strides = a.ints("strides", sp);
    c.dilations = a.ints("dilations", sp);
    kernels::split_pads(a.ints("pads", sp), c.pads_begin, c.pads_end);
    c.groups = a.i("group");
    return c;
}

inline reference_fn conv(const node_context& c) {
    return [a = c.a](const std::vector<const array*>& x) {
        const array& X = in(x, 0, a);
        const array empty = xt::zeros<float>({std::size_t(0)});
        return reference::conv(X, in(x, 1, a), x.size() > 2 ? *x[2] : empty, conv_attrs_of(a, spatial(X)));
    };
}
inline reference_fn conv_transpose(const node_context& c) {
    return [a = c.a](const std::vector<const array*>& x) {
        const array& X = in(x, 0, a);
        const array empty = xt::zeros<float>({std::size_t(0)});
        return reference::conv_transpose(X, in(x, 1, a), x.size() > 2 ? *x[2] : empty, conv_attrs_of(a, spatial(X)),
                                         a.ints("output_padding", spatial(X)));
    };
}

/// A convolution on its oneDNN primitive, with no post-ops.
struct conv_op final : onednn::op_kernel {
    onednn::fused_conv k;
    explicit conv_op(onednn::conv_spec s) : k(std::move(s)) {}
    onednn::tensor run(const std::vector<onednn::tensor>& in) const override { return k.run(in.at(0)); }
    const char* kind() const override { return "conv"; }
};

template <class Tag>
onednn_choice onednn_conv(const node_context& c, bool plain) {
    auto l = onednn::lower_match<graph, pat::op<pat::tags<Tag>>>(c.g, &c.n, 1, true);
    auto* spec = std::get_if<onednn::conv_spec>(&l.spec);
    if (!l.decline.empty()) return decline(l.decline);
    if (spec == nullptr) return decline("it lowers to no convolution");
    if (plain) spec->layout = onednn::conv_spec::layout_choice::plain;
    return std::make_shared<conv_op>(std::move(*spec));
}

/// Pooling's pads for an input's spatial dims: with ceil_mode, the end pads grow until the
/// rounded-down window count is the rounded-up one (the added padding is never read: -inf for
/// max, excluded from the average), so kernels that round down compute ceil_mode's output.
inline void pool_pads(const ops::op_attrs& a, const ops::dims& in_spatial, reference::dims& b, reference::dims& e) {
    const std::size_t sp = in_spatial.size();
    const ops::rules::window w = ops::rules::window_of(a, sp);
    split_pads(w.pads, b, e);
    if (a.i("ceil_mode") == 0) return;
    for (std::size_t i = 0; i < sp; ++i) {
        const std::int64_t o = ops::rules::window_out(a, in_spatial[i], w.kernel[i], w.strides[i], w.dilations[i], b[i], e[i], true);
        e[i] = std::max(e[i], (o - 1) * w.strides[i] + (w.kernel[i] - 1) * w.dilations[i] + 1 - in_spatial[i] - b[i]);
    }
}

template <reference::pool_kind K>
reference_fn pool(const node_context& c) {
    if (K == reference::pool_kind::average && c.a.i("ceil_mode") != 0 && c.a.i("count_include_pad") != 0)
        c.refuse("ceil_mode 1 with count_include_pad 1 is not implemented");
    return [a = c.a](const std::vector<const array*>& x) {
        const array& X = in(x, 0, a);
        reference::dims b, e;
        pool_pads(a, ops::dims(X.shape().begin() + 2, X.shape().end()), b, e);
        return reference::pool(X, K, a.ints("kernel_shape"), a.ints("strides", spatial(X)), b, e,
                               K == reference::pool_kind::average && a.i("count_include_pad") != 0,
                               ops::rules::window_of(a, spatial(X)).dilations);
    };
}
/// A oneDNN pooling primitive; with ceil_mode only for an input of declared spatial dims.
template <reference::pool_kind K>
onednn_choice onednn_pool(const node_context& c, bool plain) {
    const auto ks = c.a.ints("kernel_shape");
    reference::dims b, e;
    if (c.a.i("ceil_mode") != 0) {
        const auto t = c.input_type(0);
        if (!t || t->dims.size() != ks.size() + 2) return decline("ceil_mode 1 needs the input's declared spatial dims");
        const ops::dims in_spatial(t->dims.begin() + 2, t->dims.end());
        for (auto d : in_spatial)
            if (d < 0) return decline("ceil_mode 1 needs the input's declared spatial dims");
        pool_pads(c.a, in_spatial, b, e);
    } else {
        const auto pads = c.a.ints("pads", ks.size());
        if (pads.size() != 2 * ks.size()) return decline(std::to_string(pads.size()) + " pads for " + std::to_string(ks.size()) + " spatial axes");
        split_pads(pads, b, e);
    }
    constexpr bool max = K == reference::pool_kind::max;
    return std::make_shared<onednn::pool_kernel>(max, ks, c.a.ints("strides", ks.size()), b, e,
                                                 !max && c.a.i("count_include_pad") != 0, plain,
                                                 ops::rules::window_of(c.a, ks.size()).dilations);
}

inline reference_fn global_average_pool(const node_context&) {
    return [](const std::vector<const array*>& x) { return reference::global_average_pool(*x.at(0)); };
}
inline onednn_choice onednn_global_average_pool(const node_context&, bool plain) {
    return std::make_shared<onednn::pool_kernel>(false, onednn::dims{}, onednn::dims{}, onednn::dims{}, onednn::dims{}, false,
                                                 plain);
}

inline reference_fn batch_norm(const node_context& c) {
    if (c.a.i("training_mode") != 0) c.refuse("training mode is the typed kernel's");
    return [a = c.a](const std::vector<const array*>& x) {
        return reference::batch_norm(in(x, 0, a), in(x, 1, a), in(x, 2, a), in(x, 3, a), in(x, 4, a),
                                     static_cast<float>(a.f("epsilon")));
    };
}
inline onednn_choice onednn_batch_norm(const node_context& c, bool) {
    if (c.a.i("training_mode") != 0) return decline("training mode");
    std::vector<float> p[4];
    for (std::size_t i = 0; i < 4; ++i) {
        p[i] = c.constant_input(i + 1);
        if (p[i].empty()) return decline("input " + std::to_string(i + 1) + " (scale, B, mean, var) is not a constant");
    }
    return std::make_shared<onednn::batch_norm_kernel>(p[0], p[1], p[2], p[3], static_cast<float>(c.a.f("epsilon")));
}

inline reference_fn layer_norm(const node_context& c) {
    return [a = c.a](const std::vector<const array*>& x) {
        const array empty = xt::zeros<float>({std::size_t(0)});
        return reference::layer_norm(in(x, 0, a), in(x, 1, a), x.size() > 2 ? *x[2] : empty, a.i("axis"),
                                     static_cast<float>(a.f("epsilon")));
    };
}
inline onednn_choice onednn_layer_norm(const node_context& c, bool) {
    std::vector<float> scale = c.constant_input(1), bias;
    if (scale.empty()) return decline("the scale (input 1) is not a constant");
    if (c.input_count() > 2) {
        bias = c.constant_input(2);
        if (bias.empty()) return decline("the bias (input 2) is not a constant");
    }
    return std::make_shared<onednn::layer_norm_kernel>(std::move(scale), std::move(bias), c.a.i("axis"),
                                                       static_cast<float>(c.a.f("epsilon")));
}

/// LpNormalization: x / (the L1 or L2 norm of x along the axis).
inline reference_fn lp_normalization(const node_context& c) {
    const auto kind = c.a.i("p") == 1 ? reference::reduce_kind::l1 : reference::reduce_kind::l2;
    return [axis = c.a.i("axis"), kind](const std::vector<const array*>& x) {
        const array& X = *x.at(0);
        return array(X / reference::reduce(X, kind, {axis}, true));
    };
}
/// LpNormalization on oneDNN: the norm by a reduction primitive (in X's layout where oneDNN has
/// one for it; over an axis of one element, where a reduction reduces nothing, |X| by an eltwise
/// primitive), then X divided by it by a binary primitive that broadcasts the norm.
class lp_normalization_kernel final : public onednn::op_kernel {
public:
    lp_normalization_kernel(std::int64_t axis, std::int64_t p)
        : axis_(axis), norm_(dnnl::algorithm::reduction_norm_lp_sum, static_cast<float>(p), {axis}, true),
          abs_({onednn::post_op::eltwise(dnnl::algorithm::eltwise_abs)}), divide_(dnnl::algorithm::binary_div) {}
    const char* kind() const override { return "lp_normalization"; }
    onednn::tensor run(const std::vector<onednn::tensor>& in) const override {
        const onednn::tensor& x = in.at(0);
        const onednn::dims d = x.shape();
        const bool one = d.at(static_cast<std::size_t>(onednn::detail::axis_index(axis_, d.size(), "lp_normalization_kernel"))) == 1;
        return divide_.run({x, one ? abs_.run({x}) : norm_.run({x})});
    }

private:
    std::int64_t axis_;
    onednn::reduce_kernel norm_;
    onednn::eltwise_kernel abs_;
    onednn::binary_kernel divide_;
};
inline onednn_choice onednn_lp_normalization(const node_context& c, bool) {
    return std::make_shared<lp_normalization_kernel>(c.a.i("axis"), c.a.i("p"));
}

inline reference_fn lrn(const node_context& c) {
    return [a = c.a](const std::vector<const array*>& x) {
        return reference::lrn(in(x, 0, a), a.i("size"), static_cast<float>(a.f("alpha")), static_cast<float>(a.f("beta")),
                              static_cast<float>(a.f("bias")));
    };
}
inline onednn_choice onednn_lrn(const node_context& c, bool) {
    if (c.a.i("size") % 2 == 0) return decline("an even size: oneDNN's window is centred, ONNX's leans one channel up");
    return std::make_shared<onednn::lrn_kernel>(c.a.i("size"), static_cast<float>(c.a.f("alpha")),
                                                static_cast<float>(c.a.f("beta")), static_cast<float>(c.a.f("bias")));
}

inline reference_fn gemm(const node_context& c) {
    return [a = c.a](const std::vector<const array*>& x) {
        const array empty = xt::zeros<float>({std::size_t(0)});
        return reference::gemm(in(x, 0, a), in(x, 1, a), x.size() > 2 ? *x[2] : empty, a.i("transA") != 0, a.i("transB") != 0,
                               static_cast<float>(a.f("alpha")), static_cast<float>(a.f("beta")));
    };
}
inline onednn_choice onednn_gemm(const node_context& c, bool) {
    const auto b = c.constant_view(1);
    if (!b || b->data == nullptr) return decline("B (input 1) is not a constant");
    if (b->rank != 2) return decline("B (input 1) has rank " + std::to_string(b->rank));
    std::vector<float> bias;
    if (c.input_count() > 2) {
        bias = c.constant_input(2);
        // C: one value per column, or one value for all (a scalar broadcast to N); an [M, N] C
        // runs on the reference kernel.
        const std::int64_t N = c.a.i("transB") != 0 ? b->dims[0] : b->dims[1];
        if (bias.size() == 1) bias.assign(static_cast<std::size_t>(N), bias[0]);
        if (bias.empty() || static_cast<std::int64_t>(bias.size()) != N)
            return decline("C (input 2) is not a constant of one value or one value per column");
    }
    return std::make_shared<onednn::gemm_kernel>(onednn::dims(b->dims, b->dims + 2), c.constant_input(1), c.a.i("transB") != 0,
                                                 std::move(bias), c.a.i("transA") != 0, static_cast<float>(c.a.f("alpha")),
                                                 static_cast<float>(c.a.f("beta")));
}

inline reference_fn matmul(const node_context& c) {
    return [a = c.a](const std::vector<const array*>& x) { return reference::matmul(in(x, 0, a), in(x, 1, a)); };
}
inline onednn_choice onednn_matmul(const node_context&, bool) {
    return std::make_shared<onednn::matmul_kernel>();
}

inline reference_fn softmax(const node_context& c) {
    return [axis = c.a.i("axis")](const std::vector<const array*>& x) { return reference::softmax(*x.at(0), axis); };
}
inline onednn_choice onednn_softmax(const node_context& c, bool) {
    return std::make_shared<onednn::softmax_kernel>(c.a.i("axis"));
}

inline reference_fn log_softmax(const node_context& c) {
    return [axis = c.a.i("axis")](const std::vector<const array*>& x) { return reference::log_softmax(*x.at(0), axis); };
}
inline onednn_choice onednn_log_softmax(const node_context& c, bool) {
    return std::make_shared<onednn::log_softmax_kernel>(c.a.i("axis"));
}
inline reference_fn global_max_pool(const node_context&) {
    return [](const std::vector<const array*>& x) { return reference::global_max_pool(*x.at(0)); };
}
inline onednn_choice onednn_global_max_pool(const node_context&, bool plain) {
    return std::make_shared<onednn::pool_kernel>(true, onednn::dims{}, onednn::dims{}, onednn::dims{}, onednn::dims{}, false, plain);
}

template <> inline constexpr kernel_binding f32_kernels<ops::LogSoftmax>{log_softmax, onednn_log_softmax};
template <> inline constexpr kernel_binding f32_kernels<ops::GlobalMaxPool>{global_max_pool, onednn_global_max_pool};
template <> inline constexpr kernel_binding f32_kernels<ops::Conv>{conv, onednn_conv<ops::Conv>};
template <> inline constexpr kernel_binding f32_kernels<ops::ConvTranspose>{conv_transpose, onednn_conv<ops::ConvTranspose>};
template <> inline constexpr kernel_binding f32_kernels<ops::MaxPool>{pool<reference::pool_kind::max>, onednn_pool<reference::pool_kind::max>};
template <> inline constexpr kernel_binding f32_kernels<ops::AveragePool>{pool<reference::pool_kind::average>, onednn_pool<reference::pool_kind::average>};
template <> inline constexpr kernel_binding f32_kernels<ops::GlobalAveragePool>{global_average_pool, onednn_global_average_pool};
template <> inline constexpr kernel_binding f32_kernels<ops::BatchNorm>{batch_norm, onednn_batch_norm};
template <> inline constexpr kernel_binding f32_kernels<ops::LayerNorm>{layer_norm, onednn_layer_norm};
template <> inline constexpr kernel_binding f32_kernels<ops::LRN>{lrn, onednn_lrn};
template <> inline constexpr kernel_binding f32_kernels<ops::LpNormalization>{lp_normalization, onednn_lp_normalization};
template <> inline constexpr kernel_binding f32_kernels<ops::Gemm>{gemm, onednn_gemm};
template <> inline constexpr kernel_binding f32_kernels<ops::MatMul>{matmul, onednn_matmul};
template <> inline constexpr kernel_binding f32_kernels<ops::Softmax>{softmax, onednn_softmax};

}  // namespace kernels
}  // namespace exec
SGMATCH_END_NAMESPACE
