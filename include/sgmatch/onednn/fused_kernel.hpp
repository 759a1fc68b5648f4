// sgmatch/onednn/fused_kernel.hpp - what a fused node's kernel offers its executor: one main
// primitive plus post-ops.
#pragma once

#include <cstddef>
#include <vector>

#include <oneapi/dnnl/dnnl.hpp>

#include "sgmatch/detail/config.hpp"
#include "sgmatch/onednn/post_op.hpp"
#include "sgmatch/onednn/tensor.hpp"

SGMATCH_BEGIN_NAMESPACE
namespace onednn {

/// What a fused node's kernel offers its executor: one main primitive plus post-ops.
class fused_kernel {
public:
    virtual ~fused_kernel() = default;
    /// Run on src, with extra[i] the runtime operand of post-ops with input i; the result in the
    /// primitive's layout.
    virtual tensor run(const tensor& src, const std::vector<tensor>& extra) const = 0;
    /// The same into y (layout dst_desc(src.shape())); a sum whose residual is y accumulates in place.
    virtual void run_into(const tensor& src, const std::vector<tensor>& extra, const tensor& y) const = 0;
    virtual dnnl::memory::desc dst_desc(const dims& src) const = 0;
    /// The destination layout for this very source: dst_desc(src.shape()), unless the kernel
    /// keeps whatever layout its source has (BatchNorm), which only the source tells.
    virtual dnnl::memory::desc dst_desc_for(const tensor& src) const { return dst_desc(src.shape()); }
    virtual const std::vector<post_op>& post_ops() const = 0;
    /// Whether run_into writes y itself (false: it computes into a buffer of its own and copies),
    /// which is when placing its output in a planned buffer saves memory rather than adding a copy.
    virtual bool writes_into() const { return true; }
    /// How many input shapes run their post-ops after the main primitive rather than fused (oneDNN
    /// rejected the fused primitive, or would run it on a reference implementation).
    virtual std::size_t unfused_shapes() const { return 0; }
};

}  // namespace onednn
SGMATCH_END_NAMESPACE
