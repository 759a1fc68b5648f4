// sgmatch/ops/signal.hpp - descriptions of the signal-processing ops: the Hann, Hamming and
// Blackman windows, DFT, STFT and MelWeightMatrix.
//
// Complex values are pairs along a last axis of 2 (real, imaginary); a real input has a last
// axis of 1. Lengths given as inputs (DFT's dft_length, STFT's frame_step and frame_length,
// MelWeightMatrix's sizes) are read when the op runs when they are computed.
#pragma once

#include <cstdint>
#include <vector>

#include "sgmatch/detail/config.hpp"
#include "sgmatch/ops/schema.hpp"
#include "sgmatch/ops/shape_rules.hpp"
#include "sgmatch/pattern/vocabulary.hpp"

SGMATCH_BEGIN_NAMESPACE
namespace ops {
namespace rules {

/// A window: `size` values (a one-value input, known when the op runs).
inline std::vector<dims> window_op(const shape_inputs& in, const op_attrs& a) {
    const dims& s = in.shapes.at(0);
    if (!(s.empty() || (s.size() == 1 && s[0] == 1))) fail(a, "size is " + to_string(s) + ", not one value");
    const auto v = param(in, a, 0, "size");
    if (!v || v->size() != 1 || (*v)[0] < 0 || (*v)[0] > (std::int64_t{1} << 40))
        fail(a, "size " + (v && v->size() == 1 ? std::to_string((*v)[0]) : std::string("(not one value)")) + " is not a window length");
    return {dims{(*v)[0]}};
}

/// DFT: the input's dims, the transformed axis of dft_length (or its own) values, or
/// dft_length / 2 + 1 of them when onesided, and a last axis of 2.
inline std::vector<dims> dft(const shape_inputs& in, const op_attrs& a) {
    const dims& x = in.shapes.at(0);
    if (x.size() < 2 || (x.back() != 1 && x.back() != 2))
        fail(a, "input " + to_string(x) + ": the last axis must hold 1 (real) or 2 (complex) values");
    const auto r = static_cast<std::int64_t>(x.size());
    std::int64_t axis = a.i("axis");
    if (axis < 0) axis += r;
    if (axis < 0 || axis >= r - 1) fail(a, "axis " + std::to_string(a.i("axis")) + " is not a signal axis of " + to_string(x));
    std::int64_t n = x[static_cast<std::size_t>(axis)];
    if (in.shapes.size() > 1) {
        const auto v = param(in, a, 1, "dft_length");
        if (!v || v->size() != 1 || (*v)[0] < 1 || (*v)[0] > (std::int64_t{1} << 30))
            fail(a, "dft_length is not one positive length");
        n = (*v)[0];
    }
    const bool onesided = a.i("onesided") != 0;
    if (onesided && x.back() == 2) fail(a, "onesided with a complex input (no conjugate symmetry)");
    dims out = x;
    out[static_cast<std::size_t>(axis)] = onesided ? n / 2 + 1 : n;
    out.back() = 2;
    return {out};
}

/// STFT: [batch, frames, bins, 2] for a signal [batch, length, 1 or 2]: frames of frame_length
/// (the window's length, or the frame_length input) every frame_step values.
inline std::vector<dims> stft(const shape_inputs& in, const op_attrs& a) {
    const dims& x = in.shapes.at(0);
    if (x.size() != 3 || (x[2] != 1 && x[2] != 2)) fail(a, "signal " + to_string(x) + " is not [batch, length, 1 or 2]");
    const auto step = param(in, a, 1, "frame_step");
    if (!step || step->size() != 1 || (*step)[0] < 1) fail(a, "frame_step is not one positive number");
    std::int64_t length = -1;
    if (in.shapes.size() > 2 && !(in.shapes[2].size() == 1 && in.shapes[2][0] == 0)) {  // a window (none: no values)
        if (in.shapes[2].size() != 1) fail(a, "window " + to_string(in.shapes[2]) + " is not one axis");
        length = in.shapes[2][0];
    }
    if (in.shapes.size() > 3) {
        const auto v = param(in, a, 3, "frame_length");
        if (!v || v->size() != 1 || (*v)[0] < 1) fail(a, "frame_length is not one positive number");
        if (length >= 0 && (*v)[0] != length)
            fail(a, "frame_length " + std::to_string((*v)[0]) + " differs from the window's length " + std::to_string(length));
        length = (*v)[0];
    }
    if (length < 1) fail(a, "neither a window nor a frame_length gives the frame's length");
    if (length > x[1]) fail(a, "frames of " + std::to_string(length) + " do not fit a signal of " + std::to_string(x[1]));
    const bool onesided = a.i("onesided") != 0;
    if (onesided && x[2] == 2) fail(a, "onesided with a complex signal (no conjugate symmetry)");
    return {dims{x[0], (x[1] - length) / (*step)[0] + 1, onesided ? length / 2 + 1 : length, 2}};
}

/// MelWeightMatrix: [dft_length / 2 + 1, num_mel_bins].
inline std::vector<dims> mel_weight_matrix(const shape_inputs& in, const op_attrs& a) {
    const auto bins = param(in, a, 0, "num_mel_bins"), length = param(in, a, 1, "dft_length");
    if (!bins || bins->size() != 1 || (*bins)[0] < 1 || (*bins)[0] > (std::int64_t{1} << 20)) fail(a, "num_mel_bins is not one positive number");
    if (!length || length->size() != 1 || (*length)[0] < 1 || (*length)[0] > (std::int64_t{1} << 30))
        fail(a, "dft_length is not one positive number");
    return {dims{(*length)[0] / 2 + 1, (*bins)[0]}};
}

}  // namespace rules

namespace schemas {

inline constexpr input_spec window_inputs[] = {{"size", input_spec::presence::required, true}};
inline constexpr attr_spec window_attrs[] = {{"output_datatype", attr_type::integer, def::value(1), support::any()},
                                             {"periodic", attr_type::integer, def::value(1), support::range(0, 1)}};
inline constexpr type_rule window_type{type_rule::from::attribute, 0, dtype::unknown, "output_datatype"};
/// The windows: `size` values w[n] = a0 - a1 cos(2 pi n / N) + a2 cos(4 pi n / N), N = size
/// (periodic) or size - 1 (symmetric); Hann (0.5, 0.5, 0), Hamming (25/46, 21/46, 0), Blackman
/// (0.42, 0.5, 0.08); of type output_datatype (f32 by default, or f64).
inline constexpr op_schema hann_window =
    typed(describe<HannWindow>(window_inputs, window_attrs, window_type), types::bit(dtype::i32) | types::bit(dtype::i64));
inline constexpr op_schema hamming_window =
    typed(describe<HammingWindow>(window_inputs, window_attrs, window_type), types::bit(dtype::i32) | types::bit(dtype::i64));
inline constexpr op_schema blackman_window =
    typed(describe<BlackmanWindow>(window_inputs, window_attrs, window_type), types::bit(dtype::i32) | types::bit(dtype::i64));

/// DFT (opset 17): the discrete Fourier transform along `axis` of a real or complex input,
/// X[k] = sum_t x[t] exp(-2 pi i k t / n) (inverse: exp(+...) / n) over n = dft_length values
/// (the signal cut or zero-padded to it); onesided keeps k <= n / 2. f32 or f64.
inline constexpr input_spec dft_inputs[] = {{"input"}, {"dft_length", input_spec::presence::optional, true}};
inline constexpr attr_spec dft_attrs[] = {{"axis", attr_type::integer, def::value(1), support::any()},
                                          {"inverse", attr_type::integer, def::value(0), support::range(0, 1)},
                                          {"onesided", attr_type::integer, def::value(0), support::range(0, 1)}};
inline constexpr op_schema dft = typed(describe<DFT>(dft_inputs, dft_attrs), types::f32 | types::bit(dtype::f64));
/// STFT: the DFT of each frame of the signal (times the window, when given), frames of
/// frame_length every frame_step values; onesided (the default) keeps bins k <= length / 2.
inline constexpr input_spec stft_inputs[] = {{"signal"},
                                             {"frame_step", input_spec::presence::required, true},
                                             {"window", input_spec::presence::optional},
                                             {"frame_length", input_spec::presence::optional, true}};
inline constexpr attr_spec stft_attrs[] = {{"onesided", attr_type::integer, def::value(1), support::range(0, 1)}};
inline constexpr op_schema stft = typed(describe<STFT>(stft_inputs, stft_attrs), types::f32 | types::bit(dtype::f64));
/// MelWeightMatrix: the triangular filters that map the dft_length / 2 + 1 bins of a onesided
/// spectrum at sample_rate to num_mel_bins bands between lower_edge_hertz and upper_edge_hertz
/// on the mel scale (mel(f) = 2595 log10(1 + f / 700)), each band's peak 1; of type
/// output_datatype.
inline constexpr input_spec mel_inputs[] = {{"num_mel_bins", input_spec::presence::required, true},
                                            {"dft_length", input_spec::presence::required, true},
                                            {"sample_rate", input_spec::presence::required, true},
                                            {"lower_edge_hertz", input_spec::presence::required, true},
                                            {"upper_edge_hertz", input_spec::presence::required, true}};
inline constexpr attr_spec mel_attrs[] = {{"output_datatype", attr_type::integer, def::value(1), support::any()}};
inline constexpr op_schema mel_weight_matrix =
    typed(describe<MelWeightMatrix>(mel_inputs, mel_attrs, type_rule{type_rule::from::attribute, 0, dtype::unknown, "output_datatype"}),
          types::bit(dtype::i32) | types::bit(dtype::i64));

}  // namespace schemas

// The ops layer's facets of each op's entry (its vocabulary tag): the description and the shape rule.
template <> inline constexpr const op_schema* description<HannWindow> = &schemas::hann_window;
template <> inline constexpr shape_rule shape_rule_for<HannWindow> = rules::window_op;
template <> inline constexpr const op_schema* description<HammingWindow> = &schemas::hamming_window;
template <> inline constexpr shape_rule shape_rule_for<HammingWindow> = rules::window_op;
template <> inline constexpr const op_schema* description<BlackmanWindow> = &schemas::blackman_window;
template <> inline constexpr shape_rule shape_rule_for<BlackmanWindow> = rules::window_op;
template <> inline constexpr const op_schema* description<DFT> = &schemas::dft;
template <> inline constexpr shape_rule shape_rule_for<DFT> = rules::dft;
template <> inline constexpr const op_schema* description<STFT> = &schemas::stft;
template <> inline constexpr shape_rule shape_rule_for<STFT> = rules::stft;
template <> inline constexpr const op_schema* description<MelWeightMatrix> = &schemas::mel_weight_matrix;
template <> inline constexpr shape_rule shape_rule_for<MelWeightMatrix> = rules::mel_weight_matrix;

}  // namespace ops
SGMATCH_END_NAMESPACE
