// sgmatch/onednn/op_kernels/elementwise.hpp - eltwise chains and binary ops, in the layout their input arrives in.
#pragma once

#include <algorithm>
#include <array>
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
#include "sgmatch/onednn/post_ops.hpp"
#include "sgmatch/onednn/op_kernels/base.hpp"
#include "sgmatch/onednn/tensor.hpp"

SGMATCH_BEGIN_NAMESPACE
namespace onednn {

namespace detail {

// The eltwise algorithms that cost a comparison or a multiply-add an element, as oneDNN defines
// them (NaN in, NaN out), for tensors too small to pay a primitive call.
struct small_eltwise {
    static constexpr std::int64_t max_elements = 1024;
    static bool takes(dnnl::algorithm a) {
        using alg = dnnl::algorithm;
        return a == alg::eltwise_relu || a == alg::eltwise_linear || a == alg::eltwise_abs || a == alg::eltwise_square;
    }
    static void apply(dnnl::algorithm a, float alpha, float beta, const float* x, float* y, std::size_t n) {
        using alg = dnnl::algorithm;
        if (a == alg::eltwise_relu) {
            for (std::size_t i = 0; i < n; ++i) y[i] = x[i] > 0.0f ? x[i] : alpha * x[i];
        } else if (a == alg::eltwise_linear) {
            for (std::size_t i = 0; i < n; ++i) y[i] = alpha * x[i] + beta;
        } else if (a == alg::eltwise_abs) {
            for (std::size_t i = 0; i < n; ++i) y[i] = std::fabs(x[i]);
        } else {
            for (std::size_t i = 0; i < n; ++i) y[i] = x[i] * x[i];
        }
    }
};

}  // namespace detail

/// A chain of eltwise ops (one op may be several: HardSigmoid is linear then clip), in the
/// input's layout, into a new tensor.
class eltwise_kernel final : public op_kernel {
public:
    explicit eltwise_kernel(std::vector<post_op> ops) : ops_(std::move(ops)) {
        for (auto& p : ops_) {
            const auto* e = p.as<post_op::eltwise_op>();
            if (e == nullptr) throw kernel_error("sgmatch::onednn::eltwise_kernel: not an eltwise op");
            if (!detail::small_eltwise::takes(e->alg) || small_count_ == small_.size()) small_count_ = 0, small_ok_ = false;
            if (small_ok_) small_[small_count_++] = *e;
        }
    }
    const char* kind() const override { return "eltwise"; }
    tensor run(const std::vector<tensor>& in) const override {
        const tensor& x = in.at(0);
        const dnnl::memory::desc d = x.desc();
        tensor y = tensor::allocate(d);
        if (!run_small(x, y)) execute(primitives(d), x, y);
        return y;
    }
    bool runs_in_place() const override { return true; }
    tensor run_in_place(const std::vector<tensor>& in) const override {
        const tensor& x = in.at(0);
        if (!run_small(x, x)) execute(primitives(x.desc()), x, x);
        return x;
    }

private:
    using chain = std::vector<dnnl::eltwise_forward>;

    // A small dense input of cheap algorithms: a loop here, without a primitive call (whose
    // fixed cost is most of the time below about a thousand elements).
    bool run_small(const tensor& x, const tensor& y) const {
        if (!small_ok_) return false;
        const std::int64_t n = compat::dense_f32_count(x.memory());
        if (n < 0 || n > detail::small_eltwise::max_elements) return false;
        const float* src = static_cast<const float*>(x.memory().get_data_handle());
        float* dst = static_cast<float*>(y.memory().get_data_handle());
        for (std::size_t i = 0; i < small_count_; ++i)
            detail::small_eltwise::apply(small_[i].alg, small_[i].alpha, small_[i].beta, i == 0 ? src : dst, dst, static_cast<std::size_t>(n));
        return true;
    }

