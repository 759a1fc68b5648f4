// sgmatch/torch/translate.hpp - one aten node in sgmatch's op vocabulary.
//
//   translation t = sgmatch::torch::translate(node);
//   // t.op: the vocabulary's name ("Conv") or, untranslated, the node's kind ("aten::slice");
//   // t.operands: the tensor operands (the view's inputs), t.attrs: ONNX-style attributes;
//   // t.declined: why a known aten op is left alone ("" otherwise)
//
// One table: each aten kind names its vocabulary op, which positional arguments are tensor
// operands and how its constant arguments become attributes. A translated node's non-tensor
// arguments must all be constants (else it stays untranslated). Refused, with the reason kept,
// so that the op is never fused in a form the kernels would compute differently: a convolution
// whose padding is a string or that is transposed, batch_norm in training mode or without its
// affine parameters, add/sub with alpha != 1, a linear whose input is not 2-D (the pass turns a
// frozen linear into matmul + add first), a non-float operand or result, a constant operand
// that requires grad, an in-place op (RemoveTensorMutation turns the removable ones into their
// pure forms before the view reads the graph), baddbmm (two ops in one), and PyTorch's own fused
// fast paths (`_transformer_encoder_layer_fwd`, `_native_multi_head_attention`: one opaque
// kernel each). A number operand of add, sub, mul or div (`x / 8.0`), or a 0-d constant tensor
// there, is a scalar constant: the view makes it a constant node holding a 0-d float tensor
// (what PyTorch computes for a float tensor and a scalar).
#pragma once

#include <torch/csrc/jit/ir/constants.h>
#include <torch/csrc/jit/ir/ir.h>

#include <algorithm>
#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "sgmatch/detail/config.hpp"
#include "sgmatch/graph/types.hpp"

SGMATCH_BEGIN_NAMESPACE
namespace torch {

/// What one TorchScript node is to sgmatch (see the top of this file).
struct translation {
    std::string op;
    std::vector<const ::torch::jit::Value*> operands;
    std::vector<std::pair<std::string, attribute>> attrs;
    std::string declined;
    bool known = false;  // op is the vocabulary's

