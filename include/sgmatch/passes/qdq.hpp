// sgmatch/passes/qdq.hpp - int8 models in the QDQ form (QuantizeLinear / DequantizeLinear pairs
// around float ops, as quantization tools write them) rewritten into the integer operators, so
// that each convolution or matmul runs as one oneDNN int8 primitive and int8 tensors pass from
// one to the next.
//
//   sgmatch::passes::qdq_report r = sgmatch::passes::fold_qdq(g);   // the built-in graph
//
// The groups, found with sgmatch's patterns:
//   DQ(x), DQ(w) [, DQ(b) | b] -> Conv   -> [Relu | Clip] -> Q   becomes QLinearConv
//   DQ(a), DQ(b)               -> MatMul -> [Relu | Clip] -> Q   becomes QLinearMatMul
//   DQ(a), DQ(b)               -> Add    -> [Relu | Clip] -> Q   becomes QLinearAdd
//   x -> a GELU written out (Div, Erf, Add, Mul, Mul; or the tanh form) -> Q   becomes x -> Gelu -> Q
// where DQ(w) and DQ(b) read constants (the weights, and a bias of int32 or float), and x or a
// is any u8 or s8 value with one scale and one zero point; an Add's two operands are such values
// (QLinearAdd, ONNX Runtime's op, computes the group's f32 arithmetic as it is: the same
// integers). What a conv or matmul rewrite computes is what the group computes, with its
// rounding moved:
// - the bias becomes int32 in units of x_scale * w_scale[m] (QLinearConv's), round(b_scale * b /
//   (x_scale * w_scale[m])): the same integers when b_scale is that product, as quantization
//   tools write it; otherwise within half a unit of the accumulator;
// - the activation is folded where the output's saturation already applies it: a Relu when y's
//   zero point is its type's least value, a Clip(lo, hi) when lo and hi quantize to (or past)
//   y's least and greatest values; such a group's result is the same integers either way.
// The f32 group and the integer op then differ only in where each rounds: the results agree
// within one step of y's scale (tests/passes/qdq.cpp checks it against the ops run one by one).
//
// A group whose form the integer op does not express stays as it is (it runs in float, each
// op on its own kernel), with the reason in the report: an activation the saturation does not
// imply, a per-channel activation scale, a conv's u8 weights or nonzero weight zero points
// (oneDNN 2.x's int8 conv takes neither), a bias out of int32's range, an intermediate read
// outside the group. A DQ read by other nodes too stays for them; the clean-up passes erase it
// once nothing reads it.
//
// The rewrite needs the built-in graph's writes (replace, add_constant, set_attr): the ONNX
// loader runs it before the clean-up passes (onnx::load_options::fold_qdq).
#pragma once

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <limits>
#include <optional>
#include <string>
#include <vector>

#include "sgmatch/detail/config.hpp"
#include "sgmatch/graph/graph.hpp"
#include "sgmatch/match/scan.hpp"
#include "sgmatch/ops/table.hpp"
#include "sgmatch/pattern/combinators.hpp"
#include "sgmatch/pattern/vocabulary.hpp"
#include "sgmatch/pattern/activation_forms.hpp"

SGMATCH_BEGIN_NAMESPACE
namespace passes {

struct qdq_report {
    std::size_t convs = 0;        // groups made QLinearConv
    std::size_t matmuls = 0;      // groups made QLinearMatMul
    std::size_t adds = 0;         // groups made QLinearAdd
    std::size_t activations = 0;  // Relu / Clip folded into the saturation
    std::size_t gelus = 0;        // written-out GELUs on a DequantizeLinear's value made one Gelu op
    std::vector<std::string> notes;  // groups left in float, each with the reason
};

namespace patterns {
/// The float part of a group, anchored at the conv or matmul; its operands' DQs are read by the
/// rewrite (a DQ may feed other nodes too, and then stays).
inline constexpr auto qdq_float_part =
    (op<ops::Conv>() | op<ops::MatMul>()) >> optional(op<ops::Relu>() | op<ops::Clip>()) >> op<ops::QuantizeLinear>();
/// A residual Add between DQs and a Q (ResNet's), anchored at the Add.
inline constexpr auto qdq_add_part = op<ops::Add>() >> optional(op<ops::Relu>() | op<ops::Clip>()) >> op<ops::QuantizeLinear>();
struct gelu_x;
/// A GELU written out (pattern/activation_forms.hpp: the erf or the tanh form) whose result is
/// quantized, anchored at x's producer; x's producer and the QuantizeLinear stay.
inline constexpr auto qdq_gelu = capture<gelu_x>(any()) >> (activation_forms::gelu_erf<gelu_x>() | activation_forms::gelu_tanh<gelu_x>()) >>
                                 op<ops::QuantizeLinear>();
}  // namespace patterns

namespace detail {

class qdq_folder {
public:
    using V = value_ref<node_id>;

