// sgmatch/onednn/lowering/lower_match.hpp - the lowering of a matched subgraph (a conv or
// matmul and what follows it) into a kernel spec.
//
// lower_match() reads the matched nodes through the graph adapter (attributes checked against
// each op's description, constant parameters, shapes when the adapter has them) and either
// returns the kernel's spec or the reason the match cannot lower (a non-constant BatchNorm, an
// operand on the wrong side, an intermediate used outside the match, an attribute no kernel
// implements, ...). The property declines such matches with that reason.
//
// Main ops: Conv, ConvTranspose (a transposed conv_spec), MatMul and Gemm with constant weights,
// and BatchNorm (+ Relu) on its own. After a 1x1 conv, a 3x3 depthwise conv becomes a depthwise
// post-op. Written-out activations (decomposed.hpp) are recognized through composite lowerings.
//
// Known limitations: Gemm with transA, a BatchNorm after a matmul whose output is not 2-D and a
// MatMul whose right operand is computed are declined; apart from composites the chain must be
// a straight line from the main op.
#pragma once

#include <algorithm>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <type_traits>
#include <variant>
#include <vector>

#include <oneapi/dnnl/dnnl.hpp>

#include "sgmatch/detail/config.hpp"
#include "sgmatch/graph/adapter.hpp"
#include "sgmatch/graph/types.hpp"
#include "sgmatch/onednn/fused_conv.hpp"
#include "sgmatch/onednn/fused_matmul.hpp"
#include "sgmatch/onednn/lowering/chain_view.hpp"
#include "sgmatch/onednn/lowering/roles.hpp"
#include "sgmatch/onednn/lowering/table.hpp"
#include "sgmatch/onednn/op_kernels.hpp"
#include "sgmatch/onednn/post_ops.hpp"
#include "sgmatch/ops/attrs.hpp"
#include "sgmatch/ops/table.hpp"

