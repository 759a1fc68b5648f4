// sgmatch/exec/kernels/recurrent.hpp - the kernels of RNN, GRU and LSTM (ops/recurrent.hpp) over
// typed values, f32 and f64, summing in double.
//
// Each direction runs each batch entry over its own length (sequence_lens, else the whole
// sequence; the reverse direction from its last valid step back to the first). Y is zero past
// an entry's length; Y_h and Y_c hold the state after its last valid step (the initial state
// for a length of 0). With `clip`, every activation's input is bounded to [-clip, clip].
//
//   RNN   H = tanh(W x + Wb + R H' + Rb)
//   GRU   z = sigmoid(Wz x + Wbz + Rz H' + Rbz), r = sigmoid(Wr x + Wbr + Rr H' + Rbr)
//         h = tanh(Wh x + Wbh + Rh (r * H') + Rbh)          (linear_before_reset 0)
//         h = tanh(Wh x + Wbh + r * (Rh H' + Rbh))          (linear_before_reset 1)
//         H = (1 - z) * h + z * H'
//   LSTM  i = sigmoid(Wi x + Wbi + Ri H' + Rbi + Pi * C'), f likewise (or 1 - i with input_forget)
//         C = f * C' + i * tanh(Wc x + Wbc + Rc H' + Rbc)
//         o = sigmoid(Wo x + Wbo + Ro H' + Rbo + Po * C), H = o * tanh(C)
#pragma once

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <limits>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#include "sgmatch/detail/config.hpp"
#include "sgmatch/exec/kernels/typed_support.hpp"
#include "sgmatch/exec/value.hpp"
#include "sgmatch/ops/recurrent.hpp"

