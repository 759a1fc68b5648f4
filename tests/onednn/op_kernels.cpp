// Single-op oneDNN kernels for the ops a capability region holds besides convs and element-wise
// ops (softmax, concat, LRN, layer norm, matmul of two computed operands, transpose, reshape),
// each against the xtensor reference through the executor, on plain inputs and on inputs in the
// layouts a conv leaves them in; then a transformer-shaped region that runs without a reference
// kernel.
#include <doctest/doctest.h>

#include <cstdint>
#include <cstring>
#include <map>
#include <random>
#include <string>
#include <vector>

#include "sgmatch/exec/executor.hpp"
#include "sgmatch/exec/subgraph.hpp"
#include "sgmatch/graph/replacement.hpp"
#include "sgmatch/onednn/op_kernels.hpp"
#include "sgmatch/partition/partition.hpp"
#include "support/numeric.hpp"

using namespace sgmatch;
using reference::array;

namespace {

// A conv (1x1, C -> C) in front: its output reaches the op under test in the layout oneDNN
// chose for the conv (blocked or NHWC), not plain.
input_ref conv_in_front(graph& g, input_ref x, std::int64_t C, std::mt19937& rng) {
    return g.add_op("Conv", "front", {x, g.add_constant("front.w", {C, C, 1, 1}, test::random_values(C * C, rng, 0.5f))});
}

// A user's graph type as sgmatch sees it through an adapter that cannot list a node's
// attributes (no for_each_attr) and keeps some constants as int64: the built-in graph behind a
// traits specialization of its own.
struct opaque_graph {
    graph g;
    std::map<std::uint32_t, std::vector<std::int64_t>> i64;  // constants held as int64 instead
    std::vector<std::int64_t> i64_dims;
};

}  // namespace

template <>
struct sgmatch::graph_traits<opaque_graph> {
    using G = opaque_graph;
    using B = graph_traits<graph>;
    using node_type = node_id;
    static const std::vector<node_id>& nodes(const G& g) { return B::nodes(g.g); }
    static std::size_t node_count(const G& g) { return B::node_count(g.g); }
    static std::size_t index_bound(const G& g) { return B::index_bound(g.g); }
    static std::size_t index(const G& g, node_id n) { return B::index(g.g, n); }
    static std::string_view name(const G& g, node_id n) { return B::name(g.g, n); }
    static node_kind kind(const G& g, node_id n) { return B::kind(g.g, n); }
    static std::uint32_t op(const G& g, node_id n) { return B::op(g.g, n); }
    static std::size_t op_count(const G& g) { return B::op_count(g.g); }
    static std::string_view op_name(const G& g, node_id n) { return B::op_name(g.g, n); }
    static std::optional<std::uint32_t> find_op(const G& g, std::string_view s) { return B::find_op(g.g, s); }
    static std::size_t input_count(const G& g, node_id n) { return B::input_count(g.g, n); }
    static value_ref<node_id> input(const G& g, node_id n, std::size_t i) { return B::input(g.g, n, i); }
    static std::size_t output_count(const G& g, node_id n) { return B::output_count(g.g, n); }
    static std::size_t user_count(const G& g, node_id n) { return B::user_count(g.g, n); }
    static use<node_id> user(const G& g, node_id n, std::size_t i) { return B::user(g.g, n, i); }
    static std::size_t graph_output_count(const G& g) { return B::graph_output_count(g.g); }
    static value_ref<node_id> graph_output(const G& g, std::size_t i) { return B::graph_output(g.g, i); }
    static bool needs_gradients(const G& g) { return B::needs_gradients(g.g); }
    static std::optional<attribute> attr(const G& g, node_id n, std::string_view k) { return B::attr(g.g, n, k); }
    static std::optional<tensor_type> value_type(const G& g, node_id n, std::uint32_t p) { return B::value_type(g.g, n, p); }
    static std::optional<const_tensor_view> constant(const G& g, node_id n) {
        auto it = g.i64.find(n.value);
        if (it == g.i64.end()) return B::constant(g.g, n);
        return const_tensor_view{dtype::i64, g.i64_dims.data(), g.i64_dims.size(), it->second.data()};
    }
    static node_id replace(G& g, const replacement<node_id>& r) { return B::replace(g.g, r); }
};

