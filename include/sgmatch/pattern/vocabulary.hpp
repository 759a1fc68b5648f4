// sgmatch/pattern/vocabulary.hpp - the standard op tags.
//
// Names cover ONNX spellings first, then MXNet / other common ones. The vocabulary knows
// nothing of oneDNN: lowering traits are specialized in sgmatch/onednn.
#pragma once

#include <string_view>

#include "sgmatch/detail/config.hpp"

SGMATCH_BEGIN_NAMESPACE
namespace ops {

#define SGMATCH_DETAIL_UNARY(T, ...)                                      \
    struct T {                                                            \
        static constexpr std::string_view names[] = {__VA_ARGS__};        \
        static constexpr int arity = 1;                                   \
    };
#define SGMATCH_DETAIL_OP(T, ...)                                         \
    struct T {                                                            \
        static constexpr std::string_view names[] = {__VA_ARGS__};        \
    };
#define SGMATCH_DETAIL_BINARY(T, comm, ...)                               \
    struct T {                                                            \
        static constexpr std::string_view names[] = {__VA_ARGS__};        \
        static constexpr bool commutative = comm;                         \
        static constexpr int arity = 2;                                   \
    };

// Main compute ops.
SGMATCH_DETAIL_OP(Conv, "Conv", "Convolution", "conv2d")
SGMATCH_DETAIL_OP(ConvTranspose, "ConvTranspose", "Deconvolution", "conv2d_transpose")
SGMATCH_DETAIL_OP(MatMul, "MatMul", "batch_dot", "matmul")
SGMATCH_DETAIL_OP(Gemm, "Gemm", "FullyConnected", "linear")
SGMATCH_DETAIL_OP(BatchNorm, "BatchNorm", "BatchNormalization", "batch_norm")
SGMATCH_DETAIL_OP(LayerNorm, "LayerNorm", "LayerNormalization", "layer_norm")
SGMATCH_DETAIL_OP(LRN, "LRN")

// Unary element-wise.
SGMATCH_DETAIL_UNARY(Relu, "Relu", "relu")
SGMATCH_DETAIL_UNARY(LeakyRelu, "LeakyRelu", "leaky_relu")
SGMATCH_DETAIL_OP(Clip, "Clip", "clip")  // ONNX Clip takes min/max as inputs
SGMATCH_DETAIL_UNARY(Sigmoid, "Sigmoid", "sigmoid")
SGMATCH_DETAIL_UNARY(Tanh, "Tanh", "tanh")
SGMATCH_DETAIL_UNARY(Elu, "Elu", "elu")
SGMATCH_DETAIL_UNARY(Gelu, "Gelu", "gelu")
SGMATCH_DETAIL_UNARY(Swish, "Swish", "swish", "SiLU", "silu")
SGMATCH_DETAIL_UNARY(HardSwish, "HardSwish", "hard_swish")
SGMATCH_DETAIL_UNARY(HardSigmoid, "HardSigmoid", "hard_sigmoid")
SGMATCH_DETAIL_UNARY(Mish, "Mish", "mish")
SGMATCH_DETAIL_UNARY(Softplus, "Softplus", "softrelu")
SGMATCH_DETAIL_UNARY(Exp, "Exp", "exp")
SGMATCH_DETAIL_UNARY(Log, "Log", "log")
SGMATCH_DETAIL_UNARY(Sqrt, "Sqrt", "sqrt")
SGMATCH_DETAIL_UNARY(Square, "Square", "square")
SGMATCH_DETAIL_UNARY(Abs, "Abs", "abs")
SGMATCH_DETAIL_UNARY(Round, "Round", "round")
SGMATCH_DETAIL_UNARY(Erf, "Erf", "erf")
SGMATCH_DETAIL_UNARY(Neg, "Neg", "negative")
SGMATCH_DETAIL_UNARY(Reciprocal, "Reciprocal", "reciprocal")
SGMATCH_DETAIL_UNARY(Softsign, "Softsign", "softsign")
SGMATCH_DETAIL_UNARY(Selu, "Selu", "selu")
SGMATCH_DETAIL_UNARY(Celu, "Celu", "celu")
SGMATCH_DETAIL_UNARY(ThresholdedRelu, "ThresholdedRelu")
SGMATCH_DETAIL_OP(PRelu, "PRelu", "prelu")

// Rounding, sign and trigonometry (reference kernels only).
SGMATCH_DETAIL_UNARY(Ceil, "Ceil", "ceil")
SGMATCH_DETAIL_UNARY(Floor, "Floor", "floor")
SGMATCH_DETAIL_UNARY(Sign, "Sign", "sign")
SGMATCH_DETAIL_UNARY(Sin, "Sin", "sin")
SGMATCH_DETAIL_UNARY(Cos, "Cos", "cos")
SGMATCH_DETAIL_UNARY(Tan, "Tan", "tan")
SGMATCH_DETAIL_UNARY(Asin, "Asin", "arcsin")
SGMATCH_DETAIL_UNARY(Acos, "Acos", "arccos")
SGMATCH_DETAIL_UNARY(Atan, "Atan", "arctan")
SGMATCH_DETAIL_UNARY(Sinh, "Sinh", "sinh")
SGMATCH_DETAIL_UNARY(Cosh, "Cosh", "cosh")
SGMATCH_DETAIL_UNARY(Asinh, "Asinh", "arcsinh")
SGMATCH_DETAIL_UNARY(Acosh, "Acosh", "arccosh")
SGMATCH_DETAIL_UNARY(Atanh, "Atanh", "arctanh")
SGMATCH_DETAIL_UNARY(IsNaN, "IsNaN", "isnan")
SGMATCH_DETAIL_UNARY(IsInf, "IsInf", "isinf")
SGMATCH_DETAIL_UNARY(Shrink, "Shrink")

// Binary element-wise.
SGMATCH_DETAIL_BINARY(Pow, false, "Pow", "power")
SGMATCH_DETAIL_BINARY(Add, true, "Add", "elemwise_add", "broadcast_add", "_plus")
SGMATCH_DETAIL_BINARY(Sub, false, "Sub", "elemwise_sub", "broadcast_sub", "_minus")
SGMATCH_DETAIL_BINARY(Mul, true, "Mul", "elemwise_mul", "broadcast_mul", "_mul")
SGMATCH_DETAIL_BINARY(Div, false, "Div", "elemwise_div", "broadcast_div", "_div")
SGMATCH_DETAIL_BINARY(Max, true, "Max", "maximum", "broadcast_maximum")
SGMATCH_DETAIL_BINARY(Min, true, "Min", "minimum", "broadcast_minimum")
SGMATCH_DETAIL_BINARY(Mod, false, "Mod", "broadcast_mod")
SGMATCH_DETAIL_OP(BitShift, "BitShift")
SGMATCH_DETAIL_OP(Sum, "Sum", "add_n")
SGMATCH_DETAIL_OP(Mean, "Mean")

// Reductions.
SGMATCH_DETAIL_OP(ReduceMean, "ReduceMean", "mean")
SGMATCH_DETAIL_OP(ReduceSum, "ReduceSum", "sum")
SGMATCH_DETAIL_OP(ReduceMax, "ReduceMax", "max")
SGMATCH_DETAIL_OP(ReduceMin, "ReduceMin", "min")
SGMATCH_DETAIL_OP(ReduceProd, "ReduceProd", "prod")
SGMATCH_DETAIL_OP(ReduceSumSquare, "ReduceSumSquare")
SGMATCH_DETAIL_OP(ReduceL1, "ReduceL1")
SGMATCH_DETAIL_OP(ReduceL2, "ReduceL2")
SGMATCH_DETAIL_OP(ReduceLogSum, "ReduceLogSum")
SGMATCH_DETAIL_OP(ReduceLogSumExp, "ReduceLogSumExp")

// Pooling, normalization, shape.
SGMATCH_DETAIL_OP(MaxPool, "MaxPool", "max_pool2d")
SGMATCH_DETAIL_OP(AveragePool, "AveragePool", "avg_pool2d")
SGMATCH_DETAIL_OP(GlobalAveragePool, "GlobalAveragePool", "adaptive_avg_pool2d")
SGMATCH_DETAIL_OP(GlobalMaxPool, "GlobalMaxPool", "adaptive_max_pool2d")
SGMATCH_DETAIL_OP(Softmax, "Softmax", "softmax")
SGMATCH_DETAIL_OP(LogSoftmax, "LogSoftmax", "log_softmax")
SGMATCH_DETAIL_OP(Concat, "Concat", "concat")
SGMATCH_DETAIL_OP(Reshape, "Reshape", "reshape")
SGMATCH_DETAIL_OP(Flatten, "Flatten", "flatten")
SGMATCH_DETAIL_OP(Transpose, "Transpose", "transpose")
SGMATCH_DETAIL_OP(Pad, "Pad", "pad")
SGMATCH_DETAIL_UNARY(Identity, "Identity", "_copy")
SGMATCH_DETAIL_OP(Constant, "Constant")
SGMATCH_DETAIL_OP(Unsqueeze, "Unsqueeze", "expand_dims")
SGMATCH_DETAIL_OP(Squeeze, "Squeeze", "squeeze")
SGMATCH_DETAIL_OP(Slice, "Slice", "slice")
SGMATCH_DETAIL_OP(Gather, "Gather", "take")
SGMATCH_DETAIL_OP(Resize, "Resize")
SGMATCH_DETAIL_OP(Expand, "Expand", "broadcast_to")
SGMATCH_DETAIL_OP(Dropout, "Dropout")
SGMATCH_DETAIL_OP(Cast, "Cast")
SGMATCH_DETAIL_OP(Split, "Split", "split")
SGMATCH_DETAIL_OP(Shape, "Shape", "shape_array")
SGMATCH_DETAIL_OP(Size, "Size", "size_array")
SGMATCH_DETAIL_OP(ConstantOfShape, "ConstantOfShape")
SGMATCH_DETAIL_OP(Where, "Where", "where")

// By element position: repeat, mask, count, scan, search.
SGMATCH_DETAIL_OP(Tile, "Tile", "tile")
SGMATCH_DETAIL_OP(Trilu, "Trilu")
SGMATCH_DETAIL_OP(Einsum, "Einsum", "einsum")
SGMATCH_DETAIL_OP(Range, "Range", "arange")
SGMATCH_DETAIL_OP(CumSum, "CumSum", "cumsum")
SGMATCH_DETAIL_OP(ArgMax, "ArgMax", "argmax")
SGMATCH_DETAIL_OP(ArgMin, "ArgMin", "argmin")
SGMATCH_DETAIL_OP(Hardmax, "Hardmax")
SGMATCH_DETAIL_OP(TopK, "TopK")
SGMATCH_DETAIL_OP(OneHot, "OneHot", "one_hot")
SGMATCH_DETAIL_OP(GatherElements, "GatherElements", "gather_elements")
SGMATCH_DETAIL_OP(ScatterElements, "ScatterElements", "Scatter")
SGMATCH_DETAIL_OP(GatherND, "GatherND")
SGMATCH_DETAIL_OP(ScatterND, "ScatterND")
SGMATCH_DETAIL_OP(EyeLike, "EyeLike")
SGMATCH_DETAIL_OP(NonZero, "NonZero")
SGMATCH_DETAIL_OP(Compress, "Compress")
SGMATCH_DETAIL_OP(Unique, "Unique")
SGMATCH_DETAIL_OP(ReverseSequence, "ReverseSequence")

// Detection.
SGMATCH_DETAIL_OP(NonMaxSuppression, "NonMaxSuppression")
SGMATCH_DETAIL_OP(RoiAlign, "RoiAlign")
SGMATCH_DETAIL_OP(GridSample, "GridSample")
SGMATCH_DETAIL_OP(MaxUnpool, "MaxUnpool")

// Sequences of tensors.
SGMATCH_DETAIL_OP(SequenceEmpty, "SequenceEmpty")
SGMATCH_DETAIL_OP(SequenceConstruct, "SequenceConstruct")
SGMATCH_DETAIL_OP(SequenceInsert, "SequenceInsert")
SGMATCH_DETAIL_OP(SequenceAt, "SequenceAt")
SGMATCH_DETAIL_OP(SequenceErase, "SequenceErase")
SGMATCH_DETAIL_OP(SequenceLength, "SequenceLength")
SGMATCH_DETAIL_OP(SplitToSequence, "SplitToSequence")
SGMATCH_DETAIL_OP(ConcatFromSequence, "ConcatFromSequence")

// Control flow: ops with graph bodies.
SGMATCH_DETAIL_OP(If, "If")
SGMATCH_DETAIL_OP(Loop, "Loop")
SGMATCH_DETAIL_OP(Scan, "Scan")
SGMATCH_DETAIL_OP(SequenceMap, "SequenceMap")

// ONNX's optional type.
SGMATCH_DETAIL_OP(Optional, "Optional")
SGMATCH_DETAIL_OP(OptionalHasElement, "OptionalHasElement")
SGMATCH_DETAIL_OP(OptionalGetElement, "OptionalGetElement")

// Signal processing, and the determinant.
SGMATCH_DETAIL_OP(HannWindow, "HannWindow")
SGMATCH_DETAIL_OP(HammingWindow, "HammingWindow")
SGMATCH_DETAIL_OP(BlackmanWindow, "BlackmanWindow")
SGMATCH_DETAIL_OP(DFT, "DFT")
SGMATCH_DETAIL_OP(STFT, "STFT")
SGMATCH_DETAIL_OP(MelWeightMatrix, "MelWeightMatrix")
SGMATCH_DETAIL_OP(TfIdfVectorizer, "TfIdfVectorizer")
SGMATCH_DETAIL_OP(Det, "Det")
SGMATCH_DETAIL_OP(DepthToSpace, "DepthToSpace", "depth_to_space")
SGMATCH_DETAIL_OP(SpaceToDepth, "SpaceToDepth", "space_to_depth")
SGMATCH_DETAIL_OP(CastLike, "CastLike")

// Quantization (uint8 / int8 with a scale and zero point, per tensor or per axis).
SGMATCH_DETAIL_OP(QuantizeLinear, "QuantizeLinear")
SGMATCH_DETAIL_OP(DequantizeLinear, "DequantizeLinear")
SGMATCH_DETAIL_OP(MatMulInteger, "MatMulInteger")
SGMATCH_DETAIL_OP(QLinearMatMul, "QLinearMatMul")
SGMATCH_DETAIL_OP(DynamicQuantizeLinear, "DynamicQuantizeLinear")
SGMATCH_DETAIL_OP(ConvInteger, "ConvInteger")
SGMATCH_DETAIL_OP(QLinearConv, "QLinearConv")

// Losses, and normalization per instance.
SGMATCH_DETAIL_OP(NegativeLogLikelihoodLoss, "NegativeLogLikelihoodLoss")
SGMATCH_DETAIL_OP(SoftmaxCrossEntropyLoss, "SoftmaxCrossEntropyLoss")
SGMATCH_DETAIL_OP(InstanceNormalization, "InstanceNormalization")
SGMATCH_DETAIL_OP(MeanVarianceNormalization, "MeanVarianceNormalization")

// Recurrent layers.
SGMATCH_DETAIL_OP(RNN, "RNN")
SGMATCH_DETAIL_OP(GRU, "GRU")
SGMATCH_DETAIL_OP(LSTM, "LSTM")

// Comparisons and logic (bool results).
SGMATCH_DETAIL_BINARY(Equal, true, "Equal", "broadcast_equal")
SGMATCH_DETAIL_BINARY(Less, false, "Less", "broadcast_lesser")
SGMATCH_DETAIL_BINARY(Greater, false, "Greater", "broadcast_greater")
SGMATCH_DETAIL_BINARY(LessOrEqual, false, "LessOrEqual", "broadcast_lesser_equal")
SGMATCH_DETAIL_BINARY(GreaterOrEqual, false, "GreaterOrEqual", "broadcast_greater_equal")
SGMATCH_DETAIL_BINARY(And, true, "And", "broadcast_logical_and")
SGMATCH_DETAIL_BINARY(Or, true, "Or", "broadcast_logical_or")
SGMATCH_DETAIL_BINARY(Xor, true, "Xor", "broadcast_logical_xor")
SGMATCH_DETAIL_UNARY(Not, "Not", "logical_not")

#undef SGMATCH_DETAIL_UNARY
#undef SGMATCH_DETAIL_OP
#undef SGMATCH_DETAIL_BINARY

/// MXNet's name for Gemm.
using FullyConnected = Gemm;

}  // namespace ops
SGMATCH_END_NAMESPACE
