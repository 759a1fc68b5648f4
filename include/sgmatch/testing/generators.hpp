// sgmatch/testing/generators.hpp - graphs with data, drawn one op at a time, for differential
// tests (differential.hpp).
//
//   sgmatch::testing::draw d(seed);
//   auto x = d.activation(4);                                  // a graph input with data
//   auto y = sgmatch::testing::add_node(d, "Conv", x);          // weights, attributes: drawn
//   d.g.mark_output(y);   // d.g and d.inputs run on any executor
//
// Each generator draws a node's shapes, attributes and constant inputs from the values its
// kernels implement (the op's description in sgmatch/ops, checked when the node is built) and
// that exporters write (ReLU6's clip bounds, HardSwish's 1/6 and 0.5, a LayerNorm's last-axis
// ReduceMean), and only from attribute forms the ONNX conformance cases of `generators()` cover:
// the reference kernels the fused result is compared with are trusted there and nowhere else.
// Data are drawn with magnitudes in [0.25, 1] (Div, Log and Sqrt stay finite-conditioned).
//
// A node that cannot be drawn for its input (a Conv after a 2-D value, a shape its rule
// refuses) raises draw_rejected: the caller draws the graph again.
#pragma once

#include <cmath>
#include <cstddef>
#include <cstdint>
#include <map>
#include <optional>
#include <random>
#include <stdexcept>
#include <string>
#include <string_view>
#include <type_traits>
#include <vector>

#include "sgmatch/detail/config.hpp"
#include "sgmatch/graph/graph.hpp"
#include "sgmatch/ops/attrs.hpp"
#include "sgmatch/ops/shape_rule_table.hpp"
#include "sgmatch/ops/table.hpp"
#include "sgmatch/reference/kernels.hpp"

SGMATCH_BEGIN_NAMESPACE
namespace testing {

using dims = std::vector<std::int64_t>;

/// A draw that cannot go on (a node that does not fit its input); what() says why.
struct draw_rejected : std::runtime_error {
    using std::runtime_error::runtime_error;
};

/// A graph being drawn: the graph, the data of its inputs, and the random source.
class draw {
public:
    explicit draw(std::uint64_t seed) : rng_(seed) {}

    graph g;
    std::map<std::string, reference::array> inputs;

    /// 0 .. n-1.
    std::size_t pick(std::size_t n) { return std::uniform_int_distribution<std::size_t>(0, n - 1)(rng_); }
    template <class T>
    T pick_of(std::initializer_list<T> v) {
        return *(v.begin() + static_cast<std::ptrdiff_t>(pick(v.size())));
    }
    bool chance(double p) { return std::uniform_real_distribution<double>(0, 1)(rng_) < p; }
    double uniform(double lo, double hi) { return std::uniform_real_distribution<double>(lo, hi)(rng_); }

    /// n values, each +-[lo, hi] (lo > 0: away from zero).
    std::vector<float> values(std::size_t n, double lo = 0.25, double hi = 1.0) {
        std::vector<float> v(n);
        for (auto& x : v) x = static_cast<float>((chance(0.5) ? -1 : 1) * uniform(lo, hi));
        return v;
    }
    std::string fresh(std::string_view stem) { return std::string(stem) + std::to_string(names_++); }

