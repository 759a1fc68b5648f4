// sgmatch/onednn/fused_matmul.hpp - a fused matmul kernel: x W (+ bias) + post-ops, for Gemm /
// FullyConnected / MatMul with constant weights, built once per input shape and cached.
//
// - x is [..., M, K] (any leading batch dims, run as one [rows, K] product), W is constant
//   [K, N] (stored after any transpose the lowering applied), the result [..., M, N] in plain
//   layout. Weights use format `any` (oneDNN's blocked layout for its brgemm kernels), reordered
//   once per cached shape.
// - Post-ops as in fused_conv; a per-channel operand broadcasts along the last axis (N).
// - run() is thread-safe (per-call scratchpad and stream), like fused_conv.
#pragma once

#include <algorithm>
#include <cmath>
#include <cstdint>
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
#include "sgmatch/onednn/float_values.hpp"
#include "sgmatch/onednn/post_ops.hpp"
#include "sgmatch/onednn/tensor.hpp"

SGMATCH_BEGIN_NAMESPACE
namespace onednn {

struct matmul_spec {
    std::string name = "matmul";
    std::int64_t K = 0, N = 0;
    float_values weights;        // [K, N] row-major (shared with the graph's constant where it allows)
    std::vector<float> bias;     // empty or N values
    std::vector<post_op> post_ops;

    void validate() const {
        auto fail = [&](const std::string& why) { throw kernel_error("sgmatch::onednn::matmul_spec('" + name + "'): " + why); };
        if (K < 1 || N < 1) fail("K and N must be positive");
        if (weights.size() != static_cast<std::size_t>(K * N)) fail(std::to_string(weights.size()) + " weight values for [K, N]");
        if (!bias.empty() && static_cast<std::int64_t>(bias.size()) != N) fail("bias must have N values");
        int sums = 0;
        for (auto& p : post_ops) sums += p.is<post_op::sum_op>() ? 1 : 0;
        if (sums > 1) fail("at most one sum post-op");
    }
    /// Fold an inference BatchNorm over the output's last axis (N) into the weights and bias:
    /// W'[k, n] = W[k, n] * c_n, b'_n = (b_n - mean_n) * c_n + shift_n, c_n = scale_n / sqrt(var_n + eps).
    void fold_batch_norm(const std::vector<float>& scale, const std::vector<float>& shift,
                         const std::vector<float>& mean, const std::vector<float>& var, float eps) {
        const auto n_out = static_cast<std::size_t>(N);
        if (scale.size() != n_out || shift.size() != n_out || mean.size() != n_out || var.size() != n_out)
            throw kernel_error("sgmatch::onednn::matmul_spec::fold_batch_norm('" + name +
                               "'): BatchNorm parameters must have one value per output column (" + std::to_string(N) + ")");
        if (!post_ops.empty())
            throw kernel_error("sgmatch::onednn::matmul_spec::fold_batch_norm('" + name +
                               "'): a BatchNorm after a post-op cannot be folded into the weights");
        if (bias.empty()) bias.assign(n_out, 0.0f);
        float* const w = weights.mutable_data();
        for (std::size_t n = 0; n < n_out; ++n) {
            const double c = scale[n] / std::sqrt(static_cast<double>(var[n]) + eps);
            for (std::size_t k = 0; k < static_cast<std::size_t>(K); ++k)
                w[k * n_out + n] = static_cast<float>(w[k * n_out + n] * c);
            bias[n] = static_cast<float>((bias[n] - mean[n]) * c + shift[n]);
        }
    }
    dims output_dims(const dims& src) const {
        if (src.size() < 2 || src.size() > 5 || src.back() != K)
            throw kernel_error("sgmatch::onednn::fused_matmul('" + name + "'): input " + to_string(src) +
                               " must be [..., M, " + std::to_string(K) + "] with at most 3 batch dims");
        dims out = src;
        out.back() = N;
        return out;
    }
};

class fused_matmul final : public fused_kernel {
public:
    explicit fused_matmul(matmul_spec s) : spec_(std::move(s)) { spec_.validate(); }
    const matmul_spec& spec() const { return spec_; }
    const std::vector<post_op>& post_ops() const override { return spec_.post_ops; }

