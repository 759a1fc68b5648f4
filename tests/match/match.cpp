// Matching one pattern at one node: every combinator, the closure rule, captures.
#include <doctest/doctest.h>

#include <optional>
#include <type_traits>
#include <vector>

#include "sgmatch/graph/builders.hpp"
#include "sgmatch/sgmatch.hpp"
#include "support/tiny_graph.hpp"

using namespace sgmatch;
using namespace sgmatch::ops;

struct conv;
struct bn;
struct act;
struct xin;
struct k;
struct conv_bn_t;

namespace {
std::vector<node_id> nodes_of(const graph&, const match_result<graph, std::decay_t<decltype(op<Conv>())>>& m) {
    return std::vector<node_id>(m.begin(), m.end());
}
}  // namespace

TEST_CASE("a >> b: chains follow output 0 to a user") {
    graph g;
    auto ids = build::chain(g, {"Conv", "BatchNormalization", "Relu"});
    auto m = match(g, ids[0], op<Conv>() >> op<BatchNorm>() >> op<Relu>());
    REQUIRE(m);
    CHECK(std::vector<node_id>(m.begin(), m.end()) == ids);
    CHECK(m.output() == ids[2]);
    CHECK_FALSE(match(g, ids[1], op<Conv>() >> op<BatchNorm>()));
    CHECK_FALSE(match(g, ids[0], op<Conv>() >> op<Relu>()));
    CHECK(nodes_of(g, match(g, ids[0], op<Conv>())) == std::vector<node_id>{ids[0]});
}

TEST_CASE("get<Name>() on a failed match is an error, not a read of an empty result") {
    graph g;
    auto ids = build::chain(g, {"Conv", "Relu"});
    const auto p = op<Conv>().as<conv>() >> op<BatchNorm>().as<bn>();
    const auto m = match(g, ids[0], p);
    REQUIRE_FALSE(m);
    CHECK_THROWS_WITH_AS(m.get<conv>(), doctest::Contains("the match failed; check it first"), std::logic_error);
    CHECK_THROWS_AS((m.get<conv, bn>()), std::logic_error);
    const auto ok = match(g, ids[0], op<Conv>().as<conv>() >> op<Relu>());
    REQUIRE(ok);
    CHECK(ok.get<conv>() == ids[0]);
}

TEST_CASE("op<A, B> matches one of several kinds - aliases resolve per graph") {
    graph g;
    auto ids = build::chain(g, {"Convolution", "Clip"});  // MXNet spelling
    CHECK(match(g, ids[0], op<Conv>() >> op<Relu, Clip>()));
    CHECK_FALSE(match(g, ids[0], op<Conv>() >> op<Relu, Sigmoid>()));
}

TEST_CASE("optional is greedy and falls back") {
    graph g;
    auto with = build::chain(g, {"Conv", "BatchNormalization", "Relu"}, "a");
    auto without = build::chain(g, {"Conv", "Relu"}, "b");
    constexpr auto p = op<Conv>() >> optional(op<BatchNorm>().as<bn>()) >> op<Relu>();
    auto m1 = match(g, with[0], p);
    auto m2 = match(g, without[0], p);
    REQUIRE(m1);
    REQUIRE(m2);
    CHECK(m1.size() == 3);
    CHECK(m2.size() == 2);
    static_assert(std::is_same_v<decltype(m1.get<bn>()), std::optional<node_id>>);
    CHECK(m1.get<bn>() == with[1]);
    CHECK_FALSE(m2.get<bn>().has_value());
    // Greedy with backtracking: the optional part is given back when the rest needs it.
    auto m3 = match(g, with[0], op<Conv>() >> optional(op<BatchNorm>()) >> op<BatchNorm>() >> op<Relu>());
    REQUIRE(m3);
    CHECK(m3.size() == 3);
}