    bool translated() const { return known; }
};

/// sgmatch's element type for a torch scalar type (unknown for the others).
inline dtype dtype_of(c10::ScalarType t) {
    switch (t) {
        case c10::ScalarType::Float: return dtype::f32;
        case c10::ScalarType::Double: return dtype::f64;
        case c10::ScalarType::Half: return dtype::f16;
        case c10::ScalarType::BFloat16: return dtype::bf16;
        case c10::ScalarType::Long: return dtype::i64;
        case c10::ScalarType::Int: return dtype::i32;
        case c10::ScalarType::Short: return dtype::i16;
        case c10::ScalarType::Char: return dtype::i8;
        case c10::ScalarType::Byte: return dtype::u8;
        case c10::ScalarType::Bool: return dtype::boolean;
        default: return dtype::unknown;
    }
}

/// The value of v if it is a scalar constant an arithmetic op may read as a 0-d float tensor: a
/// number constant (int or float, not bool), or a 0-d constant tensor of a numeric type.
inline std::optional<double> scalar_constant(const ::torch::jit::Value* v) {
    if (v->node()->kind() != c10::prim::Constant) return std::nullopt;
    const auto c = ::torch::jit::toIValue(v);
    if (!c) return std::nullopt;
    if (c->isDouble()) return c->toDouble();
    if (c->isInt()) return static_cast<double>(c->toInt());
    if (c->isTensor()) {
        const at::Tensor& t = c->toTensor();
        if (t.dim() == 0 && t.device().type() == c10::DeviceType::CPU && !t.is_quantized() && !t.requires_grad() &&
            (at::isFloatingType(t.scalar_type()) || at::isIntegralType(t.scalar_type(), /*includeBool=*/false)))
            return t.item<double>();
    }
    return std::nullopt;
}

/// The rank of a TorchScript tensor value: as its type declares it, else as the few ops that
/// fix it say (flatten(x, 1, -1) is 2-D; mean over k dims drops k; element-wise ops and
/// pooling keep their input's).
inline std::optional<std::size_t> rank_of(const ::torch::jit::Value* v, int depth = 0) {
    const auto tt = v->type()->cast<c10::TensorType>();
    if (tt == nullptr) return std::nullopt;
    if (const auto d = tt->dim()) return *d;
    const ::torch::jit::Node* n = v->node();
    const std::string k = n->kind().toQualString();
    if (k == "aten::flatten" && n->inputs().size() == 3) {
        const auto s = ::torch::jit::toIValue(n->input(1)), e = ::torch::jit::toIValue(n->input(2));
        if (s && e && s->isInt() && e->isInt() && s->toInt() == 1 && e->toInt() == -1) return 2;
    }
    if (k == "aten::mean" && n->inputs().size() >= 3 && depth < 64) {  // mean(x, dims, keepdim, dtype)
        const auto dims = ::torch::jit::toIValue(n->input(1));
        const auto keepdim = ::torch::jit::toIValue(n->input(2));
        const auto r = rank_of(n->input(0), depth + 1);
        if (dims && dims->isIntList() && keepdim && keepdim->isBool() && r) {
            const std::size_t removed = keepdim->toBool() ? 0 : dims->toIntVector().size();
            if (removed <= *r) return *r - removed;
        }
    }
    if (depth >= 64 || n->inputs().empty()) return std::nullopt;
    if (k == "aten::view" || k == "aten::reshape") {  // as many dims as the shape has
        const ::torch::jit::Node* list = n->input(1)->node();
        if (list->kind() == c10::prim::ListConstruct) return list->inputs().size();
        const auto shape = ::torch::jit::toIValue(n->input(1));
        if (shape && shape->isIntList()) return shape->toIntVector().size();
        return std::nullopt;
    }
    if (k == "aten::permute") {
        const auto dims = ::torch::jit::toIValue(n->input(1));
        if (dims && dims->isIntList()) return dims->toIntVector().size();
        return std::nullopt;
    }
    if (k == "aten::bmm" || k == "aten::baddbmm") return 3;
    if (n->kind() == c10::prim::ListUnpack) {  // the parts of a chunk or split keep its input's rank
        const ::torch::jit::Node* p = n->input(0)->node();
        const std::string pk = p->kind().toQualString();
        if ((pk == "aten::chunk" || pk == "aten::split" || pk == "aten::split_with_sizes") && !p->inputs().empty())
            return rank_of(p->input(0), depth + 1);
        return std::nullopt;
    }
    // Element-wise ops with two operands and matmul: the larger rank (a matmul of two 1-D
    // vectors aside, which is read as unknown).
    if (k == "aten::add" || k == "aten::sub" || k == "aten::mul" || k == "aten::div" || k == "aten::matmul") {
        std::size_t r = 0;
        for (std::size_t i = 0; i < 2 && i < n->inputs().size(); ++i) {
            if (scalar_constant(n->input(i)) || n->input(i)->type()->cast<c10::TensorType>() == nullptr) continue;
            const auto ri = rank_of(n->input(i), depth + 1);
            if (!ri) return std::nullopt;
            r = std::max(r, *ri);
        }
        if (k == "aten::matmul" && r < 2) return std::nullopt;
        return r;
    }
    static const char* const keep[] = {"aten::relu", "aten::sigmoid", "aten::tanh", "aten::gelu", "aten::hardswish", "aten::silu", "aten::hardtanh", "aten::clamp",
                                        "aten::adaptive_avg_pool2d", "aten::max_pool2d", "aten::avg_pool2d", "aten::dropout", "aten::contiguous", "aten::transpose",
                                        "aten::softmax", "aten::layer_norm", "aten::batch_norm", "aten::linear", "aten::erf", "aten::exp", "aten::sqrt"};
    for (const char* x : keep)
        if (k == x) return rank_of(n->input(0), depth + 1);
    return std::nullopt;
}

/// Whether v is a tensor: by its type, or a constant holding one (typed Tensor? after folding).
inline bool is_tensor_value(const ::torch::jit::Value* v) {
    if (v->type()->cast<c10::TensorType>() != nullptr) return true;
    if (v->node()->kind() != c10::prim::Constant) return false;
    const auto c = ::torch::jit::toIValue(v);
    return c && c->isTensor();
}

/// The type a TorchScript value declares: element type and dims where its TensorType is
/// complete; unknown parts left unknown; nullopt for a value that is not a tensor.
inline std::optional<tensor_type> type_of(const ::torch::jit::Value* v) {
    auto tt = v->type()->cast<c10::TensorType>();
    if (tt == nullptr && v->node()->kind() == c10::prim::Constant) {  // a tensor typed Tensor? (a folded bias)
        const auto c = ::torch::jit::toIValue(v);
        if (c && c->isTensor()) tt = c10::TensorType::create(c->toTensor());
    }
    if (tt == nullptr) return std::nullopt;
    tensor_type t;
    if (const auto s = tt->scalarType()) t.type = dtype_of(*s);
    if (const auto d = tt->sizes().concrete_sizes()) {
        t.dims = *d;
        t.scalar = d->empty();
    }
    return t;
}

namespace detail {

class translator {
public:
    explicit translator(const ::torch::jit::Node* n) : n_(n) {}

