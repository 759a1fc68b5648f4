// sgmatch/exec/kernels/recurrent_onednn.hpp - RNN, GRU and LSTM on oneDNN's recurrent primitives
// (vanilla RNN with tanh, GRU, linear-before-reset GRU, LSTM with or without peepholes), what the
// executor runs in its oneDNN modes; the reference kernel (kernels/recurrent.hpp) otherwise.
//
// The weights are converted once, when the executor is built: ONNX's W [dirs, G*hidden, input]
// and R [dirs, G*hidden, hidden] into oneDNN's ldigo order (gates reordered: ONNX's LSTM has
// i, o, f, c where oneDNN has i, f, c, o, and peepholes i, o, f where it has i, f, o), the two
// ONNX biases summed per gate (kept apart for the linear-before-reset GRU's candidate), then
// reordered into the layout each primitive picks. A primitive is made per (sequence, batch).
//
// Forms oneDNN has no primitive for are refused when the kernel is made (the executor then runs
// the reference kernel): `clip`, LSTM's input_forget, layout 1, weights computed at run time.
// Forms only known at run time (f64 data, sequence lengths shorter than the sequence, a shape
// oneDNN has no implementation for) run on the reference kernel then, and so do layers too small
// to gain (onednn_recurrent_min_work).
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

#include <oneapi/dnnl/dnnl.hpp>

#include "sgmatch/detail/config.hpp"
#include "sgmatch/exec/kernels/recurrent.hpp"
#include "sgmatch/exec/kernels/typed_support.hpp"
#include "sgmatch/onednn/compat.hpp"
#include "sgmatch/onednn/op_kernels/base.hpp"
#include "sgmatch/onednn/tensor.hpp"

SGMATCH_BEGIN_NAMESPACE
namespace exec {
namespace typed {

/// The work (multiply-adds: sequence x batch x directions x gates x hidden x (input + hidden))
/// below which a layer runs on the reference kernel: oneDNN's recurrent primitives have a fixed
/// cost a run, whatever the size, that the reference kernel beats on small layers and loses to
/// on large ones (benchmarks/recurrent.cpp measures where).
inline constexpr std::int64_t onednn_recurrent_min_work = std::int64_t{1} << 16;

namespace detail {

// What the kernel keeps: the weights in ldigo order, the summed biases, the peepholes, and the
// primitives made so far, by (sequence, batch).
struct rnn_state {
    onednn::compat::rnn_cell cell;
    dnnl::rnn_direction direction;
    std::int64_t dirs, gates, bias_gates, input, hidden;
    bool peephole;
    std::vector<float> w_layer, w_iter, bias, peep;  // [1, dirs, input|hidden, gates, hidden], [1, dirs, bias_gates, hidden], [1, dirs, 3, hidden]
    struct plan {
        onednn::compat::rnn_primitive p;
        dnnl::memory w_layer, w_iter;  // in the primitive's layouts
    };
    std::mutex mu;
    std::map<std::pair<std::int64_t, std::int64_t>, std::shared_ptr<const plan>> plans;

