// sgmatch/onednn/op_kernels.hpp - single ops as oneDNN primitives: the unfused baseline (one
// primitive per op) and the kernels for supported ops outside fused nodes (pooling, Gemm, ...).
//
// Each kernel works in the layout its input arrives in (eltwise, BatchNorm, binary keep it;
// pooling lets oneDNN choose its destination), builds its primitive once per input shape and
// layout, and is thread-safe like fused_conv (cache under a lock, per-call scratchpad).
//
// Known limitations: fp32; Gemm needs a constant B (weights) and at most a [N] or [1, N] bias;
// Flatten, Reshape, Transpose, LayerNorm and MatMul work on plain layouts (their inputs are
// reordered when they come blocked); binary operands broadcast only from plain layouts; LRN
// needs an odd size; Softmax follows ONNX opset 13 (one axis).
#pragma once

#include <algorithm>
#include <map>
#include <memory>
#include <mutex>
#include <string>
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

/// One op on oneDNN. run() takes the op's runtime inputs in order.
class op_kernel {
public:
    virtual ~op_kernel() = default;
    virtual tensor run(const std::vector<tensor>& inputs) const = 0;
    virtual const char* kind() const = 0;
    /// Whether run() takes the op's constant inputs too (a binary operand, a matmul's right
    /// operand, a concat's parts); otherwise the kernel holds its constants and run() gets only
    /// the inputs computed at run time.
    virtual bool reads_constants() const { return false; }
};

namespace detail {

// A key for a memory layout: dims plus the bytes of its C description (layouts with equal dims differ).
inline std::string layout_key(const dnnl::memory::desc& d) {
#if DNNL_VERSION_MAJOR >= 3
    std::string k = to_string(compat::dims_of(d));
    for (auto s : d.get_strides()) k += "," + std::to_string(s);
    return k + "/" + std::to_string(d.get_size());
#else
    return std::string(reinterpret_cast<const char*>(&d.data), sizeof(d.data));
#endif
}

template <class Prim>
void exec_with_scratch(const Prim& p, const dnnl::memory::desc& scratch_md, std::unordered_map<int, dnnl::memory> args) {
    dnnl::stream s(cpu_engine());
    const tensor scratch = tensor::allocate(scratch_md);
    args[DNNL_ARG_SCRATCHPAD] = scratch.memory();
    p.execute(s, args);
    s.wait();
}

inline dnnl::primitive_attr user_scratchpad() {
    dnnl::primitive_attr a;
    a.set_scratchpad_mode(dnnl::scratchpad_mode::user);
    return a;
}

// make()'s primitive descriptor, or a kernel_error: no_primitive() (built only then) followed
// by oneDNN's reason.
template <class PD, class Make, class Message>
std::shared_ptr<const PD> make_pd(Make make, Message no_primitive) {
    try {
        return std::make_shared<const PD>(make());
    } catch (const dnnl::error& e) {
        throw kernel_error(no_primitive() + " (" + e.what() + ")");
    }
}

// A primitive descriptor for layout d, or, where oneDNN has none for it, for the plain layout of
// the same shape (the kernel then reads its input reordered to pd->src_desc()).
template <class PD, class Make>
std::shared_ptr<const PD> pd_in_layout_or_plain(const dnnl::memory::desc& d, const char* what, Make make) {
    try {
        return std::make_shared<const PD>(make(d));
    } catch (const dnnl::error&) {
    }
    const dims shape = compat::dims_of(d);
    return make_pd<PD>([&] { return make(plain_desc(shape)); }, [&] {
        return std::string("sgmatch::onednn::") + what + ": oneDNN has no primitive for input " + to_string(shape);
    });
}

// A one-source, one-destination primitive run on x (reordered to the pd's source layout when it
// has another), into a new tensor in the pd's destination layout.
template <class Prim, class PD>
tensor run_src_dst(const PD& pd, const tensor& x) {
    dnnl::stream s(cpu_engine());
    const tensor src = x.in_layout(pd.src_desc(), s);
    tensor y = tensor::allocate(pd.dst_desc());
    exec_with_scratch(Prim(pd), pd.scratchpad_desc(), {{DNNL_ARG_SRC, src.memory()}, {DNNL_ARG_DST, y.memory()}});
    return y;
}

// axis in [-rank, rank) as an index, or a kernel_error naming the kernel.
inline int axis_index(std::int64_t axis, std::size_t rank, const char* what) {
    const auto r = static_cast<std::int64_t>(rank);
    if (axis < -r || axis >= r)
        throw kernel_error(std::string("sgmatch::onednn::") + what + ": axis " + std::to_string(axis) +
                           " is out of range for rank " + std::to_string(rank));
    return static_cast<int>(axis < 0 ? axis + r : axis);
}

}  // namespace detail

