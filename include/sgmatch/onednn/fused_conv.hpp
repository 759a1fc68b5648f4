// sgmatch/onednn/fused_conv.hpp - a fused convolution kernel: conv + folded bias/BatchNorm +
// post-ops, built once per input shape and cached.
//
//   sgmatch::onednn::conv_spec s;               // weights (plain OIHW), attributes, post-ops
//   s.fold_batch_norm(scale, shift, mean, var, eps);
//   s.post_ops.push_back(post_op::eltwise(dnnl::algorithm::eltwise_relu));
//   sgmatch::onednn::fused_conv k(std::move(s));
//   tensor y = k.run(tensor::view(x, {1, 64, 56, 56}));   // y in the layout oneDNN chose
//
// - The primitive descriptor asks for format `any` for source, weights and destination, so
//   oneDNN picks its preferred layouts (NHWC activations and brgconv kernels on AVX-512). The
//   source is reordered only when it arrives in another layout; the destination is handed on
//   in the chosen layout (see tensor.hpp).
// - Weights are reordered to the primitive's layout once per cached shape, never per run.
// - run() is thread-safe: the cache is locked only for look-up and insertion, and each call
//   brings its own scratchpad (scratchpad_mode::user) and stream, so several threads may run
//   the same kernel at once.
// - A sum post-op accumulates into the destination: the kernel copies (reorders) the residual
//   into a fresh destination first, so the caller's residual tensor is never written.
#pragma once

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <tuple>
#include <type_traits>
#include <unordered_map>
#include <utility>
#include <vector>

#include <oneapi/dnnl/dnnl.hpp>

#include "sgmatch/detail/config.hpp"
#include "sgmatch/onednn/compat.hpp"
#include "sgmatch/onednn/float_values.hpp"
#include "sgmatch/onednn/post_ops.hpp"
#include "sgmatch/onednn/tensor.hpp"

SGMATCH_BEGIN_NAMESPACE
namespace onednn {

/// Everything a fused convolution needs, in framework terms (ONNX conventions).
struct conv_spec {
    std::string name = "conv";      // for messages
    dims weights_dims;              // [O, C/groups, k...] (1 to 3 spatial dims)
    float_values weights;           // plain row-major, prod(weights_dims) values (shared with
                                    // the graph's constant where it allows); none in a spec
                                    // lowered without data (it describes a kernel, runs none)
    std::vector<float> bias;        // empty or O values
    std::int64_t groups = 1;
    dims strides, dilations;        // per spatial dim; dilation 1 is dense (empty: all 1)
    dims pads_begin, pads_end;      // per spatial dim (empty: all 0)
    std::vector<post_op> post_ops;  // in pattern order
    /// A transposed convolution (ONNX ConvTranspose): weights_dims is then [C, O/groups, k...],
    /// and each spatial output is stride (in - 1) + output_padding + dilation (k - 1) + 1 - pads.
    bool transposed = false;
    dims output_padding;            // transposed only, per spatial dim (empty: all 0)
    /// any: oneDNN picks source, weights and destination layouts (NHWC / blocked: the fast
    /// path). plain: NCHW activations and OIHW weights, what a naive integration gets; kept
    /// for comparisons (post-ops on a plain conv are slower than none, ../docs/design.md).
    /// blocked: activations of 8 channels or more in channel blocks (nChw16c with AVX-512,
    /// nChw8c below), weights as oneDNN picks; what a network of 1x1 + depthwise blocks runs
    /// in (layout_plan.hpp). Winograd runs with `any` only.
    enum class layout_choice { any, plain, blocked } layout = layout_choice::any;
    /// A 3x3, stride-1, undilated, ungrouped 2-D conv with at least 14x14 outputs runs on
    /// oneDNN's Winograd kernel where oneDNN has a jit one for it and its post-ops (1.6-2.4x
    /// faster than the direct kernel at ResNet's shapes; relative difference about 1e-6;
    /// benchmarks/RESULTS.md), else on the direct one. false: always direct.
    bool winograd = true;

