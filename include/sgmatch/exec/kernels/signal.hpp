// sgmatch/exec/kernels/signal.hpp - the Hann, Hamming and Blackman windows, DFT, STFT and
// MelWeightMatrix (ops/signal.hpp), computed in double and stored as f32 or f64.
//
// DFT and STFT sum each output bin directly over a table of the n roots of unity (n * bins
// products a line: a reference, not an FFT).
#pragma once

#include <cmath>
#include <cstdint>
#include <vector>
#include <string>
#include <type_traits>

#include "sgmatch/detail/config.hpp"
#include "sgmatch/exec/kernels/typed_support.hpp"
#include "sgmatch/exec/value.hpp"
#include "sgmatch/ops/signal.hpp"

SGMATCH_BEGIN_NAMESPACE
namespace exec {
namespace typed {

/// A window of coefficients a0, a1, a2 (see ops/signal.hpp).
inline typed_fn window(const ops::op_attrs& a0, double c0, double c1, double c2) {
    return [a = a0, c0, c1, c2](const values& xs) {
        const std::int64_t size = rule(a, xs).at(0).at(0);
        const dtype t = ops::dtype_of_onnx(a.i("output_datatype"));
        if (t != dtype::f32 && t != dtype::f64) fail(a, "output_datatype " + std::to_string(a.i("output_datatype")) + " (f32 or f64 taken)");
        const double n_total = static_cast<double>(a.i("periodic") != 0 ? size : size - 1);
        constexpr double pi = 3.14159265358979323846;
        value out = value::zeros(t, {size});
        visit_type(t, [&](auto tag) {
            using T = typename decltype(tag)::type;
            if constexpr (std::is_floating_point_v<T>) {
                T* o = out.as<T>();
                for (std::int64_t n = 0; n < size; ++n) {
                    const double x = n_total > 0 ? 2 * pi * static_cast<double>(n) / n_total : 0.0;
                    o[n] = static_cast<T>(c0 - c1 * std::cos(x) + c2 * std::cos(2 * x));
                }
            }
        });
        return values{out};
    };
}

namespace signal_detail {

constexpr double pi = 3.14159265358979323846;

/// The transform of one line of n complex values (re, im), bins 0 .. bins - 1, into out (re, im
/// pairs): X[k] = sum_t x[t] w^(k t), w = exp(-+2 pi i / n), divided by n when inverse.
inline void transform(const std::vector<double>& re, const std::vector<double>& im, std::size_t bins, bool inverse,
                      const std::vector<double>& cos_table, const std::vector<double>& sin_table, double* out) {
    const std::size_t n = re.size();
    const double sign = inverse ? 1.0 : -1.0, scale = inverse ? 1.0 / static_cast<double>(n) : 1.0;
    for (std::size_t k = 0; k < bins; ++k) {
        double sr = 0, si = 0;
        std::size_t at = 0;  // k t mod n
        for (std::size_t t = 0; t < n; ++t) {
            const double c = cos_table[at], s = sign * sin_table[at];
            sr += re[t] * c - im[t] * s;
            si += re[t] * s + im[t] * c;
            at += k;
            if (at >= n) at %= n;
        }
        out[2 * k] = sr * scale;
        out[2 * k + 1] = si * scale;
    }
}

inline void roots(std::size_t n, std::vector<double>& c, std::vector<double>& s) {
    c.resize(n);
    s.resize(n);
    for (std::size_t t = 0; t < n; ++t) {
        const double x = 2 * pi * static_cast<double>(t) / static_cast<double>(n);
        c[t] = std::cos(x);
        s[t] = std::sin(x);
    }
}

/// x's values as doubles (f32 or f64).
inline std::vector<double> doubles(const value& x) {
    const value d = cast_to(x, dtype::f64);
    return std::vector<double>(d.as<double>(), d.as<double>() + d.size());
}

/// Doubles stored as a value of type t (f32 or f64).
inline value stored(dtype t, shape dims, const std::vector<double>& v) { return cast_to(value::of<double>(std::move(dims), v), t); }

inline void require_real(const ops::op_attrs& a, const value& x, const char* what) {
    if (x.is_sequence() || (x.type() != dtype::f32 && x.type() != dtype::f64))
        fail(a, std::string(what) + " is " + (x.is_sequence() ? std::string("a sequence") : std::string(name_of(x.type()))) + " (f32 or f64 taken)");
}

}  // namespace signal_detail

/// DFT along an axis (ops/signal.hpp).
inline typed_fn dft(const ops::op_attrs& a0, const ops::node_source&) {
    return [a = a0](const values& xs) {
        const value& x0 = in(xs, 0, a);
        signal_detail::require_real(a, x0, "input");
        const shape out_dims = rule(a, xs).at(0);
        const shape& d = x0.dims();
        const auto r = static_cast<std::int64_t>(d.size());
        std::int64_t axis = a.i("axis");
        if (axis < 0) axis += r;
        const auto ax = static_cast<std::size_t>(axis);
        const std::size_t m = static_cast<std::size_t>(d[ax]), comps = static_cast<std::size_t>(d.back());
        const std::size_t n = xs.size() > 1 ? static_cast<std::size_t>(xs[1].dense_value().to_ints().at(0)) : m;
        const std::size_t bins = static_cast<std::size_t>(out_dims[ax]);
        std::size_t outer = 1, inner = 1;  // the axes before `axis`, and those after it but the last
        for (std::size_t k = 0; k < ax; ++k) outer *= static_cast<std::size_t>(d[k]);
        for (std::size_t k = ax + 1; k + 1 < d.size(); ++k) inner *= static_cast<std::size_t>(d[k]);
        const std::vector<double> x = signal_detail::doubles(x0);
        std::vector<double> out(outer * bins * inner * 2), c, s, re(n), im(n), line(2 * bins);
        signal_detail::roots(n, c, s);
        for (std::size_t o = 0; o < outer; ++o)
            for (std::size_t i = 0; i < inner; ++i) {
                for (std::size_t t = 0; t < n; ++t) {
                    const std::size_t at = ((o * m + t) * inner + i) * comps;
                    re[t] = t < m ? x[at] : 0.0;
                    im[t] = t < m && comps == 2 ? x[at + 1] : 0.0;
                }
                signal_detail::transform(re, im, bins, a.i("inverse") != 0, c, s, line.data());
                for (std::size_t k = 0; k < bins; ++k) {
                    const std::size_t at = ((o * bins + k) * inner + i) * 2;
                    out[at] = line[2 * k];
                    out[at + 1] = line[2 * k + 1];
                }
            }
        return values{signal_detail::stored(x0.type(), out_dims, out)};
    };
}

/// STFT of a signal [batch, length, 1 or 2] (ops/signal.hpp).
inline typed_fn stft(const ops::op_attrs& a0, const ops::node_source&) {
    return [a = a0](const values& xs) {
        const value& x0 = in(xs, 0, a);
        signal_detail::require_real(a, x0, "signal");
        const shape out_dims = rule(a, xs).at(0);
        const std::size_t batch = static_cast<std::size_t>(out_dims[0]), frames = static_cast<std::size_t>(out_dims[1]),
                          bins = static_cast<std::size_t>(out_dims[2]);
        const std::size_t length = static_cast<std::size_t>(x0.dims()[1]), comps = static_cast<std::size_t>(x0.dims()[2]);
        const std::size_t step = static_cast<std::size_t>(xs[1].dense_value().to_ints().at(0));
        std::vector<double> window;
        if (xs.size() > 2 && xs[2].size() > 0) {
            signal_detail::require_real(a, xs[2], "window");
            window = signal_detail::doubles(xs[2]);
        }
        const std::size_t n = !window.empty() ? window.size() : static_cast<std::size_t>(xs.at(3).dense_value().to_ints().at(0));
        const std::vector<double> x = signal_detail::doubles(x0);
        std::vector<double> out(batch * frames * bins * 2), c, s, re(n), im(n);
        signal_detail::roots(n, c, s);
        for (std::size_t b = 0; b < batch; ++b)
            for (std::size_t f = 0; f < frames; ++f) {
                for (std::size_t t = 0; t < n; ++t) {
                    const std::size_t at = (b * length + f * step + t) * comps;
                    const double w = window.empty() ? 1.0 : window[t];
                    re[t] = x[at] * w;
                    im[t] = comps == 2 ? x[at + 1] * w : 0.0;
                }
                signal_detail::transform(re, im, bins, false, c, s, out.data() + (b * frames + f) * bins * 2);
            }
        return values{signal_detail::stored(x0.type(), out_dims, out)};
    };
}

/// MelWeightMatrix (ops/signal.hpp): the band edges as ONNX's definition computes them (in
/// double, the edges' bins floored), each band a triangle peaking at 1.
inline typed_fn mel_weight_matrix(const ops::op_attrs& a0, const ops::node_source&) {
    return [a = a0](const values& xs) {
        const shape out_dims = rule(a, xs).at(0);
        const dtype t = ops::dtype_of_onnx(a.i("output_datatype"));
        if (t != dtype::f32 && t != dtype::f64) fail(a, "output_datatype " + std::to_string(a.i("output_datatype")) + " (f32 or f64 taken)");
        const auto bins = static_cast<std::size_t>(out_dims[1]), rows = static_cast<std::size_t>(out_dims[0]);
        const std::int64_t length = in(xs, 1, a).dense_value().to_ints().at(0), rate = in(xs, 2, a).dense_value().to_ints().at(0);
        if (rate < 1) fail(a, "sample_rate " + std::to_string(rate) + " is not positive");
        const double lower = in(xs, 3, a).dense_value().to_floats().at(0), upper = in(xs, 4, a).dense_value().to_floats().at(0);
        const double low_mel = 2595.0 * std::log10(1.0 + lower / 700.0), high_mel = 2595.0 * std::log10(1.0 + upper / 700.0);
        const double step = (high_mel - low_mel) / static_cast<double>(bins + 2);
        std::vector<std::int64_t> edge(bins + 2);
        for (std::size_t i = 0; i < edge.size(); ++i) {
            const double mel = static_cast<double>(i) * step + low_mel;
            const double hz = 700.0 * (std::pow(10.0, mel / 2595.0) - 1.0);
            edge[i] = static_cast<std::int64_t>(std::floor(static_cast<double>(length + 1) * hz / static_cast<double>(rate)));
        }
        std::vector<double> out(rows * bins, 0.0);
        auto put = [&](std::int64_t row, std::size_t col, double v) {
            if (row < 0 || static_cast<std::size_t>(row) >= rows)
                fail(a, "band " + std::to_string(col) + " reaches bin " + std::to_string(row) + ", beyond the spectrum's " + std::to_string(rows) +
                            " (upper_edge_hertz above half the sample rate?)");
            out[static_cast<std::size_t>(row) * bins + col] = v;
        };
        for (std::size_t i = 0; i < bins; ++i) {
            const std::int64_t lo = edge[i], mid = edge[i + 1], hi = edge[i + 2];
            if (mid == lo) put(mid, i, 1.0);
            else
                for (std::int64_t j = lo; j <= mid; ++j) put(j, i, static_cast<double>(j - lo) / static_cast<double>(mid - lo));
            if (hi > mid)
                for (std::int64_t j = mid; j < hi; ++j) put(j, i, static_cast<double>(hi - j) / static_cast<double>(hi - mid));
        }
        return values{signal_detail::stored(t, out_dims, out)};
    };
}

inline typed_fn hann_window(const ops::op_attrs& a, const ops::node_source&) { return window(a, 0.5, 0.5, 0.0); }
inline typed_fn hamming_window(const ops::op_attrs& a, const ops::node_source&) { return window(a, 25.0 / 46, 21.0 / 46, 0.0); }
inline typed_fn blackman_window(const ops::op_attrs& a, const ops::node_source&) { return window(a, 0.42, 0.5, 0.08); }

}  // namespace typed
namespace kernels {

// The typed_kernels<Tag> facets of this family's ops.
template <> inline constexpr typed_binding typed_kernels<ops::DFT>{typed::dft};
template <> inline constexpr typed_binding typed_kernels<ops::STFT>{typed::stft};
template <> inline constexpr typed_binding typed_kernels<ops::MelWeightMatrix>{typed::mel_weight_matrix};
template <> inline constexpr typed_binding typed_kernels<ops::HannWindow>{typed::hann_window};
template <> inline constexpr typed_binding typed_kernels<ops::HammingWindow>{typed::hamming_window};
template <> inline constexpr typed_binding typed_kernels<ops::BlackmanWindow>{typed::blackman_window};

}  // namespace kernels
}  // namespace exec
SGMATCH_END_NAMESPACE