/// A chain of eltwise ops (one op may be several: HardSigmoid is linear then clip), in the
/// input's layout, into a new tensor.
class eltwise_kernel final : public op_kernel {
public:
    explicit eltwise_kernel(std::vector<post_op> ops) : ops_(std::move(ops)) {
        for (auto& p : ops_)
            if (!p.is<post_op::eltwise_op>()) throw kernel_error("sgmatch::onednn::eltwise_kernel: not an eltwise op");
    }
    const char* kind() const override { return "eltwise"; }
    tensor run(const std::vector<tensor>& in) const override {
        const dnnl::memory::desc d = in.at(0).desc();
        auto e = cache_.get(detail::layout_key(d), [&] {
            auto v = std::make_shared<std::vector<dnnl::eltwise_forward>>();
            for (auto& p : ops_) {
                const auto* e = p.as<post_op::eltwise_op>();
                v->emplace_back(compat::eltwise_pd(cpu_engine(), e->alg, d, e->alpha, e->beta));
            }
            return std::shared_ptr<const std::vector<dnnl::eltwise_forward>>(v);
        });
        tensor y = tensor::allocate(d);
        dnnl::stream s(cpu_engine());
        for (std::size_t i = 0; i < e->size(); ++i)
            (*e)[i].execute(s, {{DNNL_ARG_SRC, i == 0 ? in[0].memory() : y.memory()}, {DNNL_ARG_DST, y.memory()}});
        s.wait();
        return y;
    }

private:
    std::vector<post_op> ops_;
    detail::shape_cache<std::string, std::vector<dnnl::eltwise_forward>> cache_;
};

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
    /// y must have src's layout.
    void run_into(const tensor& src, const std::vector<tensor>&, const tensor& y) const override {
        const auto C = static_cast<std::int64_t>(spec_.mean.size());
        const dims shape = src.shape();
        if (shape.size() < 2 || shape[1] != C)
            throw kernel_error("sgmatch::onednn::fused_batch_norm('" + spec_.name + "'): input " + to_string(shape) +
                               " does not have " + std::to_string(C) + " channels");
        const dnnl::memory::desc d = src.desc();
        if (y.empty() || y.desc() != d)
            throw kernel_error("sgmatch::onednn::fused_batch_norm('" + spec_.name +
                               "'): the destination does not have the source's layout");
        auto pd = cache_.get(detail::layout_key(d), [&] {
            return std::make_shared<const dnnl::batch_normalization_forward::primitive_desc>(
                compat::batch_norm_pd(cpu_engine(), d, spec_.eps, spec_.relu, detail::user_scratchpad()));
        });
        std::unordered_map<int, dnnl::memory> args{{DNNL_ARG_SRC, src.memory()},
                                                   {DNNL_ARG_MEAN, tensor::view(spec_.mean.data(), {C}).memory()},
                                                   {DNNL_ARG_VARIANCE, tensor::view(spec_.var.data(), {C}).memory()},
                                                   {DNNL_ARG_DST, y.memory()}};
        compat::bind_scale_shift(args, cpu_engine(), ss_.data(), C);
        detail::exec_with_scratch(dnnl::batch_normalization_forward(*pd), pd->scratchpad_desc(), std::move(args));
    }
    /// The destination keeps the source's layout: for a plain source, the plain layout.
    dnnl::memory::desc dst_desc(const dims& src) const override { return plain_desc(src); }
    const std::vector<post_op>& post_ops() const override { return post_ops_; }

private:
    batch_norm_spec spec_;
    std::vector<float> ss_;
    std::vector<post_op> post_ops_;
    detail::shape_cache<std::string, dnnl::batch_normalization_forward::primitive_desc> cache_;
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