SGMATCH_BEGIN_NAMESPACE
namespace onednn {

/// The spec of the kernel a match lowers to: a (transposed) convolution, a matmul, or a
/// BatchNorm on its own. Weights and constants are filled only when asked.
using kernel_spec = std::variant<conv_spec, matmul_spec, batch_norm_spec>;

/// What lower_match produced: a kernel spec, or why the match cannot lower.
template <class N>
struct match_lowering {
    std::string decline;               // empty on success
    kernel_spec spec;                  // meaningful on success only
    value_ref<N> src{};                // the main op's data input
    std::vector<value_ref<N>> extra;   // runtime operands of sum / binary post-ops, by index
    value_ref<N> dst{};                // the value the kernel computes
};

namespace detail {

// The node's attributes, checked against its op's description (ops::op_attrs); an op with no
// description has none (its lowering reads the node).
template <class G>
ops::op_attrs attrs_of(const lowering_entry& e, const G& g, typename graph_traits<G>::node_type n) {
    return ops::op_attrs(e.schema != nullptr ? *e.schema : ops::undescribed(), ops::node_of<G>(g, n));
}

template <class G>
std::vector<float> constant_values(const const_tensor_view& c) {
    return c.to_floats().value_or(std::vector<float>{});  // callers took only f32 / f64 with data
}

/// A weight's values: shared with the constant where the adapter promises its data stays
/// unchanged (constant_owner; the built-in graph, for weights a model file's parser decoded),
/// else copied.
template <class G>
float_values weight_values(const G& g, typename graph_traits<G>::node_type n, const const_tensor_view& c) {
    if (c.type == dtype::f32)
        if (auto owner = adapter<G>::constant_owner(g, n))
            return float_values::shared(std::move(owner), static_cast<const float*>(c.data), static_cast<std::size_t>(c.element_count()));
    return constant_values<G>(c);
}

}  // namespace detail

namespace detail {

/// lower_match's body: one instance per graph type, whatever the pattern (the pattern only
/// decides the two tables), so that a backend of five properties compiles it once.
// Where a value feeds several members of a match, whether those compute an activation written
// out that the fused kernel takes as one post-op when the pattern says so (onednn/decomposed.hpp):
// the hint that names the form, else "".
template <class G, class Member>
std::string written_out_hint(const G& g, typename graph_traits<G>::node_type cur, const Member& member) {
    using traits = graph_traits<G>;
    std::vector<std::string> ops;
    for (std::size_t i = 0; i < traits::user_count(g, cur); ++i) {
        const auto u = traits::user(g, cur, i);
        if (member(u.user)) ops.emplace_back(traits::op_name(g, u.user));
    }
    std::sort(ops.begin(), ops.end());
    ops.erase(std::unique(ops.begin(), ops.end()), ops.end());
    auto has = [&](const char* op) { return std::find(ops.begin(), ops.end(), op) != ops.end(); };
    std::string list;
    for (const auto& o : ops) list += (list.empty() ? "" : ", ") + o;
    const std::string form = has("Sigmoid") && has("Mul") && ops.size() == 2         ? "onednn::swish<X>() (x * sigmoid(x))"
                             : has("HardSigmoid") && has("Mul") && ops.size() == 2   ? "onednn::hardswish<X>() (x * hardsigmoid(x))"
                             : has("Add") && has("Mul") && ops.size() == 2           ? "onednn::hardswish<X>() or onednn::gelu_tanh<X>()"
                             : (has("Div") || has("Mul")) && ops.size() <= 2         ? "onednn::gelu_erf<X>() or onednn::gelu_tanh<X>()"
                                                                                      : "";
    if (form.empty()) return " (" + list + ")";
    return " (" + list + "): if they compute an activation written out, capture its input as X and write " + form +
           " in the pattern (onednn/decomposed.hpp): the fused kernel takes it as one post-op";
}

template <class G>
match_lowering<typename graph_traits<G>::node_type> lower_match_with(const G& g,
                                                                     const typename graph_traits<G>::node_type* nodes,
                                                                     std::size_t count, bool with_data,
                                                                     const std::vector<lowering_entry>& table,
                                                                     const std::vector<recognize_fn<G>>& composite_table) {
    using traits = graph_traits<G>;
    using N = typename traits::node_type;
    match_lowering<N> out;
    const chain_view<G> view{g, nodes, count};
    auto name = [&](N n) { return "'" + std::string(traits::name(g, n)) + "'"; };
    auto decline = [&](std::string why) {
        out.decline = std::move(why);
        return out;
    };
    // A result nothing reads (dead code the graph still holds): no fused node has nothing to
    // give back, so the match is declined rather than rewritten into a node without outputs.
    auto unused = [&](N last) {
        return traits::user_count(g, last) == 0 && !adapter<G>::has_graph_output(g, last);
    };
    auto member = [&](N n) {
        for (std::size_t i = 0; i < count; ++i)
            if (nodes[i] == n) return true;
        return false;
    };
    auto const_data = [&](value_ref<N> v) -> std::optional<const_tensor_view> {
        auto c = adapter<G>::constant(g, v.node);
        if (!c || c->data == nullptr || (c->type != dtype::f32 && c->type != dtype::f64)) return std::nullopt;
        return c;
    };
    if (count == 0) return decline("empty match");
    const N main_node = nodes[0];
    const lowering_entry* ce = detail::find_entry(table, traits::op_name(g, main_node));
    if (traits::kind(g, main_node) != node_kind::op || ce == nullptr ||
        (ce->role != lowering_role::conv && ce->role != lowering_role::conv_transpose && ce->role != lowering_role::matmul &&
         ce->role != lowering_role::batch_norm))
        return decline("the match does not start with a convolution, a matmul or a BatchNorm");
    std::optional<ops::op_attrs> head;  // the main op's attributes
    try {
        head.emplace(detail::attrs_of(*ce, g, main_node));
    } catch (const ops::op_error& e) {
        return decline(e.what());
    }
    if (ce->role == lowering_role::batch_norm) {
        // ---- BatchNorm (+ Relu): oneDNN's batch normalization with fuse_norm_relu ----
        batch_norm_spec& b = out.spec.template emplace<batch_norm_spec>();
        b.name = std::string(traits::name(g, main_node));
        if (traits::input_count(g, main_node) < 5) return decline("BatchNorm " + name(main_node) + " has fewer than 5 inputs");
        std::vector<float>* p[4] = {&b.scale, &b.shift, &b.mean, &b.var};
        std::int64_t C = -1;
        for (std::size_t k = 0; k < 4; ++k) {
            const auto c = const_data(traits::input(g, main_node, k + 1));
            if (!c) return decline("BatchNorm " + name(main_node) + ": parameters are not constants with data");
            if (C >= 0 && c->element_count() != C)
                return decline("BatchNorm " + name(main_node) + ": parameters of different sizes");
            C = c->element_count();
            *p[k] = with_data ? detail::constant_values<G>(*c) : std::vector<float>(static_cast<std::size_t>(C));
        }
        if (head->i("training_mode") != 0) return decline("BatchNorm " + name(main_node) + " is in training mode");
        b.eps = static_cast<float>(head->f("epsilon"));
        out.src = traits::input(g, main_node, 0);
        if (auto t = adapter<G>::value_type(g, out.src.node, out.src.port);
            t && !t->dims.empty() && (t->dims.size() < 2 || t->dims[1] != C))
            return decline("BatchNorm " + name(main_node) + ": input " + to_string(t->dims) + " does not have " +
                           std::to_string(C) + " channels");
        N last = main_node;
        for (std::size_t i = 1; i < count; ++i) {
            const N n = nodes[i];
            if (traits::kind(g, n) != node_kind::op) continue;
            const lowering_entry* e = detail::find_entry(table, traits::op_name(g, n));
            std::vector<post_op> po;
            if (e != nullptr && e->role == lowering_role::eltwise) {
                try {
                    po = e->eltwise(detail::attrs_of(*e, g, n), ops::node_of<G>(g, n));
                } catch (const lowering_error&) {
                } catch (const ops::op_error&) {
                }
            }
            const auto* elt = po.size() == 1 ? po[0].as<post_op::eltwise_op>() : nullptr;
            const bool relu = elt != nullptr && elt->alg == dnnl::algorithm::eltwise_relu && elt->alpha == 0.0f;
            if (b.relu || !relu || !(traits::input(g, n, 0) == value_ref<N>{main_node, 0}))
                return decline("after BatchNorm " + name(main_node) + " only one Relu fuses (oneDNN's fuse_norm_relu), not " +
                               std::string(traits::op_name(g, n)) + " " + name(n));
            if (traits::user_count(g, main_node) != 1 || adapter<G>::has_graph_output(g, main_node))
                return decline("the value of " + name(main_node) + " is used outside the match");
            b.relu = true;
            last = n;
        }
        if (unused(last)) return decline("the result of " + name(last) + " is not used");
        out.dst = value_ref<N>{last, 0};
        return out;
    }
    // The conv path fills s, the matmul path mm; the other one stays a default one that the
    // shared code below reads only behind `matmul`.
    const bool matmul = ce->role == lowering_role::matmul;
    conv_spec no_conv;
    matmul_spec no_matmul;
    conv_spec& s = matmul ? no_conv : std::get<conv_spec>(out.spec);
    matmul_spec& mm = matmul ? out.spec.template emplace<matmul_spec>() : no_matmul;
    const std::size_t ins = traits::input_count(g, main_node);
    if (matmul) {
        // ---- MatMul / Gemm with constant weights: x [.., M, K] times W [K, N] ----
        matmul_spec& m = mm;
        m.name = std::string(traits::name(g, main_node));
        const std::string what = std::string(traits::op_name(g, main_node)) + " " + name(main_node);
        if (ins < 2) return decline(what + " has fewer than 2 inputs");
        out.src = traits::input(g, main_node, 0);
        const auto w = const_data(traits::input(g, main_node, 1));
        if (!w || w->rank != 2) return decline(what + ": the right operand is not a 2-D constant with data");
        const bool gemm = head->schema().attr("transB") != nullptr;  // Gemm; MatMul has no attributes
        if (gemm && head->i("transA") != 0) return decline(what + ": transA is not supported");
        const bool tb = gemm && head->i("transB") != 0;
        const float alpha = gemm ? static_cast<float>(head->f("alpha")) : 1.0f;
        const float beta = gemm ? static_cast<float>(head->f("beta")) : 1.0f;
        m.K = tb ? w->dims[1] : w->dims[0];
        m.N = tb ? w->dims[0] : w->dims[1];
        if (!with_data) {
            m.weights.assign(static_cast<std::size_t>(m.K * m.N), 0.0f);
        } else if (!tb && alpha == 1.0f) {
            m.weights = detail::weight_values(g, traits::input(g, main_node, 1).node, *w);  // [K, N] as stored
        } else {
            const auto v = detail::constant_values<G>(*w);
            std::vector<float> kn(static_cast<std::size_t>(m.K * m.N));
            for (std::int64_t k = 0; k < m.K; ++k)
                for (std::int64_t n = 0; n < m.N; ++n)
                    kn[static_cast<std::size_t>(k * m.N + n)] = alpha * v[static_cast<std::size_t>(tb ? n * m.K + k : k * m.N + n)];
            m.weights = std::move(kn);
        }
        if (ins >= 3) {
            const auto c = const_data(traits::input(g, main_node, 2));
            if (!c || c->element_count() != m.N || (c->rank == 2 && c->dims[0] != 1) || c->rank > 2)
                return decline(what + ": C is not a constant of shape [N] or [1, N]");
            m.bias = with_data ? detail::constant_values<G>(*c) : std::vector<float>(static_cast<std::size_t>(m.N));
            for (auto& b : m.bias) b *= beta;
        }
    } else {
        // ---- the conv (or transposed conv) ----
        s.name = std::string(traits::name(g, main_node));
        s.transposed = ce->role == lowering_role::conv_transpose;
        const std::string conv_name = s.transposed ? "ConvTranspose" : "Conv";
        if (ins < 2) return decline(conv_name + " " + name(main_node) + " has no weights input");
        out.src = traits::input(g, main_node, 0);
        const auto w = const_data(traits::input(g, main_node, 1));
        if (!w) return decline(conv_name + " " + name(main_node) + ": weights are not a constant with data");
        s.weights_dims.assign(w->dims, w->dims + w->rank);
        // auto_pad other than NOTSET and ConvTranspose's output_shape were refused by the description.
        s.groups = head->i("group");
        s.strides = head->ints("strides");  // empty when absent: the spec's defaults
        s.dilations = head->ints("dilations");
        if (s.transposed) s.output_padding = head->ints("output_padding");
        const dims pads = head->ints("pads");
        const std::size_t sp = s.spatial_rank();
        if (!pads.empty()) {
            if (pads.size() != 2 * sp) return decline(conv_name + " " + name(main_node) + ": pads has " + std::to_string(pads.size()) + " values");
            s.pads_begin.assign(pads.begin(), pads.begin() + static_cast<std::ptrdiff_t>(sp));
            s.pads_end.assign(pads.begin() + static_cast<std::ptrdiff_t>(sp), pads.end());
        }
        if (with_data) s.weights = detail::weight_values(g, traits::input(g, main_node, 1).node, *w);  // else none: the spec is for checks
        if (ins >= 3) {
            const auto b = const_data(traits::input(g, main_node, 2));
            if (!b) return decline(conv_name + " " + name(main_node) + ": bias is not a constant with data");
            s.bias = with_data ? detail::constant_values<G>(*b) : std::vector<float>(static_cast<std::size_t>(b->element_count()));
        }
        try {
            s.validate();
        } catch (const kernel_error& e) {
            return decline(e.what());
        }
    }
    std::optional<dims> out_dims;  // the main op's output shape, when the adapter knows it
    if (auto t = adapter<G>::value_type(g, main_node, 0); t && !t->dims.empty()) out_dims = t->dims;

    // ---- the chain after it: each member reads the previous one's output 0 ----
    N cur = main_node;
    std::size_t visited = 1;
    bool sum_used = false;
    const std::int64_t out_channels = matmul ? mm.N : s.out_channels();  // channels: the conv's dim 1, a matmul's last
    std::vector<post_op>& post_op_list = matmul ? mm.post_ops : s.post_ops;
    std::vector<float>& bias = matmul ? mm.bias : s.bias;
    // A shape with one non-1 dim of size out_channels at the channel position (counted from the right).
    const std::size_t channel_from_right = matmul ? 1 : s.spatial_rank() + 1;
    while (true) {
        // A decomposed activation (several ops reading cur, ending in one value): one unit.
        std::optional<composite_result<N>> comp;
        for (auto recognize : composite_table)
            if ((comp = recognize(view, cur))) break;
        if (comp) {
            post_op_list.insert(post_op_list.end(), comp->post_ops.begin(), comp->post_ops.end());
            visited += comp->nodes;
            cur = comp->last;
            continue;
        }
        std::optional<N> next;
        const std::size_t uc = traits::user_count(g, cur);
        for (std::size_t i = 0; i < uc; ++i) {
            const auto u = traits::user(g, cur, i);
            if (!member(u.user)) continue;
            if (u.port != 0 || (next && !(*next == u.user)))
                return decline("node " + name(cur) + " feeds more than one node of the match" + written_out_hint(g, cur, member));
            next = u.user;
        }
        // Every member but the last must feed only the match: a fused kernel does not produce it.
        if (next) {
            for (std::size_t i = 0; i < uc; ++i)
                if (!member(traits::user(g, cur, i).user))
                    return decline("the value of " + name(cur) + " is used outside the match");
            if (adapter<G>::has_graph_output(g, cur)) return decline("the value of " + name(cur) + " is a graph output");
        }
        if (!next) break;
        const N n = *next;
        ++visited;
        const lowering_entry* e = detail::find_entry(table, traits::op_name(g, n));
        if (e == nullptr) return decline("op " + std::string(traits::op_name(g, n)) + " has no oneDNN lowering");
        const std::size_t nin = traits::input_count(g, n);
        switch (e->role) {
            case lowering_role::identity: break;
            case lowering_role::batch_norm: {
                if (matmul) {
                    // BatchNormalization normalizes axis 1: the matmul's N only when its output is 2-D.
                    std::optional<std::size_t> rank;
                    if (out_dims) rank = out_dims->size();
                    else if (auto t = adapter<G>::value_type(g, out.src.node, out.src.port); t && !t->dims.empty())
                        rank = t->dims.size();
                    if (!rank) return decline("BatchNorm " + name(n) + " after a matmul of unknown rank");
                    if (*rank != 2)
                        return decline("BatchNorm " + name(n) + " after a " + std::to_string(*rank) +
                                       "-D matmul normalizes another axis than the matmul's columns");
                }
                if (!post_op_list.empty() && !post_op_list.back().is<post_op::depthwise_op>())
                    return decline("BatchNorm " + name(n) + " after a post-op cannot be folded");
                if (nin < 5) return decline("BatchNorm " + name(n) + " has fewer than 5 inputs");
                std::vector<float> p[4];
                for (std::size_t k = 0; k < 4; ++k) {
                    const auto c = const_data(traits::input(g, n, k + 1));
                    if (!c) return decline("BatchNorm " + name(n) + ": parameters are not constants with data");
                    if (c->element_count() != out_channels)
                        return decline("BatchNorm " + name(n) + ": parameters do not have one value per channel");
                    if (with_data) p[k] = detail::constant_values<G>(*c);
                }
                float eps = 1e-5f;
                try {
                    const ops::op_attrs a = detail::attrs_of(*e, g, n);
                    if (a.i("training_mode") != 0) return decline("BatchNorm " + name(n) + " is in training mode");
                    eps = static_cast<float>(a.f("epsilon"));
                } catch (const ops::op_error& err) {
                    return decline(err.what());
                }
                if (with_data && matmul) mm.fold_batch_norm(p[0], p[1], p[2], p[3], eps);
                else if (with_data) s.fold_batch_norm(p[0], p[1], p[2], p[3], eps);
                else if (bias.empty()) bias.assign(static_cast<std::size_t>(out_channels), 0.0f);
                break;
            }
            case lowering_role::eltwise: {
                if (!(traits::input(g, n, 0) == value_ref<N>{cur, 0}))
                    return decline(std::string(traits::op_name(g, n)) + " " + name(n) + " reads the chain on input " +
                                   "other than 0");
                try {
                    auto po = e->eltwise(detail::attrs_of(*e, g, n), ops::node_of<G>(g, n));
                    post_op_list.insert(post_op_list.end(), po.begin(), po.end());
                } catch (const lowering_error& err) {
                    return decline(std::string(traits::op_name(g, n)) + " " + name(n) + ": " + err.what());
                } catch (const ops::op_error& err) {
                    return decline(err.what());
                }
                break;
            }
            case lowering_role::binary: {
                if (nin != 2) return decline("binary op " + name(n) + " has " + std::to_string(nin) + " inputs");
                const bool chain_left = traits::input(g, n, 0) == value_ref<N>{cur, 0};
                if (!chain_left && !e->commutative)
                    return decline(std::string(traits::op_name(g, n)) + " " + name(n) +
                                   ": the convolution is its right operand");
                const value_ref<N> operand = traits::input(g, n, chain_left ? 1 : 0);
                if (member(operand.node)) return decline("the operand of " + name(n) + " is computed inside the match");
                if (const auto c = const_data(operand)) {
                    // A constant: scalar, per-channel ([C,1,...] or [1,C,1,...]) or full.
                    const dims cd(c->dims, c->dims + c->rank);
                    const std::int64_t cnt = c->element_count();
                    broadcast b;
                    std::size_t non_one = 0, where = 0;
                    for (std::size_t k = 0; k < cd.size(); ++k)
                        if (cd[k] != 1) ++non_one, where = k;
                    if (cnt == 1) {
                        b = broadcast::scalar;
                    } else if (non_one == 1 && cd[where] == out_channels && cd.size() - where == channel_from_right) {
                        b = broadcast::per_channel;
                    } else if (out_dims && cd == *out_dims) {
                        b = broadcast::full;
                    } else {
                        return decline("the constant operand of " + name(n) + " (shape " + to_string(cd) +
                                       ") is neither a scalar, per-channel nor the output's shape");
                    }
                    std::vector<float> v = with_data ? detail::constant_values<G>(*c)
                                                     : std::vector<float>(static_cast<std::size_t>(cnt));
                    // A per-channel Add before any post-op is a bias: folded.
                    if (b == broadcast::per_channel && e->binary_alg == dnnl::algorithm::binary_add && post_op_list.empty()) {
                        if (bias.empty()) bias.assign(static_cast<std::size_t>(out_channels), 0.0f);
                        for (std::size_t k = 0; k < v.size(); ++k) bias[k] += v[k];
                        break;
                    }
                    post_op_list.push_back(post_op::binary_constant(e->binary_alg, std::move(v), b));
                    break;
                }
                // A runtime operand: same shape as the output (or unknown), or broadcast per the
                // adapter's shapes.
                broadcast b = broadcast::full;
                if (auto t = adapter<G>::value_type(g, operand.node, operand.port); t && !t->dims.empty() && out_dims) {
                    std::int64_t cnt = 1;
                    for (auto d : t->dims) cnt *= d;
                    if (t->dims == *out_dims) b = broadcast::full;
                    else if (cnt == 1) b = broadcast::scalar;
                    else if (cnt == out_channels && t->dims.size() == out_dims->size() &&
                             t->dims[t->dims.size() - channel_from_right] == out_channels)
                        b = broadcast::per_channel;
                    else return decline("the operand of " + name(n) + " (shape " + to_string(t->dims) +
                                        ") is neither a scalar, per-channel nor the output's shape");
                }
                const int index = static_cast<int>(out.extra.size());
                out.extra.push_back(operand);
                if (b == broadcast::full && e->binary_alg == dnnl::algorithm::binary_add && !sum_used) {
                    post_op_list.push_back(post_op::sum(index));  // residual: accumulated in place
                    sum_used = true;
                } else {
                    post_op_list.push_back(post_op::binary_input(e->binary_alg, index, b));
                }
                break;
            }
            case lowering_role::conv: {
                // A 3x3 depthwise conv (pad 1, stride 1 or 2) after a 1x1 conv: a depthwise post-op.
                if (matmul || s.transposed) return decline("a second main op " + name(n) + " in one match");
                const auto w = nin >= 2 ? const_data(traits::input(g, n, 1)) : std::nullopt;
                std::optional<ops::op_attrs> dw_attrs;
                try {
                    dw_attrs.emplace(detail::attrs_of(*e, g, n));
                } catch (const ops::op_error& err) {
                    return decline(err.what());
                }
                const std::int64_t grp = dw_attrs->i("group");
                const dims st = dw_attrs->ints("strides"), pd = dw_attrs->ints("pads"), dl = dw_attrs->ints("dilations");
                const bool dw = w && w->rank == 4 && w->dims[0] == out_channels && w->dims[1] == 1 && w->dims[2] == 3 &&
                                w->dims[3] == 3 && grp == out_channels &&
                                pd == dims{1, 1, 1, 1} && (dl.empty() || dl == dims{1, 1}) &&
                                (st.empty() || st == dims{1, 1} || st == dims{2, 2}) &&
                                traits::input(g, n, 0) == value_ref<N>{cur, 0};
                if (!dw)
                    return decline("a second conv " + name(n) + " in one match that is not a 3x3 depthwise conv (pads 1, "
                                   "stride 1 or 2) on the first one's output");
                std::vector<float> dw_bias;
                if (nin >= 3) {
                    const auto b = const_data(traits::input(g, n, 2));
                    if (!b || b->element_count() != out_channels) return decline("Conv " + name(n) + ": bias is not a constant of O values");
                    dw_bias = with_data ? detail::constant_values<G>(*b) : std::vector<float>(static_cast<std::size_t>(out_channels));
                }
                const std::int64_t stride = st.empty() ? 1 : st[0];
                post_op_list.push_back(post_op::depthwise(with_data ? detail::constant_values<G>(*w)
                                                            : std::vector<float>(static_cast<std::size_t>(out_channels * 9)),
                                                  std::move(dw_bias), stride));
                if (out_dims)
                    for (std::size_t i = 2; i < out_dims->size(); ++i) (*out_dims)[i] = ((*out_dims)[i] - 1) / stride + 1;
                break;
            }
            case lowering_role::conv_transpose:
            case lowering_role::matmul:
                return decline("a second main op " + name(n) + " in one match");
            case lowering_role::composite:  // not recognized at cur: its ops are no post-ops on their own
            case lowering_role::none:
                return decline("op " + std::string(traits::op_name(g, n)) + " has no oneDNN lowering");
        }
        cur = n;
    }
    std::size_t ops_in_match = 0;
    for (std::size_t i = 0; i < count; ++i) ops_in_match += traits::kind(g, nodes[i]) == node_kind::op ? 1 : 0;
    if (visited != ops_in_match) return decline("the match is not a straight chain from the convolution");
    if (unused(cur)) return decline("the result of " + name(cur) + " is not used");
    out.dst = value_ref<N>{cur, 0};
    if (!matmul) {
        try {
            s.validate();  // again, with the post-ops (a depthwise one needs a 1x1 conv before it)
        } catch (const kernel_error& err) {
            return decline(err.what());
        }
    }
    if (auto t = adapter<G>::value_type(g, out.src.node, out.src.port); t && !t->dims.empty()) {
        try {
            if (matmul) (void)mm.output_dims(t->dims);
            else (void)s.output_dims(t->dims);
        } catch (const kernel_error& err) {
            return decline(err.what());
        }
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
[[deprecated("sgmatch::onednn::lower_conv is lower_match")]] match_lowering<typename graph_traits<G>::node_type> lower_conv(const G& g, const typename graph_traits<G>::node_type* nodes,
                                                               std::size_t count, bool with_data) {
    return lower_match<G, P>(g, nodes, count, with_data);
}

}  // namespace onednn
SGMATCH_END_NAMESPACE
