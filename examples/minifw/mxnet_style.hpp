// examples/minifw/mxnet_style.hpp - sgmatch in minifw the way MXNet's Subgraph API works.
//
// A backend is registered by name (the ready-made "onednn" one, for minifw's graph through its
// adapter) and switched on by the environment (SGMATCH_BACKEND=onednn) when the framework binds
// a graph. Each match becomes a subgraph op in the framework's own node type
// (create_subgraph_node, MXNet's CreateSubgraphNode): op "_sg_onednn", whose compute, registered
// in the framework's operator registry like any other op, runs the fused kernel through
// sgmatch::exec::node_call on views of the framework's tensors. The framework's user code (build
// a graph, bind, run) does not change.
#pragma once

#include <memory>
#include <vector>

#include "adapter.hpp"
#include "framework.hpp"
#include "sgmatch/exec/call.hpp"
#include "sgmatch/onednn/backend.hpp"
#include "sgmatch/partition/partition.hpp"

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

/// The framework's bind hook: partition g with the backend the environment names (nothing when
/// SGMATCH_BACKEND is unset). The reports say what each property fused and declined, and why.
inline std::vector<sgmatch::property_report> bind(minifw::Graph& g,
                                                  const sgmatch::environment& env = sgmatch::environment::process()) {
    register_subgraph_op();
    sgmatch::onednn::register_backend<minifw_view>();
    minifw_view view(g, create_subgraph_node);
    return sgmatch::apply_backend_from_env(view, env);
}

}  // namespace minifw_sgmatch