TEST_CASE("repeat<Min, Max> is bounded and greedy - captures inside become vectors") {
    graph g;
    auto ids = build::chain(g, {"Conv", "Relu", "Relu", "Relu", "Relu"});
    auto m = match(g, ids[0], op<Conv>() >> repeat<0, 3>(op<Relu>().as<act>()));
    REQUIRE(m);
    CHECK(m.size() == 4);  // stops at Max; the third Relu is the output, its user is outside
    static_assert(std::is_same_v<decltype(m.get<act>()), std::vector<node_id>>);
    CHECK(m.get<act>() == std::vector<node_id>{ids[1], ids[2], ids[3]});
    CHECK(match(g, ids[0], op<Conv>() >> repeat<4, 6>(op<Relu>())).size() == 5);
    CHECK_FALSE(match(g, ids[0], op<Conv>() >> repeat<5, 6>(op<Relu>())));
    // Backtracking inside a repetition: leave one Relu for the element after it.
    auto m2 = match(g, ids[0], op<Conv>() >> repeat<1, 4>(op<Relu>()) >> op<Relu>().as<act>());
    REQUIRE(m2);
    CHECK(m2.get<act>() == ids[4]);
    // Zero-width iterations do not loop.
    CHECK(match(g, ids[0], op<Conv>() >> repeat<0, 3>(optional(op<Sigmoid>())) >> op<Relu>()));
}

TEST_CASE("alternatives are ordered") {
    graph g;
    auto ids = build::chain(g, {"Conv", "BatchNormalization", "Relu"});
    constexpr auto longer_first = (op<Conv>() >> op<BatchNorm>()) | op<Conv>();
    constexpr auto shorter_first = op<Conv>() | (op<Conv>() >> op<BatchNorm>());
    CHECK(match(g, ids[0], longer_first).size() == 2);
    CHECK(match(g, ids[0], shorter_first).size() == 1);
    // An alternative that fails later is abandoned for the next one.
    CHECK(match(g, ids[0], ((op<Conv>() >> op<BatchNorm>()) | op<Conv>()) >> op<BatchNorm>()).size() == 2);
}

TEST_CASE("operands: commutative ops match either order, others only in order") {
    graph g;
    auto x = g.add_input("x");
    auto cst = g.add_scalar("c", 2.0f);
    auto add1 = g.add_op("Add", "add1", {x, cst});
    auto add2 = g.add_op("Add", "add2", {cst, x});
    auto sub1 = g.add_op("Sub", "sub1", {x, cst});
    auto sub2 = g.add_op("Sub", "sub2", {cst, x});
    constexpr auto addp = op<Add>(input(), constant());
    constexpr auto subp = op<Sub>(input(), constant());
    CHECK(match(g, add1, addp));
    CHECK(match(g, add2, addp));
    CHECK(match(g, sub1, subp));
    CHECK_FALSE(match(g, sub2, subp));
    CHECK_FALSE(match(g, add1, op<Add>(input())));  // input count must agree
    CHECK(match(g, add1, op<Add>()));               // no operands: inputs unconstrained
    // Operand capture records the value.
    auto m = match(g, add2, op<Add>(input().as<xin>(), constant().as<k>()));
    REQUIRE(m);
    CHECK(m.get<xin>() == x);
    CHECK(m.get<k>() == cst);
    CHECK(m.size() == 1);  // leaves are not part of the match
}

TEST_CASE("operands after >> describe the other inputs") {
    graph g;
    auto x = g.add_input("x");
    auto c = g.add_op("Conv", "conv", {x});
    auto b = g.add_op("BatchNormalization", "bn", {c});
    auto a = g.add_op("Add", "add", {x, b});  // chain enters on slot 1
    auto r = g.add_op("Relu", "relu", {a});
    auto m = match(g, c, op<Conv>() >> op<BatchNorm>() >> op<Add>(input().as<xin>()) >> op<Relu>());
    REQUIRE(m);
    CHECK(m.get<xin>() == x);
    CHECK(m.output() == r);
    CHECK(match(g, c, op<Conv>() >> op<BatchNorm>() >> op<Add>().input<1>()));
    CHECK_FALSE(match(g, c, op<Conv>() >> op<BatchNorm>() >> op<Add>().input<0>()));
}

