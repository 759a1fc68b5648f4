// sgmatch/onednn/op_kernels.hpp - single ops as oneDNN primitives: the unfused baseline (one
// primitive per op) and the kernels for supported ops outside fused nodes (pooling, Gemm, ...).
//
// Each kernel works in the layout its input arrives in (eltwise, BatchNorm, binary keep it;
// pooling lets oneDNN choose its destination), builds its primitive once per input shape and
// layout, and is thread-safe like fused_conv (cache under a lock, per-call scratchpad).
//
// Known limitations: fp32; Gemm needs a constant B (weights) and at most a [N] or [1, N] bias;
// Flatten reorders to plain and reinterprets; binary operands broadcast only from plain layouts.
#pragma once

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

}  // namespace detail

/// A chain of eltwise ops (one op may be several: HardSigmoid is linear then clip), in the
/// input's layout, into a new tensor.
class eltwise_kernel final : public op_kernel {
public:
    explicit eltwise_kernel(std::vector<post_op> ops) : ops_(std::move(ops)) {
        for (auto& p : ops_)
            if (p.k != post_op::kind::eltwise) throw kernel_error("sgmatch::onednn::eltwise_kernel: not an eltwise op");
    }
    const char* kind() const override { return "eltwise"; }
    tensor run(const std::vector<tensor>& in) const override {
        const dnnl::memory::desc d = in.at(0).desc();
        auto e = cache_.get(detail::layout_key(d), [&] {
            auto v = std::make_shared<std::vector<dnnl::eltwise_forward>>();
            for (auto& p : ops_) v->emplace_back(compat::eltwise_pd(cpu_engine(), p.alg, d, p.alpha, p.beta));
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
class pool_kernel final : public op_kernel {
public:
    /// plain_dst: the destination in plain layout instead of oneDNN's choice.
    pool_kernel(bool max, dims kernel, dims strides, dims pads_begin, dims pads_end, bool count_include_pad = false,
                bool plain_dst = false)
        : max_(max), kernel_(std::move(kernel)), strides_(std::move(strides)), pb_(std::move(pads_begin)),
          pe_(std::move(pads_end)), include_pad_(count_include_pad), plain_(plain_dst) {}
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
            dims out{xs[0], xs[1]};
            for (std::size_t i = 0; i < sp; ++i) out.push_back((xs[2 + i] + pb[i] + pe[i] - k[i]) / st[i] + 1);
            const auto alg = max_ ? dnnl::algorithm::pooling_max
                                  : include_pad_ ? dnnl::algorithm::pooling_avg_include_padding
                                                 : dnnl::algorithm::pooling_avg_exclude_padding;
            const dnnl::memory::desc dst(out, dnnl::memory::data_type::f32,
                                         plain_ ? plain_tag(out.size()) : dnnl::memory::format_tag::any);
            try {
#if DNNL_VERSION_MAJOR >= 3
                return std::make_shared<const dnnl::pooling_forward::primitive_desc>(
                    cpu_engine(), dnnl::prop_kind::forward_inference, alg, d, dst, st, k, dims(sp, 0), pb, pe,
                    detail::user_scratchpad());
#else
                return std::make_shared<const dnnl::pooling_v2_forward::primitive_desc>(
                    dnnl::pooling_v2_forward::desc(dnnl::prop_kind::forward_inference, alg, d, dst, st, k, dims(sp, 0),
                                                   pb, pe),
                    detail::user_scratchpad(), cpu_engine());
#endif
            } catch (const dnnl::error& e) {
                throw kernel_error("sgmatch::onednn::pool_kernel: oneDNN has no pooling for input " + to_string(xs) + " (" +
                                   e.what() + ")");
            }
        });
        tensor y = tensor::allocate(pd->dst_desc());
        detail::exec_with_scratch(primitive(*pd), pd->scratchpad_desc(), {{DNNL_ARG_SRC, x.memory()}, {DNNL_ARG_DST, y.memory()}});
        return y;
    }

private:
#if DNNL_VERSION_MAJOR >= 3
    using pd_t = dnnl::pooling_forward::primitive_desc;
    static dnnl::pooling_forward primitive(const pd_t& pd) { return dnnl::pooling_forward(pd); }
#else
    using pd_t = dnnl::pooling_v2_forward::primitive_desc;
    static dnnl::pooling_v2_forward primitive(const pd_t& pd) { return dnnl::pooling_v2_forward(pd); }
#endif
    bool max_;
    dims kernel_, strides_, pb_, pe_;
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
        for (std::size_t i = 0; i < d.size(); ++i) (static_cast<std::int64_t>(i) < axis_ ? a : b) *= d[i];
        return p.reshaped({a, b});
    }

private:
    std::int64_t axis_;
};

}  // namespace onednn
SGMATCH_END_NAMESPACE
