// sgmatch/exec/kernels/resize.hpp - ONNX Resize (and Upsample, which the ONNX front end writes
// as Resize): nearest, linear and cubic interpolation over any axes, every coordinate
// transformation ONNX names, on f32 values; scales or sizes read at run time.
//
//   exec::resize_spec s;                      // mode, coordinate transformation, rounding, ...
//   s.mode = exec::resize_mode::linear;
//   std::vector<float> y = exec::resize(x.data(), {1, 3, 32, 32}, {1, 3, 64, 64}, {1, 1, 2, 2}, s);
//
// Interpolation is separable: one axis at a time, the last axis first, which is the order of
// ONNX's own recursive definition (so tf_crop_and_resize's extrapolated values combine the same
// way). Taps outside the input read its edge; with exclude_outside their weights are dropped
// and the rest renormalized (cubic).
// Written to be obviously right, not fast: plain loops over row-major data (no xtensor, no
// oneDNN: its resampling primitive has one coordinate transformation and its own rounding).
#pragma once

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "sgmatch/detail/config.hpp"
#include "sgmatch/exec/error.hpp"
#include "sgmatch/exec/kernels/typed_support.hpp"
#include "sgmatch/exec/value.hpp"
#include "sgmatch/ops/attrs.hpp"
#include "sgmatch/ops/tensor.hpp"