    /// A graph input of shape d with data.
    graph::value input(const dims& d) {
        const std::string name = fresh("x");
        const node_id n = g.add_input(name, tensor_type{dtype::f32, d});
        std::vector<std::size_t> shape(d.begin(), d.end());
        reference::array a = xt::zeros<float>(shape);
        const auto v = values(a.size());
        std::copy(v.begin(), v.end(), a.begin());
        inputs[name] = std::move(a);
        return {n, 0};
    }
    graph::value constant(const dims& d, double lo = 0.25, double hi = 1.0) {
        return {g.add_constant(fresh("c"), d, values(count(d), lo, hi)), 0};
    }
    graph::value constant(const dims& d, std::vector<float> v) { return {g.add_constant(fresh("c"), d, std::move(v)), 0}; }
    graph::value scalar(double v) { return {g.add_scalar(fresh("c"), static_cast<float>(v)), 0}; }
    /// A fresh activation of rank r: [N, C, H, W] (r 4), [B, M, K] (r 3) or [M, K] (r 2).
    graph::value activation(std::size_t r) {
        if (r == 4) return input({pick_of<std::int64_t>({1, 2}), pick_of<std::int64_t>({2, 3, 4, 8, 16}), 3 + static_cast<std::int64_t>(pick(6)),
                                  3 + static_cast<std::int64_t>(pick(6))});
        if (r == 3) return input({pick_of<std::int64_t>({1, 2}), 1 + static_cast<std::int64_t>(pick(5)), pick_of<std::int64_t>({4, 8, 16})});
        return input({1 + static_cast<std::int64_t>(pick(6)), pick_of<std::int64_t>({4, 8, 16})});
    }