SGMATCH_BEGIN_NAMESPACE
namespace exec {
namespace typed {

namespace detail {

/// One direction of one batch entry: the state through `len` steps, each step's H written to
/// `y(t)` (a pointer to hidden_size values, t the time index).
template <class T, class YAt>
void recurrent_entry(const ops::rules::recurrent_sizes& s, const T* const* x_at, const T* W, const T* R, const T* B, const T* P,
                     double clip, bool linear_before_reset, bool input_forget, std::int64_t len, bool reverse, std::vector<double>& h,
                     std::vector<double>& c, YAt y) {
    const std::int64_t H = s.hidden, I = s.input, G = s.gates;
    auto bound = [clip](double v) { return std::min(std::max(v, -clip), clip); };
    auto sigmoid = [&](double v) { return 1.0 / (1.0 + std::exp(-bound(v))); };
    auto tanh_ = [&](double v) { return std::tanh(bound(v)); };
    std::vector<double> wx(static_cast<std::size_t>(G * H)), rh(static_cast<std::size_t>(G * H)), next(static_cast<std::size_t>(H));
    std::vector<double> r(static_cast<std::size_t>(G == 3 ? H : 0)), rprev(r.size());  // GRU: the reset gate, and r * H'
    auto row = [](const T* m, std::int64_t r, std::int64_t n, const auto& v) {  // m[r, :] . v
        double acc = 0;
        for (std::int64_t k = 0; k < n; ++k) acc += static_cast<double>(m[r * n + k]) * static_cast<double>(v[static_cast<std::size_t>(k)]);
        return acc;
    };
    auto bias = [&](std::int64_t k) { return B ? static_cast<double>(B[k]) : 0.0; };
    auto at = [](std::vector<double>& v, std::int64_t k) -> double& { return v[static_cast<std::size_t>(k)]; };
    for (std::int64_t step = 0; step < len; ++step) {
        const std::int64_t t = reverse ? len - 1 - step : step;
        const T* x = x_at[t];
        for (std::int64_t g = 0; g < G * H; ++g) {
            double acc = bias(g);
            for (std::int64_t k = 0; k < I; ++k) acc += static_cast<double>(W[g * I + k]) * static_cast<double>(x[k]);
            at(wx, g) = acc;
            at(rh, g) = row(R, g, H, h) + bias(G * H + g);
        }
        if (G == 1) {
            for (std::int64_t j = 0; j < H; ++j) at(next, j) = tanh_(at(wx, j) + at(rh, j));
        } else if (G == 3) {  // z, r, h
            for (std::int64_t j = 0; j < H; ++j) {
                at(r, j) = sigmoid(at(wx, H + j) + at(rh, H + j));
                at(rprev, j) = at(r, j) * at(h, j);
            }
            for (std::int64_t j = 0; j < H; ++j) {
                const double z = sigmoid(at(wx, j) + at(rh, j));
                const double cand = linear_before_reset ? tanh_(at(wx, 2 * H + j) + at(r, j) * at(rh, 2 * H + j))
                                                        : tanh_(at(wx, 2 * H + j) + row(R, 2 * H + j, H, rprev) + bias(5 * H + j));
                at(next, j) = (1 - z) * cand + z * at(h, j);
            }
        } else {  // i, o, f, c; peepholes i, o, f
            auto peep = [&](std::int64_t k, std::int64_t j) { return P ? static_cast<double>(P[k * H + j]) : 0.0; };
            for (std::int64_t j = 0; j < H; ++j) {
                const double i = sigmoid(at(wx, j) + at(rh, j) + peep(0, j) * at(c, j));
                const double f = input_forget ? 1 - i : sigmoid(at(wx, 2 * H + j) + at(rh, 2 * H + j) + peep(2, j) * at(c, j));
                const double cell = f * at(c, j) + i * tanh_(at(wx, 3 * H + j) + at(rh, 3 * H + j));
                const double o = sigmoid(at(wx, H + j) + at(rh, H + j) + peep(1, j) * cell);
                at(c, j) = cell;
                at(next, j) = o * tanh_(cell);
            }
        }
        h.swap(next);
        T* out = y(t);
        for (std::int64_t j = 0; j < H; ++j) out[j] = static_cast<T>(at(h, j));
    }
}

}  // namespace detail

/// RNN, GRU and LSTM (the op's description says which).
inline typed_fn recurrent(const ops::op_attrs& a0, const ops::node_source&) {
    return [a = a0](const values& xs) {
        const value x = in(xs, 0, a).dense_value();
        require_type(a, x);
        const ops::shape_inputs shapes = shapes_of(xs);
        const std::vector<ops::dims> out_dims = rule(a, shapes);
        const ops::rules::recurrent_sizes s = ops::rules::recurrent_sizes_of(shapes, a);
        static constexpr const char* names[] = {"X", "W", "R", "B", "sequence_lens", "initial_h", "initial_c", "P"};
        std::vector<value> dense(xs.size());
        for (std::size_t i = 0; i < xs.size(); ++i) {
            if (!ops::rules::given(shapes, i)) continue;
            dense[i] = xs[i].dense_value();
            if (i != 4 && dense[i].type() != x.type())
                fail(a, std::string(names[i]) + " is " + std::string(name_of(dense[i].type())) + ", X is " + std::string(name_of(x.type())));
        }
        std::vector<std::int64_t> lens(static_cast<std::size_t>(s.batch), s.seq);
        if (dense.size() > 4 && dense[4].has_data()) {
            if (dense[4].type() != dtype::i32 && dense[4].type() != dtype::i64)
                fail(a, "sequence_lens is " + std::string(name_of(dense[4].type())) + " (int32 expected)");
            lens = dense[4].to_ints();
            for (const std::int64_t l : lens)
                if (l < 0 || l > s.seq)
                    fail(a, "a sequence length of " + std::to_string(l) + " is outside [0, " + std::to_string(s.seq) + "]");
        }
        values out;
        for (const auto& d : out_dims) out.push_back(value::zeros(x.type(), d));
        const double clip = a.has("clip") ? a.f("clip") : std::numeric_limits<double>::infinity();
        const bool lbr = s.gates == 3 && a.i("linear_before_reset") != 0;
        const bool forget = s.gates == 4 && a.i("input_forget") != 0;
        const std::string_view direction = a.s("direction");
        visit_type(x.type(), [&](auto tag) {
            using T = typename decltype(tag)::type;
            if constexpr (std::is_floating_point_v<T>) {
                auto ptr = [&](std::size_t i) -> const T* { return i < dense.size() && dense[i].has_data() ? std::as_const(dense[i]).as<T>() : nullptr; };
                const std::int64_t H = s.hidden, N = s.batch, D = s.dirs, S = s.seq;
                // Offsets (in elements) of one entry's row in Y and in the states.
                auto y_off = [&](std::int64_t t, std::int64_t d, std::int64_t b) {
                    return (s.batch_first ? ((b * S + t) * D + d) : ((t * D + d) * N + b)) * H;
                };
                auto state_off = [&](std::int64_t d, std::int64_t b) { return (s.batch_first ? b * D + d : d * N + b) * H; };
                T* Y = out[0].as<T>();
                const T *h0 = ptr(5), *c0 = ptr(6);
                std::vector<const T*> x_at(static_cast<std::size_t>(S));
                for (std::int64_t d = 0; d < D; ++d) {
                    const bool reverse = direction == "reverse" || d == 1;
                    const T* W = ptr(1) + d * s.gates * H * s.input;
                    const T* R = ptr(2) + d * s.gates * H * H;
                    const T* B = ptr(3) ? ptr(3) + d * 2 * s.gates * H : nullptr;
                    const T* P = ptr(7) ? ptr(7) + d * 3 * H : nullptr;
                    for (std::int64_t b = 0; b < N; ++b) {
                        std::vector<double> h(static_cast<std::size_t>(H)), c(static_cast<std::size_t>(H));
                        for (std::int64_t j = 0; j < H; ++j) {
                            if (h0) h[static_cast<std::size_t>(j)] = static_cast<double>(h0[state_off(d, b) + j]);
                            if (c0) c[static_cast<std::size_t>(j)] = static_cast<double>(c0[state_off(d, b) + j]);
                        }
                        for (std::int64_t t = 0; t < S; ++t)
                            x_at[static_cast<std::size_t>(t)] = x.as<T>() + (s.batch_first ? b * S + t : t * N + b) * s.input;
                        detail::recurrent_entry<T>(s, x_at.data(), W, R, B, P, clip, lbr, forget, lens[static_cast<std::size_t>(b)], reverse,
                                                   h, c, [&](std::int64_t t) { return Y + y_off(t, d, b); });
                        for (std::int64_t j = 0; j < H; ++j) {
                            out[1].as<T>()[state_off(d, b) + j] = static_cast<T>(h[static_cast<std::size_t>(j)]);
                            if (s.gates == 4) out[2].as<T>()[state_off(d, b) + j] = static_cast<T>(c[static_cast<std::size_t>(j)]);
                        }
                    }
                }
            }
        });
        return out;
    };
}

}  // namespace typed
namespace kernels {

// The typed_kernels<Tag> facets of this family's ops.
template <> inline constexpr typed_binding typed_kernels<ops::RNN>{typed::recurrent};
template <> inline constexpr typed_binding typed_kernels<ops::GRU>{typed::recurrent};
template <> inline constexpr typed_binding typed_kernels<ops::LSTM>{typed::recurrent};

}  // namespace kernels
}  // namespace exec
SGMATCH_END_NAMESPACE