    qdq_folder(graph& g, qdq_report& r) : g_(g), r_(r) {}

    void run() {
        // The convs and matmuls first: a residual Add's operands are then their integer outputs.
        rewrite(patterns::qdq_float_part, [&](const std::vector<node_id>& nodes) { return fold(nodes); });
        rewrite(patterns::qdq_add_part, [&](const std::vector<node_id>& nodes) { return fold_add(nodes); });
        rewrite(patterns::qdq_gelu, [&](const std::vector<node_id>& nodes) { return fold_gelu(nodes); });
    }

private:
    template <class P, class F>
    void rewrite(const P& p, F&& fold_group) {
        std::vector<std::vector<node_id>> groups;
        for (const auto& m : find_all(op_index<graph>(g_), p)) groups.emplace_back(m.begin(), m.end());
        for (const auto& nodes : groups) {
            const std::string why = fold_group(nodes);
            if (!why.empty())
                r_.notes.push_back(std::string(g_.op_name(nodes[0])) + " '" + std::string(g_.name(nodes[0])) + "' stays float: " + why);
        }
    }


    // A DequantizeLinear's reading: the quantized value, its scales and zero points.
    struct dq {
        node_id node{};
        V q{};                       // the quantized value
        dtype type = dtype::unknown;  // its element type
        V scale{}, zero{};            // zero.node invalid: absent
        bool has_zero = false;
        std::vector<float> scales;    // constant scales (empty: not constant)
        std::vector<std::int64_t> zeros;  // constant zero points (empty: absent or not constant)
        std::int64_t axis = 1;
    };

    std::optional<dq> read_dq(V v) const {
        if (g_.kind(v.node) != node_kind::op || g_.op_name(v.node) != "DequantizeLinear" || v.port != 0) return std::nullopt;
        const auto in = g_.inputs(v.node);
        if (in.size() < 2) return std::nullopt;
        dq d;
        d.node = v.node;
        d.q = in[0];
        d.type = quantized_type(in[0]);
        d.scale = in[1];
        if (const auto c = g_.constant(in[1].node); c && c->type == dtype::f32 && c->rank <= 1)
            if (auto f = c->to_floats()) d.scales = std::move(*f);
        if (in.size() > 2) {
            d.zero = in[2];
            d.has_zero = true;
            if (const auto c = g_.constant(in[2].node); c && c->data != nullptr)
                for (std::int64_t i = 0; i < c->element_count(); ++i) d.zeros.push_back(static_cast<std::int64_t>(c->at(static_cast<std::size_t>(i))));
        }
        if (const auto a = g_.attr(v.node, "axis"); a && a->as_int()) d.axis = *a->as_int();
        return d;
    }

    bool only_user(node_id producer, node_id user) const {
        if (g_.is_graph_output(producer, 0)) return false;
        const auto us = g_.users(producer);
        for (const auto& u : us)
            if (u.user != user) return false;
        return !us.empty();
    }

    static std::pair<std::int64_t, std::int64_t> range_of(dtype t) {
        return t == dtype::u8 ? std::pair<std::int64_t, std::int64_t>{0, 255} : std::pair<std::int64_t, std::int64_t>{-128, 127};
    }

    // A constant scalar zero point of u8 or s8 `type` holding `v`, for an absent one.
    V zero_of(dtype type, const std::string& name, std::int64_t v = 0) {
        const std::vector<unsigned char> b(1, static_cast<unsigned char>(v));
        return V{g_.add_constant(name, {}, type, b), 0};
    }

    // A quantized value's element type: as declared, else from the op that made it, through the
    // input its schema's type rule names (a QuantizeLinear's or an integer op's zero point; an
    // absent zero point means u8 in ONNX), followed back through ops that keep their input's type.
    dtype quantized_type(V v) const {
        for (std::size_t step = 0; step < 64; ++step) {
            if (const auto t = g_.value_type(v.node, v.port); t && t->type != dtype::unknown) return t->type;
            if (g_.kind(v.node) != node_kind::op || v.port != 0) return dtype::unknown;
            const ops::op_schema* s = ops::find_schema(g_.op_name(v.node));
            if (s == nullptr || s->types.how != ops::type_rule::from::input) return dtype::unknown;
            const auto in = g_.inputs(v.node);
            if (in.size() <= s->types.input) {
                const ops::input_spec* slot = s->input(s->types.input);
                return slot != nullptr && slot->p == ops::input_spec::presence::optional ? dtype::u8 : dtype::unknown;
            }
            v = in[s->types.input];
        }
        return dtype::unknown;
    }