    dims shape(graph::value v) const {
        const auto t = g.value_type(v.node, v.port);
        if (!t) throw draw_rejected("sgmatch::testing: a value without a shape");
        return t->dims;
    }
    static std::size_t count(const dims& d) {
        std::size_t n = 1;
        for (auto x : d) n *= static_cast<std::size_t>(x);
        return n;
    }

private:
    std::mt19937_64 rng_;
    std::size_t names_ = 0;
};

/// What a pattern says of one input of a node, other than the input its chain enters on.
struct operand {
    enum class kind : std::uint8_t {
        free,      // anything: a graph input or a constant, of a shape the op takes
        runtime,   // a graph input
        constant,  // a constant of a shape the op takes
        scalar,    // a one-element constant holding `number`
        given      // the value `v` (a capture, another op's result)
    };
    kind k = kind::free;
    double number = 0;
    graph::value v{};
};

namespace detail {

inline graph::value other_operand(draw& d, const operand& o, const dims& like, bool divisor) {
    switch (o.k) {
        case operand::kind::given: return o.v;
        case operand::kind::scalar: return d.scalar(o.number);
        default: break;
    }
    // A shape that broadcasts to `like`: the same, one value per channel, or one value.
    dims s = like;
    const std::size_t form = d.pick(3);
    if (form == 1 && like.size() >= 2) {
        for (std::size_t i = 0; i < s.size(); ++i) s[i] = i == 1 ? like[1] : 1;
        if (like.size() != 4) s = {like.back()};  // a bias over the last axis
    } else if (form == 2) {
        s = {};
    }
    const bool runtime = o.k == operand::kind::runtime || (o.k == operand::kind::free && d.chance(0.5));
    if (runtime) return d.input(s);
    return divisor ? d.constant(s, 0.5, 2.0) : d.constant(s);
}

inline void set_ints(graph& g, node_id n, std::string_view k, dims v) { g.set_attr(n, k, attribute(attribute::ints(v.begin(), v.end()))); }

/// Output shapes by the op's description; the node's attributes checked against what its
/// kernels implement. A refusal rejects the draw.
inline void infer(draw& d, node_id n) {
    const ops::op_schema* s = ops::find_schema(d.g.op_name(n));
    if (s == nullptr || ops::shape_rule_of(*s) == nullptr) throw draw_rejected("sgmatch::testing: no shape rule for " + std::string(d.g.op_name(n)));
    try {
        const ops::op_attrs a(*s, ops::node_of<graph>(d.g, n));
        ops::shape_inputs in;
        for (std::size_t i = 0; i < d.g.input_count(n); ++i) {
            const auto v = d.g.input(n, i);
            in.shapes.push_back(d.shape(v));
            const auto c = d.g.constant(v.node);
            const bool small = c && c->element_count() <= 64;
            in.values.push_back(small ? c->to_ints() : std::nullopt);
            in.reals.push_back(small ? c->to_reals() : std::nullopt);
        }
        const auto outs = ops::infer_shapes(a, in);
        for (std::uint32_t p = 0; p < d.g.output_count(n) && p < outs.size(); ++p)
            d.g.set_type({n, p}, tensor_type{dtype::f32, outs[p]});
    } catch (const ops::op_error& e) {
        throw draw_rejected(e.what());
    }
}

inline graph::value need_rank(draw& d, const std::optional<graph::value>& in, std::size_t lo, std::size_t hi, std::size_t fresh) {
    if (!in) return d.activation(fresh);
    const std::size_t r = d.shape(*in).size();
    if (r < lo || r > hi) throw draw_rejected("sgmatch::testing: a rank-" + std::to_string(r) + " input");
    return *in;
}

// Unary element-wise ops, with the attribute values exporters write drawn half the time.
inline node_id unary(draw& d, std::string_view op, graph::value x) {
    const std::string name = d.fresh("n");
    if (op == "Clip") {  // bounds as inputs (opset 11 on): ReLU6's, a symmetric pair, or drawn
        const std::size_t form = d.pick(4);
        double lo = 0, hi = 6;
        if (form == 1) lo = -1, hi = 1;
        if (form == 2) lo = d.uniform(-1, 0), hi = d.uniform(0.1, 1);
        std::vector<input_ref> in{x, d.scalar(lo)};
        if (form != 3) in.push_back(d.scalar(hi));  // form 3: a lower bound only
        return d.g.add_op(op, name, in);
    }
    const node_id n = d.g.add_op(op, name, {x});
    if (op == "LeakyRelu") d.g.set_attr(n, "alpha", d.chance(0.5) ? 0.01 : d.uniform(0.05, 0.5));
    if (op == "Elu") d.g.set_attr(n, "alpha", d.chance(0.5) ? 1.0 : d.uniform(0.2, 2));
    if (op == "HardSigmoid") {
        const bool swish = d.chance(0.5);  // HardSwish's HardSigmoid(1/6, 0.5)
        d.g.set_attr(n, "alpha", swish ? 1.0 / 6.0 : d.uniform(0.1, 0.5));
        d.g.set_attr(n, "beta", swish ? 0.5 : d.uniform(0.2, 0.8));
    }
    return n;
}

inline node_id binary(draw& d, std::string_view op, const std::optional<graph::value>& in, std::size_t slot,
                      const std::vector<operand>& operands) {
    // Two inputs: the chain's on `slot`, the operands on the others in order.
    std::vector<std::optional<graph::value>> ins(2);
    std::size_t next = 0;
    if (in) ins[slot < 2 ? slot : 0] = *in;
    std::vector<const operand*> rest;
    for (const auto& o : operands) rest.push_back(&o);
    // The shape the operands broadcast to: the chain's value, a given operand's, or drawn.
    std::optional<dims> like;
    if (in) like = d.shape(*in);
    for (const auto* o : rest)
        if (!like && o->k == operand::kind::given) like = d.shape(o->v);
    if (!like) like = d.shape(d.activation(d.pick_of<std::size_t>({2, 4})));
    const operand anything{};
    for (std::size_t i = 0; i < 2; ++i) {
        if (ins[i]) continue;
        const operand& o = next < rest.size() ? *rest[next++] : anything;
        if (!in && i == 0 && o.k != operand::kind::given && o.k != operand::kind::scalar)
            ins[i] = d.input(*like);  // the first input of a node no chain enters: the full shape
        else
            ins[i] = other_operand(d, o, *like, i == 1 && (op == "Div" || op == "Pow"));
    }
    if (op == "Pow" && operands.empty()) ins[1] = d.scalar(d.pick_of<double>({2.0, 3.0}));
    return d.g.add_op(op, d.fresh("n"), {*ins[0], *ins[1]});
}

inline node_id conv(draw& d, std::string_view op, const std::optional<graph::value>& in) {
    const graph::value x = need_rank(d, in, 4, 4, 4);
    const dims xs = d.shape(x);
    const std::int64_t C = xs[1];
    const bool transposed = op == "ConvTranspose";
    // The forms networks are made of half the time: a pointwise conv (1x1, stride 1, one group)
    // or a depthwise 3x3 (pads 1); any window, stride, dilation and grouping otherwise.
    const std::size_t form = transposed ? 2 : d.pick(4);
    const std::int64_t k = form == 0 ? 1 : form == 1 ? 3 : d.pick_of<std::int64_t>({1, 3, 3, 5});
    const std::int64_t s = form == 0 ? 1 : d.pick_of<std::int64_t>({1, 1, 2});
    const std::int64_t dil = form < 2 || !d.chance(0.2) ? 1 : 2;
    std::int64_t group = 1;
    if (form == 1) group = C;
    if (form >= 2) {
        const std::size_t gform = d.pick(4);
        if (gform == 1 && C % 2 == 0) group = 2;
        if (gform == 2 && !transposed) group = C;  // depthwise
    }
    std::int64_t O = d.pick_of<std::int64_t>({2, 4, 8, 16, 32});
    if (group == C) O = C * (form == 1 ? 1 : d.pick_of<std::int64_t>({1, 1, 2}));
    else if (O % group != 0) O = group * 2;
    // Pads: half the window (what exporters write for "same"), or drawn.
    std::int64_t pb = k / 2, pe = k / 2;
    if (form >= 2 && d.chance(0.5)) {
        pb = static_cast<std::int64_t>(d.pick(static_cast<std::size_t>(k / 2 + 1)));
        pe = d.chance(0.8) ? pb : static_cast<std::int64_t>(d.pick(static_cast<std::size_t>(k / 2 + 1)));
    }
    const dims w = transposed ? dims{C, O / group, k, k} : dims{O, C / group, k, k};
    const double bound = std::sqrt(3.0 / static_cast<double>(w[1] * k * k));
    std::vector<input_ref> ins{x, d.constant(w, 0.1 * bound, bound)};
    if (d.chance(0.5)) ins.push_back(d.constant({O}));
    const node_id n = d.g.add_op(op, d.fresh("n"), ins);
    set_ints(d.g, n, "kernel_shape", {k, k});
    set_ints(d.g, n, "strides", {s, s});
    set_ints(d.g, n, "dilations", {dil, dil});
    set_ints(d.g, n, "pads", {pb, pb, pe, pe});
    d.g.set_attr(n, "group", group);
    if (transposed && s > 1 && d.chance(0.3)) set_ints(d.g, n, "output_padding", {1, 1});
    return n;
}

inline node_id matmul(draw& d, std::string_view op, const std::optional<graph::value>& in) {
    if (op == "Gemm") {
        const graph::value a = need_rank(d, in, 2, 2, 2);
        const dims as = d.shape(a);
        const bool ta = d.chance(0.25), tb = d.chance(0.5);
        const std::int64_t K = ta ? as[0] : as[1], N = d.pick_of<std::int64_t>({4, 8, 16});
        const double bound = std::sqrt(3.0 / static_cast<double>(K));
        std::vector<input_ref> ins{a, d.constant(tb ? dims{N, K} : dims{K, N}, 0.1 * bound, bound)};
        const std::size_t c = d.pick(3);  // no C, one per column, or a scalar
        if (c == 1) ins.push_back(d.constant({N}));
        if (c == 2) ins.push_back(d.constant(dims{}));
        const node_id n = d.g.add_op(op, d.fresh("n"), ins);
        d.g.set_attr(n, "transA", std::int64_t{ta});
        d.g.set_attr(n, "transB", std::int64_t{tb});
        if (d.chance(0.3)) d.g.set_attr(n, "alpha", d.uniform(0.5, 2));
        if (c != 0 && d.chance(0.3)) d.g.set_attr(n, "beta", d.uniform(0.5, 2));
        return n;
    }
    const graph::value a = need_rank(d, in, 2, 3, d.pick_of<std::size_t>({2, 3}));
    const std::int64_t K = d.shape(a).back(), N = d.pick_of<std::int64_t>({4, 8, 16});
    const double bound = std::sqrt(3.0 / static_cast<double>(K));
    return d.g.add_op(op, d.fresh("n"), {a, d.constant({K, N}, 0.1 * bound, bound)});
}

inline node_id batch_norm(draw& d, const std::optional<graph::value>& in) {
    const graph::value x = need_rank(d, in, 2, 4, 4);
    const std::int64_t C = d.shape(x)[1];
    std::vector<float> var(static_cast<std::size_t>(C));  // the variance: positive
    for (auto& v : var) v = static_cast<float>(d.uniform(0.5, 2.0));
    const node_id n = d.g.add_op("BatchNormalization", d.fresh("n"),
                                 {x, d.constant({C}, 0.5, 1.5), d.constant({C}), d.constant({C}), d.constant({C}, std::move(var))});
    d.g.set_attr(n, "epsilon", d.chance(0.5) ? 1e-5 : 1e-3);
    return n;
}

inline node_id reduce_mean(draw& d, const std::optional<graph::value>& in, const std::vector<operand>& operands) {
    std::optional<graph::value> x = in;
    if (!x && !operands.empty() && operands[0].k == operand::kind::given) x = operands[0].v;
    if (!x) x = d.activation(d.pick_of<std::size_t>({2, 3}));
    const std::size_t r = d.shape(*x).size();
    const node_id n = d.g.add_op("ReduceMean", d.fresh("n"), {*x});
    // Over the last axis (a LayerNorm's) most of the time, else the last two or the channels.
    const std::size_t form = d.pick(4);
    dims axes{-1};
    if (form == 2 && r >= 3) axes = {-2, -1};
    if (form == 3 && r >= 3) axes = {1};
    set_ints(d.g, n, "axes", axes);
    d.g.set_attr(n, "keepdims", std::int64_t{1});
    return n;
}

/// add_node's drawing of one op family: (d, the op's canonical name, the chain's value, its slot,
/// the operands) -> the node.
using draw_fn = node_id (*)(draw&, std::string_view, const std::optional<graph::value>&, std::size_t, const std::vector<operand>&);

inline node_id draw_conv(draw& d, std::string_view op, const std::optional<graph::value>& in, std::size_t, const std::vector<operand>&) {
    return conv(d, op, in);
}
inline node_id draw_matmul(draw& d, std::string_view op, const std::optional<graph::value>& in, std::size_t, const std::vector<operand>&) {
    return matmul(d, op, in);
}
inline node_id draw_batch_norm(draw& d, std::string_view, const std::optional<graph::value>& in, std::size_t, const std::vector<operand>&) {
    return batch_norm(d, in);
}
inline node_id draw_reduce_mean(draw& d, std::string_view, const std::optional<graph::value>& in, std::size_t,
                                const std::vector<operand>& operands) {
    return reduce_mean(d, in, operands);
}
inline node_id draw_unary(draw& d, std::string_view op, const std::optional<graph::value>& in, std::size_t,
                          const std::vector<operand>& operands) {
    std::optional<graph::value> x = in;
    if (!x && !operands.empty() && operands[0].k == operand::kind::given) x = operands[0].v;
    return unary(d, op, x ? *x : d.activation(d.pick_of<std::size_t>({2, 4})));
}

}  // namespace detail

/// The testing layer's facet of an op's entry (ops/schema.hpp): how add_node draws the op
/// (`make`), and the ONNX conformance cases (node tests of the ONNX package,
/// tests/onnx/conformance_pass.txt) that back its reference kernel for the forms drawn
/// (`conformance`). Not specialized: the op is not drawn.
///
/// Minimal complete definition: both. Laws (tests/onednn/registry.cpp,
/// tests/testing/differential.cpp): the op has a reference kernel, its conformance cases pass,
/// and `make` draws only attribute values and shapes those cases cover.
template <class Tag>
struct generator : ops::no_facet {};

namespace detail {
struct drawn_unary {
    static constexpr draw_fn make = draw_unary;
};
struct drawn_binary {
    static constexpr draw_fn make = binary;
};
}  // namespace detail

template <>
struct generator<ops::Conv> {
    static constexpr detail::draw_fn make = detail::draw_conv;
    static constexpr std::string_view conformance[] = {
        "node/test_conv_with_strides_padding", "node/test_conv_with_strides_and_asymmetric_padding", "node/test_conv_with_strides_no_padding",
        "pytorch-converted/test_Conv2d_dilated", "pytorch-converted/test_Conv2d_groups", "pytorch-converted/test_Conv2d_depthwise_with_multiplier"};
};
template <>
struct generator<ops::ConvTranspose> {
    static constexpr detail::draw_fn make = detail::draw_conv;
    static constexpr std::string_view conformance[] = {"node/test_convtranspose", "node/test_convtranspose_pads", "node/test_convtranspose_dilations",
                                                       "pytorch-converted/test_ConvTranspose2d"};
};
template <>
struct generator<ops::MatMul> {
    static constexpr detail::draw_fn make = detail::draw_matmul;
    static constexpr std::string_view conformance[] = {"node/test_matmul_2d", "node/test_matmul_3d"};
};
template <>
struct generator<ops::Gemm> {
    static constexpr detail::draw_fn make = detail::draw_matmul;
    static constexpr std::string_view conformance[] = {"node/test_gemm_all_attributes",   "node/test_gemm_transposeA",
                                                       "node/test_gemm_transposeB",       "node/test_gemm_default_vector_bias",
                                                       "node/test_gemm_default_scalar_bias", "node/test_gemm_default_no_bias"};
};
template <>
struct generator<ops::BatchNorm> {
    static constexpr detail::draw_fn make = detail::draw_batch_norm;
    static constexpr std::string_view conformance[] = {"node/test_batchnorm_epsilon", "node/test_batchnorm_example"};
};
template <>
struct generator<ops::ReduceMean> {
    static constexpr detail::draw_fn make = detail::draw_reduce_mean;
    static constexpr std::string_view conformance[] = {"node/test_reduce_mean_keepdims_random", "node/test_reduce_mean_negative_axes_keepdims_random"};
};
template <>
struct generator<ops::Relu> : detail::drawn_unary {
    static constexpr std::string_view conformance[] = {"node/test_relu"};
};
template <>
struct generator<ops::LeakyRelu> : detail::drawn_unary {
    static constexpr std::string_view conformance[] = {"node/test_leakyrelu", "node/test_leakyrelu_default"};
};
template <>
struct generator<ops::Clip> : detail::drawn_unary {
    static constexpr std::string_view conformance[] = {"node/test_clip", "node/test_clip_default_max"};
};
template <>
struct generator<ops::Sigmoid> : detail::drawn_unary {
    static constexpr std::string_view conformance[] = {"node/test_sigmoid"};
};
template <>
struct generator<ops::Tanh> : detail::drawn_unary {
    static constexpr std::string_view conformance[] = {"node/test_tanh"};
};
template <>
struct generator<ops::Elu> : detail::drawn_unary {
    static constexpr std::string_view conformance[] = {"node/test_elu", "node/test_elu_default"};
};
template <>
struct generator<ops::HardSwish> : detail::drawn_unary {
    static constexpr std::string_view conformance[] = {"node/test_hardswish"};
};
template <>
struct generator<ops::HardSigmoid> : detail::drawn_unary {
    static constexpr std::string_view conformance[] = {"node/test_hardsigmoid", "node/test_hardsigmoid_default"};
};
template <>
struct generator<ops::Softplus> : detail::drawn_unary {
    static constexpr std::string_view conformance[] = {"node/test_softplus"};
};
template <>
struct generator<ops::Exp> : detail::drawn_unary {
    static constexpr std::string_view conformance[] = {"node/test_exp"};
};
template <>
struct generator<ops::Log> : detail::drawn_unary {
    static constexpr std::string_view conformance[] = {"node/test_log"};
};
template <>
struct generator<ops::Sqrt> : detail::drawn_unary {
    static constexpr std::string_view conformance[] = {"node/test_sqrt"};
};
template <>
struct generator<ops::Abs> : detail::drawn_unary {
    static constexpr std::string_view conformance[] = {"node/test_abs"};
};
template <>
struct generator<ops::Round> : detail::drawn_unary {
    static constexpr std::string_view conformance[] = {"node/test_round"};
};
template <>
struct generator<ops::Erf> : detail::drawn_unary {
    static constexpr std::string_view conformance[] = {"node/test_erf"};
};
template <>
struct generator<ops::Add> : detail::drawn_binary {
    static constexpr std::string_view conformance[] = {"node/test_add", "node/test_add_bcast"};
};
template <>
struct generator<ops::Sub> : detail::drawn_binary {
    static constexpr std::string_view conformance[] = {"node/test_sub", "node/test_sub_bcast"};
};
template <>
struct generator<ops::Mul> : detail::drawn_binary {
    static constexpr std::string_view conformance[] = {"node/test_mul", "node/test_mul_bcast"};
};
template <>
struct generator<ops::Div> : detail::drawn_binary {
    static constexpr std::string_view conformance[] = {"node/test_div", "node/test_div_bcast"};
};
template <>
struct generator<ops::Max> : detail::drawn_binary {
    static constexpr std::string_view conformance[] = {"node/test_max_two_inputs"};
};
template <>
struct generator<ops::Min> : detail::drawn_binary {
    static constexpr std::string_view conformance[] = {"node/test_min_two_inputs"};
};
template <>
struct generator<ops::Pow> : detail::drawn_binary {
    static constexpr std::string_view conformance[] = {"node/test_pow", "node/test_pow_bcast_scalar"};
};

/// One op the generators draw (an op whose generator<Tag> is specialized), and its ONNX
/// conformance cases.
struct generator_entry {
    std::string_view op;  // the description's canonical name
    std::vector<std::string_view> conformance;
    detail::draw_fn make;
};

/// Every op add_node draws, in vocabulary order.
inline const std::vector<generator_entry>& generators() {
    static const std::vector<generator_entry> t = [] {
        std::vector<generator_entry> v;
        ops::for_each_described(ops::vocabulary{}, [&](auto tag) {
            using G = generator<decltype(tag)>;
            if constexpr (!std::is_base_of_v<ops::no_facet, G>)
                v.push_back({ops::description<decltype(tag)>->name(), {std::begin(G::conformance), std::end(G::conformance)}, G::make});
        });
        return v;
    }();
    return t;
}

namespace detail {
inline const generator_entry* find_generator(const ops::op_schema* s) {
    if (s != nullptr)
        for (const generator_entry& e : generators())
            if (e.op == s->name()) return &e;
    return nullptr;
}
}  // namespace detail

/// Whether add_node draws op (by its canonical name or an alias).
inline bool can_draw(std::string_view op) { return detail::find_generator(ops::find_schema(op)) != nullptr; }

/// A node of op `op` (by any alias) drawn into d: `in` is the value the chain enters with on
/// input `slot` (none: the node draws its own), `operands` what the pattern says of the other
/// inputs, in order. Returns the node's output 0, with its shape set; throws draw_rejected.
inline graph::value add_node(draw& d, std::string_view op, const std::optional<graph::value>& in = std::nullopt,
                             std::size_t slot = 0, const std::vector<operand>& operands = {}) {
    const ops::op_schema* s = ops::find_schema(op);
    const generator_entry* e = detail::find_generator(s);
    if (e == nullptr) throw draw_rejected("sgmatch::testing: no generator for op " + std::string(op));
    const node_id n = e->make(d, s->name(), in, slot, operands);
    detail::infer(d, n);
    return {n, 0};
}

}  // namespace testing
SGMATCH_END_NAMESPACE
