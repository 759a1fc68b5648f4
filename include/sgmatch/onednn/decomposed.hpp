// sgmatch/onednn/decomposed.hpp - activations as exporters write them out, recognized as one
// eltwise post-op each.
//
//   struct x;   // any type: the capture that names the activation's input
//   constexpr auto p = capture<x>(op<MatMul>() >> optional(op<Add>(constant()))) >> onednn::gelu_erf<x>();
//   auto prop = onednn::make_fused_property<G>("matmul_gelu", p);   // one matmul, a gelu_erf post-op
//
// The forms are pattern/activation_forms.hpp's: gelu_erf<x>(), gelu_tanh<x>(), swish<x>(),
// hardswish<x>(), and decomposed_activation<x>(), any of the four.
//
// Each is a named sub-pattern whose name has a composite lowering: at compile time the fragment
// counts as one lowerable unit (its Erf or Pow need no lowering of their own); when the match is
// lowered, the nodes after x are recognized from the graph and become the one post-op.
#pragma once

#include <cmath>
#include <initializer_list>
#include <optional>
#include <vector>

#include "sgmatch/detail/config.hpp"
#include "sgmatch/onednn/lowering.hpp"
#include "sgmatch/pattern/combinators.hpp"
#include "sgmatch/pattern/predicates.hpp"
#include "sgmatch/pattern/vocabulary.hpp"
#include "sgmatch/pattern/activation_forms.hpp"

