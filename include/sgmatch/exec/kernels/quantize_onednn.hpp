// sgmatch/exec/kernels/quantize_onednn.hpp - QuantizeLinear, DequantizeLinear and QLinearAdd in
// the oneDNN modes: the reference kernels' arithmetic (kernels/quantize.hpp), quantizing 16
// values at a time (SSE2 on x86-64) and the elements split across the team of threads oneDNN's
// primitives use (onednn/threads.hpp). The results are the reference kernels', element for
// element: every element is computed by the same f32 expression.
#pragma once

#include <cstddef>
#include <cstdint>

#include "sgmatch/detail/config.hpp"
#include "sgmatch/exec/kernels/quantize.hpp"
#include "sgmatch/onednn/threads.hpp"

SGMATCH_BEGIN_NAMESPACE
namespace exec {
namespace typed {

namespace detail {
/// Ranges of at least 16K elements, one per thread of oneDNN's team.
inline void run_on_onednn_team(std::int64_t n, void* f, void (*call)(void*, std::int64_t, std::int64_t)) {
    onednn::parallel_ranges(static_cast<std::size_t>(n), std::size_t{1} << 14, [&](std::size_t b, std::size_t e) {
        call(f, static_cast<std::int64_t>(b), static_cast<std::int64_t>(e));
    });
}
inline constexpr range_runner on_onednn_team{run_on_onednn_team, false};
}  // namespace detail

inline typed_fn onednn_quantize_linear(const ops::op_attrs& a, const ops::node_source&) {
    return quantize_linear_on(a, detail::on_onednn_team);
}
inline typed_fn onednn_dequantize_linear(const ops::op_attrs& a, const ops::node_source&) {
    return dequantize_linear_on(a, detail::on_onednn_team);
}
inline typed_fn onednn_qlinear_add(const ops::op_attrs& a, const ops::node_source&) { return qlinear_add_on(a, detail::on_onednn_team); }

}  // namespace typed
}  // namespace exec
SGMATCH_END_NAMESPACE
