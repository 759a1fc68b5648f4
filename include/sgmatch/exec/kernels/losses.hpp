// sgmatch/exec/kernels/losses.hpp - kernels over typed values for the losses (ops/losses.hpp),
// InstanceNormalization and BatchNormalization (f64, and training mode), on f32 and f64; each
// sums in double.
//
// - NegativeLogLikelihoodLoss: loss[n, d...] = -input[n, target, d...] * weight[target], 0 where
//   the target is ignore_index; sum adds them; mean divides the sum by the weights of the
//   targets not ignored (their count without weights). Every ignored target: 0 / 0 (NaN), as
//   ONNX's reference computes.
// - SoftmaxCrossEntropyLoss: the same on the log-softmax of the scores along axis 1 (max
//   subtracted before the exponentials), which output 1 returns when the node has it.
// - A target outside [0, C) that is not ignore_index is an error naming the node.
#pragma once

#include <array>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <limits>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#include "sgmatch/detail/config.hpp"
#include "sgmatch/exec/kernels/reduce_typed.hpp"
#include "sgmatch/exec/kernels/typed_support.hpp"
#include "sgmatch/exec/value.hpp"
#include "sgmatch/ops/losses.hpp"
#include "sgmatch/ops/nn.hpp"

SGMATCH_BEGIN_NAMESPACE
namespace exec {
namespace typed {

namespace detail {

/// The loss from per-position log-probabilities `lp` ([N, C, D] row-major) and the targets.
template <class T>
value loss_from_log_probs(const ops::op_attrs& a, const T* lp, const value& target, const value* weight, std::int64_t N,
                          std::int64_t C, std::int64_t D, const shape& out_dims, dtype type) {
    if (target.type() != dtype::i64 && target.type() != dtype::i32)
        fail(a, "the targets are " + std::string(name_of(target.type())) + " (int64 or int32 expected)");
    const std::vector<std::int64_t> t = target.dense_value().to_ints();
    const bool ignoring = a.has("ignore_index");
    const std::int64_t ignore = ignoring ? a.i("ignore_index") : 0;
    const value w = weight ? weight->dense_value() : value();
    if (weight && w.type() != type)
        fail(a, "the weights are " + std::string(name_of(w.type())) + ", the input " + std::string(name_of(type)));
    const T* wp = weight ? w.as<T>() : nullptr;
    const std::string_view reduction = a.s("reduction");
    value out = value::zeros(type, out_dims);
    T* o = out.as<T>();
    double sum = 0, weights = 0;
    for (std::int64_t n = 0; n < N; ++n)
        for (std::int64_t d = 0; d < D; ++d) {
            const std::int64_t c = t[static_cast<std::size_t>(n * D + d)];
            double l = 0, wt = 0;
            if (!(ignoring && c == ignore)) {
                if (c < 0 || c >= C)
                    fail(a, "target " + std::to_string(c) + " at position " + std::to_string(n * D + d) + " is not a class in [0, " +
                                std::to_string(C) + ")" + (ignoring ? " nor ignore_index " + std::to_string(ignore) : std::string()));
                wt = wp ? static_cast<double>(wp[c]) : 1.0;
                l = -static_cast<double>(lp[(n * C + c) * D + d]) * wt;
            }
            if (reduction == "none") o[n * D + d] = static_cast<T>(l);
            sum += l;
            weights += wt;
        }
    if (reduction == "sum") o[0] = static_cast<T>(sum);
    if (reduction == "mean") o[0] = static_cast<T>(sum / weights);
    return out;
}

/// N, C and the product of the dims after them.
inline std::array<std::int64_t, 3> ncd(const shape& x) {
    std::int64_t D = 1;
    for (std::size_t k = 2; k < x.size(); ++k) D *= x[k];
    return {x[0], x[1], D};
}

}  // namespace detail

inline typed_fn nll_loss(const ops::op_attrs& a0, const ops::node_source&) {
    return [a = a0](const values& xs) {
        const value x = in(xs, 0, a).dense_value();
        require_type(a, x);
        const std::vector<ops::dims> out_dims = rule(a, xs);
        const std::array<std::int64_t, 3> sizes = detail::ncd(x.dims());
        const std::int64_t N = sizes[0], C = sizes[1], D = sizes[2];
        value out;
        visit_type(x.type(), [&](auto t) {
            using T = typename decltype(t)::type;
            if constexpr (std::is_floating_point_v<T>)
                out = detail::loss_from_log_probs<T>(a, x.as<T>(), in(xs, 1, a), xs.size() > 2 ? &xs[2] : nullptr, N, C, D,
                                                     out_dims.at(0), x.type());
        });
        return values{out};
    };
}

inline typed_fn softmax_cross_entropy(const ops::op_attrs& a0, const ops::node_source&) {
    return [a = a0](const values& xs) {
        const value x = in(xs, 0, a).dense_value();
        require_type(a, x);
        const std::vector<ops::dims> out_dims = rule(a, xs);
        const std::array<std::int64_t, 3> sizes = detail::ncd(x.dims());
        const std::int64_t N = sizes[0], C = sizes[1], D = sizes[2];
        value log_prob = value::zeros(x.type(), x.dims());
        value loss;
        visit_type(x.type(), [&](auto t) {
            using T = typename decltype(t)::type;
            if constexpr (std::is_floating_point_v<T>) {
                const T* p = x.as<T>();
                T* lp = log_prob.as<T>();
                for (std::int64_t n = 0; n < N; ++n)
                    for (std::int64_t d = 0; d < D; ++d) {
                        const T* row = p + n * C * D + d;
                        double m = -std::numeric_limits<double>::infinity();
                        for (std::int64_t c = 0; c < C; ++c) m = std::fmax(m, static_cast<double>(row[c * D]));
                        double s = 0;
                        for (std::int64_t c = 0; c < C; ++c) s += std::exp(static_cast<double>(row[c * D]) - m);
                        const double log_s = std::log(s);
                        for (std::int64_t c = 0; c < C; ++c)
                            lp[n * C * D + c * D + d] = static_cast<T>(static_cast<double>(row[c * D]) - m - log_s);
                    }
                loss = detail::loss_from_log_probs<T>(a, lp, in(xs, 1, a), xs.size() > 2 ? &xs[2] : nullptr, N, C, D,
                                                      out_dims.at(0), x.type());
            }
        });
        return a.outputs() > 1 ? values{loss, log_prob} : values{loss};
    };
}

/// InstanceNormalization: y = scale_c (x - mean) / sqrt(var + epsilon) + B_c over each (n, c)
/// plane, the variance the biased one.
inline typed_fn instance_norm(const ops::op_attrs& a0, const ops::node_source&) {
    return [a = a0](const values& xs) {
        const value x = in(xs, 0, a).dense_value();
        require_type(a, x);
        const value scale = in(xs, 1, a).dense_value(), bias = in(xs, 2, a).dense_value();
        if (scale.type() != x.type() || bias.type() != x.type())
            fail(a, "scale and B must be " + std::string(name_of(x.type())) + " like the input");
        value out = value::zeros(x.type(), rule(a, xs).at(0));
        const std::array<std::int64_t, 3> sizes = detail::ncd(x.dims());
        const std::int64_t N = sizes[0], C = sizes[1], D = sizes[2];
        const double eps = a.f("epsilon");
        visit_type(x.type(), [&](auto t) {
            using T = typename decltype(t)::type;
            if constexpr (std::is_floating_point_v<T>) {
                const T* p = x.as<T>();
                const T *s = scale.as<T>(), *b = bias.as<T>();
                T* o = out.as<T>();
                for (std::int64_t n = 0; n < N; ++n)
                    for (std::int64_t c = 0; c < C; ++c) {
                        const T* plane = p + (n * C + c) * D;
                        double mean = 0, var = 0;
                        for (std::int64_t i = 0; i < D; ++i) mean += static_cast<double>(plane[i]);
                        mean /= static_cast<double>(D);
                        for (std::int64_t i = 0; i < D; ++i) var += (plane[i] - mean) * (plane[i] - mean);
                        var /= static_cast<double>(D);
                        const double k = static_cast<double>(s[c]) / std::sqrt(var + eps);
                        for (std::int64_t i = 0; i < D; ++i)
                            o[(n * C + c) * D + i] = static_cast<T>((plane[i] - mean) * k + static_cast<double>(b[c]));
                    }
            }
        });
        return values{out};
    };
}

/// MeanVarianceNormalization on f32 and f64: over `axes` (0, 2, 3 when absent), (x - mean) /
/// (sqrt(E[x^2] - mean^2) + 1e-9), sums in double.
inline typed_fn mean_variance_norm(const ops::op_attrs& a0, const ops::node_source&) {
    return [a = a0](const values& xs) {
        const value x = in(xs, 0, a).dense_value();
        require_type(a, x);
        const shape& d = x.dims();
        std::vector<bool> reduced(d.size(), false);
        for (const std::int64_t ax : a.has("axes") ? a.ints("axes") : std::vector<std::int64_t>{0, 2, 3})
            reduced[ops::rules::axis(a, ax, d.size())] = true;
        // Each element's group: its index with the reduced axes dropped (as the reductions place it).
        const std::vector<std::int64_t> group = detail::reduced_positions(d, reduced);
        std::int64_t groups = 1;
        for (std::size_t k = 0; k < d.size(); ++k)
            if (!reduced[k]) groups *= d[k];
        value out = value::zeros(x.type(), d);
        visit_type(x.type(), [&](auto t) {
            using T = typename decltype(t)::type;
            if constexpr (std::is_floating_point_v<T>) {
                const T* p = x.as<T>();
                std::vector<double> sum(static_cast<std::size_t>(groups), 0.0), sq(sum), n(sum);
                for (std::int64_t e = 0; e < x.size(); ++e) {
                    const auto g = static_cast<std::size_t>(group[static_cast<std::size_t>(e)]);
                    sum[g] += static_cast<double>(p[e]);
                    sq[g] += static_cast<double>(p[e]) * static_cast<double>(p[e]);
                    n[g] += 1;
                }
                for (std::int64_t e = 0; e < x.size(); ++e) {
                    const auto g = static_cast<std::size_t>(group[static_cast<std::size_t>(e)]);
                    const double mean = sum[g] / n[g], var = sq[g] / n[g] - mean * mean;
                    out.as<T>()[e] = static_cast<T>((static_cast<double>(p[e]) - mean) / (std::sqrt(var > 0 ? var : 0) + 1e-9));
                }
            }
        });
        return values{out};
    };
}

/// BatchNormalization on f32 and f64. Inference: the input normalized by input_mean and
/// input_var. Training mode: by the batch's own mean and (biased) variance per channel, and
/// outputs 1 and 2 are input_mean * momentum + mean * (1 - momentum) and the same of the
/// variances, as ONNX defines them.
inline typed_fn batch_norm(const ops::op_attrs& a0, const ops::node_source&) {
    return [a = a0](const values& xs) {
        const value x = in(xs, 0, a).dense_value();
        require_type(a, x);
        value p[4];
        for (std::size_t i = 0; i < 4; ++i) {
            p[i] = in(xs, i + 1, a).dense_value();
            if (p[i].type() != x.type()) fail(a, "the parameters must be " + std::string(name_of(x.type())) + " like the input");
        }
        const std::vector<ops::dims> out_dims = rule(a, xs);
        const std::array<std::int64_t, 3> sizes = detail::ncd(x.dims());
        const std::int64_t N = sizes[0], C = sizes[1], D = sizes[2];
        const bool training = a.i("training_mode") != 0;
        const double eps = a.f("epsilon"), momentum = a.f("momentum");
        values out{value::zeros(x.type(), out_dims.at(0)), value::zeros(x.type(), out_dims.at(1)), value::zeros(x.type(), out_dims.at(2))};
        visit_type(x.type(), [&](auto t) {
            using T = typename decltype(t)::type;
            if constexpr (std::is_floating_point_v<T>) {
                const T* px = x.as<T>();
                const T *scale = std::as_const(p[0]).as<T>(), *shift = std::as_const(p[1]).as<T>(),
                        *mean_in = std::as_const(p[2]).as<T>(), *var_in = std::as_const(p[3]).as<T>();
                T* y = out[0].template as<T>();
                for (std::int64_t c = 0; c < C; ++c) {
                    double mean = static_cast<double>(mean_in[c]), var = static_cast<double>(var_in[c]);
                    if (training) {
                        double sum = 0, sq = 0;
                        for (std::int64_t n = 0; n < N; ++n)
                            for (std::int64_t i = 0; i < D; ++i) sum += static_cast<double>(px[(n * C + c) * D + i]);
                        mean = sum / static_cast<double>(N * D);
                        for (std::int64_t n = 0; n < N; ++n)
                            for (std::int64_t i = 0; i < D; ++i) {
                                const double d = static_cast<double>(px[(n * C + c) * D + i]) - mean;
                                sq += d * d;
                            }
                        var = sq / static_cast<double>(N * D);
                    }
                    const double k = static_cast<double>(scale[c]) / std::sqrt(var + eps);
                    for (std::int64_t n = 0; n < N; ++n)
                        for (std::int64_t i = 0; i < D; ++i) {
                            const std::int64_t at = (n * C + c) * D + i;
                            y[at] = static_cast<T>((static_cast<double>(px[at]) - mean) * k + static_cast<double>(shift[c]));
                        }
                    const double keep = training ? momentum : 1.0;
                    out[1].template as<T>()[c] = static_cast<T>(static_cast<double>(mean_in[c]) * keep + mean * (1 - keep));
                    out[2].template as<T>()[c] = static_cast<T>(static_cast<double>(var_in[c]) * keep + var * (1 - keep));
                }
            }
        });
        return out;
    };
}

}  // namespace typed
namespace kernels {

// The typed_kernels<Tag> facets of this family's ops.
template <> inline constexpr typed_binding typed_kernels<ops::MeanVarianceNormalization>{typed::mean_variance_norm};
template <> inline constexpr typed_binding typed_kernels<ops::NegativeLogLikelihoodLoss>{typed::nll_loss};
template <> inline constexpr typed_binding typed_kernels<ops::SoftmaxCrossEntropyLoss>{typed::softmax_cross_entropy};
template <> inline constexpr typed_binding typed_kernels<ops::InstanceNormalization>{typed::instance_norm};
template <> inline constexpr typed_binding typed_kernels<ops::BatchNorm>{typed::batch_norm};

}  // namespace kernels
}  // namespace exec
SGMATCH_END_NAMESPACE