/// a (alg) b: the result in a's layout; b in a's layout when the shapes are equal, else a plain
/// broadcast operand (NumPy rules; a lower-rank b gets leading 1s).
class binary_kernel final : public op_kernel {
public:
    explicit binary_kernel(dnnl::algorithm alg) : alg_(alg) {}
    const char* kind() const override { return "binary"; }
    bool reads_constants() const override { return true; }
    tensor run(const std::vector<tensor>& in) const override {
        const tensor& a = in.at(0);
        const dnnl::memory::desc da = a.desc();
        dims db = in.at(1).shape();
        const dims sa = a.shape();
        if (db.size() > sa.size())
            throw kernel_error("sgmatch::onednn::binary_kernel: operand " + to_string(db) + " has a higher rank than " +
                               to_string(sa));
        db.insert(db.begin(), sa.size() - db.size(), 1);
        for (std::size_t i = 0; i < sa.size(); ++i)
            if (db[i] != sa[i] && db[i] != 1)
                throw kernel_error("sgmatch::onednn::binary_kernel: operand " + to_string(in[1].shape()) +
                                   " does not broadcast to " + to_string(sa) + " (only the second operand broadcasts)");
        const dnnl::memory::desc dbm = db == sa ? da : plain_desc(db);
        auto pd = cache_.get(detail::layout_key(da) + "|" + detail::layout_key(dbm), [&] {
            return std::make_shared<const dnnl::binary::primitive_desc>(compat::binary_pd(cpu_engine(), alg_, da, dbm, da));
        });
        dnnl::stream s(cpu_engine());
        const tensor b = db == sa ? in[1].in_layout(da, s) : in[1].in_layout(plain_desc(in[1].shape()), s).reshaped(db);
        tensor y = tensor::allocate(da);
        dnnl::binary(*pd).execute(s, {{DNNL_ARG_SRC_0, a.memory()}, {DNNL_ARG_SRC_1, b.memory()}, {DNNL_ARG_DST, y.memory()}});
        s.wait();
        return y;
    }

private:
    dnnl::algorithm alg_;
    detail::shape_cache<std::string, dnnl::binary::primitive_desc> cache_;
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
            return detail::make_pd<pd_t>(
                [&] { return compat::pooling_pd(cpu_engine(), alg, d, dst, st, k, pb, pe, detail::user_scratchpad(), gaps); },
                [&] { return "sgmatch::onednn::pool_kernel: oneDNN has no pooling for input " + to_string(xs); });
        });
        return detail::run_src_dst<compat::pooling_forward>(*pd, x);
    }

private:
    using pd_t = compat::pooling_forward::primitive_desc;
    bool max_;
    dims kernel_, strides_, pb_, pe_, dil_;
    bool include_pad_, plain_;
    detail::shape_cache<std::string, pd_t> cache_;
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
            return std::make_shared<const dnnl::matmul::primitive_desc>(compat::matmul_pd(
                cpu_engine(), plain_desc({M, K_}), plain_desc({K_, N_}), bias_md, plain_desc({M, N_}),
                detail::user_scratchpad()));
        });
        tensor y = tensor::allocate(plain_desc({M, N_}));
        std::unordered_map<int, dnnl::memory> args{{DNNL_ARG_SRC, a.memory()},
                                                   {DNNL_ARG_WEIGHTS, tensor::view(w_.data(), {K_, N_}).memory()},
                                                   {DNNL_ARG_DST, y.memory()}};
        if (!bias_.empty()) args[DNNL_ARG_BIAS] = tensor::view(bias_.data(), {1, N_}).memory();
        detail::exec_with_scratch(dnnl::matmul(*e), e->scratchpad_desc(), std::move(args));
        return y;
    }

private:
    bool trans_a_;
    std::int64_t K_ = 0, N_ = 0;
    std::vector<float> w_, bias_;
    detail::shape_cache<std::string, dnnl::matmul::primitive_desc> cache_;
};

/// Flatten: to plain layout, then the same buffer read as [d0 * ... * d(axis-1), rest].
class flatten_kernel final : public op_kernel {
public:
    explicit flatten_kernel(std::int64_t axis) : axis_(axis) {}
    const char* kind() const override { return "flatten"; }
    tensor run(const std::vector<tensor>& in) const override {
        dnnl::stream s(cpu_engine());
        const dims d = in.at(0).shape();
        tensor p = tensor::allocate(plain_desc(d));  // a copy: the result must not alias the input
        in[0].reorder_into(p, s);
        s.wait();
        std::int64_t a = 1, b = 1;
        const std::int64_t axis = axis_ < 0 ? axis_ + static_cast<std::int64_t>(d.size()) : axis_;  // counted from the back
        for (std::size_t i = 0; i < d.size(); ++i) (static_cast<std::int64_t>(i) < axis ? a : b) *= d[i];
        return p.reshaped({a, b});
    }

private:
    std::int64_t axis_;
};

