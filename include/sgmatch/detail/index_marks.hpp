// sgmatch/detail/index_marks.hpp - membership of one set of indices at a time, reused from set
// to set: starting a new set costs nothing (an epoch counter), not a clear of the whole array.
// And index_filter, which rules most non-members of a small set out with one test.
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <vector>

#include "sgmatch/detail/config.hpp"

SGMATCH_BEGIN_NAMESPACE
namespace detail {

class index_marks {
public:
    /// A new, empty set of indices below `bound`. May throw (growing the array); changes
    /// nothing observable if it does.
    void start(std::size_t bound) {
        // Grown by a quarter (a graph being rewritten asks for one more index per write).
        if (mark_.size() < bound) mark_.resize(std::max(bound, mark_.size() + mark_.size() / 4), 0);
        if (++epoch_ == 0) {  // wrapped: old marks could read as current
            std::fill(mark_.begin(), mark_.end(), 0);
            epoch_ = 1;
        }
    }
    void add(std::size_t i) { mark_[i] = epoch_; }
    /// Whether i is in the current set (false for indices beyond the bound it started with).
    bool has(std::size_t i) const { return i < mark_.size() && mark_[i] == epoch_; }

private:
    std::vector<std::uint32_t> mark_;
    std::uint32_t epoch_ = 0;
};

/// 64 bits, one per index mod 64, in front of a scan of a small set: may_have(i) false means i
/// is not in the set. The nodes a rewrite tests are mostly a few indices away from the members,
/// so one test rules them out.
class index_filter {
public:
    void add(std::size_t i) { bits_ |= std::uint64_t{1} << (i % 64); }
    bool may_have(std::size_t i) const { return (bits_ >> (i % 64)) & 1; }

private:
    std::uint64_t bits_ = 0;
};

}  // namespace detail
SGMATCH_END_NAMESPACE
