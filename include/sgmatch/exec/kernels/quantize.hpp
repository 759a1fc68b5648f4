// sgmatch/exec/kernels/quantize.hpp - QuantizeLinear, DequantizeLinear, MatMulInteger and
// QLinearMatMul over typed values.
//
// A scale (f32) and a zero point (uint8 or int8; int32 for DequantizeLinear's int32 input),
// per tensor (a scalar, or a 1-D tensor of one value) or per axis (a 1-D tensor of x's extent
// along `axis`, negative counting from the end), the zero point of the scale's shape or absent
// (0; QuantizeLinear's result is then uint8):
//   QuantizeLinear    y = saturate(round_half_even(x / scale) + zero_point), x f32 or int32
//                     (the division in f32, as ONNX's reference computes it); NaN gives the zero
//                     point.
//   DequantizeLinear  y = (x - zero_point) * scale, f32.
// MatMulInteger multiplies uint8 / int8 operands less their zero points (one, or one per row of A
// / per column of B) into int32, as MatMul broadcasts; QLinearMatMul rescales that product by
// a_scale * b_scale / y_scale (f32, ties to even) onto y's zero point, saturated (one scale and
// zero point each). DynamicQuantizeLinear picks the uint8 scale and zero point that map
// [min(x, 0), max(x, 0)] onto [0, 255] (an all-zero x gives scale 0, zero point 0 and y 0; a
// non-finite x is refused). ConvInteger and QLinearConv are the same two over a convolution
// (groups, strides, dilations, pads; a padded position adds nothing), w's zero point and scale
// one or one per output channel, QLinearConv's int32 bias added before the rescale.
// Reference loops: sums in int64, no blocking.
// Anything else (a 2-D scale, a zero point of another shape or type, an axis out of range) is
// refused naming the node.
#pragma once

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <limits>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#if defined(__SSE2__)
#include <emmintrin.h>
#endif

#include "sgmatch/detail/config.hpp"
#include "sgmatch/exec/kernels/typed_support.hpp"
#include "sgmatch/exec/value.hpp"
#include "sgmatch/ops/shape_rules.hpp"