    std::int64_t out_channels() const {
        if (weights_dims.size() < 2) return 0;
        return transposed ? weights_dims[1] * groups : weights_dims[0];
    }
    std::int64_t in_channels() const {
        if (weights_dims.size() < 2) return 0;
        return transposed ? weights_dims[0] : weights_dims[1] * groups;
    }
    /// The weights in oneDNN's logical order, [O, C/G, k...] or [G, O/G, C/G, k...], row-major
    /// (for a transposed conv, ONNX's [C, O/G, k...] is regrouped).
    dims onednn_weights_dims() const {
        dims w = weights_dims;
        if (transposed) std::swap(w[0], w[1]), w[0] *= groups, w[1] /= groups;
        if (groups > 1) {
            w.insert(w.begin(), groups);
            w[1] /= groups;
        }
        return w;
    }
    std::vector<float> onednn_weights() const {
        if (!transposed) return weights.to_vector();
        const std::int64_t C = weights_dims[0], Og = weights_dims[1], Cg = C / groups;
        std::size_t k = 1;
        for (std::size_t i = 2; i < weights_dims.size(); ++i) k *= static_cast<std::size_t>(weights_dims[i]);
        std::vector<float> w(weights.size());
        // ONNX [g, c, j, k] -> oneDNN [g, j, c, k]
        for (std::int64_t g = 0; g < groups; ++g)
            for (std::int64_t c = 0; c < Cg; ++c)
                for (std::int64_t j = 0; j < Og; ++j) {
                    const auto from = static_cast<std::size_t>(((g * Cg + c) * Og + j)) * k;
                    const auto to = static_cast<std::size_t>(((g * Og + j) * Cg + c)) * k;
                    std::copy(weights.begin() + static_cast<std::ptrdiff_t>(from),
                              weights.begin() + static_cast<std::ptrdiff_t>(from + k),
                              w.begin() + static_cast<std::ptrdiff_t>(to));
                }
        return w;
    }
    std::size_t spatial_rank() const { return weights_dims.size() < 2 ? 0 : weights_dims.size() - 2; }

    /// Fold an inference BatchNorm that follows the conv into its weights and bias:
    /// w' = w * k, b' = (b - mean) * k + shift with k = scale / sqrt(var + eps). Right after a
    /// depthwise post-op, into that one's weights and bias.
    void fold_batch_norm(const std::vector<float>& scale, const std::vector<float>& shift,
                         const std::vector<float>& mean, const std::vector<float>& var, float eps) {
        const auto O = static_cast<std::size_t>(out_channels());
        if (scale.size() != O || shift.size() != O || mean.size() != O || var.size() != O)
            throw kernel_error("sgmatch::onednn::conv_spec::fold_batch_norm('" + name +
                               "'): BatchNorm parameters must have one value per output channel (" +
                               std::to_string(O) + ")");
        if (auto* dw = post_ops.empty() ? nullptr : post_ops.back().as<post_op::depthwise_op>()) {
            // Right after a depthwise post-op: into its [O, 1, 3, 3] weights and its bias.
            if (dw->bias.empty()) dw->bias.assign(O, 0.0f);
            for (std::size_t o = 0; o < O; ++o) {
                const double k = scale[o] / std::sqrt(static_cast<double>(var[o]) + eps);
                for (std::size_t t = 0; t < 9 && o * 9 + t < dw->weights.size(); ++t)
                    dw->weights[o * 9 + t] = static_cast<float>(dw->weights[o * 9 + t] * k);
                dw->bias[o] = static_cast<float>((dw->bias[o] - mean[o]) * k + shift[o]);
            }
            return;
        }
        if (!post_ops.empty())
            throw kernel_error("sgmatch::onednn::conv_spec::fold_batch_norm('" + name +
                               "'): a BatchNorm after a post-op cannot be folded into the weights");
        if (bias.empty()) bias.assign(O, 0.0f);
        const std::size_t per_out = O ? weights.size() / O : 0;
        std::vector<double> k(O);
        for (std::size_t o = 0; o < O; ++o) {
            k[o] = scale[o] / std::sqrt(static_cast<double>(var[o]) + eps);
            bias[o] = static_cast<float>((bias[o] - mean[o]) * k[o] + shift[o]);
        }
        float* const wv = weights.mutable_data();
        if (!transposed) {
            for (std::size_t o = 0; o < O; ++o)
                for (std::size_t i = 0; i < per_out; ++i)
                    wv[o * per_out + i] = static_cast<float>(wv[o * per_out + i] * k[o]);
            return;
        }
        // [C, O/G, k...]: input channel c is in group c / (C/G), and its j-th output is g (O/G) + j.
        const auto C = static_cast<std::size_t>(weights_dims[0]), Og = static_cast<std::size_t>(weights_dims[1]);
        const std::size_t Cg = C / static_cast<std::size_t>(groups), taps = weights.size() / (C * Og);
        for (std::size_t c = 0; c < C; ++c)
            for (std::size_t j = 0; j < Og; ++j)
                for (std::size_t t = 0; t < taps; ++t) {
                    float& w = wv[(c * Og + j) * taps + t];
                    w = static_cast<float>(w * k[(c / Cg) * Og + j]);
                }
    }

