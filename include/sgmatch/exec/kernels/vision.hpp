// sgmatch/exec/kernels/vision.hpp - the detection and sampling ops (ops/vision.hpp):
// NonMaxSuppression on f32 boxes and scores; RoiAlign and GridSample on f32 and f64 (computed in
// double); MaxUnpool on every element type.
#pragma once

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <string>
#include <string_view>
#include <type_traits>
#include <vector>

#include "sgmatch/detail/config.hpp"
#include "sgmatch/exec/kernels/typed_support.hpp"
#include "sgmatch/exec/value.hpp"
#include "sgmatch/ops/vision.hpp"

SGMATCH_BEGIN_NAMESPACE
namespace exec {
namespace typed {

namespace vision_detail {

/// An optional scalar parameter (a one-value tensor), or `absent` when the input is not given.
inline double scalar_param(const ops::op_attrs& a, const values& xs, std::size_t i, const char* what, double absent) {
    if (xs.size() <= i) return absent;
    const value v = xs[i].dense_value();
    if (v.size() == 0) return absent;  // an empty tensor for an input left out
    if (v.size() != 1) fail(a, std::string(what) + " holds " + std::to_string(v.size()) + " values, not one");
    const auto s = v.as_constant().scalar();
    if (!s) fail(a, std::string(what) + " is not a number");
    return *s;
}

// A box as its two extremes on each axis.
struct box {
    double y0, x0, y1, x1;
};
inline box box_at(const float* b, bool center) {
    if (center) {
        const double xc = b[0], yc = b[1], w = b[2], h = b[3];
        return {yc - h / 2, xc - w / 2, yc + h / 2, xc + w / 2};
    }
    return {std::min<double>(b[0], b[2]), std::min<double>(b[1], b[3]), std::max<double>(b[0], b[2]), std::max<double>(b[1], b[3])};
}
// Whether two boxes overlap by an IoU above `threshold` (boxes without area never do).
inline bool overlaps(const box& p, const box& q, double threshold) {
    const double ix = std::min(p.x1, q.x1) - std::max(p.x0, q.x0), iy = std::min(p.y1, q.y1) - std::max(p.y0, q.y0);
    if (ix <= 0 || iy <= 0) return false;
    const double ap = (p.x1 - p.x0) * (p.y1 - p.y0), aq = (q.x1 - q.x0) * (q.y1 - q.y0);
    if (ap <= 0 || aq <= 0) return false;
    const double inter = ix * iy;
    return inter / (ap + aq - inter) > threshold;
}

// RoiAlign's bilinear cell along one axis of `size` pixels: the pixels below and above p (both
// the last one, p moved onto it, at or past the last).
inline void cell(double& p, std::int64_t size, std::int64_t& lo, std::int64_t& hi) {
    lo = static_cast<std::int64_t>(p);
    if (lo >= size - 1) {
        lo = hi = size - 1;
        p = static_cast<double>(lo);
    } else {
        hi = lo + 1;
    }
}

}  // namespace vision_detail

inline typed_fn non_max_suppression(const ops::op_attrs& a0, const ops::node_source&) {
    return [a = a0](const values& xs) {
        const value boxes = in(xs, 0, a).dense_value(), scores = in(xs, 1, a).dense_value();
        if (boxes.type() != dtype::f32 || scores.type() != dtype::f32) fail(a, "boxes and scores must be float");
        const shape& bd = boxes.dims();
        const shape& sd = scores.dims();
        if (bd.size() != 3 || bd[2] != 4) fail(a, "boxes is " + to_string(bd) + ", not [batches, boxes, 4]");
        if (sd.size() != 3 || sd[0] != bd[0] || sd[2] != bd[1])
            fail(a, "scores is " + to_string(sd) + " for boxes " + to_string(bd) + " (not [batches, classes, boxes])");
        const double max_out = vision_detail::scalar_param(a, xs, 2, "max_output_boxes_per_class", 0);
        const double iou = vision_detail::scalar_param(a, xs, 3, "iou_threshold", 0);
        const bool by_score = xs.size() > 4 && xs[4].size() > 0;
        const double min_score = vision_detail::scalar_param(a, xs, 4, "score_threshold", 0);
        if (iou < 0 || iou > 1) fail(a, "iou_threshold " + std::to_string(iou) + " is outside [0, 1]");
        const auto keep = static_cast<std::size_t>(std::clamp<double>(max_out, 0, static_cast<double>(bd[1])));
        const bool center = a.i("center_point_box") != 0;
        const float* b = boxes.as<float>();
        const float* s = scores.as<float>();
        std::vector<std::int64_t> rows;
        std::vector<std::int64_t> order;
        std::vector<vision_detail::box> taken;
        for (std::int64_t batch = 0; batch < bd[0]; ++batch)
            for (std::int64_t cls = 0; cls < sd[1] && keep > 0; ++cls) {
                const float* cs = s + (batch * sd[1] + cls) * sd[2];
                order.clear();
                for (std::int64_t i = 0; i < sd[2]; ++i)
                    if (!by_score || cs[i] > min_score) order.push_back(i);
                std::stable_sort(order.begin(), order.end(), [&](std::int64_t p, std::int64_t q) { return cs[p] > cs[q]; });
                taken.clear();
                for (const std::int64_t i : order) {
                    const vision_detail::box c = vision_detail::box_at(b + (batch * bd[1] + i) * 4, center);
                    if (std::any_of(taken.begin(), taken.end(), [&](const vision_detail::box& t) { return vision_detail::overlaps(t, c, iou); }))
                        continue;
                    taken.push_back(c);
                    rows.insert(rows.end(), {batch, cls, i});
                    if (taken.size() == keep) break;
                }
            }
        return values{value::of<std::int64_t>({static_cast<std::int64_t>(rows.size() / 3), 3}, rows)};
    };
}

inline typed_fn roi_align(const ops::op_attrs& a0, const ops::node_source&) {
    return [a = a0](const values& xs) {
        const value& x0 = in(xs, 0, a);
        require_type(a, x0);
        const shape out_dims = rule(a, xs).at(0);
        const value x = cast_to(x0, dtype::f64), rois = cast_to(in(xs, 1, a), dtype::f64);
        const value idx = in(xs, 2, a).dense_value();
        if (idx.type() != dtype::i64 && idx.type() != dtype::i32) fail(a, "batch_indices must be int64 or int32");
        const std::vector<std::int64_t> batch = idx.to_ints();
        const std::int64_t N = x.dims()[0], C = x.dims()[1], H = x.dims()[2], W = x.dims()[3];
        if (H == 0 || W == 0) fail(a, "X " + to_string(x.dims()) + " has no pixels");
        const std::int64_t oh = out_dims[2], ow = out_dims[3], ratio = a.i("sampling_ratio");
        const double scale = a.f("spatial_scale");
        const bool half_pixel = a.s("coordinate_transformation_mode") == "half_pixel";
        const double shift = half_pixel ? 0.5 : 0.0;
        const double* px = x.as<double>();
        const double* pr = rois.as<double>();
        std::vector<double> out(static_cast<std::size_t>(element_count(out_dims)));
        for (std::int64_t r = 0; r < out_dims[0]; ++r) {
            const std::int64_t n = batch[static_cast<std::size_t>(r)];
            if (n < 0 || n >= N) fail(a, "batch index " + std::to_string(n) + " is out of range for " + std::to_string(N) + " images");
            const double* roi = pr + r * 4;
            const double x0r = roi[0] * scale - shift, y0r = roi[1] * scale - shift;
            double rw = roi[2] * scale - shift - x0r, rh = roi[3] * scale - shift - y0r;
            if (!half_pixel) rw = std::max(rw, 1.0), rh = std::max(rh, 1.0);
            const double bh = rh / static_cast<double>(oh), bw = rw / static_cast<double>(ow);
            // Samples per bin and axis: ceil(bin size) unless given (none for an empty region).
            auto grid = [&](double size, std::int64_t bins) -> std::int64_t {
                if (ratio > 0) return ratio;
                const double g = std::ceil(size / static_cast<double>(bins));
                if (!(g <= 4096)) fail(a, "a region of " + std::to_string(size) + " pixels: over 4096 samples per bin and axis");
                return g > 0 ? static_cast<std::int64_t>(g) : 0;
            };
            const std::int64_t gh = grid(rh, oh), gw = grid(rw, ow);
            const double count = static_cast<double>(std::max<std::int64_t>(gh * gw, 1));
            for (std::int64_t c = 0; c < C; ++c) {
                const double* img = px + (n * C + c) * H * W;
                for (std::int64_t i = 0; i < oh; ++i)
                    for (std::int64_t j = 0; j < ow; ++j) {
                        double sum = 0;
                        for (std::int64_t u = 0; u < gh; ++u) {
                            double y = y0r + static_cast<double>(i) * bh + (static_cast<double>(u) + 0.5) * bh / static_cast<double>(gh);
                            for (std::int64_t v = 0; v < gw; ++v) {
                                double xx = x0r + static_cast<double>(j) * bw + (static_cast<double>(v) + 0.5) * bw / static_cast<double>(gw);
                                // Bilinear, outside [-1, H] x [-1, W] nothing, the edge clamped.
                                if (y < -1.0 || y > static_cast<double>(H) || xx < -1.0 || xx > static_cast<double>(W)) continue;
                                double yy = std::max(y, 0.0), xc = std::max(xx, 0.0);
                                std::int64_t yl, yh, xl, xh;
                                vision_detail::cell(yy, H, yl, yh);
                                vision_detail::cell(xc, W, xl, xh);
                                const double ly = yy - static_cast<double>(yl), lx = xc - static_cast<double>(xl);
                                sum += (1 - ly) * (1 - lx) * img[yl * W + xl] + (1 - ly) * lx * img[yl * W + xh] +
                                       ly * (1 - lx) * img[yh * W + xl] + ly * lx * img[yh * W + xh];
                            }
                        }
                        out[static_cast<std::size_t>(((r * C + c) * oh + i) * ow + j)] = sum / count;
                    }
            }
        }
        return values{cast_to(value::of<double>(out_dims, out), x0.type())};
    };
}

namespace vision_detail {

// GridSample's coordinates, as PyTorch's grid_sampler_2d computes them.
struct sampler {
    std::int64_t size;  // pixels along the axis
    bool align;         // align_corners
    int padding;        // 0 zeros, 1 border, 2 reflection

