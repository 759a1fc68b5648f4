// sgmatch/graph/replacement.hpp - the one write sgmatch asks of a graph.
#pragma once

#include <any>
#include <string>
#include <vector>

#include "sgmatch/detail/config.hpp"
#include "sgmatch/graph/types.hpp"

SGMATCH_BEGIN_NAMESPACE

/// Replace `nodes` by one new node. The new node reads `inputs` in order; its output i takes the
/// place of `outputs[i]` for every user outside `nodes` and for the graph outputs. `payload` is
/// what the user's graph stores for the fused node. The write either completes or leaves the
/// graph unchanged.
template <class Node>
struct replacement {
    std::vector<Node> nodes;
    std::vector<value_ref<Node>> inputs;
    std::vector<value_ref<Node>> outputs;
    std::string name;
    std::string op_name;
    std::any payload;
};

SGMATCH_END_NAMESPACE
