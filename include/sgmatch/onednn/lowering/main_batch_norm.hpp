// sgmatch/onednn/lowering/main_batch_norm.hpp - the lowering of a match whose main op is a
// BatchNorm: oneDNN's batch normalization, with one Relu after it as its fuse_norm_relu flag.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include <oneapi/dnnl/dnnl.hpp>

#include "sgmatch/detail/config.hpp"
#include "sgmatch/graph/adapter.hpp"
#include "sgmatch/onednn/lowering/context.hpp"
#include "sgmatch/onednn/op_kernels.hpp"
#include "sgmatch/ops/attrs.hpp"

SGMATCH_BEGIN_NAMESPACE
namespace onednn {
namespace detail {

/// BatchNorm (+ Relu) as one batch_norm_spec: "" on success, else why not.
template <class G>
std::string lower_batch_norm_main(const lowering_context<G>& c, typename graph_traits<G>::node_type main, const ops::op_attrs& head,
                                  match_lowering<typename graph_traits<G>::node_type>& out) {
    using traits = graph_traits<G>;
    using N = typename traits::node_type;
    const G& g = c.g;
    batch_norm_spec& b = out.spec.template emplace<batch_norm_spec>();
    b.name = std::string(traits::name(g, main));
    std::int64_t channels = -1;
    std::vector<float> p[4];
    if (const std::string why = c.batch_norm_parameters(main, channels, p); !why.empty()) return why;
    b.scale = std::move(p[0]);
    b.shift = std::move(p[1]);
    b.mean = std::move(p[2]);
    b.var = std::move(p[3]);
    if (head.i("training_mode") != 0) return "BatchNorm " + c.name(main) + " is in training mode";
    b.eps = static_cast<float>(head.f("epsilon"));
    out.src = traits::input(g, main, 0);
    if (auto t = adapter<G>::value_type(g, out.src.node, out.src.port); t && !t->dims.empty() && (t->dims.size() < 2 || t->dims[1] != channels))
        return "BatchNorm " + c.name(main) + ": input " + to_string(t->dims) + " does not have " + std::to_string(channels) + " channels";
    N last = main;
    for (std::size_t i = 1; i < c.count; ++i) {
        const N n = c.nodes[i];
        if (traits::kind(g, n) != node_kind::op) continue;
        const lowering_entry* e = find_entry(c.table, traits::op_name(g, n));
        std::vector<post_op> po;
        if (e != nullptr && e->role == lowering_role::eltwise) {
            try {
                po = e->eltwise(attrs_of(*e, g, n), ops::node_of<G>(g, n));
            } catch (const lowering_error&) {
            } catch (const ops::op_error&) {
            }
        }
        const auto* elt = po.size() == 1 ? po[0].as<post_op::eltwise_op>() : nullptr;
        const bool relu = elt != nullptr && elt->alg == dnnl::algorithm::eltwise_relu && elt->alpha == 0.0f;
        if (b.relu || !relu || !(traits::input(g, n, 0) == value_ref<N>{main, 0}))
            return "after BatchNorm " + c.name(main) + " only one Relu fuses (oneDNN's fuse_norm_relu), not " +
                   std::string(traits::op_name(g, n)) + " " + c.name(n);
        if (traits::user_count(g, main) != 1 || adapter<G>::has_graph_output(g, main)) return "the value of " + c.name(main) + " is used outside the match";
        b.relu = true;
        last = n;
    }
    if (c.unused(last)) return "the result of " + c.name(last) + " is not used";
    out.dst = value_ref<N>{last, 0};
    return "";
}

}  // namespace detail
}  // namespace onednn
SGMATCH_END_NAMESPACE