    // The activation's bounds (lo, hi), or nullopt when it has none the rewrite can read.
    std::optional<std::pair<double, double>> bounds(node_id act) const {
        const double inf = std::numeric_limits<double>::infinity();
        if (g_.op_name(act) == "Relu") return std::pair<double, double>{0.0, inf};
        double lo = -inf, hi = inf;
        const auto in = g_.inputs(act);
        if (const auto a = g_.attr(act, "min"); a && a->as_real()) lo = *a->as_real();
        if (const auto a = g_.attr(act, "max"); a && a->as_real()) hi = *a->as_real();
        for (std::size_t i = 1; i < in.size() && i < 3; ++i) {
            const auto c = g_.constant(in[i].node);
            const auto s = c ? c->scalar() : std::nullopt;
            if (!s) return std::nullopt;
            (i == 1 ? lo : hi) = *s;
        }
        return std::pair<double, double>{lo, hi};
    }

    // The QuantizeLinear ending a group, and whether its saturation implies the activation.
    struct q_end {
        dtype type = dtype::u8;
        std::int64_t zero = 0;
        V scale{};
        std::optional<V> zero_value;  // absent: made as a constant
        bool folded_activation = false;
    };
    std::string read_end(const std::vector<node_id>& nodes, q_end& y) const {
        const auto qin = g_.inputs(nodes.back());
        if (qin.size() < 2) return "its QuantizeLinear has no scale";
        const auto ys = g_.constant(qin[1].node);
        const auto y_scale = ys && ys->type == dtype::f32 ? ys->scalar() : std::nullopt;
        if (!y_scale || !(*y_scale > 0)) return "its output's scale is not one positive constant";
        y.scale = qin[1];
        if (qin.size() > 2) {
            const auto c = g_.constant(qin[2].node);
            const auto z = c ? c->scalar() : std::nullopt;
            if (!z || c->element_count() != 1 || (c->type != dtype::u8 && c->type != dtype::i8))
                return "its output's zero point is not one u8 or s8 constant";
            y.type = c->type;
            y.zero = static_cast<std::int64_t>(*z);
            y.zero_value = qin[2];
        }
        if (nodes.size() == 3) {
            const auto b = bounds(nodes[1]);
            if (!b) return "its " + std::string(g_.op_name(nodes[1])) + "'s bounds are not constants";
            const auto [qmin, qmax] = range_of(y.type);
            auto quantized = [&](double v) { return std::nearbyint(v / *y_scale) + static_cast<double>(y.zero); };
            if (!(quantized(b->first) <= static_cast<double>(qmin)) || !(quantized(b->second) >= static_cast<double>(qmax)))
                return "its " + std::string(g_.op_name(nodes[1])) + " clamps inside the output's range (zero point " +
                       std::to_string(y.zero) + ", scale " + std::to_string(*y_scale) + "): the saturation does not apply it";
            y.folded_activation = true;
        }
        return {};
    }

    // Why the residual Add group nodes[] cannot become one QLinearAdd, or "" once it has.
    std::string fold_add(const std::vector<node_id>& nodes) {
        const node_id main = nodes[0];
        const auto in = g_.inputs(main);
        if (in.size() != 2) return "it does not have two inputs";
        const auto a = read_dq(in[0]);
        const auto b = read_dq(in[1]);
        if (!a || !b) return "its operands are not both dequantized";
        if ((a->type != dtype::u8 && a->type != dtype::i8) || b->type != a->type) return "its quantized operands are not both u8 or both s8";
        for (const dq* d : {&*a, &*b})
            if (d->scales.size() != 1 || (d->has_zero && d->zeros.size() != 1))
                return "an operand's scale and zero point are not one constant each";
        q_end y;
        if (std::string why = read_end(nodes, y); !why.empty()) return why;
        if (y.type != a->type) return "its output's type differs from its operands' (QLinearAdd keeps the type)";
        replacement<node_id> r;
        r.nodes = nodes;
        if (only_user(a->node, main)) r.nodes.push_back(a->node);
        if (b->node != a->node && only_user(b->node, main)) r.nodes.push_back(b->node);
        const std::string name(g_.name(main));
        r.name = name;
        r.op_name = "QLinearAdd";
        r.outputs = {V{nodes.back(), 0}};
        const V az = a->has_zero ? a->zero : zero_of(a->type, name + ".A_zero_point");
        const V bz = b->has_zero ? b->zero : zero_of(b->type, name + ".B_zero_point");
        const V cz = y.zero_value ? *y.zero_value : zero_of(y.type, name + ".C_zero_point");
        r.inputs = {a->q, a->scale, az, b->q, b->scale, bz, y.scale, cz};
        (void)g_.replace(std::move(r));
        ++r_.adds;
        r_.activations += y.folded_activation ? 1 : 0;
        return {};
    }