TEST_CASE("closure rule: intermediates may not be used outside unless escaping") {
    graph g;
    auto x = g.add_input("x");
    auto c = g.add_op("Conv", "conv", {x});
    auto b = g.add_op("BatchNormalization", "bn", {c});
    g.add_op("MaxPool", "pool", {c});
    constexpr auto p = op<Conv>() >> op<BatchNorm>();
    CHECK_FALSE(match(g, c, p));
    CHECK(match(g, c, op<Conv>().escaping() >> op<BatchNorm>()));
    CHECK(match(g, c, escaping(op<Conv>()) >> op<BatchNorm>()).output() == b);
    // The last node's outputs may go anywhere.
    g.add_op("Relu", "r2", {b});
    g.add_op("Relu", "r3", {b});
    CHECK(match(g, c, op<Conv>().escaping() >> op<BatchNorm>()));
}

TEST_CASE("closure rule: a graph output cannot be internal") {
    graph g;
    auto ids = build::chain(g, {"Conv", "Relu"});
    g.mark_output(ids[0]);
    CHECK_FALSE(match(g, ids[0], op<Conv>() >> op<Relu>()));
    CHECK(match(g, ids[0], op<Conv>().escaping() >> op<Relu>()));
}

TEST_CASE("diamonds: back-references to captured values") {
    // x -> Div(x, 1.4142135) -> Erf -> Add(., 1) -> Mul(x, .) -> Mul(., 0.5): PyTorch's GELU export.
    graph g;
    auto x = g.add_input("x");
    auto mm = g.add_op("MatMul", "mm", {x, g.add_constant("w", {4, 4})});
    auto div = g.add_op("Div", "div", {mm, g.add_scalar("sqrt2", 1.4142135f)});
    auto erf = g.add_op("Erf", "erf", {div});
    auto add = g.add_op("Add", "add", {erf, g.add_scalar("one", 1.0f)});
    auto mul = g.add_op("Mul", "mul", {mm, add});
    auto half = g.add_op("Mul", "half", {mul, g.add_scalar("half", 0.5f)});
    g.mark_output(half);

    constexpr auto gelu = op<Div>(any().as<xin>(), constant(1.4142135, 1e-4)) >> op<Erf>() >> op<Add>(constant(1.0)) >>
                          op<Mul>(ref<xin>()) >> op<Mul>(constant(0.5));
    auto m = match(g, div, gelu);
    REQUIRE(m);
    CHECK(m.size() == 5);
    CHECK(m.get<xin>() == mm);
    CHECK(m.output() == half);
    // The same with the producer inside the match: mm's two users are both matched.
    constexpr auto mm_gelu = op<MatMul>().as<xin>() >> op<Div>(constant(1.4142135, 1e-4)) >> op<Erf>() >>
                             op<Add>(constant(1.0)) >> op<Mul>(ref<xin>()) >> op<Mul>(constant(0.5));
    auto m2 = match(g, mm, mm_gelu);
    REQUIRE(m2);
    CHECK(m2.size() == 6);
    // A wrong constant or a different x does not match.
    CHECK_FALSE(match(g, div, op<Div>(any(), constant(1.5)) >> op<Erf>()));
    CHECK_FALSE(match(g, mm, op<MatMul>() >> op<Div>(constant(1.4142135, 1e-4)) >> op<Erf>() >> op<Add>(constant(1.0)) >>
                                 op<Mul>(input())));
}

TEST_CASE("pinned ports") {
    graph g;
    auto x = g.add_input("x");
    auto b = g.add_op("BatchNormalization", "bn", {x}, {}, 3);
    auto r0 = g.add_op("Relu", "r0", {input_ref(b, 1)});
    CHECK_FALSE(match(g, b, op<BatchNorm>() >> op<Relu>()));
    auto m = match(g, b, op<BatchNorm>().output<1>() >> op<Relu>());
    REQUIRE(m);
    CHECK(m.output() == r0);
    auto s = g.add_op("Sub", "sub", {x, input_ref(b, 2)});
    CHECK(match(g, s, op<Sub>(input(), op<BatchNorm>().output<2>().escaping())));
    CHECK_FALSE(match(g, s, op<Sub>(input(), op<BatchNorm>().escaping())));
}