namespace {

struct outcome {
    double error;
    exec::run_stats stats;
};

// The graph run on oneDNN kernels against the reference executor.
outcome run_both(const graph& g, const std::map<std::string, array>& in) {
    const array expect = exec::executor(g)(in).at(0);
    outcome o{};
    o.error = test::max_rel_error(exec::executor(g, exec::mode::onednn)(in, &o.stats).at(0), expect);
    return o;
}

}  // namespace

TEST_CASE("softmax, LRN, layer norm, transpose, reshape on oneDNN == reference, plain and after a conv") {
    std::mt19937 rng(7);
    const std::vector<std::int64_t> shape{2, 16, 5, 3};
    for (bool front : {false, true}) {
        auto one_op = [&](const char* op, std::vector<input_ref> extra, graph::attr_list attrs) {
            graph g;
            input_ref x = g.add_input("x", tensor_type{dtype::f32, shape});
            if (front) x = conv_in_front(g, x, shape[1], rng);
            std::vector<input_ref> ins{x};
            ins.insert(ins.end(), extra.begin(), extra.end());
            g.mark_output(g.add_op(op, "op", ins, attrs));
            return g;
        };
        const std::map<std::string, array> in{{"x", test::random_array(shape, rng, 2.0f)}};
        const std::size_t ops = front ? 2 : 1;
        for (std::int64_t axis : {-1, 0, 1, 2}) {
            CAPTURE(front);
            CAPTURE(axis);
            const auto o = run_both(one_op("Softmax", {}, {{"axis", axis}}), in);
            CHECK(o.error <= 1e-4);
            CHECK(o.stats.onednn_nodes == ops);
            CHECK(o.stats.reference_nodes == 0);
        }
        for (std::int64_t size : {1, 3, 5}) {
            CAPTURE(front);
            CAPTURE(size);
            const auto o = run_both(one_op("LRN", {}, {{"size", size}, {"alpha", 0.3f}, {"beta", 0.6f}, {"bias", 1.5f}}), in);
            CHECK(o.error <= 1e-4);
            CHECK(o.stats.onednn_nodes == ops);
            CHECK(o.stats.reference_nodes == 0);
        }
        {  // an even size: ONNX's window leans one channel up, oneDNN's is centred: the reference runs
            CAPTURE(front);
            const auto o = run_both(one_op("LRN", {}, {{"size", 4}}), in);
            CHECK(o.error <= 1e-4);
            CHECK(o.stats.reference_nodes == 1);
        }
        for (std::int64_t axis : {-1, 1, 2}) {
            for (bool bias : {false, true}) {
                CAPTURE(front);
                CAPTURE(axis);
                CAPTURE(bias);
                std::int64_t inner = 1;
                for (std::size_t i = static_cast<std::size_t>(axis < 0 ? axis + 4 : axis); i < 4; ++i) inner *= shape[i];
                const std::vector<std::int64_t> pdims(shape.end() - (axis < 0 ? 1 : 4 - axis), shape.end());
                auto g = [&] {
                    graph h;
                    input_ref x = h.add_input("x", tensor_type{dtype::f32, shape});
                    if (front) x = conv_in_front(h, x, shape[1], rng);
                    std::vector<input_ref> ins{x, h.add_constant("scale", pdims, test::random_values(inner, rng, 1.0f))};
                    if (bias) ins.push_back(h.add_constant("bias", pdims, test::random_values(inner, rng, 1.0f)));
                    h.mark_output(h.add_op("LayerNormalization", "ln", ins, {{"axis", axis}, {"epsilon", 1e-3f}}));
                    return h;
                }();
                const auto o = run_both(g, in);
                CHECK(o.error <= 1e-4);
                CHECK(o.stats.onednn_nodes == ops);
                CHECK(o.stats.reference_nodes == 0);
            }
        }
        for (const auto& perm : {attribute::ints{0, 2, 3, 1}, attribute::ints{3, 1, 0, 2}, attribute::ints{}}) {
            CAPTURE(front);
            CAPTURE(perm.size());
            const auto o = run_both(perm.empty() ? one_op("Transpose", {}, {}) : one_op("Transpose", {}, {{"perm", perm}}), in);
            CHECK(o.error <= (front ? 1e-5 : 0.0));  // exact; after a conv, the conv's rounding
            CHECK(o.stats.onednn_nodes == ops);
            CHECK(o.stats.reference_nodes == 0);
        }
        {
            CAPTURE(front);
            graph g;
            input_ref x = g.add_input("x", tensor_type{dtype::f32, shape});
            if (front) x = conv_in_front(g, x, shape[1], rng);
            auto r = g.add_op("Reshape", "r", {x, g.add_constant("shape", {3}, {0, -1, 3})});
            g.mark_output(g.add_op("Reshape", "r2", {r}, {{"shape", attribute::ints{-1, 15}}}));
            const auto o = run_both(g, in);
            CHECK(o.error <= (front ? 1e-5 : 0.0));
            CHECK(o.stats.onednn_nodes == ops + 1);
            CHECK(o.stats.reference_nodes == 0);
        }
    }
}

