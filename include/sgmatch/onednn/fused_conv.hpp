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
#include <unordered_map>
#include <utility>
#include <vector>

#include <oneapi/dnnl/dnnl.hpp>

#include "sgmatch/detail/config.hpp"
#include "sgmatch/onednn/compat.hpp"
#include "sgmatch/onednn/post_ops.hpp"
#include "sgmatch/onednn/tensor.hpp"

SGMATCH_BEGIN_NAMESPACE
namespace onednn {

/// Everything a fused convolution needs, in framework terms (ONNX conventions).
struct conv_spec {
    std::string name = "conv";      // for messages
    dims weights_dims;              // [O, C/groups, k...] (1 to 3 spatial dims)
    std::vector<float> weights;     // plain row-major, prod(weights_dims) values
    std::vector<float> bias;        // empty or O values
    std::int64_t groups = 1;
    dims strides, dilations;        // per spatial dim; dilation 1 is dense (empty: all 1)
    dims pads_begin, pads_end;      // per spatial dim (empty: all 0)
    std::vector<post_op> post_ops;  // in pattern order
    /// any: oneDNN picks source, weights and destination layouts (NHWC / blocked: the fast
    /// path). plain: NCHW activations and OIHW weights, what a naive integration gets; kept
    /// for comparisons (post-ops on a plain conv are slower than none, ../docs/design.md).
    enum class layout_choice { any, plain } layout = layout_choice::any;

    std::int64_t out_channels() const { return weights_dims.empty() ? 0 : weights_dims[0]; }
    std::size_t spatial_rank() const { return weights_dims.size() < 2 ? 0 : weights_dims.size() - 2; }

    /// Fold an inference BatchNorm that follows the conv into its weights and bias:
    /// w' = w * k, b' = (b - mean) * k + shift with k = scale / sqrt(var + eps).
    void fold_batch_norm(const std::vector<float>& scale, const std::vector<float>& shift,
                         const std::vector<float>& mean, const std::vector<float>& var, float eps) {
        const auto O = static_cast<std::size_t>(out_channels());
        if (scale.size() != O || shift.size() != O || mean.size() != O || var.size() != O)
            throw kernel_error("sgmatch::onednn::conv_spec::fold_batch_norm('" + name +
                               "'): BatchNorm parameters must have one value per output channel (" +
                               std::to_string(O) + ")");
        if (!post_ops.empty())
            throw kernel_error("sgmatch::onednn::conv_spec::fold_batch_norm('" + name +
                               "'): a BatchNorm after a post-op cannot be folded into the weights");
        if (bias.empty()) bias.assign(O, 0.0f);
        const std::size_t per_out = O ? weights.size() / O : 0;
        for (std::size_t o = 0; o < O; ++o) {
            const double k = scale[o] / std::sqrt(static_cast<double>(var[o]) + eps);
            for (std::size_t i = 0; i < per_out; ++i)
                weights[o * per_out + i] = static_cast<float>(weights[o * per_out + i] * k);
            bias[o] = static_cast<float>((bias[o] - mean[o]) * k + shift[o]);
        }
    }

