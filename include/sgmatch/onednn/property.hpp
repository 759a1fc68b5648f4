// sgmatch/onednn/property.hpp - a property whose fused nodes run as oneDNN kernels.
//
//   auto prop = sgmatch::onednn::make_fused_property<my_graph>(
//       "conv_bn_relu", op<Conv>() >> optional(op<BatchNorm>()) >> repeat<0, 3>(op<Relu>() | op<Add>(any())));
//   sgmatch::apply_property(g, prop);   // each fused node's payload: a fused_node
//
// The pattern's ops must all lower (lowering.hpp): otherwise the call fails to compile, with the
// op named in the instantiation note. What the type cannot know is checked for each match
// before anything is written (property::check): a match with non-constant BatchNorm parameters,
// a shape the conv cannot take, an intermediate used outside the match, ... is declined with
// the reason, counted in the property_report and printed under SGMATCH_VERBOSE=1.
#pragma once

#include <any>
#include <cstddef>
#include <memory>
#include <optional>
#include <string>
#include <type_traits>
#include <variant>
#include <vector>

#include "sgmatch/analysis/notation.hpp"
#include "sgmatch/detail/config.hpp"
#include "sgmatch/graph/adapter.hpp"
#include "sgmatch/onednn/fused_conv.hpp"
#include "sgmatch/onednn/fused_matmul.hpp"
#include "sgmatch/onednn/layout_plan.hpp"
#include "sgmatch/onednn/lowering.hpp"
#include "sgmatch/partition/copy.hpp"
#include "sgmatch/partition/property.hpp"

SGMATCH_BEGIN_NAMESPACE
namespace onednn {

/// What a fused node built by make_fused_property carries: its kernel, which of the fused
/// node's inputs (slots, in the order of the subgraph's boundary inputs) feed the kernel, and the
/// matched ops themselves, for when the kernel rejects an input shape known only at run time.
struct fused_node {
    std::shared_ptr<const fused_kernel> kernel;  // a fused_conv, fused_matmul or fused_batch_norm
    std::size_t src = 0;             // input slot of the main op's data
    std::vector<std::size_t> extra;  // input slots of the post-ops' runtime operands, by index
    /// The matched ops as a graph of their own (partition/copy.hpp), small constants (clip
    /// bounds, per-channel parameters, shapes: at most 4096 values) copied in; its graph input
    /// "k" is the fused node's input ops_inputs[k] (weights among them: never duplicated); its
    /// one graph output is the node's output. The executor runs it, one op at a time, when the
    /// kernel raises kernel_error.
    std::shared_ptr<const graph> ops;
    std::vector<std::size_t> ops_inputs;
    std::string pattern;  // the property's pattern, in sgmatch's notation (analysis/notation.hpp)

