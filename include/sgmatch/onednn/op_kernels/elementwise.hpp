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

}  // namespace onednn
SGMATCH_END_NAMESPACE