TEST_CASE("concat and matmul of computed operands on oneDNN == reference") {
    std::mt19937 rng(8);
    for (std::int64_t axis : {1, 0, -1}) {
        CAPTURE(axis);
        // Parts in three layouts: a conv's output, a plain input, a constant.
        graph g;
        auto x = g.add_input("x", tensor_type{dtype::f32, {2, 8, 4, 4}});
        auto y = g.add_input("y", tensor_type{dtype::f32, {2, 8, 4, 4}});
        auto c = conv_in_front(g, x, 8, rng);
        auto k = g.add_constant("k", {2, 8, 4, 4}, test::random_values(256, rng, 1.0f));
        g.mark_output(g.add_op("Concat", "cat", {c, y, k, c}, {{"axis", axis}}));
        const std::map<std::string, array> in{{"x", test::random_array({2, 8, 4, 4}, rng, 1.0f)},
                                              {"y", test::random_array({2, 8, 4, 4}, rng, 1.0f)}};
        const auto o = run_both(g, in);
        CHECK(o.error <= 1e-5);
        CHECK(o.stats.onednn_nodes == 2);
        CHECK(o.stats.reference_nodes == 0);
    }
    for (float e : {3.0f, 2.0f, 0.5f}) {  // Pow by a scalar constant: eltwise pow
        CAPTURE(e);
        graph g;
        auto x = g.add_input("x", tensor_type{dtype::f32, {2, 8, 4, 4}});
        auto a = g.add_op("Abs", "abs", {x});  // 0.5: defined for non-negative bases only
        g.mark_output(g.add_op("Pow", "pow", {a, g.add_scalar("e", e)}));
        const auto o = run_both(g, {{"x", test::random_array({2, 8, 4, 4}, rng, 2.0f)}});
        CHECK(o.error <= 1e-5);
        CHECK(o.stats.onednn_nodes == 2);
        CHECK(o.stats.reference_nodes == 0);
    }
    struct mm_case {
        std::vector<std::int64_t> a, b;
        bool constant_b;
    };
    for (const auto& mc : {mm_case{{5, 7}, {7, 3}, false}, mm_case{{2, 3, 4, 5}, {2, 3, 5, 6}, false},
                           mm_case{{3, 4, 5}, {5, 6}, false}, mm_case{{1, 4, 5}, {3, 5, 2}, false},
                           mm_case{{2, 1, 4, 5}, {3, 5, 2}, true}, mm_case{{4, 9, 16}, {16, 8}, true}}) {
        CAPTURE(mc.a.size());
        CAPTURE(mc.b.size());
        graph g;
        auto a = g.add_input("a", tensor_type{dtype::f32, mc.a});
        std::int64_t nb = 1;
        for (auto d : mc.b) nb *= d;
        auto b = mc.constant_b ? g.add_constant("b", mc.b, test::random_values(static_cast<std::size_t>(nb), rng, 1.0f))
                               : g.add_input("b", tensor_type{dtype::f32, mc.b});
        g.mark_output(g.add_op("MatMul", "mm", {a, b}));
        std::map<std::string, array> in{{"a", test::random_array(mc.a, rng, 1.0f)}};
        if (!mc.constant_b) in.emplace("b", test::random_array(mc.b, rng, 1.0f));
        const auto o = run_both(g, in);
        CHECK(o.error <= 1e-4);
        CHECK(o.stats.onednn_nodes == 1);
        CHECK(o.stats.reference_nodes == 0);
    }
}

