// Scaled dot-product attention written out as exporters emit it (onednn/attention.hpp):
// recognised by the ready-made backend as one fused node (two oneDNN matmuls, the scale folded
// in, transposes read through strides), against the reference kernels running the written-out
// ops; the forms it cannot take declined with the reason, inputs it rejects at run time run
// unfused.
#include <doctest/doctest.h>

#include <cmath>
#include <cstring>
#include <cstdint>
#include <map>
#include <random>
#include <string>
#include <vector>

#include "sgmatch/exec/executor.hpp"
#include "sgmatch/onednn/backend.hpp"
#include "sgmatch/ops/shape_rule_table.hpp"
#include "support/numeric.hpp"
#include "support/reports.hpp"

using namespace sgmatch;
using reference::array;

namespace {

using dims_list = std::vector<std::int64_t>;

struct attention_form {
    const char* what;
    dims_list q, k, v;              // the sources' shapes
    dims_list q_perm, k_perm, v_perm, out_perm;  // empty: no Transpose
    bool scale_q = false;      // Div(Q', sqrt D) before the product (else Div on the scores)
    bool mul = false;          // the scale as Mul by 1/sqrt(D)
    dims_list mask;                 // empty: no mask; the mask's shape
    bool mask_constant = false;
    std::int64_t softmax_axis = -1;
    bool declared = true;      // the inputs' shapes declared
};

input_ref maybe_transpose(graph& g, const std::string& name, input_ref x, const dims_list& perm) {
    return perm.empty() ? x : g.add_op("Transpose", name, {x}, {{"perm", attribute::ints(perm)}});
}

// Every op's output shape by its description's shape rule, as the ONNX loader declares them.
void declare_shapes(graph& g) {
    for (node_id n : g.nodes()) {
        if (g.kind(n) != node_kind::op) continue;
        ops::shape_inputs in;
        for (std::size_t i = 0; i < g.input_count(n); ++i) {
            const auto v = g.input(n, i);
            in.shapes.push_back(g.value_type(v.node, v.port)->dims);
            in.values.push_back(std::nullopt);
            in.reals.push_back(std::nullopt);
        }
        const ops::op_attrs a(*ops::find_schema(g.op_name(n)), ops::node_of<graph>(g, n));
        g.set_type({n, 0}, tensor_type{dtype::f32, ops::infer_shapes(a, in).at(0)});
    }
}

// Q, K, V (and the mask) as graph inputs, each through Add(., 0.25) so that it is computed;
// the written-out attention; Relu on its result.
graph attention_graph(const attention_form& f, std::int64_t D, std::mt19937& rng) {
    graph g;
    auto in = [&](const char* name, const dims_list& d) {
        auto x = g.add_input(name, tensor_type{dtype::f32, f.declared ? d : dims_list{}});
        return g.add_op("Add", std::string(name) + ".shift", {x, g.add_scalar(std::string(name) + ".c", 0.25f)});
    };
    input_ref q = maybe_transpose(g, "q.heads", in("q", f.q), f.q_perm);
    const input_ref k = maybe_transpose(g, "k.heads", in("k", f.k), f.k_perm);
    const input_ref v = maybe_transpose(g, "v.heads", in("v", f.v), f.v_perm);
    const float sd = std::sqrt(static_cast<float>(D));
    auto scaled = [&](const std::string& name, input_ref x) {
        return f.mul ? g.add_op("Mul", name, {g.add_scalar(name + ".c", 1.0f / sd), x})
                     : g.add_op("Div", name, {x, g.add_scalar(name + ".c", sd)});
    };
    if (f.scale_q) q = scaled("q.scale", q);
    input_ref s = g.add_op("MatMul", "qk", {q, k});
    if (!f.scale_q) s = scaled("scores.scale", s);
    if (!f.mask.empty()) {
        std::int64_t n = 1;
        for (auto d : f.mask) n *= d;
        const input_ref m = f.mask_constant
                                ? input_ref(g.add_constant("mask", f.mask, test::random_values(static_cast<std::size_t>(n), rng, 3.0f)))
                                : input_ref(g.add_input("mask", tensor_type{dtype::f32, f.declared ? f.mask : dims_list{}}));
        s = g.add_op("Add", "masked", {m, s});
    }
    auto p = g.add_op("Softmax", "probs", {s}, {{"axis", f.softmax_axis}});
    auto o = maybe_transpose(g, "out.heads", g.add_op("MatMul", "pv", {p, v}), f.out_perm);
    g.mark_output(g.add_op("Relu", "relu", {o}));
    if (f.declared) declare_shapes(g);
    return g;
}

std::map<std::string, array> attention_inputs(const attention_form& f, std::mt19937& rng) {
    std::map<std::string, array> in{{"q", test::random_array(f.q, rng, 1.0f)},
                                    {"k", test::random_array(f.k, rng, 1.0f)},
                                    {"v", test::random_array(f.v, rng, 1.0f)}};
    if (!f.mask.empty() && !f.mask_constant) in.emplace("mask", test::random_array(f.mask, rng, 3.0f));
    return in;
}

std::size_t op_count(const graph& g, const std::string& op) {
    std::size_t n = 0;
    for (node_id x : g.nodes()) n += g.kind(x) == node_kind::op && g.op_name(x) == op ? 1 : 0;
    return n;
}

// g, partitioned, runs its attention as the one fused node, with no fallback, and computes `want`.
void runs_as_one_fused_node(const graph& g, const std::map<std::string, array>& in, const array& want) {
    exec::run_stats st;
    const array got = exec::executor(g, exec::mode::onednn)(in, &st).at(0);
    CHECK(st.fused_nodes == 1);
    CHECK(st.fallbacks == 0);
    REQUIRE(got.shape() == want.shape());
    CHECK(test::max_rel_error(got, want) <= 1e-4);
}

}  // namespace

