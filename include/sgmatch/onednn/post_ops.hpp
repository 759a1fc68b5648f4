// sgmatch/onednn/post_ops.hpp - the post-op chain of a fused kernel, as data, and how kernels
// run it.
//
// A fused kernel = one main primitive (conv, ...) + a list of post-ops applied to its output in
// pattern order. Lowering (lowering.hpp) fills the list from the matched nodes; the kernel turns
// it into dnnl::post_ops when it builds its primitive for given shapes. One concept a header:
//   post_op.hpp       the post-ops as data, and their operands' shapes
//   fused_kernel.hpp  what a fused node's kernel offers its executor
//   shape_cache.hpp   primitives built once per shape or layout, and the count of builds
//   post_op_plan.hpp  the fused prefix and the rest, the never-slower rule, the unfused log
#pragma once

#include "sgmatch/onednn/fused_kernel.hpp"
#include "sgmatch/onednn/post_op.hpp"
#include "sgmatch/onednn/post_op_plan.hpp"
#include "sgmatch/onednn/shape_cache.hpp"
