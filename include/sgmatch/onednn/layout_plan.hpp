// sgmatch/onednn/layout_plan.hpp - which layout a network's fused convolutions run in.
//
//   conv_spec::layout_choice l = onednn::conv_layout_of(g);   // any or blocked
//
// oneDNN 2.6 on AVX-512 runs a 1x1 convolution with a depthwise 3x3 one fused after it
// (MobileNet's expansion and depthwise convs) as one jit_1x1 kernel only in the blocked layout
// (nChw16c; nChw8c below AVX-512), while on its own each conv picks channels-last
// (brgconv). A network of such blocks gains from the fusion only where the convs around it
// read and write the blocked layout too (a reorder in and out of every fused pair costs more
// than the fusion saves). So the layout is chosen for the whole network: blocked where
//   - it holds a depthwise 3x3 convolution (a Conv, or a fused conv, reading weights
//     [O, 1, 3, 3]), and
//   - every convolution's output goes only to convolutions, to element-wise ops that a fused
//     conv takes as post-ops (Add, Relu, Clip, BatchNormalization, ...), through them to more
//     of the same, to pooling, or out of the graph: nothing reads it in a layout of its own
//     (Concat, Reshape, Transpose, Split, a channel shuffle), which would cost a reorder;
// `any` (oneDNN's choice per conv) elsewhere. The plan reads only what fusion leaves in place
// (op names, weights, users), so every property of a backend sees the same answer, before and
// after the ones that ran first.
#pragma once

#include <algorithm>
#include <cstddef>
#include <string_view>
#include <vector>

#include "sgmatch/detail/config.hpp"
#include "sgmatch/graph/adapter.hpp"
#include "sgmatch/onednn/fused_conv.hpp"
#include "sgmatch/onednn/lowering/lists.hpp"

SGMATCH_BEGIN_NAMESPACE
namespace onednn {
namespace detail {

inline bool is_conv_op(std::string_view op) { return op == "Conv" || op == "onednn.fused_conv"; }

/// Ops a conv's output may pass through and keep the layout the conv wrote: those whose
/// lowering says keeps_layout (lowering/roles.hpp).
inline bool keeps_layout(std::string_view op) {
    const auto& names = layout_keeping_names();
    return std::find(names.begin(), names.end(), op) != names.end();
}

/// Ops that end a conv's layout region without a reorder of their own that matters: pooling
/// (a global one leaves 1x1 images).
inline bool ends_region(std::string_view op) {
    return op == "GlobalAveragePool" || op == "GlobalMaxPool" || op == "MaxPool" || op == "AveragePool";
}

}  // namespace detail

/// The layout of the network's fused convolutions: blocked or any (see the top of the file).
template <class G>
conv_spec::layout_choice conv_layout_of(const G& g) {
    using T = graph_traits<G>;
    using N = typename T::node_type;
    bool depthwise = false;
    for (N n : T::nodes(g)) {
        if (T::kind(g, n) != node_kind::op) continue;
        const auto& name = T::op_name(g, n);
        if (!detail::is_conv_op(std::string_view(name))) continue;
        for (std::size_t i = 1; i < T::input_count(g, n) && !depthwise; ++i) {
            const auto w = adapter<G>::constant(g, T::input(g, n, i).node);
            depthwise = w && w->rank == 4 && w->dims[1] == 1 && w->dims[2] == 3 && w->dims[3] == 3;
        }
        // Every user of the conv's output, through the ops that keep its layout.
        std::vector<N> todo{n};
        for (std::size_t k = 0; k < todo.size(); ++k) {
            if (todo.size() > 4096) return conv_spec::layout_choice::any;  // not a chain of blocks
            for (std::size_t u = 0; u < T::user_count(g, todo[k]); ++u) {
                const N user = T::user(g, todo[k], u).user;
                if (T::kind(g, user) != node_kind::op) return conv_spec::layout_choice::any;
                const auto& name = T::op_name(g, user);
                const std::string_view op(name);
                if (detail::is_conv_op(op) || detail::ends_region(op)) continue;
                if (!detail::keeps_layout(op)) return conv_spec::layout_choice::any;
                todo.push_back(user);
            }
        }
    }
    return depthwise ? conv_spec::layout_choice::blocked : conv_spec::layout_choice::any;
}

}  // namespace onednn
SGMATCH_END_NAMESPACE
