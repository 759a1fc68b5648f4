// sgmatch/exec/run_stats.hpp - how the executor runs what is not fused, and what a run reports.
#pragma once

#include <cstddef>
#include <vector>

#include "sgmatch/detail/config.hpp"
#include "sgmatch/graph/graph.hpp"

SGMATCH_BEGIN_NAMESPACE
namespace exec {

/// How the nodes that are not fused run.
enum class mode {
    reference,     // on the xtensor reference kernels (the oracle)
    onednn,        // one oneDNN primitive per op where there is one (format any: the best unfused run),
                   // else the reference kernel
    onednn_plain,  // the same, with convs and pooling in plain NCHW layouts (a naive integration)
};

/// One node's share of a run (run_stats::times): the node, the kind of kernel that ran it
/// ("fused", "onednn", "reference", "typed", "region") and its wall time.
struct node_time {
    node_id node;
    const char* kernel;
    double ms;
};

/// What one run did.
struct run_stats {
    std::size_t fused_nodes = 0;      // fused nodes, run on their oneDNN kernels
    std::size_t onednn_nodes = 0;     // single ops run on oneDNN primitives
    std::size_t reference_nodes = 0;  // run on reference kernels
    std::size_t typed_nodes = 0;      // run on typed kernels (kernels/typed.hpp: non-f32 values, several outputs)
    std::size_t onednn_typed_nodes = 0;  // of those, run on a oneDNN primitive (kernels/typed_onednn.hpp: recurrent
                                         // layers, Resize, comparisons, int8 convolutions)
    std::size_t reorders_to_plain = 0;  // kernel outputs converted for a reference kernel or an output
    std::size_t typed_reorders = 0;     // layout conversions inside typed kernels on oneDNN (an int8 conv's
                                        // x into its primitive's layout, its y out of it; none between
                                        // int8 convs that keep channels-last)
    std::size_t in_place_sums = 0;      // residuals accumulated into in place (no copy)
    std::size_t region_nodes = 0;       // region nodes (subgraph.hpp); what ran inside is counted above
    std::size_t planned_bytes = 0;  // the arena holding the fused nodes' outputs (0: no plan yet: the
                                    // first run of input shapes the graph does not declare records one)
    std::size_t pooled_bytes = 0;   // what a pool reusing only same-size buffers holds for those outputs
    std::size_t fallbacks = 0;  // fused nodes and single-op kernels whose kernel rejected the input: they ran
                                // their ops unfused (counted above) or their reference kernel instead
    std::size_t unfused_post_ops = 0;  // fused nodes whose kernel runs its post-ops after the main primitive for
                                       // some input shape (oneDNN rejected the fused primitive, or would run it on
                                       // a reference implementation: fused_kernel::unfused_shapes)
    int threads = 0;  // the threads oneDNN's kernels were allowed in the run (onednn::max_threads() under the
                      // executor's cap, on the calling thread)
    /// Set to have every node's time appended, in the order the nodes ran (a region node is one
    /// entry); null: nothing is timed.
    std::vector<node_time>* times = nullptr;

    /// Add what a nested run did (a region's executor, a fused node's ops run unfused).
    run_stats& operator+=(const run_stats& o) {
        fused_nodes += o.fused_nodes;
        onednn_nodes += o.onednn_nodes;
        reference_nodes += o.reference_nodes;
        typed_nodes += o.typed_nodes;
        onednn_typed_nodes += o.onednn_typed_nodes;
        reorders_to_plain += o.reorders_to_plain;
        typed_reorders += o.typed_reorders;
        in_place_sums += o.in_place_sums;
        region_nodes += o.region_nodes;
        fallbacks += o.fallbacks;
        unfused_post_ops += o.unfused_post_ops;
        planned_bytes += o.planned_bytes;
        pooled_bytes += o.pooled_bytes;
        return *this;
    }
};

}  // namespace exec
SGMATCH_END_NAMESPACE
