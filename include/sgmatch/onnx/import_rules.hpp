// sgmatch/onnx/import_rules.hpp - what some ONNX ops need, while a node is loaded, besides their
// op description: one rule per op, in one table (import_rule_of), in place of per-op branches in
// the loader.
//
//   Clip            an absent min or max before a given one: the lowest or highest value of the
//                   data's element type
//   Resize          an absent roi or scales before a given sizes: an empty tensor; before opset
//                   11 (inputs X, scales), written as opset 11's Resize (opset.hpp)
//   Upsample        written as Resize (opset.hpp), its absent inputs as Resize's
//   RNN, GRU, LSTM  an absent optional input before a given one: an empty tensor (what the
//                   kernels read as absent); `activations`: the defaults need no attribute, any
//                   others are unsupported
//   STFT            an absent window before a given frame_length: an empty tensor
//   PRelu           before opset 7, a slope of one value per channel laid along axis 1
//   ConstantOfShape `value` (a one-element tensor): the description's value and dtype
//
// The opset-dependent meanings that any op may need (Softmax's axis before 13, auto_pad, opset
// < 7 broadcasting) stay with the loader and opset.hpp.
#pragma once

#include <cfloat>
#include <cstdint>
#include <cstring>
#include <functional>
#include <limits>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include <onnx/onnx_pb.h>

#include "sgmatch/detail/config.hpp"
#include "sgmatch/graph/graph.hpp"
#include "sgmatch/onnx/model.hpp"
#include "sgmatch/onnx/opset.hpp"
#include "sgmatch/onnx/tensor.hpp"