/// Softmax along one axis (ONNX opset 13), in the input's layout where oneDNN has a softmax for
/// it, else in the plain layout.
class softmax_kernel final : public op_kernel {
public:
    explicit softmax_kernel(std::int64_t axis) : axis_(axis) {}
    const char* kind() const override { return "softmax"; }
    tensor run(const std::vector<tensor>& in) const override {
        const tensor& x = in.at(0);
        const dnnl::memory::desc d = x.desc();
        const int axis = detail::axis_index(axis_, x.shape().size(), "softmax_kernel");
        auto pd = cache_.get(detail::layout_key(d), [&] {
            return detail::pd_in_layout_or_plain<pd_t>(d, "softmax_kernel", [&](const dnnl::memory::desc& md) {
                return compat::softmax_pd(cpu_engine(), md, axis, detail::user_scratchpad());
            });
        });
        return detail::run_src_dst<dnnl::softmax_forward>(*pd, x);
    }

private:
    using pd_t = dnnl::softmax_forward::primitive_desc;
    std::int64_t axis_;
    detail::shape_cache<std::string, pd_t> cache_;
};

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
            return detail::pd_in_layout_or_plain<pd_t>(d, "lrn_kernel", [&](const dnnl::memory::desc& md) {
                return compat::lrn_pd(cpu_engine(), md, size_, alpha_, beta_, bias_, detail::user_scratchpad());
            });
        });
        return detail::run_src_dst<dnnl::lrn_forward>(*pd, x);
    }

private:
    using pd_t = dnnl::lrn_forward::primitive_desc;
    std::int64_t size_;
    float alpha_, beta_, bias_;
    detail::shape_cache<std::string, pd_t> cache_;
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
            return detail::make_pd<pd_t>(
                [&] {
                    return compat::layer_norm_pd(cpu_engine(), plain_desc({outer, K}), eps_, !shift_.empty(),
                                                 detail::user_scratchpad());
                },
                [&] {
                    return "sgmatch::onednn::layer_norm_kernel: oneDNN has no layer normalization for " +
                           to_string({outer, K});
                });
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
        detail::exec_with_scratch(dnnl::layer_normalization_forward(*pd), pd->scratchpad_desc(), std::move(args));
        return y.reshaped(xs);
    }

private:
    using pd_t = dnnl::layer_normalization_forward::primitive_desc;
    std::vector<float> scale_, shift_;
    std::int64_t axis_;
    float eps_;
    detail::shape_cache<std::string, pd_t> cache_;
};

