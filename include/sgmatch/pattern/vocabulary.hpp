// sgmatch/pattern/vocabulary.hpp - the standard op tags.
//
// Names cover ONNX spellings first, then MXNet / other common ones. The vocabulary knows
// nothing of oneDNN: lowering traits are specialized in sgmatch/onednn.
#pragma once

#include <string_view>

#include "sgmatch/detail/config.hpp"

SGMATCH_BEGIN_NAMESPACE
namespace ops {

// The vocabulary: one line per tag, its names (ONNX's spelling among them where ONNX has the op), for
// unary and binary element-wise ops their arity and, for binary ones, whether the op commutes.
// Everything that lists tags (ops::vocabulary below, the lowering lists derived in
// sgmatch/onednn) is expanded from this one list.
#define SGMATCH_VOCABULARY(OP, UNARY, BINARY) \
    /* Main compute ops. */                                                                \
    OP(Conv, "Conv", "Convolution", "conv2d")                                              \
    OP(ConvTranspose, "ConvTranspose", "Deconvolution", "conv2d_transpose")                \
    OP(MatMul, "MatMul", "batch_dot", "matmul")                                            \
    OP(Gemm, "Gemm", "FullyConnected", "linear")                                           \
    OP(BatchNorm, "BatchNorm", "BatchNormalization", "batch_norm")                         \
    OP(LayerNorm, "LayerNorm", "LayerNormalization", "layer_norm")                         \
    OP(LRN, "LRN")                                                                         \
    OP(LpNormalization, "LpNormalization")                                                 \
    /* Unary element-wise. */                                                              \
    UNARY(Relu, "Relu", "relu")                                                            \
    UNARY(LeakyRelu, "LeakyRelu", "leaky_relu")                                            \
    OP(Clip, "Clip", "clip")  /* ONNX Clip takes min/max as inputs */                      \
    UNARY(Sigmoid, "Sigmoid", "sigmoid")                                                   \
    UNARY(Tanh, "Tanh", "tanh")                                                            \
    UNARY(Elu, "Elu", "elu")                                                               \
    UNARY(Gelu, "Gelu", "gelu")                                                            \
    UNARY(Swish, "Swish", "swish", "SiLU", "silu")                                         \
    UNARY(HardSwish, "HardSwish", "hard_swish")                                            \
    UNARY(HardSigmoid, "HardSigmoid", "hard_sigmoid")                                      \
    UNARY(Mish, "Mish", "mish")                                                            \
    UNARY(Softplus, "Softplus", "softrelu")                                                \
    UNARY(Exp, "Exp", "exp")                                                               \
    UNARY(Log, "Log", "log")                                                               \
    UNARY(Sqrt, "Sqrt", "sqrt")                                                            \
    UNARY(Square, "Square", "square")                                                      \
    UNARY(Abs, "Abs", "abs")                                                               \
    UNARY(Round, "Round", "round")                                                         \
    UNARY(Erf, "Erf", "erf")                                                               \
    UNARY(Neg, "Neg", "negative")                                                          \
    UNARY(Reciprocal, "Reciprocal", "reciprocal")                                          \
    UNARY(Softsign, "Softsign", "softsign")                                                \
    UNARY(Selu, "Selu", "selu")                                                            \
    UNARY(Celu, "Celu", "celu")                                                            \
    UNARY(ThresholdedRelu, "ThresholdedRelu")                                              \
    OP(PRelu, "PRelu", "prelu")                                                            \
    /* Rounding, sign and trigonometry (reference kernels only). */                        \
    UNARY(Ceil, "Ceil", "ceil")                                                            \
    UNARY(Floor, "Floor", "floor")                                                         \
    UNARY(Sign, "Sign", "sign")                                                            \
    UNARY(Sin, "Sin", "sin")                                                               \
    UNARY(Cos, "Cos", "cos")                                                               \
    UNARY(Tan, "Tan", "tan")                                                               \
    UNARY(Asin, "Asin", "arcsin")                                                          \
    UNARY(Acos, "Acos", "arccos")                                                          \
    UNARY(Atan, "Atan", "arctan")                                                          \
    UNARY(Sinh, "Sinh", "sinh")                                                            \
    UNARY(Cosh, "Cosh", "cosh")                                                            \
    UNARY(Asinh, "Asinh", "arcsinh")                                                       \
    UNARY(Acosh, "Acosh", "arccosh")                                                       \
    UNARY(Atanh, "Atanh", "arctanh")                                                       \
    UNARY(IsNaN, "IsNaN", "isnan")                                                         \
    UNARY(IsInf, "IsInf", "isinf")                                                         \
    UNARY(Shrink, "Shrink")                                                                \
    /* Binary element-wise. */                                                             \
    BINARY(Pow, false, "Pow", "power")                                                     \
    BINARY(Add, true, "Add", "elemwise_add", "broadcast_add", "_plus")                     \
    BINARY(Sub, false, "Sub", "elemwise_sub", "broadcast_sub", "_minus")                   \
    BINARY(Mul, true, "Mul", "elemwise_mul", "broadcast_mul", "_mul")                      \
    BINARY(Div, false, "Div", "elemwise_div", "broadcast_div", "_div")                     \
    BINARY(Max, true, "Max", "maximum", "broadcast_maximum")                               \
    BINARY(Min, true, "Min", "minimum", "broadcast_minimum")                               \
    BINARY(Mod, false, "Mod", "broadcast_mod")                                             \
    OP(BitShift, "BitShift")                                                               \
    OP(Sum, "Sum", "add_n")                                                                \
    OP(Mean, "Mean")                                                                       \
    /* Reductions. */                                                                      \
    OP(ReduceMean, "ReduceMean", "mean")                                                   \
    OP(ReduceSum, "ReduceSum", "sum")                                                      \
    OP(ReduceMax, "ReduceMax", "max")                                                      \
    OP(ReduceMin, "ReduceMin", "min")                                                      \
    OP(ReduceProd, "ReduceProd", "prod")                                                   \
    OP(ReduceSumSquare, "ReduceSumSquare")                                                 \
    OP(ReduceL1, "ReduceL1")                                                               \
    OP(ReduceL2, "ReduceL2")                                                               \
    OP(ReduceLogSum, "ReduceLogSum")                                                       \
    OP(ReduceLogSumExp, "ReduceLogSumExp")                                                 \
    /* Pooling, normalization, shape. */                                                   \
    OP(MaxPool, "MaxPool", "max_pool2d")                                                   \
    OP(AveragePool, "AveragePool", "avg_pool2d")                                           \
    OP(GlobalAveragePool, "GlobalAveragePool", "adaptive_avg_pool2d")                      \
    OP(GlobalMaxPool, "GlobalMaxPool", "adaptive_max_pool2d")                              \
    OP(Softmax, "Softmax", "softmax")                                                      \
    OP(LogSoftmax, "LogSoftmax", "log_softmax")                                            \
    OP(Concat, "Concat", "concat")                                                         \
    OP(Reshape, "Reshape", "reshape")                                                      \
    OP(Flatten, "Flatten", "flatten")                                                      \
    OP(Transpose, "Transpose", "transpose")                                                \
    OP(Pad, "Pad", "pad")                                                                  \
    UNARY(Identity, "Identity", "_copy")                                                   \
    OP(Constant, "Constant")                                                               \
    OP(Unsqueeze, "Unsqueeze", "expand_dims")                                              \
    OP(Squeeze, "Squeeze", "squeeze")                                                      \
    OP(Slice, "Slice", "slice")                                                            \
    OP(Gather, "Gather", "take")                                                           \
    OP(Resize, "Resize")                                                                   \
    OP(Expand, "Expand", "broadcast_to")                                                   \
    OP(Dropout, "Dropout")                                                                 \
    OP(Cast, "Cast")                                                                       \
    OP(Split, "Split", "split")                                                            \
    OP(Shape, "Shape", "shape_array")                                                      \
    OP(Size, "Size", "size_array")                                                         \
    OP(ConstantOfShape, "ConstantOfShape")                                                 \
    OP(Where, "Where", "where")                                                            \
    /* By element position: repeat, mask, count, scan, search. */                          \
    OP(Tile, "Tile", "tile")                                                               \
    OP(Trilu, "Trilu")                                                                     \
    OP(Einsum, "Einsum", "einsum")                                                         \
    OP(Range, "Range", "arange")                                                           \
    OP(CumSum, "CumSum", "cumsum")                                                         \
    OP(ArgMax, "ArgMax", "argmax")                                                         \
    OP(ArgMin, "ArgMin", "argmin")                                                         \
    OP(Hardmax, "Hardmax")                                                                 \
    OP(TopK, "TopK")                                                                       \
    OP(OneHot, "OneHot", "one_hot")                                                        \
    OP(GatherElements, "GatherElements", "gather_elements")                                \
    OP(ScatterElements, "ScatterElements", "Scatter")                                      \
    OP(GatherND, "GatherND")                                                               \
    OP(ScatterND, "ScatterND")                                                             \
    OP(EyeLike, "EyeLike")                                                                 \
    OP(NonZero, "NonZero")                                                                 \
    OP(Compress, "Compress")                                                               \
    OP(Unique, "Unique")                                                                   \
    OP(ReverseSequence, "ReverseSequence")                                                 \
    /* Detection. */                                                                       \
    OP(NonMaxSuppression, "NonMaxSuppression")                                             \
    OP(RoiAlign, "RoiAlign")                                                               \
    OP(GridSample, "GridSample")                                                           \
    OP(MaxUnpool, "MaxUnpool")                                                             \
    /* Sequences of tensors. */                                                            \
    OP(SequenceEmpty, "SequenceEmpty")                                                     \
    OP(SequenceConstruct, "SequenceConstruct")                                             \
    OP(SequenceInsert, "SequenceInsert")                                                   \
    OP(SequenceAt, "SequenceAt")                                                           \
    OP(SequenceErase, "SequenceErase")                                                     \
    OP(SequenceLength, "SequenceLength")                                                   \
    OP(SplitToSequence, "SplitToSequence")                                                 \
    OP(ConcatFromSequence, "ConcatFromSequence")                                           \
    /* Control flow: ops with graph bodies. */                                             \
    OP(If, "If")                                                                           \
    OP(Loop, "Loop")                                                                       \
    OP(Scan, "Scan")                                                                       \
    OP(SequenceMap, "SequenceMap")                                                         \
    /* ONNX's optional type. */                                                            \
    OP(Optional, "Optional")                                                               \
    OP(OptionalHasElement, "OptionalHasElement")                                           \
    OP(OptionalGetElement, "OptionalGetElement")                                           \
    /* Signal processing, and the determinant. */                                          \
    OP(HannWindow, "HannWindow")                                                           \
    OP(HammingWindow, "HammingWindow")                                                     \
    OP(BlackmanWindow, "BlackmanWindow")                                                   \
    OP(DFT, "DFT")                                                                         \
    OP(STFT, "STFT")                                                                       \
    OP(MelWeightMatrix, "MelWeightMatrix")                                                 \
    OP(TfIdfVectorizer, "TfIdfVectorizer")                                                 \
    OP(Det, "Det")                                                                         \
    OP(DepthToSpace, "DepthToSpace", "depth_to_space")                                     \
    OP(SpaceToDepth, "SpaceToDepth", "space_to_depth")                                     \
    OP(CastLike, "CastLike")                                                               \
    /* Quantization (uint8 / int8 with a scale and zero point, per tensor or per axis). */ \
    OP(QuantizeLinear, "QuantizeLinear")                                                   \
    OP(DequantizeLinear, "DequantizeLinear")                                               \
    OP(MatMulInteger, "MatMulInteger")                                                     \
    OP(QLinearMatMul, "QLinearMatMul")                                                     \
    OP(DynamicQuantizeLinear, "DynamicQuantizeLinear")                                     \
    OP(ConvInteger, "ConvInteger")                                                         \
    OP(QLinearConv, "QLinearConv")                                                         \
    OP(QLinearAdd, "QLinearAdd")                                                           \
    /* Losses, and normalization per instance. */                                          \
    OP(NegativeLogLikelihoodLoss, "NegativeLogLikelihoodLoss")                             \
    OP(SoftmaxCrossEntropyLoss, "SoftmaxCrossEntropyLoss")                                 \
    OP(InstanceNormalization, "InstanceNormalization")                                     \
    OP(MeanVarianceNormalization, "MeanVarianceNormalization")                             \
    /* Recurrent layers. */                                                                \
    OP(RNN, "RNN")                                                                         \
    OP(GRU, "GRU")                                                                         \
    OP(LSTM, "LSTM")                                                                       \
    /* Comparisons and logic (bool results). */                                            \
    BINARY(Equal, true, "Equal", "broadcast_equal")                                        \
    BINARY(Less, false, "Less", "broadcast_lesser")                                        \
    BINARY(Greater, false, "Greater", "broadcast_greater")                                 \
    BINARY(LessOrEqual, false, "LessOrEqual", "broadcast_lesser_equal")                    \
    BINARY(GreaterOrEqual, false, "GreaterOrEqual", "broadcast_greater_equal")             \
    BINARY(And, true, "And", "broadcast_logical_and")                                      \
    BINARY(Or, true, "Or", "broadcast_logical_or")                                         \
    BINARY(Xor, true, "Xor", "broadcast_logical_xor")                                      \
    UNARY(Not, "Not", "logical_not")

#define SGMATCH_DETAIL_OP(T, ...)                                         \
    struct T {                                                            \
        static constexpr std::string_view names[] = {__VA_ARGS__};        \
    };
#define SGMATCH_DETAIL_UNARY(T, ...)                                      \
    struct T {                                                            \
        static constexpr std::string_view names[] = {__VA_ARGS__};        \
        static constexpr int arity = 1;                                   \
    };
#define SGMATCH_DETAIL_BINARY(T, comm, ...)                               \
    struct T {                                                            \
        static constexpr std::string_view names[] = {__VA_ARGS__};        \
        static constexpr bool commutative = comm;                         \
        static constexpr int arity = 2;                                   \
    };
SGMATCH_VOCABULARY(SGMATCH_DETAIL_OP, SGMATCH_DETAIL_UNARY, SGMATCH_DETAIL_BINARY)

/// A list of types (what ops::vocabulary is; sgmatch/onednn filters it with Hana).
template <class... T>
struct tag_list {};

}  // namespace ops

namespace detail {
template <class Void, class... T>
struct tag_list_after_void {
    using type = ops::tag_list<T...>;
};
}  // namespace detail

namespace ops {


#define SGMATCH_DETAIL_TAG(T, ...) , T
#define SGMATCH_DETAIL_BINARY_TAG(T, comm, ...) , T
/// Every tag of the standard vocabulary, in the order of the list above.
using vocabulary = typename sgmatch::detail::tag_list_after_void<void SGMATCH_VOCABULARY(SGMATCH_DETAIL_TAG, SGMATCH_DETAIL_TAG,
                                                                      SGMATCH_DETAIL_BINARY_TAG)>::type;
#undef SGMATCH_DETAIL_TAG
#undef SGMATCH_DETAIL_BINARY_TAG

#undef SGMATCH_DETAIL_UNARY
#undef SGMATCH_DETAIL_OP
#undef SGMATCH_DETAIL_BINARY
// SGMATCH_VOCABULARY stays defined: the layers above expand their per-tag lists from it too
// (onednn/property.hpp: a diagnostic that names the op).

/// MXNet's name for Gemm.
using FullyConnected = Gemm;

}  // namespace ops
SGMATCH_END_NAMESPACE
