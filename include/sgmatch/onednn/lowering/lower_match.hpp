// sgmatch/onednn/lowering/lower_match.hpp - the lowering of a matched subgraph (a main op and what
// follows it) into a kernel spec.
//
// lower_match() reads the matched nodes through the graph adapter (attributes checked against
// each op's description, constant parameters, shapes when the adapter has them) and either
// returns the kernel's spec or the reason the match cannot lower (a non-constant BatchNorm, an
// operand on the wrong side, an intermediate used outside the match, an attribute no kernel
// implements, ...). The property declines such matches with that reason.
//
// One lowering per main op's role, each in a header of its own: Conv and ConvTranspose
// (main_conv.hpp: a conv_spec, transposed for ConvTranspose), MatMul and Gemm with constant
// weights (main_matmul.hpp), and BatchNorm (+ Relu) on its own (main_batch_norm.hpp). The conv
// and matmul lowerings hand the chain after the main op to one walk (chain.hpp) through a
// chain_target, so a new main op is a lowering of its own and a line in the dispatch below,
// without touching the others. After a 1x1 conv, a 3x3 depthwise conv becomes a depthwise
// post-op. Written-out activations (decomposed.hpp) are recognized through composite lowerings.
//
// Known limitations: Gemm with transA, a BatchNorm after a matmul whose output is not 2-D and a
// MatMul whose right operand is computed are declined; apart from composites the chain must be
// a straight line from the main op.
#pragma once

#include <cstddef>
#include <optional>
#include <string>
#include <type_traits>
#include <vector>

#include "sgmatch/detail/config.hpp"
#include "sgmatch/graph/adapter.hpp"
#include "sgmatch/onednn/lowering/context.hpp"
#include "sgmatch/onednn/lowering/main_batch_norm.hpp"
#include "sgmatch/onednn/lowering/main_conv.hpp"
#include "sgmatch/onednn/lowering/main_matmul.hpp"
#include "sgmatch/onednn/lowering/roles.hpp"
#include "sgmatch/onednn/lowering/table.hpp"
#include "sgmatch/ops/attrs.hpp"

SGMATCH_BEGIN_NAMESPACE
namespace onednn {
namespace detail {

/// lower_match's body: one instance per graph type, whatever the pattern (the pattern only
/// decides the two tables), so that a backend of five properties compiles it once. It picks the
/// main op's lowering by its role.
template <class G>
match_lowering<typename graph_traits<G>::node_type> lower_match_with(const G& g,
                                                                     const typename graph_traits<G>::node_type* nodes,
                                                                     std::size_t count, bool with_data,
                                                                     const std::vector<lowering_entry>& table,
                                                                     const std::vector<recognize_fn<G>>& composite_table) {
    using traits = graph_traits<G>;
    match_lowering<typename traits::node_type> out;
    const lowering_context<G> c{{g, nodes, count}, with_data, table, composite_table};
    if (count == 0) {
        out.decline = "empty match";
        return out;
    }
    const auto main = nodes[0];
    const lowering_entry* e = find_entry(table, traits::op_name(g, main));
    const lowering_role role = traits::kind(g, main) == node_kind::op && e != nullptr ? e->role : lowering_role::none;
    if (role != lowering_role::conv && role != lowering_role::conv_transpose && role != lowering_role::matmul &&
        role != lowering_role::batch_norm) {
        out.decline = "the match does not start with a convolution, a matmul or a BatchNorm";
        return out;
    }
    std::optional<ops::op_attrs> head;  // the main op's attributes
    try {
        head.emplace(attrs_of(*e, g, main));
    } catch (const ops::op_error& err) {
        out.decline = err.what();
        return out;
    }
    switch (role) {
        case lowering_role::batch_norm: out.decline = lower_batch_norm_main(c, main, *head, out); break;
        case lowering_role::conv: out.decline = lower_conv_main(c, main, *head, false, out); break;
        case lowering_role::conv_transpose: out.decline = lower_conv_main(c, main, *head, true, out); break;
        case lowering_role::matmul: out.decline = lower_matmul_main(c, main, *head, out); break;
        default: break;
    }
    return out;
}

}  // namespace detail

/// Lower the matched nodes (a Conv, ConvTranspose, MatMul, Gemm or BatchNorm and a straight
/// chain after it) to a spec. With `with_data` false only the checks run (nothing is copied):
/// what a property's check does.
template <class G, class P>
match_lowering<typename graph_traits<G>::node_type> lower_match(const G& g, const typename graph_traits<G>::node_type* nodes,
                                                                std::size_t count, bool with_data) {
    using unit_list = detail::units_t<std::decay_t<P>>;
    return detail::lower_match_with<G>(g, nodes, count, with_data, detail::entries<unit_list>::get(),
                                       detail::composites<G, unit_list>::get());
}

/// The former name of lower_match, which lowers any main op: deprecated, removed in the next
/// minor version.
template <class G, class P>
[[deprecated("sgmatch::onednn::lower_conv is lower_match")]] match_lowering<typename graph_traits<G>::node_type> lower_conv(
    const G& g, const typename graph_traits<G>::node_type* nodes, std::size_t count, bool with_data) {
    return lower_match<G, P>(g, nodes, count, with_data);
}

}  // namespace onednn
SGMATCH_END_NAMESPACE