    translation run() {
        namespace tj = ::torch::jit;
        const std::string kind = n_->kind().toQualString();
        t_.op = kind;
        if (kind.rfind("aten::", 0) != 0) return t_;
        const std::string a = kind.substr(6);
        if (!a.empty() && a.back() == '_' && a != "__and__")
            return decline_as(a.substr(0, a.size() - 1), "an in-place op that RemoveTensorMutation could not remove");
        if (a == "conv1d" || a == "conv2d" || a == "conv3d") return conv(false);
        if (a == "_convolution") return conv(true);
        if (a == "batch_norm") return batch_norm();
        if (a == "layer_norm") return layer_norm();
        if (a == "relu") return unary("Relu");
        if (a == "sigmoid") return unary("Sigmoid");
        if (a == "tanh") return unary("Tanh");
        if (a == "hardswish") return unary("HardSwish");
        if (a == "silu") return unary("Swish");
        if (a == "erf") return unary("Erf");
        if (a == "sqrt") return unary("Sqrt");
        if (a == "exp") return unary("Exp");
        if (a == "gelu") return gelu();
        if (a == "hardtanh" || a == "clamp") return clip();
        if (a == "contiguous") return unary("Identity");
        if (a == "add") return arithmetic("Add", true);
        if (a == "sub") return arithmetic("Sub", true);
        if (a == "mul") return arithmetic("Mul", false);
        if (a == "div") return arithmetic("Div", false);
        if (a == "matmul" || a == "bmm") return binary("MatMul", 2);
        if (a == "baddbmm") return decline("baddbmm is two ops (a batched matmul and an add); only its parts are fused");
        if (a == "_transformer_encoder_layer_fwd" || a == "_native_multi_head_attention" || a == "_transformer_decoder_only_layer_fwd")
            return decline("PyTorch's own fused fast path, one opaque kernel; trace or script the module with autograd on "
                           "(or with parameters that require grad) to keep the ops it is made of");
        if (a == "linear") return linear();
        if (a == "addmm") return addmm();
        if (a == "max_pool2d") return max_pool();
        if (a == "avg_pool2d") return avg_pool();
        if (a == "mean") return mean();
        if (a == "adaptive_avg_pool2d") return adaptive_avg_pool();
        if (a == "cat") return cat();
        if (a == "flatten") return flatten();
        if (a == "softmax") return softmax();
        if (a == "permute") return permute();
        if (a == "transpose") return transpose();
        return t_;
    }

private:
    using ints = attribute::ints;