    // A written-out GELU between x's producer (nodes[0]) and a QuantizeLinear (nodes.back()),
    // both of which stay, made one Gelu op (one eltwise primitive on oneDNN, where the five ops
    // ran one at a time, Erf on its reference kernel), where only the GELU reads its inner
    // values; or why not.
    std::string fold_gelu(const std::vector<node_id>& nodes) {
        if (nodes.size() < 3) return "the written-out GELU after it has no ops";
        std::optional<V> x;  // the value of nodes[0] that the GELU's first op reads
        for (const V& v : g_.inputs(nodes[1]))
            if (v.node == nodes[0]) x = v;
        if (!x) return "the written-out GELU after it does not read it";
        const std::vector<node_id> members(nodes.begin() + 1, nodes.end() - 1);
        auto member = [&](node_id n) { return std::find(members.begin(), members.end(), n) != members.end(); };
        std::optional<node_id> last;
        bool tanh = false;
        for (const node_id n : members) {
            tanh = tanh || g_.op_name(n) == "Tanh";
            bool inside = false, outside = g_.is_graph_output(n, 0);
            for (const auto& u : g_.users(n)) (member(u.user) ? inside : outside) = true;
            if (!inside) {
                if (last) return "the written-out GELU after it has two results";
                last = n;
            } else if (outside) {
                return "the written-out GELU after it has an inner value read outside it ('" + std::string(g_.name(n)) + "')";
            }
        }
        if (!last) return "the written-out GELU after it has no result";
        replacement<node_id> r;
        r.nodes = members;
        r.name = std::string(g_.name(*last));
        r.op_name = "Gelu";
        r.outputs = {V{*last, 0}};
        r.inputs = {*x};
        const node_id made = g_.replace(std::move(r));
        g_.set_attr(made, "approximate", std::string(tanh ? "tanh" : "none"));
        ++r_.gelus;
        return {};
    }

