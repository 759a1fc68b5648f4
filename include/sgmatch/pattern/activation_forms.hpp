// sgmatch/pattern/activation_forms.hpp - activations as exporters write them out, as plain patterns:
// the forms that onednn/decomposed.hpp names and lowers as one eltwise post-op each, and that
// passes/qdq.hpp rewrites into one op between quantized values. X names the captured input x;
// constants match within a relative `tolerance`.
//
//   gelu_erf<X>()   Div(x, 1.4142135) or Mul(x, 0.70710677) -> Erf -> Add(., 1), then
//                   Mul(x, .) -> Mul(., 0.5)  |  Mul(Mul(x, 0.5), .)  |  Mul(., 0.5) -> Mul(x, .)
//   gelu_tanh<X>()  Pow(x, 3) or Mul(Mul(x, x), x) -> Mul(., 0.044715) -> Add(x, .) ->
//                   Mul(., 0.7978846) -> Tanh -> Add(., 1), then the same three endings
//   swish<X>()      Mul(x, Sigmoid(x))
//   hardswish<X>()  Add(x, 3) -> Clip(0, 6), then Mul(x, .) -> Div(., 6) or Mul(., 1/6), or the
//                   division first; and Mul(x, HardSigmoid(x))
#pragma once

#include "sgmatch/detail/config.hpp"
#include "sgmatch/pattern/combinators.hpp"
#include "sgmatch/pattern/predicates.hpp"
#include "sgmatch/pattern/vocabulary.hpp"

SGMATCH_BEGIN_NAMESPACE
namespace activation_forms {

/// Relative tolerance for the forms' constants.
inline constexpr double tolerance = 1e-4;

/// The three ways exporters finish 0.5 * x * (1 + ...).
template <class X>
constexpr auto half_x_tail() {
    using namespace sgmatch::ops;
    return (op<Mul>(ref<X>()) >> op<Mul>(constant(0.5, tolerance))) | op<Mul>(op<Mul>(ref<X>(), constant(0.5, tolerance))) |
           (op<Mul>(constant(0.5, tolerance)) >> op<Mul>(ref<X>()));
}

/// 0.5 x (1 + erf(x / sqrt 2)).
template <class X>
constexpr auto gelu_erf() {
    using namespace sgmatch::ops;
    return (op<Div>(constant(1.4142135623730951, tolerance)).template input<0>() | op<Mul>(constant(0.7071067811865476, tolerance))) >>
           op<Erf>() >> op<Add>(constant(1.0, tolerance)) >> half_x_tail<X>();
}

/// 0.5 x (1 + tanh(sqrt(2/pi) (x + 0.044715 x^3))).
template <class X>
constexpr auto gelu_tanh() {
    using namespace sgmatch::ops;
    return (op<Pow>(constant(3.0, tolerance)).template input<0>() | (op<Mul>(ref<X>()) >> op<Mul>(ref<X>()))) >>
           op<Mul>(constant(0.044715, tolerance)) >> op<Add>(ref<X>()) >> op<Mul>(constant(0.7978845608028654, tolerance)) >>
           op<Tanh>() >> op<Add>(constant(1.0, tolerance)) >> half_x_tail<X>();
}

/// x * sigmoid(x).
template <class X>
constexpr auto swish() {
    using namespace sgmatch::ops;
    return op<Sigmoid>() >> op<Mul>(ref<X>());
}

/// x * clip(x + 3, 0, 6) / 6, or x * HardSigmoid(x).
template <class X>
constexpr auto hardswish() {
    using namespace sgmatch::ops;
    constexpr auto sixth = op<Div>(constant(6.0, tolerance)).template input<0>() | op<Mul>(constant(1.0 / 6.0, tolerance));
    return (op<Add>(constant(3.0, tolerance)) >> op<Clip>() >> ((op<Mul>(ref<X>()) >> sixth) | (sixth >> op<Mul>(ref<X>())))) |
           (op<HardSigmoid>() >> op<Mul>(ref<X>()));
}

}  // namespace activation_forms
SGMATCH_END_NAMESPACE