/// Concat along `axis`: each part read in the layout it comes in, the result in oneDNN's choice.
class concat_kernel final : public op_kernel {
public:
    explicit concat_kernel(std::int64_t axis) : axis_(axis) {}
    const char* kind() const override { return "concat"; }
    bool reads_constants() const override { return true; }
    tensor run(const std::vector<tensor>& in) const override {
        if (in.empty()) throw kernel_error("sgmatch::onednn::concat_kernel: no inputs");
        const dims first = in[0].shape();
        const int axis = detail::axis_index(axis_, first.size(), "concat_kernel");
        dims out = first;
        out[static_cast<std::size_t>(axis)] = 0;
        std::string key;
        for (const auto& t : in) {
            dims d = t.shape();
            if (d.size() != first.size())
                throw kernel_error("sgmatch::onednn::concat_kernel: parts " + to_string(first) + " and " + to_string(d) +
                                   " differ in rank");
            out[static_cast<std::size_t>(axis)] += d[static_cast<std::size_t>(axis)];
            d[static_cast<std::size_t>(axis)] = first[static_cast<std::size_t>(axis)];
            if (d != first)
                throw kernel_error("sgmatch::onednn::concat_kernel: parts " + to_string(first) + " and " +
                                   to_string(t.shape()) + " differ outside axis " + std::to_string(axis));
            key += detail::layout_key(t.desc()) + "|";
        }
        // One layout for every part and the result: the one that holds most of the elements
        // (parts in layouts mixed are concatenated by oneDNN's reference code, and the result's
        // layout would be the first part's); the others are reordered into it.
        auto plan = cache_.get(key, [&] {
            // layout (as a key) -> elements held in it, and a part in it
            std::map<std::string, std::pair<std::size_t, std::size_t>> weight;
            for (std::size_t i = 0; i < in.size(); ++i) {
                const auto l = compat::same_layout(in[i].desc(), first);
                auto& w = weight[l ? detail::layout_key(*l) : "?" + std::to_string(i)];
                w.first += in[i].element_count();
                w.second = i;
            }
            std::size_t best = 0, most = 0;
            for (const auto& [k, w] : weight)
                if (w.first > most && compat::same_layout(in[w.second].desc(), first)) most = w.first, best = w.second;
            const auto dst = weight.size() > 1 ? compat::same_layout(in[best].desc(), out) : std::nullopt;
            auto p = std::make_shared<concat_plan>();
            for (const auto& t : in) p->srcs.push_back(dst ? compat::same_layout(in[best].desc(), t.shape()).value_or(t.desc()) : t.desc());
            p->pd = detail::make_pd<pd_t>(
                [&] {
                    return dst ? compat::concat_pd(cpu_engine(), *dst, axis, p->srcs, detail::user_scratchpad())
                               : compat::concat_pd(cpu_engine(), axis, p->srcs, detail::user_scratchpad());
                },
                [] { return std::string("sgmatch::onednn::concat_kernel: oneDNN has no concat for these parts"); });
            return std::shared_ptr<const concat_plan>(std::move(p));
        });
        const pd_t* pd = plan->pd.get();
        tensor y = tensor::allocate(pd->dst_desc());
        std::unordered_map<int, dnnl::memory> args{{DNNL_ARG_DST, y.memory()}};
        std::vector<tensor> moved;  // parts reordered into the common layout, alive until the run ends
        for (std::size_t i = 0; i < in.size(); ++i) {
            if (in[i].desc() == plan->srcs[i]) {
                args[DNNL_ARG_MULTIPLE_SRC + static_cast<int>(i)] = in[i].memory();
                continue;
            }
            moved.push_back(in[i].in_layout(plan->srcs[i], dnnl::stream(cpu_engine())));
            args[DNNL_ARG_MULTIPLE_SRC + static_cast<int>(i)] = moved.back().memory();
        }
        detail::exec_with_scratch(dnnl::concat(*pd), pd->scratchpad_desc(), std::move(args));
        return y;
    }

private:
    using pd_t = dnnl::concat::primitive_desc;
    struct concat_plan {
        std::vector<dnnl::memory::desc> srcs;  // the layout each part is read in
        std::shared_ptr<const pd_t> pd;
    };
    std::int64_t axis_;
    detail::shape_cache<std::string, concat_plan> cache_;
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
            return detail::make_pd<dnnl::matmul::primitive_desc>(
                [&] {
                    return compat::matmul_pd(cpu_engine(), plain_desc(a), plain_desc(b), dnnl::memory::desc(), plain_desc(y),
                                             detail::user_scratchpad());
                },
                [&] { return "sgmatch::onednn::matmul_kernel: oneDNN has no matmul for " + to_string(a0) + " x " + to_string(b0); });
        });
        dnnl::stream s(cpu_engine());
        const tensor ta = in[0].in_layout(plain_desc(a0), s).reshaped(a);
        const tensor tb = in[1].in_layout(plain_desc(b0), s).reshaped(b);
        tensor out = tensor::allocate(plain_desc(y));
        detail::exec_with_scratch(dnnl::matmul(*pd), pd->scratchpad_desc(),
                                  {{DNNL_ARG_SRC, ta.memory()}, {DNNL_ARG_WEIGHTS, tb.memory()}, {DNNL_ARG_DST, out.memory()}});
        return out;
    }

private:
    detail::shape_cache<std::string, dnnl::matmul::primitive_desc> cache_;
};

