// sgmatch/exec/kernels/quantize.hpp - QuantizeLinear and DequantizeLinear over typed values.
//
// A scale (f32) and a zero point (uint8 or int8; int32 for DequantizeLinear's int32 input),
// per tensor (a scalar, or a 1-D tensor of one value) or per axis (a 1-D tensor of x's extent
// along `axis`, negative counting from the end), the zero point of the scale's shape or absent
// (0; QuantizeLinear's result is then uint8):
//   QuantizeLinear    y = saturate(round_half_even(x / scale) + zero_point), x f32 or int32
//                     (the division in f32, as ONNX's reference computes it); NaN gives the zero
//                     point.
//   DequantizeLinear  y = (x - zero_point) * scale, f32.
// Anything else (a 2-D scale, a zero point of another shape or type, an axis out of range) is
// refused naming the node.
#pragma once

#include <cmath>
#include <cstddef>
#include <cstdint>
#include <limits>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#include "sgmatch/detail/config.hpp"
#include "sgmatch/exec/kernels/typed_support.hpp"
#include "sgmatch/exec/value.hpp"

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

}  // namespace detail

inline typed_fn quantize_linear(const ops::op_attrs& a0, const ops::node_source&) {
    return [a = a0](const values& xs) {
        const value x = in(xs, 0, a).dense_value(), scale = in(xs, 1, a).dense_value();
        const bool has_zp = xs.size() > 2;
        const value zp = has_zp ? xs[2].dense_value() : value::zeros(dtype::u8, scale.dims());
        if (x.type() != dtype::f32 && x.type() != dtype::i32)
            fail(a, "x is " + std::string(name_of(x.type())) + " (f32 or int32 taken)");
        if (zp.type() != dtype::u8 && zp.type() != dtype::i8)
            fail(a, "the zero point is " + std::string(name_of(zp.type())) + " (uint8 or int8 taken)");
        const detail::quant_layout q = detail::quant_layout_of(a, x, scale, has_zp ? &zp : nullptr);
        value y = value::zeros(zp.type(), x.dims());
        const float* s = scale.as<float>();
        auto run = [&](auto out_tag, auto in_tag) {
            using Q = typename decltype(out_tag)::type;
            using X = typename decltype(in_tag)::type;
            const X* xv = x.as<X>();
            const Q* z = zp.as<Q>();
            Q* o = y.as<Q>();
            constexpr float lo = std::numeric_limits<Q>::min(), hi = std::numeric_limits<Q>::max();
            for (std::int64_t i = 0; i < x.size(); ++i) {
                const std::int64_t c = (i / q.inner) % q.extent;
                float v = std::nearbyint(static_cast<float>(xv[i]) / s[c]);  // ties to even (the default rounding mode)
                v = std::isnan(v) ? 0.0f : v;
                v += static_cast<float>(z[c]);
                o[i] = static_cast<Q>(v < lo ? lo : v > hi ? hi : v);
            }
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

inline typed_fn dequantize_linear(const ops::op_attrs& a0, const ops::node_source&) {
    return [a = a0](const values& xs) {
        const value x = in(xs, 0, a).dense_value(), scale = in(xs, 1, a).dense_value();
        const bool has_zp = xs.size() > 2;
        if (x.type() != dtype::u8 && x.type() != dtype::i8 && x.type() != dtype::i32)
            fail(a, "x is " + std::string(name_of(x.type())) + " (uint8, int8 or int32 taken)");
        const value zp = has_zp ? xs[2].dense_value() : value::zeros(x.type(), scale.dims());
        if (zp.type() != x.type())
            fail(a, "the zero point is " + std::string(name_of(zp.type())) + ", x " + std::string(name_of(x.type())));
        const detail::quant_layout q = detail::quant_layout_of(a, x, scale, has_zp ? &zp : nullptr);
        value y = value::zeros(dtype::f32, x.dims());
        const float* s = scale.as<float>();
        float* o = y.as<float>();
        visit_type(x.type(), [&](auto t) {
            using T = typename decltype(t)::type;
            if constexpr (std::is_same_v<T, std::uint8_t> || std::is_same_v<T, std::int8_t> || std::is_same_v<T, std::int32_t>) {
                const T* xv = x.as<T>();
                const T* z = zp.as<T>();
                if (std::is_same_v<T, std::int32_t>)
                    for (std::int64_t c = 0; c < zp.size(); ++c)
                        if (z[c] != 0) fail(a, "an int32 x takes no zero point but 0");
                for (std::int64_t i = 0; i < x.size(); ++i) {
                    const std::int64_t c = (i / q.inner) % q.extent;
                    o[i] = (static_cast<float>(xv[i]) - static_cast<float>(z[c])) * s[c];
                }
            }
        });
        return values{y};
    };
}

}  // namespace typed
}  // namespace exec
SGMATCH_END_NAMESPACE
