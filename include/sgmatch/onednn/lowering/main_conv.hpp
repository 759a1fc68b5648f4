// sgmatch/onednn/lowering/main_conv.hpp - the lowering of a match whose main op is a Conv or a
// ConvTranspose: a conv_spec (transposed for ConvTranspose), then the chain after it (chain.hpp).
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "sgmatch/detail/config.hpp"
#include "sgmatch/graph/adapter.hpp"
#include "sgmatch/onednn/fused_conv.hpp"
#include "sgmatch/onednn/lowering/chain.hpp"
#include "sgmatch/onednn/lowering/context.hpp"
#include "sgmatch/ops/attrs.hpp"

SGMATCH_BEGIN_NAMESPACE
namespace onednn {
namespace detail {

/// A Conv (transposed: a ConvTranspose) and its chain as one conv_spec: "" on success, else why not.
template <class G>
std::string lower_conv_main(const lowering_context<G>& c, typename graph_traits<G>::node_type main, const ops::op_attrs& head,
                            bool transposed, match_lowering<typename graph_traits<G>::node_type>& out) {
    using traits = graph_traits<G>;
    const G& g = c.g;
    conv_spec& s = out.spec.template emplace<conv_spec>();
    s.name = std::string(traits::name(g, main));
    s.transposed = transposed;
    const std::string what = std::string(transposed ? "ConvTranspose " : "Conv ") + c.name(main);
    const std::size_t ins = traits::input_count(g, main);
    if (ins < 2) return what + " has no weights input";
    out.src = traits::input(g, main, 0);
    const auto w = c.const_data(traits::input(g, main, 1));
    if (!w) return what + ": weights are not a constant with data";
    s.weights_dims.assign(w->dims, w->dims + w->rank);
    // auto_pad other than NOTSET and ConvTranspose's output_shape were refused by the description.
    s.groups = head.i("group");
    s.strides = head.ints("strides");  // empty when absent: the spec's defaults
    s.dilations = head.ints("dilations");
    if (s.transposed) s.output_padding = head.ints("output_padding");
    const dims pads = head.ints("pads");
    const std::size_t sp = s.spatial_rank();
    if (!pads.empty()) {
        if (pads.size() != 2 * sp) return what + ": pads has " + std::to_string(pads.size()) + " values";
        s.pads_begin.assign(pads.begin(), pads.begin() + static_cast<std::ptrdiff_t>(sp));
        s.pads_end.assign(pads.begin() + static_cast<std::ptrdiff_t>(sp), pads.end());
    }
    if (c.with_data) s.weights = weight_values(g, traits::input(g, main, 1).node, *w);  // else none: the spec is for checks
    if (ins >= 3) {
        const auto b = c.const_data(traits::input(g, main, 2));
        if (!b) return what + ": bias is not a constant with data";
        s.bias = c.values_or_zeros(*b);
    }
    try {
        s.validate();
    } catch (const kernel_error& e) {
        return e.what();
    }
    std::optional<dims> out_dims;  // the conv's output shape, when the adapter knows it
    if (auto t = adapter<G>::value_type(g, main, 0); t && !t->dims.empty()) out_dims = t->dims;
    chain_target t{s.post_ops,
                   s.bias,
                   s.out_channels(),
                   s.spatial_rank() + 1,
                   out_dims,
                   [](const std::string&) { return std::string(); },
                   [&s](std::vector<float> (&p)[4], float eps) { s.fold_batch_norm(p[0], p[1], p[2], p[3], eps); },
                   !transposed};
    if (std::string why = lower_chain(c, main, t, out); !why.empty()) return why;
    try {
        s.validate();  // again, with the post-ops (a depthwise one needs a 1x1 conv before it)
        if (auto ty = adapter<G>::value_type(g, out.src.node, out.src.port); ty && !ty->dims.empty()) (void)s.output_dims(ty->dims);
    } catch (const kernel_error& e) {
        return e.what();
    }
    return "";
}

}  // namespace detail
}  // namespace onednn
SGMATCH_END_NAMESPACE
