// sgmatch/exec/executor.hpp - run a built-in graph: fused nodes on their oneDNN kernels, every
// other op on the kernels its description binds (exec/kernels.hpp): the xtensor reference
// kernel, or a single oneDNN primitive.
//
//   sgmatch::exec::executor run(g);                       // checks the graph, picks a kernel per node
//   auto outputs = run({{"data", x}});                    // graph outputs, in order, as f32 arrays
//   auto typed = run.run({{"data", exec::value::view(p, dtype::f32, dims)}});  // any element type
//
// - Unfused graphs run entirely on the reference kernels (the oracle in tests). Partitioned
//   graphs run each fused node (payload onednn::fused_node) on its kernel.
// - Building the executor checks every op node against its op's description (ops/table.hpp):
//   an op with no kernel, a wrong number of inputs, and every attribute value no kernel
//   implements are refused there, naming the node; nothing is ignored.
// - Values carry their element type (exec::value, run()): fp32 values run on the reference or
//   oneDNN kernels, other types (int64 shapes, bool masks, several outputs, parameters computed
//   at run time) on the typed kernels (kernels/typed.hpp). Every computed value is checked
//   against the element type and shape the graph declares for it (where it declares them); a
//   mismatch is an exec_error naming the node. An op with only fp32 kernels whose declared
//   output type is another is refused when the executor is built.
// - Values between kernels keep their layout: a fused node's output stays a oneDNN tensor in the
//   layout its primitive chose and goes as is into the next fused node; it is reordered to a
//   plain array only when a reference kernel or a graph output reads it (once per value).
// - A kernel that rejects its input at run time (kernel_error: a shape oneDNN or the kernel
//   cannot take, known only then) is not the end of the run: a fused node runs its matched ops
//   unfused (fused_node::ops: one oneDNN primitive per op where one fits, else the reference
//   kernel), a single-op kernel its reference kernel. Logged once per node on stderr, counted in
//   run_stats::fallbacks; the kernel is not asked again for those shapes.
//
// - Control-flow nodes (If, Loop, Scan, SequenceMap) run their bodies on executors of their own,
//   built with this one and in its mode (control_flow.hpp).
//
// - mode::onednn runs every other op it can on one oneDNN primitive: the best unfused baseline;
//   mode::onednn_plain forces plain NCHW layouts (a naive integration).
//
// Known limitations: runs the built-in graph (a region of an adapter graph is copied into one,
// subgraph.hpp); fused kernels are fp32 (QLinearConv and ConvInteger run on oneDNN's int8
// convolution, kernels/qconv_onednn.hpp); nodes run one after another
// (kernels use oneDNN's threads: as many as the calling thread allows, or set_threads' cap);
// intermediate buffers are recycled through a pool, and the fused nodes' outputs are placed in
// one arena by a liveness plan (buffer_plan.hpp) per input-shape signature: made before the first
// run from the declared shapes, or from what the first run records when they are not declared
// (run_stats::planned_bytes).
//
// Compile cost: the executor's definitions (every kernel it can bind) are in exec/impl/
// executor.ipp, which this header includes; a program built with SGMATCH_SEPARATE_COMPILATION
// compiles them once, in the one translation unit that includes exec/src.hpp, and its other
// translation units parse this declaration only.
#pragma once

#include <cstddef>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "sgmatch/detail/config.hpp"
#include "sgmatch/exec/error.hpp"
#include "sgmatch/exec/limits.hpp"
#include "sgmatch/exec/run_stats.hpp"
#include "sgmatch/exec/subgraph_node.hpp"
#include "sgmatch/exec/value.hpp"
#include "sgmatch/graph/graph.hpp"
#include "sgmatch/onednn/tensor.hpp"
#include "sgmatch/reference/kernels.hpp"

SGMATCH_BEGIN_NAMESPACE
namespace onednn {
struct fused_node;
}
namespace exec {

using reference::array;

class executor;
namespace detail {
class executor_impl;
}

class executor {
public:
    explicit executor(const graph& g, mode m = mode::reference);
    /// An executor whose runs are bounded by `l`, shared (the bodies of control-flow nodes share
    /// their node's executor's limits); null: limits of its own, the defaults.
    executor(const graph& g, mode m, std::shared_ptr<limits> l);

    /// Run with the given graph inputs (by name, f32); returns the graph outputs in order (a
    /// graph whose outputs are of other types runs through run()).
    std::vector<array> operator()(const std::map<std::string, array>& inputs, run_stats* stats = nullptr) const;

    /// Run with typed values (any element type; views of the caller's buffers are read in
    /// place); returns the graph outputs in order, each with its element type.
    std::vector<value> run(const std::map<std::string, value>& inputs, run_stats* stats = nullptr) const;

    /// A fused node's ops on an executor of their own (one kernel each, mode onednn), for when its
    /// kernel rejects an input; null for a node whose ops cannot run one by one (it keeps only its
    /// kernel, whose errors are then raised).
    static std::shared_ptr<const executor> member_ops(const onednn::fused_node& f);

    /// Bound this executor's runs (exec/limits.hpp): the memory budget, checked before each
    /// node allocates, and the iterations of a Loop. The bodies of its control-flow nodes, and
    /// copies of this executor, share the setting. Set it before runs begin.
    void set_limits(const limits& l) { *limits_ = l; }
    const limits& run_limits() const { return *limits_; }

    /// Cap the threads oneDNN's kernels use in this executor's runs to n (0, the default: the
    /// calling thread's own setting). The cap holds on the calling thread for the length of a run
    /// and nowhere else (onednn/threads.hpp): the process's setting and other threads' runs are
    /// untouched. oneDNN fixes a primitive's thread count when it creates it, which the kernels
    /// do in their first run of a shape: set the cap before the first run (primitives created
    /// before a change keep their count). Refused (kernel_error) where oneDNN's runtime is not
    /// OpenMP or sequential.
    void set_threads(int n);

    /// Why a node that runs on its reference kernel in a oneDNN mode does not run on oneDNN: the
    /// kernel factory's reason to decline it, the primitive oneDNN refused for its form, or that
    /// oneDNN has no kernel for its op.
    struct reference_reason {
        std::string node;  // a region's nodes as "region/node"
        std::string op;
        std::string why;
    };
    /// Those of this executor's op nodes, then its region nodes' (mode::reference: none).
    std::vector<reference_reason> reference_reasons() const;

    /// The same on oneDNN tensors, in whatever layout they come (what a region node gets from
    /// the kernels before it); the graph outputs stay in the layouts their kernels produced.
    std::vector<onednn::tensor> run_tensors(const std::map<std::string, onednn::tensor>& inputs,
                                            run_stats* stats = nullptr) const;

private:
    friend class detail::executor_impl;
    // A region node's executor run by the executor of the graph holding the node: under the
    // outer run's limits.
    static std::vector<onednn::tensor> run_region(const executor& region, const std::map<std::string, onednn::tensor>& inputs,
                                                  run_stats* stats, const limits& outer);

    std::shared_ptr<limits> limits_;
    std::shared_ptr<const detail::executor_impl> impl_;  // the plan, shared by copies
    int threads_ = 0;
};

}  // namespace exec
SGMATCH_END_NAMESPACE

#if !defined(SGMATCH_SEPARATE_COMPILATION)
#include "sgmatch/exec/impl/executor.ipp"
#endif