SGMATCH_BEGIN_NAMESPACE
namespace exec {
namespace typed {

namespace detail {

/// Which scale an element of x uses: element i takes scale (i / inner) % extent.
struct quant_layout {
    std::int64_t inner = 1, extent = 1;
};

inline quant_layout quant_layout_of(const ops::op_attrs& a, const value& x, const value& scale, const value* zero_point) {
    if (scale.type() != dtype::f32) fail(a, "the scale is " + std::string(name_of(scale.type())) + " (f32 taken)");
    const auto& sd = scale.dims();
    if (sd.size() > 1) fail(a, "the scale has rank " + std::to_string(sd.size()) + " (a scalar or 1-D taken)");
    if (zero_point != nullptr && zero_point->dims() != sd)
        fail(a, "the zero point's shape differs from the scale's");
    quant_layout q;
    if (scale.size() == 1) return q;  // per tensor
    const auto& d = x.dims();
    const auto r = static_cast<std::int64_t>(d.size());
    std::int64_t axis = a.i("axis");
    if (axis < -r || axis >= r) fail(a, "axis " + std::to_string(axis) + " is out of range for rank " + std::to_string(r));
    if (axis < 0) axis += r;
    if (d[static_cast<std::size_t>(axis)] != sd[0])
        fail(a, "the scale has " + std::to_string(sd[0]) + " values for an axis of extent " +
                    std::to_string(d[static_cast<std::size_t>(axis)]));
    q.extent = sd[0];
    for (std::size_t k = static_cast<std::size_t>(axis) + 1; k < d.size(); ++k) q.inner *= d[k];
    return q;
}

/// round_half_even(scaled) + zero_point, saturated to Q (NaN gives the zero point).
template <class Q>
Q quantized(float scaled, float zero_point) {
    constexpr float lo = std::numeric_limits<Q>::min(), hi = std::numeric_limits<Q>::max();
    const float r = std::nearbyint(scaled);  // ties to even (the default rounding mode)
    const float v = std::isnan(r) ? zero_point : r + zero_point;
    return static_cast<Q>(v < lo ? lo : v > hi ? hi : v);
}

/// o[i] = quantized<Q>(x[i] / scale, zero_point) for i in [0, n), the same integers. On x86-64,
/// 16 at a time with SSE2: the quotient with NaN made 0 and held within +-2^22 (past that it
/// saturates anyway), converted rounding to even (the default rounding mode), the zero point
/// added in int32, and the two packs saturating to Q's range.
template <class Q>
void quantize_run(const float* x, Q* o, std::int64_t n, float scale, std::int32_t zero_point) {
    std::int64_t i = 0;
#if defined(__SSE2__)
    const __m128 s = _mm_set1_ps(scale), lo = _mm_set1_ps(-4194304.0f), hi = _mm_set1_ps(4194304.0f);
    const __m128i z = _mm_set1_epi32(zero_point);
    auto one = [&](const float* p) {
        __m128 v = _mm_div_ps(_mm_loadu_ps(p), s);
        v = _mm_and_ps(v, _mm_cmpord_ps(v, v));  // NaN: 0
        v = _mm_min_ps(_mm_max_ps(v, lo), hi);
        return _mm_add_epi32(_mm_cvtps_epi32(v), z);
    };
    for (; i + 16 <= n; i += 16) {
        const __m128i a = _mm_packs_epi32(one(x + i), one(x + i + 4)), b = _mm_packs_epi32(one(x + i + 8), one(x + i + 12));
        const __m128i q = std::is_same_v<Q, std::uint8_t> ? _mm_packus_epi16(a, b) : _mm_packs_epi16(a, b);
        _mm_storeu_si128(reinterpret_cast<__m128i*>(o + i), q);
    }
#endif
    for (; i < n; ++i) o[i] = quantized<Q>(x[i] / scale, static_cast<float>(zero_point));
}

/// f(from, to, c) for the runs of [begin, end) that take one scale c (layout q).
template <class F>
void for_scale_runs(std::int64_t begin, std::int64_t end, const quant_layout& q, F&& f) {
    if (q.extent == 1) return f(begin, end, std::int64_t{0});
    for (std::int64_t i = begin; i < end;) {
        const std::int64_t block = i / q.inner, stop = std::min(end, (block + 1) * q.inner);
        f(i, stop, block % q.extent);
        i = stop;
    }
}

/// How a kernel runs f(begin, end) over [0, n), and with which arithmetic: `plain`, the reference
/// kernel's plain loops, in order; else the oneDNN modes' (kernels/quantize_onednn.hpp), which split
/// the range across the oneDNN team and quantize f32 with quantize_run (equal results).
struct range_runner {
    void (*run)(std::int64_t n, void* f, void (*call)(void*, std::int64_t, std::int64_t));
    bool plain;
};
inline void run_in_order(std::int64_t n, void* f, void (*call)(void*, std::int64_t, std::int64_t)) { call(f, 0, n); }
inline constexpr range_runner in_order{run_in_order, true};

template <class F>
void run_ranges(range_runner run, std::int64_t n, F& f) {
    run.run(n, &f, [](void* p, std::int64_t b, std::int64_t e) { (*static_cast<F*>(p))(b, e); });
}

}  // namespace detail

/// QuantizeLinear, its elements split into ranges by `run` (in order: the reference kernel).
inline typed_fn quantize_linear_on(const ops::op_attrs& a0, detail::range_runner runner) {
    return [a = a0, runner](const values& xs) {
        const value& x0 = in(xs, 0, a);
        const value scale = in(xs, 1, a).dense_value();
        const bool has_zp = xs.size() > 2;
        const value zp = has_zp ? xs[2].dense_value() : value::zeros(dtype::u8, scale.dims());
        if (x0.type() != dtype::f32 && x0.type() != dtype::i32)
            fail(a, "x is " + std::string(name_of(x0.type())) + " (f32 or int32 taken)");
        if (zp.type() != dtype::u8 && zp.type() != dtype::i8)
            fail(a, "the zero point is " + std::string(name_of(zp.type())) + " (uint8 or int8 taken)");
        const detail::quant_layout q = detail::quant_layout_of(a, x0, scale, has_zp ? &zp : nullptr);
        // One scale: element by element over x's buffer in its packed layout (channels-last), y
        // in the same layout; else over a dense x.
        const bool in_layout = q.extent == 1 && !x0.dense() && x0.packed();
        const value x = in_layout ? x0 : x0.dense_value();
        value y = in_layout ? value::zeros_in_layout(zp.type(), x.dims(), x.strides()) : value::zeros(zp.type(), x.dims());
        const float* s = scale.as<float>();
        auto run = [&](auto out_tag, auto in_tag) {
            using Q = typename decltype(out_tag)::type;
            using X = typename decltype(in_tag)::type;
            const X* xv = static_cast<const X*>(x.data());
            const Q* z = zp.as<Q>();
            Q* o = static_cast<Q*>(y.mutable_data());
            auto range = [&](std::int64_t begin, std::int64_t end) {
                detail::for_scale_runs(begin, end, q, [&](std::int64_t from, std::int64_t to, std::int64_t c) {
                    if (!runner.plain && std::is_same_v<X, float>) {
                        if constexpr (std::is_same_v<X, float>)
                            detail::quantize_run<Q>(xv + from, o + from, to - from, s[c], static_cast<std::int32_t>(z[c]));
                    } else {
                        const float sc = s[c], zf = static_cast<float>(z[c]);
                        for (std::int64_t i = from; i < to; ++i) o[i] = detail::quantized<Q>(static_cast<float>(xv[i]) / sc, zf);
                    }
                });
            };
            detail::run_ranges(runner, x.size(), range);
        };
        struct u8 { using type = std::uint8_t; };
        struct i8 { using type = std::int8_t; };
        struct f32 { using type = float; };
        struct i32 { using type = std::int32_t; };
        if (zp.type() == dtype::u8) x.type() == dtype::f32 ? run(u8{}, f32{}) : run(u8{}, i32{});
        else x.type() == dtype::f32 ? run(i8{}, f32{}) : run(i8{}, i32{});
        return values{y};
    };
}

/// DequantizeLinear, its elements split into ranges by `run` (in order: the reference kernel).
inline typed_fn dequantize_linear_on(const ops::op_attrs& a0, detail::range_runner runner) {
    return [a = a0, runner](const values& xs) {
        const value& x0 = in(xs, 0, a);
        const value scale = in(xs, 1, a).dense_value();
        const bool has_zp = xs.size() > 2;
        if (x0.type() != dtype::u8 && x0.type() != dtype::i8 && x0.type() != dtype::i32)
            fail(a, "x is " + std::string(name_of(x0.type())) + " (uint8, int8 or int32 taken)");
        const value zp = has_zp ? xs[2].dense_value() : value::zeros(x0.type(), scale.dims());
        if (zp.type() != x0.type())
            fail(a, "the zero point is " + std::string(name_of(zp.type())) + ", x " + std::string(name_of(x0.type())));
        const detail::quant_layout q = detail::quant_layout_of(a, x0, scale, has_zp ? &zp : nullptr);
        // One scale: element by element over x's buffer in its packed layout (the channels-last y
        // of an int8 conv), y in the same layout (oneDNN's f32 kernels read it so); else dense.
        const bool in_layout = q.extent == 1 && !x0.dense() && x0.packed();
        const value x = in_layout ? x0 : x0.dense_value();
        value y = in_layout ? value::zeros_in_layout(dtype::f32, x.dims(), x.strides()) : value::zeros(dtype::f32, x.dims());
        const float* s = scale.as<float>();
        float* o = static_cast<float*>(y.mutable_data());
        visit_type(x.type(), [&](auto t) {
            using T = typename decltype(t)::type;
            if constexpr (std::is_same_v<T, std::uint8_t> || std::is_same_v<T, std::int8_t> || std::is_same_v<T, std::int32_t>) {
                const T* xv = static_cast<const T*>(x.data());
                const T* z = zp.as<T>();
                if (std::is_same_v<T, std::int32_t>)
                    for (std::int64_t c = 0; c < zp.size(); ++c)
                        if (z[c] != 0) fail(a, "an int32 x takes no zero point but 0");
                auto range = [&](std::int64_t begin, std::int64_t end) {
                    detail::for_scale_runs(begin, end, q, [&](std::int64_t from, std::int64_t to, std::int64_t c) {
                        const float sc = s[c], zf = static_cast<float>(z[c]);
                        for (std::int64_t i = from; i < to; ++i) o[i] = (static_cast<float>(xv[i]) - zf) * sc;
                    });
                };
                detail::run_ranges(runner, x.size(), range);
            }
        });
        return values{y};
    };
}

/// QLinearAdd (ONNX Runtime's): ((A - A_zp) * A_scale + (B - B_zp) * B_scale) / C_scale rounded to
/// even, plus C_zp, saturated (the f32 arithmetic of DequantizeLinear, Add and QuantizeLinear
/// one by one); A and B broadcast, one scale and zero point each. Split into ranges by `run` when
/// A and B have the output's shape (in order: the reference kernel, plain loops).
inline typed_fn qlinear_add_on(const ops::op_attrs& a0, detail::range_runner runner) {
    return [a = a0, runner](const values& xs) {
        if (xs.size() < 7) fail(a, "takes 7 or 8 inputs");
        const shape out = rule(a, xs).at(0);
        // Operands of the output's shape in packed layouts (channels-last from int8 convs) run
        // over their buffers in A's layout, B copied into it if its own differs; y in it too.
        const value& A0 = in(xs, 0, a);
        const value& B0 = in(xs, 3, a);
        const bool in_layout = A0.dims() == out && B0.dims() == out && A0.packed() && B0.packed() && !A0.dense();
        const value A = in_layout ? A0 : A0.dense_value();
        const value B = in_layout ? B0.in_layout(A.layout()) : B0.dense_value();
        if (A.type() != dtype::u8 && A.type() != dtype::i8) fail(a, "A is " + std::string(name_of(A.type())) + " (uint8 or int8 taken)");
        if (B.type() != A.type()) fail(a, "B is " + std::string(name_of(B.type())) + ", A " + std::string(name_of(A.type())));
        auto scale = [&](std::size_t i, const char* what) {
            const value v = in(xs, i, a).dense_value();
            if (v.type() != dtype::f32 || v.size() != 1) fail(a, std::string(what) + " is not one f32 value");
            return v.as<float>()[0];
        };
        auto zero = [&](std::size_t i, const char* what) -> float {
            if (i >= xs.size() || xs[i].is_none()) return 0.0f;
            const value v = xs[i].dense_value();
            if (v.type() != A.type() || v.size() != 1) fail(a, std::string(what) + " is not one value of A's type");
            return static_cast<float>(v.to_ints()[0]);
        };
        const float sa = scale(1, "A_scale"), sb = scale(4, "B_scale"), sc = scale(6, "C_scale");
        const float za = zero(2, "A_zero_point"), zb = zero(5, "B_zero_point"), zc = zero(7, "C_zero_point");
        value y = in_layout ? value::zeros_in_layout(A.type(), out, A.layout()) : value::zeros(A.type(), out);
        auto run = [&](auto tag) {
            using Q = decltype(tag);
            const Q* pa = static_cast<const Q*>(A.data());
            const Q* pb = static_cast<const Q*>(B.data());
            Q* o = static_cast<Q*>(y.mutable_data());
            auto sum = [&](std::int64_t i, std::int64_t j) {
                const float da = (static_cast<float>(pa[i]) - za) * sa, db = (static_cast<float>(pb[j]) - zb) * sb;
                return da + db;
            };
            if (A.dims() != out || B.dims() != out) {  // broadcast: index by index
                const shape st_a = broadcast_strides(A.dims(), out), st_b = broadcast_strides(B.dims(), out);
                shape idx(out.size(), 0);
                for (std::int64_t k = 0; k < y.size(); ++k) {
                    std::int64_t i = 0, j = 0;
                    for (std::size_t d = 0; d < out.size(); ++d) i += idx[d] * st_a[d], j += idx[d] * st_b[d];
                    o[k] = detail::quantized<Q>(sum(i, j) / sc, zc);
                    for (std::size_t d = out.size(); d-- > 0;) {
                        if (++idx[d] < out[d]) break;
                        idx[d] = 0;
                    }
                }
                return;
            }
            auto range = [&](std::int64_t begin, std::int64_t end) {
                if (runner.plain) {
                    for (std::int64_t k = begin; k < end; ++k) o[k] = detail::quantized<Q>(sum(k, k) / sc, zc);
                    return;
                }
                float part[256];  // the sums, then quantized 16 at a time
                for (std::int64_t k = begin; k < end; k += 256) {
                    const std::int64_t m = std::min<std::int64_t>(256, end - k);
                    for (std::int64_t i = 0; i < m; ++i) part[i] = sum(k + i, k + i);
                    detail::quantize_run<Q>(part, o + k, m, sc, static_cast<std::int32_t>(zc));
                }
            };
            detail::run_ranges(runner, y.size(), range);
        };
        if (A.type() == dtype::u8) run(std::uint8_t{});
        else run(std::int8_t{});
        return values{y};
    };
}

inline typed_fn quantize_linear(const ops::op_attrs& a, const ops::node_source&) { return quantize_linear_on(a, detail::in_order); }
inline typed_fn dequantize_linear(const ops::op_attrs& a, const ops::node_source&) { return dequantize_linear_on(a, detail::in_order); }
inline typed_fn qlinear_add(const ops::op_attrs& a, const ops::node_source&) { return qlinear_add_on(a, detail::in_order); }

inline typed_fn dynamic_quantize_linear(const ops::op_attrs& a0, const ops::node_source&) {
    return [a = a0](const values& xs) {
        const value x = in(xs, 0, a).dense_value();
        if (x.type() != dtype::f32) fail(a, "x is " + std::string(name_of(x.type())) + " (f32 taken)");
        const float* p = x.as<float>();
        float lo = 0.0f, hi = 0.0f;
        for (std::int64_t i = 0; i < x.size(); ++i) {
            if (!std::isfinite(p[i])) fail(a, "x holds a value that is not finite; no scale maps it");
            lo = p[i] < lo ? p[i] : lo;
            hi = p[i] > hi ? p[i] : hi;
        }
        const float scale = (hi - lo) / 255.0f;
        value y = value::zeros(dtype::u8, x.dims());
        std::uint8_t zp = 0;
        if (scale > 0.0f) {
            zp = detail::quantized<std::uint8_t>(-lo / scale, 0.0f);
            std::uint8_t* o = y.as<std::uint8_t>();
            for (std::int64_t i = 0; i < x.size(); ++i) o[i] = detail::quantized<std::uint8_t>(p[i] / scale, zp);
        }
        return values{y, value::of<float>({}, {scale}), value::of<std::uint8_t>({}, {zp})};
    };
}

namespace detail {

/// A uint8 or int8 value's elements as int32 (another type refused, naming `what`).
inline std::vector<std::int32_t> as_int32(const ops::op_attrs& a, const value& v0, const char* what) {
    if (v0.type() != dtype::u8 && v0.type() != dtype::i8)
        fail(a, std::string(what) + " is " + std::string(name_of(v0.type())) + " (uint8 or int8 taken)");
    const value v = v0.dense_value();
    std::vector<std::int32_t> out(static_cast<std::size_t>(v.size()));
    visit_type(v.type(), [&](auto t) {
        using T = typename decltype(t)::type;
        const T* p = v.as<T>();
        for (std::size_t i = 0; i < out.size(); ++i) out[i] = static_cast<std::int32_t>(p[i]);
    });
    return out;
}

/// Zero points (uint8 / int8, of `of`'s type) as int32.
inline std::vector<std::int32_t> zero_points(const ops::op_attrs& a, const value& v, const char* what, const value& of) {
    if (v.type() != of.type()) fail(a, std::string(what) + "'s type is not its tensor's");
    return as_int32(a, v, what);
}

/// One zero point (uint8 / int8, of `of`'s type) as int32.
inline std::int32_t one_point(const ops::op_attrs& a, const value& v, const char* what, const value& of) {
    const std::vector<std::int32_t> z = zero_points(a, v, what, of);
    if (z.size() != 1) fail(a, std::string(what) + " is not one value");
    return z[0];
}

/// Integer sums as an int32 value of dims `d` (MatMulInteger's and ConvInteger's result).
inline value int32_value(const std::vector<std::int64_t>& acc, const shape& d) {
    value y = value::zeros(dtype::i32, d);
    std::int32_t* o = y.as<std::int32_t>();
    for (std::size_t i = 0; i < acc.size(); ++i) o[i] = static_cast<std::int32_t>(acc[i]);
    return y;
}

/// QLinearMatMul's and QLinearConv's result: element i is round_half_even(scaled(i)) plus y's
/// zero point (one uint8 or int8 value, the result's type), saturated; `count` elements of dims d.
template <class Scaled>
value requantized(const ops::op_attrs& a, const value& y_zero_point, const shape& d, std::size_t count, Scaled scaled) {
    const value yz = y_zero_point.dense_value();
    if (yz.size() != 1 || (yz.type() != dtype::u8 && yz.type() != dtype::i8)) fail(a, "y_zero_point is not one uint8 or int8 value");
    value y = value::zeros(yz.type(), d);
    visit_type(yz.type(), [&](auto t) {
        using Q = typename decltype(t)::type;
        if constexpr (std::is_same_v<Q, std::uint8_t> || std::is_same_v<Q, std::int8_t>) {
            const float z = static_cast<float>(yz.as<Q>()[0]);
            Q* o = y.as<Q>();
            for (std::size_t i = 0; i < count; ++i) o[i] = quantized<Q>(scaled(i), z);
        }
    });
    return y;
}

/// sum_k (A[.., m, k] - za[m]) * (B[.., k, n] - zb[n]) under MatMul's broadcasting (1-D A or B
/// as ONNX's MatMul reads them), into `out` of the output's dims (out_dims, from MatMul's shape
/// rule); za has one value or one per row of A, zb one or one per column of B.
inline void integer_matmul(const ops::op_attrs& a, const value& A, const value& B, const std::vector<std::int32_t>& za,
                           const std::vector<std::int32_t>& zb, const shape& out_dims, std::vector<std::int64_t>& out) {
    shape ad = A.dims(), bd = B.dims();
    if (ad.size() == 1) ad.insert(ad.begin(), 1);
    if (bd.size() == 1) bd.push_back(1);
    const std::int64_t M = ad[ad.size() - 2], K = ad.back(), N = bd.back();
    if (za.size() != 1 && static_cast<std::int64_t>(za.size()) != M)
        fail(a, "A's zero point has " + std::to_string(za.size()) + " values (one, or one per row: " + std::to_string(M) + ")");
    if (zb.size() != 1 && static_cast<std::int64_t>(zb.size()) != N)
        fail(a, "B's zero point has " + std::to_string(zb.size()) + " values (one, or one per column: " + std::to_string(N) + ")");
    const std::vector<std::int32_t> av = as_int32(a, A, "A"), bv = as_int32(a, B, "B");
    const shape ab(ad.begin(), ad.end() - 2), bb(bd.begin(), bd.end() - 2);
    // The broadcast batch dims: the output's (by MatMul's shape rule) but M and N, where kept.
    const std::size_t kept = (A.dims().size() > 1 ? 1 : 0) + (B.dims().size() > 1 ? 1 : 0);
    const shape batch(out_dims.begin(), out_dims.end() - static_cast<std::ptrdiff_t>(kept));
    const shape sa = broadcast_strides(ab, batch), sb = broadcast_strides(bb, batch);
    const std::int64_t count = element_count(batch);
    out.assign(static_cast<std::size_t>(count * M * N), 0);
    shape idx(batch.size(), 0);
    for (std::int64_t b = 0; b < count; ++b) {
        std::int64_t oa = 0, ob = 0;
        for (std::size_t i = 0; i < batch.size(); ++i) oa += idx[i] * sa[i], ob += idx[i] * sb[i];
        const std::int32_t* pa = av.data() + oa * M * K;
        const std::int32_t* pb = bv.data() + ob * K * N;
        std::int64_t* po = out.data() + b * M * N;
        for (std::int64_t m = 0; m < M; ++m) {
            const std::int32_t zam = za[za.size() == 1 ? 0 : static_cast<std::size_t>(m)];
            for (std::int64_t k = 0; k < K; ++k) {
                const std::int64_t x = pa[m * K + k] - zam;
                for (std::int64_t n = 0; n < N; ++n)
                    po[m * N + n] += x * (pb[k * N + n] - zb[zb.size() == 1 ? 0 : static_cast<std::size_t>(n)]);
            }
        }
        for (std::size_t i = batch.size(); i-- > 0;) {
            if (++idx[i] < batch[i]) break;
            idx[i] = 0;
        }
    }
}

}  // namespace detail

/// MatMulInteger: int32 products of uint8 / int8 operands less their zero points.
inline typed_fn matmul_integer(const ops::op_attrs& a0, const ops::node_source&) {
    return [a = a0](const values& xs) {
        const value A = in(xs, 0, a).dense_value(), B = in(xs, 1, a).dense_value();
        const std::vector<std::int32_t> za = xs.size() > 2 ? detail::zero_points(a, xs[2], "a_zero_point", A) : std::vector<std::int32_t>{0};
        const std::vector<std::int32_t> zb = xs.size() > 3 ? detail::zero_points(a, xs[3], "b_zero_point", B) : std::vector<std::int32_t>{0};
        const shape out_dims = rule(a, xs).at(0);
        std::vector<std::int64_t> acc;
        detail::integer_matmul(a, A, B, za, zb, out_dims, acc);
        return values{detail::int32_value(acc, out_dims)};
    };
}

/// QLinearMatMul: the integer product rescaled by a_scale * b_scale[n] / y_scale (in f32, ties
/// to even) and shifted by y's zero point, saturated to its type; a's and y's scale and zero
/// point one value each, b's one or one per column n (as ONNX defines them).
inline typed_fn qlinear_matmul(const ops::op_attrs& a0, const ops::node_source&) {
    return [a = a0](const values& xs) {
        if (xs.size() != 8) fail(a, "takes 8 inputs");
        const value A = xs[0].dense_value(), B = xs[3].dense_value();
        const std::int64_t N = B.dims().size() == 1 ? 1 : B.dims().back();
        auto scales = [&](std::size_t i, const char* what, bool per_column) {
            const value s = xs[i].dense_value();
            if (s.type() != dtype::f32 || s.dims().size() > 1 || (s.size() != 1 && !(per_column && static_cast<std::int64_t>(s.size()) == N)))
                fail(a, std::string(what) + (per_column ? " is not one f32 value or one per column of b" : " is not one f32 value"));
            return std::vector<float>(s.as<float>(), s.as<float>() + s.size());
        };
        const float as = scales(1, "a_scale", false)[0], ys = scales(6, "y_scale", false)[0];
        const std::vector<float> bs = scales(4, "b_scale", true);
        const std::vector<std::int32_t> za{detail::one_point(a, xs[2], "a_zero_point", A)};
        const std::vector<std::int32_t> zb = detail::zero_points(a, xs[5], "b_zero_point", B);
        const shape out_dims = rule(a, xs).at(0);
        std::vector<std::int64_t> acc;
        detail::integer_matmul(a, A, B, za, zb, out_dims, acc);
        std::vector<float> m(bs.size());
        for (std::size_t n = 0; n < bs.size(); ++n) m[n] = as * bs[n] / ys;
        const std::size_t columns = static_cast<std::size_t>(N);
        return values{detail::requantized(a, xs[7], out_dims, acc.size(), [&](std::size_t i) {
            return static_cast<float>(acc[i]) * m[m.size() == 1 ? 0 : i % columns];
        })};
    };
}

namespace detail {

/// sum over the group's input channels and the window of (x - zx) * (w[m] - zw[m]) into `out`,
/// of the output's dims (out_dims, from Conv's shape rule); a padded position adds nothing.
inline void integer_conv(const ops::op_attrs& a, const value& X, const value& W, std::int32_t zx, const std::vector<std::int32_t>& zw,
                         const shape& out_dims, std::vector<std::int64_t>& out) {
    const shape &xd = X.dims(), &wd = W.dims();
    const std::size_t sp = xd.size() - 2;
    const ops::rules::window k = ops::rules::window_of(a, sp, &wd);
    const std::int64_t N = xd[0], C = xd[1], M = wd[0], G = a.i("group"), Cg = C / G, Mg = M / G;
    if (zw.size() != 1 && static_cast<std::int64_t>(zw.size()) != M)
        fail(a, "w's zero point has " + std::to_string(zw.size()) + " values (one, or one per output channel: " + std::to_string(M) + ")");
    const std::vector<std::int32_t> xv = as_int32(a, X, "x"), wv = as_int32(a, W, "w");
    const shape xs(xd.begin() + 2, xd.end()), os(out_dims.begin() + 2, out_dims.end()), ks(wd.begin() + 2, wd.end());
    const std::int64_t in_sp = element_count(xs), out_sp = element_count(os), k_sp = element_count(ks);
    // For every output position and window position, the input position it reads (-1: padding).
    std::vector<std::int64_t> at(static_cast<std::size_t>(out_sp * k_sp), -1);
    shape o(sp, 0);
    for (std::int64_t oi = 0; oi < out_sp; ++oi) {
        shape w(sp, 0);
        for (std::int64_t wi = 0; wi < k_sp; ++wi) {
            std::int64_t off = 0;
            bool inside = true;
            for (std::size_t i = 0; i < sp; ++i) {
                const std::int64_t pos = o[i] * k.strides[i] - k.pads[i] + w[i] * k.dilations[i];
                inside = inside && pos >= 0 && pos < xs[i];
                off = off * xs[i] + pos;
            }
            if (inside) at[static_cast<std::size_t>(oi * k_sp + wi)] = off;
            for (std::size_t i = sp; i-- > 0;) {
                if (++w[i] < ks[i]) break;
                w[i] = 0;
            }
        }
        for (std::size_t i = sp; i-- > 0;) {
            if (++o[i] < os[i]) break;
            o[i] = 0;
        }
    }
    out.assign(static_cast<std::size_t>(N * M * out_sp), 0);
    for (std::int64_t n = 0; n < N; ++n)
        for (std::int64_t m = 0; m < M; ++m) {
            const std::int64_t zwm = zw[zw.size() == 1 ? 0 : static_cast<std::size_t>(m)];
            std::int64_t* po = out.data() + (n * M + m) * out_sp;
            for (std::int64_t c = 0; c < Cg; ++c) {
                const std::int32_t* px = xv.data() + (n * C + (m / Mg) * Cg + c) * in_sp;
                const std::int32_t* pw = wv.data() + (m * Cg + c) * k_sp;
                for (std::int64_t oi = 0; oi < out_sp; ++oi) {
                    const std::int64_t* ai = at.data() + oi * k_sp;
                    std::int64_t sum = 0;
                    for (std::int64_t wi = 0; wi < k_sp; ++wi)
                        if (ai[wi] >= 0) sum += (px[ai[wi]] - zx) * (pw[wi] - zwm);
                    po[oi] += sum;
                }
            }
        }
}

}  // namespace detail

/// ConvInteger: int32 sums of uint8 / int8 x and w less their zero points.
inline typed_fn conv_integer(const ops::op_attrs& a0, const ops::node_source&) {
    return [a = a0](const values& xs) {
        const value X = in(xs, 0, a).dense_value(), W = in(xs, 1, a).dense_value();
        const std::int32_t zx = xs.size() > 2 ? detail::one_point(a, xs[2], "x_zero_point", X) : 0;
        const std::vector<std::int32_t> zw = xs.size() > 3 ? detail::zero_points(a, xs[3], "w_zero_point", W) : std::vector<std::int32_t>{0};
        const shape out_dims = rule(a, xs).at(0);
        std::vector<std::int64_t> acc;
        detail::integer_conv(a, X, W, zx, zw, out_dims, acc);
        return values{detail::int32_value(acc, out_dims)};
    };
}

/// QLinearConv: ConvInteger's sums plus the bias, rescaled by x_scale * w_scale[m] / y_scale (in
/// f32, ties to even) onto y's zero point, saturated to its type.
inline typed_fn qlinear_conv(const ops::op_attrs& a0, const ops::node_source&) {
    return [a = a0](const values& xs) {
        if (xs.size() < 8) fail(a, "takes 8 or 9 inputs");
        const value X = xs[0].dense_value(), W = xs[3].dense_value();
        auto scales = [&](std::size_t i, const char* what) {
            const value s = xs[i].dense_value();
            if (s.type() != dtype::f32 || s.dims().size() > 1) fail(a, std::string(what) + " is not f32 of rank 0 or 1");
            return std::vector<float>(s.as<float>(), s.as<float>() + s.size());
        };
        const std::vector<float> xsc = scales(1, "x_scale"), wsc = scales(4, "w_scale"), ysc = scales(6, "y_scale");
        if (xsc.size() != 1 || ysc.size() != 1) fail(a, "x_scale and y_scale are one value each");
        const std::int64_t M = W.dims().at(0);
        if (wsc.size() != 1 && static_cast<std::int64_t>(wsc.size()) != M)
            fail(a, "w_scale has " + std::to_string(wsc.size()) + " values (one, or one per output channel: " + std::to_string(M) + ")");
        const std::int32_t zx = detail::one_point(a, xs[2], "x_zero_point", X);
        const std::vector<std::int32_t> zw = detail::zero_points(a, xs[5], "w_zero_point", W);
        std::vector<std::int32_t> bias(static_cast<std::size_t>(M), 0);
        if (xs.size() > 8) {
            const value b = xs[8].dense_value();
            if (b.type() != dtype::i32) fail(a, "B is " + std::string(name_of(b.type())) + " (int32 taken)");
            bias.assign(b.as<std::int32_t>(), b.as<std::int32_t>() + b.size());  // [M]: checked by the shape rule
        }
        const shape out_dims = rule(a, xs).at(0);
        std::vector<std::int64_t> acc;
        detail::integer_conv(a, X, W, zx, zw, out_dims, acc);
        const std::int64_t plane = element_count(shape(out_dims.begin() + 2, out_dims.end()));
        return values{detail::requantized(a, xs[7], out_dims, acc.size(), [&](std::size_t i) {
            const auto m = static_cast<std::size_t>((static_cast<std::int64_t>(i) / plane) % M);
            return static_cast<float>(acc[i] + bias[m]) * (xsc[0] * wsc[wsc.size() == 1 ? 0 : m] / ysc[0]);
        })};
    };
}

}  // namespace typed
namespace kernels {

// The typed_kernels<Tag> facets of this family's ops.
template <> inline constexpr typed_binding typed_kernels<ops::QuantizeLinear>{typed::quantize_linear};
template <> inline constexpr typed_binding typed_kernels<ops::DequantizeLinear>{typed::dequantize_linear};
template <> inline constexpr typed_binding typed_kernels<ops::MatMulInteger>{typed::matmul_integer};
template <> inline constexpr typed_binding typed_kernels<ops::QLinearMatMul>{typed::qlinear_matmul};
template <> inline constexpr typed_binding typed_kernels<ops::DynamicQuantizeLinear>{typed::dynamic_quantize_linear};
template <> inline constexpr typed_binding typed_kernels<ops::QLinearAdd>{typed::qlinear_add};
template <> inline constexpr typed_binding typed_kernels<ops::ConvInteger>{typed::conv_integer};
template <> inline constexpr typed_binding typed_kernels<ops::QLinearConv>{typed::qlinear_conv};

}  // namespace kernels
}  // namespace exec
SGMATCH_END_NAMESPACE
