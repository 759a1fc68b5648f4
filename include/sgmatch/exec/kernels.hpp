// sgmatch/exec/kernels.hpp - every op's kernels (its f32_kernels<Tag>, attached in the family's
// header under exec/kernels/), looked up by the op's description.
#pragma once


#include "sgmatch/detail/config.hpp"
#include "sgmatch/exec/kernels/elementwise.hpp"
#include "sgmatch/exec/kernels/nn.hpp"
#include "sgmatch/exec/kernels/reduce.hpp"
#include "sgmatch/exec/kernels/tensor.hpp"
#include "sgmatch/exec/node_kernels.hpp"
#include "sgmatch/ops/table.hpp"

SGMATCH_BEGIN_NAMESPACE
namespace exec {

/// The kernels of the op described by `s` (its f32_kernels<Tag>), or null when no kernel runs it.
inline const kernel_binding* find_kernels(const ops::op_schema* s) {
    static const auto by_schema = ops::facet_table<const kernel_binding*>([](auto tag) -> const kernel_binding* {
        if constexpr (ops::has_facet_v<decltype(kernels::f32_kernels<decltype(tag)>)>) return &kernels::f32_kernels<decltype(tag)>;
        return nullptr;
    });
    const auto it = by_schema.find(s);
    return it == by_schema.end() ? nullptr : it->second;
}

}  // namespace exec
SGMATCH_END_NAMESPACE
