// sgmatch/exec/kernels/resize_onednn.hpp - Resize (and Upsample) on oneDNN's resampling
// primitive where it computes what ONNX asks for; the reference kernel (kernels/resize.hpp)
// everywhere else.
//
// oneDNN resamples the spatial axes of an [N, C, ...] tensor of rank 3 to 5 with one coordinate
// transformation, x = (o + 0.5) * in / out - 0.5, nearest rounding half away from zero and
// linear taps clamped at the edges. ONNX has six transformations, four roundings and scales that
// need not be out / in. Rather than list the forms that coincide, the kernel compares, per
// axis and per shape, the taps and weights ONNX's definition gives (the reference kernel's own
// taps) with the ones oneDNN computes, and takes the primitive only when every axis agrees:
// the usual exports do (PyTorch's nearest upsampling by whole factors, asymmetric + floor;
// bilinear with half_pixel or pytorch_half_pixel), others (align_corners, cubic, downsampling
// nearest with ties, scales that are not out / in) run on the reference kernel with no error.
#pragma once

#include <cmath>
#include <cstddef>
#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <utility>
#include <vector>

#include <oneapi/dnnl/dnnl.hpp>

#include "sgmatch/detail/config.hpp"
#include "sgmatch/exec/kernels/resize.hpp"
#include "sgmatch/exec/kernels/typed_support.hpp"
#include "sgmatch/onednn/compat.hpp"
#include "sgmatch/onednn/op_kernels/base.hpp"
#include "sgmatch/onednn/tensor.hpp"

SGMATCH_BEGIN_NAMESPACE
namespace exec {
namespace typed {

namespace detail {

// Output o's taps along an axis of `in` resized to `out`, as oneDNN's resampling computes them
// (in float: resampling_utils in its CPU code), as (index, weight) pairs.
inline std::vector<std::pair<std::int64_t, double>> onednn_resample_taps(bool linear, std::int64_t o, std::int64_t in,
                                                                          std::int64_t out) {
    const float x = (static_cast<float>(o) + 0.5f) * static_cast<float>(in) / static_cast<float>(out) - 0.5f;
    const auto clamp = [in](std::int64_t i) { return i < 0 ? std::int64_t{0} : i >= in ? in - 1 : i; };
    if (!linear) return {{clamp(static_cast<std::int64_t>(std::round(x))), 1.0}};
    const std::int64_t left = x < 0 ? 0 : static_cast<std::int64_t>(x);
    const std::int64_t right = clamp(x < 0 ? 0 : static_cast<std::int64_t>(std::ceil(x)));
    const double w = std::abs(static_cast<double>(x) - static_cast<double>(left));
    return {{left, 1.0 - w}, {right, w}};
}

// Whether the weights two lists of taps give each input index agree within `tol`.
inline bool same_taps(const std::vector<std::pair<std::int64_t, double>>& a, const std::vector<std::pair<std::int64_t, double>>& b,
                      double tol) {
    std::map<std::int64_t, double> w;
    for (const auto& [i, x] : a) w[i] += x;
    for (const auto& [i, x] : b) w[i] -= x;
    for (const auto& [i, x] : w)
        if (std::abs(x) > tol) return false;
    return true;
}

}  // namespace detail

/// Whether oneDNN's resampling computes ONNX's Resize of `c` (within 1e-5 of each tap's weight,
/// every index equal): nearest or linear, rank 3 to 5, batch and channels kept, every axis's
/// taps the same.
inline bool onednn_resample_agrees(const resize_call& c) {
    const resize_spec& s = c.spec;
    const ops::dims& in = c.x.dims();
    const std::size_t rank = in.size();
    if (s.mode == resize_mode::cubic || s.coordinates == resize_coordinates::tf_crop_and_resize) return false;
    if (rank < 3 || rank > 5 || c.out.size() != rank || c.scales.size() != rank) return false;
    if (c.out[0] != in[0] || c.out[1] != in[1]) return false;
    for (std::size_t ax = 0; ax < rank; ++ax) {
        if (in[ax] <= 0 || c.out[ax] <= 0) return false;
        const auto onnx = exec::detail::resize_axis_taps(s, in[ax], c.out[ax], c.scales[ax], 0.0, 1.0);
        for (std::int64_t o = 0; o < c.out[ax]; ++o) {
            const auto& t = onnx[static_cast<std::size_t>(o)];
            std::vector<std::pair<std::int64_t, double>> want;
            for (std::size_t q = 0; q < t.index.size(); ++q) want.emplace_back(t.index[q], t.weight[q]);
            // oneDNN keeps batch and channels as they are: index o, weight 1.
            const auto got = ax < 2 ? std::vector<std::pair<std::int64_t, double>>{{o, 1.0}}
                                    : detail::onednn_resample_taps(s.mode == resize_mode::linear, o, in[ax], c.out[ax]);
            if (t.outside || !detail::same_taps(want, got, 1e-5)) return false;
        }
    }
    return true;
}

namespace detail {

// What the kernel keeps: a primitive per (input dims, output dims, scales), or null where
// oneDNN's taps differ from ONNX's (the reference kernel runs).
struct resample_state {
    struct plan {
        dnnl::resampling_forward::primitive_desc pd;
        dnnl::resampling_forward prim;
    };
    std::mutex mu;
    std::map<std::pair<ops::dims, std::vector<double>>, std::shared_ptr<const plan>> plans;

    std::shared_ptr<const plan> plan_for(const resize_call& c) {
        std::lock_guard<std::mutex> lock(mu);
        ops::dims key = c.x.dims();
        key.insert(key.end(), c.out.begin(), c.out.end());
        const auto known = plans.find({key, c.scales});
        if (known != plans.end()) return known->second;
        auto& slot = plans[{key, c.scales}];
        if (!onednn_resample_agrees(c)) return slot;
        const auto alg = c.spec.mode == resize_mode::linear ? dnnl::algorithm::resampling_linear : dnnl::algorithm::resampling_nearest;
        try {
            auto pd = onednn::compat::resampling_pd(onednn::cpu_engine(), alg, onednn::plain_desc(c.x.dims()),
                                                    onednn::plain_desc(c.out), onednn::detail::user_scratchpad());
            slot = std::make_shared<const plan>(plan{pd, dnnl::resampling_forward(pd)});
        } catch (const dnnl::error&) {
            // no implementation for this shape: the reference kernel runs it
        }
        return slot;
    }
};

}  // namespace detail

/// Resize's kernel in the oneDNN modes: the resampling primitive where it agrees with ONNX's
/// definition (onednn_resample_agrees), the reference kernel otherwise.
inline typed_fn onednn_resize(const ops::op_attrs& a0, const ops::node_source&) {
    auto st = std::make_shared<detail::resample_state>();
    return [a = a0, s = resize_spec_of(a0), st](const values& xs) -> values {
        const resize_call c = resize_call_of(a, s, xs);
        if (c.empty()) return run_resize(c);
        const auto p = st->plan_for(c);
        if (!p) return run_resize(c);
        values out{value::zeros(dtype::f32, c.out)};
        const auto& eng = onednn::cpu_engine();
        const dnnl::memory src(p->pd.src_desc(), eng, const_cast<void*>(c.x.data()));
        const dnnl::memory dst(p->pd.dst_desc(), eng, out[0].mutable_data());
        onednn::detail::exec_with_scratch(p->prim, p->pd.scratchpad_desc(), {{DNNL_ARG_SRC, src}, {DNNL_ARG_DST, dst}});
        ++onednn_typed_runs();
        return out;
    };
}

}  // namespace typed
}  // namespace exec
SGMATCH_END_NAMESPACE