TEST_CASE("written-out attention is one fused node of two oneDNN matmuls, equal to the ops it replaces") {
    onednn::register_backend<graph>();
    std::mt19937 rng(31);
    const std::int64_t L = 7, B = 2, H = 3, D = 8;
    const attention_form taken[] = {
        // PyTorch's nn.MultiheadAttention: [L, B*H, D] sources, Q scaled, K by perm [1, 2, 0].
        {"multi-head attention", {L, B * H, D}, {L, B * H, D}, {L, B * H, D}, {1, 0, 2}, {1, 2, 0}, {1, 0, 2}, {1, 0, 2}, true, false, {}, false, -1, true},
        // BERT: [B, L, H, D] sources, the scale and a [B, 1, 1, L] mask on the scores.
        {"BERT", {B, L, H, D}, {B, L, H, D}, {B, L, H, D}, {0, 2, 1, 3}, {0, 2, 3, 1}, {0, 2, 1, 3}, {0, 2, 1, 3}, false, false,
         {B, 1, 1, L}, false, -1, true},
        // No transposes: K^T given, a constant [L, 5] mask, 5 keys for 7 queries, Mul by 1/sqrt(D).
        {"K^T given, cross attention", {B * H, L, D}, {B * H, D, 5}, {B * H, 5, D}, {}, {}, {}, {}, false, true, {L, 5}, true, -1, true},
        // The scale on Q by Mul, the softmax axis as a positive index, a mask of the scores' shape.
        {"Mul on Q, full mask", {B, H, L, D}, {B, H, L, D}, {B, H, L, D}, {}, {0, 1, 3, 2}, {}, {}, true, true, {B, H, L, L}, false, 3, true},
        // Multi-query attention: one K and V for every head ([B, 1, L, D] against Q's [B, H, L, D]).
        {"K and V shared by the heads", {B, H, L, D}, {B, 1, L, D}, {B, 1, L, D}, {}, {0, 1, 3, 2}, {}, {}, false, false, {}, false, -1, true},
        // One set of keys and values for the whole batch, K^T given.
        {"K and V shared by the batch", {B * H, L, D}, {1, D, L}, {1, L, D}, {}, {}, {}, {}, true, false, {L, L}, true, -1, true},
        // Shapes not declared: the kernel learns them at run time.
        {"undeclared shapes", {L, B * H, D}, {L, B * H, D}, {L, B * H, D}, {1, 0, 2}, {1, 2, 0}, {1, 0, 2}, {1, 0, 2}, true, false, {},
         false, -1, false},
    };
    for (const auto& f : taken) {
        CAPTURE(std::string(f.what));
        graph g = attention_graph(f, D, rng);
        const auto in = attention_inputs(f, rng);
        const array want = exec::executor(g)(in).at(0);
        CHECK(test::report(apply_backend(g, "onednn"), "onednn.attention").accepted == 1);
        CHECK(op_count(g, "MatMul") == 0);
        CHECK(op_count(g, "Softmax") == 0);
        CHECK(op_count(g, "Transpose") == 0);
        runs_as_one_fused_node(g, in, want);
    }
}