/// Transpose (ONNX perm; empty: reversed axes) as one oneDNN reorder into a new plain tensor.
class transpose_kernel final : public op_kernel {
public:
    explicit transpose_kernel(dims perm) : perm_(std::move(perm)) {}
    const char* kind() const override { return "transpose"; }
    tensor run(const std::vector<tensor>& in) const override {
        const dims xs = in.at(0).shape();
        dims perm = perm_;
        if (perm.empty())
            for (std::size_t i = xs.size(); i-- > 0;) perm.push_back(static_cast<std::int64_t>(i));
        std::vector<bool> seen(xs.size(), false);
        bool ok = perm.size() == xs.size();
        for (std::size_t i = 0; ok && i < perm.size(); ++i) {
            ok = perm[i] >= 0 && perm[i] < static_cast<std::int64_t>(xs.size()) && !seen[static_cast<std::size_t>(perm[i])];
            if (ok) seen[static_cast<std::size_t>(perm[i])] = true;
        }
        if (!ok)
            throw kernel_error("sgmatch::onednn::transpose_kernel: perm " + to_string(perm) +
                               " is not a permutation of the axes of " + to_string(xs));
        // The output's axis i is the input's axis perm[i]: the output read with the input's axis
        // order has strides permuted back.
        dims ys(xs.size()), ystrides(xs.size()), xstrides(xs.size());
        for (std::size_t i = 0; i < xs.size(); ++i) ys[i] = xs[static_cast<std::size_t>(perm[i])];
        std::int64_t st = 1;
        for (std::size_t i = xs.size(); i-- > 0;) ystrides[i] = st, st *= ys[i];
        for (std::size_t i = 0; i < xs.size(); ++i) xstrides[static_cast<std::size_t>(perm[i])] = ystrides[i];
        // One reorder from the source in whatever layout it has (NHWC, blocked) into the result.
        dnnl::stream s(cpu_engine());
        tensor y = tensor::allocate(plain_desc(ys));
        const dnnl::memory as_x(dnnl::memory::desc(xs, dnnl::memory::data_type::f32, xstrides), cpu_engine(),
                                y.memory().get_data_handle());
        in[0].reorder_into(tensor(as_x), s);
        s.wait();
        return y;
    }

private:
    dims perm_;
};

/// A reduction over `axes` (all when empty) as a oneDNN reduction primitive, reading the source
/// in its layout; the result plain, the reduced axes kept as 1 or dropped (keepdims; not all of
/// them: a scalar is refused with a kernel_error).
class reduce_kernel final : public op_kernel {
public:
    reduce_kernel(dnnl::algorithm alg, float p, dims axes, bool keepdims)
        : alg_(alg), p_(p), axes_(std::move(axes)), keep_(keepdims) {}
    const char* kind() const override { return "reduce"; }
    tensor run(const std::vector<tensor>& in) const override {
        const tensor& x = in.at(0);
        const dims xs = x.shape();
        std::vector<bool> reduced(xs.size(), axes_.empty());
        for (auto a : axes_) reduced[static_cast<std::size_t>(detail::axis_index(a, xs.size(), "reduce_kernel"))] = true;
        dims kept = xs, out;
        for (std::size_t i = 0; i < xs.size(); ++i) {
            if (reduced[i]) kept[i] = 1;
            if (!reduced[i] || keep_) out.push_back(kept[i]);
        }
        if (out.empty()) throw kernel_error("sgmatch::onednn::reduce_kernel: every axis reduced and dropped: a scalar, which a oneDNN tensor cannot hold");
        auto pd = cache_.get(detail::layout_key(x.desc()), [&] {
            return detail::make_pd<pd_t>(
                [&] { return compat::reduction_pd(cpu_engine(), alg_, x.desc(), plain_desc(kept), p_, detail::user_scratchpad()); },
                [&] { return "sgmatch::onednn::reduce_kernel: oneDNN has no reduction of " + to_string(xs); });
        });
        tensor y = tensor::allocate(pd->dst_desc());
        detail::exec_with_scratch(dnnl::reduction(*pd), pd->scratchpad_desc(),
                                  {{DNNL_ARG_SRC, x.memory()}, {DNNL_ARG_DST, y.memory()}});
        return keep_ ? y : y.reshaped(out);
    }

private:
    using pd_t = dnnl::reduction::primitive_desc;
    dnnl::algorithm alg_;
    float p_;
    dims axes_;
    bool keep_;
    detail::shape_cache<std::string, pd_t> cache_;
};