    // The primitives for layout d: the last layout's without building a key (a node sees one
    // layout run after run), else from the cache.
    std::shared_ptr<const chain> primitives(const dnnl::memory::desc& d) const {
        {
            std::lock_guard<std::mutex> lock(last_mu_);
            if (last_ && last_desc_ == d) return last_;
        }
        auto e = cache_.get(detail::layout_key(d), [&] {
            auto v = std::make_shared<chain>();
            for (auto& p : ops_) {
                const auto* e = p.as<post_op::eltwise_op>();
                v->emplace_back(compat::eltwise_pd(cpu_engine(), e->alg, d, e->alpha, e->beta));
            }
            return std::shared_ptr<const chain>(v);
        });
        std::lock_guard<std::mutex> lock(last_mu_);
        last_desc_ = d;
        last_ = e;
        return e;
    }
    static void execute(const std::shared_ptr<const chain>& e, const tensor& x, const tensor& y) {
        for (std::size_t i = 0; i < e->size(); ++i)
            detail::execute((*e)[i], {{DNNL_ARG_SRC, (i == 0 ? x : y).memory().get()}, {DNNL_ARG_DST, y.memory().get()}});
    }

    // The small-tensor loop's ops, held in the kernel itself (one cache line with the vtable:
    // a long chain of small ops touches little else).
    bool small_ok_ = true;  // every op has a loop in small_eltwise (and there are at most two)
    std::size_t small_count_ = 0;
    std::array<post_op::eltwise_op, 2> small_{};
    std::vector<post_op> ops_;
    detail::shape_cache<std::string, chain> cache_;
    mutable std::mutex last_mu_;
    mutable dnnl::memory::desc last_desc_;
    mutable std::shared_ptr<const chain> last_;
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
        const dims sa = a.shape();
        const dims db = detail::broadcast_operand(in.at(1).shape(), sa, "binary_kernel");
        const dnnl::memory::desc dbm = db == sa ? da : plain_desc(db);
        auto pd = cache_.get(detail::layout_key(da) + "|" + detail::layout_key(dbm), [&] {
            return detail::with_primitive<dnnl::binary>(
                std::make_shared<const dnnl::binary::primitive_desc>(compat::binary_pd(cpu_engine(), alg_, da, dbm, da)));
        });
        dnnl::stream s(cpu_engine());
        const tensor b = db == sa ? in[1].in_layout(da, s) : in[1].in_layout(plain_desc(in[1].shape()), s).reshaped(db);
        tensor y = tensor::allocate(da);
        pd->prim.execute(s, {{DNNL_ARG_SRC_0, a.memory()}, {DNNL_ARG_SRC_1, b.memory()}, {DNNL_ARG_DST, y.memory()}});
        s.wait();
        return y;
    }

private:
    dnnl::algorithm alg_;
    detail::shape_cache<std::string, detail::built_primitive<dnnl::binary::primitive_desc, dnnl::binary>> cache_;
};

/// A commutative binary op whose first operand is a constant and second a computed value (a
/// bias PyTorch exports as Add(b, x)): binary_kernel on the operands swapped, the result in the
/// computed operand's layout. A constant larger than the computed operand is binary_kernel's
/// kernel_error, at run time: the reference kernel runs it.
class swapped_binary_kernel final : public op_kernel {
public:
    explicit swapped_binary_kernel(dnnl::algorithm alg) : k_(alg) {}
    const char* kind() const override { return "binary"; }
    bool reads_constants() const override { return true; }
    tensor run(const std::vector<tensor>& in) const override { return k_.run({in.at(1), in.at(0)}); }

private:
    binary_kernel k_;
};

