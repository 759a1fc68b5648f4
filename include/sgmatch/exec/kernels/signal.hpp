// sgmatch/exec/kernels/signal.hpp - the Hann, Hamming and Blackman windows (ops/signal.hpp),
// computed in double and stored as f32 or f64.
#pragma once

#include <cmath>
#include <cstdint>
#include <string>
#include <type_traits>

#include "sgmatch/detail/config.hpp"
#include "sgmatch/exec/kernels/typed_support.hpp"
#include "sgmatch/exec/value.hpp"
#include "sgmatch/ops/signal.hpp"

SGMATCH_BEGIN_NAMESPACE
namespace exec {
namespace typed {

/// A window of coefficients a0, a1, a2 (see ops/signal.hpp).
inline typed_fn window(const ops::op_attrs& a0, double c0, double c1, double c2) {
    return [a = a0, c0, c1, c2](const values& xs) {
        const std::int64_t size = rule(a, xs).at(0).at(0);
        const dtype t = ops::dtype_of_onnx(a.i("output_datatype"));
        if (t != dtype::f32 && t != dtype::f64) fail(a, "output_datatype " + std::to_string(a.i("output_datatype")) + " (f32 or f64 taken)");
        const double n_total = static_cast<double>(a.i("periodic") != 0 ? size : size - 1);
        constexpr double pi = 3.14159265358979323846;
        value out = value::zeros(t, {size});
        visit_type(t, [&](auto tag) {
            using T = typename decltype(tag)::type;
            if constexpr (std::is_floating_point_v<T>) {
                T* o = out.as<T>();
                for (std::int64_t n = 0; n < size; ++n) {
                    const double x = n_total > 0 ? 2 * pi * static_cast<double>(n) / n_total : 0.0;
                    o[n] = static_cast<T>(c0 - c1 * std::cos(x) + c2 * std::cos(2 * x));
                }
            }
        });
        return values{out};
    };
}

inline typed_fn hann_window(const ops::op_attrs& a, const ops::node_source&) { return window(a, 0.5, 0.5, 0.0); }
inline typed_fn hamming_window(const ops::op_attrs& a, const ops::node_source&) { return window(a, 25.0 / 46, 21.0 / 46, 0.0); }
inline typed_fn blackman_window(const ops::op_attrs& a, const ops::node_source&) { return window(a, 0.42, 0.5, 0.08); }

}  // namespace typed
}  // namespace exec
SGMATCH_END_NAMESPACE
