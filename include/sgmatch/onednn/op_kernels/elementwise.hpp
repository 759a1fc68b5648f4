// sgmatch/onednn/op_kernels/elementwise.hpp - eltwise chains and binary ops, in the layout their input arrives in.
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
#include "sgmatch/onednn/op_kernels/base.hpp"
#include "sgmatch/onednn/tensor.hpp"

SGMATCH_BEGIN_NAMESPACE
namespace onednn {

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
