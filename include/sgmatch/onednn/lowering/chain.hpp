// sgmatch/onednn/lowering/chain.hpp - the chain after a conv or matmul: each member becomes a
// post-op of the main op's kernel (eltwise, sum, binary, a 3x3 depthwise conv after a 1x1), a bias
// added to the main op's, or a BatchNorm folded into its weights.
//
// What a main op's lowering (main_conv.hpp, main_matmul.hpp) gives the chain is a chain_target:
// where the post-ops go, its output channels and where they are, and how a BatchNorm after it
// folds. The chain knows nothing else of the main op, so a new main op lowers by a lowering of its
// own that fills a chain_target, without touching this walk or the other main ops.
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include <oneapi/dnnl/dnnl.hpp>

#include "sgmatch/detail/config.hpp"
#include "sgmatch/graph/adapter.hpp"
#include "sgmatch/onednn/lowering/chain_view.hpp"
#include "sgmatch/onednn/lowering/context.hpp"
#include "sgmatch/onednn/lowering/roles.hpp"
#include "sgmatch/onednn/lowering/table.hpp"
#include "sgmatch/onednn/post_ops.hpp"
#include "sgmatch/ops/attrs.hpp"

SGMATCH_BEGIN_NAMESPACE
namespace onednn {
namespace detail {

/// What the chain after a main op appends to and reads of it.
struct chain_target {
    std::vector<post_op>& post_ops;
    std::vector<float>& bias;            // a per-channel Add before any post-op is added here
    std::int64_t channels;               // the output's channels: a conv's dim 1, a matmul's last dim
    std::size_t channel_from_right;      // where they are, counted from the right
    std::optional<dims> out_dims;        // the main op's output shape, when the adapter knows it
    /// Why a BatchNorm after the main op cannot fold ("" where it can).
    std::function<std::string(const std::string& bn)> batch_norm_declined;
    /// Folds a BatchNorm's scale, B, mean and var with its epsilon into the main op.
    std::function<void(std::vector<float> (&)[4], float)> fold_batch_norm;
    /// Whether a 3x3 depthwise conv after the main op may join it as a post-op (a conv, not
    /// transposed: the spec's validate() then checks that it is 1x1).
    bool takes_depthwise = false;
};

// Where a value feeds several members of a match, whether those compute an activation written
// out that the fused kernel takes as one post-op when the pattern says so (onednn/decomposed.hpp):
// the hint that names the form, else "".
template <class G>
std::string written_out_hint(const lowering_context<G>& c, typename graph_traits<G>::node_type cur) {
    using traits = graph_traits<G>;
    std::vector<std::string> ops;
    for (std::size_t i = 0; i < traits::user_count(c.g, cur); ++i) {
        const auto u = traits::user(c.g, cur, i);
        if (c.member(u.user)) ops.emplace_back(traits::op_name(c.g, u.user));
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

/// How an operand of `shape` broadcasts against the main op's output: scalar (one value), per
/// channel (one non-1 dim of `channels` values at the channel position) or full (the output's
/// shape); nullopt for none. A constant is read as a scalar or per channel first (a per-channel
/// Add folds into the bias); a runtime operand as full first (a residual becomes a sum), and per
/// channel only at the output's rank.
inline std::optional<broadcast> classify_operand(const dims& shape, const chain_target& t, bool runtime) {
    std::int64_t cnt = 1;
    std::size_t non_one = 0, where = 0;
    for (std::size_t k = 0; k < shape.size(); ++k) {
        cnt *= shape[k];
        if (shape[k] != 1) ++non_one, where = k;
    }
    const bool full = t.out_dims && shape == *t.out_dims;
    if (runtime && full) return broadcast::full;
    if (cnt == 1) return broadcast::scalar;
    if (non_one == 1 && shape[where] == t.channels && shape.size() - where == t.channel_from_right &&
        (!runtime || (t.out_dims && shape.size() == t.out_dims->size())))
        return broadcast::per_channel;
    if (full) return broadcast::full;
    return std::nullopt;
}

/// Lowers the members after the main op `main` into `t` (and out.extra, out.dst): "" on success,
/// else why the match cannot lower.
template <class G>
std::string lower_chain(const lowering_context<G>& c, typename graph_traits<G>::node_type main, chain_target& t,
                        match_lowering<typename graph_traits<G>::node_type>& out) {
    using traits = graph_traits<G>;
    using N = typename traits::node_type;
    const G& g = c.g;
    N cur = main;
    std::size_t visited = 1;
    bool sum_used = false;
    while (true) {
        // A decomposed activation (several ops reading cur, ending in one value): one unit.
        std::optional<composite_result<N>> comp;
        for (auto recognize : c.composites)
            if ((comp = recognize(c, cur))) break;
        if (comp) {
            t.post_ops.insert(t.post_ops.end(), comp->post_ops.begin(), comp->post_ops.end());
            visited += comp->nodes;
            cur = comp->last;
            continue;
        }
        std::optional<N> next;
        const std::size_t uc = traits::user_count(g, cur);
        for (std::size_t i = 0; i < uc; ++i) {
            const auto u = traits::user(g, cur, i);
            if (!c.member(u.user)) continue;
            if (u.port != 0 || (next && !(*next == u.user)))
                return "node " + c.name(cur) + " feeds more than one node of the match" + written_out_hint(c, cur);
            next = u.user;
        }
        // Every member but the last must feed only the match: a fused kernel does not produce it.
        if (next) {
            for (std::size_t i = 0; i < uc; ++i)
                if (!c.member(traits::user(g, cur, i).user)) return "the value of " + c.name(cur) + " is used outside the match";
            if (adapter<G>::has_graph_output(g, cur)) return "the value of " + c.name(cur) + " is a graph output";
        }
        if (!next) break;
        const N n = *next;
        ++visited;
        const lowering_entry* e = find_entry(c.table, traits::op_name(g, n));
        if (e == nullptr) return "op " + std::string(traits::op_name(g, n)) + " has no oneDNN lowering";
        const std::size_t nin = traits::input_count(g, n);
        switch (e->role) {
            case lowering_role::identity: break;
            case lowering_role::batch_norm: {
                if (const std::string why = t.batch_norm_declined(c.name(n)); !why.empty()) return why;
                if (!t.post_ops.empty() && !t.post_ops.back().is<post_op::depthwise_op>())
                    return "BatchNorm " + c.name(n) + " after a post-op cannot be folded";
                std::int64_t channels = t.channels;
                std::vector<float> p[4];
                if (const std::string why = c.batch_norm_parameters(n, channels, p); !why.empty()) return why;
                float eps = 1e-5f;
                try {
                    const ops::op_attrs a = attrs_of(*e, g, n);
                    if (a.i("training_mode") != 0) return "BatchNorm " + c.name(n) + " is in training mode";
                    eps = static_cast<float>(a.f("epsilon"));
                } catch (const ops::op_error& err) {
                    return err.what();
                }
                if (c.with_data) t.fold_batch_norm(p, eps);
                else if (t.bias.empty()) t.bias.assign(static_cast<std::size_t>(t.channels), 0.0f);
                break;
            }
            case lowering_role::eltwise: {
                if (!(traits::input(g, n, 0) == value_ref<N>{cur, 0}))
                    return std::string(traits::op_name(g, n)) + " " + c.name(n) + " reads the chain on input other than 0";
                try {
                    auto po = e->eltwise(attrs_of(*e, g, n), ops::node_of<G>(g, n));
                    t.post_ops.insert(t.post_ops.end(), po.begin(), po.end());
                } catch (const lowering_error& err) {
                    return std::string(traits::op_name(g, n)) + " " + c.name(n) + ": " + err.what();
                } catch (const ops::op_error& err) {
                    return err.what();
                }
                break;
            }
            case lowering_role::binary: {
                if (nin != 2) return "binary op " + c.name(n) + " has " + std::to_string(nin) + " inputs";
                const bool chain_left = traits::input(g, n, 0) == value_ref<N>{cur, 0};
                if (!chain_left && !e->commutative)
                    return std::string(traits::op_name(g, n)) + " " + c.name(n) + ": the convolution is its right operand";
                const value_ref<N> operand = traits::input(g, n, chain_left ? 1 : 0);
                if (c.member(operand.node)) return "the operand of " + c.name(n) + " is computed inside the match";
                if (const auto k = c.const_data(operand)) {
                    // A constant: scalar, per-channel ([C,1,...] or [1,C,1,...]) or full.
                    const dims cd(k->dims, k->dims + k->rank);
                    const auto b = classify_operand(cd, t, false);
                    if (!b)
                        return "the constant operand of " + c.name(n) + " (shape " + to_string(cd) +
                               ") is neither a scalar, per-channel nor the output's shape";
                    std::vector<float> v = c.values_or_zeros(*k);
                    // A per-channel Add before any post-op is a bias: folded.
                    if (*b == broadcast::per_channel && e->binary_alg == dnnl::algorithm::binary_add && t.post_ops.empty()) {
                        if (t.bias.empty()) t.bias.assign(static_cast<std::size_t>(t.channels), 0.0f);
                        for (std::size_t i = 0; i < v.size(); ++i) t.bias[i] += v[i];
                        break;
                    }
                    t.post_ops.push_back(post_op::binary_constant(e->binary_alg, std::move(v), *b));
                    break;
                }
                // A runtime operand: same shape as the output (or unknown), or broadcast per the
                // adapter's shapes.
                broadcast b = broadcast::full;
                if (auto ty = adapter<G>::value_type(g, operand.node, operand.port); ty && !ty->dims.empty() && t.out_dims) {
                    const auto k = classify_operand(ty->dims, t, true);
                    if (!k)
                        return "the operand of " + c.name(n) + " (shape " + to_string(ty->dims) +
                               ") is neither a scalar, per-channel nor the output's shape";
                    b = *k;
                }
                const int index = static_cast<int>(out.extra.size());
                out.extra.push_back(operand);
                if (b == broadcast::full && e->binary_alg == dnnl::algorithm::binary_add && !sum_used) {
                    t.post_ops.push_back(post_op::sum(index));  // residual: accumulated in place
                    sum_used = true;
                } else {
                    t.post_ops.push_back(post_op::binary_input(e->binary_alg, index, b));
                }
                break;
            }
            case lowering_role::conv: {
                // A 3x3 depthwise conv (pad 1, stride 1 or 2) after a 1x1 conv: a depthwise post-op.
                if (!t.takes_depthwise) return "a second main op " + c.name(n) + " in one match";
                const auto w = nin >= 2 ? c.const_data(traits::input(g, n, 1)) : std::nullopt;
                std::optional<ops::op_attrs> dw_attrs;
                try {
                    dw_attrs.emplace(attrs_of(*e, g, n));
                } catch (const ops::op_error& err) {
                    return err.what();
                }
                const std::int64_t grp = dw_attrs->i("group");
                const dims st = dw_attrs->ints("strides"), pd = dw_attrs->ints("pads"), dl = dw_attrs->ints("dilations");
                const bool dw = w && w->rank == 4 && w->dims[0] == t.channels && w->dims[1] == 1 && w->dims[2] == 3 &&
                                w->dims[3] == 3 && grp == t.channels && pd == dims{1, 1, 1, 1} && (dl.empty() || dl == dims{1, 1}) &&
                                (st.empty() || st == dims{1, 1} || st == dims{2, 2}) && traits::input(g, n, 0) == value_ref<N>{cur, 0};
                if (!dw)
                    return "a second conv " + c.name(n) +
                           " in one match that is not a 3x3 depthwise conv (pads 1, stride 1 or 2) on the first one's output";
                std::vector<float> dw_bias;
                if (nin >= 3) {
                    const auto b = c.const_data(traits::input(g, n, 2));
                    if (!b || b->element_count() != t.channels) return "Conv " + c.name(n) + ": bias is not a constant of O values";
                    dw_bias = c.values_or_zeros(*b);
                }
                const std::int64_t stride = st.empty() ? 1 : st[0];
                t.post_ops.push_back(post_op::depthwise(c.values_or_zeros(*w), std::move(dw_bias), stride));
                if (t.out_dims)
                    for (std::size_t i = 2; i < t.out_dims->size(); ++i) (*t.out_dims)[i] = ((*t.out_dims)[i] - 1) / stride + 1;
                break;
            }
            case lowering_role::conv_transpose:
            case lowering_role::matmul:
                return "a second main op " + c.name(n) + " in one match";
            case lowering_role::composite:  // not recognized at cur: its ops are no post-ops on their own
            case lowering_role::none:
                return "op " + std::string(traits::op_name(g, n)) + " has no oneDNN lowering";
        }
        cur = n;
    }
    std::size_t ops_in_match = 0;
    for (std::size_t i = 0; i < c.count; ++i) ops_in_match += traits::kind(g, c.nodes[i]) == node_kind::op ? 1 : 0;
    if (visited != ops_in_match) return "the match is not a straight chain from the convolution";
    if (c.unused(cur)) return "the result of " + c.name(cur) + " is not used";
    out.dst = value_ref<N>{cur, 0};
    return "";
}

}  // namespace detail
}  // namespace onednn
SGMATCH_END_NAMESPACE
