// sgmatch/exec/kernels/qconv_onednn.hpp - QLinearConv and ConvInteger on oneDNN's int8
// convolution where it computes what ONNX defines; the reference kernels (kernels/quantize.hpp)
// everywhere else.
//
// oneDNN 2.x computes, for u8 or s8 x and s8 w,
//   y = saturate(round_half_even(oscale[m] * (sum (x - x_zero_point) * w + bias[m])) + y_zero_point)
// with the padded positions adding nothing (as if holding x's zero point), an s32 bias, one output
// scale or one per output channel, u8, s8 or s32 y: QLinearConv with oscale[m] = x_scale *
// w_scale[m] / y_scale (computed as the reference kernel computes it, in f32), and ConvInteger
// (s32 y, no scale, no bias). Taken for these forms of a run's inputs: w int8 with every zero
// point 0, one x and y scale, one zero point for x and y. Anything else (uint8 weights, a nonzero
// weight zero point, which oneDNN 2.x cannot subtract) runs the reference kernel, with no error.
// One primitive per form and shapes, made at its first run; constant weights reordered into its
// layout then, once (computed ones at every run). x is read in its layout (a packed one, such as
// the channels-last y of the int8 conv before it) and y is kept in the primitive's when that is
// packed: a chain of int8 convs reorders only at its ends.
//
// oneDNN 3.x has no output scales (set_output_scales): there the reference kernels run.
#pragma once

#include <cstddef>
#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <tuple>
#include <unordered_map>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include <oneapi/dnnl/dnnl.hpp>

#include "sgmatch/detail/config.hpp"
#include "sgmatch/exec/kernels/quantize.hpp"
#include "sgmatch/exec/kernels/typed_support.hpp"
#include "sgmatch/onednn/compat.hpp"
#include "sgmatch/onednn/op_kernels/base.hpp"
#include "sgmatch/onednn/tensor.hpp"
#include "sgmatch/ops/shape_rules.hpp"

