// sgmatch/ops/vision.hpp - descriptions of the detection ops: NonMaxSuppression (whose output
// size depends on the data: no shape rule) and RoiAlign.
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

}  // namespace schemas
}  // namespace ops
SGMATCH_END_NAMESPACE