    /// The matched ops, in order (what a saved model shows of the fused node).
    std::vector<std::string> members() const {
        std::vector<std::string> m;
        if (ops)
            for (node_id n : ops->nodes())
                if (ops->kind(n) == node_kind::op) m.emplace_back(ops->op_name(n));
        return m;
    }
};

/// The pattern and member ops of a fused node's payload (an onednn::fused_node), for
/// onnx::save_options::fused; nullopt for another payload.
inline std::optional<fused_description> describe_fused(const std::any& payload) {
    const auto* f = std::any_cast<std::shared_ptr<const fused_node>>(&payload);
    if (f == nullptr || !*f) return std::nullopt;
    return fused_description{(*f)->pattern, (*f)->members()};
}

namespace detail {

// The diagnostic for an op of p without a lowering: for the standard vocabulary's tags the
// message names the op (one partial specialization per tag, expanded from the vocabulary's
// list; each fires only when instantiated), for a tag of the user's the instantiation names it.
template <class Op, class Fire = void>
struct no_lowering {
    static_assert(std::is_void_v<Fire> && !std::is_void_v<Fire>,
                  "sgmatch::onednn::make_fused_property<G>(name, p): every op of p must have a oneDNN lowering "
                  "(specialize sgmatch::onednn::lowering<Op>); the op is the Op named in this instantiation");
};
#define SGMATCH_DETAIL_NO_LOWERING(T, ...)                                                                          \
    template <class Fire>                                                                                          \
    struct no_lowering<ops::T, Fire> {                                                                             \
        static_assert(std::is_void_v<Fire> && !std::is_void_v<Fire>,                                               \
                      "sgmatch::onednn::make_fused_property<G>(name, p): op " #T " in p has no oneDNN lowering: every " \
                      "op of p must have one (specialize sgmatch::onednn::lowering<sgmatch::ops::" #T ">)");         \
    };
#define SGMATCH_DETAIL_NO_LOWERING_BINARY(T, comm, ...) SGMATCH_DETAIL_NO_LOWERING(T)
SGMATCH_VOCABULARY(SGMATCH_DETAIL_NO_LOWERING, SGMATCH_DETAIL_NO_LOWERING, SGMATCH_DETAIL_NO_LOWERING_BINARY)
#undef SGMATCH_DETAIL_NO_LOWERING_BINARY
#undef SGMATCH_DETAIL_NO_LOWERING

template <class N>
std::size_t slot_of(const std::vector<value_ref<N>>& inputs, value_ref<N> v, const std::string& what) {
    for (std::size_t i = 0; i < inputs.size(); ++i)
        if (inputs[i] == v) return i;
    throw lowering_error("sgmatch::onednn::make_fused_property: the " + what + " is not an input of the fused node");
}

/// Give a fused node the matched ops (for when its kernel rejects an input at run time: small
/// constants copied in, the rest read from the node's inputs) and its property's pattern.
template <class G>
void keep_matched_ops(fused_node& node, const subgraph<G>& s, std::string pattern) {
    copied_subgraph ops = copy_subgraph(s, 4096);
    node.ops = std::move(ops.g);
    node.ops_inputs = std::move(ops.runtime_inputs);
    node.pattern = std::move(pattern);
}

/// The kernel a spec describes.
struct kernel_of_spec {
    std::shared_ptr<const fused_kernel> operator()(conv_spec s) const {
        return std::make_shared<const fused_conv>(std::move(s));
    }
    std::shared_ptr<const fused_kernel> operator()(matmul_spec s) const {
        return std::make_shared<const fused_matmul>(std::move(s));
    }
    std::shared_ptr<const fused_kernel> operator()(batch_norm_spec s) const {
        return std::make_shared<const fused_batch_norm>(std::move(s));
    }
};

/// The factory of a fused property: one instance per graph type (the pattern only picks the
/// lowering tables).
template <class G>
std::shared_ptr<const fused_node> make_fused_node(const subgraph<G>& s, const std::vector<lowering_entry>& table,
                                                  const std::vector<recognize_fn<G>>& composites, const std::string& pattern) {
    auto l = lower_match_with<G>(*s.graph, s.nodes.data(), s.nodes.size(), /*with_data=*/true, table, composites);
    if (!l.decline.empty()) throw lowering_error("sgmatch::onednn::make_fused_property: " + l.decline);
    if (s.outputs.size() != 1 || !(s.outputs[0] == l.dst))
        throw lowering_error("sgmatch::onednn::make_fused_property: the fused node must have exactly the "
                             "chain's last value as its output");
    auto node = std::make_shared<fused_node>();
    node->src = slot_of(s.inputs, l.src, "convolution's input");
    for (const auto& v : l.extra) node->extra.push_back(slot_of(s.inputs, v, "post-op operand"));
    if (auto* conv = std::get_if<conv_spec>(&l.spec); conv != nullptr && conv->layout == conv_spec::layout_choice::any)
        conv->layout = conv_layout_of(*s.graph);  // the network's (layout_plan.hpp)
    node->kernel = std::visit(kernel_of_spec{}, std::move(l.spec));
    keep_matched_ops(*node, s, pattern);
    return node;
}

}  // namespace detail

/// A property of pattern p for a written-out form with a kernel of its own, which a reader of
/// its own understands: read(g, nodes, count, with_data) says what a match computes, its
/// `.decline` the reason when it cannot fuse (the property's check, run with with_data false);
/// fill(reading, s, node) gives the fused node its kernel and input slots. The node must have
/// the match's one output; it keeps the matched ops and p's notation. `who` names the property
/// in a lowering_error.
template <class G, class P, class Read, class Fill>
property<G> make_reading_property(std::string name, const P& p, std::string who, Read read, Fill fill) {
    using N = typename graph_traits<G>::node_type;
    auto prop = make_property<G>(std::move(name), p, [who, read, fill, pattern = notation(p)](const subgraph<G>& s) {
        auto r = read(*s.graph, s.nodes.data(), s.nodes.size(), /*with_data=*/true);
        if (!r.decline.empty()) throw lowering_error(who + ": " + r.decline);
        if (s.outputs.size() != 1) throw lowering_error(who + ": the match has several outputs");
        auto node = std::make_shared<fused_node>();
        fill(std::move(r), s, *node);
        detail::keep_matched_ops(*node, s, pattern);
        return std::shared_ptr<const fused_node>(std::move(node));
    });
    prop.check([read](const G& g, const N* nodes, std::size_t count) { return read(g, nodes, count, /*with_data=*/false).decline; });
    return prop;
}

/// A property of pattern p whose fused nodes carry a fused_node (see the top of this file).
template <class G, class P>
property<G> make_fused_property(std::string name, const P& p) {
    using N = typename graph_traits<G>::node_type;
    if constexpr (!is_pattern_v<P>) {
        static_assert(is_pattern_v<P>, "sgmatch::onednn::make_fused_property<G>(name, p): p must be a pattern");
        return property<G>(std::move(name), {});
    } else if constexpr (!std::is_void_v<unlowerable_op_t<P>>) {
        (void)sizeof(detail::no_lowering<unlowerable_op_t<P>>);
        return property<G>(std::move(name), {});
    } else if constexpr (!anchored_on_main_op_v<P>) {
        static_assert(anchored_on_main_op_v<P>,
                      "sgmatch::onednn::make_fused_property<G>(name, p): p must start with op<Conv>(), op<ConvTranspose>(), "
                      "op<MatMul>(), op<Gemm>() or op<BatchNorm>() (the main op a fused kernel is built around)");
        return property<G>(std::move(name), {});
    } else {
        using unit_list = detail::units_t<P>;
        auto prop = make_property<G>(std::move(name), p, [pattern = notation(p)](const subgraph<G>& s) {
            return detail::make_fused_node<G>(s, detail::entries<unit_list>::get(), detail::composites<G, unit_list>::get(), pattern);
        });
        prop.check([](const G& g, const N* nodes, std::size_t count) {
            return lower_match<G, P>(g, nodes, count, /*with_data=*/false).decline;
        });
        return prop;
    }
}

/// A fused property's definition for any graph type: its name and pattern. One definition serves
/// a graph type of the user's and sgmatch's built-in graph (on which sgmatch::testing tests it):
///
///   const auto conv_silu = onednn::fusion("conv_silu", capture<x>(op<Conv>()) >> onednn::swish<x>());
///   apply_property(my_graph, conv_silu);               // the property for my_graph's type
///   auto report = testing::differential(conv_silu);    // tested on graphs synthesized from its pattern
///
/// for_graph<G>() is make_fused_property<G>(name, pattern), with its compile-time checks.
template <class P>
struct fused_definition {
    std::string name;
    P pattern;
    template <class G>
    property<G> for_graph() const {
        return make_fused_property<G>(name, pattern);
    }
};

/// The definition of a fused property named `name` of pattern p, for any graph type.
template <class P>
fused_definition<P> fusion(std::string name, const P& p) {
    static_assert(is_pattern_v<P>, "sgmatch::onednn::fusion(name, p): p must be a pattern");
    return {std::move(name), p};
}

}  // namespace onednn

/// apply_property(g, prop) (partition/partition.hpp) with the property a fused definition makes
/// for g's type.
template <class G, class P>
auto apply_property(G& g, const onednn::fused_definition<P>& f) {
    return apply_property(g, f.template for_graph<G>());
}

SGMATCH_END_NAMESPACE

/// What every fused property of graphs of type G compiles whatever its pattern (the lowering of a
/// match and the making of its fused node: the oneDNN kernels' code) is compiled in another
/// translation unit of the program: a program built with SGMATCH_SEPARATE_COMPILATION declares it
/// for the built-in graph here; for a graph type of its own, in a header every user of
/// make_fused_property includes. onednn/src.hpp compiles it for the built-in graph; a program
/// compiles it for its own graph type in that one .cpp with SGMATCH_ONEDNN_INSTANTIATE_LOWERING(G).
#define SGMATCH_ONEDNN_EXTERN_LOWERING(G) SGMATCH_DETAIL_ONEDNN_LOWERING(extern template, G)
/// Compile the lowering for graphs of type G here (in one .cpp of the program).
#define SGMATCH_ONEDNN_INSTANTIATE_LOWERING(G) SGMATCH_DETAIL_ONEDNN_LOWERING(template, G)

#define SGMATCH_DETAIL_ONEDNN_LOWERING(how, G)                                                                           \
    how ::sgmatch::onednn::match_lowering<::sgmatch::graph_traits<G>::node_type>                                        \
        sgmatch::onednn::detail::lower_match_with<G>(const G&, const ::sgmatch::graph_traits<G>::node_type*, std::size_t, \
                                                     bool, const std::vector<::sgmatch::onednn::lowering_entry>&,         \
                                                     const std::vector<::sgmatch::onednn::detail::recognize_fn<G>>&);     \
    how std::shared_ptr<const ::sgmatch::onednn::fused_node> sgmatch::onednn::detail::make_fused_node<G>(                \
        const ::sgmatch::subgraph<G>&, const std::vector<::sgmatch::onednn::lowering_entry>&,                           \
        const std::vector<::sgmatch::onednn::detail::recognize_fn<G>>&, const std::string&)

#if defined(SGMATCH_SEPARATE_COMPILATION)
SGMATCH_ONEDNN_EXTERN_LOWERING(::sgmatch::graph);
#endif
