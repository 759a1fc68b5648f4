// sgmatch/exec/subgraph.hpp - capability regions of the built-in graph run as one node each
// (the nGraph engine op, ONNX Runtime's oneDNN execution provider).
//
//   sgmatch::exec::register_region_backend();            // backend "onednn.regions"
//   sgmatch::apply_backend(g, "onednn.regions");         // or SGMATCH_BACKEND=onednn.regions
//   sgmatch::exec::executor(g, sgmatch::exec::mode::onednn)(inputs);
//
// make_region_property(name) is a capability property over the ops that have oneDNN kernels
// (region_ops): each maximal connected convex region of them becomes one node whose payload is an
// exec::subgraph_node. Its factory copies the region into a graph of its own (inputs "0", "1",
// ... for the values read at run time; constants, weights included, copied in), applies the
// ready-made backend's fusions inside it (conv / matmul chains with their post-ops, 1x1 +
// depthwise, batchnorm + relu, written-out activations) and builds an executor for it in
// mode::onednn. At run time the region's kernels run in order: primitives are created once per
// input shape and cached in the kernels, intermediate tensors stay in the layouts the primitives
// prefer (a reorder happens only where a kernel asks for another layout, and outputs leave in the
// layout their kernel produced), and each intermediate buffer goes back to the buffer pool after
// its last read, to be reused by the next allocation of its size.
//
// Known limitations: the built-in graph only (copying a region needs the adapter to list a
// node's attributes, which the adapter contract does not have yet); an op inside a region that
// has no oneDNN primitive for its inputs (a Gemm with computed weights, an LRN of even size, an
// Erf outside a written-out GELU that follows a conv or matmul) runs on its reference kernel
// inside the region.
#pragma once

#include <memory>
#include <string>
#include <unordered_map>
#include <vector>

#include "sgmatch/detail/config.hpp"
#include "sgmatch/exec/executor.hpp"
#include "sgmatch/graph/graph.hpp"
#include "sgmatch/onednn/backend.hpp"
#include "sgmatch/partition/capability.hpp"
#include "sgmatch/partition/partition.hpp"
#include "sgmatch/pattern/vocabulary.hpp"

SGMATCH_BEGIN_NAMESPACE
namespace exec {

/// The ops a region takes: those with a oneDNN kernel in the executor, and Erf, the member of a
/// written-out GELU that has none: the fusions inside a region take a GELU after a conv or matmul
/// into one post-op; an Erf elsewhere runs on its reference kernel inside the region.
using region_ops =
    supported_ops<ops::Conv, ops::ConvTranspose, ops::BatchNorm, ops::Relu, ops::LeakyRelu, ops::Clip, ops::Sigmoid,
                  ops::Tanh, ops::Elu, ops::Gelu, ops::Swish, ops::HardSwish, ops::HardSigmoid, ops::Mish, ops::Softplus,
                  ops::Exp, ops::Log, ops::Sqrt, ops::Square, ops::Abs, ops::Round, ops::Add, ops::Sub, ops::Mul, ops::Div,
                  ops::Max, ops::Min, ops::MaxPool, ops::AveragePool, ops::GlobalAveragePool, ops::Gemm, ops::MatMul,
                  ops::Flatten, ops::Softmax, ops::Concat, ops::LRN, ops::LayerNorm, ops::Reshape, ops::Transpose, ops::Pow,
                  ops::Erf>;

/// The region of s as a graph of its own, with the fusions applied inside, and its executor.
inline std::shared_ptr<const subgraph_node> build_region(const subgraph<graph>& s) {
    const graph& g = *s.graph;
    auto region = std::make_shared<graph>();
    auto node = std::make_shared<subgraph_node>();
    std::unordered_map<std::uint64_t, input_ref> map;  // outer value -> region value
    auto key = [](value_ref<node_id> v) { return (std::uint64_t{v.node.value} << 16) | v.port; };
    for (std::size_t i = 0; i < s.inputs.size(); ++i) {
        const auto v = s.inputs[i];
        if (const auto c = g.constant(v.node); c && c->data != nullptr) {
            const auto* p = static_cast<const float*>(c->data);
            map.emplace(key(v), input_ref(region->add_constant(g.name(v.node), std::vector<std::int64_t>(c->dims, c->dims + c->rank),
                                                             std::vector<float>(p, p + c->element_count()))));
            continue;
        }
        const auto t = g.value_type(v.node, v.port);
        map.emplace(key(v), input_ref(region->add_input(std::to_string(node->runtime_inputs.size()),
                                                        t ? *t : tensor_type{})));
        node->runtime_inputs.push_back(i);
    }
    std::vector<std::uint8_t> member(g.index_bound(), 0);
    for (const auto n : s.nodes) member[n.value] = 1;
    for (const auto n : g.nodes()) {  // topological order
        if (!member[n.value]) continue;
        std::vector<input_ref> ins;
        for (std::size_t i = 0; i < g.input_count(n); ++i) ins.push_back(map.at(key(g.input(n, i))));
        const node_id r = region->add_op(g.op_name(n), g.name(n), ins, {}, static_cast<std::uint32_t>(g.output_count(n)));
        g.for_each_attr(n, [&](std::string_view k, const attribute& a) { region->set_attr(r, k, a); });
        for (std::uint32_t p = 0; p < g.output_count(n); ++p) {
            if (const auto t = g.value_type(n, p)) region->set_type({r, p}, *t);
            map.emplace(key({n, p}), input_ref(value_ref<node_id>{r, p}));
        }
    }
    for (const auto v : s.outputs) region->mark_output(map.at(key(v)));
    // The ready-made fusions, inside the region.
    onednn::register_backend<graph>();
    apply_backend(*region, "onednn");
    node->region = region;
    node->exec = std::make_shared<const executor>(*region, mode::onednn);
    return node;
}

/// A capability property whose regions run as region nodes (see the top of this file).
inline property<graph> make_region_property(std::string name = "onednn.regions", std::size_t min_size = 2) {
    auto prop = make_capability_property<graph>(std::move(name), region_ops{},
                                                [](const subgraph<graph>& s) { return build_region(s); });
    prop.min_size(min_size).fused_op("onednn.region").inference_only();
    return prop;
}

/// Register the backend "onednn.regions" (one region property) for the built-in graph;
/// idempotent; returns true (for static registration).
inline bool register_region_backend(const std::string& name = "onednn.regions") {
    if (backend_registry<graph>::instance().find(name) != nullptr) return true;
    return register_property<graph>(name, make_region_property());
}

}  // namespace exec
SGMATCH_END_NAMESPACE
