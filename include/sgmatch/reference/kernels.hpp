// sgmatch/reference/kernels.hpp - xtensor reference kernels for the standard vocabulary.
//
// The framework-native fallback for ops no fused kernel takes, and the oracle in tests. They
// are written to be obviously right, not fast: plain loops over row-major (NCHW) data for the
// convolutions, pooling and products, xtensor expressions (with NumPy broadcasting) for the
// element-wise ops. fp32 only.
//
// Known limitations: convolutions and pooling take 1 to 3 spatial dims; MatMul broadcasts
// batch dims NumPy-style; no integer or half types.
#pragma once

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <limits>
#include <stdexcept>
#include <string>
#include <vector>

#include "sgmatch/reference/xtensor.hpp"

#include "sgmatch/detail/config.hpp"

SGMATCH_BEGIN_NAMESPACE
namespace reference {

using array = xt::xarray<float>;
using dims = std::vector<std::int64_t>;

/// Raised when a reference kernel gets shapes or attributes it cannot take; names the kernel.
class kernel_error : public std::invalid_argument {
public:
    using std::invalid_argument::invalid_argument;
};

// ----- element-wise -----------------------------------------------------------------------

/// Unary element-wise functions. alpha/beta as in the op they come from (see unary()).
enum class unary_kind {
    identity, relu, leaky_relu, clip, sigmoid, tanh, elu, gelu_erf, gelu_tanh, swish, hardswish,
    hardsigmoid, mish, softplus, exp, log, sqrt, square, abs, round, erf, linear,
    neg, reciprocal, softsign, selu, celu, thresholded_relu,
    ceil, floor, sign, sin, cos, tan, asin, acos, atan, sinh, cosh, asinh, acosh, atanh, shrink
};

/// f(x) for one value: leaky_relu slope alpha; clip to [alpha, beta]; elu alpha; swish
/// x * sigmoid(alpha x); hardsigmoid max(0, min(1, alpha x + beta)); linear alpha x + beta;
/// round half to even (ONNX Round); selu gamma (beta) and alpha; celu and thresholded_relu alpha;
/// shrink lambd (alpha) and bias (beta).
inline float unary_value(unary_kind k, float x, float alpha = 0.0f, float beta = 0.0f) {
    auto sig = [](float v) { return 1.0f / (1.0f + std::exp(-v)); };
    auto softplus = [](float v) { return v > 20.0f ? v : std::log1p(std::exp(v)); };
    switch (k) {
        case unary_kind::identity: return x;
        case unary_kind::relu: return x <= 0 ? 0.0f : x;  // NaN stays NaN (ONNX: numpy maximum)
        case unary_kind::leaky_relu: return x > 0 ? x : alpha * x;
        case unary_kind::clip: return std::min(std::max(x, alpha), beta);
        case unary_kind::sigmoid: return sig(x);
        case unary_kind::tanh: return std::tanh(x);
        case unary_kind::elu: return x > 0 ? x : alpha * (std::exp(x) - 1.0f);
        case unary_kind::gelu_erf: return 0.5f * x * (1.0f + std::erf(x * 0.70710678118654752f));
        case unary_kind::gelu_tanh:
            return 0.5f * x * (1.0f + std::tanh(0.79788456080286536f * (x + 0.044715f * x * x * x)));
        case unary_kind::swish: return x * sig(alpha * x);
        case unary_kind::hardswish: return x * std::min(std::max(x + 3.0f, 0.0f), 6.0f) / 6.0f;
        case unary_kind::hardsigmoid: return std::min(std::max(alpha * x + beta, 0.0f), 1.0f);
        case unary_kind::mish: return x * std::tanh(softplus(x));
        case unary_kind::softplus: return softplus(x);
        case unary_kind::exp: return std::exp(x);
        case unary_kind::log: return std::log(x);
        case unary_kind::sqrt: return std::sqrt(x);
        case unary_kind::square: return x * x;
        case unary_kind::abs: return std::fabs(x);
        case unary_kind::round: return std::nearbyint(x);
        case unary_kind::erf: return std::erf(x);
        case unary_kind::linear: return alpha * x + beta;
        case unary_kind::neg: return -x;
        case unary_kind::reciprocal: return 1.0f / x;
        case unary_kind::softsign: return x / (1.0f + std::fabs(x));
        case unary_kind::selu: return beta * (x > 0 ? x : alpha * (std::exp(x) - 1.0f));  // beta: gamma
        case unary_kind::celu: return std::max(0.0f, x) + std::min(0.0f, alpha * (std::exp(x / alpha) - 1.0f));
        case unary_kind::thresholded_relu: return x > alpha ? x : 0.0f;
        case unary_kind::ceil: return std::ceil(x);
        case unary_kind::floor: return std::floor(x);
        case unary_kind::sign: return x > 0 ? 1.0f : x < 0 ? -1.0f : x;  // 0 and NaN as they are
        case unary_kind::sin: return std::sin(x);
        case unary_kind::cos: return std::cos(x);
        case unary_kind::tan: return std::tan(x);
        case unary_kind::asin: return std::asin(x);
        case unary_kind::acos: return std::acos(x);
        case unary_kind::atan: return std::atan(x);
        case unary_kind::sinh: return std::sinh(x);
        case unary_kind::cosh: return std::cosh(x);
        case unary_kind::asinh: return std::asinh(x);
        case unary_kind::acosh: return std::acosh(x);
        case unary_kind::atanh: return std::atanh(x);
        case unary_kind::shrink: return x < -alpha ? x + beta : x > alpha ? x - beta : 0.0f;  // alpha lambd, beta bias
    }
    return x;
}

inline array unary(const array& x, unary_kind k, float alpha = 0.0f, float beta = 0.0f) {
    array y = x;
    for (auto& v : y) v = unary_value(k, v, alpha, beta);
    return y;
}

enum class binary_kind { add, sub, mul, div, max, min, pow };

/// a op b with NumPy broadcasting.
inline array binary(const array& a, const array& b, binary_kind k) {
    switch (k) {
        case binary_kind::add: return a + b;
        case binary_kind::sub: return a - b;
        case binary_kind::mul: return a * b;
        case binary_kind::div: return a / b;
        case binary_kind::max: return xt::maximum(a, b);
        case binary_kind::min: return xt::minimum(a, b);
        case binary_kind::pow: return xt::pow(a, b);
    }
    return a;
}

// ----- convolution and friends --------------------------------------------------------------

/// Convolution attributes, ONNX-style: one entry per spatial dim; dilation 1 is dense.
struct conv_attrs {
    dims strides, pads_begin, pads_end, dilations;
    std::int64_t groups = 1;
};

namespace detail {

// Shapes as 3 spatial dims (1-D and 2-D convs are 3-D ones with leading unit dims).
struct spatial3 {
    std::int64_t d[3] = {1, 1, 1};
};
inline spatial3 lift(const dims& v, std::size_t rank, std::int64_t fill, const char* what) {
    if (v.size() != rank) throw kernel_error(std::string("sgmatch::reference::conv: ") + what + " has the wrong rank");
    spatial3 s;
    s.d[0] = s.d[1] = s.d[2] = fill;
    for (std::size_t i = 0; i < rank; ++i) s.d[3 - rank + i] = v[i];
    return s;
}
inline std::vector<std::size_t> to_shape(const dims& d) { return std::vector<std::size_t>(d.begin(), d.end()); }

// The spatial sizes a convolution (or a transposed one) of x by w with attributes a works on.
struct conv_geometry {
    spatial3 I, K, S, D, PB, PE;
};
inline conv_geometry geometry_of(const array& x, const array& w, const conv_attrs& a) {
    const std::size_t sp = x.dimension() - 2;
    dims in_sp, k_sp;
    for (std::size_t i = 0; i < sp; ++i) {
        in_sp.push_back(static_cast<std::int64_t>(x.shape()[2 + i]));
        k_sp.push_back(static_cast<std::int64_t>(w.shape()[2 + i]));
    }
    return {lift(in_sp, sp, 1, "input"),          lift(k_sp, sp, 1, "kernel"),
            lift(a.strides, sp, 1, "strides"),     lift(a.dilations, sp, 1, "dilations"),
            lift(a.pads_begin, sp, 0, "pads_begin"), lift(a.pads_end, sp, 0, "pads_end")};
}

}  // namespace detail

/// N-D convolution (1 to 3 spatial dims): x is [N, C, spatial...], w is [O, C/groups, k...],
/// bias is empty or [O].
inline array conv(const array& x, const array& w, const array& bias, const conv_attrs& a) {
    if (x.dimension() < 3 || x.dimension() > 5 || w.dimension() != x.dimension())
        throw kernel_error("sgmatch::reference::conv: input and weights must both be 3-D, 4-D or 5-D");
    const std::size_t sp = x.dimension() - 2;
    const std::int64_t N = static_cast<std::int64_t>(x.shape()[0]), C = static_cast<std::int64_t>(x.shape()[1]);
    const std::int64_t O = static_cast<std::int64_t>(w.shape()[0]), G = a.groups;
    if (G < 1 || C % G != 0 || O % G != 0 || static_cast<std::int64_t>(w.shape()[1]) != C / G)
        throw kernel_error("sgmatch::reference::conv: channels " + std::to_string(C) + ", weights' input channels " +
                           std::to_string(w.shape()[1]) + " and groups " + std::to_string(G) + " do not agree");
    if (bias.size() != 0 && static_cast<std::int64_t>(bias.size()) != O)
        throw kernel_error("sgmatch::reference::conv: bias must have one value per output channel");
    const detail::conv_geometry geo = detail::geometry_of(x, w, a);
    const auto &I = geo.I, &K = geo.K, &S = geo.S, &D = geo.D, &PB = geo.PB, &PE = geo.PE;
    detail::spatial3 OUT;
    for (int i = 0; i < 3; ++i) {
        const std::int64_t span = D.d[i] * (K.d[i] - 1) + 1;
        OUT.d[i] = (I.d[i] + PB.d[i] + PE.d[i] - span) / S.d[i] + 1;
        if (OUT.d[i] < 1) throw kernel_error("sgmatch::reference::conv: the kernel is larger than the padded input");
    }
    dims out_shape{N, O};
    for (std::size_t i = 0; i < sp; ++i) out_shape.push_back(OUT.d[3 - sp + i]);
    array y = xt::zeros<float>(detail::to_shape(out_shape));
    const float* xp = x.data();
    const float* wp = w.data();
    float* yp = y.data();
    const std::int64_t Cg = C / G, Og = O / G;
    const std::int64_t in_plane = I.d[0] * I.d[1] * I.d[2], k_plane = K.d[0] * K.d[1] * K.d[2];
    const std::int64_t out_plane = OUT.d[0] * OUT.d[1] * OUT.d[2];
    for (std::int64_t n = 0; n < N; ++n)
        for (std::int64_t o = 0; o < O; ++o) {
            const std::int64_t g = o / Og;
            float* yo = yp + (n * O + o) * out_plane;
            for (std::int64_t od = 0; od < OUT.d[0]; ++od)
                for (std::int64_t oh = 0; oh < OUT.d[1]; ++oh)
                    for (std::int64_t ow = 0; ow < OUT.d[2]; ++ow) {
                        double acc = bias.size() ? bias.data()[o] : 0.0;
                        for (std::int64_t c = 0; c < Cg; ++c) {
                            const float* xc = xp + (n * C + g * Cg + c) * in_plane;
                            const float* wc = wp + (o * Cg + c) * k_plane;
                            for (std::int64_t kd = 0; kd < K.d[0]; ++kd) {
                                const std::int64_t id = od * S.d[0] - PB.d[0] + kd * D.d[0];
                                if (id < 0 || id >= I.d[0]) continue;
                                for (std::int64_t kh = 0; kh < K.d[1]; ++kh) {
                                    const std::int64_t ih = oh * S.d[1] - PB.d[1] + kh * D.d[1];
                                    if (ih < 0 || ih >= I.d[1]) continue;
                                    for (std::int64_t kw = 0; kw < K.d[2]; ++kw) {
                                        const std::int64_t iw = ow * S.d[2] - PB.d[2] + kw * D.d[2];
                                        if (iw < 0 || iw >= I.d[2]) continue;
                                        acc += static_cast<double>(xc[(id * I.d[1] + ih) * I.d[2] + iw]) *
                                               wc[(kd * K.d[1] + kh) * K.d[2] + kw];
                                    }
                                }
                            }
                        }
                        yo[(od * OUT.d[1] + oh) * OUT.d[2] + ow] = static_cast<float>(acc);
                    }
        }
    return y;
}

/// N-D transposed convolution (ONNX ConvTranspose, 1 to 3 spatial dims): x is [N, C, spatial...],
/// w is [C, O/groups, k...], bias is empty or [O], output_padding empty or one value per spatial
/// dim. Output size per spatial dim:
/// stride (in - 1) + output_padding + dilation (k - 1) + 1 - pads_begin - pads_end.
inline array conv_transpose(const array& x, const array& w, const array& bias, const conv_attrs& a,
                            const dims& output_padding = {}) {
    if (x.dimension() < 3 || x.dimension() > 5 || w.dimension() != x.dimension())
        throw kernel_error("sgmatch::reference::conv_transpose: input and weights must both be 3-D, 4-D or 5-D");
    const std::size_t sp = x.dimension() - 2;
    const std::int64_t N = static_cast<std::int64_t>(x.shape()[0]), C = static_cast<std::int64_t>(x.shape()[1]);
    const std::int64_t G = a.groups;
    if (G < 1 || C % G != 0 || static_cast<std::int64_t>(w.shape()[0]) != C)
        throw kernel_error("sgmatch::reference::conv_transpose: channels " + std::to_string(C) + ", weights' first dim " +
                           std::to_string(w.shape()[0]) + " and groups " + std::to_string(G) + " do not agree");
    const std::int64_t Og = static_cast<std::int64_t>(w.shape()[1]), O = Og * G, Cg = C / G;
    if (bias.size() != 0 && static_cast<std::int64_t>(bias.size()) != O)
        throw kernel_error("sgmatch::reference::conv_transpose: bias must have one value per output channel");
    const detail::conv_geometry geo = detail::geometry_of(x, w, a);
    const auto &I = geo.I, &K = geo.K, &S = geo.S, &D = geo.D, &PB = geo.PB, &PE = geo.PE;
    const auto OP = detail::lift(output_padding.empty() ? dims(sp, 0) : output_padding, sp, 0, "output_padding");
    detail::spatial3 OUT;
    for (int i = 0; i < 3; ++i) {
        OUT.d[i] = S.d[i] * (I.d[i] - 1) + OP.d[i] + D.d[i] * (K.d[i] - 1) + 1 - PB.d[i] - PE.d[i];
        if (OUT.d[i] < 1) throw kernel_error("sgmatch::reference::conv_transpose: the pads leave no output");
    }
    dims out_shape{N, O};
    for (std::size_t i = 0; i < sp; ++i) out_shape.push_back(OUT.d[3 - sp + i]);
    std::vector<double> acc(static_cast<std::size_t>(N * O * OUT.d[0] * OUT.d[1] * OUT.d[2]), 0.0);
    const float* xp = x.data();
    const float* wp = w.data();
    const std::int64_t in_plane = I.d[0] * I.d[1] * I.d[2], k_plane = K.d[0] * K.d[1] * K.d[2];
    const std::int64_t out_plane = OUT.d[0] * OUT.d[1] * OUT.d[2];
    // Scatter: input position i and tap k write output position i * stride - pad + k * dilation.
    for (std::int64_t n = 0; n < N; ++n)
        for (std::int64_t c = 0; c < C; ++c) {
            const std::int64_t g = c / Cg;
            const float* xc = xp + (n * C + c) * in_plane;
            for (std::int64_t j = 0; j < Og; ++j) {
                const float* wc = wp + (c * Og + j) * k_plane;
                double* yo = acc.data() + (n * O + g * Og + j) * out_plane;
                for (std::int64_t id = 0; id < I.d[0]; ++id)
                    for (std::int64_t ih = 0; ih < I.d[1]; ++ih)
                        for (std::int64_t iw = 0; iw < I.d[2]; ++iw) {
                            const double xv = xc[(id * I.d[1] + ih) * I.d[2] + iw];
                            for (std::int64_t kd = 0; kd < K.d[0]; ++kd) {
                                const std::int64_t od = id * S.d[0] - PB.d[0] + kd * D.d[0];
                                if (od < 0 || od >= OUT.d[0]) continue;
                                for (std::int64_t kh = 0; kh < K.d[1]; ++kh) {
                                    const std::int64_t oh = ih * S.d[1] - PB.d[1] + kh * D.d[1];
                                    if (oh < 0 || oh >= OUT.d[1]) continue;
                                    for (std::int64_t kw = 0; kw < K.d[2]; ++kw) {
                                        const std::int64_t ow = iw * S.d[2] - PB.d[2] + kw * D.d[2];
                                        if (ow < 0 || ow >= OUT.d[2]) continue;
                                        yo[(od * OUT.d[1] + oh) * OUT.d[2] + ow] += xv * wc[(kd * K.d[1] + kh) * K.d[2] + kw];
                                    }
                                }
                            }
                        }
            }
        }
    array y = xt::zeros<float>(detail::to_shape(out_shape));
    float* yp = y.data();
    for (std::int64_t n = 0; n < N; ++n)
        for (std::int64_t o = 0; o < O; ++o) {
            const double b = bias.size() ? bias.data()[o] : 0.0;
            for (std::int64_t i = 0; i < out_plane; ++i) {
                const std::size_t at = static_cast<std::size_t>((n * O + o) * out_plane + i);
                yp[at] = static_cast<float>(acc[at] + b);
            }
        }
    return y;
}

/// Inference batch normalization over axis 1: scale * (x - mean) / sqrt(var + eps) + bias.
inline array batch_norm(const array& x, const array& scale, const array& bias, const array& mean,
                        const array& var, float eps) {
    if (x.dimension() < 2) throw kernel_error("sgmatch::reference::batch_norm: input needs a channel axis");
    const std::size_t C = x.shape()[1];
    if (scale.size() != C || bias.size() != C || mean.size() != C || var.size() != C)
        throw kernel_error("sgmatch::reference::batch_norm: parameters must have one value per channel (" +
                           std::to_string(C) + ")");
    std::vector<std::size_t> pshape(x.dimension(), 1);
    pshape[1] = C;
    auto p = [&](const array& v) { return xt::reshape_view(v, pshape); };
    return (x - p(mean)) * (p(scale) / xt::sqrt(p(var) + eps)) + p(bias);
}

enum class pool_kind { max, average };

/// Max or average pooling over 1 to 3 spatial dims, the window's taps `dilations` apart (1 when
/// empty). Average pooling divides by the window inside the input unless count_include_pad.
inline array pool(const array& x, pool_kind kind, const dims& kernel, const dims& strides, const dims& pads_begin,
                  const dims& pads_end, bool count_include_pad = false, const dims& dilations = {}) {
    if (x.dimension() < 3 || x.dimension() > 5) throw kernel_error("sgmatch::reference::pool: input must be 3-D to 5-D");
    const std::size_t sp = x.dimension() - 2;
    dims in_sp;
    for (std::size_t i = 0; i < sp; ++i) in_sp.push_back(static_cast<std::int64_t>(x.shape()[2 + i]));
    const auto I = detail::lift(in_sp, sp, 1, "input"), K = detail::lift(kernel, sp, 1, "kernel");
    const auto S = detail::lift(strides, sp, 1, "strides");
    const auto PB = detail::lift(pads_begin, sp, 0, "pads_begin"), PE = detail::lift(pads_end, sp, 0, "pads_end");
    const auto D = detail::lift(dilations.empty() ? dims(sp, 1) : dilations, sp, 1, "dilations");
    detail::spatial3 OUT;
    for (int i = 0; i < 3; ++i) OUT.d[i] = (I.d[i] + PB.d[i] + PE.d[i] - (K.d[i] - 1) * D.d[i] - 1) / S.d[i] + 1;
    const std::int64_t NC = static_cast<std::int64_t>(x.shape()[0] * x.shape()[1]);
    dims out_shape{static_cast<std::int64_t>(x.shape()[0]), static_cast<std::int64_t>(x.shape()[1])};
    for (std::size_t i = 0; i < sp; ++i) out_shape.push_back(OUT.d[3 - sp + i]);
    array y = xt::zeros<float>(detail::to_shape(out_shape));
    const std::int64_t in_plane = I.d[0] * I.d[1] * I.d[2], out_plane = OUT.d[0] * OUT.d[1] * OUT.d[2];
    for (std::int64_t nc = 0; nc < NC; ++nc)
        for (std::int64_t od = 0; od < OUT.d[0]; ++od)
            for (std::int64_t oh = 0; oh < OUT.d[1]; ++oh)
                for (std::int64_t ow = 0; ow < OUT.d[2]; ++ow) {
                    float best = -std::numeric_limits<float>::infinity();
                    double sum = 0;
                    std::int64_t count = 0, padded = 0;
                    for (std::int64_t kd = 0; kd < K.d[0]; ++kd)
                        for (std::int64_t kh = 0; kh < K.d[1]; ++kh)
                            for (std::int64_t kw = 0; kw < K.d[2]; ++kw) {
                                const std::int64_t id = od * S.d[0] - PB.d[0] + kd * D.d[0];
                                const std::int64_t ih = oh * S.d[1] - PB.d[1] + kh * D.d[1];
                                const std::int64_t iw = ow * S.d[2] - PB.d[2] + kw * D.d[2];
                                const bool in = id >= 0 && id < I.d[0] && ih >= 0 && ih < I.d[1] && iw >= 0 && iw < I.d[2];
                                const bool in_padded = id < I.d[0] + PE.d[0] && ih < I.d[1] + PE.d[1] && iw < I.d[2] + PE.d[2];
                                if (in_padded) ++padded;
                                if (!in) continue;
                                const float v = x.data()[nc * in_plane + (id * I.d[1] + ih) * I.d[2] + iw];
                                best = std::max(best, v);
                                sum += v;
                                ++count;
                            }
                    float r = kind == pool_kind::max ? best
                                                     : static_cast<float>(sum / static_cast<double>(count_include_pad ? padded : count));
                    y.data()[nc * out_plane + (od * OUT.d[1] + oh) * OUT.d[2] + ow] = r;
                }
    return y;
}

/// Mean over every axis after the first two, kept as size-1 axes.
/// (Plain loops: xtensor 0.24's immediate reducers do not compile with g++ 12 in C++20 mode.)
inline array global_average_pool(const array& x) {
    if (x.dimension() < 3) throw kernel_error("sgmatch::reference::global_average_pool: input must be at least 3-D");
    std::vector<std::size_t> shape(x.shape().begin(), x.shape().end());
    std::size_t plane = 1;
    for (std::size_t i = 2; i < shape.size(); ++i) plane *= shape[i], shape[i] = 1;
    array y = xt::zeros<float>(shape);
    for (std::size_t nc = 0; nc < y.size(); ++nc) {
        double sum = 0;
        for (std::size_t i = 0; i < plane; ++i) sum += x.data()[nc * plane + i];
        y.data()[nc] = static_cast<float>(sum / static_cast<double>(plane));
    }
    return y;
}

/// ONNX Gemm: alpha * A' B' + beta * C, A' = A or A^T, B' likewise; C broadcasts.
inline array gemm(const array& A, const array& B, const array& C, bool trans_a, bool trans_b, float alpha = 1.0f,
                  float beta = 1.0f) {
    if (A.dimension() != 2 || B.dimension() != 2) throw kernel_error("sgmatch::reference::gemm: A and B must be 2-D");
    const std::size_t M = trans_a ? A.shape()[1] : A.shape()[0], K = trans_a ? A.shape()[0] : A.shape()[1];
    const std::size_t K2 = trans_b ? B.shape()[1] : B.shape()[0], Ncol = trans_b ? B.shape()[0] : B.shape()[1];
    if (K != K2) throw kernel_error("sgmatch::reference::gemm: inner dimensions differ (" + std::to_string(K) + " vs " +
                                    std::to_string(K2) + ")");
    array y = xt::zeros<float>({M, Ncol});
    for (std::size_t i = 0; i < M; ++i)
        for (std::size_t j = 0; j < Ncol; ++j) {
            double acc = 0;
            for (std::size_t k = 0; k < K; ++k)
                acc += static_cast<double>(trans_a ? A(k, i) : A(i, k)) * (trans_b ? B(j, k) : B(k, j));
            y(i, j) = alpha * static_cast<float>(acc);
        }
    if (C.size() != 0) y = y + beta * C;
    return y;
}

/// NumPy matmul for rank >= 2 operands (batch dims broadcast).
inline array matmul(const array& A, const array& B) {
    if (A.dimension() < 2 || B.dimension() < 2) throw kernel_error("sgmatch::reference::matmul: operands must be at least 2-D");
    const std::size_t M = A.shape()[A.dimension() - 2], K = A.shape()[A.dimension() - 1];
    const std::size_t K2 = B.shape()[B.dimension() - 2], Ncol = B.shape()[B.dimension() - 1];
    if (K != K2) throw kernel_error("sgmatch::reference::matmul: inner dimensions differ");
    // Broadcast the batch dims.
    const std::size_t rank = std::max(A.dimension(), B.dimension());
    std::vector<std::size_t> batch(rank - 2, 1);
    auto batch_dim = [&](const array& t, std::size_t i) -> std::size_t {
        const std::size_t off = rank - t.dimension();
        return i < off ? 1 : t.shape()[i - off];
    };
    for (std::size_t i = 0; i + 2 < rank; ++i) {
        const std::size_t a = batch_dim(A, i), b = batch_dim(B, i);
        if (a != b && a != 1 && b != 1) throw kernel_error("sgmatch::reference::matmul: batch dims do not broadcast");
        batch[i] = std::max(a, b);
    }
    std::vector<std::size_t> ashape = batch, bshape = batch, yshape = batch;
    ashape.push_back(M), ashape.push_back(K), bshape.push_back(K), bshape.push_back(Ncol);
    yshape.push_back(M), yshape.push_back(Ncol);
    const array Ab = xt::broadcast(A, ashape), Bb = xt::broadcast(B, bshape);
    array y = xt::zeros<float>(yshape);
    std::size_t batches = 1;
    for (auto b : batch) batches *= b;
    for (std::size_t t = 0; t < batches; ++t)
        for (std::size_t i = 0; i < M; ++i)
            for (std::size_t j = 0; j < Ncol; ++j) {
                double acc = 0;
                for (std::size_t k = 0; k < K; ++k)
                    acc += static_cast<double>(Ab.data()[(t * M + i) * K + k]) * Bb.data()[(t * K + k) * Ncol + j];
                y.data()[(t * M + i) * Ncol + j] = static_cast<float>(acc);
            }
    return y;
}

/// Softmax along `axis` (negative counts from the end).
inline array softmax(const array& x, std::int64_t axis) {
    const auto r = static_cast<std::int64_t>(x.dimension());
    if (axis < 0) axis += r;
    if (axis < 0 || axis >= r) throw kernel_error("sgmatch::reference::softmax: axis out of range");
    std::size_t outer = 1, inner = 1;
    const std::size_t len = x.shape()[static_cast<std::size_t>(axis)];
    for (std::int64_t i = 0; i < r; ++i)
        if (i < axis) outer *= x.shape()[static_cast<std::size_t>(i)];
        else if (i > axis) inner *= x.shape()[static_cast<std::size_t>(i)];
    array y = x;
    for (std::size_t o = 0; o < outer; ++o)
        for (std::size_t in = 0; in < inner; ++in) {
            float* p = y.data() + o * len * inner + in;
            float m = -std::numeric_limits<float>::infinity();
            for (std::size_t k = 0; k < len; ++k) m = std::max(m, p[k * inner]);
            double sum = 0;
            for (std::size_t k = 0; k < len; ++k) sum += (p[k * inner] = std::exp(p[k * inner] - m));
            for (std::size_t k = 0; k < len; ++k) p[k * inner] = static_cast<float>(p[k * inner] / sum);
        }
    return y;
}

/// [d0, d1, ...] -> [d0 * ... * d(axis-1), d(axis) * ...].
inline array flatten(const array& x, std::int64_t axis = 1) {
    if (axis < 0) axis += static_cast<std::int64_t>(x.dimension());  // counted from the back
    std::size_t a = 1, b = 1;
    for (std::size_t i = 0; i < x.dimension(); ++i) (static_cast<std::int64_t>(i) < axis ? a : b) *= x.shape()[i];
    array y = x;
    y.reshape({a, b});
    return y;
}

inline array concat(const std::vector<array>& xs, std::int64_t axis) {
    if (xs.empty()) throw kernel_error("sgmatch::reference::concat: no inputs");
    const auto r = static_cast<std::int64_t>(xs[0].dimension());
    if (axis < -r || axis >= r)
        throw kernel_error("sgmatch::reference::concat: axis " + std::to_string(axis) + " is out of range for rank " + std::to_string(r));
    if (axis < 0) axis += r;
    for (const auto& x : xs) {
        bool fits = x.dimension() == xs[0].dimension();
        for (std::size_t k = 0; fits && k < x.dimension(); ++k)
            fits = k == static_cast<std::size_t>(axis) || x.shape()[k] == xs[0].shape()[k];
        if (!fits) throw kernel_error("sgmatch::reference::concat: the inputs' shapes differ off the axis");
    }
    std::vector<std::size_t> shape(xs[0].shape().begin(), xs[0].shape().end());
    shape[static_cast<std::size_t>(axis)] = 0;
    for (auto& x : xs) shape[static_cast<std::size_t>(axis)] += x.shape()[static_cast<std::size_t>(axis)];
    array y = xt::zeros<float>(shape);
    std::size_t outer = 1, inner = 1;
    for (std::int64_t i = 0; i < axis; ++i) outer *= shape[static_cast<std::size_t>(i)];
    for (std::size_t i = static_cast<std::size_t>(axis) + 1; i < shape.size(); ++i) inner *= shape[i];
    std::size_t offset = 0;
    const std::size_t total = shape[static_cast<std::size_t>(axis)] * inner;
    for (auto& x : xs) {
        const std::size_t chunk = x.shape()[static_cast<std::size_t>(axis)] * inner;
        for (std::size_t o = 0; o < outer; ++o)
            std::copy(x.data() + o * chunk, x.data() + (o + 1) * chunk, y.data() + o * total + offset);
        offset += chunk;
    }
    return y;
}

/// Layer normalization over the axes from `axis` on: scale * (x - mean) / sqrt(var + eps) + bias.
inline array layer_norm(const array& x, const array& scale, const array& bias, std::int64_t axis, float eps) {
    const auto r = static_cast<std::int64_t>(x.dimension());
    if (axis < 0) axis += r;
    std::size_t outer = 1, inner = 1;
    for (std::int64_t i = 0; i < r; ++i) (i < axis ? outer : inner) *= x.shape()[static_cast<std::size_t>(i)];
    if (scale.size() != inner || (bias.size() != 0 && bias.size() != inner))
        throw kernel_error("sgmatch::reference::layer_norm: scale and bias must cover the normalized axes");
    array y = x;
    for (std::size_t o = 0; o < outer; ++o) {
        const float* xp = x.data() + o * inner;
        double mean = 0, var = 0;
        for (std::size_t i = 0; i < inner; ++i) mean += xp[i];
        mean /= static_cast<double>(inner);
        for (std::size_t i = 0; i < inner; ++i) var += (xp[i] - mean) * (xp[i] - mean);
        var /= static_cast<double>(inner);
        const double inv = 1.0 / std::sqrt(var + eps);
        for (std::size_t i = 0; i < inner; ++i)
            y.data()[o * inner + i] =
                static_cast<float>((xp[i] - mean) * inv * scale.data()[i] + (bias.size() ? bias.data()[i] : 0.0f));
    }
    return y;
}

/// ONNX LRN across channels (axis 1): y = x / (bias + alpha / size * sum of x^2 over the
/// channels c - floor((size - 1) / 2) .. c + ceil((size - 1) / 2))^beta.
inline array lrn(const array& x, std::int64_t size, float alpha, float beta, float bias) {
    if (x.dimension() < 2 || size < 1)
        throw kernel_error("sgmatch::reference::lrn: the input needs a channel axis and size must be positive");
    const std::size_t N = x.shape()[0], C = x.shape()[1];
    std::size_t plane = 1;
    for (std::size_t i = 2; i < x.dimension(); ++i) plane *= x.shape()[i];
    const auto lo = (size - 1) / 2, hi = size - 1 - lo;
    array y = x;
    for (std::size_t n = 0; n < N; ++n)
        for (std::size_t c = 0; c < C; ++c)
            for (std::size_t i = 0; i < plane; ++i) {
                double sq = 0;
                const auto from = static_cast<std::int64_t>(c) - lo, to = static_cast<std::int64_t>(c) + hi;
                for (std::int64_t k = from < 0 ? 0 : from; k <= to && k < static_cast<std::int64_t>(C); ++k) {
                    const double v = x.data()[(n * C + static_cast<std::size_t>(k)) * plane + i];
                    sq += v * v;
                }
                const std::size_t at = (n * C + c) * plane + i;
                y.data()[at] = static_cast<float>(x.data()[at] / std::pow(bias + alpha / static_cast<double>(size) * sq, beta));
            }
    return y;
}

enum class pad_mode { constant, reflect, edge };

/// ONNX Pad: pads is [begin_0, ..., begin_{r-1}, end_0, ..., end_{r-1}] (negative values crop).
/// reflect mirrors without repeating the edge value (needs pads below the dim), edge repeats it.
inline array pad(const array& x, const dims& pads, pad_mode mode = pad_mode::constant, float value = 0.0f) {
    const std::size_t r = x.dimension();
    if (pads.size() != 2 * r)
        throw kernel_error("sgmatch::reference::pad: pads needs " + std::to_string(2 * r) + " values, got " +
                           std::to_string(pads.size()));
    std::vector<std::size_t> out(r);
    for (std::size_t i = 0; i < r; ++i) {
        const std::int64_t d = static_cast<std::int64_t>(x.shape()[i]) + pads[i] + pads[r + i];
        if (d < 0) throw kernel_error("sgmatch::reference::pad: the pads crop more than the input has");
        if (mode == pad_mode::reflect && (pads[i] >= static_cast<std::int64_t>(x.shape()[i]) ||
                                          pads[r + i] >= static_cast<std::int64_t>(x.shape()[i])))
            throw kernel_error("sgmatch::reference::pad: reflect pads must be smaller than the padded dim");
        if (mode == pad_mode::edge && x.shape()[i] == 0 && d > 0)
            throw kernel_error("sgmatch::reference::pad: edge padding of an empty dim");
        out[i] = static_cast<std::size_t>(d);
    }
    array y = xt::zeros<float>(out);
    std::vector<std::size_t> idx(r, 0);
    for (std::size_t flat = 0; flat < y.size(); ++flat) {
        // idx: the output position; map each coordinate back to the input.
        std::size_t src = 0;
        bool inside = true;
        for (std::size_t i = 0; i < r; ++i) {
            const auto n = static_cast<std::int64_t>(x.shape()[i]);
            std::int64_t j = static_cast<std::int64_t>(idx[i]) - pads[i];
            if (j < 0 || j >= n) {
                if (mode == pad_mode::constant) inside = false;
                else if (mode == pad_mode::edge) j = j < 0 ? 0 : n - 1;
                else j = j < 0 ? -j : 2 * (n - 1) - j;
            }
            src = src * static_cast<std::size_t>(n) + static_cast<std::size_t>(inside ? j : 0);
        }
        y.data()[flat] = inside ? x.data()[src] : value;
        for (std::size_t i = r; i-- > 0;) {  // next output position
            if (++idx[i] < out[i]) break;
            idx[i] = 0;
        }
    }
    return y;
}

}  // namespace reference
SGMATCH_END_NAMESPACE