/// Slice with unit steps (ONNX's clamping of starts and ends): one reorder from the part of the
/// source it keeps, read in the source's layout, into a result in that layout (plain where the
/// layout's blocks do not divide the part: the source is then made plain first).
class slice_kernel final : public op_kernel {
public:
    slice_kernel(dims starts, dims ends, dims axes) : starts_(std::move(starts)), ends_(std::move(ends)), axes_(std::move(axes)) {}
    const char* kind() const override { return "slice"; }
    tensor run(const std::vector<tensor>& in) const override {
        const tensor& x = in.at(0);
        const dims xs = x.shape();
        dims offsets(xs.size(), 0), out = xs;
        for (std::size_t k = 0; k < axes_.size(); ++k) {
            const int ax = detail::axis_index(axes_[k], xs.size(), "slice_kernel");
            const std::int64_t dim = xs[static_cast<std::size_t>(ax)];
            auto clamp = [dim](std::int64_t v) { return std::min(std::max(v < 0 ? v + dim : v, std::int64_t{0}), dim); };
            const std::int64_t b = clamp(starts_[k]), e = clamp(ends_[k]);
            offsets[static_cast<std::size_t>(ax)] = b;
            out[static_cast<std::size_t>(ax)] = std::max<std::int64_t>(e - b, 0);
        }
        auto p = cache_.get(detail::layout_key(x.desc()) + to_string(offsets) + to_string(out), [&] {
            auto r = std::make_shared<plan>();
            try {
                r->part = x.desc().submemory_desc(out, offsets);
                r->dst = compat::same_layout(x.desc(), out).value_or(plain_desc(out));
            } catch (const dnnl::error&) {  // blocks cut across: read it plain
                r->plain_first = true;
                r->part = plain_desc(xs).submemory_desc(out, offsets);
                r->dst = plain_desc(out);
            }
            r->prim = guarded([&] { return dnnl::reorder(dnnl::reorder::primitive_desc(cpu_engine(), r->part, cpu_engine(), r->dst)); });
            return std::shared_ptr<const plan>(std::move(r));
        });
        dnnl::stream s(cpu_engine());
        const tensor src = p->plain_first ? x.in_layout(plain_desc(xs), s) : x;
        tensor y = tensor::allocate(p->dst);
        dnnl::memory part(p->part, cpu_engine(), src.memory().get_data_handle());
        dnnl::memory dst = y.memory();
        p->prim.execute(s, part, dst);
        s.wait();
        return y;
    }

private:
    struct plan {
        bool plain_first = false;  // the source read plain
        dnnl::memory::desc part, dst;
        dnnl::reorder prim;
    };
    dims starts_, ends_, axes_;
    detail::shape_cache<std::string, plan> cache_;
};

/// Reshape to a constant shape (ONNX: 0 copies the input's dim, -1 is inferred): the values
/// copied into a new plain tensor (a result never aliases its input).
class reshape_kernel final : public op_kernel {
public:
    explicit reshape_kernel(dims shape) : shape_(std::move(shape)) {}
    const char* kind() const override { return "reshape"; }
    tensor run(const std::vector<tensor>& in) const override {
        const dims xs = in.at(0).shape();
        const dims to = output_dims(xs, shape_);
        dnnl::stream s(cpu_engine());
        tensor y = tensor::allocate(plain_desc(xs));
        in[0].reorder_into(y, s);
        s.wait();
        return y.reshaped(to);
    }
    /// ONNX Reshape's result shape for input dims xs and the requested shape (0 copies the
    /// input's dim, one -1 is inferred), or a kernel_error.
    static dims output_dims(const dims& xs, const dims& shape) {
        std::int64_t count = 1, known = 1;
        for (auto d : xs) count *= d;
        dims to = shape;
        std::size_t infer = to.size();
        for (std::size_t i = 0; i < to.size(); ++i) {
            if (to[i] == 0 && i < xs.size()) to[i] = xs[i];
            if (to[i] == -1 && infer == to.size()) infer = i;
            else if (to[i] < 1) infer = to.size() + 1;  // invalid
            else known *= to[i];
        }
        const bool ok = infer == to.size() ? known == count
                                           : infer < to.size() && known != 0 && count % known == 0;
        if (!ok)
            throw kernel_error("sgmatch::onednn::reshape_kernel: cannot reshape " + to_string(xs) + " to " +
                               to_string(shape));
        if (infer < to.size()) to[infer] = count / known;
        return to;
    }

private:
    dims shape_;
};

}  // namespace onednn
SGMATCH_END_NAMESPACE