TEST_CASE("Slice on oneDNN == reference: after a conv, parts that cut a layout's blocks, negative and clamped bounds") {
    std::mt19937 rng(12);
    struct slice_case {
        std::vector<std::int64_t> starts, ends, axes, steps;
        bool on_onednn;
    };
    const slice_case cases[] = {
        {{0}, {12}, {1}, {}, true},                 // ShuffleNet's chunk: the first half of the channels
        {{12}, {24}, {1}, {}, true},                // the second half
        {{5}, {17}, {1}, {}, true},                 // cuts across blocks of 8 and 16: read plain
        {{-3, 1}, {100, -1}, {2, 3}, {}, true},     // negative start, end past the dim (clamped), negative end
        {{1, 0}, {3, 4}, {-2, 0}, {1, 1}, true},    // negative axis, explicit unit steps
        {{0}, {24}, {1}, {2}, false},               // a step of 2: the reference kernel
        {{7}, {3}, {1}, {}, true},                  // empty
    };
    for (const auto& sc : cases) {
        CAPTURE(sc.starts.size());
        CAPTURE(sc.starts[0]);
        CAPTURE(sc.ends[0]);
        for (bool after_conv : {true, false}) {
            CAPTURE(after_conv);
            graph g;
            auto x = g.add_input("x", tensor_type{dtype::f32, {2, 24, 5, 6}});
            const input_ref src = after_conv ? input_ref(conv_in_front(g, x, 24, rng)) : input_ref(x);
            auto i64 = [&](const char* name, const std::vector<std::int64_t>& v) {
                std::vector<unsigned char> b(v.size() * sizeof(std::int64_t));
                std::memcpy(b.data(), v.data(), b.size());
                return g.add_constant(name, {static_cast<std::int64_t>(v.size())}, dtype::i64, std::move(b));
            };
            std::vector<input_ref> ins{src, i64("starts", sc.starts), i64("ends", sc.ends), i64("axes", sc.axes)};
            if (!sc.steps.empty()) ins.push_back(i64("steps", sc.steps));
            g.mark_output(g.add_op("Relu", "after", {g.add_op("Slice", "slice", ins)}));
            const auto o = run_both(g, {{"x", test::random_array({2, 24, 5, 6}, rng, 1.0f)}});
            CHECK(o.error <= 1e-5);
            CHECK(o.stats.reference_nodes == (sc.on_onednn ? 0u : 1u));
        }
    }
}

TEST_CASE("reductions on oneDNN == reference, plain and after a conv (spatial mean and max: global pooling), axes kept or dropped") {
    std::mt19937 rng(13);
    struct red_case {
        const char* op;
        std::vector<std::int64_t> axes;
        std::int64_t keepdims;
    };
    const red_case cases[] = {{"ReduceMean", {-1}, 1},    {"ReduceMean", {2, 3}, 0}, {"ReduceSum", {1}, 1},
                              {"ReduceMax", {0, 2}, 0},   {"ReduceMin", {3}, 1},     {"ReduceProd", {1}, 0},
                              {"ReduceL1", {2, 3}, 1},    {"ReduceL2", {1, 2, 3}, 0}, {"ReduceSumSquare", {-2}, 1},
                              {"ReduceMean", {}, 1},      {"ReduceMax", {2, 3}, 1},  {"ReduceMean", {2, 3}, 1}};
    for (const auto& rc : cases) {
        CAPTURE(rc.op);
        CAPTURE(rc.axes.size());
        for (bool after_conv : {true, false}) {
            CAPTURE(after_conv);
            graph g;
            auto x = g.add_input("x", tensor_type{dtype::f32, {2, 16, 3, 4}});
            const input_ref src = after_conv ? input_ref(conv_in_front(g, x, 16, rng)) : input_ref(x);
            const auto r = g.add_op(rc.op, "reduce", {src}, {{"keepdims", rc.keepdims}});
            if (!rc.axes.empty()) g.set_attr(r, "axes", attribute::ints(rc.axes));
            g.mark_output(r);
            // ReduceProd of 16 values near 1; the others on [-1, 1].
            const auto o = run_both(g, {{"x", test::random_array({2, 16, 3, 4}, rng, 1.0f)}});
            CHECK(o.error <= 1e-5);
            CHECK(o.stats.reference_nodes == 0);
        }
    }
}