    /// Output shape for input shape src (throws kernel_error when they do not fit), after a
    /// depthwise post-op if there is one.
    dims output_dims(const dims& src) const {
        dims out = main_output_dims(src);
        for (const auto& p : post_ops)
            if (auto* dw = p.as<post_op::depthwise_op>())
                for (std::size_t i = 2; i < out.size(); ++i) out[i] = (out[i] - 1) / dw->stride + 1;
        return out;
    }
    /// The convolution's own output shape (before a depthwise post-op).
    dims main_output_dims(const dims& src) const {
        const std::size_t sp = spatial_rank();
        if (src.size() != sp + 2)
            throw kernel_error("sgmatch::onednn::fused_conv('" + name + "'): input " + to_string(src) + " has rank " +
                               std::to_string(src.size()) + ", the weights " + to_string(weights_dims) + " need " +
                               std::to_string(sp + 2));
        if (src[1] != in_channels())
            throw kernel_error("sgmatch::onednn::fused_conv('" + name + "'): input " + to_string(src) + " has " +
                               std::to_string(src[1]) + " channels, weights " + to_string(weights_dims) +
                               " with groups " + std::to_string(groups) + " need " + std::to_string(in_channels()));
        dims out{src[0], out_channels()};
        for (std::size_t i = 0; i < sp; ++i) {
            const std::int64_t d = dilations.empty() ? 1 : dilations[i];
            const std::int64_t s = strides.empty() ? 1 : strides[i];
            const std::int64_t pb = pads_begin.empty() ? 0 : pads_begin[i], pe = pads_end.empty() ? 0 : pads_end[i];
            const std::int64_t span = d * (weights_dims[2 + i] - 1) + 1;
            const std::int64_t op = output_padding.empty() ? 0 : output_padding[i];
            const std::int64_t o = transposed ? s * (src[2 + i] - 1) + op + span - pb - pe : (src[2 + i] + pb + pe - span) / s + 1;
            if (o < 1)
                throw kernel_error("sgmatch::onednn::fused_conv('" + name + "'): the kernel " + to_string(weights_dims) +
                                   " does not fit the padded input " + to_string(src));
            out.push_back(o);
        }
        return out;
    }