TEST_CASE("where predicates: ready-made and lambdas, attributes and shapes") {
    const graph g = build::resnet50();
    node_id c1{}, c2{};
    for (auto n : g.nodes()) {
        if (g.name(n) == "layer1.0.conv1") c1 = n;
        if (g.name(n) == "layer1.0.conv2") c2 = n;
    }
    CHECK(match(g, c1, op<Conv>().where(pred::attr_ints_eq("kernel_shape", 1, 1))));
    CHECK_FALSE(match(g, c2, op<Conv>().where(pred::attr_ints_eq("kernel_shape", 1, 1))));
    CHECK(match(g, c2, op<Conv>().where(pred::attr_eq("group", 1)).where(pred::rank_eq{4})));
    CHECK(match(g, c2, op<Conv>().where(pred::input_is_constant{1})));
    CHECK_FALSE(match(g, c2, op<Conv>().where(pred::has_attr{"auto_pad"})));
    auto wide = [](const auto& n) {
        auto t = n.type(0);
        return t && t->dims[1] >= 64 && n.attr_int("group") == 1;
    };
    CHECK(match(g, c2, op<Conv>().where(wide)));
    CHECK_FALSE(match(g, c2, op<Conv>().where([](const auto& n) { return n.input_type(0)->dims[2] != 56; })));
}

TEST_CASE("captures: typed results and structured bindings") {
    graph g;
    auto ids = build::chain(g, {"Conv", "BatchNormalization", "Relu"});
    constexpr auto p = op<Conv>().as<conv>() >> capture<bn>(op<BatchNorm>()) >> op<Relu>().as<act>();
    auto m = match(g, ids[0], p);
    REQUIRE(m);
    auto [c, b, a] = m.get<conv, bn, act>();
    static_assert(std::is_same_v<decltype(c), node_id>);
    CHECK(c == ids[0]);
    CHECK(b == ids[1]);
    CHECK(a == ids[2]);
    CHECK(m.value<bn>()->port == 0);
}

TEST_CASE("named sub-patterns are reusable values") {
    constexpr auto conv_bn = named<conv_bn_t>(op<Conv>() >> op<BatchNorm>());
    constexpr auto with_relu = conv_bn >> op<Relu>();
    constexpr auto with_add = conv_bn >> op<Add>(any());
    graph g;
    auto ids = build::chain(g, {"Conv", "BatchNormalization", "Relu"});
    CHECK(match(g, ids[0], with_relu).size() == 3);
    CHECK_FALSE(match(g, ids[0], with_add));
}

TEST_CASE("input() and any() anchors") {
    graph g;
    auto ids = build::chain(g, {"Conv", "Relu"});
    const node_id in = g.input(ids[0], 0).node;
    auto m = match(g, in, input() >> op<Conv>());
    REQUIRE(m);
    CHECK(m.size() == 1);  // the graph input is not part of the match
    CHECK(match(g, ids[0], any() >> op<Relu>()).size() == 2);
    CHECK_FALSE(match(g, in, any() >> op<Conv>()));
    CHECK_FALSE(match(g, in, input()));  // a match needs a node of its own
}

TEST_CASE("search is bounded by the pattern, not by the fan-out") {
    sgtest::tiny_graph g;
    int x = g.input("x");
    int a = g.op("Conv", "a", {{x, 0}});
    for (int i = 0; i < 2000; ++i) g.op("Relu", std::string("r").append(std::to_string(i)), {{a, 0}});
    g.user_calls = 0;
    CHECK_FALSE(match(g, a, op<Conv>() >> op<Relu>()));
    CHECK(g.user_calls < 10);  // rejected before trying any of the 2000 users
    // With an escaping edge, each user is tried once: linear in the fan-out.
    g.user_calls = 0;
    CHECK_FALSE(match(g, a, op<Conv>().escaping() >> op<Relu>() >> op<Sigmoid>()));
    CHECK(g.user_calls <= 2 * 2000 + 10);
}

TEST_CASE("matching works through another adapter unchanged") {
    sgtest::tiny_graph g;
    int x = g.input("x");
    int a = g.op("Conv", "a", {{x, 0}});
    int b = g.op("Relu", "b", {{a, 0}});
    g.outputs = {{b, 0}};
    auto m = match(g, a, op<Conv>().as<conv>() >> op<Relu>());
    REQUIRE(m);
    CHECK(m.get<conv>() == a);
    CHECK(m.output() == b);
}