    // Why the group nodes[] cannot become one integer op, or "" once it has.
    std::string fold(const std::vector<node_id>& nodes) {
        const node_id main = nodes[0];
        const node_id q = nodes.back();
        const bool conv = g_.op_name(main) == "Conv";
        const auto in = g_.inputs(main);
        if (in.size() < 2) return "fewer than two inputs";
        const auto x = read_dq(in[0]);
        const auto w = read_dq(in[1]);
        if (!x || !w) return "its operands are not both dequantized";
        if (x->type != dtype::u8 && x->type != dtype::i8) return "its quantized input is not u8 or s8";
        if (x->scales.size() != 1 || (x->has_zero && x->zeros.size() != 1))
            return "its input's scale and zero point are not one constant each";
        if (!g_.constant(w->q.node)) return "its weights are not a constant";
        if (w->type != dtype::i8 && !(w->type == dtype::u8 && !conv))
            return conv ? "its weights are not s8 (oneDNN 2.x's int8 convolution takes s8 weights)" : "its weights are not u8 or s8";
        if (w->scales.empty() || (w->has_zero && w->zeros.empty())) return "its weights' scale or zero point is not a constant";
        const auto wt = g_.value_type(w->q.node, w->q.port);
        if (!wt || wt->dims.empty()) return "its weights' shape is unknown";
        const std::int64_t channels = conv ? wt->dims[0] : wt->dims.back();
        const std::int64_t channel_axis = conv ? 0 : static_cast<std::int64_t>(wt->dims.size()) - 1;
        if (w->scales.size() != 1) {
            const std::int64_t axis = w->axis < 0 ? w->axis + static_cast<std::int64_t>(wt->dims.size()) : w->axis;
            if (axis != channel_axis || static_cast<std::int64_t>(w->scales.size()) != channels)
                return conv ? "its weights' scales are not one or one per output channel" : "its weights' scales are not one or one per column";
        }
        if (conv) {
            for (const auto z : w->zeros)
                if (z != 0) return "its weights have a nonzero zero point (oneDNN 2.x's int8 convolution subtracts none)";
        } else if (w->zeros.size() > 1) {
            for (const auto z : w->zeros)
                if (z != w->zeros[0]) return "its weights' zero points differ by column";
        }
        q_end y;
        if (std::string why = read_end(nodes, y); !why.empty()) return why;
        // The bias, as int32 in units of x_scale * w_scale[m].
        std::vector<std::int32_t> bias;
        std::optional<node_id> bias_dq;
        if (conv && in.size() > 2) {
            std::vector<double> b;
            if (const auto d = read_dq(in[2])) {
                const auto c = g_.constant(d->q.node);
                bool zero = true;
                for (const auto z : d->zeros) zero = zero && z == 0;
                if (!c || !c->data || !zero || (d->scales.size() != 1 && static_cast<std::int64_t>(d->scales.size()) != c->element_count()))
                    return "its bias is not a constant with one scale (or one per channel) and no zero point";
                for (std::int64_t i = 0; i < c->element_count(); ++i)
                    b.push_back(c->at(static_cast<std::size_t>(i)) * d->scales[d->scales.size() == 1 ? 0 : static_cast<std::size_t>(i)]);
                if (only_user(d->node, main)) bias_dq = d->node;
            } else if (const auto c = g_.constant(in[2].node); c && c->data && c->type == dtype::f32) {
                for (std::int64_t i = 0; i < c->element_count(); ++i) b.push_back(c->at(static_cast<std::size_t>(i)));
            } else {
                return "its bias is neither a constant nor a dequantized constant";
            }
            if (static_cast<std::int64_t>(b.size()) != channels) return "its bias does not hold one value per output channel";
            for (std::size_t m = 0; m < b.size(); ++m) {
                const double unit = static_cast<double>(x->scales[0]) * w->scales[w->scales.size() == 1 ? 0 : m];
                const double v = std::nearbyint(b[m] / unit);
                if (!(std::abs(v) <= 2147483647.0)) return "its bias does not fit int32 in units of x_scale * w_scale";
                bias.push_back(static_cast<std::int32_t>(v));
            }
        }
        // What the new node replaces: the float part, and each DQ read by nothing else.
        replacement<node_id> r;
        r.nodes = nodes;
        if (only_user(x->node, main)) r.nodes.push_back(x->node);
        if (w->node != x->node && only_user(w->node, main)) r.nodes.push_back(w->node);
        if (bias_dq) r.nodes.push_back(*bias_dq);
        const std::string name(g_.name(main));
        r.name = name;
        r.op_name = conv ? "QLinearConv" : "QLinearMatMul";
        r.outputs = {V{q, 0}};
        // Absent zero points made constants (the integer ops take them as inputs).
        const V xz = x->has_zero ? x->zero : zero_of(x->type, name + ".x_zero_point");
        // A matmul's zero points per column, all equal, as one (the int8 matmul takes one).
        const bool one_zero = w->has_zero && (conv || w->zeros.size() == 1);
        const V wz = one_zero ? w->zero : zero_of(w->type, name + ".w_zero_point", w->zeros.empty() ? 0 : w->zeros[0]);
        const V yz = y.zero_value ? *y.zero_value : zero_of(y.type, name + ".y_zero_point");
        r.inputs = {x->q, x->scale, xz, w->q, w->scale, wz, y.scale, yz};
        if (!bias.empty()) {
            std::vector<unsigned char> bytes(bias.size() * 4);
            std::memcpy(bytes.data(), bias.data(), bytes.size());
            r.inputs.push_back(V{g_.add_constant(name + ".bias_i32", {channels}, dtype::i32, std::move(bytes)), 0});
        }
        std::vector<std::pair<std::string, attribute>> attrs;
        if (conv) g_.for_each_attr(main, [&](std::string_view k, const attribute& a) { attrs.emplace_back(std::string(k), a); });
        const node_id made = g_.replace(std::move(r));
        for (auto& [k, a] : attrs) g_.set_attr(made, k, std::move(a));
        ++(conv ? r_.convs : r_.matmuls);
        r_.activations += y.folded_activation ? 1 : 0;
        return {};
    }

    graph& g_;
    qdq_report& r_;
};

}  // namespace detail

/// Rewrites the QDQ groups of `g` into QLinearConv, QLinearMatMul and QLinearAdd (see the top of
/// this file).
/// Each rewrite either completes or leaves its group as it was.
inline qdq_report fold_qdq(graph& g) {
    qdq_report r;
    detail::qdq_folder(g, r).run();
    return r;
}

}  // namespace passes
SGMATCH_END_NAMESPACE