    /// Checks the spec on its own (before any shape is known); throws kernel_error.
    void validate() const {
        const std::size_t sp = spatial_rank();
        auto fail = [&](const std::string& why) {
            throw kernel_error("sgmatch::onednn::conv_spec('" + name + "'): " + why);
        };
        if (sp < 1 || sp > 3) fail("weights must be 3-D, 4-D or 5-D, got " + to_string(weights_dims));
        std::size_t n = 1;
        for (auto d : weights_dims) n *= static_cast<std::size_t>(d);
        if (!weights.empty() && weights.size() != n)
            fail(std::to_string(weights.size()) + " weight values for " + to_string(weights_dims));
        if (!bias.empty() && static_cast<std::int64_t>(bias.size()) != out_channels()) fail("bias size");
        if (groups < 1 || out_channels() % groups != 0) fail("groups must divide the output channels");
        if (transposed && weights_dims[0] % groups != 0) fail("groups must divide the input channels");
        if (!transposed && !output_padding.empty()) fail("output_padding is for a transposed convolution");
        for (const dims* v : {&strides, &dilations, &pads_begin, &pads_end, &output_padding})
            if (!v->empty() && v->size() != sp) fail("strides, dilations and pads need one value per spatial dim");
        for (std::size_t i = 0; i < output_padding.size(); ++i) {
            const std::int64_t s = strides.empty() ? 1 : strides[i], d = dilations.empty() ? 1 : dilations[i];
            if (output_padding[i] < 0 || (output_padding[i] >= s && output_padding[i] >= d))
                fail("output_padding must be below the stride or the dilation");
            // oneDNN's deconvolution takes output_padding as less right padding, never below 0.
            if (output_padding[i] > (pads_end.empty() ? 0 : pads_end[i]))
                fail("output_padding " + to_string(output_padding) + " above pads_end " + to_string(pads_end) +
                     " (oneDNN 2.x has no negative padding; not supported)");
        }
        int sums = 0, dws = 0;
        for (auto& p : post_ops) {
            const bool sum = p.is<post_op::sum_op>(), binary = p.is<post_op::binary_op>();
            if (sum) ++sums;
            if ((sum || binary) && dws == 0 &&
                std::any_of(post_ops.begin(), post_ops.end(), [](const post_op& q) { return q.is<post_op::depthwise_op>(); }))
                fail("sum and binary post-ops must follow the depthwise post-op");
            // oneDNN 2.6's fused depthwise computes a binary post-op after it wrong for some shapes
            // (a Mul by a full-shape operand, on [2, 2, 4, 6]).
            if (binary && dws > 0)
                fail("a binary post-op after the depthwise post-op (oneDNN 2.6 computes some of them wrong)");
            const auto* dw = p.as<post_op::depthwise_op>();
            if (dw == nullptr) continue;
            ++dws;
            bool one_by_one = !transposed && sp == 2 && groups == 1 && weights_dims[2] == 1 && weights_dims[3] == 1;
            for (const dims* v : {&strides, &dilations})
                for (auto x : *v) one_by_one = one_by_one && x == 1;
            for (const dims* v : {&pads_begin, &pads_end})
                for (auto x : *v) one_by_one = one_by_one && x == 0;
            if (!one_by_one) fail("a depthwise post-op needs a 2-D 1x1 convolution (stride 1, no pads, no groups)");
            if (dw->stride != 1 && dw->stride != 2) fail("a depthwise post-op has stride 1 or 2");
            if (static_cast<std::int64_t>(dw->weights.size()) != out_channels() * 9 ||
                (!dw->bias.empty() && static_cast<std::int64_t>(dw->bias.size()) != out_channels()))
                fail("a depthwise post-op needs [O, 1, 3, 3] weights and O bias values");
        }
        if (dws > 1) fail("at most one depthwise post-op");
        if (sums > 1) fail("at most one sum post-op");
    }
};

class fused_conv final : public fused_kernel {
public:
    explicit fused_conv(conv_spec s) : spec_(std::move(s)) { spec_.validate(); }

    const conv_spec& spec() const { return spec_; }

    /// The number of runtime inputs besides the source (residuals and binary operands).
    std::size_t extra_inputs() const { return detail::extra_inputs(spec_.post_ops); }

    /// Convolve src, apply the post-ops (reading extra[i] for post-ops with input i) and return
    /// the destination in the primitive's layout (dst_desc()).
    tensor run(const tensor& src, const std::vector<tensor>& extra = {}) const override {
        tensor y = tensor::allocate(dst_desc(src.shape()));
        run_into(src, extra, y);
        return y;
    }

    /// The same, into a destination the caller provides (layout dst_desc(src.shape())), so that
    /// buffers can be reused. When dst is the residual of the sum post-op itself (the same
    /// memory), the sum accumulates in place and the residual is consumed: no copy.
    void run_into(const tensor& src, const std::vector<tensor>& extra, const tensor& y) const override {
        const std::string who = "sgmatch::onednn::fused_conv('" + spec_.name + "')";
        if (spec_.transposed) detail::run_fused(*deconv_for(src.shape()), who, spec_.post_ops, src, extra, y);
        else detail::run_fused(*conv_for(src.shape()), who, spec_.post_ops, src, extra, y);
    }