    const ::torch::jit::Value* in(std::size_t i) const { return n_->input(i); }
    std::optional<c10::IValue> constant(std::size_t i) const {
        if (i >= n_->inputs().size()) return std::nullopt;
        return ::torch::jit::toIValue(in(i));
    }
    bool is_none(std::size_t i) const {
        if (i >= n_->inputs().size()) return false;
        if (in(i)->type()->kind() == c10::TypeKind::NoneType) return true;
        const auto c = constant(i);
        return c && c->isNone();
    }
    bool is_tensor(std::size_t i) const { return i < n_->inputs().size() && is_tensor_value(in(i)); }
    std::optional<ints> int_list(std::size_t i) const {
        const auto c = constant(i);
        if (!c || !c->isIntList()) return std::nullopt;
        return c->toIntVector();
    }
    std::optional<std::int64_t> integer(std::size_t i) const {
        const auto c = constant(i);
        if (!c || !c->isInt()) return std::nullopt;
        return c->toInt();
    }
    std::optional<bool> boolean(std::size_t i) const {
        const auto c = constant(i);
        if (!c || !c->isBool()) return std::nullopt;
        return c->toBool();
    }
    std::optional<double> number(std::size_t i) const {
        const auto c = constant(i);
        if (!c) return std::nullopt;
        if (c->isDouble()) return c->toDouble();
        if (c->isInt()) return static_cast<double>(c->toInt());
        return std::nullopt;
    }

    // PyTorch's padding (one value per spatial axis, both ends) as ONNX's pads (begins, then ends).
    static ints both_ends(const ints& padding) {
        ints pads = padding;
        pads.insert(pads.end(), padding.begin(), padding.end());
        return pads;
    }
    translation decline(std::string why) {
        t_.declined = t_.op + ": " + why;
        t_.operands.clear();
        t_.attrs.clear();
        return t_;
    }
    translation decline_as(const std::string& base, std::string why) {
        t_.declined = t_.op + " (" + base + "): " + why;
        return t_;
    }
    translation fail_constant(const char* what) { return decline(std::string(what) + " is not a constant"); }

    // The vocabulary's op, once every operand has been checked.
    translation accept(const char* op) {
        for (const ::torch::jit::Value* v : t_.operands) {
            if (scalar_constant(v)) continue;  // a 0-d float constant in the view
            const auto t = type_of(v);
            if (!t) return decline("operand '" + v->debugName() + "' is not a tensor");
            if (t->type != dtype::unknown && t->type != dtype::f32)
                return decline("operand '" + v->debugName() + "' is " + std::string(name_of(t->type)) + ", not float");
            if (v->node()->kind() == c10::prim::Constant) {
                const auto c = ::torch::jit::toIValue(v);
                if (c && c->isTensor() && c->toTensor().requires_grad())
                    return decline("constant '" + v->debugName() + "' requires grad");
            }
        }
        for (const ::torch::jit::Value* v : n_->outputs()) {
            const auto t = type_of(v);
            if (t && t->type != dtype::unknown && t->type != dtype::f32)
                return decline("result '" + v->debugName() + "' is " + std::string(name_of(t->type)) + ", not float");
        }
        t_.op = op;
        t_.known = true;
        return t_;
    }
    void operand(std::size_t i) { t_.operands.push_back(in(i)); }