TEST_CASE("attention split into heads by Reshape, as PyTorch exports nn.MultiheadAttention, reads its sources in place") {
    onednn::register_backend<graph>();
    std::mt19937 rng(37);
    const std::int64_t L = 6, B = 2, H = 4, D = 8, E = H * D;
    // q, k, v: [L, B, E] -> Reshape [L, B*H, D] (given as [0, B*H, -1], or [L, B*H, D]) ->
    // Transpose; Q scaled; the output transposed back.
    for (const bool onnx_wildcards : {false, true}) {
        CAPTURE(onnx_wildcards);
        graph g;
        const std::vector<std::int64_t> target = onnx_wildcards ? std::vector<std::int64_t>{0, B * H, -1} : std::vector<std::int64_t>{L, B * H, D};
        auto heads = [&](const char* name, const std::vector<std::int64_t>& perm) {
            auto x = g.add_input(name, tensor_type{dtype::f32, {L, B, E}});
            auto shifted = g.add_op("Add", std::string(name) + ".shift", {x, g.add_scalar(std::string(name) + ".c", 0.25f)});
            std::vector<unsigned char> bytes(target.size() * sizeof(std::int64_t));
            std::memcpy(bytes.data(), target.data(), bytes.size());
            auto shape = g.add_constant(std::string(name) + ".shape", {3}, dtype::i64, std::move(bytes));
            auto r = g.add_op("Reshape", std::string(name) + ".split", {shifted, shape});
            return g.add_op("Transpose", std::string(name) + ".heads", {r}, {{"perm", attribute::ints(perm)}});
        };
        auto q = g.add_op("Div", "q.scale", {heads("q", {1, 0, 2}), g.add_scalar("sd", std::sqrt(static_cast<float>(D)))});
        auto s = g.add_op("MatMul", "qk", {q, heads("k", {1, 2, 0})});
        auto p = g.add_op("Softmax", "probs", {s}, {{"axis", -1}});
        auto o = g.add_op("Transpose", "out.heads", {g.add_op("MatMul", "pv", {p, heads("v", {1, 0, 2})})}, {{"perm", attribute::ints{1, 0, 2}}});
        g.mark_output(g.add_op("Relu", "relu", {o}));
        std::map<std::string, array> in;
        for (const char* n : {"q", "k", "v"}) in.emplace(n, test::random_array({L, B, E}, rng, 1.0f));
        const array want = exec::executor(g)(in).at(0);
        CHECK(test::report(apply_backend(g, "onednn"), "onednn.attention").accepted == 1);
        CHECK(op_count(g, "Reshape") == 0);  // inside the fused node: no copy into heads
        CHECK(op_count(g, "Transpose") == 0);
        runs_as_one_fused_node(g, in, want);
    }
}

TEST_CASE("attention the fused kernel does not compute is declined with the reason") {
    onednn::register_backend<graph>();
    std::mt19937 rng(32);
    const std::int64_t L = 5, D = 4;
    struct declined {
        attention_form f;
        const char* reason;
    };
    const declined cases[] = {
        {{"softmax over the queries", {2, L, D}, {2, L, D}, {2, L, D}, {}, {0, 2, 1}, {}, {}, true, false, {}, false, 1, true},
         "the softmax is not over the last axis"},
        {{"V's width is not Q's", {2, L, D}, {2, L, D}, {2, L, D + 2}, {}, {0, 2, 1}, {}, {}, true, false, {}, false, -1, true}, "do not line up"},
        {{"queries shared, keys not", {1, L, D}, {2, L, D}, {2, L, D}, {}, {0, 2, 1}, {}, {}, true, false, {}, false, -1, true},
         "the batch dims of K and V are neither Q's nor 1"},
    };
    for (const auto& c : cases) {
        CAPTURE(std::string(c.f.what));
        graph g = attention_graph(c.f, D, rng);
        const auto in = attention_inputs(c.f, rng);
        const array want = exec::executor(g)(in).at(0);
        const auto reports = apply_backend(g, "onednn");
        const auto& r = test::report(reports, "onednn.attention");
        CHECK(r.accepted == 0);
        CHECK(test::said(r, c.reason));
        CHECK(op_count(g, "Softmax") == 1);
        CHECK(test::max_rel_error(exec::executor(g, exec::mode::onednn)(in).at(0), want) <= 1e-4);
    }
}

TEST_CASE("attention whose shapes are known only at run time runs unfused where the kernel rejects them") {
    onednn::register_backend<graph>();
    std::mt19937 rng(33);
    const std::int64_t L = 5, D = 4;
    // Not declared, V twice as wide as Q: the fused node is built, its kernel rejects the run.
    attention_form f{"wide V", {2, L, D}, {2, L, D}, {2, L, 2 * D}, {}, {0, 2, 1}, {}, {}, true, false, {}, false, -1, false};
    graph g = attention_graph(f, D, rng);
    const auto in = attention_inputs(f, rng);
    const array want = exec::executor(g)(in).at(0);
    CHECK(test::report(apply_backend(g, "onednn"), "onednn.attention").accepted == 1);
    exec::run_stats st;
    const array got = exec::executor(g, exec::mode::onednn)(in, &st).at(0);
    CHECK(st.fallbacks == 1);
    REQUIRE(got.shape() == want.shape());
    CHECK(test::max_rel_error(got, want) <= 1e-5);
}