    /// What oneDNN picks for this input shape: the implementation (e.g. "brg:avx512_core") and
    /// the source and destination layouts. Only the primitive descriptor is made (no primitive,
    /// no weights needed or reordered), as the kernel would make it: with its post-ops fused, or
    /// without them when oneDNN rejects those or would run them on a reference implementation
    /// where the conv alone has an optimized one; kernel_error when oneDNN has no primitive.
    struct choice {
        std::string implementation;
        dnnl::memory::desc src, dst;
    };
    choice described(const dims& src) const {
        auto of = [&](auto prim) -> choice {
            using Prim = decltype(prim);
            auto read = [](const auto& pd) { return choice{std::string(compat::impl_name(pd)), pd.src_desc(), pd.dst_desc()}; };
            try {
                return detail::never_slower(
                    read(describe<Prim>(src, true).first), [&] { return read(describe<Prim>(src, false).first); },
                    [](const choice& c) { return c.implementation; });
            } catch (const dnnl::error&) {
                try {
                    return read(describe<Prim>(src, false).first);
                } catch (const dnnl::error& err) {
                    throw kernel_error("sgmatch::onednn::fused_conv('" + spec_.name + "'): oneDNN has no primitive for input " +
                                       to_string(src) + " (" + err.what() + ")");
                }
            }
        };
        return spec_.transposed ? of(dnnl::deconvolution_forward()) : of(dnnl::convolution_forward());
    }
    /// described(src).implementation.
    std::string implementation(const dims& src) const { return described(src).implementation; }
    /// described(src)'s source and destination layouts.
    std::pair<dnnl::memory::desc, dnnl::memory::desc> layouts(const dims& src) const {
        choice c = described(src);
        return {std::move(c.src), std::move(c.dst)};
    }
    /// The source layout the primitive reads without a reorder, for this input shape.
    dnnl::memory::desc src_desc(const dims& src) const {
        return spec_.transposed ? deconv_for(src)->pd.src_desc() : conv_for(src)->pd.src_desc();
    }
    /// The destination layout chosen for this input shape.
    dnnl::memory::desc dst_desc(const dims& src) const override {
        return spec_.transposed ? deconv_for(src)->pd.dst_desc() : conv_for(src)->pd.dst_desc();
    }
    const std::vector<post_op>& post_ops() const override { return spec_.post_ops; }
    /// How many input shapes have a built primitive.
    std::size_t cached_shapes() const { return conv_cache_.size() + deconv_cache_.size(); }
    /// How many input shapes run their post-ops unfused because oneDNN rejected the fused
    /// primitive or would run it on a reference implementation (logged once per kernel on stderr).
    std::size_t unfused_shapes() const override { return unfused_.count(); }
    /// Why the first of those runs unfused ("" while none does).
    std::string unfused_reason() const { return unfused_.why(); }
    /// The implementation oneDNN runs for this input shape: the primitive the kernel builds (or
    /// built), with its post-ops fused or, when they run unfused, without them.
    std::string running_implementation(const dims& src) const {
        return spec_.transposed ? compat::impl_name(deconv_for(src)->pd) : compat::impl_name(conv_for(src)->pd);
    }

private:
    using conv_entry = detail::fused_entry<dnnl::convolution_forward>;
    using deconv_entry = detail::fused_entry<dnnl::deconvolution_forward>;

    std::shared_ptr<const conv_entry> conv_for(const dims& src) const {
        return conv_cache_.get(src, [&] { return build<dnnl::convolution_forward>(src); });
    }
    std::shared_ptr<const deconv_entry> deconv_for(const dims& src) const {
        return deconv_cache_.get(src, [&] { return build<dnnl::deconvolution_forward>(src); });
    }

    // Whether the Winograd kernel is worth asking oneDNN for (conv_spec::winograd).
    bool winograd_fits(const dims& src) const {
        if (!spec_.winograd || spec_.transposed || spec_.layout != conv_spec::layout_choice::any || spec_.groups != 1 ||
            spec_.weights_dims.size() != 4 || spec_.weights_dims[2] != 3 || spec_.weights_dims[3] != 3)
            return false;
        for (auto v : spec_.strides)
            if (v != 1) return false;
        for (auto v : spec_.dilations)
            if (v != 1) return false;
        const dims out = spec_.main_output_dims(src);
        return out.size() == 4 && out[2] * out[3] >= 14 * 14;
    }

