// sgmatch/exec/kernels/typed_onednn.hpp - the oneDNN kernels over typed values that the executor
// runs in its oneDNN modes instead of an op's reference kernel: RNN, GRU and LSTM on oneDNN's
// recurrent primitives (kernels/recurrent_onednn.hpp), Resize on its resampling primitive
// (kernels/resize_onednn.hpp), the comparisons on its binary primitive
// (kernels/compare_onednn.hpp), QLinearConv and ConvInteger on its int8 convolution
// (kernels/qconv_onednn.hpp), QLinearMatMul and MatMulInteger on its int8 matmul
// (kernels/qmatmul_onednn.hpp). Each takes the forms oneDNN computes as ONNX defines them and
// runs the reference kernel for the rest; each run that takes its primitive is counted
// (onednn_typed_runs, run_stats::onednn_typed_nodes).
#pragma once

#include "sgmatch/detail/config.hpp"
#include "sgmatch/exec/kernels/compare_onednn.hpp"
#include "sgmatch/exec/kernels/qconv_onednn.hpp"
#include "sgmatch/exec/kernels/qmatmul_onednn.hpp"
#include "sgmatch/exec/kernels/recurrent_onednn.hpp"
#include "sgmatch/exec/kernels/resize_onednn.hpp"
#include "sgmatch/exec/kernels/typed_support.hpp"
#include "sgmatch/ops/elementwise.hpp"
#include "sgmatch/ops/nn.hpp"
#include "sgmatch/ops/recurrent.hpp"
#include "sgmatch/ops/tensor.hpp"

SGMATCH_BEGIN_NAMESPACE
namespace exec {
namespace typed {

namespace detail {
inline const typed_binding onednn_typed_ops[] = {
    {&ops::schemas::rnn, onednn_recurrent},
    {&ops::schemas::gru, onednn_recurrent},
    {&ops::schemas::lstm, onednn_recurrent},
    {&ops::schemas::resize, onednn_resize},
    {&ops::schemas::equal, onednn_compare<binop::equal>},
    {&ops::schemas::less, onednn_compare<binop::less>},
    {&ops::schemas::greater, onednn_compare<binop::greater>},
    {&ops::schemas::less_or_equal, onednn_compare<binop::less_equal>},
    {&ops::schemas::greater_or_equal, onednn_compare<binop::greater_equal>},
    {&ops::schemas::qlinear_conv, onednn_qlinear_conv},
    {&ops::schemas::conv_integer, onednn_conv_integer},
    {&ops::schemas::qlinear_matmul, onednn_qlinear_matmul},
    {&ops::schemas::matmul_integer, onednn_matmul_integer},
};
}  // namespace detail

/// The oneDNN kernel over typed values of the op described by `s`, or null.
inline const typed_binding* find_onednn_typed_kernel(const ops::op_schema* s) {
    for (const auto& b : detail::onednn_typed_ops)
        if (b.schema == s) return &b;
    return nullptr;
}

}  // namespace typed
}  // namespace exec
SGMATCH_END_NAMESPACE
