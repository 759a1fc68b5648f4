// sgmatch/ops/signal.hpp - descriptions of the signal-processing ops: the Hann, Hamming and
// Blackman windows.
#pragma once

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

}  // namespace schemas
}  // namespace ops
SGMATCH_END_NAMESPACE
