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
// Any graph type with an adapter: the region is read through graph_traits<G> (attributes listed
// by its optional for_each_attr, else the keys the kernels read; constants through constant(g, n),
// f32, f64 or integer; shapes through value_type) and copied into a built-in graph. A framework
// runs a region node by calling its payload's exec->run_tensors({{"0", t0}, {"1", t1}, ...})
// with the values of runtime_inputs.
//
// Known limitations: an op inside a region that
// has no oneDNN primitive for its inputs (a Gemm with computed weights, an LRN of even size, an
// Erf outside a written-out GELU that follows a conv or matmul) runs on its reference kernel
// inside the region.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string_view>
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

namespace detail {

// The attribute keys the region's kernels read: what is copied from an adapter that cannot list
// a node's attributes (graph_traits<G>::for_each_attr, optional).
inline constexpr std::string_view region_attr_keys[] = {
    "alpha", "approximate", "auto_pad", "axis", "beta", "bias", "count_include_pad", "dilations",
    "epsilon", "group", "kernel_shape", "max", "min", "mode", "output_padding", "output_shape",
    "pads", "perm", "shape", "size", "strides", "transA", "transB", "value"};

}  // namespace detail

/// The region of s (in the user's graph, read through its adapter) as a built-in graph of its
/// own, with the fusions applied inside, and its executor.
template <class G>
std::shared_ptr<const subgraph_node> build_region(const subgraph<G>& s) {
    using traits = graph_traits<G>;
    using N = typename traits::node_type;
    const G& g = *s.graph;
    auto region = std::make_shared<graph>();
    auto node = std::make_shared<subgraph_node>();
    std::unordered_map<std::uint64_t, input_ref> map;  // outer value -> region value
    auto key = [&](value_ref<N> v) { return (std::uint64_t{traits::index(g, v.node)} << 16) | v.port; };
    for (std::size_t i = 0; i < s.inputs.size(); ++i) {
        const auto v = s.inputs[i];
        if (const auto c = adapter<G>::constant(g, v.node)) {
            if (auto values = c->to_floats()) {
                map.emplace(key(v), input_ref(region->add_constant(std::string(traits::name(g, v.node)),
                                                                 std::vector<std::int64_t>(c->dims, c->dims + c->rank),
                                                                 std::move(*values))));
                continue;
            }
        }
        const auto t = adapter<G>::value_type(g, v.node, v.port);
        map.emplace(key(v), input_ref(region->add_input(std::to_string(node->runtime_inputs.size()),
                                                        t ? *t : tensor_type{})));
        node->runtime_inputs.push_back(i);
    }
    std::vector<std::uint8_t> member(traits::index_bound(g), 0);
    for (const auto n : s.nodes) member[traits::index(g, n)] = 1;
    for (const auto n : traits::nodes(g)) {  // topological order
        if (!member[traits::index(g, n)]) continue;
        std::vector<input_ref> ins;
        for (std::size_t i = 0; i < traits::input_count(g, n); ++i) ins.push_back(map.at(key(traits::input(g, n, i))));
        const auto outs = static_cast<std::uint32_t>(traits::output_count(g, n));
        const node_id r = region->add_op(std::string(traits::op_name(g, n)), std::string(traits::name(g, n)), ins, {}, outs);
        adapter<G>::for_each_attr(g, n, detail::region_attr_keys,
                                  [&](std::string_view k, const attribute& a) { region->set_attr(r, k, a); });
        for (std::uint32_t p = 0; p < outs; ++p) {
            if (const auto t = adapter<G>::value_type(g, n, p)) region->set_type({r, p}, *t);
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
template <class G = graph>
property<G> make_region_property(std::string name = "onednn.regions", std::size_t min_size = 2) {
    auto prop = make_capability_property<G>(std::move(name), region_ops{},
                                            [](const subgraph<G>& s) { return build_region<G>(s); });
    prop.min_size(min_size).fused_op("onednn.region").inference_only();
    return prop;
}

/// Register the backend "onednn.regions" (one region property) for graphs of type G; idempotent;
/// returns true (for static registration).
template <class G = graph>
bool register_region_backend(const std::string& name = "onednn.regions") {
    if (backend_registry<G>::instance().find(name) != nullptr) return true;
    return register_property<G>(name, make_region_property<G>());
}

}  // namespace exec
SGMATCH_END_NAMESPACE
