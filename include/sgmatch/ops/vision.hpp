// sgmatch/ops/vision.hpp - descriptions of the detection and sampling ops: NonMaxSuppression
// (whose output size depends on the data: no shape rule), RoiAlign, GridSample and MaxUnpool.
#pragma once

#include <vector>

#include "sgmatch/detail/config.hpp"
#include "sgmatch/ops/schema.hpp"
#include "sgmatch/ops/shape_rules.hpp"
#include "sgmatch/pattern/vocabulary.hpp"

SGMATCH_BEGIN_NAMESPACE
namespace ops {
namespace rules {

/// RoiAlign: [rois, C, output_height, output_width] from X [N, C, H, W], rois [rois, 4] and
/// batch_indices [rois].
inline std::vector<dims> roi_align(const shape_inputs& in, const op_attrs& a) {
    const dims& x = in.shapes.at(0);
    const dims& r = in.shapes.at(1);
    const dims& b = in.shapes.at(2);
    if (x.size() != 4) fail(a, "X is " + to_string(x) + ", not [N, C, H, W]");
    if (r.size() != 2 || r[1] != 4) fail(a, "rois is " + to_string(r) + ", not [rois, 4]");
    if (b.size() != 1 || b[0] != r[0]) fail(a, "batch_indices is " + to_string(b) + " for rois " + to_string(r));
    return {dims{r[0], x[1], a.i("output_height"), a.i("output_width")}};
}

/// GridSample: [N, C, H_out, W_out] from X [N, C, H, W] and grid [N, H_out, W_out, 2].
inline std::vector<dims> grid_sample(const shape_inputs& in, const op_attrs& a) {
    const dims& x = in.shapes.at(0);
    const dims& g = in.shapes.at(1);
    if (x.size() != 4) fail(a, "X is " + to_string(x) + ", not [N, C, H, W] (two spatial axes taken)");
    if (g.size() != 4 || g[0] != x[0] || g[3] != 2) fail(a, "grid is " + to_string(g) + " for X " + to_string(x) + ", not [N, H_out, W_out, 2]");
    return {dims{x[0], x[1], g[1], g[2]}};
}

/// MaxUnpool's unpooled shape: each spatial axis (in - 1) stride + kernel - pads.
inline dims max_unpooled(const dims& x, const op_attrs& a) {
    if (x.size() < 3) fail(a, "X is " + to_string(x) + ", not [N, C, spatial...]");
    const std::size_t sp = x.size() - 2;
    const dims k = a.ints("kernel_shape"), s = a.ints("strides"), p = a.ints("pads");
    if (k.size() != sp || (!s.empty() && s.size() != sp) || (!p.empty() && p.size() != 2 * sp))
        fail(a, "kernel_shape, strides and pads do not fit " + std::to_string(sp) + " spatial axes");
    dims out{x[0], x[1]};
    for (std::size_t i = 0; i < sp; ++i) {
        const std::int64_t st = s.empty() ? 1 : s[i], pb = p.empty() ? 0 : p[i], pe = p.empty() ? 0 : p[i + sp];
        const std::int64_t d = (x[i + 2] - 1) * st + k[i] - pb - pe;
        if (st < 1 || k[i] < 1 || d < 0) fail(a, "kernel_shape, strides and pads give a negative or empty axis");
        out.push_back(d);
    }
    return out;
}

/// MaxUnpool: the unpooled shape, padded at the end of each axis to output_shape when given.
inline std::vector<dims> max_unpool(const shape_inputs& in, const op_attrs& a) {
    const dims& x = in.shapes.at(0);
    if (in.shapes.at(1) != x) fail(a, "I is " + to_string(in.shapes.at(1)) + " for X " + to_string(x));
    const dims d = max_unpooled(x, a);
    if (in.shapes.size() <= 2) return {d};
    const auto s = param(in, a, 2, "output_shape");
    bool fits = s && s->size() == d.size();
    for (std::size_t i = 0; fits && i < d.size(); ++i) fits = i < 2 ? (*s)[i] == d[i] : (*s)[i] >= d[i];
    if (!fits)
        fail(a, "output_shape " + (s ? to_string(*s) : std::string("(unknown)")) + " is not the unpooled shape " + to_string(d) +
                    " or larger along the spatial axes");
    return {*s};
}

}  // namespace rules

namespace schemas {

/// NonMaxSuppression: for each batch and class, the boxes scoring above score_threshold, taken
/// greedily by score (ties: the lower index first) unless one taken overlaps it by an IoU above
/// iou_threshold, at most max_output_boxes_per_class of them (0 or absent: none); int64 rows of
/// [batch, class, box], by batch, then class, then the order taken. Boxes are [y1, x1, y2, x2]
/// (any two opposite corners; center_point_box 0) or [x_center, y_center, width, height] (1).
inline constexpr input_spec nms_inputs[] = {{"boxes"},
                                            {"scores"},
                                            {"max_output_boxes_per_class", input_spec::presence::optional, true},
                                            {"iou_threshold", input_spec::presence::optional, true},
                                            {"score_threshold", input_spec::presence::optional, true}};
inline constexpr attr_spec nms_attrs[] = {{"center_point_box", attr_type::integer, def::value(0), support::range(0, 1)}};
inline constexpr op_schema non_max_suppression =
    typed(describe<NonMaxSuppression>(nms_inputs, nms_attrs, type_rule{type_rule::from::fixed, 0, dtype::i64, {}}), types::f32);
/// RoiAlign: each region of interest (x1, y1, x2, y2, scaled by spatial_scale, shifted by half a
/// pixel in half_pixel mode) of its batch's image cut into output_height x output_width bins,
/// each the mean of sampling_ratio^2 bilinear samples (0: ceil(bin size) per axis). Mode max is
/// refused: ONNX Runtime's and ONNX's reference definitions of it differ.
inline constexpr input_spec roi_align_inputs[] = {{"X"}, {"rois"}, {"batch_indices"}};
inline constexpr attr_spec roi_align_attrs[] = {
    {"coordinate_transformation_mode", attr_type::string, def::text("half_pixel"), support::one_of("half_pixel|output_half_pixel")},
    {"mode", attr_type::string, def::text("avg"), support::one_of("avg", "mode max is defined differently by ONNX Runtime and ONNX's reference")},
    {"output_height", attr_type::integer, def::value(1), support::range(1, 1 << 20)},
    {"output_width", attr_type::integer, def::value(1), support::range(1, 1 << 20)},
    {"sampling_ratio", attr_type::integer, def::value(0), support::range(0, 1 << 16)},
    {"spatial_scale", attr_type::real, def::value(1.0), support::any()}};
inline constexpr op_schema roi_align =
    typed(describe<RoiAlign>(roi_align_inputs, roi_align_attrs), types::f32 | types::bit(dtype::f64));
/// GridSample: X sampled at the grid's (x, y) points, -1 and 1 the image's edges (align_corners
/// 0: the outer corners of the edge pixels; 1: their centers), bilinearly, at the nearest pixel
/// (ties to even) or bicubically (A = -0.75); points outside read zeros, the border, or the image
/// reflected at its edges.
inline constexpr input_spec grid_sample_inputs[] = {{"X"}, {"grid"}};
inline constexpr attr_spec grid_sample_attrs[] = {
    {"align_corners", attr_type::integer, def::value(0), support::range(0, 1)},
    {"mode", attr_type::string, def::text("bilinear"), support::one_of("bilinear|nearest|bicubic")},
    {"padding_mode", attr_type::string, def::text("zeros"), support::one_of("zeros|border|reflection")}};
inline constexpr op_schema grid_sample =
    typed(describe<GridSample>(grid_sample_inputs, grid_sample_attrs), types::f32 | types::bit(dtype::f64));
/// MaxUnpool: zeros of the unpooled shape ((in - 1) stride + kernel - pads per spatial axis) with
/// each X value written at its index in I (MaxPool's Indices: flat over that whole shape, the N
/// and C axes included; an index out of range is refused), padded with zeros at the end of each
/// axis to output_shape when given.
inline constexpr input_spec max_unpool_inputs[] = {{"X"}, {"I"}, {"output_shape", input_spec::presence::optional, true}};
inline constexpr attr_spec max_unpool_attrs[] = {{"kernel_shape", attr_type::integers, def::required(), support::at_least(1)},
                                                 {"pads", attr_type::integers, def::absent(), support::at_least(0)},
                                                 {"strides", attr_type::integers, def::absent(), support::at_least(1)}};
inline constexpr op_schema max_unpool = typed(describe<MaxUnpool>(max_unpool_inputs, max_unpool_attrs), types::all);

}  // namespace schemas

// The ops layer's facets of each op's entry (its vocabulary tag): the description and the shape rule.
template <> inline constexpr const op_schema* description<NonMaxSuppression> = &schemas::non_max_suppression;
template <> inline constexpr shape_rule shape_rule_for<NonMaxSuppression> = rules::known_when_run;
template <> inline constexpr const op_schema* description<RoiAlign> = &schemas::roi_align;
template <> inline constexpr shape_rule shape_rule_for<RoiAlign> = rules::roi_align;
template <> inline constexpr const op_schema* description<GridSample> = &schemas::grid_sample;
template <> inline constexpr shape_rule shape_rule_for<GridSample> = rules::grid_sample;
template <> inline constexpr const op_schema* description<MaxUnpool> = &schemas::max_unpool;
template <> inline constexpr shape_rule shape_rule_for<MaxUnpool> = rules::max_unpool;

}  // namespace ops
SGMATCH_END_NAMESPACE
