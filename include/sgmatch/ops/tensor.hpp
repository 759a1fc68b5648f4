// sgmatch/ops/tensor.hpp - descriptions of the ops that move data without arithmetic: Concat,
// Reshape, Flatten, Transpose, Pad and Constant.
#pragma once

#include <cstddef>
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <optional>
#include <utility>
#include <vector>

#include "sgmatch/detail/config.hpp"
#include "sgmatch/ops/schema.hpp"
#include "sgmatch/ops/shape_rules.hpp"
#include "sgmatch/pattern/vocabulary.hpp"

SGMATCH_BEGIN_NAMESPACE
namespace ops {
namespace rules {

inline std::vector<dims> concat(const shape_inputs& in, const op_attrs& a) {
    dims out = in.shapes.at(0);
    const std::size_t ax = axis(a, a.i("axis"), out.size());
    for (std::size_t i = 1; i < in.shapes.size(); ++i) {
        const dims& x = in.shapes[i];
        bool fits = x.size() == out.size();
        for (std::size_t k = 0; fits && k < x.size(); ++k) fits = k == ax || x[k] == out[k];
        if (!fits) fail(a, "input " + std::to_string(i) + " " + to_string(x) + " does not fit " + to_string(in.shapes[0]) + " along axis " + std::to_string(ax));
        out[ax] += x[ax];
    }
    return {out};
}

/// ONNX Reshape: 0 copies the input's dim (an empty axis with allowzero 1), one -1 takes what is left.
inline dims reshape_to(const op_attrs& a, const dims& in, const dims& shape) {
    std::int64_t total = 1, known = 1;
    for (auto d : in) total *= d;
    dims out(shape);
    std::ptrdiff_t infer = -1;
    const bool copy_zero = a.i("allowzero") == 0;  // allowzero 1: a 0 is an empty axis
    for (std::size_t i = 0; i < out.size(); ++i) {
        if (out[i] == 0 && copy_zero) {
            if (i >= in.size()) fail(a, "shape " + to_string(shape) + " copies dim " + std::to_string(i) + " of " + to_string(in));
            out[i] = in[i];
        }
        if (out[i] == -1) {
            if (infer >= 0) fail(a, "shape " + to_string(shape) + " has two -1");
            infer = static_cast<std::ptrdiff_t>(i);
        } else if (out[i] < 0) {
            fail(a, "shape " + to_string(shape) + " has a negative dim");
        } else {
            if (out[i] != 0 && known > std::numeric_limits<std::int64_t>::max() / out[i])  // far more than the input has
                fail(a, "cannot reshape " + to_string(in) + " (" + std::to_string(total) + " values) to " + to_string(shape));
            known *= out[i];
        }
    }
    if (infer >= 0) {
        if (known == 0 || total % known != 0) fail(a, "cannot reshape " + to_string(in) + " to " + to_string(shape));
        out[static_cast<std::size_t>(infer)] = total / known;
    } else if (known != total) {
        fail(a, "cannot reshape " + to_string(in) + " (" + std::to_string(total) + " values) to " + to_string(shape));
    }
    return out;
}

inline std::vector<dims> reshape(const shape_inputs& in, const op_attrs& a) {
    if (in.shapes.size() > 1) {
        if (!in.values.at(1)) throw unknown_value("sgmatch: " + a.where() + ": the shape (input 1) is computed: unknown before the op runs", 1);
        return {reshape_to(a, in.shapes[0], *in.values[1])};
    }
    return {reshape_to(a, in.shapes.at(0), a.ints("shape"))};
}

inline std::vector<dims> flatten(const shape_inputs& in, const op_attrs& a) {
    const dims& x = in.shapes.at(0);
    const auto r = static_cast<std::int64_t>(x.size());
    std::int64_t ax = a.i("axis");
    if (ax < -r || ax > r) fail(a, "axis " + std::to_string(ax) + " is out of range for rank " + std::to_string(r));
    if (ax < 0) ax += r;
    std::int64_t outer = 1, inner = 1;
    for (std::int64_t i = 0; i < r; ++i) (i < ax ? outer : inner) *= x[static_cast<std::size_t>(i)];
    return {dims{outer, inner}};
}

inline dims perm_of(const op_attrs& a, std::size_t rank) {
    dims p = a.ints("perm");
    if (p.empty())
        for (std::size_t i = rank; i-- > 0;) p.push_back(static_cast<std::int64_t>(i));
    if (p.size() != rank) fail(a, "perm " + to_string(p) + " for rank " + std::to_string(rank));
    std::vector<bool> seen(rank, false);
    for (auto v : p) {
        if (v < 0 || static_cast<std::size_t>(v) >= rank || seen[static_cast<std::size_t>(v)])
            fail(a, "perm " + to_string(p) + " is not a permutation of 0.." + std::to_string(rank - 1));
        seen[static_cast<std::size_t>(v)] = true;
    }
    return p;
}

inline std::vector<dims> transpose(const shape_inputs& in, const op_attrs& a) {
    const dims& x = in.shapes.at(0);
    const dims p = perm_of(a, x.size());
    dims out;
    for (auto v : p) out.push_back(x[static_cast<std::size_t>(v)]);
    return {out};
}

/// Pad's pads: input 1 (opset >= 11) or the attribute; begins of every axis, then ends.
inline std::vector<dims> pad(const shape_inputs& in, const op_attrs& a) {
    dims x = in.shapes.at(0);
    dims pads;
    if (in.shapes.size() > 1) {
        if (!in.values.at(1)) throw unknown_value("sgmatch: " + a.where() + ": the pads (input 1) are computed: unknown before the op runs", 1);
        pads = *in.values[1];
    } else {
        pads = a.ints("pads");
    }
    if (pads.size() != 2 * x.size()) fail(a, "pads has " + std::to_string(pads.size()) + " values for rank " + std::to_string(x.size()));
    for (std::size_t i = 0; i < x.size(); ++i) {
        x[i] = add(a, x[i], add(a, pads[i], pads[i + x.size()], "pads"), "the padded dims");
        if (x[i] < 0) fail(a, "pads " + to_string(pads) + " leave a negative dim");
    }
    return {x};
}

/// Constant: a scalar (value_float, value_int), a list (value_floats, value_ints), or `value`
/// with an optional `shape` (the built-in graph keeps a tensor attribute flat, with its shape).
inline std::vector<dims> constant(const shape_inputs&, const op_attrs& a) {
    if (a.has("value_float") || a.has("value_int")) return {dims{}};
    if (a.has("value_floats")) return {dims{static_cast<std::int64_t>(a.reals("value_floats").size())}};
    if (a.has("value_ints")) return {dims{static_cast<std::int64_t>(a.ints("value_ints").size())}};
    if (a.has("value")) {
        const auto n = static_cast<std::int64_t>(a.reals("value").size());
        if (!a.has("shape")) return {dims{n}};
        const dims s = a.ints("shape");
        std::int64_t count = 1;
        for (auto d : s) {
            if (d < 0) fail(a, "a negative dimension in shape");
            count *= d;
        }
        if (count != n) fail(a, std::to_string(n) + " values for shape " + to_string(s));
        return {s};
    }
    fail(a, "no value_float, value_int, value_floats, value_ints or value attribute");
}

/// Unsqueeze: ones inserted at `axes` (positions in the output).
inline std::vector<dims> unsqueeze(const shape_inputs& in, const op_attrs& a) {
    const dims& x = in.shapes.at(0);
    const auto axes = param(in, a, 1, "axes");
    if (!axes || axes->empty()) fail(a, "no axes");
    const std::size_t r = x.size() + axes->size();
    std::vector<bool> one(r, false);
    for (auto v : *axes) {
        const std::size_t i = axis(a, v, r, "axes");
        if (one[i]) fail(a, "axis " + std::to_string(v) + " is listed twice");
        one[i] = true;
    }
    dims out;
    std::size_t k = 0;
    for (std::size_t i = 0; i < r; ++i) out.push_back(one[i] ? 1 : x[k++]);
    return {out};
}

/// Squeeze: the listed axes (each of size 1) removed, or every axis of size 1.
inline std::vector<dims> squeeze(const shape_inputs& in, const op_attrs& a) {
    const dims& x = in.shapes.at(0);
    const auto axes = param(in, a, 1, "axes");
    std::vector<bool> drop(x.size(), false);
    if (!axes || axes->empty()) {
        for (std::size_t i = 0; i < x.size(); ++i) drop[i] = x[i] == 1;
    } else {
        for (auto v : *axes) {
            const std::size_t i = axis(a, v, x.size(), "axes");
            if (x[i] != 1) fail(a, "axis " + std::to_string(v) + " of " + to_string(x) + " is not 1");
            drop[i] = true;
        }
    }
    dims out;
    for (std::size_t i = 0; i < x.size(); ++i)
        if (!drop[i]) out.push_back(x[i]);
    return {out};
}

/// Slice's starts, ends, axes and steps: inputs 1 to 4 (opset >= 10) or attributes (older).
struct slice_params {
    dims starts, ends, axes, steps;
};
inline slice_params slice_params_of(const shape_inputs& in, const op_attrs& a) {
    slice_params p;
    p.starts = param(in, a, 1, "starts").value_or(dims{});
    p.ends = param(in, a, 2, "ends").value_or(dims{});
    p.axes = param(in, a, 3, "axes").value_or(dims{});
    p.steps = in.shapes.size() > 4 ? *param(in, a, 4, "steps") : dims{};
    const std::size_t n = p.starts.size();
    if (p.ends.size() != n || (!p.axes.empty() && p.axes.size() != n) || (!p.steps.empty() && p.steps.size() != n))
        fail(a, "starts, ends, axes and steps differ in length");
    if (p.axes.empty())
        for (std::size_t i = 0; i < n; ++i) p.axes.push_back(static_cast<std::int64_t>(i));
    if (p.steps.empty()) p.steps.assign(n, 1);
    std::vector<bool> seen(in.shapes.at(0).size(), false);
    for (auto& v : p.axes) {
        const std::size_t i = axis(a, v, in.shapes[0].size(), "axes");
        if (seen[i]) fail(a, "axis " + std::to_string(v) + " is listed twice");
        seen[i] = true;
        v = static_cast<std::int64_t>(i);
    }
    for (auto s : p.steps)
        if (s == 0) fail(a, "a step of 0");
    return p;
}

/// The length of one sliced axis (ONNX's clamping).
inline std::int64_t slice_length(std::int64_t dim, std::int64_t start, std::int64_t end, std::int64_t step) {
    if (dim <= 0) return 0;  // nothing to take (the clamping below needs dim >= 1)
    auto clamp = [](std::int64_t v, std::int64_t lo, std::int64_t hi) { return v < lo ? lo : v > hi ? hi : v; };
    std::int64_t s = start < 0 ? (start < -dim ? -1 : start + dim) : start;
    const std::int64_t e = end < 0 ? (end < -dim ? (step > 0 ? 0 : -1) : end + dim) : end;
    if (step > 0) {
        s = clamp(s, 0, dim);
        const std::int64_t ec = clamp(e, 0, dim);
        return ec > s ? (ec - s + step - 1) / step : 0;
    }
    s = clamp(s, 0, dim - 1);
    const std::int64_t ec = clamp(e, -1, dim - 1);
    return s > ec ? (s - ec - step - 1) / (-step) : 0;
}

inline std::vector<dims> slice(const shape_inputs& in, const op_attrs& a) {
    dims x = in.shapes.at(0);
    const slice_params p = slice_params_of(in, a);
    for (std::size_t k = 0; k < p.starts.size(); ++k) {
        const auto i = static_cast<std::size_t>(p.axes[k]);
        x[i] = slice_length(x[i], p.starts[k], p.ends[k], p.steps[k]);
    }
    return {x};
}

/// Resize: `sizes` (input 3) when given and not empty, else floor(dim * scale) for `scales`
/// (input 2); one value per axis.
inline std::vector<dims> resize(const shape_inputs& in, const op_attrs& a) {
    const dims& x = in.shapes.at(0);
    auto given = [&](std::size_t slot) { return in.shapes.size() > slot && in.shapes[slot] != dims{0}; };
    if (given(3)) {
        const dims sizes = *param(in, a, 3, "sizes");
        if (sizes.size() != x.size()) fail(a, "sizes has " + std::to_string(sizes.size()) + " values for input " + to_string(x));
        for (auto v : sizes)
            if (v < 0) fail(a, "sizes " + to_string(sizes) + " has a negative value");
        if (given(2)) fail(a, "both scales and sizes are given");
        return {sizes};
    }
    if (!given(2)) fail(a, "neither scales (input 2) nor sizes (input 3) is given");
    const std::vector<double> scales = real_param(in, a, 2, "scales");
    if (scales.size() != x.size()) fail(a, "scales has " + std::to_string(scales.size()) + " values for input " + to_string(x));
    dims out;
    for (std::size_t i = 0; i < x.size(); ++i) {
        if (!(scales[i] > 0 && scales[i] < 1e6)) fail(a, "a scale of " + std::to_string(scales[i]));
        const double d = std::floor(static_cast<double>(x[i]) * scales[i]);
        if (!(d < 4.0e18)) fail(a, "a scale of " + std::to_string(scales[i]) + " makes a dim too large");
        out.push_back(static_cast<std::int64_t>(d));
    }
    return {out};
}

inline std::vector<dims> gather(const shape_inputs& in, const op_attrs& a) {
    const dims& x = in.shapes.at(0);
    const std::size_t ax = axis(a, a.i("axis"), x.size());
    dims out(x.begin(), x.begin() + static_cast<std::ptrdiff_t>(ax));
    out.insert(out.end(), in.shapes.at(1).begin(), in.shapes[1].end());
    out.insert(out.end(), x.begin() + static_cast<std::ptrdiff_t>(ax) + 1, x.end());
    return {out};
}

inline std::vector<dims> expand(const shape_inputs& in, const op_attrs& a) {
    const auto shape = param(in, a, 1, "shape");
    for (auto d : *shape)
        if (d < 0) fail(a, "a negative dim in the shape " + to_string(*shape));
    return {broadcast(a, in.shapes.at(0), *shape)};
}

inline std::vector<dims> dropout(const shape_inputs& in, const op_attrs&) { return {in.shapes.at(0), in.shapes.at(0)}; }

/// Shape: the input's dims from `start` to `end` (negative: from the back; clamped).
inline std::pair<std::size_t, std::size_t> shape_range(const op_attrs& a, std::size_t rank) {
    const auto r = static_cast<std::int64_t>(rank);
    auto at = [r](std::int64_t v) { return v < 0 ? std::max<std::int64_t>(v + r, 0) : std::min(v, r); };
    const std::int64_t b = at(a.i("start")), e = a.has("end") ? at(a.i("end")) : r;
    return {static_cast<std::size_t>(b), static_cast<std::size_t>(std::max(b, e))};
}
inline std::vector<dims> shape(const shape_inputs& in, const op_attrs& a) {
    const auto [b, e] = shape_range(a, in.shapes.at(0).size());
    return {dims{static_cast<std::int64_t>(e - b)}};
}
inline std::vector<dims> size(const shape_inputs&, const op_attrs&) { return {dims{}}; }

inline std::vector<dims> constant_of_shape(const shape_inputs& in, const op_attrs& a) {
    const auto shape = param(in, a, 0, "input");
    for (auto d : *shape)
        if (d < 0) fail(a, "a negative dim in " + to_string(*shape));
    if (a.has("value") && a.reals("value").size() != 1) fail(a, "value has " + std::to_string(a.reals("value").size()) + " elements, not 1");
    return {*shape};
}

/// Split: the sizes from input 1 (opset >= 13) or the attribute; equal pieces, one per output,
/// without them.
inline dims split_sizes(const op_attrs& a, const dims& x, const std::optional<dims>& given) {
    const std::size_t ax = axis(a, a.i("axis"), x.size());
    if (given && !given->empty()) {
        std::int64_t total = 0;
        for (auto v : *given) {
            if (v < 0) fail(a, "a negative split size in " + to_string(*given));
            total += v;
        }
        if (total != x[ax]) fail(a, "split " + to_string(*given) + " does not add up to " + std::to_string(x[ax]) + " along axis " + std::to_string(ax));
        if (given->size() != a.outputs()) fail(a, std::to_string(given->size()) + " split sizes for " + std::to_string(a.outputs()) + " outputs");
        return *given;
    }
    const auto n = static_cast<std::int64_t>(a.outputs());
    if (n == 0 || x[ax] % n != 0) fail(a, "axis " + std::to_string(ax) + " of " + to_string(x) + " does not split into " + std::to_string(n) + " equal pieces");
    return dims(a.outputs(), x[ax] / n);
}
inline std::vector<dims> split(const shape_inputs& in, const op_attrs& a) {
    const dims& x = in.shapes.at(0);
    std::optional<dims> given;
    if (in.shapes.size() > 1) given = param(in, a, 1, "split");
    else if (a.has("split")) given = a.ints("split");
    const dims sizes = split_sizes(a, x, given);
    const std::size_t ax = axis(a, a.i("axis"), x.size());
    std::vector<dims> out;
    for (auto v : sizes) {
        out.push_back(x);
        out.back()[ax] = v;
    }
    return out;
}

}  // namespace rules

namespace schemas {

inline constexpr input_spec concat_inputs[] = {{"inputs", input_spec::presence::variadic}};
inline constexpr attr_spec concat_attrs[] = {{"axis", attr_type::integer, def::required(), support::any()}};
inline constexpr input_spec reshape_inputs[] = {{"data"}, {"shape", input_spec::presence::optional, true}};
inline constexpr attr_spec reshape_attrs[] = {
    {"allowzero", attr_type::integer, def::value(0), support::range(0, 1)},
    {"shape", attr_type::integers, def::absent(), support::any()},  // opset < 5
    {"consumed_inputs", attr_type::integers, def::absent(), support::any()},
};
inline constexpr input_spec data_only[] = {{"input"}};
inline constexpr attr_spec flatten_attrs[] = {{"axis", attr_type::integer, def::value(1), support::any()}};
inline constexpr attr_spec transpose_attrs[] = {{"perm", attr_type::integers, def::absent(), support::at_least(0)}};
inline constexpr input_spec pad_inputs[] = {{"data"}, {"pads", input_spec::presence::optional, true},
                                            {"constant_value", input_spec::presence::optional, true}};
inline constexpr attr_spec pad_attrs[] = {
    {"mode", attr_type::string, def::text("constant"), support::one_of("constant|reflect|edge")},
    {"pads", attr_type::integers, def::absent(), support::any()},  // opset < 11
    {"value", attr_type::real, def::value(0.0), support::any()},   // opset < 11
    {"paddings", attr_type::integers, def::absent(), support::none("opset 1's name for pads (the ONNX front end renames it)")},
};
inline constexpr input_spec no_inputs[1] = {};
inline constexpr attr_spec constant_attrs[] = {
    {"value", attr_type::reals, def::absent(), support::any()},
    {"shape", attr_type::integers, def::absent(), support::at_least(0)},
    {"value_float", attr_type::real, def::absent(), support::any()},
    {"value_floats", attr_type::reals, def::absent(), support::any()},
    {"value_int", attr_type::integer, def::absent(), support::any()},
    {"value_ints", attr_type::integers, def::absent(), support::any()},
    {"value_string", attr_type::string, def::absent(), support::none("string tensors")},
    {"value_strings", attr_type::string, def::absent(), support::none("string tensors")},
    {"sparse_value", attr_type::reals, def::absent(), support::none("sparse tensors")},
};

inline constexpr input_spec axes_inputs[] = {{"data"}, {"axes", input_spec::presence::optional, true}};
inline constexpr attr_spec axes_attrs[] = {{"axes", attr_type::integers, def::absent(), support::any()}};
inline constexpr input_spec slice_inputs[] = {{"data"},
                                              {"starts", input_spec::presence::optional, true},
                                              {"ends", input_spec::presence::optional, true},
                                              {"axes", input_spec::presence::optional, true},
                                              {"steps", input_spec::presence::optional, true}};
inline constexpr attr_spec slice_attrs[] = {{"starts", attr_type::integers, def::absent(), support::any()},
                                            {"ends", attr_type::integers, def::absent(), support::any()},
                                            {"axes", attr_type::integers, def::absent(), support::any()}};
inline constexpr input_spec resize_inputs[] = {{"X"},
                                               {"roi", input_spec::presence::optional, true},
                                               {"scales", input_spec::presence::optional, true},
                                               {"sizes", input_spec::presence::optional, true}};
inline constexpr attr_spec resize_attrs[] = {
    {"coordinate_transformation_mode", attr_type::string, def::text("half_pixel"),
     support::one_of("half_pixel|pytorch_half_pixel|align_corners|asymmetric|tf_half_pixel_for_nn|tf_crop_and_resize")},
    {"cubic_coeff_a", attr_type::real, def::value(-0.75), support::any()},
    {"exclude_outside", attr_type::integer, def::value(0), support::range(0, 1)},
    {"extrapolation_value", attr_type::real, def::value(0.0), support::any()},
    {"mode", attr_type::string, def::text("nearest"), support::one_of("nearest|linear|cubic")},
    {"nearest_mode", attr_type::string, def::text("round_prefer_floor"), support::one_of("round_prefer_floor|round_prefer_ceil|floor|ceil")},
};
inline constexpr input_spec gather_inputs[] = {{"data"}, {"indices", input_spec::presence::required, true}};
inline constexpr attr_spec gather_attrs[] = {{"axis", attr_type::integer, def::value(0), support::any()}};
inline constexpr input_spec expand_inputs[] = {{"input"}, {"shape", input_spec::presence::required, true}};
inline constexpr input_spec dropout_inputs[] = {{"data"},
                                                {"ratio", input_spec::presence::optional},
                                                {"training_mode", input_spec::presence::optional}};
inline constexpr attr_spec dropout_attrs[] = {{"ratio", attr_type::real, def::value(0.5), support::any()},
                                              {"seed", attr_type::integer, def::absent(), support::any()},
                                              {"is_test", attr_type::integer, def::value(1), support::only(1, "training")},
                                              {"consumed_inputs", attr_type::integers, def::absent(), support::any()}};
/// Cast: `to` is an ONNX element type code; the ones sgmatch has no type for (strings, complex)
/// are refused by the type rule.
inline constexpr attr_spec cast_attrs[] = {{"to", attr_type::integer, def::required(), support::range(1, 16)},
                                           {"saturate", attr_type::integer, def::value(1), support::any()}};

inline constexpr op_schema concat = typed(describe<Concat>(concat_inputs, concat_attrs), types::all);
inline constexpr op_schema unsqueeze = typed(describe<Unsqueeze>(axes_inputs, axes_attrs), types::all);
inline constexpr op_schema squeeze = typed(describe<Squeeze>(axes_inputs, axes_attrs), types::all);
inline constexpr op_schema slice = typed(describe<Slice>(slice_inputs, slice_attrs), types::all);
/// Resize (opset >= 11 inputs X, roi, scales, sizes; the ONNX front end writes Upsample and
/// opset-10 Resize in these terms).
inline constexpr op_schema resize = describe<Resize>(resize_inputs, resize_attrs);
inline constexpr op_schema gather = typed(describe<Gather>(gather_inputs, gather_attrs), types::all);
inline constexpr op_schema expand = typed(describe<Expand>(expand_inputs), types::all);
/// Dropout in inference: the data, and (output 1) a mask of all true.
inline constexpr op_schema dropout = typed(describe<Dropout>(dropout_inputs, dropout_attrs, type_rule{type_rule::from::input, 0, dtype::unknown, {}, dtype::boolean}, 2), types::all);
inline constexpr op_schema cast = typed(describe<Cast>(data_only, cast_attrs,
                                                       type_rule{type_rule::from::attribute, 0, dtype::unknown, "to"}),
                                        types::all | types::more_integers);
/// CastLike: input 0 converted to the element type of input 1 (whose values are not read): any
/// type sgmatch has.
inline constexpr input_spec cast_like_inputs[] = {{"input"}, {"target_type"}};
inline constexpr op_schema cast_like = typed(describe<CastLike>(cast_like_inputs,
                                                                type_rule{type_rule::from::input, 1, dtype::unknown, {}}),
                                             types::all | types::more_integers);
inline constexpr attr_spec shape_attrs[] = {{"start", attr_type::integer, def::value(0), support::any()},
                                            {"end", attr_type::integer, def::absent(), support::any()}};
inline constexpr type_rule to_int64{type_rule::from::fixed, 0, dtype::i64, {}};
inline constexpr op_schema shape = typed(describe<Shape>(data_only, shape_attrs, to_int64), types::all);
inline constexpr op_schema size = typed(describe<Size>(data_only, to_int64), types::all);
/// ConstantOfShape: `value` is one number and `dtype` its ONNX element type code (the ONNX front
/// end writes the tensor attribute so).
inline constexpr input_spec constant_of_shape_inputs[] = {{"input", input_spec::presence::required, true}};
inline constexpr attr_spec constant_of_shape_attrs[] = {{"value", attr_type::reals, def::absent(), support::any()},
                                                        {"dtype", attr_type::integer, def::value(1), support::any()}};
inline constexpr op_schema constant_of_shape =
    typed(describe<ConstantOfShape>(constant_of_shape_inputs, constant_of_shape_attrs,
                                    type_rule{type_rule::from::attribute, 0, dtype::unknown, "dtype"}),
          types::bit(dtype::i64));
inline constexpr input_spec where_inputs[] = {{"condition"}, {"X"}, {"Y"}};
inline constexpr op_schema where = typed(describe<Where>(where_inputs, type_rule{type_rule::from::input, 1, dtype::unknown, {}}),
                                         types::all);
inline constexpr input_spec split_inputs[] = {{"input"}, {"split", input_spec::presence::optional, true}};
inline constexpr attr_spec split_attrs[] = {{"axis", attr_type::integer, def::value(0), support::any()},
                                            {"split", attr_type::integers, def::absent(), support::at_least(0)}};
inline constexpr op_schema split = typed(describe<Split>(split_inputs, split_attrs, {}, static_cast<std::size_t>(-1)),
                                         types::all);
inline constexpr op_schema reshape = typed(describe<Reshape>(reshape_inputs, reshape_attrs), types::all);
inline constexpr op_schema flatten = typed(describe<Flatten>(data_only, flatten_attrs), types::all);
inline constexpr op_schema transpose = typed(describe<Transpose>(data_only, transpose_attrs), types::all);
inline constexpr op_schema pad = typed(describe<Pad>(pad_inputs, pad_attrs), types::all);
inline constexpr op_schema constant = op_schema{Constant::names, std::size(Constant::names), no_inputs, 0, constant_attrs,
                                                std::size(constant_attrs), 1,
                                                type_rule{type_rule::from::attribute, 0, dtype::unknown}};

}  // namespace schemas

// The ops layer's facets of each op's entry (its vocabulary tag): the description and the shape rule.
template <> inline constexpr const op_schema* description<Constant> = &schemas::constant;
template <> inline constexpr shape_rule shape_rule_for<Constant> = rules::constant;
template <> inline constexpr const op_schema* description<Concat> = &schemas::concat;
template <> inline constexpr shape_rule shape_rule_for<Concat> = rules::concat;
template <> inline constexpr const op_schema* description<Unsqueeze> = &schemas::unsqueeze;
template <> inline constexpr shape_rule shape_rule_for<Unsqueeze> = rules::unsqueeze;
template <> inline constexpr const op_schema* description<Squeeze> = &schemas::squeeze;
template <> inline constexpr shape_rule shape_rule_for<Squeeze> = rules::squeeze;
template <> inline constexpr const op_schema* description<Slice> = &schemas::slice;
template <> inline constexpr shape_rule shape_rule_for<Slice> = rules::slice;
template <> inline constexpr const op_schema* description<Resize> = &schemas::resize;
template <> inline constexpr shape_rule shape_rule_for<Resize> = rules::resize;
template <> inline constexpr const op_schema* description<Gather> = &schemas::gather;
template <> inline constexpr shape_rule shape_rule_for<Gather> = rules::gather;
template <> inline constexpr const op_schema* description<Expand> = &schemas::expand;
template <> inline constexpr shape_rule shape_rule_for<Expand> = rules::expand;
template <> inline constexpr const op_schema* description<Dropout> = &schemas::dropout;
template <> inline constexpr shape_rule shape_rule_for<Dropout> = rules::dropout;
template <> inline constexpr const op_schema* description<Cast> = &schemas::cast;
template <> inline constexpr shape_rule shape_rule_for<Cast> = rules::same_as_input0;
template <> inline constexpr const op_schema* description<CastLike> = &schemas::cast_like;
template <> inline constexpr shape_rule shape_rule_for<CastLike> = rules::same_as_input0;
template <> inline constexpr const op_schema* description<Shape> = &schemas::shape;
template <> inline constexpr shape_rule shape_rule_for<Shape> = rules::shape;
template <> inline constexpr const op_schema* description<Size> = &schemas::size;
template <> inline constexpr shape_rule shape_rule_for<Size> = rules::size;
template <> inline constexpr const op_schema* description<ConstantOfShape> = &schemas::constant_of_shape;
template <> inline constexpr shape_rule shape_rule_for<ConstantOfShape> = rules::constant_of_shape;
template <> inline constexpr const op_schema* description<Where> = &schemas::where;
template <> inline constexpr shape_rule shape_rule_for<Where> = rules::broadcast_all;
template <> inline constexpr const op_schema* description<Split> = &schemas::split;
template <> inline constexpr shape_rule shape_rule_for<Split> = rules::split;
template <> inline constexpr const op_schema* description<Reshape> = &schemas::reshape;
template <> inline constexpr shape_rule shape_rule_for<Reshape> = rules::reshape;
template <> inline constexpr const op_schema* description<Flatten> = &schemas::flatten;
template <> inline constexpr shape_rule shape_rule_for<Flatten> = rules::flatten;
template <> inline constexpr const op_schema* description<Transpose> = &schemas::transpose;
template <> inline constexpr shape_rule shape_rule_for<Transpose> = rules::transpose;
template <> inline constexpr const op_schema* description<Pad> = &schemas::pad;
template <> inline constexpr shape_rule shape_rule_for<Pad> = rules::pad;

}  // namespace ops
SGMATCH_END_NAMESPACE
