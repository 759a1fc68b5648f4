// sgmatch/exec/kernels/qmatmul_onednn.hpp - QLinearMatMul and MatMulInteger on oneDNN's int8
// matmul where it computes what ONNX defines; the reference kernels (kernels/quantize.hpp)
// everywhere else.
//
// oneDNN 2.x computes, for u8 or s8 A and s8 B, each with one zero point,
//   y = saturate(round_half_even(oscale[n] * sum_k (A - a_zero_point) * (B - b_zero_point)) + y_zero_point)
// with one output scale (or one per column n), u8, s8 or s32 y: QLinearMatMul with oscale[n] =
// a_scale * b_scale[n] / y_scale (computed as the reference kernel computes it, in f32), and
// MatMulInteger (s32 y, no scale). uint8 B runs as int8: B - 128 with the zero point less 128,
// the same differences, so that (B - b_zero_point) is computed exactly. Taken for these forms of a
// run's inputs: A and B of rank 2 or more (batch dims broadcast, as oneDNN's matmul takes them),
// one zero point each (a zero point per row of A or per column of B runs the reference kernel).
// One primitive per form and shapes, made at its first run; constant B reordered (and shifted)
// into its layout then, once (a computed B at every run).
//
// oneDNN 3.x has no output scales (set_output_scales): there the reference kernels run.
#pragma once

#include <cstddef>
#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <tuple>
#include <unordered_map>
#include <utility>
#include <vector>

#include <oneapi/dnnl/dnnl.hpp>

#include "sgmatch/detail/config.hpp"
#include "sgmatch/exec/kernels/qconv_onednn.hpp"
#include "sgmatch/exec/kernels/quantize.hpp"
#include "sgmatch/exec/kernels/typed_support.hpp"
#include "sgmatch/onednn/compat.hpp"
#include "sgmatch/onednn/op_kernels/base.hpp"
#include "sgmatch/onednn/tensor.hpp"

SGMATCH_BEGIN_NAMESPACE
namespace exec {
namespace typed {

/// What an int8 matmul on oneDNN computes, read from a run's inputs; nullopt where the form is not
/// one oneDNN computes as ONNX defines it (see the top of this file).
struct int8_matmul_form {
    std::vector<float> scales;   // QLinearMatMul's a_scale * b_scale[n] / y_scale (one, or one per column); empty: none
    std::int32_t a_zero_point = 0, b_zero_point = 0;  // b's as oneDNN reads it (less 128 for uint8 B)
    std::optional<std::int32_t> y_zero_point;         // QLinearMatMul's
    dtype y_type = dtype::i32;                        // u8 or s8 (y_zero_point's type), or i32
    bool b_unsigned = false;                          // B is uint8: shifted to int8
};

/// The int8 form of a QLinearMatMul (qlinear true) or MatMulInteger node's run, or nullopt.
inline std::optional<int8_matmul_form> int8_matmul_form_of(const values& xs, bool qlinear) {
    const std::size_t b_slot = qlinear ? 3 : 1;
    if (xs.size() <= b_slot) return std::nullopt;
    const value& A = xs[0];
    const value& B = xs[b_slot];
    const bool int8 = [](dtype t) { return t == dtype::u8 || t == dtype::i8; }(A.type());
    if (!int8 || (B.type() != dtype::u8 && B.type() != dtype::i8) || A.is_sequence() || B.is_sequence()) return std::nullopt;
    if (A.dims().size() < 2 || B.dims().size() < 2 || A.dims().size() > 6 || B.dims().size() > 6) return std::nullopt;
    // One zero point of the operand's type (absent: 0), or nullopt.
    auto one_point = [&](std::size_t slot, const value& of) -> std::optional<std::int32_t> {
        if (slot >= xs.size() || xs[slot].is_none()) return 0;
        const value& z = xs[slot];
        if (z.type() != of.type() || z.size() != 1) return std::nullopt;
        return static_cast<std::int32_t>(z.to_ints()[0]);
    };
    int8_matmul_form f;
    const auto za = one_point(2, A), zb = one_point(qlinear ? 5 : 3, B);
    if (!za || !zb) return std::nullopt;
    f.a_zero_point = *za;
    f.b_unsigned = B.type() == dtype::u8;
    f.b_zero_point = f.b_unsigned ? *zb - 128 : *zb;
    if (!qlinear) return f;
    auto scales = [&](std::size_t slot) -> std::optional<std::vector<float>> {
        if (slot >= xs.size()) return std::nullopt;
        const value& s = xs[slot];
        if (s.type() != dtype::f32 || s.dims().size() > 1) return std::nullopt;
        const value d = s.dense_value();
        return std::vector<float>(d.as<float>(), d.as<float>() + d.size());
    };
    const auto as = scales(1), bs = scales(4), ys = scales(6);
    if (!as || !bs || !ys || xs.size() != 8 || as->size() != 1 || ys->size() != 1) return std::nullopt;
    if (bs->size() != 1 && static_cast<std::int64_t>(bs->size()) != B.dims().back()) return std::nullopt;
    for (const float b : *bs) f.scales.push_back((*as)[0] * b / (*ys)[0]);  // as the reference kernel computes it
    const value& yz = xs[7];
    if (yz.size() != 1 || (yz.type() != dtype::u8 && yz.type() != dtype::i8)) return std::nullopt;
    f.y_type = yz.type();
    f.y_zero_point = static_cast<std::int32_t>(yz.to_ints()[0]);
    return f;
}

#if DNNL_VERSION_MAJOR < 3
namespace detail {

// A primitive per form and shapes; with a constant B, B in its layout (shifted to int8 when it
// is uint8), made once (a computed B is made at every run).
struct int8_matmul_state {
    struct plan {
        dnnl::matmul::primitive_desc pd;
        dnnl::matmul prim;
        dnnl::memory weights;  // a constant B in the primitive's layout (else empty)
        dnnl::memory::desc plain_weights;
        onednn::dims a_dims, b_dims;  // as oneDNN reads them: of the output's rank
    };
    struct key {
        shape a, b;
        dtype a_type, y_type;
        std::vector<float> scales;
        bool a_zero_point, b_zero_point, y_zero_point, b_unsigned;
        bool operator<(const key& o) const {
            return std::tie(a, b, a_type, y_type, scales, a_zero_point, b_zero_point, y_zero_point, b_unsigned) <
                   std::tie(o.a, o.b, o.a_type, o.y_type, o.scales, o.a_zero_point, o.b_zero_point, o.y_zero_point, o.b_unsigned);
        }
    };
    bool constant_weights = false;
    std::mutex mu;
    std::map<key, std::shared_ptr<const plan>> plans;