    translation unary(const char* op) {
        if (!is_tensor(0)) return t_;
        operand(0);
        return accept(op);
    }
    translation binary(const char* op, std::size_t arity) {
        if (n_->inputs().size() != arity) return decline("the overload with " + std::to_string(n_->inputs().size()) + " arguments");
        for (std::size_t i = 0; i < arity; ++i) {
            if (!is_tensor(i)) return decline("argument " + std::to_string(i) + " is a scalar");
            operand(i);
        }
        return accept(op);
    }
    // add/sub(a, b, alpha), mul/div(a, b): a tensor and a tensor or a scalar constant (see the
    // top of this file); a scalar that is not a constant leaves the op alone.
    translation arithmetic(const char* op, bool with_alpha) {
        if (n_->inputs().size() != (with_alpha ? 3u : 2u)) return decline("the overload with " + std::to_string(n_->inputs().size()) + " arguments");
        bool constant[2], tensor[2];
        for (std::size_t i = 0; i < 2; ++i) {
            constant[i] = scalar_constant(in(i)).has_value();
            tensor[i] = is_tensor(i) && !constant[i];
        }
        if (!tensor[0] && !tensor[1]) return decline("two scalar operands");
        for (std::size_t i = 0; i < 2; ++i)
            if (!tensor[i] && !constant[i]) return decline("argument " + std::to_string(i) + " is a scalar computed at run time");
        if (with_alpha) {
            const auto alpha = number(2);
            if (!alpha) return fail_constant("alpha");
            if (*alpha != 1.0) return decline("alpha " + std::to_string(*alpha) + " (only 1 is fused)");
        }
        operand(0);
        operand(1);
        return accept(op);
    }
    // transpose(input, dim0, dim1): Transpose with the permutation that swaps the two dims.
    translation transpose() {
        if (n_->inputs().size() != 3) return t_;
        const auto d0 = integer(1), d1 = integer(2);
        if (!d0 || !d1) return fail_constant("dim0 or dim1");
        const auto rank = rank_of(in(0));
        if (!rank) return decline("transpose of an input of unknown rank (give optimize example inputs)");
        const auto r = static_cast<std::int64_t>(*rank);
        std::int64_t a = *d0 < 0 ? *d0 + r : *d0, b = *d1 < 0 ? *d1 + r : *d1;
        if (a < 0 || a >= r || b < 0 || b >= r) return decline("dims out of range");
        ints perm(static_cast<std::size_t>(r));
        for (std::int64_t i = 0; i < r; ++i) perm[static_cast<std::size_t>(i)] = i;
        std::swap(perm[static_cast<std::size_t>(a)], perm[static_cast<std::size_t>(b)]);
        operand(0);
        t_.attrs.emplace_back("perm", attribute(perm));
        return accept("Transpose");
    }
    translation gelu() {
        if (!is_tensor(0)) return t_;
        std::string approximate = "none";
        if (n_->inputs().size() > 1) {
            const auto c = constant(1);
            if (!c || !c->isString()) return fail_constant("approximate");
            approximate = c->toStringRef();
        }
        operand(0);
        t_.attrs.emplace_back("approximate", attribute(approximate));
        return accept("Gelu");
    }
    // hardtanh(input, min_val, max_val) (ReLU6) and clamp(input, min, max) with number bounds:
    // Clip with min and max attributes (a None bound is no bound).
    translation clip() {
        if (n_->inputs().size() != 3 || !is_tensor(0)) return t_;
        for (std::size_t i = 1; i <= 2; ++i) {
            if (is_none(i)) continue;
            if (is_tensor(i)) return decline("a tensor bound");
            const auto b = number(i);
            if (!b) return fail_constant(i == 1 ? "min" : "max");
            t_.attrs.emplace_back(i == 1 ? "min" : "max", attribute(*b));
        }
        operand(0);
        return accept("Clip");
    }
    // conv1d/2d/3d(input, weight, bias, stride, padding, dilation, groups) or _convolution(input,
    // weight, bias, stride, padding, dilation, transposed, output_padding, groups, ...).
    translation conv(bool general) {
        const std::size_t groups_at = general ? 8 : 6;
        if (n_->inputs().size() <= groups_at) return t_;
        if (general) {
            const auto transposed = boolean(6);
            if (!transposed) return fail_constant("transposed");
            if (*transposed) return decline("a transposed convolution");
        }
        const auto c = constant(4);
        if (c && c->isString()) return decline("padding given as a string ('" + c->toStringRef() + "')");
        const auto stride = int_list(3), padding = int_list(4), dilation = int_list(5);
        const auto groups = integer(groups_at);
        if (!stride || !padding || !dilation || !groups) return fail_constant("stride, padding, dilation or groups");
        const ints pads = both_ends(*padding);
        operand(0);
        operand(1);
        if (!is_none(2)) operand(2);
        t_.attrs.emplace_back("strides", attribute(*stride));
        t_.attrs.emplace_back("pads", attribute(pads));
        t_.attrs.emplace_back("dilations", attribute(*dilation));
        t_.attrs.emplace_back("group", attribute(*groups));
        return accept("Conv");
    }
    // batch_norm(input, weight, bias, running_mean, running_var, training, momentum, eps, cudnn_enabled)
    translation batch_norm() {
        if (n_->inputs().size() != 9) return t_;
        const auto training = boolean(5);
        if (!training) return fail_constant("training");
        if (*training) return decline("batch_norm in training mode");
        for (std::size_t i = 1; i <= 4; ++i)
            if (is_none(i)) return decline("batch_norm without its weight, bias or running statistics");
        const auto eps = number(7);
        if (!eps) return fail_constant("eps");
        for (std::size_t i = 0; i <= 4; ++i) operand(i);
        t_.attrs.emplace_back("epsilon", attribute(*eps));
        return accept("BatchNormalization");
    }
    // layer_norm(input, normalized_shape, weight, bias, eps, cudnn_enable)
    translation layer_norm() {
        if (n_->inputs().size() != 6) return t_;
        const auto shape = int_list(1);
        const auto eps = number(4);
        if (!shape || !eps) return fail_constant("normalized_shape or eps");
        if (is_none(2) || is_none(3)) return decline("layer_norm without its weight or bias");
        operand(0);
        operand(2);
        operand(3);
        t_.attrs.emplace_back("axis", attribute(-static_cast<std::int64_t>(shape->size())));
        t_.attrs.emplace_back("epsilon", attribute(*eps));
        return accept("LayerNormalization");
    }
    // linear(input, weight, bias): Gemm(input, weight, bias) with transB, for a 2-D input.
    translation linear() {
        if (n_->inputs().size() != 3) return t_;
        const auto rank = rank_of(in(0));
        if (!rank) return decline("linear on an input of unknown rank (Gemm takes 2-D; give optimize example inputs)");
        if (*rank != 2) return decline("linear on a " + std::to_string(*rank) + "-D input (Gemm takes 2-D)");
        operand(0);
        operand(1);
        if (!is_none(2)) operand(2);
        t_.attrs.emplace_back("transB", attribute(std::int64_t{1}));
        return accept("Gemm");
    }
    // addmm(self, mat1, mat2, beta, alpha) = beta * self + alpha * mat1 @ mat2: Gemm(mat1, mat2, self).
    translation addmm() {
        if (n_->inputs().size() != 5) return t_;
        const auto beta = number(3), alpha = number(4);
        if (!beta || !alpha) return fail_constant("beta or alpha");
        operand(1);
        operand(2);
        operand(0);
        t_.attrs.emplace_back("alpha", attribute(*alpha));
        t_.attrs.emplace_back("beta", attribute(*beta));
        return accept("Gemm");
    }
    // A pooling op's kernel_size, stride and padding (arguments 1 to 3) as kernel_shape, strides
    // (an empty stride is the kernel's) and pads; false if one is not a constant.
    bool pooling_window() {
        const auto kernel = int_list(1), stride = int_list(2), padding = int_list(3);
        if (!kernel || !stride || !padding) return false;
        t_.attrs.emplace_back("kernel_shape", attribute(*kernel));
        t_.attrs.emplace_back("strides", attribute(stride->empty() ? *kernel : *stride));
        t_.attrs.emplace_back("pads", attribute(both_ends(*padding)));
        return true;
    }
    // max_pool2d(input, kernel_size, stride, padding, dilation, ceil_mode)
    translation max_pool() {
        if (n_->inputs().size() != 6) return t_;
        const auto dilation = int_list(4);
        const auto ceil = boolean(5);
        if (!pooling_window() || !dilation || !ceil) return fail_constant("a window argument");
        operand(0);
        t_.attrs.emplace_back("dilations", attribute(*dilation));
        t_.attrs.emplace_back("ceil_mode", attribute(std::int64_t{*ceil ? 1 : 0}));
        return accept("MaxPool");
    }
    // avg_pool2d(input, kernel_size, stride, padding, ceil_mode, count_include_pad, divisor_override)
    translation avg_pool() {
        if (n_->inputs().size() != 7) return t_;
        if (!is_none(6)) return decline("a divisor_override");
        const auto ceil = boolean(4), include_pad = boolean(5);
        if (!pooling_window() || !ceil || !include_pad) return fail_constant("a window argument");
        operand(0);
        t_.attrs.emplace_back("ceil_mode", attribute(std::int64_t{*ceil ? 1 : 0}));
        t_.attrs.emplace_back("count_include_pad", attribute(std::int64_t{*include_pad ? 1 : 0}));
        return accept("AveragePool");
    }
    // mean(input, dims, keepdim, dtype) over the dims given, or mean(input, dtype) over all.
    translation mean() {
        const std::size_t arity = n_->inputs().size();
        if (arity != 2 && arity != 4) return t_;
        if (!is_none(arity - 1)) return decline("mean with a dtype");
        operand(0);
        if (arity == 4) {
            const auto dims = int_list(1);
            const auto keepdim = boolean(2);
            if (!dims || !keepdim) return fail_constant("dim or keepdim");
            if (dims->empty()) return decline("mean over an empty dim list (PyTorch reduces every dim)");
            t_.attrs.emplace_back("axes", attribute(*dims));
            t_.attrs.emplace_back("keepdims", attribute(std::int64_t{*keepdim ? 1 : 0}));
        } else {
            t_.attrs.emplace_back("keepdims", attribute(std::int64_t{0}));
        }
        return accept("ReduceMean");
    }
    translation adaptive_avg_pool() {
        if (n_->inputs().size() != 2) return t_;
        const auto size = int_list(1);
        if (!size) return fail_constant("output_size");
        for (std::int64_t s : *size)
            if (s != 1) return decline("an output size other than 1 (only the global average is fused)");
        operand(0);
        return accept("GlobalAveragePool");
    }
    // cat(tensors, dim): the list must be built in the graph (prim::ListConstruct).
    translation cat() {
        if (n_->inputs().size() != 2) return t_;
        const auto dim = integer(1);
        if (!dim) return fail_constant("dim");
        const ::torch::jit::Node* list = in(0)->node();
        if (list->kind() != c10::prim::ListConstruct) return decline("a tensor list not built in the graph");
        if (list->output()->uses().size() != 1) return decline("a tensor list read or changed elsewhere too");
        for (const ::torch::jit::Value* v : list->inputs()) t_.operands.push_back(v);
        t_.attrs.emplace_back("axis", attribute(*dim));
        return accept("Concat");
    }
    // flatten(input, start_dim, end_dim): ONNX's Flatten(axis 1) is flatten(x, 1, -1).
    translation flatten() {
        if (n_->inputs().size() != 3) return t_;
        const auto start = integer(1), end = integer(2);
        if (!start || !end) return fail_constant("start_dim or end_dim");
        if (*start != 1 || *end != -1) return decline("flatten other than from dim 1 to the last");
        operand(0);
        t_.attrs.emplace_back("axis", attribute(std::int64_t{1}));
        return accept("Flatten");
    }
    // softmax(input, dim, dtype)
    translation softmax() {
        if (n_->inputs().size() != 3) return t_;
        const auto dim = integer(1);
        if (!dim) return fail_constant("dim");
        if (!is_none(2)) return decline("softmax with a dtype");
        operand(0);
        t_.attrs.emplace_back("axis", attribute(*dim));
        return accept("Softmax");
    }
    translation permute() {
        if (n_->inputs().size() != 2) return t_;
        const auto dims = int_list(1);
        if (!dims) return fail_constant("dims");
        ints perm = *dims;
        for (std::int64_t& d : perm)
            if (d < 0) d += static_cast<std::int64_t>(perm.size());
        operand(0);
        t_.attrs.emplace_back("perm", attribute(perm));
        return accept("Transpose");
    }

    const ::torch::jit::Node* n_;
    translation t_;
};

}  // namespace detail

/// What node n is to sgmatch: see the top of this file.
inline translation translate(const ::torch::jit::Node* n) { return detail::translator(n).run(); }

}  // namespace torch
SGMATCH_END_NAMESPACE