    // The primitive descriptor for this input shape and its post-op plan (tail primitives
    // built, depthwise weights not yet bound); `fuse`: the post-ops fused into the primitive.
    template <class Prim>
    std::pair<typename Prim::primitive_desc, detail::post_op_plan> describe(const dims& src, bool fuse) const {
        using md = dnnl::memory::desc;
        using dt = dnnl::memory::data_type;
        using tag = dnnl::memory::format_tag;
        constexpr bool deconv = std::is_same_v<Prim, dnnl::deconvolution_forward>;
        const dims dst = spec_.output_dims(src), conv_dst = spec_.main_output_dims(src);
        const std::size_t sp = spec_.spatial_rank();
        const dims w = spec_.onednn_weights_dims();
        dims strides(sp, 1), dil(sp, 0), pl(sp, 0), pr(sp, 0);
        for (std::size_t i = 0; i < sp; ++i) {
            if (!spec_.strides.empty()) strides[i] = spec_.strides[i];
            if (!spec_.dilations.empty()) dil[i] = spec_.dilations[i] - 1;
            if (!spec_.pads_begin.empty()) pl[i] = spec_.pads_begin[i];
            if (!spec_.pads_end.empty()) pr[i] = spec_.pads_end[i];
            if (!spec_.output_padding.empty()) pr[i] -= spec_.output_padding[i];  // extra rows at the end
        }
        const md bias_md = spec_.bias.empty() ? md() : md({spec_.out_channels()}, dt::f32, tag::a);
        const bool plain = spec_.layout == conv_spec::layout_choice::plain;
        auto activations = [&](const dims& d) {  // blocked: channels in blocks, where there are enough of them
            if (spec_.layout == conv_spec::layout_choice::blocked && d.size() >= 3 && d.size() <= 5 && d[1] >= 8)
                return blocked_tag(d.size());
            return plain ? plain_tag(d.size()) : tag::any;
        };
        const md s(src, dt::f32, activations(src));
        const md wd(w, dt::f32, plain ? plain_tag(w.size()) : tag::any);
        const md d(conv_dst, dt::f32, activations(conv_dst));  // a depthwise post-op shrinks it
        detail::post_op_plan plan(spec_.post_ops, dst, 1, fuse);
        dnnl::primitive_attr attr;
        attr.set_scratchpad_mode(dnnl::scratchpad_mode::user);
        attr.set_post_ops(plan.po);
        auto pd = [&] {
            if constexpr (deconv) {
                return compat::deconv_pd(cpu_engine(), s, wd, bias_md, d, strides, dil, pl, pr, attr);
            } else {
                if (winograd_fits(src)) {
                    try {
                        auto w = compat::conv_pd(cpu_engine(), s, wd, bias_md, d, strides, dil, pl, pr, attr,
                                                 dnnl::algorithm::convolution_winograd);
                        if (std::string(compat::impl_name(w)).find("wino") != std::string::npos) return w;
                    } catch (const dnnl::error&) {  // no Winograd kernel for this: the direct one
                    }
                }
                return compat::conv_pd(cpu_engine(), s, wd, bias_md, d, strides, dil, pl, pr, attr);
            }
        }();
        plan.build_tail(spec_.post_ops, pd.dst_desc());
        return {std::move(pd), std::move(plan)};
    }

    template <class Prim>
    std::shared_ptr<const detail::fused_entry<Prim>> build(const dims& src) const {
        constexpr bool deconv = std::is_same_v<Prim, dnnl::deconvolution_forward>;
        const dims w = spec_.onednn_weights_dims();
        std::int64_t count = 1;
        for (const auto d : w) count *= d;
        if (spec_.weights.empty() && count != 0)
            throw kernel_error("sgmatch::onednn::fused_conv('" + spec_.name + "'): the spec has no weights (lowered "
                               "without data: it describes a kernel and cannot run one)");
        // Weights: plain (g)oi(d)(h)w -> the primitive's layout, once.
        const std::vector<float> transposed_w = deconv ? spec_.onednn_weights() : std::vector<float>();
        const tensor plain_w = tensor::view(deconv ? transposed_w.data() : spec_.weights.data(), w);
        const tensor plain_b = spec_.bias.empty() ? tensor() : tensor::view(spec_.bias.data(), {spec_.out_channels()});
        auto make = [&](bool fuse) {
            auto [pd, plan] = describe<Prim>(src, fuse);
            plan.bind_depthwise(spec_.post_ops, pd);
            return std::make_shared<const detail::fused_entry<Prim>>(pd, std::move(plan), plain_w, plain_b);
        };
        return detail::build_or_unfuse(make, "sgmatch::onednn::fused_conv('" + spec_.name + "')",
                                       std::string(deconv ? "transposed convolution" : "convolution") + " of input " +
                                           to_string(src) + " with weights " + to_string(spec_.weights_dims) +
                                           ", groups " + std::to_string(spec_.groups),
                                       unfused_);
    }

    conv_spec spec_;
    mutable detail::unfused_log unfused_;
    detail::shape_cache<dims, conv_entry> conv_cache_;
    detail::shape_cache<dims, deconv_entry> deconv_cache_;
};

}  // namespace onednn
SGMATCH_END_NAMESPACE
