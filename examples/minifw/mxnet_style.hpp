// examples/minifw/mxnet_style.hpp - sgmatch in minifw the way MXNet's Subgraph API works.
//
// A backend is registered by name (the ready-made "onednn" one, for minifw's graph through its
// adapter) and switched on by the environment (SGMATCH_BACKEND=onednn) when the framework binds
// a graph. Each match becomes a subgraph op in the framework's own node type
// (create_subgraph_node, MXNet's CreateSubgraphNode): op "_sg_onednn", whose compute, registered
// in the framework's operator registry like any other op, runs the fused kernel through
// sgmatch::exec::node_call on views of the framework's tensors. The framework's user code (build
// a graph, bind, run) does not change.
//
// Selectors as MXNet writes them work too: conv_bn_relu_selector answers Select / SelectInput /
// SelectOutput / Filter / Reset over the framework's own op names (MXNet's conv selector in
// miniature), and the backend "onednn.selectors" compiles each subgraph it selects as a region
// (the subgraph copied out, the ready-made fusions applied inside).
#pragma once

#include <memory>
#include <vector>

#include "adapter.hpp"
#include "framework.hpp"
#include "sgmatch/exec/call.hpp"
#include "sgmatch/exec/subgraph.hpp"
#include "sgmatch/onednn/backend.hpp"
#include "sgmatch/partition/partition.hpp"
#include "sgmatch/partition/selector.hpp"

namespace minifw_sgmatch {

/// The tensors as sgmatch views (no copy) and the results back as minifw tensors.
inline std::vector<sgmatch::exec::value> views(const std::vector<const minifw::Tensor*>& in) {
    std::vector<sgmatch::exec::value> xs;
    for (const minifw::Tensor* t : in) xs.push_back(sgmatch::exec::value::view(t->data.data(), sgmatch::dtype::f32, t->shape));
    return xs;
}
inline std::vector<minifw::Tensor> tensors(const std::vector<sgmatch::exec::value>& ys) {
    std::vector<minifw::Tensor> out;
    for (const auto& y : ys) {
        const sgmatch::exec::value d = y.dense_value();
        out.push_back(minifw::Tensor{d.dims(), std::vector<float>(d.as<float>(), d.as<float>() + d.size())});
    }
    return out;
}

/// MXNet's CreateSubgraphNode: the framework node that stands for a match.
inline std::unique_ptr<minifw::Node> create_subgraph_node(const sgmatch::replacement<const minifw::Node*>& r) {
    auto n = std::make_unique<minifw::Node>();
    n->op = "_sg_onednn";
    n->name = r.name;
    n->attrs["fused_op"] = r.op_name;
    n->state = std::make_shared<const sgmatch::exec::node_call>(sgmatch::exec::node_call::of(r.payload, r.name));
    n->parsed = r.payload;  // what sgmatch made, for whoever reads the graph through the adapter
    return n;
}

/// The subgraph op's compute, in the framework's registry.
inline bool register_subgraph_op() {
    static const bool done = [] {
        minifw::op_registry()["_sg_onednn"] = [](const minifw::Node& n, const std::vector<const minifw::Tensor*>& in) {
            const auto& call = *std::static_pointer_cast<const sgmatch::exec::node_call>(n.state);
            return tensors(call(views(in)));
        };
        return true;
    }();
    return done;
}

/// MXNet's convolution selector in miniature, over the framework's own names: a Convolution,
/// then along its one user a BatchNorm that keeps gamma (fix_gamma=False), then along that one's
/// user an Activation(relu).
class conv_bn_relu_selector final : public sgmatch::subgraph_selector<minifw_view> {
public:
    explicit conv_bn_relu_selector(const minifw_view& g) : g_(g) {}
    bool select(const minifw::Node* const& n) override {
        stage_ = n->op == "Convolution" ? 1 : 0;
        return stage_ == 1;
    }
    bool select_input(const minifw::Node* const&, const minifw::Node* const&) override { return false; }
    bool select_output(const minifw::Node* const& n, const minifw::Node* const& out) override {
        if (g_.users(n).size() != 1) return false;
        if (stage_ == 1 && out->op == "BatchNorm" && !minifw::bool_attr(*out, "fix_gamma", true)) {
            stage_ = 2;
            return true;
        }
        if ((stage_ == 1 || stage_ == 2) && out->op == "Activation" && minifw::str_attr(*out, "act_type", "") == "relu") {
            stage_ = 3;
            return true;
        }
        return false;
    }
    std::vector<const minifw::Node*> filter(const std::vector<const minifw::Node*>& candidates) override { return candidates; }
    void reset() override { stage_ = 0; }

private:
    const minifw_view& g_;
    int stage_ = 0;
};

/// The backend "onednn.selectors": conv_bn_relu_selector's subgraphs, each compiled as a region.
inline bool register_selector_backend() {
    if (sgmatch::backend_registry<minifw_view>::instance().find("onednn.selectors") != nullptr) return true;
    sgmatch::backend<minifw_view> b("onednn.selectors");
    auto fusions = std::make_shared<const sgmatch::backend<sgmatch::graph>>(sgmatch::onednn::make_backend<sgmatch::graph>());
    b.add(sgmatch::make_selector_property<minifw_view>(
              "mxnet.conv_selector", [](const minifw_view& g) { return std::make_unique<conv_bn_relu_selector>(g); },
              [fusions](const sgmatch::subgraph<minifw_view>& s) { return sgmatch::exec::build_region(s, *fusions); })
              .inference_only());
    sgmatch::backend_registry<minifw_view>::instance().insert(std::move(b));
    return true;
}

/// The framework's bind hook: partition g with the backend the environment names (nothing when
/// SGMATCH_BACKEND is unset). The reports say what each property fused and declined, and why.
inline std::vector<sgmatch::property_report> bind(minifw::Graph& g,
                                                  const sgmatch::environment& env = sgmatch::environment::process()) {
    register_subgraph_op();
    sgmatch::onednn::register_backend<minifw_view>();
    register_selector_backend();
    minifw_view view(g, create_subgraph_node);
    return sgmatch::apply_backend_from_env(view, env);
}

}  // namespace minifw_sgmatch