SGMATCH_BEGIN_NAMESPACE
namespace onnx {
namespace detail {

using attr_list = std::vector<std::pair<std::string, attribute>>;

/// What a rule reads of the node being loaded and of the loader.
struct import_context {
    graph& g;
    const ::onnx::NodeProto& n;
    std::int64_t opset;
    load_report& report;
    std::function<std::optional<std::size_t>(const std::string&)> rank_of;  // a value's rank, where known
    std::function<dtype(const std::string&)> element_type;                 // a value's type (f32 where unknown)
    std::function<tensor(const ::onnx::TensorProto&)> decode;              // a tensor attribute's data
};

/// One op's rule; every hook is optional.
struct import_rule {
    std::string_view op;          // the ONNX op type
    std::string_view written_as;  // the op the node becomes ("": its own)
    /// The value standing for absent input k before a given one; nullopt: the node is unsupported.
    std::optional<input_ref> (*absent_input)(const import_context&, int k) = nullptr;
    /// The inputs, rewritten.
    void (*inputs)(const import_context&, std::vector<input_ref>&) = nullptr;
    /// An attribute the description does not take as it is: true when handled here (written to
    /// attrs, or reported unsupported).
    bool (*attribute)(const import_context&, const ::onnx::AttributeProto&, attr_list&) = nullptr;
    /// The node rewritten after its inputs and attributes; false: unsupported (reported).
    bool (*rewrite)(const import_context&, std::vector<input_ref>&, attr_list&) = nullptr;
};

namespace rules {

// Clip: the lowest or the highest value of the data's element type (f32's where the model does
// not declare it) for an absent bound.
inline std::optional<input_ref> clip_bound(const import_context& c, int k) {
    if (k != 1 && k != 2) return std::nullopt;
    const bool low = k == 1;
    const dtype t = c.element_type(c.n.input(0));
    std::vector<unsigned char> b;
    auto put = [&](auto lo, auto hi) {
        const auto v = low ? lo : hi;
        b.resize(sizeof v);
        std::memcpy(b.data(), &v, sizeof v);
    };
    switch (t) {
        case dtype::f64: put(std::numeric_limits<double>::lowest(), std::numeric_limits<double>::max()); break;
        case dtype::i64: put(std::numeric_limits<std::int64_t>::min(), std::numeric_limits<std::int64_t>::max()); break;
        case dtype::i32: put(std::numeric_limits<std::int32_t>::min(), std::numeric_limits<std::int32_t>::max()); break;
        case dtype::i8: put(std::numeric_limits<std::int8_t>::min(), std::numeric_limits<std::int8_t>::max()); break;
        case dtype::u8: put(std::numeric_limits<std::uint8_t>::min(), std::numeric_limits<std::uint8_t>::max()); break;
        default: put(-FLT_MAX, FLT_MAX); break;
    }
    const bool typed = t == dtype::f64 || t == dtype::i64 || t == dtype::i32 || t == dtype::i8 || t == dtype::u8;
    return input_ref(c.g.add_constant(name_of(c.n) + (low ? ":min" : ":max"), {}, typed ? t : dtype::f32, std::move(b)));
}

// An empty f32 tensor for an absent input: what the kernels read as absent.
inline input_ref empty_input(const import_context& c, const std::string& what) {
    return input_ref(c.g.add_constant(name_of(c.n) + ":" + what, {0}, dtype::f32, {}));
}
inline std::optional<input_ref> resize_roi_or_scales(const import_context& c, int k) {
    if (k != 1 && k != 2) return std::nullopt;
    return empty_input(c, k == 1 ? "roi" : "scales");
}
inline std::optional<input_ref> recurrent_optional(const import_context& c, int k) {
    if (k < 3) return std::nullopt;
    return empty_input(c, "absent" + std::to_string(k));
}
inline std::optional<input_ref> stft_window(const import_context& c, int k) {
    if (k != 2) return std::nullopt;
    return empty_input(c, "absent" + std::to_string(k));
}

// Resize before opset 11 and Upsample: opset 11's Resize.
inline bool resize_before_11(const import_context& c, std::vector<input_ref>& ins, attr_list& attrs) {
    if (c.n.op_type() != "Upsample" && c.opset >= 11) return true;
    return write_upsample(c.g, c.n, c.opset, ins, attrs, c.report);
}

// RNN, GRU, LSTM: `activations` as the defaults, one list per direction (Tanh; Sigmoid, Tanh;
// Sigmoid, Tanh, Tanh), need no attribute; others are not implemented.
inline bool recurrent_activations(const import_context& c, const ::onnx::AttributeProto& a, attr_list&) {
    if (a.name() != "activations") return false;
    const std::vector<std::string> one = c.n.op_type() == "RNN"   ? std::vector<std::string>{"Tanh"}
                                         : c.n.op_type() == "GRU" ? std::vector<std::string>{"Sigmoid", "Tanh"}
                                                                  : std::vector<std::string>{"Sigmoid", "Tanh", "Tanh"};
    bool defaults = a.strings_size() != 0 && a.strings_size() % static_cast<int>(one.size()) == 0;
    for (int i = 0; defaults && i < a.strings_size(); ++i) defaults = a.strings(i) == one[static_cast<std::size_t>(i) % one.size()];
    if (!defaults) {
        std::string names;
        for (const auto& f : a.strings()) names += (names.empty() ? "" : ", ") + f;
        unsupported(c.report, c.n, "activations [" + names + "]: only the defaults are implemented");
    }
    return true;
}

// PRelu before opset 7: a slope of one value per channel lies along axis 1.
inline void prelu_slope_per_channel(const import_context& c, std::vector<input_ref>& ins) {
    if (c.opset >= 7 || ins.size() != 2) return;
    const std::size_t x_rank = c.rank_of(c.n.input(0)).value_or(0);
    const auto slope = c.g.constant(ins[1].v.node);
    if (!slope || slope->rank != 1 || x_rank <= 2 || slope->dims[0] <= 1) return;
    std::vector<std::int64_t> dims(1, slope->dims[0]);
    dims.resize(x_rank - 1, 1);
    const auto* b = static_cast<const unsigned char*>(slope->data);
    std::vector<unsigned char> bytes;
    if (b) bytes.assign(b, b + static_cast<std::size_t>(slope->element_count()) * size_of(slope->type));
    ins[1] = input_ref(c.g.add_constant(c.n.input(1) + ":per_channel", dims, slope->type, std::move(bytes)));
    c.report.notes.push_back(node_label(c.n) + ": opset " + std::to_string(c.opset) + " PRelu slope laid along axis 1");
}

// ConstantOfShape's `value`: one number and its element type (the description's two attributes).
inline bool constant_of_shape_value(const import_context& c, const ::onnx::AttributeProto& a, attr_list& attrs) {
    if (a.name() != "value" || !a.has_t()) return false;
    const tensor t = c.decode(a.t());
    const auto v = t.to_floats();
    if (v.size() != 1) {
        unsupported(c.report, c.n, "value has " + std::to_string(v.size()) + " elements, not 1");
        return true;
    }
    attrs.emplace_back("value", attribute(attribute::reals{t.view().at(0)}));
    attrs.emplace_back("dtype", attribute(static_cast<std::int64_t>(a.t().data_type())));
    return true;
}

}  // namespace rules

/// The rule of ONNX op type `op`, or null: the op loads as its description says.
inline const import_rule* import_rule_of(std::string_view op) {
    static const import_rule table[] = {
        {"Clip", {}, rules::clip_bound},
        {"Resize", {}, rules::resize_roi_or_scales, nullptr, nullptr, rules::resize_before_11},
        {"Upsample", "Resize", rules::resize_roi_or_scales, nullptr, nullptr, rules::resize_before_11},
        {"RNN", {}, rules::recurrent_optional, nullptr, rules::recurrent_activations},
        {"GRU", {}, rules::recurrent_optional, nullptr, rules::recurrent_activations},
        {"LSTM", {}, rules::recurrent_optional, nullptr, rules::recurrent_activations},
        {"STFT", {}, rules::stft_window},
        {"PRelu", {}, nullptr, rules::prelu_slope_per_channel},
        {"ConstantOfShape", {}, nullptr, nullptr, rules::constant_of_shape_value},
    };
    for (const import_rule& r : table)
        if (r.op == op) return &r;
    return nullptr;
}

}  // namespace detail
}  // namespace onnx
SGMATCH_END_NAMESPACE