TEST_CASE("the new op kernels reject bad input with a kernel_error naming the kernel") {
    std::mt19937 rng(9);
    const auto t = [&](std::vector<std::int64_t> d) {
        std::int64_t n = 1;
        for (auto v : d) n *= v;
        return onednn::tensor::from_values(test::random_values(static_cast<std::size_t>(n), rng, 1.0f), d);
    };
    CHECK_THROWS_WITH_AS(onednn::matmul_kernel().run({t({2, 3}), t({4, 5})}),
                         doctest::Contains("matmul_kernel: [2,3] x [4,5]: inner dimensions differ"), onednn::kernel_error);
    CHECK_THROWS_WITH_AS(onednn::matmul_kernel().run({t({2, 2, 3}), t({3, 3, 4})}),
                         doctest::Contains("do not broadcast"), onednn::kernel_error);
    CHECK_THROWS_WITH_AS(onednn::transpose_kernel({0, 0, 1}).run({t({2, 3, 4})}),
                         doctest::Contains("transpose_kernel: perm [0,0,1] is not a permutation"), onednn::kernel_error);
    CHECK_THROWS_WITH_AS(onednn::reshape_kernel({5, -1}).run({t({2, 3, 4})}),
                         doctest::Contains("reshape_kernel: cannot reshape [2,3,4] to [5,-1]"), onednn::kernel_error);
    CHECK_THROWS_WITH_AS(onednn::reshape_kernel({-1, -1}).run({t({2, 3})}), doctest::Contains("cannot reshape"),
                         onednn::kernel_error);
    CHECK_THROWS_WITH_AS(onednn::softmax_kernel(4).run({t({2, 3, 4})}),
                         doctest::Contains("softmax_kernel: axis 4 is out of range for rank 3"), onednn::kernel_error);
    CHECK_THROWS_WITH_AS(onednn::log_softmax_kernel(-4).run({t({2, 3, 4})}),
                         doctest::Contains("log_softmax_kernel: axis -4 is out of range for rank 3"), onednn::kernel_error);
    CHECK_THROWS_WITH_AS(onednn::lrn_kernel(4, 1e-4f, 0.75f, 1.0f), doctest::Contains("lrn_kernel: size 4 must be odd"),
                         onednn::kernel_error);
    CHECK_THROWS_WITH_AS(onednn::layer_norm_kernel({1, 1, 1}, {}, -1, 1e-5f).run({t({2, 4})}),
                         doctest::Contains("layer_norm_kernel: input [2,4] normalizes 4 values"), onednn::kernel_error);
    CHECK_THROWS_WITH_AS(onednn::concat_kernel(1).run({t({2, 3}), t({3, 3})}),
                         doctest::Contains("concat_kernel: parts [2,3] and [3,3] differ outside axis 1"),
                         onednn::kernel_error);
}

