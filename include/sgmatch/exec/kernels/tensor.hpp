// sgmatch/exec/kernels/tensor.hpp - fp32 kernels of the ops that move data: Concat, Reshape,
// Flatten, Transpose, Pad, Constant, Unsqueeze, Squeeze, Slice, Gather, Expand, Dropout.
// Parameters that decide the output's shape (axes, starts, indices, a shape) are read once, when
// the executor is built, from attributes or constant inputs; where one is computed, the op's
// typed kernel (kernels/typed.hpp) runs it and reads it at run time.
#pragma once

#include <algorithm>
#include <memory>
#include <vector>

#include "sgmatch/reference/xtensor.hpp"

#include "sgmatch/detail/config.hpp"
#include "sgmatch/exec/node_kernels.hpp"
#include "sgmatch/onednn/op_kernels.hpp"
#include "sgmatch/ops/tensor.hpp"
#include "sgmatch/reference/kernels.hpp"
#include "sgmatch/reference/tensor_ops.hpp"

SGMATCH_BEGIN_NAMESPACE
namespace exec {
namespace kernels {

inline reference_fn concat(const node_context& c) {
    return [axis = c.a.i("axis")](const std::vector<const array*>& x) {
        std::vector<array> xs;
        for (const array* p : x) xs.push_back(*p);
        return reference::concat(xs, axis);
    };
}
inline onednn_choice onednn_concat(const node_context& c, bool) {
    return std::make_shared<onednn::concat_kernel>(c.a.i("axis"));
}

inline reference_fn flatten(const node_context& c) {
    return [axis = c.a.i("axis")](const std::vector<const array*>& x) { return reference::flatten(*x.at(0), axis); };
}
inline onednn_choice onednn_flatten(const node_context& c, bool) {
    return std::make_shared<onednn::flatten_kernel>(c.a.i("axis"));
}

inline ops::dims shape_of(const array& x) { return ops::dims(x.shape().begin(), x.shape().end()); }

/// Reshape: the shape from a constant input 1 (opset >= 5) or the `shape` attribute (older); a
/// shape computed at run time is the typed kernel's (it reads int64 values).
inline reference_fn reshape(const node_context& c) {
    const auto given = c.input_count() > 1 ? c.ints_param(1, "shape") : std::optional<ops::dims>(c.a.ints("shape"));
    if (!given) c.refuse("the shape (input 1) holds values that are not integers");
    const ops::dims shape = *given;
    return [a = c.a, shape](const std::vector<const array*>& x) {
        const array& X = in(x, 0, a);
        const ops::dims to = ops::rules::reshape_to(a, shape_of(X), shape);
        array y = X;
        y.reshape(std::vector<std::size_t>(to.begin(), to.end()));
        return y;
    };
}
inline onednn_choice onednn_reshape(const node_context& c, bool) {
    onednn::dims shape = c.a.ints("shape");
    if (c.input_count() > 1) {  // the shape must be a constant here
        const std::vector<float> v = c.constant_input(1);
        if (v.empty()) return decline("the shape (input 1) is computed at run time");
        shape.assign(v.begin(), v.end());
    }
    // An empty axis (allowzero 1) is the reference kernel's: oneDNN has no empty tensors.
    if (c.a.i("allowzero") != 0 && std::find(shape.begin(), shape.end(), 0) != shape.end())
        return decline("an empty axis (allowzero 1): oneDNN has no empty tensors");
    return std::make_shared<onednn::reshape_kernel>(std::move(shape));
}

inline reference_fn transpose(const node_context& c) {
    return [a = c.a](const std::vector<const array*>& x) {
        const array& X = in(x, 0, a);
        const ops::dims p = ops::rules::perm_of(a, X.dimension());
        return array(xt::transpose(X, std::vector<std::size_t>(p.begin(), p.end())));
    };
}
inline onednn_choice onednn_transpose(const node_context& c, bool) {
    return std::make_shared<onednn::transpose_kernel>(c.a.ints("perm"));
}

/// Pad: pads and the constant value as inputs (opset >= 11) or attributes (older).
inline reference_fn pad(const node_context& c) {
    const auto mode = c.a.s("mode");
    const auto m = mode == "reflect" ? reference::pad_mode::reflect
                   : mode == "edge"  ? reference::pad_mode::edge
                                     : reference::pad_mode::constant;
    return [a = c.a, m](const std::vector<const array*>& x) {
        reference::dims pads = a.ints("pads");
        if (x.size() > 1) pads = int_values(*x[1], a, "pads");
        float value = static_cast<float>(a.f("value"));
        if (x.size() > 2 && x[2]->size() == 1) value = x[2]->data()[0];
        return reference::pad(in(x, 0, a), pads, m, value);
    };
}

/// Constant: its value made once, when the executor is built.
inline reference_fn constant(const node_context& c) {
    const ops::op_attrs& a = c.a;
    const ops::dims shape = ops::rules::constant({}, a).at(0);
    std::vector<double> v;
    for (const char* k : {"value_float", "value_int", "value_floats", "value_ints", "value"})
        if (a.has(k)) {
            const attribute& at = *a.given(k);
            if (const auto r = at.as_real()) v.assign(1, *r);
            else v = a.reals(k);
            break;
        }
    array y = xt::zeros<float>(std::vector<std::size_t>(shape.begin(), shape.end()));
    std::transform(v.begin(), v.end(), y.begin(), [](double d) { return static_cast<float>(d); });
    return [y](const std::vector<const array*>&) { return y; };
}

using params_t = std::vector<std::optional<std::vector<std::int64_t>>>;

// What a shape rule sees at run time: the input's shape and the parameters read at build time.
inline ops::shape_inputs shape_inputs_of(const array& x, const params_t& params) {
    ops::shape_inputs in{{shape_of(x)}, {std::nullopt}, {}};
    for (const auto& p : params) {
        in.shapes.push_back(p ? ops::dims{static_cast<std::int64_t>(p->size())} : ops::dims{});
        in.values.push_back(p);
    }
    return in;
}
inline ops::dims rule_shape(ops::shape_rule rule, const ops::op_attrs& a, const array& x, const params_t& params) {
    return rule(shape_inputs_of(x, params), a).at(0);
}

inline array reshaped(const array& x, const ops::dims& to) {
    array y = x;
    y.reshape(std::vector<std::size_t>(to.begin(), to.end()));
    return y;
}

/// Unsqueeze and Squeeze: the axes from the attribute or a constant input; a reshape.
template <ops::shape_rule Rule>
reference_fn reaxis(const node_context& c) {
    params_t params;
    if (c.input_count() > 1) params.push_back(c.ints_param(1, "axes"));
    return [a = c.a, params](const std::vector<const array*>& x) {
        return reshaped(*x.at(0), rule_shape(Rule, a, *x[0], params));
    };
}

inline reference_fn slice(const node_context& c) {
    params_t params;
    for (std::size_t slot = 1; slot < c.input_count(); ++slot)
        params.push_back(c.ints_param(slot, slot == 1 ? "starts" : slot == 2 ? "ends" : slot == 3 ? "axes" : "steps"));
    return [a = c.a, params](const std::vector<const array*>& x) {
        const ops::rules::slice_params p = ops::rules::slice_params_of(shape_inputs_of(*x.at(0), params), a);
        return reference::slice(*x[0], p.starts, p.ends, p.axes, p.steps);
    };
}

/// Slice on oneDNN: unit steps and constant parameters (the reference kernel takes the rest).
inline onednn_choice onednn_slice(const node_context& c, bool) {
    const auto starts = c.known_ints_param(1, "starts"), ends = c.known_ints_param(2, "ends"), axes = c.known_ints_param(3, "axes");
    const auto steps = c.input_count() > 4 ? c.known_ints_param(4, "steps") : std::optional<ops::dims>(ops::dims{});
    if (!starts || !ends || !axes || !steps) return decline("a parameter (starts, ends, axes or steps) is computed at run time");
    if (starts->size() != ends->size()) return decline("starts and ends differ in length");
    for (auto st : *steps)
        if (st != 1) return decline("a step of " + std::to_string(st) + " (oneDNN's slice takes unit steps)");
    ops::dims ax = *axes;
    if (ax.empty())
        for (std::size_t i = 0; i < starts->size(); ++i) ax.push_back(static_cast<std::int64_t>(i));
    if (ax.size() != starts->size()) return decline("axes and starts differ in length");
    return std::make_shared<onednn::slice_kernel>(*starts, *ends, ax);
}

inline reference_fn gather(const node_context& c) {
    const auto v = c.constant_view(1);
    if (!v || v->data == nullptr) c.refuse("the indices (input 1) are computed at run time: not supported");
    const std::vector<std::int64_t> idx = *v->to_ints();
    const ops::dims shape(v->dims, v->dims + v->rank);
    return [idx, shape, axis = c.a.i("axis")](const std::vector<const array*>& x) {
        return reference::gather(*x.at(0), idx, shape, axis);
    };
}

inline reference_fn expand(const node_context& c) {
    const params_t params{c.ints_param(1, "shape")};
    return [a = c.a, params](const std::vector<const array*>& x) {
        return reference::expand(*x.at(0), rule_shape(ops::rules::expand, a, *x.at(0), params));  // checked by the rule first
    };
}

/// Dropout in inference, or in training with a ratio of 0: the input. In training (or where
/// either is computed) the typed kernel runs it: it draws the mask (kernels/typed.hpp).
inline reference_fn dropout(const node_context& c) {
    if (c.input_count() > 2) {
        const auto t = c.constant_view(2);
        const auto v = t ? t->scalar() : std::nullopt;
        const auto r = c.input_count() > 1 ? c.constant_view(1) : std::nullopt;
        const auto ratio = r ? r->scalar() : std::nullopt;
        if (!v || (*v != 0 && (!ratio || *ratio != 0))) c.refuse("training_mode (input 2) may be true: the typed kernel draws the mask");
    }
    return [](const std::vector<const array*>& x) { return *x.at(0); };
}


template <> inline constexpr kernel_binding f32_kernels<ops::Unsqueeze>{reaxis<ops::rules::unsqueeze>, nullptr};
template <> inline constexpr kernel_binding f32_kernels<ops::Squeeze>{reaxis<ops::rules::squeeze>, nullptr};
template <> inline constexpr kernel_binding f32_kernels<ops::Slice>{slice, onednn_slice};
template <> inline constexpr kernel_binding f32_kernels<ops::Gather>{gather, nullptr};
template <> inline constexpr kernel_binding f32_kernels<ops::Expand>{expand, nullptr};
template <> inline constexpr kernel_binding f32_kernels<ops::Dropout>{dropout, nullptr};
template <> inline constexpr kernel_binding f32_kernels<ops::Concat>{concat, onednn_concat};
template <> inline constexpr kernel_binding f32_kernels<ops::Flatten>{flatten, onednn_flatten};
template <> inline constexpr kernel_binding f32_kernels<ops::Reshape>{reshape, onednn_reshape};
template <> inline constexpr kernel_binding f32_kernels<ops::Transpose>{transpose, onednn_transpose};
template <> inline constexpr kernel_binding f32_kernels<ops::Pad>{pad, nullptr};
template <> inline constexpr kernel_binding f32_kernels<ops::Constant>{constant, nullptr};

}  // namespace kernels
}  // namespace exec
SGMATCH_END_NAMESPACE
