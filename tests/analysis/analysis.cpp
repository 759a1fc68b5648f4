// Compile-time analyses: node counts, captures and their kinds, anchors, notation.
#include <doctest/doctest.h>

#include <optional>
#include <type_traits>
#include <vector>

#include <boost/hana/type.hpp>

#include "sgmatch/sgmatch.hpp"

using namespace sgmatch;
using namespace sgmatch::ops;
namespace hana = boost::hana;
template <class... Ts>
using types = hana::basic_tuple<hana::type<Ts>...>;

struct c;
struct b;
struct r;
struct xin;
struct conv_bn;

constexpr auto cbr = op<Conv>().as<c>() >> optional(op<BatchNorm>().as<b>()) >> repeat<0, 3>((op<Relu>() | op<Clip>()).as<r>());

// Node counts.
static_assert(min_nodes_v<decltype(cbr)> == 1 && max_nodes_v<decltype(cbr)> == 5);
static_assert(max_nodes_v<decltype(op<Add>(op<Mul>(any(), constant()), any()))> == 2);
static_assert(min_nodes_v<decltype(op<Conv>() | (op<Conv>() >> op<Relu>()))> == 1);
static_assert(max_nodes_v<decltype(repeat<2, 4>(op<Relu>() >> op<Clip>()))> == 8);
static_assert(min_nodes_v<decltype(repeat<2, 4>(op<Relu>() >> op<Clip>()))> == 4);

// Captures: names in order, kinds by position.
static_assert(std::is_same_v<capture_names_t<decltype(cbr)>, types<c, b, r>>);
static_assert(capture_kind_v<decltype(cbr), c> == capture_kind::one);
static_assert(capture_kind_v<decltype(cbr), b> == capture_kind::optional);
static_assert(capture_kind_v<decltype(cbr), r> == capture_kind::many);
static_assert(capture_kind_v<decltype(op<Relu>().as<c>() | op<Clip>()), c> == capture_kind::optional);
static_assert(capture_kind_v<decltype(repeat<1, 1>(op<Relu>().as<c>())), c> == capture_kind::one);
static_assert(captures_unique_v<decltype(cbr)>);
static_assert(!captures_unique_v<decltype(op<Conv>().as<c>() >> op<Relu>().as<c>())>);
static_assert(refs_known_v<decltype(op<Div>(any().as<xin>(), constant()) >> op<Mul>(ref<xin>()))>);
static_assert(!refs_known_v<decltype(op<Mul>(ref<xin>()))>);
static_assert(has_capture_v<decltype(cbr), b> && !has_capture_v<decltype(cbr), xin>);

// Anchors.
static_assert(std::is_same_v<anchor_tags_t<decltype(cbr)>, types<Conv>>);
static_assert(std::is_same_v<anchor_tags_t<decltype(optional(op<Pad>()) >> op<Conv>())>, types<Pad, Conv>>);
static_assert(std::is_same_v<anchor_tags_t<decltype(op<Conv, ConvTranspose>() | op<MatMul>())>, types<Conv, ConvTranspose, MatMul>>);
static_assert(!anchor_is_wildcard_v<decltype(cbr)>);
static_assert(anchor_is_wildcard_v<decltype(any() >> op<Relu>())>);
static_assert(anchor_is_wildcard_v<decltype(input() >> op<Conv>())>);
static_assert(std::is_same_v<tags_t<decltype(op<Add>(op<Mul>()) >> op<Relu>())>, types<Add, Mul, Relu>>);

TEST_CASE("notation") {
    CHECK(notation(op<Conv>() >> optional(op<BatchNorm>()) >> repeat<0, 3>(op<Relu>() | op<Clip>())) ==
          "Conv >> BatchNorm? >> [Relu|Clip]{0,3}");
    CHECK(notation(cbr) == "Conv:c >> BatchNorm:b? >> [Relu|Clip]:r{0,3}");
    CHECK(notation(op<Relu, Clip>()) == "Relu|Clip");
    CHECK(notation(repeat<1, 2>(op<Relu, Clip>())) == "[Relu|Clip]{1,2}");
    CHECK(notation(op<Div>(any().as<xin>(), constant(1.4142135, 1e-4)) >> op<Erf>() >> op<Mul>(ref<xin>())) ==
          "Div(_:xin, const{~1.4142135}) >> Erf >> Mul(&xin)");
    CHECK(notation(op<Conv>().escaping() >> op<Relu>().input<0>()) == "Conv! >> Relu.in(0)");
    CHECK(notation(op<BatchNorm>().output<1>() >> op<Relu>()) == "BatchNorm.out(1) >> Relu");
    CHECK(notation(named<conv_bn>(op<Conv>() >> op<BatchNorm>()) >> op<Relu>()) == "conv_bn >> Relu");
    CHECK(notation(input() >> op<Conv>().where(pred::attr_eq("group", 1))) == "input >> Conv{group==1}");
}
