// sgmatch/exec/subgraph_node.hpp - the payload of a region node (exec/subgraph.hpp): the region
// as a graph of its own, with its own executor.
#pragma once

#include <cstddef>
#include <memory>
#include <vector>

#include "sgmatch/detail/config.hpp"
#include "sgmatch/graph/graph.hpp"

SGMATCH_BEGIN_NAMESPACE
namespace exec {

class executor;

/// The payload of a region node (subgraph.hpp): the region as a graph of its own with its own
/// executor (fused nodes inside), and which of the node's inputs it reads at run time (the
/// others are constants copied into the region), in the order of the region's graph inputs
/// "0", "1", ...; the region's graph outputs are the node's outputs, in order.
struct subgraph_node {
    std::shared_ptr<const graph> region;
    std::shared_ptr<const executor> exec;
    std::vector<std::size_t> runtime_inputs;
};

}  // namespace exec
SGMATCH_END_NAMESPACE