TEST_CASE("ONNX Constant ops run on the executor (scalar, list, shaped value), in every mode - bad ones are errors") {
    graph g;
    auto x = g.add_input("x");
    auto scale = g.add_op("Constant", "scale", {}, {{"value_float", 0.5}});
    auto bias = g.add_op("Constant", "bias", {}, {{"value_floats", attribute::reals{1.0, -2.0, 3.0}}});
    auto mask = g.add_op("Constant", "mask", {}, {{"value", attribute::reals{1, 0, 1, 0, 1, 0}}, {"shape", {2, 3}}});
    auto count = g.add_op("Constant", "count", {}, {{"value_ints", {4, 5, 6}}});
    auto y = g.add_op("Add", "y", {g.add_op("Mul", "m", {g.add_op("Mul", "s", {x, scale}), mask}), bias});
    g.mark_output(g.add_op("Add", "z", {y, count}));
    std::mt19937 rng(5);
    const array in = test::random_array({2, 3}, rng, 1.0f);
    array expect = in;
    const float b[3] = {1, -2, 3}, m[6] = {1, 0, 1, 0, 1, 0}, c[3] = {4, 5, 6};
    for (std::size_t i = 0; i < 6; ++i) expect.data()[i] = in.data()[i] * 0.5f * m[i] + b[i % 3] + c[i % 3];
    for (auto mode : {exec::mode::reference, exec::mode::onednn}) {
        const array out = exec::executor(g, mode)({{"x", in}}).at(0);
        REQUIRE(out.shape() == expect.shape());
        CHECK(test::max_rel_error(out, expect) <= 1e-6);
    }
    graph bad;
    bad.mark_output(bad.add_op("Constant", "k", {}, {{"value", attribute::reals{1, 2, 3}}, {"shape", {2, 2}}}));
    // Refused when the executor is built, naming the node.
    CHECK_THROWS_WITH_AS(exec::executor{bad}, doctest::Contains("node 'k' (Constant): 3 values for shape [2, 2]"),
                         exec::exec_error);
    graph none;
    none.mark_output(none.add_op("Constant", "k", {}));
    CHECK_THROWS_WITH_AS(exec::executor{none}, doctest::Contains("node 'k' (Constant): no value_float"), exec::exec_error);
    graph unknown;  // an attribute the description does not know is refused, not ignored
    unknown.mark_output(unknown.add_op("Constant", "k", {}, {{"dtype", 1}, {"value_float", 1.0}}));
    CHECK_THROWS_WITH_AS(exec::executor{unknown}, doctest::Contains("node 'k' (Constant): attribute dtype is not one of Constant's attributes"),
                         exec::exec_error);
}

TEST_CASE("a transformer block is one region with no reference kernel: attention, written-out GELU, layer norms") {
    CHECK(exec::register_region_backend());
    std::mt19937 rng(10);
    const std::int64_t T = 6, D = 8, F = 16;  // tokens, model width, feed-forward width
    graph g;
    auto x = g.add_input("x", tensor_type{dtype::f32, {T, D}});
    auto w = [&](const std::string& nm, std::int64_t r, std::int64_t c) {
        return g.add_constant(nm, {r, c}, test::random_values(static_cast<std::size_t>(r * c), rng, 0.4f));
    };
    auto vec = [&](const std::string& nm, std::int64_t n, float scale) {
        return g.add_constant(nm, {n}, test::random_values(static_cast<std::size_t>(n), rng, scale));
    };
    // Attention: softmax(Q K^T / sqrt(D)) V.
    auto q = g.add_op("MatMul", "q", {x, w("wq", D, D)});
    auto k = g.add_op("MatMul", "k", {x, w("wk", D, D)});
    auto v = g.add_op("MatMul", "v", {x, w("wv", D, D)});
    auto kt = g.add_op("Transpose", "kt", {k}, {{"perm", attribute::ints{1, 0}}});
    auto s = g.add_op("Mul", "scale", {g.add_op("MatMul", "qk", {q, kt}), g.add_scalar("inv_sqrt_d", 0.35355339f)});
    auto p = g.add_op("Softmax", "softmax", {s}, {{"axis", -1}});
    auto att = g.add_op("MatMul", "att", {p, v});
    auto h1 = g.add_op("LayerNormalization", "ln1", {g.add_op("Add", "res1", {att, x}), vec("g1", D, 1.0f), vec("b1", D, 0.5f)});
    // Feed-forward with PyTorch's written-out GELU: Div(x, sqrt 2) -> Erf -> Add 1 -> Mul x -> Mul 0.5.
    auto f1 = g.add_op("Add", "f1.bias", {g.add_op("MatMul", "f1", {h1, w("w1", D, F)}), vec("c1", F, 0.5f)});
    auto erf = g.add_op("Erf", "erf", {g.add_op("Div", "div", {f1, g.add_scalar("sqrt2", 1.4142135f)})});
    auto gelu = g.add_op("Mul", "half", {g.add_op("Mul", "mulx", {f1, g.add_op("Add", "add1", {erf, g.add_scalar("one", 1.0f)})}),
                                         g.add_scalar("half.c", 0.5f)});
    auto f2 = g.add_op("Add", "f2.bias", {g.add_op("MatMul", "f2", {gelu, w("w2", F, D)}), vec("c2", D, 0.5f)});
    g.mark_output(g.add_op("LayerNormalization", "ln2", {g.add_op("Add", "res2", {f2, h1}), vec("g2", D, 1.0f), vec("b2", D, 0.5f)}));
    const std::map<std::string, array> in{{"x", test::random_array({T, D}, rng, 1.0f)}};
    const array expect = exec::executor(g)(in).at(0);

    graph regions = g;
    const auto rep = apply_backend(regions, "onednn.regions");
    REQUIRE(rep.size() == 1);
    CHECK(rep[0].accepted == 1);
    std::size_t left = 0;
    for (auto n : regions.nodes()) left += regions.kind(n) == node_kind::op && regions.op_name(n) != "onednn.region" ? 1 : 0;
    CHECK(left == 0);
    exec::run_stats st;
    CHECK(test::max_rel_error(exec::executor(regions, exec::mode::onednn)(in, &st).at(0), expect) <= 1e-4);
    CHECK(st.region_nodes == 1);
    CHECK(st.reference_nodes == 0);
    // Inside: the constant-weight matmuls fused with what follows them (f1 + bias + GELU as one
    // matmul with a gelu_erf post-op, f2 + bias + residual), the attention (transpose, qk,
    // scale, softmax, att) as one node; the rest one primitive each.
    MESSAGE(st.fused_nodes, " ", st.onednn_nodes);
    CHECK(st.fused_nodes >= 5);
    CHECK(st.onednn_nodes >= 2);  // the layer norms
}

