// sgmatch/onednn/compat.hpp - the oneDNN 2.x / 3.x API differences sgmatch uses, in one place.
//
// Switched on DNNL_VERSION_MAJOR. 2.x (this machine has 2.6.3): op descriptors, then primitive
// descriptors; append_eltwise(scale, alg, alpha, beta); memory::desc::dims(). 3.x: primitive
// descriptors built directly from the engine and the shapes, no eltwise scale, get_dims().
//
// Known limitation: only the 2.x branch is built and tested here (Debian 12 ships 2.6.3); the
// 3.x branch follows oneDNN 3.0's documented API and is untested until a 3.x build is at hand.
#pragma once

#include <cstdint>
#include <optional>
#include <unordered_map>
#include <vector>

#include <oneapi/dnnl/dnnl.hpp>

#include "sgmatch/detail/config.hpp"
#include "sgmatch/detail/strides.hpp"

SGMATCH_BEGIN_NAMESPACE
namespace onednn {
namespace compat {

constexpr int major = DNNL_VERSION_MAJOR;

inline dnnl::memory::dims dims_of(const dnnl::memory::desc& d) {
#if DNNL_VERSION_MAJOR >= 3
    return d.get_dims();
#else
    // Not d.dims(): its range constructor, inlined at -O3, trips g++ 12's false
    // -Wfree-nonheap-object in users' code.
    const int n = d.data.ndims;
    dnnl::memory::dims out(static_cast<std::size_t>(n < 0 ? 0 : n));
    for (std::size_t i = 0; i < out.size(); ++i) out[i] = d.data.dims[i];
    return out;
#endif
}

/// The product of d's dims (its logical element count, without padding), allocating nothing.
inline std::int64_t element_count(const dnnl::memory::desc& d) {
    std::int64_t n = 1;
#if DNNL_VERSION_MAJOR >= 3
    for (const auto x : d.get_dims()) n *= x;
#else
    for (int i = 0; i < d.data.ndims; ++i) n *= d.data.dims[i];
#endif
    return n;
}

/// The strides (in elements) of a layout that is a permutation of the dims with no blocking, no
/// padding and no offset (plain, channels-last nhwc, ...), else empty: a tensor in such a layout
/// reads as a strided value in place.
inline std::vector<std::int64_t> permuted_strides(const dnnl::memory::desc& d) {
#if DNNL_VERSION_MAJOR >= 3
    if (d.get_format_kind() != dnnl::memory::format_kind::blocked || d.get_inner_nblks() != 0) return {};
    const dnnl::memory::dims dims = d.get_dims(), padded = d.get_padded_dims(), strides = d.get_strides();
    if (padded != dims) return {};
    std::vector<std::int64_t> out(strides.begin(), strides.end());
#else
    const dnnl_memory_desc_t& m = d.data;
    if (m.format_kind != dnnl_blocked || m.format_desc.blocking.inner_nblks != 0 || m.offset0 != 0) return {};
    for (int i = 0; i < m.ndims; ++i)
        if (m.padded_dims[i] != m.dims[i]) return {};
    std::vector<std::int64_t> out(m.format_desc.blocking.strides, m.format_desc.blocking.strides + m.ndims);
    const dnnl::memory::dims dims(m.dims, m.dims + m.ndims);
#endif
    return sgmatch::detail::packed_strides(dims, out) ? out : std::vector<std::int64_t>{};
}

/// The element count of m's buffer when it holds its f32 elements and nothing else (any order,
/// no padding: an element-wise op may then run over the bytes), else -1. Copies no descriptor.
inline std::int64_t dense_f32_count(const dnnl::memory& m) {
#if DNNL_VERSION_MAJOR >= 3
    const dnnl::memory::desc d = m.get_desc();
    if (d.get_data_type() != dnnl::memory::data_type::f32) return -1;
    const std::int64_t n = element_count(d);
    return static_cast<std::int64_t>(d.get_size()) == n * 4 ? n : -1;
#else
    const dnnl_memory_desc_t* md = nullptr;
    if (dnnl_memory_get_memory_desc(m.get(), &md) != dnnl_success || md == nullptr || md->data_type != dnnl_f32) return -1;
    std::int64_t n = 1;
    for (int i = 0; i < md->ndims; ++i) n *= md->dims[i];
    return static_cast<std::int64_t>(dnnl_memory_desc_get_size(md)) == n * 4 ? n : -1;
#endif
}

/// f(dims, ndims) with m's logical dims, without copying its descriptor (in oneDNN 2.x).
template <class F>
auto with_dims(const dnnl::memory& m, F f) {
#if DNNL_VERSION_MAJOR >= 3
    const dnnl::memory::dims d = m.get_desc().get_dims();
    return f(d.data(), static_cast<int>(d.size()));
#else
    const dnnl_memory_desc_t* md = nullptr;
    dnnl::error::wrap_c_api(dnnl_memory_get_memory_desc(m.get(), &md), "could not get a memory descriptor");
    return f(static_cast<const std::int64_t*>(md->dims), md->ndims);
#endif
}

inline dnnl::memory::data_type data_type_of(const dnnl::memory::desc& d) {
#if DNNL_VERSION_MAJOR >= 3
    return d.get_data_type();
#else
    return d.data_type();
#endif
}

/// alg(alpha, beta) appended to `po`. Algorithms whose parameters are fixed in 2.x and free in
/// 3.x (soft_relu, hardswish) get the 3.x values that give the 2.x function.
inline void append_eltwise(dnnl::post_ops& po, dnnl::algorithm alg, float alpha, float beta) {
#if DNNL_VERSION_MAJOR >= 3
    if (alg == dnnl::algorithm::eltwise_soft_relu) alpha = 1.0f;
    if (alg == dnnl::algorithm::eltwise_hardswish) {
        alpha = 1.0f / 6.0f;
        beta = 0.5f;
    }
    po.append_eltwise(alg, alpha, beta);
#else
    po.append_eltwise(1.0f, alg, alpha, beta);
#endif
}

/// A 3x3 depthwise convolution (pad 1, stride 1 or 2) fused after a 1x1 convolution, fp32.
inline void append_depthwise(dnnl::post_ops& po, std::int64_t stride) {
    using dt = dnnl::memory::data_type;
#if DNNL_VERSION_MAJOR >= 3
    po.append_dw(dt::f32, dt::f32, dt::f32, 3, stride, 1);
#else
    po.append_dw(dt::f32, dt::f32, dt::f32, 3, stride, 1, 0, {});
#endif
}

/// A forward-inference convolution primitive descriptor. `bias` may be a zero desc (no bias).
/// Dilations are oneDNN's: 0 means dense. alg: direct or Winograd.
inline dnnl::convolution_forward::primitive_desc conv_pd(
    const dnnl::engine& eng, const dnnl::memory::desc& src, const dnnl::memory::desc& weights,
    const dnnl::memory::desc& bias, const dnnl::memory::desc& dst, const dnnl::memory::dims& strides,
    const dnnl::memory::dims& dilates, const dnnl::memory::dims& pad_l, const dnnl::memory::dims& pad_r,
    const dnnl::primitive_attr& attr, dnnl::algorithm alg = dnnl::algorithm::convolution_direct) {
#if DNNL_VERSION_MAJOR >= 3
    return dnnl::convolution_forward::primitive_desc(eng, dnnl::prop_kind::forward_inference, alg, src, weights, bias, dst,
                                                     strides, dilates, pad_l, pad_r, attr);
#else
    dnnl::convolution_forward::desc d(dnnl::prop_kind::forward_inference, alg, src, weights, bias, dst, strides, dilates,
                                      pad_l, pad_r);
    return dnnl::convolution_forward::primitive_desc(d, attr, eng);
#endif
}

/// A forward-inference deconvolution (transposed convolution) primitive descriptor; arguments
/// as conv_pd's (weights in oneDNN's [(G,) O, C, k...] order).
inline dnnl::deconvolution_forward::primitive_desc deconv_pd(
    const dnnl::engine& eng, const dnnl::memory::desc& src, const dnnl::memory::desc& weights,
    const dnnl::memory::desc& bias, const dnnl::memory::desc& dst, const dnnl::memory::dims& strides,
    const dnnl::memory::dims& dilates, const dnnl::memory::dims& pad_l, const dnnl::memory::dims& pad_r,
    const dnnl::primitive_attr& attr) {
#if DNNL_VERSION_MAJOR >= 3
    return dnnl::deconvolution_forward::primitive_desc(eng, dnnl::prop_kind::forward_inference,
                                                       dnnl::algorithm::deconvolution_direct, src, weights, bias, dst,
                                                       strides, dilates, pad_l, pad_r, attr);
#else
    dnnl::deconvolution_forward::desc d(dnnl::prop_kind::forward_inference, dnnl::algorithm::deconvolution_direct, src,
                                        weights, bias, dst, strides, dilates, pad_l, pad_r);
    return dnnl::deconvolution_forward::primitive_desc(d, attr, eng);
#endif
}

/// An inference BatchNorm with global statistics, scale and shift over layout d (relu fused
/// when asked: oneDNN's fuse_norm_relu).
inline dnnl::batch_normalization_forward::primitive_desc batch_norm_pd(const dnnl::engine& eng,
                                                                       const dnnl::memory::desc& d, float eps,
                                                                       bool fuse_relu,
                                                                       const dnnl::primitive_attr& attr) {
    using bn = dnnl::batch_normalization_forward;
    using F = dnnl::normalization_flags;
#if DNNL_VERSION_MAJOR >= 3
    F flags = F::use_global_stats | F::use_scale | F::use_shift;
    if (fuse_relu) flags = flags | F::fuse_norm_relu;
    return bn::primitive_desc(eng, dnnl::prop_kind::forward_inference, d, d, eps, flags, attr);
#else
    F flags = F::use_global_stats | F::use_scale_shift;
    if (fuse_relu) flags = flags | F::fuse_norm_relu;
    return bn::primitive_desc(bn::desc(dnnl::prop_kind::forward_inference, d, eps, flags), attr, eng);
#endif
}

/// Bind a BatchNorm's scale and shift to args: ss holds C scale values, then C shift values
/// (2.x reads them as one [2, C] scale_shift argument, 3.x as two).
inline void bind_scale_shift(std::unordered_map<int, dnnl::memory>& args, const dnnl::engine& eng, const float* ss,
                             std::int64_t C) {
    using md = dnnl::memory::desc;
    auto* p = const_cast<float*>(ss);
#if DNNL_VERSION_MAJOR >= 3
    const md d({C}, dnnl::memory::data_type::f32, dnnl::memory::format_tag::a);
    args[DNNL_ARG_SCALE] = dnnl::memory(d, eng, p);
    args[DNNL_ARG_SHIFT] = dnnl::memory(d, eng, p + C);
#else
    args[DNNL_ARG_SCALE_SHIFT] = dnnl::memory(md({2, C}, dnnl::memory::data_type::f32, dnnl::memory::format_tag::ab), eng, p);
#endif
}

/// A matmul primitive descriptor; `bias` may be a zero desc (no bias).
inline dnnl::matmul::primitive_desc matmul_pd(const dnnl::engine& eng, const dnnl::memory::desc& src,
                                              const dnnl::memory::desc& weights, const dnnl::memory::desc& bias,
                                              const dnnl::memory::desc& dst,
                                              const dnnl::primitive_attr& attr = dnnl::primitive_attr()) {
#if DNNL_VERSION_MAJOR >= 3
    return dnnl::matmul::primitive_desc(eng, src, weights, bias, dst, attr);
#else
    return dnnl::matmul::primitive_desc(dnnl::matmul::desc(src, weights, bias, dst), attr, eng);
#endif
}

/// A forward-inference eltwise primitive descriptor over layout d (in place allowed).
inline dnnl::eltwise_forward::primitive_desc eltwise_pd(const dnnl::engine& eng, dnnl::algorithm alg,
                                                        const dnnl::memory::desc& d, float alpha, float beta) {
#if DNNL_VERSION_MAJOR >= 3
    if (alg == dnnl::algorithm::eltwise_soft_relu) alpha = 1.0f;
    if (alg == dnnl::algorithm::eltwise_hardswish) {
        alpha = 1.0f / 6.0f;
        beta = 0.5f;
    }
    return dnnl::eltwise_forward::primitive_desc(eng, dnnl::prop_kind::forward_inference, alg, d, d, alpha, beta);
#else
    return dnnl::eltwise_forward::primitive_desc(
        dnnl::eltwise_forward::desc(dnnl::prop_kind::forward_inference, alg, d, alpha, beta), eng);
#endif
}

/// A binary primitive descriptor: dst = src0 (alg) src1, src1 broadcast.
inline dnnl::binary::primitive_desc binary_pd(const dnnl::engine& eng, dnnl::algorithm alg, const dnnl::memory::desc& src0,
                                              const dnnl::memory::desc& src1, const dnnl::memory::desc& dst,
                                              const dnnl::primitive_attr& attr = dnnl::primitive_attr()) {
#if DNNL_VERSION_MAJOR >= 3
    return dnnl::binary::primitive_desc(eng, alg, src0, src1, dst, attr);
#else
    return dnnl::binary::primitive_desc(dnnl::binary::desc(alg, src0, src1, dst), attr, eng);
#endif
}

/// A forward-inference softmax along `axis` over layout d (the destination in the same layout).
inline dnnl::softmax_forward::primitive_desc softmax_pd(const dnnl::engine& eng, const dnnl::memory::desc& d, int axis,
                                                        const dnnl::primitive_attr& attr) {
#if DNNL_VERSION_MAJOR >= 3
    return dnnl::softmax_forward::primitive_desc(eng, dnnl::prop_kind::forward_inference,
                                                 dnnl::algorithm::softmax_accurate, d, d, axis, attr);
#else
    return dnnl::softmax_forward::primitive_desc(
        dnnl::softmax_forward::desc(dnnl::prop_kind::forward_inference, d, axis), attr, eng);
#endif
}

/// The primitive that computes log-softmax: 3.x's softmax with algorithm softmax_log, 2.x's
/// softmax_v2 with it.
#if DNNL_VERSION_MAJOR >= 3
using log_softmax_forward = dnnl::softmax_forward;
#else
using log_softmax_forward = dnnl::softmax_v2_forward;
#endif
inline log_softmax_forward::primitive_desc log_softmax_pd(const dnnl::engine& eng, const dnnl::memory::desc& d, int axis,
                                                          const dnnl::primitive_attr& attr) {
#if DNNL_VERSION_MAJOR >= 3
    return dnnl::softmax_forward::primitive_desc(eng, dnnl::prop_kind::forward_inference, dnnl::algorithm::softmax_log, d, d, axis, attr);
#else
    return dnnl::softmax_v2_forward::primitive_desc(
        dnnl::softmax_v2_forward::desc(dnnl::prop_kind::forward_inference, dnnl::algorithm::softmax_log, d, d, axis), attr, eng);
#endif
}

/// A forward-inference LRN across channels over layout d: x / (k + alpha / size * sum x^2)^beta.
inline dnnl::lrn_forward::primitive_desc lrn_pd(const dnnl::engine& eng, const dnnl::memory::desc& d, std::int64_t size,
                                                float alpha, float beta, float k, const dnnl::primitive_attr& attr) {
#if DNNL_VERSION_MAJOR >= 3
    return dnnl::lrn_forward::primitive_desc(eng, dnnl::prop_kind::forward_inference,
                                             dnnl::algorithm::lrn_across_channels, d, d, size, alpha, beta, k, attr);
#else
    return dnnl::lrn_forward::primitive_desc(
        dnnl::lrn_forward::desc(dnnl::prop_kind::forward_inference, dnnl::algorithm::lrn_across_channels, d, size, alpha,
                                beta, k),
        attr, eng);
#endif
}

/// A forward-inference layer normalization over the last axis of d, statistics computed, with a
/// scale and (when `shift`) a shift of one value per element of that axis.
inline dnnl::layer_normalization_forward::primitive_desc layer_norm_pd(const dnnl::engine& eng,
                                                                       const dnnl::memory::desc& d, float eps, bool shift,
                                                                       const dnnl::primitive_attr& attr) {
    using ln = dnnl::layer_normalization_forward;
    using F = dnnl::normalization_flags;
    const F flags = shift ? F::use_scale | F::use_shift : F::use_scale;
#if DNNL_VERSION_MAJOR >= 3
    return ln::primitive_desc(eng, dnnl::prop_kind::forward_inference, d, d, eps, flags, attr);
#else
    return ln::primitive_desc(ln::desc(dnnl::prop_kind::forward_inference, d, eps, flags), attr, eng);
#endif
}

/// A reduction of src into dst (dst's dims 1 where src is reduced).
inline dnnl::reduction::primitive_desc reduction_pd(const dnnl::engine& eng, dnnl::algorithm alg, const dnnl::memory::desc& src,
                                                    const dnnl::memory::desc& dst, float p, const dnnl::primitive_attr& attr) {
#if DNNL_VERSION_MAJOR >= 3
    return dnnl::reduction::primitive_desc(eng, alg, src, dst, p, 0.0f, attr);
#else
    return dnnl::reduction::primitive_desc(dnnl::reduction::desc(alg, src, dst, p, 0.0f), attr, eng);
#endif
}

/// PReLU of src with slopes `weights` (dims 1 where they broadcast), into dst.
inline dnnl::prelu_forward::primitive_desc prelu_pd(const dnnl::engine& eng, const dnnl::memory::desc& src,
                                                    const dnnl::memory::desc& weights, const dnnl::memory::desc& dst,
                                                    const dnnl::primitive_attr& attr) {
#if DNNL_VERSION_MAJOR >= 3
    return dnnl::prelu_forward::primitive_desc(eng, dnnl::prop_kind::forward_inference, src, weights, dst, attr);
#else
    (void)dst;  // 2.x: the destination is the source's layout
    return dnnl::prelu_forward::primitive_desc(dnnl::prelu_forward::desc(dnnl::prop_kind::forward_inference, src, weights), attr,
                                               eng);
#endif
}

/// The sum of `srcs`, each times its scale, into dst (its layout given).
inline dnnl::sum::primitive_desc sum_pd(const dnnl::engine& eng, const dnnl::memory::desc& dst, const std::vector<float>& scales,
                                        const std::vector<dnnl::memory::desc>& srcs, const dnnl::primitive_attr& attr) {
#if DNNL_VERSION_MAJOR >= 3
    return dnnl::sum::primitive_desc(eng, dst, scales, srcs, attr);
#else
    return dnnl::sum::primitive_desc(dst, scales, srcs, eng, attr);
#endif
}

/// Resampling of src into dst (nearest or linear; the factors are dst's dims over src's).
inline dnnl::resampling_forward::primitive_desc resampling_pd(const dnnl::engine& eng, dnnl::algorithm alg,
                                                              const dnnl::memory::desc& src, const dnnl::memory::desc& dst,
                                                              const dnnl::primitive_attr& attr) {
#if DNNL_VERSION_MAJOR >= 3
    return dnnl::resampling_forward::primitive_desc(eng, dnnl::prop_kind::forward_inference, alg, src, dst, attr);
#else
    return dnnl::resampling_forward::primitive_desc(
        dnnl::resampling_forward::desc(dnnl::prop_kind::forward_inference, alg, src, dst), attr, eng);
#endif
}

/// The layout of `like` for other dims of the same rank, where it is one of the layouts the
/// kernels' primitives choose (plain, channels last, channels blocked by 4, 8 or 16); none
/// otherwise.
inline std::optional<dnnl::memory::desc> same_layout(const dnnl::memory::desc& like, const dnnl::memory::dims& d) {
    using tag = dnnl::memory::format_tag;
    const dnnl::memory::dims ld = dims_of(like);
    if (ld.size() != d.size()) return std::nullopt;
    std::vector<tag> tags;
    switch (d.size()) {
        case 3: tags = {tag::abc, tag::acb, tag::aBc16b, tag::aBc8b, tag::aBc4b}; break;
        case 4: tags = {tag::abcd, tag::acdb, tag::aBcd16b, tag::aBcd8b, tag::aBcd4b}; break;
        case 5: tags = {tag::abcde, tag::acdeb, tag::aBcde16b, tag::aBcde8b, tag::aBcde4b}; break;
        default: return std::nullopt;
    }
    for (tag t : tags)
        if (dnnl::memory::desc(ld, data_type_of(like), t) == like) return dnnl::memory::desc(d, data_type_of(like), t);
    return std::nullopt;
}

/// A concatenation along `axis` into `dst` (its layout given).
inline dnnl::concat::primitive_desc concat_pd(const dnnl::engine& eng, const dnnl::memory::desc& dst, int axis,
                                              const std::vector<dnnl::memory::desc>& srcs, const dnnl::primitive_attr& attr) {
#if DNNL_VERSION_MAJOR >= 3
    return dnnl::concat::primitive_desc(eng, dst, axis, srcs, attr);
#else
    return dnnl::concat::primitive_desc(dst, axis, srcs, eng, attr);
#endif
}

/// A concatenation along `axis`; the destination's layout is oneDNN's choice.
inline dnnl::concat::primitive_desc concat_pd(const dnnl::engine& eng, int axis, const std::vector<dnnl::memory::desc>& srcs,
                                              const dnnl::primitive_attr& attr) {
#if DNNL_VERSION_MAJOR >= 3
    return dnnl::concat::primitive_desc(eng, axis, srcs, attr);
#else
    return dnnl::concat::primitive_desc(axis, srcs, eng, attr);
#endif
}

/// A forward-inference pooling primitive (2.x: pooling_v2, which has dilations; 3.x: pooling).
#if DNNL_VERSION_MAJOR >= 3
using pooling_forward = dnnl::pooling_forward;
#else
using pooling_forward = dnnl::pooling_v2_forward;
#endif
inline pooling_forward::primitive_desc pooling_pd(const dnnl::engine& eng, dnnl::algorithm alg,
                                                  const dnnl::memory::desc& src, const dnnl::memory::desc& dst,
                                                  const dnnl::memory::dims& strides, const dnnl::memory::dims& kernel,
                                                  const dnnl::memory::dims& pad_l, const dnnl::memory::dims& pad_r,
                                                  const dnnl::primitive_attr& attr, dnnl::memory::dims dilation = {}) {
    if (dilation.empty()) dilation.assign(kernel.size(), 0);  // oneDNN counts the gaps: ONNX's dilation - 1
#if DNNL_VERSION_MAJOR >= 3
    return pooling_forward::primitive_desc(eng, dnnl::prop_kind::forward_inference, alg, src, dst, strides, kernel,
                                           dilation, pad_l, pad_r, attr);
#else
    return pooling_forward::primitive_desc(
        pooling_forward::desc(dnnl::prop_kind::forward_inference, alg, src, dst, strides, kernel, dilation, pad_l, pad_r),
        attr, eng);
#endif
}

/// Post-ops oneDNN 2.6.3 computes wrongly when fused: a second eltwise post-op with the same
/// algorithm as an earlier one but other parameters runs with the earlier one's parameters
/// (measured here: leaky_relu(0.1) then relu, clip then clip, linear then linear, elu then elu,
/// on brgconv and brdgmm_dw alike; tests/onednn/fused_conv.cpp). Returns the index of the first
/// post-op that must run outside the fused primitive (ops.size() if none). Ops is any range of
/// (is_eltwise, alg, alpha, beta) records.
template <class Ops, class Get>
std::size_t fusable_prefix(const Ops& ops, Get get) {
    for (std::size_t i = 0; i < ops.size(); ++i) {
        const auto [elt_i, alg_i, a_i, b_i] = get(ops[i]);
        if (!elt_i) continue;
        for (std::size_t j = 0; j < i; ++j) {
            const auto [elt_j, alg_j, a_j, b_j] = get(ops[j]);
            if (elt_j && alg_j == alg_i && (a_j != a_i || b_j != b_i)) return i;
        }
    }
    return ops.size();
}

/// A recurrent cell's forward-inference primitive and the layouts it chose for its weights.
enum class rnn_cell { vanilla_tanh, gru, lbr_gru, lstm };
struct rnn_memory_descs {
    dnnl::memory::desc src_layer, src_iter, src_iter_c, weights_layer, weights_iter, weights_peephole, bias, dst_layer, dst_iter, dst_iter_c;
};
struct rnn_primitive {
    dnnl::primitive prim;
    dnnl::memory::desc weights_layer, weights_iter, scratchpad;
};
/// Throws dnnl::error where oneDNN has no implementation. The iter_c descriptors are read for
/// LSTM only; a zero weights_peephole means none.
inline rnn_primitive make_rnn(const dnnl::engine& eng, rnn_cell cell, dnnl::rnn_direction dir, const rnn_memory_descs& d,
                              const dnnl::primitive_attr& attr) {
    constexpr auto inference = dnnl::prop_kind::forward_inference;
    auto done = [](auto pd, auto prim) { return rnn_primitive{prim, pd.weights_layer_desc(), pd.weights_iter_desc(), pd.scratchpad_desc()}; };
#if DNNL_VERSION_MAJOR >= 3
    switch (cell) {
        case rnn_cell::vanilla_tanh: {
            const dnnl::vanilla_rnn_forward::primitive_desc pd(eng, inference, dnnl::algorithm::eltwise_tanh, dir, d.src_layer, d.src_iter,
                                                               d.weights_layer, d.weights_iter, d.bias, d.dst_layer, d.dst_iter, attr);
            return done(pd, dnnl::vanilla_rnn_forward(pd));
        }
        case rnn_cell::gru: {
            const dnnl::gru_forward::primitive_desc pd(eng, inference, dir, d.src_layer, d.src_iter, d.weights_layer, d.weights_iter, d.bias,
                                                       d.dst_layer, d.dst_iter, attr);
            return done(pd, dnnl::gru_forward(pd));
        }
        case rnn_cell::lbr_gru: {
            const dnnl::lbr_gru_forward::primitive_desc pd(eng, inference, dir, d.src_layer, d.src_iter, d.weights_layer, d.weights_iter, d.bias,
                                                           d.dst_layer, d.dst_iter, attr);
            return done(pd, dnnl::lbr_gru_forward(pd));
        }
        case rnn_cell::lstm: break;
    }
    const dnnl::lstm_forward::primitive_desc pd(eng, inference, dir, d.src_layer, d.src_iter, d.src_iter_c, d.weights_layer, d.weights_iter,
                                                d.weights_peephole, d.bias, d.dst_layer, d.dst_iter, d.dst_iter_c, attr);
    return done(pd, dnnl::lstm_forward(pd));
#else
    switch (cell) {
        case rnn_cell::vanilla_tanh: {
            const dnnl::vanilla_rnn_forward::desc od(inference, dnnl::algorithm::eltwise_tanh, dir, d.src_layer, d.src_iter, d.weights_layer,
                                                     d.weights_iter, d.bias, d.dst_layer, d.dst_iter);
            const dnnl::vanilla_rnn_forward::primitive_desc pd(od, attr, eng);
            return done(pd, dnnl::vanilla_rnn_forward(pd));
        }
        case rnn_cell::gru: {
            const dnnl::gru_forward::desc od(inference, dir, d.src_layer, d.src_iter, d.weights_layer, d.weights_iter, d.bias, d.dst_layer,
                                             d.dst_iter);
            const dnnl::gru_forward::primitive_desc pd(od, attr, eng);
            return done(pd, dnnl::gru_forward(pd));
        }
        case rnn_cell::lbr_gru: {
            const dnnl::lbr_gru_forward::desc od(inference, dir, d.src_layer, d.src_iter, d.weights_layer, d.weights_iter, d.bias, d.dst_layer,
                                                 d.dst_iter);
            const dnnl::lbr_gru_forward::primitive_desc pd(od, attr, eng);
            return done(pd, dnnl::lbr_gru_forward(pd));
        }
        case rnn_cell::lstm: break;
    }
    const dnnl::lstm_forward::desc od(inference, dir, d.src_layer, d.src_iter, d.src_iter_c, d.weights_layer, d.weights_iter,
                                      d.weights_peephole, d.bias, d.dst_layer, d.dst_iter, d.dst_iter_c);
    const dnnl::lstm_forward::primitive_desc pd(od, attr, eng);
    return done(pd, dnnl::lstm_forward(pd));
#endif
}

/// True when the library was built with a given implementation name in this pd (for tests and
/// benchmarks that check which kernel oneDNN picked).
template <class PD>
const char* impl_name(const PD& pd) {
    return pd.impl_info_str();
}

}  // namespace compat
}  // namespace onednn
SGMATCH_END_NAMESPACE