    // The plan of this run (null: no int8 implementation for it; the reference kernel runs).
    std::shared_ptr<const plan> plan_for(const int8_matmul_form& f, const value& A, const value& B, const shape& out) {
        key k{A.dims(), B.dims(), A.type(), f.y_type, f.scales, f.a_zero_point != 0, f.b_zero_point != 0,
              f.y_zero_point.value_or(0) != 0, f.b_unsigned};
        std::lock_guard<std::mutex> lock(mu);
        const auto known = plans.find(k);
        if (known != plans.end()) return known->second;
        auto& slot = plans[k];
        using md = dnnl::memory::desc;
        using dt = dnnl::memory::data_type;
        // A and B with leading 1s to the output's rank (oneDNN broadcasts a batch dim of 1).
        auto padded = [&](const shape& d) {
            onednn::dims p(out.size() - d.size(), 1);
            p.insert(p.end(), d.begin(), d.end());
            return p;
        };
        const onednn::dims ad = padded(A.dims()), bd = padded(B.dims()), yd(out.begin(), out.end());
        const auto plain = onednn::plain_tag(yd.size());
        const md src(ad, onednn_type(A.type()), plain);
        const md wei(bd, dt::s8, B.dims().size() == 2 ? dnnl::memory::format_tag::any : plain);
        const md dst(yd, onednn_type(f.y_type), plain);
        dnnl::primitive_attr attr = onednn::detail::user_scratchpad();
        // One scale, or one per column: the output's last dim.
        if (!f.scales.empty()) attr.set_output_scales(f.scales.size() == 1 ? 0 : 1 << (yd.size() - 1), f.scales);
        if (k.a_zero_point) attr.set_zero_points(DNNL_ARG_SRC, 0, {DNNL_RUNTIME_S32_VAL});
        if (k.b_zero_point) attr.set_zero_points(DNNL_ARG_WEIGHTS, 0, {DNNL_RUNTIME_S32_VAL});
        if (k.y_zero_point) attr.set_zero_points(DNNL_ARG_DST, 0, {DNNL_RUNTIME_S32_VAL});
        try {
            auto pd = onednn::compat::matmul_pd(onednn::cpu_engine(), src, wei, md(), dst, attr);
            auto p = std::make_shared<plan>(plan{pd, dnnl::matmul(pd), dnnl::memory(), md(bd, dt::s8, plain), ad, bd});
            if (constant_weights) p->weights = weights_for(*p, f, B);
            slot = std::move(p);
        } catch (const dnnl::error&) {
            // no int8 implementation for this form: the reference kernel runs it (slot stays null)
        }
        return slot;
    }