TEST_CASE("regions of a user's graph type: attributes by key when the adapter cannot list them, int64 constants") {
    static_assert(!detail::has_for_each_attr<graph_traits<opaque_graph>, opaque_graph>::value);
    static_assert(detail::has_for_each_attr<graph_traits<graph>, graph>::value);
    CHECK(exec::register_region_backend<opaque_graph>());
    std::mt19937 rng(11);
    opaque_graph w;
    graph& g = w.g;
    auto x = g.add_input("x", tensor_type{dtype::f32, {1, 4, 9, 9}});
    // Attributes that change the result: strides, pads, dilations, group; a Reshape whose shape
    // constant the adapter hands over as int64.
    auto c = g.add_op("Conv", "c", {x, g.add_constant("w", {8, 2, 3, 3}, test::random_values(144, rng, 0.4f))},
                      {{"strides", attribute::ints{2, 2}}, {"pads", attribute::ints{2, 2, 1, 1}},
                       {"dilations", attribute::ints{2, 2}}, {"group", 2}});
    auto r = g.add_op("LeakyRelu", "lr", {c}, {{"alpha", 0.2f}});
    auto shape = g.add_constant("shape", {2}, {1, -1});
    auto f = g.add_op("Reshape", "flat", {r, shape});
    g.mark_output(g.add_op("Softmax", "sm", {f}, {{"axis", 1}}));
    w.i64[shape.value] = {1, -1};
    w.i64_dims = {2};
    const std::map<std::string, array> in{{"x", test::random_array({1, 4, 9, 9}, rng, 1.0f)}};
    const array expect = exec::executor(g)(in).at(0);
    const auto rep = apply_backend(w, "onednn.regions");
    REQUIRE(rep.size() == 1);
    CHECK(rep[0].accepted == 1);
    exec::run_stats st;
    CHECK(test::max_rel_error(exec::executor(g, exec::mode::onednn)(in, &st).at(0), expect) <= 1e-4);
    CHECK(st.region_nodes == 1);
    CHECK(st.fused_nodes == 1);  // conv + leaky relu
    CHECK(st.reference_nodes == 0);
}