    /// Output shape for input shape src (throws kernel_error when they do not fit).
    dims output_dims(const dims& src) const {
        const std::size_t sp = spatial_rank();
        if (src.size() != sp + 2)
            throw kernel_error("sgmatch::onednn::fused_conv('" + name + "'): input " + to_string(src) + " has rank " +
                               std::to_string(src.size()) + ", the weights " + to_string(weights_dims) + " need " +
                               std::to_string(sp + 2));
        if (src[1] != weights_dims[1] * groups)
            throw kernel_error("sgmatch::onednn::fused_conv('" + name + "'): input " + to_string(src) + " has " +
                               std::to_string(src[1]) + " channels, weights " + to_string(weights_dims) +
                               " with groups " + std::to_string(groups) + " need " +
                               std::to_string(weights_dims[1] * groups));
        dims out{src[0], out_channels()};
        for (std::size_t i = 0; i < sp; ++i) {
            const std::int64_t d = dilations.empty() ? 1 : dilations[i];
            const std::int64_t s = strides.empty() ? 1 : strides[i];
            const std::int64_t pb = pads_begin.empty() ? 0 : pads_begin[i], pe = pads_end.empty() ? 0 : pads_end[i];
            const std::int64_t span = d * (weights_dims[2 + i] - 1) + 1;
            const std::int64_t o = (src[2 + i] + pb + pe - span) / s + 1;
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
        if (weights.size() != n) fail(std::to_string(weights.size()) + " weight values for " + to_string(weights_dims));
        if (!bias.empty() && static_cast<std::int64_t>(bias.size()) != out_channels()) fail("bias size");
        if (groups < 1 || out_channels() % groups != 0) fail("groups must divide the output channels");
        for (const dims* v : {&strides, &dilations, &pads_begin, &pads_end})
            if (!v->empty() && v->size() != sp) fail("strides, dilations and pads need one value per spatial dim");
        int sums = 0;
        for (auto& p : post_ops) {
            if (p.k == post_op::kind::sum) ++sums;
            if (p.k == post_op::kind::binary && p.swap) fail("a binary post-op with the operand on the left");
        }
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
        tensor y = tensor::allocate(entry_for(src.shape())->pd.dst_desc());
        run_into(src, extra, y);
        return y;
    }

    /// The same, into a destination the caller provides (layout dst_desc(src.shape())), so that
    /// buffers can be reused. When dst is the residual of the sum post-op itself (the same
    /// memory), the sum accumulates in place and the residual is consumed: no copy.
    void run_into(const tensor& src, const std::vector<tensor>& extra, const tensor& y) const override {
        detail::run_fused(*entry_for(src.shape()), "sgmatch::onednn::fused_conv('" + spec_.name + "')", spec_.post_ops, src,
                          extra, y);
    }

    /// Which oneDNN implementation runs for this input shape (e.g. "brg:avx512_core").
    std::string implementation(const dims& src) const { return compat::impl_name(entry_for(src)->pd); }
    /// The destination layout chosen for this input shape.
    dnnl::memory::desc dst_desc(const dims& src) const override { return entry_for(src)->pd.dst_desc(); }
    const std::vector<post_op>& post_ops() const override { return spec_.post_ops; }
    /// How many input shapes have a built primitive.
    std::size_t cached_shapes() const { return cache_.size(); }

private:
    using entry = detail::fused_entry<dnnl::convolution_forward>;

    std::shared_ptr<const entry> entry_for(const dims& src) const {
        return cache_.get(src, [&] { return build(src); });
    }

    std::shared_ptr<const entry> build(const dims& src) const {
        using md = dnnl::memory::desc;
        using dt = dnnl::memory::data_type;
        using tag = dnnl::memory::format_tag;
        const dims dst = spec_.output_dims(src);
        const std::size_t sp = spec_.spatial_rank();
        dims w = spec_.weights_dims;
        if (spec_.groups > 1) {  // [G, O/G, C/G, k...]
            w.insert(w.begin(), spec_.groups);
            w[1] /= spec_.groups;
        }
        dims strides(sp, 1), dil(sp, 0), pl(sp, 0), pr(sp, 0);
        for (std::size_t i = 0; i < sp; ++i) {
            if (!spec_.strides.empty()) strides[i] = spec_.strides[i];
            if (!spec_.dilations.empty()) dil[i] = spec_.dilations[i] - 1;
            if (!spec_.pads_begin.empty()) pl[i] = spec_.pads_begin[i];
            if (!spec_.pads_end.empty()) pr[i] = spec_.pads_end[i];
        }
        detail::post_op_plan plan(spec_.post_ops, dst, 1);
        dnnl::primitive_attr attr;
        attr.set_scratchpad_mode(dnnl::scratchpad_mode::user);
        attr.set_post_ops(plan.po);
        const md bias_md = spec_.bias.empty() ? md() : md({spec_.out_channels()}, dt::f32, tag::a);
        auto pd = [&] {
            try {
                const bool any = spec_.layout == conv_spec::layout_choice::any;
                return compat::conv_pd(cpu_engine(), md(src, dt::f32, any ? tag::any : plain_tag(src.size())),
                                       md(w, dt::f32, any ? tag::any : plain_tag(w.size())), bias_md,
                                       md(dst, dt::f32, any ? tag::any : plain_tag(dst.size())), strides, dil, pl, pr,
                                       attr);
            } catch (const dnnl::error& err) {
                throw kernel_error("sgmatch::onednn::fused_conv('" + spec_.name + "'): oneDNN has no convolution for input " +
                                   to_string(src) + ", weights " + to_string(spec_.weights_dims) + ", groups " +
                                   std::to_string(spec_.groups) + " with these post-ops (" + err.what() + ")");
            }
        }();
        plan.build_tail(spec_.post_ops, pd.dst_desc());
        // Weights: plain (g)oi(d)(h)w -> the primitive's layout, once.
        return std::make_shared<const entry>(
            pd, std::move(plan), tensor::view(spec_.weights.data(), w),
            spec_.bias.empty() ? tensor() : tensor::view(spec_.bias.data(), {spec_.out_channels()}));
    }

    conv_spec spec_;
    detail::shape_cache<dims, entry> cache_;
};

}  // namespace onednn
SGMATCH_END_NAMESPACE