    dnnl::memory::desc desc(dnnl::memory::dims d, dnnl::memory::format_tag tag) const {
        return dnnl::memory::desc(d, dnnl::memory::data_type::f32, tag);
    }
    // The primitive for (seq, batch); null where oneDNN has none (the reference kernel runs).
    std::shared_ptr<const plan> plan_for(std::int64_t seq, std::int64_t batch) {
        std::lock_guard<std::mutex> lock(mu);
        const auto known = plans.find({seq, batch});
        if (known != plans.end()) return known->second;
        auto& slot = plans[{seq, batch}];
        using tag = dnnl::memory::format_tag;
        const std::int64_t D = dirs, H = hidden, G = gates;
        onednn::compat::rnn_memory_descs d;
        d.src_layer = desc({seq, batch, input}, tag::tnc);
        d.src_iter = desc({1, D, batch, H}, tag::ldnc);
        d.src_iter_c = d.src_iter;
        d.weights_layer = desc({1, D, input, G, H}, tag::any);
        d.weights_iter = desc({1, D, H, G, H}, tag::any);
        if (peephole) d.weights_peephole = desc({1, D, 3, H}, tag::ldgo);
        d.bias = desc({1, D, bias_gates, H}, tag::ldgo);
        d.dst_layer = desc({seq, batch, D * H}, tag::tnc);
        d.dst_iter = d.src_iter;
        d.dst_iter_c = d.src_iter;
        auto p = std::make_shared<plan>();
        try {
            p->p = onednn::compat::make_rnn(onednn::cpu_engine(), cell, direction, d, onednn::detail::user_scratchpad());
        } catch (const dnnl::error&) {
            return nullptr;  // remembered: not asked again
        }
        dnnl::stream s(onednn::cpu_engine());
        auto converted = [&](const std::vector<float>& w, dnnl::memory::dims dims, const dnnl::memory::desc& want) {
            dnnl::memory user(desc(std::move(dims), tag::ldigo), onednn::cpu_engine(), const_cast<float*>(w.data()));
            dnnl::memory out(want, onednn::cpu_engine());
            dnnl::reorder(user, out).execute(s, user, out);
            return out;
        };
        p->w_layer = converted(w_layer, {1, D, input, G, H}, p->p.weights_layer);
        p->w_iter = converted(w_iter, {1, D, H, G, H}, p->p.weights_iter);
        s.wait();
        slot = p;
        return slot;
    }
};

}  // namespace detail

/// RNN, GRU and LSTM on oneDNN; throws onednn::kernel_error for a form it does not take.
inline typed_fn onednn_recurrent(const ops::op_attrs& a0, const ops::node_source& node) {
    using onednn::kernel_error;
    auto refuse_form = [&](const std::string& why) { throw kernel_error("sgmatch::onednn: " + a0.where() + ": " + why); };
    if (a0.has("clip")) refuse_form("clip");
    if (a0.i("layout") != 0) refuse_form("layout 1");
    const std::int64_t G = ops::rules::recurrent_gates(a0.schema());
    if (G == 4 && a0.i("input_forget") != 0) refuse_form("input_forget");
    // A constant f32 input with data (data null when it is absent or has no elements).
    auto weights = [&](std::size_t slot, bool required) -> const_tensor_view {
        if (slot >= node.input_count()) {
            if (required) refuse_form("input " + std::to_string(slot) + " is absent");
            return {};
        }
        const auto c = node.constant_input(slot);
        if (c && c->data != nullptr && c->element_count() == 0) return {};  // an absent optional input
        if (!c || c->data == nullptr || c->type != dtype::f32) refuse_form("input " + std::to_string(slot) + " is not an f32 constant");
        return *c;
    };
    const const_tensor_view w_view = weights(1, true), r_view = weights(2, true), b_view = weights(3, false);
    const const_tensor_view p_view = G == 4 ? weights(7, false) : const_tensor_view{};
    const const_tensor_view *W = &w_view, *R = &r_view, *B = b_view.data ? &b_view : nullptr, *P = p_view.data ? &p_view : nullptr;
    if (W->rank != 3 || R->rank != 3) refuse_form("W or R is not of rank 3");
    auto st = std::make_shared<detail::rnn_state>();
    st->gates = G;
    st->dirs = W->dims[0];
    st->input = W->dims[2];
    st->hidden = W->dims[1] / G;
    const std::string_view dir = a0.s("direction");
    const std::int64_t D = st->dirs, H = st->hidden, I = st->input;
    if (D != (dir == "bidirectional" ? 2 : 1) || W->dims[1] != G * H || R->dims[0] != D || R->dims[1] != G * H || R->dims[2] != H)
        refuse_form("W and R do not fit the direction");
    const bool lbr = G == 3 && a0.i("linear_before_reset") != 0;
    st->cell = G == 1 ? onednn::compat::rnn_cell::vanilla_tanh : G == 3 ? (lbr ? onednn::compat::rnn_cell::lbr_gru : onednn::compat::rnn_cell::gru)
                                                                     : onednn::compat::rnn_cell::lstm;
    st->direction = dir == "bidirectional" ? dnnl::rnn_direction::bidirectional_concat
                    : dir == "reverse"     ? dnnl::rnn_direction::unidirectional_right2left
                                           : dnnl::rnn_direction::unidirectional_left2right;
    st->bias_gates = lbr ? 4 : G;
    // ONNX's gate k is oneDNN's gate order[k]: LSTM i, o, f, c -> i, f, c, o.
    const std::vector<std::int64_t> order = G == 4 ? std::vector<std::int64_t>{0, 3, 1, 2} : G == 3 ? std::vector<std::int64_t>{0, 1, 2} : std::vector<std::int64_t>{0};
    auto to_ldigo = [&](const const_tensor_view& m, std::int64_t cols, std::vector<float>& out) {  // [D, G*H, cols] -> [1, D, cols, G, H]
        const float* src = static_cast<const float*>(m.data);
        out.assign(static_cast<std::size_t>(D * cols * G * H), 0.0f);
        for (std::int64_t d = 0; d < D; ++d)
            for (std::int64_t k = 0; k < G; ++k)
                for (std::int64_t h = 0; h < H; ++h)
                    for (std::int64_t c = 0; c < cols; ++c)
                        out[static_cast<std::size_t>(((d * cols + c) * G + order[static_cast<std::size_t>(k)]) * H + h)] =
                            src[(d * G * H + k * H + h) * cols + c];
    };
    to_ldigo(*W, I, st->w_layer);
    to_ldigo(*R, H, st->w_iter);
    st->bias.assign(static_cast<std::size_t>(D * st->bias_gates * H), 0.0f);
    if (B) {
        if (B->element_count() != D * 2 * G * H) refuse_form("B does not hold 2 * gates * hidden values per direction");
        const float* b = static_cast<const float*>(B->data);
        for (std::int64_t d = 0; d < D; ++d)
            for (std::int64_t k = 0; k < G; ++k)
                for (std::int64_t h = 0; h < H; ++h) {
                    const float wb = b[d * 2 * G * H + k * H + h], rb = b[d * 2 * G * H + (G + k) * H + h];
                    auto at = [&](std::int64_t gate) -> float& { return st->bias[static_cast<std::size_t>((d * st->bias_gates + gate) * H + h)]; };
                    if (lbr && k == 2) {  // the candidate: Wbh outside the reset gate, Rbh inside it (oneDNN's fourth bias)
                        at(2) = wb;
                        at(3) = rb;
                    } else {
                        at(order[static_cast<std::size_t>(k)]) = wb + rb;
                    }
                }
    }
    st->peephole = P != nullptr;
    if (P) {
        if (P->element_count() != D * 3 * H) refuse_form("P does not hold 3 * hidden values per direction");
        const float* p = static_cast<const float*>(P->data);
        static constexpr std::int64_t peep_order[] = {0, 2, 1};  // ONNX i, o, f -> oneDNN i, f, o
        st->peep.assign(static_cast<std::size_t>(D * 3 * H), 0.0f);
        for (std::int64_t d = 0; d < D; ++d)
            for (std::int64_t k = 0; k < 3; ++k)
                for (std::int64_t h = 0; h < H; ++h) st->peep[static_cast<std::size_t>((d * 3 + peep_order[k]) * H + h)] = p[(d * 3 + k) * H + h];
    }
    typed_fn reference = recurrent(a0, node);
    return [a = a0, st, reference](const values& xs) -> values {
        const value x = in(xs, 0, a).dense_value();
        const auto given = [&](std::size_t slot) { return slot < xs.size() && xs[slot].size() > 0; };
        if (x.type() != dtype::f32 || x.rank() != 3 || x.dims()[2] != st->input || x.size() == 0) return reference(xs);
        const std::int64_t T = x.dims()[0], N = x.dims()[1], D = st->dirs, H = st->hidden;
        if (given(4)) {  // sequence lengths: oneDNN runs every entry over the whole sequence
            const auto lens = xs[4].to_ints();
            for (const auto l : lens)
                if (l != T) return reference(xs);
        }
        const shape state{D, N, H};
        for (std::size_t slot : {std::size_t{5}, std::size_t{6}})
            if (given(slot) && (xs[slot].type() != dtype::f32 || xs[slot].dims() != state)) return reference(xs);
        if (T * N * D * st->gates * H * (st->input + H) < onednn_recurrent_min_work) return reference(xs);
        const auto p = st->plan_for(T, N);
        if (!p) return reference(xs);
        using tag = dnnl::memory::format_tag;
        const auto& eng = onednn::cpu_engine();
        auto user = [&](const value& v, dnnl::memory::dims d, tag t) {
            return dnnl::memory(st->desc(std::move(d), t), eng, const_cast<void*>(v.data()));
        };
        const value zeros = value::zeros(dtype::f32, state);
        const value h0 = given(5) ? xs[5].dense_value() : zeros, c0 = given(6) ? xs[6].dense_value() : zeros;
        values out{value::zeros(dtype::f32, {T, D, N, H}), value::zeros(dtype::f32, state)};
        if (st->gates == 4) out.push_back(value::zeros(dtype::f32, state));
        value layer = D == 1 ? out[0] : value::zeros(dtype::f32, {T, N, D * H});  // [T, 1, N, H] is [T, N, H]
        const onednn::tensor scratch = onednn::tensor::allocate(p->p.scratchpad);
        std::unordered_map<int, dnnl::memory> args{
            {DNNL_ARG_SRC_LAYER, user(x, {T, N, st->input}, tag::tnc)},
            {DNNL_ARG_SRC_ITER, user(h0, {1, D, N, H}, tag::ldnc)},
            {DNNL_ARG_WEIGHTS_LAYER, p->w_layer},
            {DNNL_ARG_WEIGHTS_ITER, p->w_iter},
            {DNNL_ARG_BIAS, dnnl::memory(st->desc({1, D, st->bias_gates, H}, tag::ldgo), eng, st->bias.data())},
            {DNNL_ARG_DST_LAYER, user(layer, {T, N, D * H}, tag::tnc)},
            {DNNL_ARG_DST_ITER, user(out[1], {1, D, N, H}, tag::ldnc)},
            {DNNL_ARG_SCRATCHPAD, scratch.memory()}};
        if (st->gates == 4) {
            args.emplace(DNNL_ARG_SRC_ITER_C, user(c0, {1, D, N, H}, tag::ldnc));
            args.emplace(DNNL_ARG_DST_ITER_C, user(out[2], {1, D, N, H}, tag::ldnc));
            if (st->peephole) args.emplace(DNNL_ARG_WEIGHTS_PEEPHOLE, dnnl::memory(st->desc({1, D, 3, H}, tag::ldgo), eng, st->peep.data()));
        }
        dnnl::stream s(eng);
        p->p.prim.execute(s, args);
        ++onednn_typed_runs();
        s.wait();
        if (D == 2) {  // [T, N, 2*H] (the directions side by side) -> [T, 2, N, H]
            const float* l = layer.as<float>();
            float* y = out[0].as<float>();
            for (std::int64_t t = 0; t < T; ++t)
                for (std::int64_t d = 0; d < D; ++d)
                    for (std::int64_t n = 0; n < N; ++n) std::copy_n(l + (t * N + n) * D * H + d * H, H, y + ((t * D + d) * N + n) * H);
        }
        return out;
    };
}

}  // namespace typed
}  // namespace exec
SGMATCH_END_NAMESPACE