    // A grid coordinate in [-1, 1] as a pixel coordinate.
    double unnormalize(double c) const {
        return align ? (c + 1) / 2 * static_cast<double>(size - 1) : ((c + 1) * static_cast<double>(size) - 1) / 2;
    }
    // x reflected into [lo2 / 2, hi2 / 2] (bounds given doubled).
    static double reflect(double x, double lo2, double hi2) {
        if (lo2 == hi2) return 0;
        const double lo = lo2 / 2, span = (hi2 - lo2) / 2;
        x = std::fabs(x - lo);
        const double extra = std::fmod(x, span);
        const auto flips = static_cast<std::int64_t>(std::floor(x / span));
        return flips % 2 == 0 ? extra + lo : span - extra + lo;
    }
    // A pixel coordinate after padding: clamped to the border, or reflected and clamped.
    double padded(double x) const {
        const double last = static_cast<double>(size - 1);
        if (padding == 1) return std::clamp(x, 0.0, last);
        if (padding == 2) {
            x = align ? reflect(x, 0, 2 * last) : reflect(x, -1, 2 * static_cast<double>(size) - 1);
            return std::clamp(x, 0.0, last);
        }
        return x;
    }
};

inline double cubic1(double x, double A) { return ((A + 2) * x - (A + 3)) * x * x + 1; }              // |x| <= 1
inline double cubic2(double x, double A) { return ((A * x - 5 * A) * x + 8 * A) * x - 4 * A; }         // 1 < |x| < 2

}  // namespace vision_detail

inline typed_fn grid_sample(const ops::op_attrs& a0, const ops::node_source&) {
    return [a = a0](const values& xs) {
        const value& x0 = in(xs, 0, a);
        require_type(a, x0);
        const shape out_dims = rule(a, xs).at(0);
        const value x = cast_to(x0, dtype::f64), grid = cast_to(in(xs, 1, a), dtype::f64);
        const std::int64_t N = x.dims()[0], C = x.dims()[1], H = x.dims()[2], W = x.dims()[3], Ho = out_dims[2], Wo = out_dims[3];
        if (H == 0 || W == 0) fail(a, "X " + to_string(x.dims()) + " has no pixels");
        const std::string_view mode = a.s("mode"), pm = a.s("padding_mode");
        const int padding = pm == "border" ? 1 : pm == "reflection" ? 2 : 0;
        const bool align = a.i("align_corners") != 0;
        const vision_detail::sampler sx{W, align, padding}, sy{H, align, padding};
        const double* px = x.as<double>();
        const double* pg = grid.as<double>();
        std::vector<double> out(static_cast<std::size_t>(element_count(out_dims)));
        for (std::int64_t n = 0; n < N; ++n)
            for (std::int64_t c = 0; c < C; ++c) {
                const double* img = px + (n * C + c) * H * W;
                // A pixel, zero outside the image.
                auto at = [&](std::int64_t yy, std::int64_t xx) { return yy >= 0 && yy < H && xx >= 0 && xx < W ? img[yy * W + xx] : 0.0; };
                for (std::int64_t i = 0; i < Ho; ++i)
                    for (std::int64_t j = 0; j < Wo; ++j) {
                        const double* g = pg + ((n * Ho + i) * Wo + j) * 2;
                        const double ux = sx.unnormalize(g[0]), uy = sy.unnormalize(g[1]);
                        double v = 0;
                        if (!std::isfinite(ux) || !std::isfinite(uy)) {
                            v = 0;  // nowhere in the image
                        } else if (mode == "bicubic") {
                            // The 4x4 pixels around the point, each tap padded on its own.
                            const double fx = std::floor(ux), fy = std::floor(uy), tx = ux - fx, ty = uy - fy;
                            constexpr double A = -0.75;
                            const double wx[4] = {vision_detail::cubic2(tx + 1, A), vision_detail::cubic1(tx, A), vision_detail::cubic1(1 - tx, A),
                                                  vision_detail::cubic2(2 - tx, A)};
                            const double wy[4] = {vision_detail::cubic2(ty + 1, A), vision_detail::cubic1(ty, A), vision_detail::cubic1(1 - ty, A),
                                                  vision_detail::cubic2(2 - ty, A)};
                            for (int r = 0; r < 4; ++r) {
                                double row = 0;
                                for (int k = 0; k < 4; ++k) {
                                    const double tapx = sx.padded(fx - 1 + k), tapy = sy.padded(fy - 1 + r);
                                    row += wx[k] * at(static_cast<std::int64_t>(tapy), static_cast<std::int64_t>(tapx));
                                }
                                v += wy[r] * row;
                            }
                        } else {
                            const double cx = sx.padded(ux), cy = sy.padded(uy);
                            if (mode == "nearest") {
                                v = at(static_cast<std::int64_t>(std::nearbyint(cy)), static_cast<std::int64_t>(std::nearbyint(cx)));
                            } else {
                                const double fx = std::floor(cx), fy = std::floor(cy), lx = cx - fx, ly = cy - fy;
                                const auto x0i = static_cast<std::int64_t>(fx), y0i = static_cast<std::int64_t>(fy);
                                v = (1 - ly) * (1 - lx) * at(y0i, x0i) + (1 - ly) * lx * at(y0i, x0i + 1) + ly * (1 - lx) * at(y0i + 1, x0i) +
                                    ly * lx * at(y0i + 1, x0i + 1);
                            }
                        }
                        out[static_cast<std::size_t>(((n * C + c) * Ho + i) * Wo + j)] = v;
                    }
            }
        return values{cast_to(value::of<double>(out_dims, out), x0.type())};
    };
}

inline typed_fn max_unpool(const ops::op_attrs& a0, const ops::node_source&) {
    return [a = a0](const values& xs) {
        const value x = in(xs, 0, a).dense_value(), ind = in(xs, 1, a).dense_value();
        if (ind.type() != dtype::i64) fail(a, "I is " + std::string(name_of(ind.type())) + " (int64 taken)");
        const shape out_dims = rule(a, xs).at(0);
        const shape unpooled = as_executor_error([&] { return ops::rules::max_unpooled(x.dims(), a); });
        value out = value::zeros(x.type(), out_dims);
        const std::vector<std::int64_t> idx = ind.to_ints();
        const std::int64_t total = element_count(unpooled);
        const auto es = size_of(x.type());
        const std::byte* s = bytes_of(x);
        std::byte* o = bytes_of(out);
        for (std::size_t i = 0; i < idx.size(); ++i) {
            if (idx[i] < 0 || idx[i] >= total)
                fail(a, "index " + std::to_string(idx[i]) + " is out of range for the unpooled " + to_string(unpooled));
            // The index's coordinates in the unpooled shape, at the same place in the output.
            std::int64_t rest = idx[i], at = 0, stride = 1;
            for (std::size_t k = unpooled.size(); k-- > 0;) {
                at += rest % unpooled[k] * stride;
                rest /= unpooled[k];
                stride *= out_dims[k];
            }
            std::memcpy(o + static_cast<std::size_t>(at) * es, s + i * es, es);
        }
        return values{out};
    };
}

}  // namespace typed
namespace kernels {

// The typed_kernels<Tag> facets of this family's ops.
template <> inline constexpr typed_binding typed_kernels<ops::NonMaxSuppression>{typed::non_max_suppression};
template <> inline constexpr typed_binding typed_kernels<ops::RoiAlign>{typed::roi_align};
template <> inline constexpr typed_binding typed_kernels<ops::GridSample>{typed::grid_sample};
template <> inline constexpr typed_binding typed_kernels<ops::MaxUnpool>{typed::max_unpool};

}  // namespace kernels
}  // namespace exec
SGMATCH_END_NAMESPACE
