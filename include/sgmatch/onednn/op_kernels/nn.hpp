// sgmatch/onednn/op_kernels/nn.hpp - BatchNorm (+ relu), pooling, Softmax, LRN, LayerNormalization,
// Gemm and MatMul on oneDNN primitives.
#pragma once

#include <algorithm>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <type_traits>
#include <unordered_map>
#include <utility>
#include <vector>

#include <oneapi/dnnl/dnnl.hpp>

#include "sgmatch/detail/config.hpp"
#include "sgmatch/onednn/compat.hpp"
#include "sgmatch/onednn/post_ops.hpp"
#include "sgmatch/onednn/op_kernels/base.hpp"
#include "sgmatch/onednn/tensor.hpp"

SGMATCH_BEGIN_NAMESPACE
namespace onednn {

/// An inference BatchNorm with constant parameters, relu fused when `relu` (the "batchnorm +
/// relu" fusion).
struct batch_norm_spec {
    std::string name = "batch_norm";
    std::vector<float> scale, shift, mean, var;  // one value per channel (axis 1)
    float eps = 1e-5f;
    bool relu = false;
};

/// BatchNorm (+ relu) as one oneDNN primitive in the source's layout (so a blocked or NHWC
/// tensor from a conv is read as it is); one primitive per source layout, cached; thread-safe.
class fused_batch_norm final : public fused_kernel {
public:
    explicit fused_batch_norm(batch_norm_spec s) : spec_(std::move(s)) {
        const std::size_t C = spec_.scale.size();
        if (C == 0 || spec_.shift.size() != C || spec_.mean.size() != C || spec_.var.size() != C)
            throw kernel_error("sgmatch::onednn::fused_batch_norm('" + spec_.name +
                               "'): scale, shift, mean and var need one value per channel each");
        ss_ = spec_.scale;
        ss_.insert(ss_.end(), spec_.shift.begin(), spec_.shift.end());
        if (spec_.relu) post_ops_.push_back(post_op::eltwise(dnnl::algorithm::eltwise_relu));
    }
    const batch_norm_spec& spec() const { return spec_; }