SGMATCH_BEGIN_NAMESPACE
namespace exec {
namespace typed {

/// What an int8 convolution on oneDNN computes, read from a run's inputs; nullopt where the form
/// is not one oneDNN computes as ONNX defines it (see the top of this file).
struct int8_conv_form {
    std::vector<float> scales;                 // one, or one per output channel; empty: none (ConvInteger)
    std::int32_t x_zero_point = 0;
    std::optional<std::int32_t> y_zero_point;  // QLinearConv's
    dtype y_type = dtype::i32;                 // u8 or s8 (QLinearConv: y_zero_point's type), or i32
    bool bias = false;
};

/// The int8 form of a QLinearConv (qlinear true) or ConvInteger node's run, or nullopt.
inline std::optional<int8_conv_form> int8_conv_form_of(const values& xs, bool qlinear) {
    const std::size_t w_slot = qlinear ? 3 : 1;
    if (xs.size() <= w_slot) return std::nullopt;
    const value& x = xs[0];
    const value& w = xs[w_slot];
    if ((x.type() != dtype::u8 && x.type() != dtype::i8) || w.type() != dtype::i8 || x.is_sequence() || w.is_sequence())
        return std::nullopt;
    if (w.dims().size() < 3 || w.dims().size() > 5 || x.dims().size() != w.dims().size()) return std::nullopt;
    const std::int64_t M = w.dims()[0];
    auto ints = [&](std::size_t slot) -> std::optional<std::vector<std::int64_t>> {
        if (slot >= xs.size() || xs[slot].is_none()) return std::vector<std::int64_t>{};  // absent: 0
        const value& v = xs[slot];
        if (v.type() != dtype::u8 && v.type() != dtype::i8 && v.type() != dtype::i32) return std::nullopt;
        return v.to_ints();
    };
    int8_conv_form f;
    const auto wz = ints(qlinear ? 5 : 3);  // all 0: oneDNN 2.x subtracts no weight zero point
    if (!wz) return std::nullopt;
    for (const auto z : *wz)
        if (z != 0) return std::nullopt;
    const auto xz = ints(2);
    if (!xz || xz->size() > 1) return std::nullopt;
    f.x_zero_point = xz->empty() ? 0 : static_cast<std::int32_t>((*xz)[0]);
    if (!qlinear) return f;
    auto floats = [&](std::size_t slot) -> std::optional<std::vector<float>> {
        if (slot >= xs.size()) return std::nullopt;
        const value& v = xs[slot];
        if (v.type() != dtype::f32 || v.dims().size() > 1) return std::nullopt;
        const value d = v.dense_value();
        return std::vector<float>(d.as<float>(), d.as<float>() + d.size());
    };
    const auto xsc = floats(1), wsc = floats(4), ysc = floats(6);
    if (!xsc || !wsc || !ysc || xsc->size() != 1 || ysc->size() != 1) return std::nullopt;
    if (wsc->size() != 1 && static_cast<std::int64_t>(wsc->size()) != M) return std::nullopt;
    for (const float s : *wsc) f.scales.push_back((*xsc)[0] * s / (*ysc)[0]);  // as the reference kernel computes it
    if (xs.size() <= 7) return std::nullopt;
    const value& yz = xs[7];
    if (yz.size() != 1 || (yz.type() != dtype::u8 && yz.type() != dtype::i8)) return std::nullopt;
    f.y_type = yz.type();
    f.y_zero_point = static_cast<std::int32_t>(yz.to_ints()[0]);
    if (xs.size() > 8 && !xs[8].is_none()) {
        if (xs[8].type() != dtype::i32 || static_cast<std::int64_t>(xs[8].size()) != M) return std::nullopt;
        f.bias = true;
    }
    return f;
}

#if DNNL_VERSION_MAJOR < 3
namespace detail {

inline dnnl::memory::data_type onednn_type(dtype t) {
    using dt = dnnl::memory::data_type;
    switch (t) {
        case dtype::u8: return dt::u8;
        case dtype::i8: return dt::s8;
        case dtype::i32: return dt::s32;
        default: return dt::undef;
    }
}

// A primitive per form and shapes; with constant weights, the weights in its layout, reordered
// once (a computed weight is reordered at every run).
struct int8_conv_state {
    struct plan {
        dnnl::convolution_forward::primitive_desc pd;
        dnnl::convolution_forward prim;
        dnnl::memory weights;  // constant weights in the primitive's layout (else empty)
        dnnl::memory::desc plain_weights;
    };
    struct key {
        shape x, w, out;
        dtype x_type, y_type;
        std::vector<float> scales;
        bool x_zero_point, y_zero_point, bias;
        bool operator<(const key& o) const {
            return std::tie(x, w, out, x_type, y_type, scales, x_zero_point, y_zero_point, bias) <
                   std::tie(o.x, o.w, o.out, o.x_type, o.y_type, o.scales, o.x_zero_point, o.y_zero_point, o.bias);
        }
    };
    bool constant_weights = false;
    std::mutex mu;
    std::map<key, std::shared_ptr<const plan>> plans;

