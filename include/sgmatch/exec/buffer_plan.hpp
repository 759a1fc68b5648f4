// sgmatch/exec/buffer_plan.hpp - intermediate buffers placed in one arena by liveness.
//
//   std::vector<exec::buffer_need> needs = {{bytes, first_step, last_step}, ...};
//   exec::buffer_plan p = exec::plan_buffers(needs);   // p.offsets[i], p.arena
//
// A need is alive from the step that writes it to the last step that reads it, both included
// (a kernel reads its inputs while it writes its output: they never share memory). Placement is
// greedy by size, as TensorFlow Lite's arena planner and ONNX Runtime's memory patterns do: the
// largest buffer first, each at the lowest 64-byte aligned offset where no buffer alive at the
// same time lies. The executor plans the fused nodes' outputs from the first run of each input
// shape signature and places them so in the runs after it (executor.hpp).
#pragma once

#include <algorithm>
#include <cstddef>
#include <map>
#include <numeric>
#include <vector>

#include "sgmatch/detail/config.hpp"

SGMATCH_BEGIN_NAMESPACE
namespace exec {

/// One buffer a run needs: its bytes, and the steps from its writing to its last reading.
struct buffer_need {
    std::size_t bytes = 0;
    std::size_t first = 0, last = 0;
};

struct buffer_plan {
    std::vector<std::size_t> offsets;  // one per need, in the order given
    std::size_t arena = 0;             // the bytes that hold them all
};

namespace detail {
inline std::size_t aligned(std::size_t b) { return (b + 63) / 64 * 64; }
inline bool overlap_in_time(const buffer_need& a, const buffer_need& b) { return a.first <= b.last && b.first <= a.last; }
}  // namespace detail

/// Offsets in one arena: buffers alive at the same step never overlap (see the top of the file).
inline buffer_plan plan_buffers(const std::vector<buffer_need>& needs) {
    buffer_plan p;
    p.offsets.assign(needs.size(), 0);
    std::vector<std::size_t> order(needs.size());
    std::iota(order.begin(), order.end(), std::size_t{0});
    std::stable_sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) { return needs[a].bytes > needs[b].bytes; });
    std::vector<std::size_t> placed;
    for (std::size_t i : order) {
        // The placed buffers alive at the same time, by offset: the first gap that fits.
        std::vector<std::size_t> live;
        for (std::size_t j : placed)
            if (detail::overlap_in_time(needs[i], needs[j])) live.push_back(j);
        std::sort(live.begin(), live.end(), [&](std::size_t a, std::size_t b) { return p.offsets[a] < p.offsets[b]; });
        const std::size_t size = detail::aligned(needs[i].bytes);
        std::size_t at = 0;
        for (std::size_t j : live) {
            if (p.offsets[j] >= at + size) break;  // fits before j
            at = std::max(at, p.offsets[j] + detail::aligned(needs[j].bytes));
        }
        p.offsets[i] = at;
        p.arena = std::max(p.arena, at + size);
        placed.push_back(i);
    }
    return p;
}

/// The most bytes alive at one step (no placement can hold the needs in less).
inline std::size_t live_peak(const std::vector<buffer_need>& needs) {
    std::map<std::size_t, long long> delta;
    for (const auto& n : needs) {
        delta[n.first] += static_cast<long long>(detail::aligned(n.bytes));
        delta[n.last + 1] -= static_cast<long long>(detail::aligned(n.bytes));
    }
    long long cur = 0, peak = 0;
    for (const auto& [step, d] : delta) peak = std::max(peak, cur += d);
    return static_cast<std::size_t>(peak);
}

/// What a pool that hands back a freed buffer only to a request of the same size holds for the
/// same needs (the executor without a plan; onednn::detail::buffer_pool), at its peak.
inline std::size_t pooled_bytes(const std::vector<buffer_need>& needs) {
    std::size_t steps = 0;
    for (const auto& n : needs) steps = std::max(steps, n.last + 1);
    std::vector<std::vector<std::size_t>> starting(steps), ending(steps);
    for (std::size_t i = 0; i < needs.size(); ++i) {
        starting[needs[i].first].push_back(i);
        ending[needs[i].last].push_back(i);
    }
    std::map<std::size_t, std::size_t> idle;  // bytes -> free buffers of that size
    std::size_t held = 0;
    for (std::size_t s = 0; s < steps; ++s) {
        for (std::size_t i : starting[s]) {
            const std::size_t b = detail::aligned(needs[i].bytes);
            if (idle[b] > 0) --idle[b];
            else held += b;
        }
        for (std::size_t i : ending[s]) ++idle[detail::aligned(needs[i].bytes)];
    }
    return held;
}

}  // namespace exec
SGMATCH_END_NAMESPACE
