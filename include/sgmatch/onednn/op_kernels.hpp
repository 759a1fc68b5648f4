// sgmatch/onednn/op_kernels.hpp - single ops as oneDNN primitives: the unfused baseline (one
// primitive per op) and the kernels for supported ops outside fused nodes (pooling, Gemm, ...).
//
// Each kernel works in the layout its input arrives in (eltwise, BatchNorm, binary keep it;
// pooling lets oneDNN choose its destination), builds its primitive once per input shape and
// layout, and is thread-safe like fused_conv (cache under a lock, per-call scratchpad).
//
// Known limitations: fp32; Gemm needs a constant B (weights) and at most a [N] or [1, N] bias;
// Flatten, Reshape, Transpose, LayerNorm and MatMul work on plain layouts (their inputs are
// reordered when they come blocked); binary operands broadcast only from plain layouts; LRN
// needs an odd size; Softmax follows ONNX opset 13 (one axis).
#pragma once

#include "sgmatch/onednn/op_kernels/base.hpp"
#include "sgmatch/onednn/op_kernels/elementwise.hpp"
#include "sgmatch/onednn/op_kernels/nn.hpp"
#include "sgmatch/onednn/op_kernels/tensor.hpp"
