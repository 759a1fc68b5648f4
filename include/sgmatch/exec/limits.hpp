// sgmatch/exec/limits.hpp - what one run of an executor may take: the memory budget and the
// loop bound, for running models that nobody vetted.
//
//   exec::limits l;
//   l.max_allocation = std::uint64_t{2} << 30;   // one value: 2 GiB
//   l.max_loop_iterations = 100000;
//   run.set_limits(l);
//
// Every kernel path (reference, typed, one oneDNN primitive, fused) checks the bytes of the
// values a node is about to compute, from the shapes its op's shape rule gives for the inputs
// it has now, before anything is allocated; a node over either bound is refused with its name
// and both figures. The bodies of If, Loop and Scan share their node's executor's limits.
#pragma once

#include <cstdint>

#include "sgmatch/detail/config.hpp"

SGMATCH_BEGIN_NAMESPACE
namespace exec {

struct limits {
    /// The most bytes one computed value may take (8 GiB unless set).
    std::uint64_t max_allocation = std::uint64_t{8} << 30;
    /// The most bytes the values a run holds at once may take together: graph outputs and the
    /// values still to be read (8 GiB unless set). Graph inputs and constants are the caller's.
    std::uint64_t max_live = std::uint64_t{8} << 30;
    /// The most iterations one Loop node may run; 0 (the default): no bound, ONNX's meaning
    /// (a loop whose condition never turns false runs for ever).
    std::int64_t max_loop_iterations = 0;
};

}  // namespace exec
SGMATCH_END_NAMESPACE
