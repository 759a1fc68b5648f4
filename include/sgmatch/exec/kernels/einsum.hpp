// sgmatch/exec/kernels/einsum.hpp - Einsum over typed values (ops/einsum.hpp): any equation,
// on f32, f64 and the integer types.
//
// The loop of the equation's plan, written out: for each output element, the sum over the
// summed axes of the product of one element of each input (a repeated label reads a diagonal, a
// broadcast axis of extent 1 reads its one element). Sums in double for f32 and f64, in the
// integer type (wrapping) for integers. A reference kernel: O(output x summed extents x inputs),
// no blocking; a batched matmul written as Einsum runs at the speed of a naive loop.
#pragma once

#include <cstddef>
#include <cstdint>
#include <type_traits>
#include <utility>
#include <vector>

#include "sgmatch/detail/config.hpp"
#include "sgmatch/exec/kernels/typed_support.hpp"
#include "sgmatch/exec/value.hpp"
#include "sgmatch/ops/einsum.hpp"

SGMATCH_BEGIN_NAMESPACE
namespace exec {
namespace typed {

inline typed_fn einsum(const ops::op_attrs& a0, const ops::node_source&) {
    return [a = a0](const values& xs) {
        if (xs.empty()) fail(a, "has no inputs");
        std::vector<value> x;
        std::vector<ops::dims> shapes;
        for (std::size_t k = 0; k < xs.size(); ++k) {
            x.push_back(xs[k].dense_value());
            shapes.push_back(x.back().dims());
            if (x[k].type() != x[0].type())
                fail(a, "input " + std::to_string(k) + " is " + std::string(name_of(x[k].type())) + ", input 0 is " +
                            std::string(name_of(x[0].type())));
        }
        require_type(a, x[0]);
        const ops::einsum_plan p = as_executor_error([&] { return ops::plan_einsum(a, a.s("equation"), shapes); });
        const std::size_t axes = p.extents.size(), n = x.size();
        // Element strides of each input along every loop axis.
        std::vector<shape> in_strides(n, shape(axes, 0));
        for (std::size_t k = 0; k < n; ++k) {
            const shape dense = value::dense_strides(x[k].dims());
            for (std::size_t j = 0; j < p.inputs[k].size(); ++j) {
                const std::size_t l = p.inputs[k][j];
                if (x[k].dims()[j] == p.extents[l]) in_strides[k][l] += dense[j];  // 1 against more: broadcast, stride 0
            }
        }
        std::vector<bool> kept(axes, false);
        for (const std::size_t l : p.output) kept[l] = true;
        shape outer, inner;  // the output's loop axes (in output order), the summed ones
        for (const std::size_t l : p.output) outer.push_back(static_cast<std::int64_t>(l));
        for (std::size_t l = 0; l < axes; ++l)
            if (!kept[l]) inner.push_back(static_cast<std::int64_t>(l));
        value out = value::zeros(x[0].type(), p.out_dims);
        visit_type(x[0].type(), [&](auto t) {
            using T = typename decltype(t)::type;
            if constexpr (!std::is_same_v<T, bool>) {
                using Acc = std::conditional_t<std::is_floating_point_v<T>, double, T>;
                std::vector<const T*> src;
                for (const value& v : x) src.push_back(std::as_const(v).template as<T>());
                T* o = out.template as<T>();
                // Offsets of each input: along the output's axes (outer), then the summed ones.
                auto walk = [&](const shape& loop, std::vector<std::int64_t>& off, shape& idx) {
                    for (std::size_t q = loop.size(); q-- > 0;) {
                        const auto l = static_cast<std::size_t>(loop[q]);
                        if (++idx[q] < p.extents[l]) {
                            for (std::size_t k = 0; k < n; ++k) off[k] += in_strides[k][l];
                            return true;
                        }
                        for (std::size_t k = 0; k < n; ++k) off[k] -= in_strides[k][l] * (p.extents[l] - 1);
                        idx[q] = 0;
                    }
                    return false;
                };
                std::int64_t inner_count = 1;
                for (const auto l : inner) inner_count *= p.extents[static_cast<std::size_t>(l)];
                const std::int64_t count = out.size();
                if (count == 0) return;
                std::vector<std::int64_t> base(n, 0), off(n, 0);
                shape oi(outer.size(), 0), ii(inner.size(), 0);
                for (std::int64_t e = 0; e < count; ++e) {
                    Acc sum = 0;
                    if (inner_count > 0) {
                        off = base;
                        do {
                            Acc prod = 1;
                            for (std::size_t k = 0; k < n; ++k)
                                prod = wrap(prod, static_cast<Acc>(src[k][off[k]]), [](auto u, auto v) { return u * v; });
                            sum = wrap(sum, prod, [](auto u, auto v) { return u + v; });
                        } while (walk(inner, off, ii));
                    }
                    o[e] = static_cast<T>(sum);
                    walk(outer, base, oi);
                }
            }
        });
        return values{out};
    };
}

}  // namespace typed
namespace kernels {

// The typed_kernels<Tag> facets of this family's ops.
template <> inline constexpr typed_binding typed_kernels<ops::Einsum>{typed::einsum};

}  // namespace kernels
}  // namespace exec
SGMATCH_END_NAMESPACE