    // B as the primitive reads it: int8 (uint8 less 128), in its layout.
    static dnnl::memory weights_for(const plan& p, const int8_matmul_form& f, const value& B) {
        const auto& eng = onednn::cpu_engine();
        std::vector<std::int8_t> shifted;
        const void* data = B.data();
        if (f.b_unsigned) {
            const auto* u = static_cast<const std::uint8_t*>(B.data());
            shifted.resize(static_cast<std::size_t>(B.size()));
            for (std::size_t i = 0; i < shifted.size(); ++i) shifted[i] = static_cast<std::int8_t>(static_cast<int>(u[i]) - 128);
            data = shifted.data();
        }
        dnnl::memory from(p.plain_weights, eng, const_cast<void*>(data));
        dnnl::memory to(p.pd.weights_desc(), eng);
        dnnl::stream s(eng);
        dnnl::reorder(from, to).execute(s, from, to);
        s.wait();
        return to;
    }
};

// y from the plan's primitive, into a plain value of y's type.
inline value run_int8_matmul(const int8_matmul_form& f, const int8_matmul_state::plan& p, const value& A, const value& B,
                             const shape& out) {
    const auto& eng = onednn::cpu_engine();
    value y = value::zeros(f.y_type, out);
    const dnnl::memory weights = p.weights ? p.weights : int8_matmul_state::weights_for(p, f, B);
    std::unordered_map<int, dnnl::memory> args{{DNNL_ARG_SRC, dnnl::memory(p.pd.src_desc(), eng, const_cast<void*>(A.data()))},
                                               {DNNL_ARG_WEIGHTS, weights},
                                               {DNNL_ARG_DST, dnnl::memory(p.pd.dst_desc(), eng, y.mutable_data())}};
    std::int32_t za = f.a_zero_point, zb = f.b_zero_point, zy = f.y_zero_point.value_or(0);
    const dnnl::memory::desc one({1}, dnnl::memory::data_type::s32, dnnl::memory::format_tag::a);
    if (za != 0) args[DNNL_ARG_ATTR_ZERO_POINTS | DNNL_ARG_SRC] = dnnl::memory(one, eng, &za);
    if (zb != 0) args[DNNL_ARG_ATTR_ZERO_POINTS | DNNL_ARG_WEIGHTS] = dnnl::memory(one, eng, &zb);
    if (zy != 0) args[DNNL_ARG_ATTR_ZERO_POINTS | DNNL_ARG_DST] = dnnl::memory(one, eng, &zy);
    onednn::detail::exec_with_scratch(p.prim, p.pd.scratchpad_desc(), std::move(args));
    return y;
}

}  // namespace detail
#endif

/// The int8 kernels in the oneDNN modes: QLinearMatMul (qlinear) or MatMulInteger on oneDNN's
/// int8 matmul where the run's form allows (int8_matmul_form_of), the reference kernel otherwise
/// (that run, or shapes oneDNN has no int8 implementation for).
inline typed_fn onednn_int8_matmul(const ops::op_attrs& a0, const ops::node_source& n, bool qlinear) {
    typed_fn reference = qlinear ? qlinear_matmul(a0, n) : matmul_integer(a0, n);
#if DNNL_VERSION_MAJOR >= 3
    return reference;
#else
    auto st = std::make_shared<detail::int8_matmul_state>();
    const std::size_t b_slot = qlinear ? 3 : 1;
    st->constant_weights = b_slot < n.input_count() && n.constant_input(b_slot).has_value();
    return [a = a0, st, reference, qlinear, b_slot](const values& xs) -> values {
        const auto f = int8_matmul_form_of(xs, qlinear);
        if (!f) return reference(xs);
        const value A = xs[0].dense_value(), B = xs[b_slot].dense_value();
        const shape out = rule(a, xs).at(0);
        for (const auto d : out)
            if (d <= 0) return reference(xs);
        const auto p = st->plan_for(*f, A, B, out);
        if (!p) return reference(xs);
        ++onednn_typed_runs();
        return values{detail::run_int8_matmul(*f, *p, A, B, out)};
    };
#endif
}

inline typed_fn onednn_qlinear_matmul(const ops::op_attrs& a, const ops::node_source& n) { return onednn_int8_matmul(a, n, true); }
inline typed_fn onednn_matmul_integer(const ops::op_attrs& a, const ops::node_source& n) { return onednn_int8_matmul(a, n, false); }

}  // namespace typed
}  // namespace exec
SGMATCH_END_NAMESPACE