SGMATCH_BEGIN_NAMESPACE
namespace onednn {
namespace decomposed {

/// The names of the decomposed forms (used with named<>; each has a composite lowering).
struct GeluErf;
struct GeluTanh;
struct Swish;
struct HardSwish;

/// Relative tolerance for the constants of the decomposed forms.
inline constexpr double tolerance = activation_forms::tolerance;

namespace detail {

inline bool near(std::optional<double> v, double want) {
    return v && std::fabs(*v - want) <= tolerance * (std::fabs(want) > 1.0 ? std::fabs(want) : 1.0);
}

// After `one_plus` (the value 1 + erf(..) or 1 + tanh(..)) and x: the three ways exporters finish
// 0.5 * x * one_plus. `h` is x's remaining user. The last node, or nullopt.
template <class G, class N>
std::optional<N> half_x_times(const chain_view<G>& v, N x, N one_plus, N h, std::size_t& taken) {
    using namespace sgmatch::ops;
    const auto t = v.sole_user(one_plus);
    if (!t) return std::nullopt;
    if (*t == h && v.template is<Mul>(h) && v.reads_pair(h, x, one_plus)) {  // Mul(x, .) -> Mul(., 0.5)
        const auto f = v.sole_user(h);
        if (f && v.template is<Mul>(*f) && near(v.other_scalar(*f, h), 0.5)) return taken += 2, f;
        return std::nullopt;
    }
    if (v.template is<Mul>(h) && near(v.other_scalar(h, x), 0.5) && v.sole_user(h) == t && v.template is<Mul>(*t) &&
        v.reads_pair(*t, h, one_plus))  // Mul(Mul(x, 0.5), .)
        return taken += 2, t;
    if (v.template is<Mul>(*t) && near(v.other_scalar(*t, one_plus), 0.5) && v.sole_user(*t) == std::optional<N>(h) &&
        v.template is<Mul>(h) && v.reads_pair(h, x, *t))  // Mul(., 0.5) -> Mul(x, .)
        return taken += 2, std::optional<N>(h);
    return std::nullopt;
}

template <class N>
std::optional<composite_result<N>> result(dnnl::algorithm alg, std::optional<N> last, std::size_t taken,
                                          float alpha = 0.0f) {
    if (!last) return std::nullopt;
    return composite_result<N>{{post_op::eltwise(alg, alpha)}, *last, taken};
}

// The user of x among us that is not one of the given nodes (exactly one such), or nullopt.
template <class N>
std::optional<N> the_other(const std::vector<N>& us, std::initializer_list<N> known) {
    std::optional<N> r;
    for (const auto& u : us) {
        bool k = false;
        for (const auto& n : known) k = k || u == n;
        if (k) continue;
        if (r) return std::nullopt;
        r = u;
    }
    return r;
}

}  // namespace detail
}  // namespace decomposed

template <>
struct lowering<decomposed::GeluErf> {
    static constexpr lowering_role role = lowering_role::composite;
    template <class G>
    static std::optional<composite_result<typename graph_traits<G>::node_type>> recognize(
        const chain_view<G>& v, typename graph_traits<G>::node_type x) {
        using namespace sgmatch::ops;
        using N = typename graph_traits<G>::node_type;
        namespace d = decomposed::detail;
        const auto us = v.inner_users(x);
        if (us.size() != 2) return std::nullopt;
        for (const N& div : us) {
            const bool head = (v.template is<Div>(div) && v.reads(div, 0, x) && d::near(v.scalar(div, 1), std::sqrt(2.0))) ||
                              (v.template is<Mul>(div) && d::near(v.other_scalar(div, x), std::sqrt(0.5)));
            if (!head) continue;
            const auto erf = v.sole_user(div);
            if (!erf || !v.template is<Erf>(*erf) || !v.reads(*erf, 0, div)) continue;
            const auto add = v.sole_user(*erf);
            if (!add || !v.template is<Add>(*add) || !d::near(v.other_scalar(*add, *erf), 1.0)) continue;
            const auto h = d::the_other(us, {div});
            if (!h) continue;
            std::size_t taken = 3;
            const auto last = d::half_x_times(v, x, *add, *h, taken);
            return d::result(dnnl::algorithm::eltwise_gelu_erf, last, taken);
        }
        return std::nullopt;
    }
};

template <>
struct lowering<decomposed::GeluTanh> {
    static constexpr lowering_role role = lowering_role::composite;
    template <class G>
    static std::optional<composite_result<typename graph_traits<G>::node_type>> recognize(
        const chain_view<G>& v, typename graph_traits<G>::node_type x) {
        using namespace sgmatch::ops;
        using N = typename graph_traits<G>::node_type;
        namespace d = decomposed::detail;
        const auto us = v.inner_users(x);
        if (us.size() != 3 && us.size() != 4) return std::nullopt;
        for (const N& c : us) {
            // x^3: Pow(x, 3), or Mul(x, x) then Mul(., x)
            std::optional<N> cube, sq;
            if (v.template is<Pow>(c) && v.reads(c, 0, x) && d::near(v.scalar(c, 1), 3.0)) {
                cube = c;
            } else if (v.template is<Mul>(c) && v.reads(c, 0, x) && v.reads(c, 1, x)) {
                const auto c2 = v.sole_user(c);
                if (c2 && v.template is<Mul>(*c2) && v.reads_pair(*c2, c, x)) sq = c, cube = c2;
            }
            if (!cube) continue;
            const auto m1 = v.sole_user(*cube);
            if (!m1 || !v.template is<Mul>(*m1) || !d::near(v.other_scalar(*m1, *cube), 0.044715)) continue;
            const auto s = v.sole_user(*m1);
            if (!s || !v.template is<Add>(*s) || !v.reads_pair(*s, x, *m1)) continue;
            const auto m2 = v.sole_user(*s);
            if (!m2 || !v.template is<Mul>(*m2) || !d::near(v.other_scalar(*m2, *s), 0.7978845608028654)) continue;
            const auto t = v.sole_user(*m2);
            if (!t || !v.template is<Tanh>(*t) || !v.reads(*t, 0, *m2)) continue;
            const auto add = v.sole_user(*t);
            if (!add || !v.template is<Add>(*add) || !d::near(v.other_scalar(*add, *t), 1.0)) continue;
            const auto h = sq ? d::the_other(us, {*sq, *cube, *s}) : d::the_other(us, {*cube, *s});
            if (!h) continue;
            std::size_t taken = (sq ? 7 : 6);
            const auto last = d::half_x_times(v, x, *add, *h, taken);
            return d::result(dnnl::algorithm::eltwise_gelu_tanh, last, taken);
        }
        return std::nullopt;
    }
};

template <>
struct lowering<decomposed::Swish> {
    static constexpr lowering_role role = lowering_role::composite;
    template <class G>
    static std::optional<composite_result<typename graph_traits<G>::node_type>> recognize(
        const chain_view<G>& v, typename graph_traits<G>::node_type x) {
        using namespace sgmatch::ops;
        namespace d = decomposed::detail;
        const auto us = v.inner_users(x);
        if (us.size() != 2) return std::nullopt;
        for (const auto& s : us) {
            if (!v.template is<Sigmoid>(s) || !v.reads(s, 0, x)) continue;
            const auto m = v.sole_user(s);
            if (m && v.template is<Mul>(*m) && v.reads_pair(*m, x, s))
                return d::result(dnnl::algorithm::eltwise_swish, m, 2, 1.0f);
        }
        return std::nullopt;
    }
};

template <>
struct lowering<decomposed::HardSwish> {
    static constexpr lowering_role role = lowering_role::composite;
    template <class G>
    static std::optional<composite_result<typename graph_traits<G>::node_type>> recognize(
        const chain_view<G>& v, typename graph_traits<G>::node_type x) {
        using namespace sgmatch::ops;
        using N = typename graph_traits<G>::node_type;
        namespace d = decomposed::detail;
        const auto us = v.inner_users(x);
        if (us.size() != 2) return std::nullopt;
        auto sixth = [&](N n, N from) {  // Div(from, 6) or Mul(from, 1/6)
            return (v.template is<Div>(n) && v.reads(n, 0, from) && d::near(v.scalar(n, 1), 6.0)) ||
                   (v.template is<Mul>(n) && d::near(v.other_scalar(n, from), 1.0 / 6.0));
        };
        for (const auto& a : us) {
            const auto h = d::the_other(us, {a});
            if (!h || !v.template is<Mul>(*h)) continue;
            if (v.template is<HardSigmoid>(a) && v.reads(a, 0, x)) {  // x * HardSigmoid(x; 1/6, 0.5)
                const auto al = v.attr(a, "alpha"), be = v.attr(a, "beta");
                if (al && be && d::near(al->as_real(), 1.0 / 6.0) && d::near(be->as_real(), 0.5) &&
                    v.sole_user(a) == h && v.reads_pair(*h, x, a))
                    return d::result(dnnl::algorithm::eltwise_hardswish, h, 2);
                continue;
            }
            if (!v.template is<Add>(a) || !d::near(v.other_scalar(a, x), 3.0)) continue;
            const auto c = v.sole_user(a);
            if (!c || !v.template is<Clip>(*c) || !v.reads(*c, 0, a)) continue;
            // Clip bounds: attributes (opset < 11) or constant inputs 1 and 2.
            auto bound = [&](const char* key, std::size_t slot) -> std::optional<double> {
                if (v.inputs(*c) > slot) return v.scalar(*c, slot);
                const auto at = v.attr(*c, key);
                return at ? at->as_real() : std::nullopt;
            };
            if (!d::near(bound("min", 1), 0.0) || !d::near(bound("max", 2), 6.0)) continue;
            const auto t = v.sole_user(*c);
            if (!t) continue;
            if (*t == *h && v.reads_pair(*h, x, *c)) {  // Mul(x, clip) then / 6
                const auto f = v.sole_user(*h);
                if (f && sixth(*f, *h)) return d::result(dnnl::algorithm::eltwise_hardswish, f, 4);
            } else if (sixth(*t, *c) && v.sole_user(*t) == h && v.reads_pair(*h, x, *t)) {  // clip / 6 then Mul(x, .)
                return d::result(dnnl::algorithm::eltwise_hardswish, h, 4);
            }
        }
        return std::nullopt;
    }
};

// ----- the patterns (pattern/activation_forms.hpp), each named for its composite lowering -----------

/// 0.5 x (1 + erf(x / sqrt 2)) written out (see the top of this file); X names the captured x.
template <class X>
constexpr auto gelu_erf() {
    return named<decomposed::GeluErf>(activation_forms::gelu_erf<X>());
}

/// 0.5 x (1 + tanh(sqrt(2/pi) (x + 0.044715 x^3))) written out; X names the captured x.
template <class X>
constexpr auto gelu_tanh() {
    return named<decomposed::GeluTanh>(activation_forms::gelu_tanh<X>());
}

/// x * sigmoid(x) written out; X names the captured x.
template <class X>
constexpr auto swish() {
    return named<decomposed::Swish>(activation_forms::swish<X>());
}

/// x * clip(x + 3, 0, 6) / 6 written out (or x * HardSigmoid(x) with alpha 1/6, beta 0.5).
template <class X>
constexpr auto hardswish() {
    return named<decomposed::HardSwish>(activation_forms::hardswish<X>());
}

/// Any of the four decomposed activations after the value captured as X.
template <class X>
constexpr auto decomposed_activation() {
    return gelu_erf<X>() | gelu_tanh<X>() | swish<X>() | hardswish<X>();
}

}  // namespace onednn
SGMATCH_END_NAMESPACE