/// PReLU: x where x >= 0, slope * x elsewhere, in x's layout; the slope (any computed or constant
/// tensor that broadcasts to x one way, NumPy rules) read plain.
class prelu_kernel final : public op_kernel {
public:
    const char* kind() const override { return "prelu"; }
    bool reads_constants() const override { return true; }
    tensor run(const std::vector<tensor>& in) const override {
        const tensor& x = in.at(0);
        const dnnl::memory::desc dx = x.desc();
        const dims sx = x.shape();
        const dims sw = detail::broadcast_operand(in.at(1).shape(), sx, "prelu_kernel");
        const dnnl::memory::desc dw = plain_desc(sw);
        auto pd = cache_.get(detail::layout_key(dx) + "|" + to_string(sw), [&] {
            return detail::with_primitive<dnnl::prelu_forward>(detail::make_pd<pd_t>(
                [&] { return compat::prelu_pd(cpu_engine(), dx, dw, dx, detail::user_scratchpad()); },
                [&] { return "sgmatch::onednn::prelu_kernel: oneDNN has no PReLU of " + to_string(sx) + " with slopes " + to_string(sw); }));
        });
        dnnl::stream s(cpu_engine());
        const tensor w = in[1].in_layout(plain_desc(in[1].shape()), s).reshaped(sw);
        s.wait();
        tensor y = tensor::allocate(pd->dst_desc());
        detail::exec_with_scratch(pd->prim, pd->scratchpad_desc(),
                                  {{DNNL_ARG_SRC, x.memory()}, {DNNL_ARG_WEIGHTS, w.memory()}, {DNNL_ARG_DST, y.memory()}});
        return y;
    }

private:
    using pd_t = dnnl::prelu_forward::primitive_desc;
    detail::shape_cache<std::string, detail::built_primitive<pd_t, dnnl::prelu_forward>> cache_;
};

/// Sum (scale 1) or Mean (scale 1 / n) of inputs of one shape, into the first input's layout
/// (the others reordered to it). Inputs that broadcast are a kernel_error: the reference kernel
/// runs them.
class sum_kernel final : public op_kernel {
public:
    explicit sum_kernel(bool mean) : mean_(mean) {}
    const char* kind() const override { return mean_ ? "mean" : "sum"; }
    bool reads_constants() const override { return true; }
    tensor run(const std::vector<tensor>& in) const override {
        const dnnl::memory::desc d = in.at(0).desc();
        const dims shape = in[0].shape();
        for (const tensor& t : in)
            if (t.shape() != shape)
                throw kernel_error("sgmatch::onednn::sum_kernel: inputs " + to_string(shape) + " and " + to_string(t.shape()) +
                                   " differ: they broadcast, which oneDNN's sum does not");
        auto pd = cache_.get(detail::layout_key(d) + "x" + std::to_string(in.size()), [&] {
            const std::vector<float> scales(in.size(), mean_ ? 1.0f / static_cast<float>(in.size()) : 1.0f);
            const std::vector<dnnl::memory::desc> srcs(in.size(), d);
            return detail::with_primitive<dnnl::sum>(detail::make_pd<pd_t>(
                [&] { return compat::sum_pd(cpu_engine(), d, scales, srcs, detail::user_scratchpad()); },
                [&] { return "sgmatch::onednn::sum_kernel: oneDNN has no sum of " + std::to_string(in.size()) + " x " + to_string(shape); }));
        });
        dnnl::stream s(cpu_engine());
        std::vector<tensor> same;  // every input in the first one's layout
        std::unordered_map<int, dnnl::memory> args;
        for (std::size_t i = 0; i < in.size(); ++i) {
            same.push_back(in[i].in_layout(d, s));
            args[DNNL_ARG_MULTIPLE_SRC + static_cast<int>(i)] = same.back().memory();
        }
        s.wait();
        tensor y = tensor::allocate(d);
        args[DNNL_ARG_DST] = y.memory();
        detail::exec_with_scratch(pd->prim, pd->scratchpad_desc(), std::move(args));
        return y;
    }

private:
    using pd_t = dnnl::sum::primitive_desc;
    bool mean_;
    detail::shape_cache<std::string, detail::built_primitive<pd_t, dnnl::sum>> cache_;
};

}  // namespace onednn
SGMATCH_END_NAMESPACE
