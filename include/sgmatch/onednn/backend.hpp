// sgmatch/onednn/backend.hpp - the ready-made "onednn" backend.
//
//   sgmatch::onednn::register_backend<my_graph>();      // once, e.g. at static-init time
//   sgmatch::apply_backend(g, "onednn");                 // or SGMATCH_BACKEND=onednn and
//                                                        // sgmatch::apply_backend_from_env(g)
//
// Its properties, in order (fp32 inference, after oneDNN's own graph component's fusions):
//   onednn.conv1x1_depthwise  conv 1x1 + bias? + bn? + unary{0,2} + depthwise 3x3 + bn? + [unary |
//                           binary]{0,2}, kept only where oneDNN runs it as one kernel in the
//                           layout the convs around it use (see below; the network's
//                           convolutions run in one layout, layout_plan.hpp);
//                           a binary op after the depthwise conv is declined (fused_conv.hpp)
//   onednn.conv_post_ops    conv + bias add? + batchnorm? + act? + [unary | binary]{0,3}
//   onednn.conv_transpose_post_ops  convtranspose + (the same)
//   onednn.attention        scaled dot-product attention written out (attention.hpp): two matmuls,
//                           softmax, the scale, mask and head transposes folded in
//   onednn.matmul_post_ops  (matmul | gemm) + bias add? + batchnorm? + act? + [unary | binary]{0,3}
//   onednn.concat_batch_norm  a channel concat read only by batchnorm + relu? (concat_norm.hpp):
//                           one pass, the parts normalized into their places (DenseNet)
//   onednn.batch_norm_relu  batchnorm + relu (oneDNN's fuse_norm_relu)
//   onednn.layer_norm       a LayerNorm written out as exporters emit it (layer_norm.hpp)
//   onednn.channel_shuffle  Reshape -> Transpose -> Reshape shuffling channels (channel_shuffle.hpp):
//                           one reorder in the source's layout
// where act is a GELU (erf or tanh), Swish or HardSwish written out as exporters emit them
// (decomposed.hpp): one eltwise post-op.
//
// A program can compile this backend once, in one translation unit, and register it from others
// that do not compile it: onednn/register.hpp.
//
// Whole supported regions as one node each: the backend "onednn.regions" of the built-in graph
// (sgmatch/exec/subgraph.hpp), which applies these fusions inside each region.
#pragma once

#include <algorithm>
#include <string>
#include <type_traits>

#include "sgmatch/detail/config.hpp"
#include "sgmatch/onednn/attention.hpp"
#include "sgmatch/onednn/channel_shuffle.hpp"
#include "sgmatch/onednn/concat_norm.hpp"
#include "sgmatch/onednn/decomposed.hpp"
#include "sgmatch/onednn/layer_norm.hpp"
#include "sgmatch/onednn/layout_plan.hpp"
#include "sgmatch/onednn/lowering/lists.hpp"
#include "sgmatch/onednn/property.hpp"
#include "sgmatch/onednn/register.hpp"
#include "sgmatch/partition/partition.hpp"
#include "sgmatch/pattern/combinators.hpp"
#include "sgmatch/pattern/vocabulary.hpp"

