// sgmatch/exec/subgraph.hpp - capability regions of the built-in graph run as one node each
// (the nGraph engine op, ONNX Runtime's oneDNN execution provider).
//
//   sgmatch::exec::register_region_backend();            // backend "onednn.regions"
//   sgmatch::apply_backend(g, "onednn.regions");         // or SGMATCH_BACKEND=onednn.regions
//   sgmatch::exec::executor(g, sgmatch::exec::mode::onednn)(inputs);
//
// make_region_property(name) is a capability property over the ops that have oneDNN kernels
// (region_op_names()) on f32 values (region_support): each maximal connected convex region of them becomes one node whose payload is an
// exec::subgraph_node. Its factory copies the region into a graph of its own (inputs "0", "1",
// ... for the values read at run time; constants, weights included, copied in), applies the
// ready-made backend's fusions inside it (conv / matmul chains with their post-ops, 1x1 +
// depthwise, batchnorm + relu, written-out activations; or the backend object it was given, never
// whatever happens to be registered under a name) and builds an executor for it in
// mode::onednn. At run time the region's kernels run in order: primitives are created once per
// input shape and cached in the kernels, intermediate tensors stay in the layouts the primitives
// prefer (a reorder happens only where a kernel asks for another layout, and outputs leave in the
// layout their kernel produced), and each intermediate buffer goes back to the buffer pool after
// its last read, to be reused by the next allocation of its size.
//
// Any graph type with an adapter: the region is read through graph_traits<G> (attributes listed
// by its optional for_each_attr, else the keys the kernels read (partition/copy.hpp); constants through constant(g, n),
// f32, f64 or integer; shapes through value_type) and copied into a built-in graph. A framework
// runs a region node by calling its payload's exec->run_tensors({{"0", t0}, {"1", t1}, ...})
// with the values of runtime_inputs.
//
// Known limitations: an op inside a region that
// has no oneDNN primitive for its inputs (a Gemm with computed weights, an LRN of even size, an
// Erf outside a written-out GELU that follows a conv or matmul) runs on its reference kernel
// inside the region.
#pragma once

#include <algorithm>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <type_traits>
#include <vector>

#include "sgmatch/detail/config.hpp"
#include "sgmatch/exec/executor.hpp"
#include "sgmatch/graph/graph.hpp"
#include "sgmatch/onednn/register.hpp"
#include "sgmatch/ops/attrs.hpp"
#include "sgmatch/ops/table.hpp"
#include "sgmatch/partition/capability.hpp"
#include "sgmatch/partition/copy.hpp"
#include "sgmatch/partition/partition.hpp"
#include "sgmatch/pattern/vocabulary.hpp"

SGMATCH_BEGIN_NAMESPACE
namespace exec {

/// The names (every alias) of the ops a region takes: each op whose kernels::f32_kernels<Tag>
/// has a oneDNN kernel (exec/kernels.hpp), and Erf, the member of a written-out GELU that has none:
/// the fusions inside a region take a GELU after a conv or matmul into one post-op; an Erf
/// elsewhere runs on its reference kernel inside the region.
SGMATCH_DECL const std::vector<std::string_view>& region_op_names();

/// Whether a node goes into a region: its op is one of region_op_names(), its attributes are ones the
/// kernels implement (ops::op_attrs accepts them), and every value it computes or
/// reads at run time is f32 (or of a type the graph does not say): an int64 shape computation or
/// a bool mask stays outside, on the typed kernels. Constant inputs of any type are fine (a
/// Reshape's shape).
struct region_support {
    template <class G>
    bool operator()(const node_view<G>& v) const {
        if (!has_name(v.op_name())) return false;
        // Attributes the kernels refuse (an unknown one, a value no kernel implements) keep the
        // node outside, on the framework's kernels: the region's executor would refuse it.
        if (const ops::op_schema* schema = ops::find_schema(v.op_name())) {
            try {
                const ops::op_attrs checked(*schema, ops::node_of<G>(v.graph(), v.node()));
                (void)checked;
            } catch (const ops::op_error&) {
                return false;
            }
        }
        auto f32 = [](const std::optional<tensor_type>& t) { return !t || t->type == dtype::f32 || t->type == dtype::unknown; };
        for (std::uint32_t p = 0; p < v.output_count(); ++p)
            if (!f32(v.type(p))) return false;
        for (std::size_t i = 0; i < v.input_count(); ++i)
            if (!v.input(i).is_constant() && !f32(v.input_type(i))) return false;
        return true;
    }

private:
    static bool has_name(std::string_view op) {
        const auto& all = region_op_names();
        return std::find(all.begin(), all.end(), op) != all.end();
    }
};

/// The region of s (in the user's graph, read through its adapter) as a built-in graph of its
/// own, with the backend `fusions` applied inside, and its executor.
template <class G>
std::shared_ptr<const subgraph_node> build_region(const subgraph<G>& s, const backend<graph>& fusions) {
    copied_subgraph c = copy_subgraph(s);
    const std::shared_ptr<graph> region = std::move(c.g);
    auto node = std::make_shared<subgraph_node>();
    node->runtime_inputs = std::move(c.runtime_inputs);
    apply_backend(*region, fusions);
    node->region = region;
    node->exec = std::make_shared<const executor>(*region, mode::onednn);
    return node;
}

/// A capability property whose regions run as region nodes (see the top of this file), with the
/// fusions of `fusions` applied inside each region (by default the ready-made backend's).
template <class G = graph>
property<G> make_region_property(std::string name = "onednn.regions", std::size_t min_size = 2,
                                 std::shared_ptr<const backend<graph>> fusions = nullptr) {
    if (fusions == nullptr) fusions = std::make_shared<const backend<graph>>(onednn::make_backend<graph>());
    auto prop = make_capability_property<G>(std::move(name), region_support{},
                                            [fusions](const subgraph<G>& s) { return build_region<G>(s, *fusions); });
    prop.min_size(min_size).fused_op("onednn.region").inference_only();
    return prop;
}

/// Register the backend "onednn.regions" (one region property) for graphs of type G; idempotent
/// and safe from several threads; returns true (for static registration).
template <class G = graph>
bool register_region_backend(const std::string& name = "onednn.regions") {
    if (backend_registry<G>::instance().find(name) != nullptr) return true;
    backend<G> b(name);
    b.add(make_region_property<G>(name));
    backend_registry<G>::instance().insert(std::move(b));
    return true;
}

}  // namespace exec
SGMATCH_END_NAMESPACE

#if !defined(SGMATCH_SEPARATE_COMPILATION)
#include "sgmatch/exec/impl/subgraph.ipp"
#endif
