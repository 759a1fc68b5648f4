// benchmarks/outputs.hpp - what the benchmarks compare before timing: two runs' outputs.
#pragma once

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <limits>
#include <vector>

#include "sgmatch/exec/value.hpp"

namespace sgbench {

/// The largest absolute difference between two runs' outputs (f32 values, or bool masks where a
/// differing element counts 1); infinity where their counts, dims or element types differ.
inline double max_abs_diff(const std::vector<sgmatch::exec::value>& x, const std::vector<sgmatch::exec::value>& y) {
    constexpr double apart = std::numeric_limits<double>::infinity();
    if (x.size() != y.size()) return apart;
    double diff = 0;
    for (std::size_t o = 0; o < x.size(); ++o) {
        if (x[o].dims() != y[o].dims() || x[o].type() != y[o].type()) return apart;
        const sgmatch::exec::value a = x[o].dense_value(), b = y[o].dense_value();
        const bool mask = a.type() == sgmatch::dtype::boolean;
        for (std::int64_t i = 0; i < a.size(); ++i)
            diff = std::max(diff, mask ? (a.as<bool>()[i] != b.as<bool>()[i] ? 1.0 : 0.0)
                                       : static_cast<double>(std::abs(a.as<float>()[i] - b.as<float>()[i])));
    }
    return diff;
}

}  // namespace sgbench