SGMATCH_BEGIN_NAMESPACE
namespace exec {

enum class resize_mode { nearest, linear, cubic };
enum class resize_coordinates { half_pixel, pytorch_half_pixel, align_corners, asymmetric, tf_half_pixel_for_nn, tf_crop_and_resize };
enum class resize_rounding { round_prefer_floor, round_prefer_ceil, floor, ceil };

struct resize_spec {
    resize_mode mode = resize_mode::nearest;
    resize_coordinates coordinates = resize_coordinates::half_pixel;
    resize_rounding rounding = resize_rounding::round_prefer_floor;
    double cubic_a = -0.75;
    bool exclude_outside = false;
    double extrapolation = 0.0;  // tf_crop_and_resize: the value outside the input
    std::vector<double> roi;     // tf_crop_and_resize: starts then ends, normalized, 2 * rank values
};

namespace detail {

// The taps and weights of one output position along one axis.
struct resize_taps {
    std::vector<std::int64_t> index;
    std::vector<double> weight;
    bool outside = false;  // tf_crop_and_resize beyond the input: the extrapolation value
};

// The input coordinate of output position o. As ONNX defines it, the output's length here is
// in * scale unrounded (sizes given: scale = out / in).
inline double resize_source(const resize_spec& s, std::int64_t o, std::int64_t in, double scale, double start, double end) {
    const double x = static_cast<double>(o), len = static_cast<double>(in) * scale, last = static_cast<double>(in - 1);
    switch (s.coordinates) {
    case resize_coordinates::half_pixel: return (x + 0.5) / scale - 0.5;
    case resize_coordinates::pytorch_half_pixel: return len > 1 ? (x + 0.5) / scale - 0.5 : 0.0;
    case resize_coordinates::align_corners: return len == 1 ? 0.0 : x * last / (len - 1);
    case resize_coordinates::asymmetric: return x / scale;
    case resize_coordinates::tf_half_pixel_for_nn: return (x + 0.5) / scale;
    case resize_coordinates::tf_crop_and_resize:
        return len > 1 ? start * last + x * (end - start) * last / (len - 1) : 0.5 * (start + end) * last;
    }
    return 0.0;
}

inline std::vector<resize_taps> resize_axis_taps(const resize_spec& s, std::int64_t in, std::int64_t out, double scale, double start,
                                                 double end) {
    std::vector<resize_taps> taps(static_cast<std::size_t>(out));
    const auto clamp = [in](std::int64_t i) { return i < 0 ? std::int64_t{0} : i >= in ? in - 1 : i; };
    for (std::int64_t o = 0; o < out; ++o) {
        resize_taps& t = taps[static_cast<std::size_t>(o)];
        const double x = resize_source(s, o, in, scale, start, end);
        if (s.coordinates == resize_coordinates::tf_crop_and_resize && (x < 0 || x > static_cast<double>(in - 1))) {
            t.outside = true;
            continue;
        }
        const double fl = std::floor(x);
        if (s.mode == resize_mode::nearest) {
            double r = 0;
            switch (s.rounding) {
            case resize_rounding::round_prefer_floor: r = x == fl + 0.5 ? fl : std::round(x); break;
            case resize_rounding::round_prefer_ceil: r = x == fl + 0.5 ? fl + 1 : std::round(x); break;
            case resize_rounding::floor: r = fl; break;
            case resize_rounding::ceil: r = std::ceil(x); break;
            }
            t.index.push_back(clamp(static_cast<std::int64_t>(r)));
            t.weight.push_back(1.0);
            continue;
        }
        const auto base = static_cast<std::int64_t>(fl);
        const double f = x - fl;
        if (s.mode == resize_mode::linear) {
            t.index = {clamp(base), clamp(base + 1)};
            t.weight = {1.0 - f, f};
            continue;
        }
        const double A = s.cubic_a;
        const auto cubic = [A](double d) {  // Keys' kernel at distance d from a tap
            d = std::abs(d);
            if (d <= 1) return ((A + 2) * d - (A + 3)) * d * d + 1;
            if (d < 2) return ((A * d - 5 * A) * d + 8 * A) * d - 4 * A;
            return 0.0;
        };
        double sum = 0;
        for (std::int64_t k = -1; k <= 2; ++k) {
            const std::int64_t i = base + k;
            double w = cubic(f - static_cast<double>(k));
            if (s.exclude_outside && (i < 0 || i >= in)) w = 0;
            t.index.push_back(clamp(i));
            t.weight.push_back(w);
            sum += w;
        }
        if (s.exclude_outside && sum != 0)
            for (double& w : t.weight) w /= sum;
    }
    return taps;
}

}  // namespace detail

/// x (row-major, dims `in`) resized to `out`. `scales` are the scales the coordinate
/// transformation divides by (given, or out / in when the sizes were given).
inline std::vector<float> resize(const float* x, const ops::dims& in, const ops::dims& out, const std::vector<double>& scales,
                                 const resize_spec& s) {
    const std::size_t rank = in.size();
    if (out.size() != rank || scales.size() != rank)
        throw exec_error("sgmatch::exec::resize: " + std::to_string(out.size()) + " sizes and " + std::to_string(scales.size()) +
                         " scales for an input of rank " + std::to_string(rank));
    if (s.coordinates == resize_coordinates::tf_crop_and_resize && s.roi.size() != 2 * rank)
        throw exec_error("sgmatch::exec::resize: tf_crop_and_resize needs a roi of " + std::to_string(2 * rank) + " values");
    ops::dims shape = in;
    std::size_t total = 1;
    for (auto d : in) total *= static_cast<std::size_t>(d);
    std::vector<float> cur(x, x + total), next;
    for (std::size_t ax = rank; ax-- > 0;) {
        const std::int64_t n = shape[ax], o = out[ax];
        if (o < 0 || (o > 0 && n == 0))
            throw exec_error("sgmatch::exec::resize: cannot resize an axis of " + std::to_string(n) + " to " + std::to_string(o));
        const bool identity = o == n && scales[ax] == 1.0 &&
                              (s.coordinates == resize_coordinates::half_pixel || s.coordinates == resize_coordinates::asymmetric ||
                               s.coordinates == resize_coordinates::pytorch_half_pixel);  // x = o exactly
        if (identity) continue;
        const double start = s.roi.empty() ? 0 : s.roi[ax], end = s.roi.empty() ? 1 : s.roi[ax + rank];
        const auto taps = detail::resize_axis_taps(s, n, o, scales[ax], start, end);
        std::size_t outer = 1, inner = 1;
        for (std::size_t i = 0; i < ax; ++i) outer *= static_cast<std::size_t>(shape[i]);
        for (std::size_t i = ax + 1; i < rank; ++i) inner *= static_cast<std::size_t>(shape[i]);
        const auto un = static_cast<std::size_t>(n), uo = static_cast<std::size_t>(o);
        next.assign(outer * uo * inner, 0.0f);
        for (std::size_t b = 0; b < outer; ++b)
            for (std::size_t j = 0; j < uo; ++j) {
                const auto& t = taps[j];
                float* d = next.data() + (b * uo + j) * inner;
                for (std::size_t k = 0; k < inner; ++k) {
                    if (t.outside) {
                        d[k] = static_cast<float>(s.extrapolation);
                        continue;
                    }
                    double acc = 0;
                    for (std::size_t q = 0; q < t.index.size(); ++q)
                        acc += t.weight[q] * cur[(b * un + static_cast<std::size_t>(t.index[q])) * inner + k];
                    d[k] = static_cast<float>(acc);
                }
            }
        cur.swap(next);
        shape[ax] = o;
    }
    return cur;
}

namespace typed {

/// The interpolation Resize's attributes ask for.
inline resize_spec resize_spec_of(const ops::op_attrs& a) {
    resize_spec s;
    const std::string_view mode = a.s("mode"), ctm = a.s("coordinate_transformation_mode"), nm = a.s("nearest_mode");
    s.mode = mode == "linear" ? resize_mode::linear : mode == "cubic" ? resize_mode::cubic : resize_mode::nearest;
    using rc = resize_coordinates;
    s.coordinates = ctm == "pytorch_half_pixel"     ? rc::pytorch_half_pixel
                    : ctm == "align_corners"        ? rc::align_corners
                    : ctm == "asymmetric"           ? rc::asymmetric
                    : ctm == "tf_half_pixel_for_nn" ? rc::tf_half_pixel_for_nn
                    : ctm == "tf_crop_and_resize"   ? rc::tf_crop_and_resize
                                                    : rc::half_pixel;
    using rr = resize_rounding;
    s.rounding = nm == "round_prefer_ceil" ? rr::round_prefer_ceil : nm == "floor" ? rr::floor : nm == "ceil" ? rr::ceil : rr::round_prefer_floor;
    s.cubic_a = a.f("cubic_coeff_a");
    s.exclude_outside = a.i("exclude_outside") != 0;
    s.extrapolation = a.f("extrapolation_value");
    return s;
}

/// One run of Resize: the data, the output's dims (by the description's rule, which checks them
/// against the input), the scales the coordinate transformation divides by and the spec with
/// its roi.
struct resize_call {
    value x;
    ops::dims out;
    std::vector<double> scales;
    resize_spec spec;
    bool empty() const {
        for (auto d : out)
            if (d == 0) return true;
        return false;
    }
};

/// Resize's inputs read: roi, scales and sizes from the values at run time.
inline resize_call resize_call_of(const ops::op_attrs& a, const resize_spec& s, const values& xs) {
    if (xs.empty() || xs[0].type() != dtype::f32) fail(a, "the data is not float");
    resize_call c{xs[0].dense_value(), {}, {}, s};
    // What the rule reads: every input's dims, sizes as integers, roi and scales as reals.
    const ops::shape_inputs si = shapes_of(xs);
    c.out = rule(a, si).at(0);
    auto reals = [&](std::size_t i) { return i < si.reals.size() && si.reals[i] ? *si.reals[i] : std::vector<double>{}; };
    if (c.spec.coordinates == resize_coordinates::tf_crop_and_resize) c.spec.roi = reals(1);
    const bool by_sizes = xs.size() > 3 && xs[3].size() > 0;
    const std::vector<double> given = by_sizes ? std::vector<double>{} : reals(2);
    for (std::size_t i = 0; i < c.out.size(); ++i)
        c.scales.push_back(by_sizes ? static_cast<double>(c.out[i]) / static_cast<double>(std::max<std::int64_t>(c.x.dims()[i], 1))
                                    : given.at(i));
    return c;
}

/// A resize_call on the reference kernel.
inline values run_resize(const resize_call& c) {
    if (c.empty()) return values{value::zeros(dtype::f32, c.out)};  // no taps to lay out
    return values{value::of<float>(c.out, resize(c.x.as<float>(), c.x.dims(), c.out, c.scales, c.spec))};
}

/// Resize's kernel.
inline typed_fn resize(const ops::op_attrs& a0, const ops::node_source&) {
    return [a = a0, s = resize_spec_of(a0)](const values& xs) { return run_resize(resize_call_of(a, s, xs)); };
}

}  // namespace typed
namespace kernels {

// The typed_kernels<Tag> facets of this family's ops.
template <> inline constexpr typed_binding typed_kernels<ops::Resize>{typed::resize};

}  // namespace kernels
}  // namespace exec
SGMATCH_END_NAMESPACE
