// examples/minifw/ort_style.hpp - sgmatch in minifw the way ONNX Runtime's oneDNN execution
// provider works.
//
// minifw has an execution-provider interface of its own (framework.hpp: GetCapability, Compile,
// a Session that fuses each claimed set into one node). The sgmatch provider claims the
// capability regions (sgmatch::capability: node lists with the values they read and produce,
// the graph unchanged) and compiles each once (the region copied into a graph of its own, the
// ready-made fusions applied inside, an executor built) into create-state / compute /
// release-state functions; compute runs it on views of the framework's tensors, its kernels
// creating their primitives on the first run of each shape and keeping them. Inside a region, kernels hand each other
// oneDNN tensors in the layouts their primitives chose (blocked for convs); values are reordered
// to plain only at the region's boundary, which the provider counts.
#pragma once

#include <atomic>
#include <memory>
#include <vector>

#include "adapter.hpp"
#include "framework.hpp"
#include "mxnet_style.hpp"  // views() and tensors()
#include "sgmatch/exec/call.hpp"
#include "sgmatch/exec/subgraph.hpp"
#include "sgmatch/partition/capability.hpp"

namespace minifw_sgmatch {

class sgmatch_provider final : public minifw::ExecutionProvider {
public:
    explicit sgmatch_provider(std::size_t min_size = 2) : min_size_(min_size) {}

    std::vector<minifw::IndexedSubGraph> GetCapability(const minifw::Graph& g) override {
        // Read-only: the view's write side is never called here.
        view_ = std::make_unique<minifw_view>(const_cast<minifw::Graph&>(g), nullptr);
        regions_ = sgmatch::capability(*view_, sgmatch::exec::region_support{}, min_size_);
        std::vector<minifw::IndexedSubGraph> out;
        auto entry = [](const sgmatch::value_ref<const minifw::Node*>& v) {
            return minifw::Entry{const_cast<minifw::Node*>(v.node), static_cast<int>(v.port)};
        };
        for (const auto& r : regions_) {
            minifw::IndexedSubGraph s;
            for (const minifw::Node* n : r.nodes) s.nodes.push_back(const_cast<minifw::Node*>(n));
            for (const auto& v : r.inputs) s.inputs.push_back(entry(v));
            for (const auto& v : r.outputs) s.outputs.push_back(entry(v));
            out.push_back(std::move(s));
        }
        return out;
    }

    std::vector<minifw::ComputeInfo> Compile(const minifw::Graph&, const std::vector<minifw::IndexedSubGraph>& sets) override {
        std::vector<minifw::ComputeInfo> out;
        for (std::size_t i = 0; i < sets.size(); ++i) {
            // The region copied out of the framework's graph (still as GetCapability saw it), the
            // fusions applied inside, its executor built: once.
            const std::shared_ptr<const sgmatch::exec::subgraph_node> node = sgmatch::exec::build_region(regions_.at(i), fusions_);
            minifw::ComputeInfo c;
            c.create_state = [this, node] {
                ++states_;
                return std::shared_ptr<void>(std::make_shared<sgmatch::exec::node_call>(node, "region"));
            };
            c.compute = [this](void* state, const std::vector<const minifw::Tensor*>& in) {
                sgmatch::exec::run_stats st;
                auto out = tensors((*static_cast<const sgmatch::exec::node_call*>(state))(views(in), &st));
                boundary_reorders_ += st.reorders_to_plain;
                fused_kernels_ += st.fused_nodes;
                return out;
            };
            c.release_state = [this](void*) { ++released_; };
            out.push_back(std::move(c));
        }
        view_.reset();  // the session changes the graph next
        return out;
    }

    std::size_t states_created() const { return states_; }
    std::size_t states_released() const { return released_; }
    std::size_t boundary_reorders() const { return boundary_reorders_; }
    std::size_t fused_kernels() const { return fused_kernels_; }

private:
    std::size_t min_size_;
    std::unique_ptr<minifw_view> view_;
    std::vector<sgmatch::subgraph<minifw_view>> regions_;
    const sgmatch::backend<sgmatch::graph> fusions_ = sgmatch::onednn::make_backend<sgmatch::graph>();
    std::atomic<std::size_t> states_{0}, released_{0}, boundary_reorders_{0}, fused_kernels_{0};
};

}  // namespace minifw_sgmatch
