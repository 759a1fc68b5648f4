// sgmatch/reference/tensor_ops.hpp - reference kernels for reductions and for the ops that pick,
// repeat or reshape elements: ReduceX, Slice, Gather, Expand, PRelu, LogSoftmax, GlobalMaxPool.
// Written to be obviously right, not fast: plain loops over row-major data, fp32.
#pragma once

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <limits>
#include <string>
#include <vector>

#include "sgmatch/reference/xtensor.hpp"

#include "sgmatch/detail/config.hpp"
#include "sgmatch/reference/kernels.hpp"

SGMATCH_BEGIN_NAMESPACE
namespace reference {

namespace detail {

// Row-major strides of a shape.
inline std::vector<std::size_t> strides_of(const std::vector<std::size_t>& shape) {
    std::vector<std::size_t> s(shape.size(), 1);
    for (std::size_t i = shape.size(); i-- > 1;) s[i - 1] = s[i] * shape[i];
    return s;
}

// An axis in [-rank, rank) as an index.
inline std::size_t axis_index(std::int64_t a, std::size_t rank, const char* what) {
    const auto r = static_cast<std::int64_t>(rank);
    if (a < -r || a >= r) throw kernel_error(std::string("sgmatch::reference::") + what + ": axis " + std::to_string(a) + " out of range");
    return static_cast<std::size_t>(a < 0 ? a + r : a);
}

}  // namespace detail

enum class reduce_kind { sum, mean, max, min, prod, sum_square, l1, l2, log_sum, log_sum_exp };

/// Reduces x over `axes` (all axes when empty), keeping them as 1 when keepdims.
inline array reduce(const array& x, reduce_kind k, const dims& axes, bool keepdims) {
    const std::size_t r = x.dimension();
    std::vector<bool> red(r, axes.empty());
    for (auto a : axes) red[detail::axis_index(a, r, "reduce")] = true;
    std::vector<std::size_t> out_full(r);
    for (std::size_t i = 0; i < r; ++i) out_full[i] = red[i] ? 1 : x.shape()[i];
    const auto xs = detail::strides_of(std::vector<std::size_t>(x.shape().begin(), x.shape().end()));
    const auto os = detail::strides_of(out_full);
    std::size_t out_n = 1;
    for (auto d : out_full) out_n *= d;
    const double init = k == reduce_kind::max   ? -std::numeric_limits<double>::infinity()
                        : k == reduce_kind::min ? std::numeric_limits<double>::infinity()
                        : k == reduce_kind::prod ? 1.0
                                                 : 0.0;
    std::vector<double> acc(out_n, init);
    std::vector<std::size_t> count(out_n, 0);
    for (std::size_t i = 0; i < x.size(); ++i) {
        std::size_t o = 0, rem = i;
        for (std::size_t d = 0; d < r; ++d) {
            const std::size_t c = rem / xs[d];
            rem %= xs[d];
            if (!red[d]) o += c * os[d];
        }
        const double v = x.data()[i];
        double& a = acc[o];
        switch (k) {
            case reduce_kind::sum:
            case reduce_kind::mean:
            case reduce_kind::log_sum: a += v; break;
            case reduce_kind::max: a = std::max(a, v); break;
            case reduce_kind::min: a = std::min(a, v); break;
            case reduce_kind::prod: a *= v; break;
            case reduce_kind::sum_square:
            case reduce_kind::l2: a += v * v; break;
            case reduce_kind::l1: a += std::abs(v); break;
            case reduce_kind::log_sum_exp: a += std::exp(v); break;
        }
        ++count[o];
    }
    std::vector<std::size_t> out_shape;
    for (std::size_t i = 0; i < r; ++i)
        if (!red[i] || keepdims) out_shape.push_back(out_full[i]);
    array y = xt::zeros<float>(out_shape);
    for (std::size_t o = 0; o < out_n; ++o) {
        double v = acc[o];
        if (k == reduce_kind::mean) v /= static_cast<double>(std::max<std::size_t>(count[o], 1));
        if (k == reduce_kind::l2) v = std::sqrt(v);
        if (k == reduce_kind::log_sum || k == reduce_kind::log_sum_exp) v = std::log(v);
        y.data()[o] = static_cast<float>(v);
    }
    return y;
}

/// ONNX Slice: per listed axis, start (inclusive), end (exclusive) and step, clamped as ONNX says.
inline array slice(const array& x, const dims& starts, const dims& ends, const dims& axes, const dims& steps) {
    const std::size_t r = x.dimension();
    struct walk {
        std::int64_t begin = 0, step = 1, count = 0;
    };
    std::vector<walk> w(r);
    for (std::size_t i = 0; i < r; ++i) w[i].count = static_cast<std::int64_t>(x.shape()[i]);
    for (std::size_t k = 0; k < starts.size(); ++k) {
        const std::size_t a = detail::axis_index(axes.empty() ? static_cast<std::int64_t>(k) : axes[k], r, "slice");
        const std::int64_t dim = static_cast<std::int64_t>(x.shape()[a]), step = steps.empty() ? 1 : steps[k];
        if (step == 0) throw kernel_error("sgmatch::reference::slice: a step of 0");
        auto clampi = [](std::int64_t v, std::int64_t lo, std::int64_t hi) { return std::min(std::max(v, lo), hi); };
        std::int64_t s = starts[k] < 0 ? (starts[k] < -dim ? -1 : starts[k] + dim) : starts[k];
        // Past the front: before the first element (step < 0) or at it (step > 0).
        const std::int64_t e = ends[k] < 0 ? (ends[k] < -dim ? (step > 0 ? 0 : -1) : ends[k] + dim) : ends[k];
        if (step > 0) {
            s = clampi(s, 0, dim);
            const std::int64_t ec = clampi(e, 0, dim);
            w[a].count = ec > s ? (ec - s + step - 1) / step : 0;
        } else {
            s = clampi(s, 0, dim - 1);
            const std::int64_t ec = clampi(e, -1, dim - 1);
            w[a].count = s > ec ? (s - ec + (-step) - 1) / (-step) : 0;
        }
        w[a].begin = s;
        w[a].step = step;
    }
    std::vector<std::size_t> shape;
    for (const auto& v : w) shape.push_back(static_cast<std::size_t>(v.count));
    array y = xt::zeros<float>(shape);
    const auto xs = detail::strides_of(std::vector<std::size_t>(x.shape().begin(), x.shape().end()));
    const auto ys = detail::strides_of(shape);
    for (std::size_t i = 0; i < y.size(); ++i) {
        std::size_t src = 0, rem = i;
        for (std::size_t d = 0; d < r; ++d) {
            const auto c = static_cast<std::int64_t>(rem / ys[d]);
            rem %= ys[d];
            src += static_cast<std::size_t>(w[d].begin + c * w[d].step) * xs[d];
        }
        y.data()[i] = x.data()[src];
    }
    return y;
}

/// ONNX Gather: indices (negative counted from the end) pick along `axis`.
inline array gather(const array& x, const std::vector<std::int64_t>& indices, const dims& index_shape, std::int64_t axis) {
    const std::size_t r = x.dimension(), a = detail::axis_index(axis, r, "gather");
    const auto dim = static_cast<std::int64_t>(x.shape()[a]);
    std::vector<std::size_t> shape(x.shape().begin(), x.shape().begin() + static_cast<std::ptrdiff_t>(a));
    for (auto d : index_shape) shape.push_back(static_cast<std::size_t>(d));
    shape.insert(shape.end(), x.shape().begin() + static_cast<std::ptrdiff_t>(a) + 1, x.shape().end());
    std::size_t outer = 1, inner = 1;
    for (std::size_t i = 0; i < a; ++i) outer *= x.shape()[i];
    for (std::size_t i = a + 1; i < r; ++i) inner *= x.shape()[i];
    array y = xt::zeros<float>(shape);
    std::size_t o = 0;
    for (std::size_t p = 0; p < outer; ++p)
        for (auto idx : indices) {
            const std::int64_t j = idx < 0 ? idx + dim : idx;
            if (j < 0 || j >= dim) throw kernel_error("sgmatch::reference::gather: index " + std::to_string(idx) + " out of range");
            const float* src = x.data() + (p * static_cast<std::size_t>(dim) + static_cast<std::size_t>(j)) * inner;
            std::copy(src, src + inner, y.data() + o);
            o += inner;
        }
    return y;
}

/// ONNX Expand: x broadcast against `shape` (numpy rules; the result has the larger of each dim).
inline array expand(const array& x, const dims& shape) {
    const std::size_t r = std::max(x.dimension(), shape.size());
    std::vector<std::size_t> out(r);
    for (std::size_t i = 0; i < r; ++i) {
        const std::size_t xi = i + x.dimension() >= r ? x.shape()[i + x.dimension() - r] : 1;
        const std::size_t si = i + shape.size() >= r ? static_cast<std::size_t>(shape[i + shape.size() - r]) : 1;
        if (xi != si && xi != 1 && si != 1) throw kernel_error("sgmatch::reference::expand: shapes do not broadcast");
        out[i] = std::max(xi, si);
    }
    array y = xt::zeros<float>(out);
    return reference::binary(y, x, binary_kind::add);
}

/// PRelu: x where x >= 0, slope x elsewhere (slope broadcast to x).
inline array prelu(const array& x, const array& slope) {
    const array s = reference::expand(slope, dims(x.shape().begin(), x.shape().end()));
    if (s.shape() != x.shape()) throw kernel_error("sgmatch::reference::prelu: slope does not broadcast to the input");
    array y = x;
    for (std::size_t i = 0; i < y.size(); ++i) y.data()[i] = x.data()[i] < 0 ? s.data()[i] * x.data()[i] : x.data()[i];
    return y;
}

/// log(softmax(x)) along one axis.
inline array log_softmax(const array& x, std::int64_t axis) {
    const array s = softmax(x, axis);
    array y = s;
    // log of the max-shifted form, for precision: x - max - log(sum(exp(x - max))).
    const std::size_t a = detail::axis_index(axis, x.dimension(), "log_softmax");
    std::size_t outer = 1, inner = 1;
    const std::size_t n = x.shape()[a];
    for (std::size_t i = 0; i < a; ++i) outer *= x.shape()[i];
    for (std::size_t i = a + 1; i < x.dimension(); ++i) inner *= x.shape()[i];
    for (std::size_t p = 0; p < outer; ++p)
        for (std::size_t q = 0; q < inner; ++q) {
            const float* xp = x.data() + p * n * inner + q;
            double m = -std::numeric_limits<double>::infinity(), sum = 0;
            for (std::size_t k = 0; k < n; ++k) m = std::max(m, static_cast<double>(xp[k * inner]));
            for (std::size_t k = 0; k < n; ++k) sum += std::exp(xp[k * inner] - m);
            for (std::size_t k = 0; k < n; ++k)
                y.data()[p * n * inner + q + k * inner] = static_cast<float>(xp[k * inner] - m - std::log(sum));
        }
    return y;
}

/// The maximum over every spatial position, per sample and channel.
inline array global_max_pool(const array& x) {
    if (x.dimension() < 3) throw kernel_error("sgmatch::reference::global_max_pool: input must be at least 3-D");
    dims axes;
    for (std::size_t i = 2; i < x.dimension(); ++i) axes.push_back(static_cast<std::int64_t>(i));
    return reference::reduce(x, reduce_kind::max, axes, true);
}

}  // namespace reference
SGMATCH_END_NAMESPACE
