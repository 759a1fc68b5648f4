// examples/minifw/ngraph_style.hpp - sgmatch in minifw the way the nGraph bridge worked in
// PaddlePaddle and TensorFlow.
//
// Capability regions (the largest connected, convex sets of ops sgmatch runs on oneDNN) become
// engine ops in the framework's graph, op "_sgmatch_engine"; everything else stays on the
// framework's own kernels. An engine op compiles its region once per input-shape signature (an
// executor of its own, whose kernels create their oneDNN primitives for those shapes) and keeps
// it: later runs with the same shapes are cache hits, counted with the misses. One flag switches
// the bridge off (bridge_options::enabled, or MINIFW_SGMATCH_BRIDGE=0 in the environment).
#pragma once

#include <atomic>
#include <cstdlib>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "adapter.hpp"
#include "framework.hpp"
#include "mxnet_style.hpp"  // views() and tensors()
#include "sgmatch/exec/subgraph.hpp"
#include "sgmatch/partition/partition.hpp"

namespace minifw_sgmatch {

/// An engine op's state: its region and the region compiled per input-shape signature.
class engine_op {
public:
    explicit engine_op(std::shared_ptr<const sgmatch::exec::subgraph_node> r) : region_(std::move(r)) {}

    std::vector<minifw::Tensor> compute(const std::vector<const minifw::Tensor*>& in) const {
        std::vector<std::vector<std::int64_t>> signature;
        std::map<std::string, sgmatch::exec::value> feeds;
        const auto xs = views(in);
        for (std::size_t k = 0; k < region_->runtime_inputs.size(); ++k) {
            const auto& x = xs.at(region_->runtime_inputs[k]);
            signature.push_back(x.dims());
            feeds.emplace(std::to_string(k), x);
        }
        std::shared_ptr<const sgmatch::exec::executor> compiled;
        {
            std::lock_guard<std::mutex> lock(mu_);
            auto it = compiled_.find(signature);
            if (it != compiled_.end()) {
                compiled = it->second;
                ++hits_;
            } else {
                compiled = std::make_shared<const sgmatch::exec::executor>(*region_->region, sgmatch::exec::mode::onednn);
                compiled_.emplace(signature, compiled);
                ++misses_;
            }
        }
        return tensors(compiled->run(feeds));
    }
    std::size_t hits() const { return hits_.load(); }
    std::size_t misses() const { return misses_.load(); }

private:
    std::shared_ptr<const sgmatch::exec::subgraph_node> region_;
    mutable std::mutex mu_;
    mutable std::map<std::vector<std::vector<std::int64_t>>, std::shared_ptr<const sgmatch::exec::executor>> compiled_;
    mutable std::atomic<std::size_t> hits_{0}, misses_{0};
};

struct bridge_options {
    bool enabled = true;     // false: the graph is left as it is
    std::size_t min_size = 2;  // smaller regions stay on the framework's kernels
};

/// Whether the environment switches the bridge off (MINIFW_SGMATCH_BRIDGE=0).
inline bool bridge_enabled_by_environment() {
    const char* v = std::getenv("MINIFW_SGMATCH_BRIDGE");
    return v == nullptr || std::string(v) != "0";
}

/// Turn g's capability regions into engine ops; returns how many.
inline std::size_t enable_bridge(minifw::Graph& g, const bridge_options& o = {}) {
    if (!o.enabled) return 0;
    static const bool registered = [] {
        minifw::op_registry()["_sgmatch_engine"] = [](const minifw::Node& n, const std::vector<const minifw::Tensor*>& in) {
            return std::static_pointer_cast<const engine_op>(n.state)->compute(in);
        };
        return true;
    }();
    (void)registered;
    auto create_engine_node = [](const sgmatch::replacement<const minifw::Node*>& r) {
        auto n = std::make_unique<minifw::Node>();
        n->op = "_sgmatch_engine";
        n->name = r.name;
        const auto& region = std::any_cast<const std::shared_ptr<const sgmatch::exec::subgraph_node>&>(r.payload);
        n->state = std::make_shared<const engine_op>(region);
        return n;
    };
    minifw_view view(g, create_engine_node);
    const auto prop = sgmatch::exec::make_region_property<minifw_view>("sgmatch.engine", o.min_size);
    return sgmatch::apply_property(view, prop).accepted;
}

/// The engine ops of g and their cache counts, summed.
struct bridge_counts {
    std::size_t engine_ops = 0, hits = 0, misses = 0;
};
inline bridge_counts count_engine_ops(const minifw::Graph& g) {
    bridge_counts c;
    for (const auto& n : g.nodes) {
        if (n->op != "_sgmatch_engine") continue;
        const auto& e = *std::static_pointer_cast<const engine_op>(n->state);
        ++c.engine_ops;
        c.hits += e.hits();
        c.misses += e.misses();
    }
    return c;
}

}  // namespace minifw_sgmatch
