// The DSL front end: node types, flattening, constexpr patterns, tags. Mostly static_asserts.
#include <doctest/doctest.h>

#include <type_traits>

#include "sgmatch/pattern/combinators.hpp"
#include "sgmatch/pattern/predicates.hpp"
#include "sgmatch/pattern/vocabulary.hpp"

using namespace sgmatch;
using namespace sgmatch::ops;

struct x;
struct MyFusedOp {  // a user tag: no library change needed
    static constexpr std::string_view names[] = {"MyFusedOp", "my_fused"};
    static constexpr bool commutative = true;
    static constexpr int arity = 2;
};

// A pattern's type is its AST, and operators flatten.
constexpr auto a = op<Conv>();
constexpr auto chain3 = op<Conv>() >> op<BatchNorm>() >> op<Relu>();
static_assert(std::is_same_v<decltype(a), const pat::op<pat::tags<Conv>>>);
static_assert(std::is_same_v<std::decay_t<decltype(chain3)>,
                             pat::chain<pat::op<pat::tags<Conv>>, pat::op<pat::tags<BatchNorm>>, pat::op<pat::tags<Relu>>>>);
static_assert(std::is_same_v<std::decay_t<decltype((op<Conv>() >> op<Relu>()) >> (op<Relu>() >> op<Relu>()))>,
                             pat::chain<pat::op<pat::tags<Conv>>, pat::op<pat::tags<Relu>>, pat::op<pat::tags<Relu>>,
                                        pat::op<pat::tags<Relu>>>>);
static_assert(std::is_same_v<std::decay_t<decltype(op<Relu>() | op<Clip>() | op<Sigmoid>())>,
                             pat::alt<pat::op<pat::tags<Relu>>, pat::op<pat::tags<Clip>>, pat::op<pat::tags<Sigmoid>>>>);
static_assert(std::is_same_v<std::decay_t<decltype(op<Relu, Clip>())>, pat::op<pat::tags<Relu, Clip>>>);
// Patterns are small literal values: leaves are empty, composites hold only empty members.
static_assert(std::is_empty_v<pat::any> && std::is_empty_v<pat::ref<x>>);
static_assert(sizeof(chain3) <= 4);
// Predicated patterns are still constexpr values.
constexpr auto grouped = op<Conv>().where(pred::attr_eq("group", 1)).as<x>();
static_assert(std::is_same_v<std::decay_t<decltype(grouped)>,
                             pat::cap<x, pat::guarded<pat::op<pat::tags<Conv>>, pred::attr_eq_t<std::int64_t>>>>);
static_assert(grouped.p.pred.value == 1);
constexpr auto gelu_const = constant(1.4142135, 1e-4);
static_assert(gelu_const.pred.value == 1.4142135);

// is_pattern_v
static_assert(is_pattern_v<decltype(chain3)>);
static_assert(!is_pattern_v<int>);
static_assert(!is_pattern_v<Conv>);

// Tags: names, aliases, traits, user-defined.
static_assert(is_op_tag_v<Conv> && is_op_tag_v<MyFusedOp>);
static_assert(!is_op_tag_v<int> && !is_op_tag_v<x>);
static_assert(op_tag_traits<Conv>::name() == "Conv");
static_assert(op_tag_traits<Conv>::alias(1) == "Convolution");
static_assert(op_tag_traits<Conv>::alias_count == 3);
static_assert(op_tag_traits<Add>::commutative && !op_tag_traits<Sub>::commutative);
static_assert(op_tag_traits<Add>::arity == 2 && op_tag_traits<Relu>::arity == 1 && op_tag_traits<Conv>::arity == -1);
static_assert(op_tag_traits<MyFusedOp>::commutative && op_tag_traits<MyFusedOp>::alias(1) == "my_fused");
static_assert(std::is_same_v<FullyConnected, Gemm>);

// Operands.
constexpr auto add2 = op<Add>(any(), constant());
static_assert(std::tuple_size_v<decltype(add2.operands)> == 2);
static_assert(std::is_same_v<std::decay_t<decltype(op<Mul>(ref<x>()))>, pat::op<pat::tags<Mul>, pat::ref<x>>>);

TEST_CASE("predicates describe themselves") {
    CHECK(pred::attr_eq("group", 1).describe() == "group==1");
    CHECK(pred::attr_ints_eq("kernel_shape", 3, 3).describe() == "kernel_shape==[3,3]");
    CHECK(pred::attr_eq("act_type", "relu").describe() == "act_type==relu");
    CHECK(pred::scalar_near{0.5}.describe() == "~0.5");
}