    // The plan of this run (null: no int8 implementation for it; the reference kernel runs).
    std::shared_ptr<const plan> plan_for(const ops::op_attrs& a, const int8_conv_form& f, const value& x, const value& w,
                                         const shape& out) {
        key k{x.dims(), w.dims(), out, x.type(), f.y_type, f.scales, f.x_zero_point != 0, f.y_zero_point.value_or(0) != 0, f.bias};
        std::lock_guard<std::mutex> lock(mu);
        const auto known = plans.find(k);
        if (known != plans.end()) return known->second;
        auto& slot = plans[k];
        const std::size_t sp = x.dims().size() - 2;
        const shape& wshape = w.dims();
        const ops::rules::window win = ops::rules::window_of(a, sp, &wshape);
        const std::int64_t groups = a.i("group");
        using md = dnnl::memory::desc;
        using tag = dnnl::memory::format_tag;
        using dt = dnnl::memory::data_type;
        onednn::dims wd(wshape.begin(), wshape.end());
        if (groups > 1) {
            wd.insert(wd.begin(), groups);
            wd[1] /= groups;
        }
        onednn::dims strides(win.strides.begin(), win.strides.end()), dil, pad_l, pad_r;
        for (std::size_t i = 0; i < sp; ++i) {
            dil.push_back(win.dilations[i] - 1);
            pad_l.push_back(win.pads[i]);
            // The end padding the output's extent implies (the shape rule's, auto_pad included).
            const std::int64_t span = (out[i + 2] - 1) * win.strides[i] + (wshape[i + 2] - 1) * win.dilations[i] + 1;
            pad_r.push_back(span - x.dims()[i + 2] - win.pads[i]);
        }
        const md src(onednn::dims(x.dims().begin(), x.dims().end()), onednn_type(x.type()), tag::any);
        const md wei(wd, dt::s8, tag::any);
        const md bias = f.bias ? md({wshape[0]}, dt::s32, tag::a) : md();
        const md dst(onednn::dims(out.begin(), out.end()), onednn_type(f.y_type), tag::any);
        dnnl::primitive_attr attr = onednn::detail::user_scratchpad();
        if (!f.scales.empty()) attr.set_output_scales(f.scales.size() == 1 ? 0 : 1 << 1, f.scales);
        if (k.x_zero_point) attr.set_zero_points(DNNL_ARG_SRC, 0, {DNNL_RUNTIME_S32_VAL});
        if (k.y_zero_point) attr.set_zero_points(DNNL_ARG_DST, 0, {DNNL_RUNTIME_S32_VAL});
        try {
            auto pd = onednn::compat::conv_pd(onednn::cpu_engine(), src, wei, bias, dst, strides, dil, pad_l, pad_r, attr);
            const tag plain = groups > 1 ? (sp == 1 ? tag::goiw : sp == 2 ? tag::goihw : tag::goidhw)
                                         : (sp == 1 ? tag::oiw : sp == 2 ? tag::oihw : tag::oidhw);
            auto p = std::make_shared<plan>(plan{pd, dnnl::convolution_forward(pd), dnnl::memory(), md(wd, dt::s8, plain)});
            if (constant_weights) p->weights = reordered_weights(*p, w);
            slot = std::move(p);
        } catch (const dnnl::error&) {
            // no int8 implementation for this form: the reference kernel runs it (slot stays null)
        }
        return slot;
    }

