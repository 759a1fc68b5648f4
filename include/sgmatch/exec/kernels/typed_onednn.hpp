// sgmatch/exec/kernels/typed_onednn.hpp - the oneDNN kernels over typed values that the executor
// runs in its oneDNN modes instead of an op's reference kernel: RNN, GRU and LSTM on oneDNN's
// recurrent primitives (kernels/recurrent_onednn.hpp), Resize on its resampling primitive
// (kernels/resize_onednn.hpp), the comparisons on its binary primitive
// (kernels/compare_onednn.hpp), QLinearConv and ConvInteger on its int8 convolution
// (kernels/qconv_onednn.hpp), QLinearMatMul and MatMulInteger on its int8 matmul
// (kernels/qmatmul_onednn.hpp), QuantizeLinear, DequantizeLinear and QLinearAdd on oneDNN's team of threads
// (kernels/quantize_onednn.hpp: no primitive, not counted). Each takes the forms oneDNN computes
// as ONNX defines them and runs the reference kernel for the rest; each run that takes its
// primitive is counted (onednn_typed_runs, run_stats::onednn_typed_nodes).
#pragma once

#include "sgmatch/detail/config.hpp"
#include "sgmatch/ops/table.hpp"
#include "sgmatch/exec/kernels/compare_onednn.hpp"
#include "sgmatch/exec/kernels/qconv_onednn.hpp"
#include "sgmatch/exec/kernels/qmatmul_onednn.hpp"
#include "sgmatch/exec/kernels/quantize_onednn.hpp"
#include "sgmatch/exec/kernels/recurrent_onednn.hpp"
#include "sgmatch/exec/kernels/resize_onednn.hpp"
#include "sgmatch/exec/kernels/typed_support.hpp"
#include "sgmatch/ops/elementwise.hpp"
#include "sgmatch/ops/nn.hpp"
#include "sgmatch/ops/recurrent.hpp"
#include "sgmatch/ops/tensor.hpp"

SGMATCH_BEGIN_NAMESPACE
namespace exec {
namespace kernels {

// The facet onednn_typed_kernels<Tag> of the ops that oneDNN runs on typed values.
template <> inline constexpr typed_binding onednn_typed_kernels<ops::RNN>{typed::onednn_recurrent};
template <> inline constexpr typed_binding onednn_typed_kernels<ops::GRU>{typed::onednn_recurrent};
template <> inline constexpr typed_binding onednn_typed_kernels<ops::LSTM>{typed::onednn_recurrent};
template <> inline constexpr typed_binding onednn_typed_kernels<ops::Resize>{typed::onednn_resize};
template <> inline constexpr typed_binding onednn_typed_kernels<ops::Equal>{typed::onednn_compare<typed::binop::equal>};
template <> inline constexpr typed_binding onednn_typed_kernels<ops::Less>{typed::onednn_compare<typed::binop::less>};
template <> inline constexpr typed_binding onednn_typed_kernels<ops::Greater>{typed::onednn_compare<typed::binop::greater>};
template <> inline constexpr typed_binding onednn_typed_kernels<ops::LessOrEqual>{typed::onednn_compare<typed::binop::less_equal>};
template <> inline constexpr typed_binding onednn_typed_kernels<ops::GreaterOrEqual>{typed::onednn_compare<typed::binop::greater_equal>};
template <> inline constexpr typed_binding onednn_typed_kernels<ops::QLinearConv>{typed::onednn_qlinear_conv};
template <> inline constexpr typed_binding onednn_typed_kernels<ops::ConvInteger>{typed::onednn_conv_integer};
template <> inline constexpr typed_binding onednn_typed_kernels<ops::QLinearMatMul>{typed::onednn_qlinear_matmul};
template <> inline constexpr typed_binding onednn_typed_kernels<ops::MatMulInteger>{typed::onednn_matmul_integer};
template <> inline constexpr typed_binding onednn_typed_kernels<ops::QuantizeLinear>{typed::onednn_quantize_linear};
template <> inline constexpr typed_binding onednn_typed_kernels<ops::DequantizeLinear>{typed::onednn_dequantize_linear};
template <> inline constexpr typed_binding onednn_typed_kernels<ops::QLinearAdd>{typed::onednn_qlinear_add};

}  // namespace kernels

namespace typed {

/// The oneDNN kernel over typed values of the op described by `s`, or null.
inline const typed_binding* find_onednn_typed_kernel(const ops::op_schema* s) {
    static const auto by_schema = ops::facet_table<const typed_binding*>([](auto tag) -> const typed_binding* {
        if constexpr (ops::has_facet_v<decltype(kernels::onednn_typed_kernels<decltype(tag)>)>) return &kernels::onednn_typed_kernels<decltype(tag)>;
        return nullptr;
    });
    const auto it = by_schema.find(s);
    return it == by_schema.end() ? nullptr : it->second;
}

}  // namespace typed
}  // namespace exec
SGMATCH_END_NAMESPACE
