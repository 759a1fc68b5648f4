// sgmatch/exec/kernels/linalg.hpp - Det over typed values: the determinant of each square
// matrix in the last two dims, by LU decomposition with partial pivoting in double, on f32 and
// f64.
#pragma once

#include <cmath>
#include <cstdint>
#include <type_traits>
#include <utility>
#include <vector>

#include "sgmatch/detail/config.hpp"
#include "sgmatch/exec/kernels/typed_support.hpp"
#include "sgmatch/exec/value.hpp"

SGMATCH_BEGIN_NAMESPACE
namespace exec {
namespace typed {

/// The determinant of the n x n row-major matrix m (destroyed).
inline double determinant(std::vector<double>& m, std::int64_t n) {
    double d = 1.0;
    for (std::int64_t c = 0; c < n; ++c) {
        std::int64_t pivot = c;
        for (std::int64_t r = c + 1; r < n; ++r)
            if (std::fabs(m[static_cast<std::size_t>(r * n + c)]) > std::fabs(m[static_cast<std::size_t>(pivot * n + c)])) pivot = r;
        const double p = m[static_cast<std::size_t>(pivot * n + c)];
        if (p == 0.0) return 0.0;
        if (pivot != c) {
            for (std::int64_t k = 0; k < n; ++k) std::swap(m[static_cast<std::size_t>(c * n + k)], m[static_cast<std::size_t>(pivot * n + k)]);
            d = -d;
        }
        d *= p;
        for (std::int64_t r = c + 1; r < n; ++r) {
            const double f = m[static_cast<std::size_t>(r * n + c)] / p;
            for (std::int64_t k = c; k < n; ++k) m[static_cast<std::size_t>(r * n + k)] -= f * m[static_cast<std::size_t>(c * n + k)];
        }
    }
    return d;
}

inline typed_fn det(const ops::op_attrs& a0, const ops::node_source&) {
    return [a = a0](const values& xs) {
        const value x = in(xs, 0, a).dense_value();
        require_type(a, x);
        const shape out_dims = rule(a, xs).at(0);
        const std::int64_t n = x.dims().back(), count = element_count(out_dims);
        value out = value::zeros(x.type(), out_dims);
        visit_type(x.type(), [&](auto t) {
            using T = typename decltype(t)::type;
            if constexpr (std::is_floating_point_v<T>) {
                const T* p = x.as<T>();
                std::vector<double> m(static_cast<std::size_t>(n * n));
                for (std::int64_t b = 0; b < count; ++b) {
                    for (std::int64_t i = 0; i < n * n; ++i) m[static_cast<std::size_t>(i)] = static_cast<double>(p[b * n * n + i]);
                    out.as<T>()[b] = static_cast<T>(determinant(m, n));
                }
            }
        });
        return values{out};
    };
}

}  // namespace typed
namespace kernels {

// The typed_kernels<Tag> facets of this family's ops.
template <> inline constexpr typed_binding typed_kernels<ops::Det>{typed::det};

}  // namespace kernels
}  // namespace exec
SGMATCH_END_NAMESPACE