SGMATCH_BEGIN_NAMESPACE
namespace onednn {

/// The unary ops a fused kernel takes as eltwise post-ops: every tag with an eltwise lowering.
inline constexpr auto unary_post_op = op_of(tags_with_role<lowering_role::eltwise>{});
/// The binary ops a fused kernel takes as sum / binary post-ops (the other operand: anything):
/// every tag with a binary lowering.
inline constexpr auto binary_post_op = op_of(tags_with_role<lowering_role::binary>{}, any());

/// A constant with more than one element (a bias; a scalar Add is a post-op, and may be the
/// "+ 3" of a written-out HardSwish).
struct not_scalar {
    template <class V>
    bool operator()(const V& n) const {
        return !n.scalar().has_value();
    }
    std::string describe() const { return "not a scalar"; }
};
inline constexpr auto bias_add = op<ops::Add>(constant().where(not_scalar{}));

/// The capture naming the value a decomposed activation applies to (decomposed.hpp).
struct activation_input;

/// conv + bias add? + batchnorm? + decomposed activation? + [unary | binary]{0,3}
inline constexpr auto conv_post_ops =
    capture<activation_input>(op<ops::Conv>() >> optional(bias_add) >> optional(op<ops::BatchNorm>())) >>
    optional(decomposed_activation<activation_input>()) >> repeat<0, 3>(unary_post_op | binary_post_op);

/// convtranspose + bias add? + batchnorm? + decomposed activation? + [unary | binary]{0,3}
inline constexpr auto conv_transpose_post_ops =
    capture<activation_input>(op<ops::ConvTranspose>() >> optional(bias_add) >> optional(op<ops::BatchNorm>())) >>
    optional(decomposed_activation<activation_input>()) >> repeat<0, 3>(unary_post_op | binary_post_op);

/// (matmul | gemm) + bias add? + batchnorm? + decomposed activation? + [unary | binary]{0,3}
inline constexpr auto matmul_post_ops =
    capture<activation_input>((op<ops::MatMul>() | op<ops::Gemm>()) >> optional(bias_add) >> optional(op<ops::BatchNorm>())) >>
    optional(decomposed_activation<activation_input>()) >> repeat<0, 3>(unary_post_op | binary_post_op);

/// A conv whose weights are [O, C, 1, 1]; a 3x3 depthwise conv (weights [O, 1, 3, 3]).
struct conv_1x1 {
    template <class V>
    bool operator()(const V& n) const {
        const auto w = n.input_count() >= 2 ? n.input(1).constant() : std::nullopt;
        return w && w->rank == 4 && w->dims[2] == 1 && w->dims[3] == 1;
    }
    std::string describe() const { return "1x1"; }
};
struct conv_depthwise_3x3 {
    template <class V>
    bool operator()(const V& n) const {
        const auto w = n.input_count() >= 2 ? n.input(1).constant() : std::nullopt;
        return w && w->rank == 4 && w->dims[1] == 1 && w->dims[2] == 3 && w->dims[3] == 3;
    }
    std::string describe() const { return "depthwise 3x3"; }
};

/// conv 1x1 + bias add? + batchnorm? + unary{0,2} + depthwise conv 3x3 + bias add? + batchnorm? +
/// [unary | binary]{0,2} (MobileNet's expansion and depthwise convs as one primitive).
inline constexpr auto conv1x1_depthwise =
    op<ops::Conv>().where(conv_1x1{}) >> optional(bias_add) >> optional(op<ops::BatchNorm>()) >> repeat<0, 2>(unary_post_op) >>
    op<ops::Conv>().where(conv_depthwise_3x3{}) >> optional(op<ops::BatchNorm>()) >>
    repeat<0, 2>(unary_post_op | binary_post_op);

namespace detail {

/// "plain", "channels-last" or "blocked", for a message.
inline std::string layout_name(const dnnl::memory::desc& d) {
    const dims shape = compat::dims_of(d);
    if (d == plain_desc(shape)) return "plain";
    if (d == channels_last_desc(shape)) return "channels-last";
    return "blocked";
}

/// The conv 1x1 + depthwise property keeps a match only where the fusion pays: oneDNN 2.6 runs
/// it as one jit_1x1 kernel for some shapes (faster than two primitives on sources already in
/// its layout, benchmarks/RESULTS.md) and as two primitives in sequence (ref_fused_convolution,
/// no gain) for others. The one kernel reads and writes a blocked layout; where the 1x1 conv on
/// its own (as the convs around it run: the network's layout, layout_plan.hpp) takes another
/// one (channels last with brgconv on AVX-512), each fused pair costs a reorder in and one out,
/// more than the fusion saves: declined. A network of such blocks whose convs feed only convs,
/// post-ops and pooling (MobileNetV2) runs blocked throughout, and there the fusion is kept.
/// The check makes the primitive descriptors for the input shape the adapter gives.
template <class G>
property<G> make_conv1x1_depthwise_property() {
    using N = typename graph_traits<G>::node_type;
    using P = std::decay_t<decltype(conv1x1_depthwise)>;
    auto prop = make_fused_property<G>("onednn.conv1x1_depthwise", conv1x1_depthwise);
    prop.check([](const G& g, const N* nodes, std::size_t count) -> std::string {
        auto l = lower_match<G, P>(g, nodes, count, /*with_data=*/false);
        if (!l.decline.empty()) return l.decline;
        const auto t = adapter<G>::value_type(g, l.src.node, l.src.port);
        if (!t || t->dims.empty())
            return "the input shape is unknown (whether a 1x1 + depthwise fusion pays depends on it)";
        try {
            conv_spec& spec = std::get<conv_spec>(l.spec);
            spec.layout = conv_layout_of(g);  // as the factory will build it
            const fused_conv::choice fused = fused_conv(spec).described(t->dims);
            if (fused.implementation.rfind("ref_fused", 0) == 0)
                return "oneDNN runs this 1x1 + depthwise fusion as two primitives (" + fused.implementation + "): no gain";
            // The 1x1 conv on its own, as the convs around the fusion run: where it reads another
            // layout than the fused kernel, a reorder goes in and one comes out of every fused pair.
            conv_spec alone = spec;
            auto dw = std::find_if(alone.post_ops.begin(), alone.post_ops.end(), [](const post_op& p) { return p.is<post_op::depthwise_op>(); });
            alone.post_ops.erase(dw, alone.post_ops.end());
            const dnnl::memory::desc alone_src = fused_conv(std::move(alone)).described(t->dims).src;
            if (fused.src != alone_src)
                return "oneDNN runs this 1x1 + depthwise fusion in a " + layout_name(fused.src) + " layout where the convs around it take " +
                       layout_name(alone_src) + ": the reorders into and out of it cost more than the fusion saves";
        } catch (const kernel_error& e) {
            return e.what();
        }
        return {};
    });
    return prop;
}

}  // namespace detail

/// batchnorm + relu (a BatchNorm no conv took: pre-activation blocks)
inline constexpr auto batch_norm_relu = op<ops::BatchNorm>() >> op<ops::Relu>();

/// The ready-made backend as an object (the properties above, in order), to apply as it is
/// (apply_backend(g, b)) or to register (register_backend<G>(), onednn/register.hpp).
template <class G>
backend<G> make_backend(const std::string& name) {
    backend<G> b(name);
    auto dw = detail::make_conv1x1_depthwise_property<G>();
    dw.fused_op("onednn.fused_conv").inference_only();
    b.add(std::move(dw));
    auto conv = make_fused_property<G>("onednn.conv_post_ops", conv_post_ops);
    conv.fused_op("onednn.fused_conv").inference_only();
    b.add(std::move(conv));
    auto deconv = make_fused_property<G>("onednn.conv_transpose_post_ops", conv_transpose_post_ops);
    deconv.fused_op("onednn.fused_conv_transpose").inference_only();
    b.add(std::move(deconv));
    auto att = make_attention_property<G>();
    att.fused_op("onednn.fused_attention").inference_only();
    b.add(std::move(att));
    auto mm = make_fused_property<G>("onednn.matmul_post_ops", matmul_post_ops);
    mm.fused_op("onednn.fused_matmul").inference_only();
    b.add(std::move(mm));
    auto cat = make_concat_batch_norm_property<G>();
    cat.fused_op("onednn.fused_concat_batch_norm").inference_only();
    b.add(std::move(cat));
    auto bn = make_fused_property<G>("onednn.batch_norm_relu", batch_norm_relu);
    bn.fused_op("onednn.fused_batch_norm").inference_only();
    b.add(std::move(bn));
    auto ln = make_layer_norm_property<G>();
    ln.fused_op("onednn.fused_layer_norm").inference_only();
    b.add(std::move(ln));
    auto shuffle = make_channel_shuffle_property<G>();
    shuffle.fused_op("onednn.fused_channel_shuffle").inference_only();
    b.add(std::move(shuffle));
    return b;
}

}  // namespace onednn
SGMATCH_END_NAMESPACE
