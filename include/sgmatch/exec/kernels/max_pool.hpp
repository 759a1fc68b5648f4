// sgmatch/exec/kernels/max_pool.hpp - MaxPool over typed values: every numeric type, and its
// second output, the Indices.
//
// What the fp32 kernels (reference and oneDNN) do not: a data input that is not f32 (uint8
// images), and a node with two outputs. Each window's maximum is the first largest value in
// row-major order over the window; padding is never read. An index counts the input as one
// flat array: ((n * C + c) * D1 * ... * Dk) + the position within the image, row-major
// (storage_order 0) or column-major (storage_order 1).
#pragma once

#include <cstddef>
#include <cstdint>
#include <limits>
#include <type_traits>
#include <vector>

#include "sgmatch/detail/config.hpp"
#include "sgmatch/exec/kernels/typed_support.hpp"
#include "sgmatch/exec/value.hpp"
#include "sgmatch/ops/nn.hpp"

SGMATCH_BEGIN_NAMESPACE
namespace exec {
namespace typed {

/// MaxPool: the maxima, and (output 1) their int64 indices.
inline typed_fn max_pool(const ops::op_attrs& a0, const ops::node_source&) {
    return [a = a0](const values& xs) {
        const value x = in(xs, 0, a).dense_value();
        require_type(a, x);
        const std::vector<ops::dims> out_dims = rule(a, xs);
        const ops::dims& xd = x.dims();
        const ops::dims& yd = out_dims.at(0);
        const std::size_t sp = xd.size() - 2;
        const ops::rules::window w = ops::rules::window_of(a, sp);
        const bool column_major = a.i("storage_order") != 0;
        std::int64_t image = 1, out_image = 1, window = 1;
        for (std::size_t d = 0; d < sp; ++d) {
            image *= xd[d + 2];
            out_image *= yd[d + 2];
            window *= w.kernel[d];
        }
        value y = value::zeros(x.type(), yd), idx = value::zeros(dtype::i64, out_dims.at(1));
        std::int64_t* io = idx.as<std::int64_t>();
        visit_type(x.type(), [&](auto t) {
            using T = typename decltype(t)::type;
            if constexpr (!std::is_same_v<T, bool>) {
                const T* p = x.as<T>();
                T* yo = y.as<T>();
                std::vector<std::int64_t> o(sp), k(sp), at(sp);
                for (std::int64_t plane = 0; plane < xd[0] * xd[1]; ++plane)
                    for (std::int64_t oi = 0; oi < out_image; ++oi) {
                        for (std::size_t d = sp, r = static_cast<std::size_t>(oi); d-- > 0;) {  // output position
                            o[d] = static_cast<std::int64_t>(r % static_cast<std::size_t>(yd[d + 2]));
                            r /= static_cast<std::size_t>(yd[d + 2]);
                        }
                        T best = std::numeric_limits<T>::lowest();
                        std::int64_t best_at = -1;
                        for (std::int64_t ki = 0; ki < window; ++ki) {
                            bool inside = true;
                            for (std::size_t d = sp, r = static_cast<std::size_t>(ki); d-- > 0;) {
                                k[d] = static_cast<std::int64_t>(r % static_cast<std::size_t>(w.kernel[d]));
                                r /= static_cast<std::size_t>(w.kernel[d]);
                            }
                            for (std::size_t d = 0; d < sp; ++d) {
                                at[d] = o[d] * w.strides[d] - w.pads[d] + k[d] * w.dilations[d];
                                inside = inside && at[d] >= 0 && at[d] < xd[d + 2];
                            }
                            if (!inside) continue;
                            std::int64_t flat = 0;
                            for (std::size_t d = 0; d < sp; ++d) flat = flat * xd[d + 2] + at[d];
                            const T v = p[plane * image + flat];
                            if (best_at < 0 || v > best) {
                                best = v;
                                if (column_major) {
                                    flat = 0;
                                    for (std::size_t d = sp; d-- > 0;) flat = flat * xd[d + 2] + at[d];
                                }
                                best_at = flat;
                            }
                        }
                        yo[plane * out_image + oi] = best;
                        io[plane * out_image + oi] = best_at < 0 ? -1 : plane * image + best_at;
                    }
            }
        });
        return values{y, idx};
    };
}

}  // namespace typed
namespace kernels {

// The typed_kernels<Tag> facets of this family's ops.
template <> inline constexpr typed_binding typed_kernels<ops::MaxPool>{typed::max_pool};

}  // namespace kernels
}  // namespace exec
SGMATCH_END_NAMESPACE