    tensor run(const tensor& src, const std::vector<tensor>& extra = {}) const override {
        tensor y = tensor::allocate(src.desc());
        run_into(src, extra, y);
        return y;
    }
    /// y has src's dims, in src's layout (dst_desc_for) or another: then src is reordered into
    /// y first and the primitive runs in place there, in y's layout.
    void run_into(const tensor& src, const std::vector<tensor>&, const tensor& y) const override {
        const auto C = static_cast<std::int64_t>(spec_.mean.size());
        const dims shape = src.shape();
        if (shape.size() < 2 || shape[1] != C)
            throw kernel_error("sgmatch::onednn::fused_batch_norm('" + spec_.name + "'): input " + to_string(shape) +
                               " does not have " + std::to_string(C) + " channels");
        if (y.empty() || y.shape() != shape)
            throw kernel_error("sgmatch::onednn::fused_batch_norm('" + spec_.name + "'): the destination is not of dims " +
                               to_string(shape));
        const tensor* x = &src;
        if (y.desc() != src.desc()) {
            dnnl::stream s(cpu_engine());
            src.reorder_into(y, s);
            s.wait();
            x = &y;  // in place, in y's layout
        }
        const dnnl::memory::desc d = x->desc();
        auto pd = cache_.get(detail::layout_key(d), [&] {
            return detail::with_primitive<dnnl::batch_normalization_forward>(std::make_shared<const dnnl::batch_normalization_forward::primitive_desc>(
                compat::batch_norm_pd(cpu_engine(), d, spec_.eps, spec_.relu, detail::user_scratchpad())));
        });
        std::unordered_map<int, dnnl::memory> args{{DNNL_ARG_SRC, x->memory()},
                                                   {DNNL_ARG_MEAN, tensor::view(spec_.mean.data(), {C}).memory()},
                                                   {DNNL_ARG_VARIANCE, tensor::view(spec_.var.data(), {C}).memory()},
                                                   {DNNL_ARG_DST, y.memory()}};
        compat::bind_scale_shift(args, cpu_engine(), ss_.data(), C);
        detail::exec_with_scratch(pd->prim, pd->scratchpad_desc(), std::move(args));
    }
    /// The destination keeps the source's layout: for a plain source, the plain layout.
    dnnl::memory::desc dst_desc(const dims& src) const override { return plain_desc(src); }
    dnnl::memory::desc dst_desc_for(const tensor& src) const override { return src.desc(); }
    const std::vector<post_op>& post_ops() const override { return post_ops_; }

private:
    batch_norm_spec spec_;
    std::vector<float> ss_;
    std::vector<post_op> post_ops_;
    detail::shape_cache<std::string,
                        detail::built_primitive<dnnl::batch_normalization_forward::primitive_desc, dnnl::batch_normalization_forward>>
        cache_;
};

/// Inference BatchNorm with constant parameters, in the input's layout (a fused_batch_norm
/// without relu).
class batch_norm_kernel final : public op_kernel {
public:
    batch_norm_kernel(std::vector<float> scale, std::vector<float> shift, std::vector<float> mean, std::vector<float> var,
                      float eps)
        : k_(batch_norm_spec{"batch_norm", std::move(scale), std::move(shift), std::move(mean), std::move(var), eps, false}) {}
    const char* kind() const override { return "batch_norm"; }
    tensor run(const std::vector<tensor>& in) const override { return k_.run(in.at(0)); }

private:
    fused_batch_norm k_;
};

/// Max or average pooling (2-D or 3-D), destination layout chosen by oneDNN. Global average
/// pooling is average pooling with the window set to the input's spatial size (kernel empty).
/// Dilations as ONNX counts them (1: adjacent taps; empty: all 1).
class pool_kernel final : public op_kernel {
public:
    /// plain_dst: the destination in plain layout instead of oneDNN's choice.
    pool_kernel(bool max, dims kernel, dims strides, dims pads_begin, dims pads_end, bool count_include_pad = false,
                bool plain_dst = false, dims dilations = {})
        : max_(max), kernel_(std::move(kernel)), strides_(std::move(strides)), pb_(std::move(pads_begin)),
          pe_(std::move(pads_end)), dil_(std::move(dilations)), include_pad_(count_include_pad), plain_(plain_dst) {}
    const char* kind() const override { return "pool"; }
    tensor run(const std::vector<tensor>& in) const override {
        const tensor& x = in.at(0);
        const dnnl::memory::desc d = x.desc();
        const dims xs = x.shape();
        const std::size_t sp = xs.size() - 2;
        auto pd = cache_.get(detail::layout_key(d), [&] {
            dims k = kernel_, st = strides_, pb = pb_, pe = pe_;
            if (k.empty()) k.assign(xs.begin() + 2, xs.end());  // global
            if (st.empty()) st.assign(sp, 1);
            if (pb.empty()) pb.assign(sp, 0);
            if (pe.empty()) pe.assign(sp, 0);
            dims gaps(sp, 0);  // oneDNN's dilation: the gap between taps
            for (std::size_t i = 0; i < sp && i < dil_.size(); ++i) gaps[i] = dil_[i] - 1;
            dims out{xs[0], xs[1]};
            for (std::size_t i = 0; i < sp; ++i) out.push_back((xs[2 + i] + pb[i] + pe[i] - (k[i] - 1) * (gaps[i] + 1) - 1) / st[i] + 1);
            const auto alg = max_ ? dnnl::algorithm::pooling_max
                                  : include_pad_ ? dnnl::algorithm::pooling_avg_include_padding
                                                 : dnnl::algorithm::pooling_avg_exclude_padding;
            const dnnl::memory::desc dst(out, dnnl::memory::data_type::f32,
                                         plain_ ? plain_tag(out.size()) : dnnl::memory::format_tag::any);
            return detail::with_primitive<compat::pooling_forward>(detail::make_pd<pd_t>(
                [&] { return compat::pooling_pd(cpu_engine(), alg, d, dst, st, k, pb, pe, detail::user_scratchpad(), gaps); },
                [&] { return "sgmatch::onednn::pool_kernel: oneDNN has no pooling for input " + to_string(xs); }));
        });
        return detail::run_src_dst(*pd, x);
    }

private:
    using pd_t = compat::pooling_forward::primitive_desc;
    bool max_;
    dims kernel_, strides_, pb_, pe_, dil_;
    bool include_pad_, plain_;
    detail::shape_cache<std::string, detail::built_primitive<pd_t, compat::pooling_forward>> cache_;
};

/// Softmax, or with Log its logarithm (LogSoftmax), along one axis (ONNX opset 13), in the
/// input's layout where oneDNN has a softmax for it, else in the plain layout.
template <bool Log>
class softmax_kernel_of final : public op_kernel {
public:
    explicit softmax_kernel_of(std::int64_t axis) : axis_(axis) {}
    const char* kind() const override { return Log ? "log_softmax" : "softmax"; }
    tensor run(const std::vector<tensor>& in) const override {
        const tensor& x = in.at(0);
        const dnnl::memory::desc d = x.desc();
        const char* what = Log ? "log_softmax_kernel" : "softmax_kernel";
        const int axis = detail::axis_index(axis_, x.shape().size(), what);
        auto pd = cache_.get(detail::layout_key(d), [&] {
            return detail::with_primitive<prim_t>(detail::pd_in_layout_or_plain<pd_t>(d, what, [&](const dnnl::memory::desc& md) {
                if constexpr (Log) return compat::log_softmax_pd(cpu_engine(), md, axis, detail::user_scratchpad());
                else return compat::softmax_pd(cpu_engine(), md, axis, detail::user_scratchpad());
            }));
        });
        return detail::run_src_dst(*pd, x);
    }

private:
    using prim_t = std::conditional_t<Log, compat::log_softmax_forward, dnnl::softmax_forward>;
    using pd_t = typename prim_t::primitive_desc;
    std::int64_t axis_;
    detail::shape_cache<std::string, detail::built_primitive<pd_t, prim_t>> cache_;
};
using softmax_kernel = softmax_kernel_of<false>;
using log_softmax_kernel = softmax_kernel_of<true>;

/// ONNX LRN (across channels): x / (bias + alpha / size * sum of x^2 over `size` channels)^beta,
/// in the input's layout where oneDNN has an LRN for it. oneDNN's window is centred, so `size`
/// must be odd (ONNX's window for an even size leans one channel up).
class lrn_kernel final : public op_kernel {
public:
    lrn_kernel(std::int64_t size, float alpha, float beta, float bias)
        : size_(size), alpha_(alpha), beta_(beta), bias_(bias) {
        if (size < 1 || size % 2 == 0)
            throw kernel_error("sgmatch::onednn::lrn_kernel: size " + std::to_string(size) +
                               " must be odd and positive (oneDNN's window is centred)");
    }
    const char* kind() const override { return "lrn"; }
    tensor run(const std::vector<tensor>& in) const override {
        const tensor& x = in.at(0);
        const dnnl::memory::desc d = x.desc();
        if (x.shape().size() < 3)
            throw kernel_error("sgmatch::onednn::lrn_kernel: input " + to_string(x.shape()) + " has no spatial axis");
        auto pd = cache_.get(detail::layout_key(d), [&] {
            return detail::with_primitive<dnnl::lrn_forward>(
                detail::pd_in_layout_or_plain<pd_t>(d, "lrn_kernel", [&](const dnnl::memory::desc& md) {
                    return compat::lrn_pd(cpu_engine(), md, size_, alpha_, beta_, bias_, detail::user_scratchpad());
                }));
        });
        return detail::run_src_dst(*pd, x);
    }

private:
    using pd_t = dnnl::lrn_forward::primitive_desc;
    std::int64_t size_;
    float alpha_, beta_, bias_;
    detail::shape_cache<std::string, detail::built_primitive<pd_t, dnnl::lrn_forward>> cache_;
};

/// ONNX LayerNormalization with constant scale (and bias): normalized over the axes from `axis`
/// on, read as a plain [outer, inner] matrix (oneDNN normalizes the last axis); the result plain.
class layer_norm_kernel final : public op_kernel {
public:
    layer_norm_kernel(std::vector<float> scale, std::vector<float> shift, std::int64_t axis, float eps)
        : scale_(std::move(scale)), shift_(std::move(shift)), axis_(axis), eps_(eps) {
        if (scale_.empty() || (!shift_.empty() && shift_.size() != scale_.size()))
            throw kernel_error("sgmatch::onednn::layer_norm_kernel: the scale is empty or the bias has another size");
    }
    const char* kind() const override { return "layer_norm"; }
    tensor run(const std::vector<tensor>& in) const override {
        const dims xs = in.at(0).shape();
        const auto axis = static_cast<std::size_t>(detail::axis_index(axis_, xs.size(), "layer_norm_kernel"));
        std::int64_t outer = 1, inner = 1;
        for (std::size_t i = 0; i < xs.size(); ++i) (i < axis ? outer : inner) *= xs[i];
        const auto K = static_cast<std::int64_t>(scale_.size());
        if (inner != K)
            throw kernel_error("sgmatch::onednn::layer_norm_kernel: input " + to_string(xs) + " normalizes " +
                               std::to_string(inner) + " values from axis " + std::to_string(axis) + ", the scale has " +
                               std::to_string(K));
        auto pd = cache_.get(std::to_string(outer), [&] {
            return detail::with_primitive<dnnl::layer_normalization_forward>(detail::make_pd<pd_t>(
                [&] {
                    return compat::layer_norm_pd(cpu_engine(), plain_desc({outer, K}), eps_, !shift_.empty(),
                                                 detail::user_scratchpad());
                },
                [&] {
                    return "sgmatch::onednn::layer_norm_kernel: oneDNN has no layer normalization for " +
                           to_string({outer, K});
                }));
        });
        dnnl::stream s(cpu_engine());
        const tensor src = in[0].in_layout(plain_desc(xs), s).reshaped({outer, K});
        tensor y = tensor::allocate(plain_desc({outer, K}));
        std::unordered_map<int, dnnl::memory> args{{DNNL_ARG_SRC, src.memory()},
                                                   {DNNL_ARG_DST, y.memory()},
                                                   {DNNL_ARG_SCALE, tensor::view(scale_.data(), {K}).memory()}};
        if (!shift_.empty()) args[DNNL_ARG_SHIFT] = tensor::view(shift_.data(), {K}).memory();
        tensor mean, var;  // statistics the primitive may write (none in inference here; kept if asked)
        if (pd->mean_desc().get_size() != 0) {
            mean = tensor::allocate(pd->mean_desc());
            var = tensor::allocate(pd->variance_desc());
            args[DNNL_ARG_MEAN] = mean.memory();
            args[DNNL_ARG_VARIANCE] = var.memory();
        }
        detail::exec_with_scratch(pd->prim, pd->scratchpad_desc(), std::move(args));
        return y.reshaped(xs);
    }

private:
    using pd_t = dnnl::layer_normalization_forward::primitive_desc;
    std::vector<float> scale_, shift_;
    std::int64_t axis_;
    float eps_;
    detail::shape_cache<std::string, detail::built_primitive<pd_t, dnnl::layer_normalization_forward>> cache_;
};

/// ONNX Gemm with a constant B: y = alpha * A' B' + beta * C as a oneDNN matmul; A is read
/// plain [M, K]; B (weights) is stored [K, N] after the transpose; C is empty or [N] / [1, N].
class gemm_kernel final : public op_kernel {
public:
    gemm_kernel(dims b_dims, const std::vector<float>& b, bool trans_b, std::vector<float> bias, bool trans_a, float alpha,
                float beta)
        : trans_a_(trans_a) {
        if (b_dims.size() != 2) throw kernel_error("sgmatch::onednn::gemm_kernel: B must be 2-D");
        K_ = trans_b ? b_dims[1] : b_dims[0];
        N_ = trans_b ? b_dims[0] : b_dims[1];
        w_.resize(static_cast<std::size_t>(K_ * N_));
        for (std::int64_t k = 0; k < K_; ++k)
            for (std::int64_t n = 0; n < N_; ++n)
                w_[static_cast<std::size_t>(k * N_ + n)] =
                    alpha * b[static_cast<std::size_t>(trans_b ? n * K_ + k : k * N_ + n)];
        if (!bias.empty()) {
            if (static_cast<std::int64_t>(bias.size()) != N_)
                throw kernel_error("sgmatch::onednn::gemm_kernel: C must have N values");
            for (auto& v : bias) v *= beta;
            bias_ = std::move(bias);
        }
    }
    const char* kind() const override { return "gemm"; }
    tensor run(const std::vector<tensor>& in) const override {
        dnnl::stream s(cpu_engine());
        tensor a = in.at(0).in_layout(plain_desc(in[0].shape()), s);
        dims ad = a.shape();
        if (ad.size() != 2) throw kernel_error("sgmatch::onednn::gemm_kernel: A must be 2-D, got " + to_string(ad));
        if (trans_a_) {  // materialize A^T
            const dnnl::memory::desc t({ad[1], ad[0]}, dnnl::memory::data_type::f32, dnnl::memory::format_tag::ba);
            tensor at = tensor::allocate(plain_desc({ad[1], ad[0]}));
            tensor(dnnl::memory(t, cpu_engine(), a.memory().get_data_handle())).reorder_into(at, s);
            a = at;
            ad = a.shape();
        }
        if (ad[1] != K_)
            throw kernel_error("sgmatch::onednn::gemm_kernel: A " + to_string(ad) + " has " + std::to_string(ad[1]) +
                               " columns, B has " + std::to_string(K_) + " rows");
        const std::int64_t M = ad[0];
        auto e = cache_.get(std::to_string(M), [&] {
            const dnnl::memory::desc bias_md = bias_.empty() ? dnnl::memory::desc() : plain_desc({1, N_});
            return detail::with_primitive<dnnl::matmul>(std::make_shared<const dnnl::matmul::primitive_desc>(compat::matmul_pd(
                cpu_engine(), plain_desc({M, K_}), plain_desc({K_, N_}), bias_md, plain_desc({M, N_}),
                detail::user_scratchpad())));
        });
        tensor y = tensor::allocate(plain_desc({M, N_}));
        std::unordered_map<int, dnnl::memory> args{{DNNL_ARG_SRC, a.memory()},
                                                   {DNNL_ARG_WEIGHTS, tensor::view(w_.data(), {K_, N_}).memory()},
                                                   {DNNL_ARG_DST, y.memory()}};
        if (!bias_.empty()) args[DNNL_ARG_BIAS] = tensor::view(bias_.data(), {1, N_}).memory();
        detail::exec_with_scratch(e->prim, e->scratchpad_desc(), std::move(args));
        return y;
    }

private:
    bool trans_a_;
    std::int64_t K_ = 0, N_ = 0;
    std::vector<float> w_, bias_;
    detail::shape_cache<std::string, detail::built_primitive<dnnl::matmul::primitive_desc, dnnl::matmul>> cache_;
};

/// ONNX MatMul of two tensors computed at run time (or a constant right operand): [.., M, K] x
/// [.., K, N], batch dims broadcast (NumPy rules), both read plain; the result plain.
class matmul_kernel final : public op_kernel {
public:
    const char* kind() const override { return "matmul"; }
    bool reads_constants() const override { return true; }
    tensor run(const std::vector<tensor>& in) const override {
        if (in.size() != 2) throw kernel_error("sgmatch::onednn::matmul_kernel: needs two operands");
        dims a = in[0].shape(), b = in[1].shape();
        if (a.size() < 2 || b.size() < 2)
            throw kernel_error("sgmatch::onednn::matmul_kernel: operands " + to_string(a) + " and " + to_string(b) +
                               " must be at least 2-D");
        const std::size_t rank = std::max(a.size(), b.size());
        const dims a0 = a, b0 = b;
        a.insert(a.begin(), rank - a.size(), 1);
        b.insert(b.begin(), rank - b.size(), 1);
        if (a[rank - 1] != b[rank - 2])
            throw kernel_error("sgmatch::onednn::matmul_kernel: " + to_string(a0) + " x " + to_string(b0) +
                               ": inner dimensions differ");
        dims y = a;
        y[rank - 1] = b[rank - 1];
        for (std::size_t i = 0; i + 2 < rank; ++i) {
            if (a[i] != b[i] && a[i] != 1 && b[i] != 1)
                throw kernel_error("sgmatch::onednn::matmul_kernel: batch dims of " + to_string(a0) + " and " +
                                   to_string(b0) + " do not broadcast");
            y[i] = std::max(a[i], b[i]);
        }
        auto pd = cache_.get(to_string(a) + "x" + to_string(b), [&] {
            return detail::with_primitive<dnnl::matmul>(detail::make_pd<dnnl::matmul::primitive_desc>(
                [&] {
                    return compat::matmul_pd(cpu_engine(), plain_desc(a), plain_desc(b), dnnl::memory::desc(), plain_desc(y),
                                             detail::user_scratchpad());
                },
                [&] { return "sgmatch::onednn::matmul_kernel: oneDNN has no matmul for " + to_string(a0) + " x " + to_string(b0); }));
        });
        dnnl::stream s(cpu_engine());
        const tensor ta = in[0].in_layout(plain_desc(a0), s).reshaped(a);
        const tensor tb = in[1].in_layout(plain_desc(b0), s).reshaped(b);
        tensor out = tensor::allocate(plain_desc(y));
        detail::exec_with_scratch(pd->prim, pd->scratchpad_desc(),
                                  {{DNNL_ARG_SRC, ta.memory()}, {DNNL_ARG_WEIGHTS, tb.memory()}, {DNNL_ARG_DST, out.memory()}});
        return out;
    }

private:
    detail::shape_cache<std::string, detail::built_primitive<dnnl::matmul::primitive_desc, dnnl::matmul>> cache_;
};

}  // namespace onednn
SGMATCH_END_NAMESPACE
