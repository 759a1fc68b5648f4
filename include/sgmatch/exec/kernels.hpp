// sgmatch/exec/kernels.hpp - every op's kernels, looked up by the op's description.
#pragma once

#include <unordered_map>

#include "sgmatch/detail/config.hpp"
#include "sgmatch/exec/kernels/elementwise.hpp"
#include "sgmatch/exec/kernels/nn.hpp"
#include "sgmatch/exec/kernels/reduce.hpp"
#include "sgmatch/exec/kernels/tensor.hpp"
#include "sgmatch/exec/node_kernels.hpp"
#include "sgmatch/ops/table.hpp"

SGMATCH_BEGIN_NAMESPACE
namespace exec {

/// The kernels of the op described by `s`, or null when no kernel runs it.
inline const kernel_binding* find_kernels(const ops::op_schema* s) {
    static const std::unordered_map<const ops::op_schema*, const kernel_binding*> by_schema = [] {
        std::unordered_map<const ops::op_schema*, const kernel_binding*> m;
        for (const auto& b : kernels::elementwise) m.emplace(b.schema, &b);
        for (const auto& b : kernels::nn) m.emplace(b.schema, &b);
        for (const auto& b : kernels::reductions) m.emplace(b.schema, &b);
        for (const auto& b : kernels::tensor) m.emplace(b.schema, &b);
        return m;
    }();
    const auto it = by_schema.find(s);
    return it == by_schema.end() ? nullptr : it->second;
}

}  // namespace exec
SGMATCH_END_NAMESPACE
