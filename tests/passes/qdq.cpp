// The QDQ rewrite (passes/qdq.hpp): each group DQ -> Conv | MatMul -> [Relu | Clip] -> Q becomes
// one QLinearConv or QLinearMatMul that runs on oneDNN's int8 primitive (run_stats counts it),
// and its result agrees with the group's ops run one by one in the reference mode (the ONNX
// definition) within one step of y, in at most one element in a thousand; chains pass int8
// from one integer op to the next; a group whose form the integer op does not express stays
// as it was, with the reason. Random groups (shapes, windows, scales, zero points, activations)
// drawn from a seeded generator check the same over many forms.
#include <doctest/doctest.h>

#include <algorithm>
#include <cstdint>
#include <map>
#include <random>
#include <string>
#include <vector>

#include "sgmatch/exec/executor.hpp"
#include "sgmatch/passes/cleanup.hpp"
#include "sgmatch/passes/qdq.hpp"
#include "support/values.hpp"

using namespace sgmatch;
using exec::value;

namespace qdq_tests {

// A QDQ conv group's parts, as a quantization tool writes them.
struct conv_group {
    std::vector<std::int64_t> x_dims{1, 8, 9, 9}, w_dims{8, 8, 3, 3};
    dtype x_type = dtype::u8, w_type = dtype::i8, y_type = dtype::u8;
    float x_scale = 0.02f, y_scale = 0.05f;
    std::int64_t x_zero = 17, y_zero = 0, w_zero = 0;
    bool per_channel = true, bias = true, bias_dq = true;
    std::string activation;  // "", "Relu" or "Clip" (0, 6)
    std::vector<std::pair<std::string, attribute>> attrs;
};

value scalar_of(dtype t, std::int64_t v) {
    switch (t) {
        case dtype::u8: return value::of<std::uint8_t>({}, {static_cast<std::uint8_t>(v)});
        case dtype::i8: return value::of<std::int8_t>({}, {static_cast<std::int8_t>(v)});
        default: return value::of<std::int32_t>({}, {static_cast<std::int32_t>(v)});
    }
}

// DQ(in) with constant scales and zero point (axis 0 when per channel).
node_id dequantize(graph& g, const std::string& name, input_ref in, const std::vector<float>& scales, dtype zero_type,
                   std::int64_t zero, bool with_zero = true, std::int64_t axis = 0) {
    const node_id s = test::constant_of(g, name + ".scale", value::of<float>(scales.size() == 1 ? std::vector<std::int64_t>{}
                                                                                                : std::vector<std::int64_t>{static_cast<std::int64_t>(scales.size())},
                                                                             scales));
    std::vector<input_ref> ins{in, s};
    if (with_zero) {
        value z = scales.size() == 1 ? scalar_of(zero_type, zero) : value::zeros(zero_type, {static_cast<std::int64_t>(scales.size())});
        if (scales.size() != 1 && zero != 0) {
            std::vector<std::int8_t> zs(scales.size(), static_cast<std::int8_t>(zero));
            z = value::of<std::int8_t>({static_cast<std::int64_t>(scales.size())}, zs);
        }
        ins.push_back(test::constant_of(g, name + ".zero", z));
    }
    const node_id n = g.add_op("DequantizeLinear", name, ins);
    if (scales.size() != 1) g.set_attr(n, "axis", axis);
    return n;
}

node_id quantize(graph& g, const std::string& name, input_ref in, float scale, dtype type, std::int64_t zero) {
    return g.add_op("QuantizeLinear", name,
                    {in, test::constant_of(g, name + ".scale", value::of<float>({}, {scale})), test::constant_of(g, name + ".zero", scalar_of(type, zero))});
}

// The group's ops from the value `xq` (quantized) to its Q; returns the Q.
node_id add_conv_group(graph& g, const std::string& name, input_ref xq, const conv_group& c, std::mt19937& rng) {
    const std::int64_t M = c.w_dims[0];
    const node_id x = dequantize(g, name + ".dqx", xq, {c.x_scale}, c.x_type, c.x_zero);
    const value wq = c.w_type == dtype::i8 ? test::random_value<std::int8_t>(rng, c.w_dims, -127, 127)
                                           : test::random_value<std::uint8_t>(rng, c.w_dims, 0, 255);
    std::vector<float> ws(c.per_channel ? static_cast<std::size_t>(M) : 1);
    for (std::size_t m = 0; m < ws.size(); ++m) ws[m] = 0.002f + 0.0005f * static_cast<float>(m % 7);
    const node_id w = dequantize(g, name + ".dqw", test::constant_of(g, name + ".wq", wq), ws, c.w_type, c.w_zero);
    std::vector<input_ref> conv_in{x, w};
    if (c.bias) {
        std::vector<std::int32_t> b(static_cast<std::size_t>(M));
        for (std::size_t m = 0; m < b.size(); ++m) b[m] = static_cast<std::int32_t>(m * 311) - 1200;
        if (c.bias_dq) {
            std::vector<float> bs(ws.size());
            for (std::size_t m = 0; m < bs.size(); ++m) bs[m] = c.x_scale * ws[m];  // as quantization tools write it
            conv_in.push_back(dequantize(g, name + ".dqb", test::constant_of(g, name + ".bq", value::of<std::int32_t>({M}, b)), bs,
                                         dtype::i32, 0, false));
        } else {
            std::vector<float> bf(b.size());
            for (std::size_t m = 0; m < bf.size(); ++m) bf[m] = static_cast<float>(b[m]) * 1e-5f;
            conv_in.push_back(test::constant_of(g, name + ".b", value::of<float>({M}, bf)));
        }
    }
    node_id last = g.add_op("Conv", name, conv_in);
    for (const auto& [k, v] : c.attrs) g.set_attr(last, k, v);
    if (c.activation == "Relu") last = g.add_op("Relu", name + ".relu", {last});
    if (c.activation == "Clip")
        last = g.add_op("Clip", name + ".clip",
                        {last, test::constant_of(g, name + ".lo", value::of<float>({}, {0.0f})), test::constant_of(g, name + ".hi", value::of<float>({}, {6.0f}))});
    return quantize(g, name + ".q", last, c.y_scale, c.y_type, c.y_zero);
}

value random_input(std::mt19937& rng, dtype t, const std::vector<std::int64_t>& dims) {
    return t == dtype::u8 ? test::random_value<std::uint8_t>(rng, dims, 0, 255) : test::random_value<std::int8_t>(rng, dims, -128, 127);
}

std::vector<std::string> ops_of(const graph& g) {
    std::vector<std::string> ops;
    for (node_id n : g.nodes())
        if (g.kind(n) == node_kind::op) ops.emplace_back(g.op_name(n));
    return ops;
}

struct outcome {
    test::int_difference d;
    exec::run_stats folded, reference;
};

// Runs g (in the reference mode: the QDQ ops one by one) and, after fold_qdq and the clean-up,
// its rewrite in the oneDNN mode, on the same input; how the results differ.
outcome run_both(const graph& g, graph& rewritten, const value& x, passes::qdq_report& r) {
    outcome o;
    const value want = exec::executor(g, exec::mode::reference).run({{"x", x}}, &o.reference).at(0);
    r = passes::fold_qdq(rewritten);
    (void)passes::cleanup(rewritten);
    const value got = exec::executor(rewritten, exec::mode::onednn).run({{"x", x}}, &o.folded).at(0);
    REQUIRE(got.type() == want.type());
    REQUIRE(got.dims() == want.dims());
    o.d = test::compare_ints(got, want);
    return o;
}

// One conv group over graph input "x", built twice (the second to rewrite).
struct one_group {
    graph g, h;
    value x;
    passes::qdq_report r;
    outcome o;
    one_group(const conv_group& c, unsigned seed) {
        for (graph* t : {&g, &h}) {
            std::mt19937 rng(seed);
            const node_id in = t->add_input("x", tensor_type::of(c.x_type, c.x_dims));
            t->mark_output(add_conv_group(*t, "conv", in, c, rng));
        }
        std::mt19937 rng(seed + 1000);
        x = random_input(rng, c.x_type, c.x_dims);
        o = run_both(g, h, x, r);
    }
};

void check_within_one_step(const outcome& o) {
    CAPTURE(o.d.count);
    CAPTURE(o.d.differ);
    CHECK(o.d.worst <= 1);
    CHECK(o.d.differ * 1000 <= o.d.count);
}

// The cases stay in the namespace: the unity build compiles this file with others.

TEST_CASE("QDQ conv + Relu: one QLinearConv on oneDNN int8, padded with a nonzero input zero point, within one step") {
    conv_group c;
    c.x_dims = {2, 16, 11, 9};
    c.w_dims = {8, 16, 3, 3};
    c.activation = "Relu";  // y's zero point 0 of u8: the saturation applies it
    c.attrs = {{"pads", attribute::ints{1, 1, 1, 1}}, {"strides", attribute::ints{2, 1}}};
    one_group t(c, 1);
    CHECK(t.r.convs == 1);
    CHECK(t.r.activations == 1);
    CHECK(t.r.notes.empty());
    CHECK(ops_of(t.h) == std::vector<std::string>{"QLinearConv"});
    CHECK(t.o.folded.onednn_typed_nodes == 1);
    CHECK(t.o.reference.onednn_typed_nodes == 0);
    check_within_one_step(t.o);
}

TEST_CASE("QDQ conv + Clip(0, 6) on int8 activations, grouped, per-tensor weights, a float bias: one QLinearConv") {
    conv_group c;
    c.x_type = dtype::i8;
    c.x_zero = -5;
    c.y_type = dtype::i8;
    c.y_zero = -128;
    c.y_scale = 6.0f / 255.0f;  // [0, 6] onto [-128, 127]: the Clip is the saturation
    c.per_channel = false;
    c.bias_dq = false;
    c.activation = "Clip";
    c.x_dims = {1, 8, 10, 12};
    c.w_dims = {6, 4, 3, 2};
    c.attrs = {{"group", std::int64_t{2}}, {"dilations", attribute::ints{2, 1}}, {"pads", attribute::ints{0, 1, 2, 0}}};
    one_group t(c, 2);
    CHECK(t.r.convs == 1);
    CHECK(t.r.activations == 1);
    CHECK(ops_of(t.h) == std::vector<std::string>{"QLinearConv"});
    CHECK(t.o.folded.onednn_typed_nodes == 1);
    check_within_one_step(t.o);
}

TEST_CASE("QDQ groups the integer ops do not express stay float, each with its reason, and still compute the same") {
    struct declined {
        const char* what;
        conv_group c;
        const char* reason;
    };
    std::vector<declined> cases;
    {
        conv_group c;
        c.activation = "Relu";
        c.y_zero = 128;  // the Relu clamps at 128, inside u8's range
        cases.push_back({"a Relu the saturation does not imply", c, "clamps inside the output's range"});
    }
    {
        conv_group c;
        c.w_zero = 3;
        cases.push_back({"a nonzero weight zero point", c, "nonzero zero point"});
    }
    {
        conv_group c;
        c.w_type = dtype::u8;
        cases.push_back({"u8 weights", c, "not s8"});
    }
    for (const auto& k : cases) {
        CAPTURE(k.what);
        one_group t(k.c, 3);
        CHECK(t.r.convs == 0);
        REQUIRE(t.r.notes.size() == 1);
        CHECK(t.r.notes[0].find(k.reason) != std::string::npos);
        CHECK(t.r.notes[0].find("'conv'") != std::string::npos);
        const auto ops = ops_of(t.h);
        CHECK(std::count(ops.begin(), ops.end(), "Conv") == 1);
        CHECK(std::count(ops.begin(), ops.end(), "QuantizeLinear") == 1);
        // The same ops, in float: oneDNN's f32 conv sums in another order, and a sum on a
        // rounding tie moves by one step.
        CHECK(t.o.d.worst <= 1);
        CHECK(t.o.d.differ * 100 <= t.o.d.count);
    }
}

TEST_CASE("QDQ chains: int8 passes from one QLinearConv to the next") {
    std::mt19937 rng(7);
    conv_group a;
    a.activation = "Relu";
    a.attrs = {{"pads", attribute::ints{1, 1, 1, 1}}};
    conv_group b = a;
    b.x_scale = a.y_scale;  // reads a's output
    b.x_zero = a.y_zero;
    b.activation = "";
    b.y_zero = 100;
    graph g, h;
    for (graph* t : {&g, &h}) {
        std::mt19937 w_rng(8);
        const node_id in = t->add_input("x", tensor_type::of(dtype::u8, a.x_dims));
        const node_id qa = add_conv_group(*t, "a", in, a, w_rng);
        const node_id qb = add_conv_group(*t, "b", qa, b, w_rng);
        const node_id qc = add_conv_group(*t, "c", qb, b, w_rng);
        t->mark_output(qc);
    }
    const value x = random_input(rng, dtype::u8, a.x_dims);
    passes::qdq_report r;
    const outcome o = run_both(g, h, x, r);
    CHECK(r.convs == 3);
    CHECK(ops_of(h) == std::vector<std::string>{"QLinearConv", "QLinearConv", "QLinearConv"});
    CHECK(o.folded.onednn_typed_nodes == 3);
    // Three roundings in sequence: an element one step off after the first can move the next.
    CAPTURE(o.d.differ);
    CHECK(o.d.worst <= 2);
    CHECK(o.d.differ * 100 <= o.d.count);
}

TEST_CASE("QDQ: one DequantizeLinear read by two convs serves both rewrites and is erased after them") {
    std::mt19937 rng(9);
    conv_group c;
    graph g, h;
    for (graph* t : {&g, &h}) {
        std::mt19937 w_rng(10);
        const node_id in = t->add_input("x", tensor_type::of(dtype::u8, c.x_dims));
        const node_id x = dequantize(*t, "dqx", in, {c.x_scale}, dtype::u8, c.x_zero);
        node_id outs[2];
        for (int k = 0; k < 2; ++k) {
            const std::string name = "conv" + std::to_string(k);
            const node_id w = dequantize(*t, name + ".dqw", test::constant_of(*t, name + ".wq", test::random_value<std::int8_t>(w_rng, c.w_dims, -127, 127)),
                                         {0.003f}, dtype::i8, 0);
            outs[k] = quantize(*t, name + ".q", t->add_op("Conv", name, {x, w}), 0.04f, dtype::u8, 3);
        }
        t->mark_output(t->add_op("Concat", "cat", {outs[0], outs[1]}, {{"axis", std::int64_t{1}}}));
    }
    const value x = random_input(rng, dtype::u8, c.x_dims);
    passes::qdq_report r;
    const outcome o = run_both(g, h, x, r);
    CHECK(r.convs == 2);
    CHECK(ops_of(h) == std::vector<std::string>{"QLinearConv", "QLinearConv", "Concat"});
    CHECK(o.folded.onednn_typed_nodes == 2);
    check_within_one_step(o);
}

TEST_CASE("QDQ residual Add + Relu: one QLinearAdd on the same integers as the ops one by one, broadcast too") {
    std::mt19937 rng(13);
    for (const bool broadcast : {false, true}) {
        CAPTURE(broadcast);
        const std::vector<std::int64_t> dims{2, 16, 19, 23}, other = broadcast ? std::vector<std::int64_t>{16, 1, 1} : dims;
        graph g, h;
        for (graph* t : {&g, &h}) {
            std::mt19937 w_rng(14);
            const node_id in = t->add_input("x", tensor_type::of(dtype::u8, dims));
            const node_id b = test::constant_of(*t, "bq", test::random_value<std::uint8_t>(w_rng, other, 0, 255));
            const node_id da = dequantize(*t, "dqa", in, {0.05f}, dtype::u8, 30);
            const node_id db = dequantize(*t, "dqb", b, {0.02f}, dtype::u8, 140);
            const node_id add = t->add_op("Add", "add", {da, db});
            t->mark_output(quantize(*t, "q", t->add_op("Relu", "relu", {add}), 0.07f, dtype::u8, 0));
        }
        const value x = random_input(rng, dtype::u8, dims);
        passes::qdq_report r;
        const outcome o = run_both(g, h, x, r);
        CHECK(r.adds == 1);
        CHECK(r.activations == 1);
        CHECK(ops_of(h) == std::vector<std::string>{"QLinearAdd"});
        CAPTURE(o.d.differ);
        CHECK(o.d.worst == 0);  // the same f32 arithmetic, threaded and 16 at a time in the oneDNN mode
    }
    // An output type other than the operands' stays float, with the reason.
    graph g;
    const node_id in = g.add_input("x", tensor_type::of(dtype::u8, {4}));
    const node_id da = dequantize(g, "dqa", in, {0.05f}, dtype::u8, 30);
    const node_id db = dequantize(g, "dqb", in, {0.05f}, dtype::u8, 30);
    g.mark_output(quantize(g, "q", g.add_op("Add", "add", {da, db}), 0.1f, dtype::i8, 0));
    const passes::qdq_report r = passes::fold_qdq(g);
    CHECK(r.adds == 0);
    REQUIRE(r.notes.size() == 1);
    CHECK(r.notes[0].find("type differs") != std::string::npos);
}

TEST_CASE("QDQ: a GELU written out before a QuantizeLinear becomes one Gelu op on oneDNN, within one step") {
    std::mt19937 rng(15);
    const std::vector<std::int64_t> dims{2, 8, 33};
    auto k = [](graph& t, const std::string& name, float v) { return test::constant_of(t, name, value::of<float>({}, {v})); };
    for (const int form : {0, 1, 2}) {  // the erf form on the DQ's value; the tanh form; the erf form after a bias Add
        CAPTURE(form);
        const bool tanh = form == 1, bias = form == 2;
        graph g, h;
        for (graph* t : {&g, &h}) {
            const node_id in = t->add_input("x", tensor_type::of(dtype::u8, dims));
            node_id x = dequantize(*t, "dq", in, {0.04f}, dtype::u8, 128);
            if (bias) x = t->add_op("Add", "bias", {x, k(*t, "b", 0.3f)});
            node_id y;
            if (!tanh) {  // PyTorch's export of nn.GELU(): Div, Erf, Add, Mul(x, .), Mul(., 0.5)
                const node_id e = t->add_op("Erf", "erf", {t->add_op("Div", "div", {x, k(*t, "sqrt2", 1.4142135f)})});
                const node_id one_plus = t->add_op("Add", "add", {e, k(*t, "one", 1.0f)});
                y = t->add_op("Mul", "half", {t->add_op("Mul", "mul", {x, one_plus}), k(*t, "half_c", 0.5f)});
            } else {  // the tanh form, halved first: Mul(., 0.5) -> Mul(x, .)
                const node_id cube = t->add_op("Pow", "pow", {x, k(*t, "three", 3.0f)});
                const node_id inner = t->add_op("Add", "inner", {x, t->add_op("Mul", "c1", {cube, k(*t, "c1k", 0.044715f)})});
                const node_id th = t->add_op("Tanh", "tanh", {t->add_op("Mul", "c2", {inner, k(*t, "c2k", 0.7978846f)})});
                const node_id one_plus = t->add_op("Add", "add", {th, k(*t, "one", 1.0f)});
                y = t->add_op("Mul", "mul", {x, t->add_op("Mul", "half", {one_plus, k(*t, "half_c", 0.5f)})});
            }
            t->mark_output(quantize(*t, "q", y, 0.02f, dtype::u8, 10));
        }
        passes::qdq_report r;
        const outcome o = run_both(g, h, random_input(rng, dtype::u8, dims), r);
        CHECK(r.gelus == 1);
        CHECK(ops_of(h) == (bias ? std::vector<std::string>{"DequantizeLinear", "Add", "Gelu", "QuantizeLinear"}
                                 : std::vector<std::string>{"DequantizeLinear", "Gelu", "QuantizeLinear"}));
        for (node_id n : h.nodes())
            if (h.kind(n) == node_kind::op && h.op_name(n) == "Gelu") CHECK(h.attr(n, "approximate")->as_string() == (tanh ? "tanh" : "none"));
        CHECK(o.folded.onednn_nodes == (bias ? 2u : 1u));  // oneDNN's gelu eltwise, where Erf ran on its reference kernel
        CHECK(o.folded.reference_nodes == 0);
        check_within_one_step(o);
    }
    // An inner value read outside the GELU keeps it written out (the pattern's chain does not
    // match a value read twice).
    graph g;
    const node_id in = g.add_input("x", tensor_type::of(dtype::u8, dims));
    const node_id x = dequantize(g, "dq", in, {0.04f}, dtype::u8, 128);
    const node_id e = g.add_op("Erf", "erf", {g.add_op("Div", "div", {x, k(g, "sqrt2", 1.4142135f)})});
    const node_id one_plus = g.add_op("Add", "add", {e, k(g, "one", 1.0f)});
    g.mark_output(quantize(g, "q", g.add_op("Mul", "half", {g.add_op("Mul", "mul", {x, one_plus}), k(g, "half_c", 0.5f)}), 0.02f, dtype::u8, 10));
    g.mark_output(g.add_op("Relu", "other", {e}));
    const passes::qdq_report r = passes::fold_qdq(g);
    CHECK(r.gelus == 0);
    const auto ops = ops_of(g);
    CHECK(std::count(ops.begin(), ops.end(), "Erf") == 1);
}

TEST_CASE("QDQ matmul with per-column weight scales: one QLinearMatMul on oneDNN int8, within one step") {
    std::mt19937 rng(11);
    const std::vector<std::int64_t> a_dims{2, 5, 32}, b_dims{32, 24};
    graph g, h;
    for (graph* t : {&g, &h}) {
        std::mt19937 w_rng(12);
        const node_id in = t->add_input("x", tensor_type::of(dtype::u8, a_dims));
        const node_id a = dequantize(*t, "dqa", in, {0.03f}, dtype::u8, 120);
        std::vector<float> bs(24);
        for (std::size_t j = 0; j < bs.size(); ++j) bs[j] = 0.001f * static_cast<float>(1 + j % 5);
        const node_id b = dequantize(*t, "dqb", test::constant_of(*t, "bq", test::random_value<std::int8_t>(w_rng, b_dims, -127, 127)), bs,
                                     dtype::i8, 0, true, 1);
        t->mark_output(quantize(*t, "q", t->add_op("MatMul", "mm", {a, b}), 0.02f, dtype::u8, 128));
    }
    const value x = random_input(rng, dtype::u8, a_dims);
    passes::qdq_report r;
    const outcome o = run_both(g, h, x, r);
    CHECK(r.matmuls == 1);
    CHECK(ops_of(h) == std::vector<std::string>{"QLinearMatMul"});
    CHECK(o.folded.onednn_typed_nodes == 1);
    check_within_one_step(o);
}

TEST_CASE("QDQ conv groups drawn at random: every rewrite runs on oneDNN int8 and agrees within one step") {
    std::mt19937 rng(2026);
    auto pick = [&](int lo, int hi) { return std::uniform_int_distribution<int>(lo, hi)(rng); };
    std::size_t total = 0, differ = 0;
    for (int i = 0; i < 40; ++i) {
        conv_group c;
        const std::int64_t groups = pick(0, 3) == 0 ? 2 : 1;
        const std::int64_t C = groups * pick(1, 6), M = groups * pick(1, 6), k = pick(1, 3);
        c.x_dims = {pick(1, 2), C, pick(k, 12), pick(k, 12)};
        c.w_dims = {M, C / groups, k, k};
        c.x_type = pick(0, 1) ? dtype::u8 : dtype::i8;
        c.x_zero = c.x_type == dtype::u8 ? pick(0, 255) : pick(-128, 127);
        c.x_scale = 0.005f * static_cast<float>(pick(1, 10));
        c.per_channel = pick(0, 1) == 1;
        c.bias = pick(0, 2) != 0;
        c.bias_dq = pick(0, 1) == 1;
        const int act = pick(0, 2);
        c.y_type = pick(0, 1) ? dtype::u8 : dtype::i8;
        const std::int64_t least = c.y_type == dtype::u8 ? 0 : -128;
        c.activation = act == 0 ? "" : act == 1 ? "Relu" : "Clip";
        if (act == 2) c.y_scale = 6.0f / 255.0f;
        else c.y_scale = 0.01f * static_cast<float>(pick(1, 8));
        c.y_zero = act == 0 ? (c.y_type == dtype::u8 ? pick(0, 255) : pick(-128, 127)) : least;
        const std::int64_t pad = pick(0, 1);
        c.attrs = {{"pads", attribute::ints{pad, pad, pad, pad}},
                   {"strides", attribute::ints{pick(1, 2), pick(1, 2)}},
                   {"group", groups}};
        CAPTURE(i);
        one_group t(c, static_cast<unsigned>(100 + i));
        CHECK(t.r.convs == 1);
        CHECK(t.r.notes.empty());
        CHECK(t.o.folded.onednn_typed_nodes == 1);
        CHECK(t.o.d.worst <= 1);
        total += t.o.d.count;
        differ += t.o.d.differ;
    }
    CAPTURE(total);
    CAPTURE(differ);
    CHECK(differ * 1000 <= total);
}

}  // namespace qdq_tests