    static dnnl::memory reordered_weights(const plan& p, const value& w) {
        const auto& eng = onednn::cpu_engine();
        dnnl::memory from(p.plain_weights, eng, const_cast<void*>(w.data()));
        dnnl::memory to(p.pd.weights_desc(), eng);
        dnnl::stream s(eng);
        dnnl::reorder(from, to).execute(s, from, to);
        s.wait();
        return to;
    }
};

// y from the plan's primitive. x is read in its own layout (dense, or packed such as the
// channels-last y of another int8 conv) and reordered only when the primitive asks for another;
// y stays in the primitive's layout when that is a packed one (the next int8 conv, QLinearAdd or
// DequantizeLinear reads it as it is), else it is reordered into a plain value.
inline value run_int8_conv(const int8_conv_form& f, const int8_conv_state::plan& p, const value& x, const value& w,
                           const value* bias, const shape& out) {
    const auto& eng = onednn::cpu_engine();
    using md = dnnl::memory::desc;
    const onednn::dims xd(x.dims().begin(), x.dims().end()), yd(out.begin(), out.end());
    const md x_desc = x.dense() ? md(xd, onednn_type(x.type()), onednn::plain_tag(xd.size()))
                                : md(xd, onednn_type(x.type()), onednn::dims(x.strides().begin(), x.strides().end()));
    const md y_plain(yd, onednn_type(f.y_type), onednn::plain_tag(yd.size()));
    dnnl::stream s(eng);
    dnnl::memory src(x_desc, eng, const_cast<void*>(x.data()));
    onednn::tensor src_buf, dst_buf;
    if (p.pd.src_desc() != x_desc) {
        src_buf = onednn::tensor::allocate(p.pd.src_desc());
        dnnl::memory to = src_buf.memory();
        dnnl::reorder(src, to).execute(s, src, to);
        src = to;
        ++onednn_typed_reorders();
    }
    const shape y_strides = onednn::compat::permuted_strides(p.pd.dst_desc());
    value y;
    dnnl::memory dst;
    if (!y_strides.empty()) {
        dst_buf = onednn::tensor::allocate(p.pd.dst_desc());
        dst = dst_buf.memory();
        y = value::adopt(dst_buf.owner(), dst.get_data_handle(), f.y_type, out, y_strides);
    } else {
        y = value::zeros(f.y_type, out);
        dst = dnnl::memory(y_plain, eng, y.mutable_data());
    }
    const bool reorder_out = y_strides.empty() && p.pd.dst_desc() != y_plain;
    if (reorder_out) dst_buf = onednn::tensor::allocate(p.pd.dst_desc());
    const dnnl::memory weights = p.weights ? p.weights : int8_conv_state::reordered_weights(p, w);
    std::unordered_map<int, dnnl::memory> args{
        {DNNL_ARG_SRC, src}, {DNNL_ARG_WEIGHTS, weights}, {DNNL_ARG_DST, reorder_out ? dst_buf.memory() : dst}};
    if (bias != nullptr) args[DNNL_ARG_BIAS] = dnnl::memory(p.pd.bias_desc(), eng, const_cast<void*>(bias->data()));
    std::int32_t xz = f.x_zero_point, yz = f.y_zero_point.value_or(0);
    const md one({1}, dnnl::memory::data_type::s32, dnnl::memory::format_tag::a);
    if (xz != 0) args[DNNL_ARG_ATTR_ZERO_POINTS | DNNL_ARG_SRC] = dnnl::memory(one, eng, &xz);
    if (yz != 0) args[DNNL_ARG_ATTR_ZERO_POINTS | DNNL_ARG_DST] = dnnl::memory(one, eng, &yz);
    onednn::detail::exec_with_scratch(p.prim, p.pd.scratchpad_desc(), std::move(args));
    if (reorder_out) {
        ++onednn_typed_reorders();
        dnnl::memory from = dst_buf.memory();
        dnnl::reorder(from, dst).execute(s, from, dst);
        s.wait();
    }
    return y;
}

}  // namespace detail
#endif

/// The int8 kernels in the oneDNN modes: QLinearConv (qlinear) or ConvInteger on oneDNN's int8
/// convolution where the run's form allows (int8_conv_form_of), the reference kernel otherwise
/// (that run, or an input shape oneDNN has no int8 implementation for).
inline typed_fn onednn_int8_conv(const ops::op_attrs& a0, const ops::node_source& n, bool qlinear) {
    typed_fn reference = qlinear ? qlinear_conv(a0, n) : conv_integer(a0, n);
#if DNNL_VERSION_MAJOR >= 3
    return reference;
#else
    auto st = std::make_shared<detail::int8_conv_state>();
    const std::size_t w_slot = qlinear ? 3 : 1;
    st->constant_weights = w_slot < n.input_count() && n.constant_input(w_slot).has_value();
    return [a = a0, st, reference, qlinear, w_slot](const values& xs) -> values {
        const auto f = int8_conv_form_of(xs, qlinear);
        if (!f) return reference(xs);
        const value X = xs[0].packed() ? xs[0] : xs[0].dense_value(), W = xs[w_slot].dense_value();
        const shape out = rule(a, xs).at(0);
        for (const auto d : out)
            if (d <= 0) return reference(xs);
        const auto p = st->plan_for(a, *f, X, W, out);
        if (!p) return reference(xs);
        const value B = f->bias ? xs[8].dense_value() : value();
        ++onednn_typed_runs();
        return values{detail::run_int8_conv(*f, *p, X, W, f->bias ? &B : nullptr, out)};
    };
#endif
}

inline typed_fn onednn_qlinear_conv(const ops::op_attrs& a, const ops::node_source& n) { return onednn_int8_conv(a, n, true); }
inline typed_fn onednn_conv_integer(const ops::op_attrs& a, const ops::node_source& n) { return onednn_int8_conv(a, n, false); }

}  // namespace typed
}  // namespace exec
SGMATCH_END_NAMESPACE
