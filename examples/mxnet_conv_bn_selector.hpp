// The Conv -> BatchNorm selector of MXNet's Subgraph API tutorial, written by hand against
// sgmatch's subgraph_selector (the same five calls). examples/mxnet_tutorial.cpp runs it next to
// the one-line pattern that replaces it; tests/partition/selector.cpp checks that both give the
// same partitions.
#pragma once

#include <vector>

#include "sgmatch/graph/graph.hpp"
#include "sgmatch/partition/selector.hpp"

class conv_bn_selector : public sgmatch::subgraph_selector<sgmatch::graph> {
public:
    explicit conv_bn_selector(const sgmatch::graph& g) : g_(g) {}

    // Start on a convolution.
    bool select(const sgmatch::node_id& n) override {
        return g_.kind(n) == sgmatch::node_kind::op && g_.op_name(n) == "Conv";
    }
    // Never grow towards producers.
    bool select_input(const sgmatch::node_id&, const sgmatch::node_id&) override { return false; }
    // Take the first BatchNorm offered along an outgoing edge, and nothing after it.
    bool select_output(const sgmatch::node_id&, const sgmatch::node_id& out) override {
        if (!found_bn_ && g_.op_name(out) == "BatchNormalization") {
            found_bn_ = true;
            return true;
        }
        return false;
    }
    // A convolution without a BatchNorm is not a subgraph.
    std::vector<sgmatch::node_id> filter(const std::vector<sgmatch::node_id>& candidates) override {
        return found_bn_ ? candidates : std::vector<sgmatch::node_id>{};
    }
    void reset() override { found_bn_ = false; }

private:
    const sgmatch::graph& g_;
    bool found_bn_ = false;
};