    tensor run(const tensor& src, const std::vector<tensor>& extra = {}) const override {
        tensor y = tensor::allocate(dst_desc(src.shape()));
        run_into(src, extra, y);
        return y;
    }
    /// x of more than 2 dims is one [rows, K] x [K, N] product: a batched matmul with the weights
    /// broadcast would read them plain, a 2-D one in oneDNN's blocked layout (2-3x faster on a
    /// transformer's projections). y and every operand are read as [rows, last dim].
    void run_into(const tensor& src, const std::vector<tensor>& extra, const tensor& y) const override {
        const std::string who = "sgmatch::onednn::fused_matmul('" + spec_.name + "')";
        const dims s = src.shape();
        if (s.size() <= 2) return detail::run_fused(*entry_for(s), who, spec_.post_ops, src, extra, y);
        (void)spec_.output_dims(s);  // checks K and the rank
        dnnl::stream st(cpu_engine());
        auto as_rows = [&](const tensor& t) { return t.in_layout(plain_desc(t.shape()), st).reshaped(rows(t.shape())); };
        std::vector<tensor> ops_in;
        for (const auto& t : extra) ops_in.push_back(t.shape().size() >= 2 ? as_rows(t) : t);
        detail::run_fused(*entry_for(rows(s)), who, spec_.post_ops, as_rows(src), ops_in, y.reshaped(rows(y.shape())));
    }
    dnnl::memory::desc dst_desc(const dims& src) const override {
        return src.size() <= 2 ? entry_for(src)->pd.dst_desc() : plain_desc(spec_.output_dims(src));
    }
    std::string implementation(const dims& src) const { return compat::impl_name(entry_for(src.size() <= 2 ? src : rows(src))->pd); }
    /// How many input shapes run their post-ops unfused because oneDNN rejected the fused
    /// primitive (logged once per kernel on stderr).
    std::size_t unfused_shapes() const override { return unfused_.count(); }

private:
    using entry = detail::fused_entry<dnnl::matmul>;

    /// [..., M, X] as [prod(...) * M, X].
    static dims rows(const dims& d) {
        std::int64_t n = 1;
        for (std::size_t i = 0; i + 1 < d.size(); ++i) n *= d[i];
        return {n, d.back()};
    }

    std::shared_ptr<const entry> entry_for(const dims& src) const {
        return cache_.get(src, [&] { return build(src); });
    }

    std::shared_ptr<const entry> build(const dims& src) const {
        using md = dnnl::memory::desc;
        using dt = dnnl::memory::data_type;
        const dims dst = spec_.output_dims(src);
        const std::size_t r = src.size();
        dims wd(r, 1), bd(r, 1);  // weights and bias broadcast over the batch dims
        wd[r - 2] = spec_.K, wd[r - 1] = spec_.N;
        bd[r - 1] = spec_.N;
        const md bias_md = spec_.bias.empty() ? md() : plain_desc(bd);
        auto make = [&](bool fuse) {
            detail::post_op_plan plan(spec_.post_ops, dst, r - 1, fuse);
            dnnl::primitive_attr attr;
            attr.set_scratchpad_mode(dnnl::scratchpad_mode::user);
            attr.set_post_ops(plan.po);
            const auto pd = compat::matmul_pd(cpu_engine(), plain_desc(src), md(wd, dt::f32, dnnl::memory::format_tag::any),
                                              bias_md, plain_desc(dst), attr);
            plan.build_tail(spec_.post_ops, pd.dst_desc());
            return std::make_shared<const entry>(pd, std::move(plan), tensor::view(spec_.weights.data(), wd),
                                                 spec_.bias.empty() ? tensor() : tensor::view(spec_.bias.data(), bd));
        };
        return detail::build_or_unfuse(make, "sgmatch::onednn::fused_matmul('" + spec_.name + "')",
                                       "matmul of input " + to_string(src) + " with weights [" + std::to_string(spec_.K) +
                                           "," + std::to_string(spec_.N) + "]",
                                       unfused_);
    }

    matmul_spec spec_;
    mutable detail::unfused_log unfused_;
    detail::shape_cache<dims, entry> cache_;
};

}  // namespace onednn
SGMATCH_END_NAMESPACE
