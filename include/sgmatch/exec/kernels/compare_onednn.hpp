// sgmatch/exec/kernels/compare_onednn.hpp - Equal, Less, Greater, LessOrEqual and GreaterOrEqual
// of f32 tensors on oneDNN's binary primitive (binary_eq, binary_lt, binary_le: a bool mask
// written as u8 0 / 1, the bytes sgmatch's bool values hold), what the executor runs in its
// oneDNN modes.
//
// oneDNN broadcasts only its second operand, and oneDNN 2.6's JIT binary_gt and binary_ge are
// true where an operand is NaN (ONNX's comparisons are false there; its eq, lt and le are
// right). So the operands go in order when the first has the result's shape and the comparison
// is Equal, Less or LessOrEqual; swapped, the comparison turned round (a > b is b < a), when the
// second has it and it is Equal, Greater or GreaterOrEqual. Other cases (Greater of a full
// tensor and a broadcast one, ...) run on the typed kernel, as do other element types, rank 0
// or more than 6, and masks under onednn_compare_min_elements (where the primitive's fixed
// cost outweighs the typed kernel).
#pragma once

#include <cstddef>
#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <tuple>
#include <vector>

#include <oneapi/dnnl/dnnl.hpp>

#include "sgmatch/detail/config.hpp"
#include "sgmatch/exec/kernels/typed.hpp"
#include "sgmatch/exec/kernels/typed_support.hpp"
#include "sgmatch/onednn/compat.hpp"
#include "sgmatch/onednn/op_kernels/base.hpp"
#include "sgmatch/onednn/tensor.hpp"

SGMATCH_BEGIN_NAMESPACE
namespace exec {
namespace typed {

/// Masks with fewer elements run on the typed kernel: the primitive costs some 3-4 us a run,
/// the typed kernel less below it (benchmarks/single_ops.cpp: 0.50x at 256 elements, 0.86x at
/// 1024, 1.40x at 4096, 23x at 196,608).
inline constexpr std::int64_t onednn_compare_min_elements = 4096;

namespace detail {

// The comparison as oneDNN names it, on the operands in order or swapped; undef where that is
// binary_gt or binary_ge (wrong on NaNs: the typed kernel runs).
constexpr dnnl::algorithm compare_alg(binop k, bool swapped) {
    switch (k) {
    case binop::equal: return dnnl::algorithm::binary_eq;
    case binop::less: return swapped ? dnnl::algorithm::undef : dnnl::algorithm::binary_lt;
    case binop::greater: return swapped ? dnnl::algorithm::binary_lt : dnnl::algorithm::undef;
    case binop::less_equal: return swapped ? dnnl::algorithm::undef : dnnl::algorithm::binary_le;
    case binop::greater_equal: return swapped ? dnnl::algorithm::binary_le : dnnl::algorithm::undef;
    default: return dnnl::algorithm::undef;
    }
}

using compare_plan = onednn::detail::built_primitive<dnnl::binary::primitive_desc, dnnl::binary>;

// The primitives made so far, by (result dims, second operand's dims, swapped); null where
// oneDNN has none.
struct compare_state {
    std::mutex mu;
    std::map<std::tuple<ops::dims, ops::dims, bool>, std::shared_ptr<const compare_plan>> plans;
};

}  // namespace detail

/// The comparison K on oneDNN's binary primitive where it takes the operands, the typed kernel
/// otherwise.
template <binop K>
typed_fn onednn_compare(const ops::op_attrs& a0, const ops::node_source& node) {
    typed_fn reference = binary_kernel<K>(a0, node);
    auto st = std::make_shared<detail::compare_state>();
    return [a = a0, st, reference](const values& xs) -> values {
        const value& x0 = in(xs, 0, a);
        const value& y0 = in(xs, 1, a);
        if (x0.type() != dtype::f32 || y0.type() != dtype::f32) return reference(xs);
        const shape out = ops::rules::broadcast(a, x0.dims(), y0.dims());
        if (out.empty() || out.size() > 6 || element_count(out) < onednn_compare_min_elements) return reference(xs);
        // In order where the first operand has the result's shape and the comparison is one
        // oneDNN gets right, else swapped where the second one has it.
        const dnnl::algorithm in_order = x0.dims() == out ? detail::compare_alg(K, false) : dnnl::algorithm::undef;
        const bool swapped = in_order == dnnl::algorithm::undef;
        const dnnl::algorithm alg = swapped ? (y0.dims() == out ? detail::compare_alg(K, true) : dnnl::algorithm::undef) : in_order;
        if (alg == dnnl::algorithm::undef) return reference(xs);
        const value s0 = (swapped ? y0 : x0).dense_value(), s1 = (swapped ? x0 : y0).dense_value();
        shape d1 = s1.dims();
        d1.insert(d1.begin(), out.size() - d1.size(), 1);
        const dnnl::memory::desc md0 = onednn::plain_desc(out), md1 = onednn::plain_desc(d1);
        const dnnl::memory::desc mdst(out, dnnl::memory::data_type::u8, onednn::plain_tag(out.size()));
        std::shared_ptr<const detail::compare_plan> p;
        {
            std::lock_guard<std::mutex> lock(st->mu);
            const auto [it, made] = st->plans.try_emplace({out, d1, swapped}, nullptr);
            if (made) {
                try {
                    it->second = onednn::detail::with_primitive<dnnl::binary>(std::make_shared<const dnnl::binary::primitive_desc>(
                        onednn::compat::binary_pd(onednn::cpu_engine(), alg, md0, md1, mdst)));
                } catch (const dnnl::error&) {
                    // no implementation for these shapes: null, the typed kernel runs them
                }
            }
            p = it->second;
        }
        if (!p) return reference(xs);
        values r{value::zeros(dtype::boolean, out)};
        const auto& eng = onednn::cpu_engine();
        dnnl::stream s(eng);
        p->prim.execute(s, {{DNNL_ARG_SRC_0, dnnl::memory(md0, eng, const_cast<void*>(s0.data()))},
                            {DNNL_ARG_SRC_1, dnnl::memory(md1, eng, const_cast<void*>(s1.data()))},
                            {DNNL_ARG_DST, dnnl::memory(mdst, eng, r[0].mutable_data())}});
        s.wait();
        ++onednn_typed_runs();
        return r;
    };
}

}  // namespace typed
}  // namespace exec
SGMATCH_END_NAMESPACE
