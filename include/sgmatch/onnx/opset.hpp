// sgmatch/onnx/opset.hpp - opset-dependent meanings written out in the terms of sgmatch's op
// descriptions, while a node is loaded: Softmax-family axes before opset 13, Concat's axis
// before opset 4, Pad's opset-1 "paddings", Upsample and early Resize as Resize, and implicit
// padding (auto_pad, ConvTranspose's output_shape) as explicit pads. What cannot be written out
// is reported unsupported, naming the node.
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include <onnx/onnx_pb.h>

#include "sgmatch/detail/config.hpp"
#include "sgmatch/graph/graph.hpp"
#include "sgmatch/onnx/model.hpp"
#include "sgmatch/ops/schema.hpp"

SGMATCH_BEGIN_NAMESPACE
namespace onnx {
namespace detail {

// The first output that is given (optional outputs before it may be empty), or "".
inline std::string first_output(const ::onnx::NodeProto& n) {
    for (const auto& o : n.output())
        if (!o.empty()) return o;
    return {};
}
// A node's name in the graph and in messages: its own, else its first output's.
inline std::string name_of(const ::onnx::NodeProto& n) { return n.name().empty() ? first_output(n) : n.name(); }
inline std::string node_label(const ::onnx::NodeProto& n) { return "node '" + name_of(n) + "' (" + n.op_type() + ")"; }

inline void unsupported(load_report& report, const ::onnx::NodeProto& n, const std::string& why) {
    report.unsupported.push_back(node_label(n) + ": " + why);
}

// Opset-dependent meanings written out explicitly.
inline void write_opset_meaning(const ::onnx::NodeProto& n, std::int64_t opset, std::optional<std::size_t> input_rank,
                                std::vector<std::pair<std::string, attribute>>& attrs, load_report& report) {
    auto has = [&](const char* k) {
        for (auto& a : attrs)
            if (a.first == k) return true;
        return false;
    };
    auto get_int = [&](const char* k, std::int64_t d) {
        for (auto& a : attrs)
            if (a.first == k && a.second.as_int()) return *a.second.as_int();
        return d;
    };
    if ((n.op_type() == "Softmax" || n.op_type() == "LogSoftmax" || n.op_type() == "Hardmax") && opset < 13) {
        // Before opset 13: the input flattened to 2-D at `axis` (default 1), softmax over the
        // second dim: the same as softmax over the last axis only when axis is the last one.
        const auto known = input_rank;
        if (!known) {
            unsupported(report, n, n.op_type() + " before opset 13 on an input of unknown rank");
            return;
        }
        const auto rank = static_cast<std::int64_t>(known.value_or(0));  // (value_or: g++ -O1 sees no check above)
        std::int64_t ax = get_int("axis", 1);
        if (ax < 0) ax += rank;
        if (ax != rank - 1) {
            unsupported(report, n, n.op_type() + " before opset 13 over axes " + std::to_string(ax) + ".." + std::to_string(rank - 1) +
                               " (flattened) is not supported");
            return;
        }
        attrs.erase(std::remove_if(attrs.begin(), attrs.end(), [](auto& a) { return a.first == "axis"; }), attrs.end());
        attrs.emplace_back("axis", attribute(ax));
        report.notes.push_back(node_label(n) + ": opset " + std::to_string(opset) + " " + n.op_type() + " written as axis " +
                                 std::to_string(ax));
    }
    if (n.op_type() == "RoiAlign" && opset < 16 && !has("coordinate_transformation_mode"))  // before: no half pixel
        attrs.emplace_back("coordinate_transformation_mode", attribute(std::string("output_half_pixel")));
    if (n.op_type() == "Concat" && opset < 4 && !has("axis")) attrs.emplace_back("axis", attribute(std::int64_t{1}));
    if (n.op_type() == "Pad" && opset < 2)  // opset 1 spelled pads "paddings"
        for (auto& a : attrs)
            if (a.first == "paddings") a.first = "pads";
    // Before opset 7, BatchNormalization runs in training mode unless is_test is set (default 0).
    if (n.op_type() == "BatchNormalization" && opset < 7 && get_int("is_test", 0) == 0)
        unsupported(report, n, "is_test 0 (opset " + std::to_string(opset) + "): training mode, inference only");
}

// Upsample, and Resize before opset 11 (inputs X, scales), written as Resize(X, roi, scales)
// with the asymmetric coordinate transformation and nearest rounding down: integer scales
// repeat each element, as those opsets define it.
inline bool write_upsample(graph& g, const ::onnx::NodeProto& n, std::int64_t opset, std::vector<input_ref>& ins,
                           std::vector<std::pair<std::string, attribute>>& attrs, load_report& report) {
    std::optional<input_ref> scales;
    if (ins.size() >= 2) scales = ins[1];
    for (auto it = attrs.begin(); it != attrs.end();) {
        if (it->first == "scales" && it->second.as_reals() && !scales) {  // Upsample opset 7: an attribute
            std::vector<float> v(it->second.as_reals()->begin(), it->second.as_reals()->end());
            std::vector<unsigned char> b(v.size() * sizeof(float));
            if (!v.empty()) std::memcpy(b.data(), v.data(), b.size());
            scales = input_ref(g.add_constant(name_of(n) + ":scales", {static_cast<std::int64_t>(v.size())}, dtype::f32, std::move(b)));
            it = attrs.erase(it);
        } else if (it->first == "mode" && it->second.as_string() && *it->second.as_string() == "bilinear") {
            it->second = attribute(std::string("linear"));
            ++it;
        } else {
            ++it;
        }
    }
    if (!scales || ins.empty()) {
        unsupported(report, n, "no scales (opset 1's height_scale and width_scale are not supported)");
        return false;
    }
    ins = {ins[0], input_ref(g.add_constant(name_of(n) + ":roi", {0}, dtype::f32, {})), *scales};
    attrs.emplace_back("coordinate_transformation_mode", attribute(std::string("asymmetric")));
    attrs.emplace_back("nearest_mode", attribute(std::string("floor")));
    report.notes.push_back(node_label(n) + ": opset " + std::to_string(opset) + " " + n.op_type() +
                             " written as Resize (asymmetric, nearest rounding down)");
    return true;
}

// Padding given implicitly, written out as explicit pads from the input's spatial dims (known
// at load): auto_pad SAME_UPPER / SAME_LOWER / VALID of the convolutions and pooling, and
// ConvTranspose's output_shape (the padding that makes it, and output_padding where the
// output grows at the end). False, with the node reported, where the dims are not known or
// the padding cannot be written (it would crop the start).
inline bool write_pads(const graph& g, const ::onnx::NodeProto& n, const std::vector<input_ref>& ins,
                       std::vector<std::pair<std::string, attribute>>& attrs, load_report& report) {
    const std::string& op = n.op_type();
    const bool transposed = op == "ConvTranspose";
    if (op != "Conv" && !transposed && op != "MaxPool" && op != "AveragePool" && op != "ConvInteger" && op != "QLinearConv")
        return true;
    auto find = [&](const char* k) -> attribute* {
        for (auto& a : attrs)
            if (a.first == k) return &a.second;
        return nullptr;
    };
    auto erase = [&](const char* k) {
        attrs.erase(std::remove_if(attrs.begin(), attrs.end(), [&](auto& a) { return a.first == k; }), attrs.end());
    };
    const attribute* ap = find("auto_pad");
    const std::string mode = ap && ap->as_string() ? std::string(*ap->as_string()) : "NOTSET";
    const attribute* os = transposed ? find("output_shape") : nullptr;
    if (mode != "SAME_UPPER" && mode != "SAME_LOWER" && mode != "VALID" && os == nullptr) return true;  // NOTSET, or refused by the description

    auto dims_of = [&](std::size_t i) -> std::optional<std::vector<std::int64_t>> {
        if (i >= ins.size()) return std::nullopt;
        const auto t = g.value_type(ins[i].v.node, ins[i].v.port);
        if (!t || t->dims.size() < 3) return std::nullopt;
        for (auto d : t->dims)
            if (d < 0) return std::nullopt;
        return t->dims;
    };
    const auto x = dims_of(0);
    if (!x) {
        unsupported(report, n, (os ? std::string("output_shape") : "auto_pad " + mode) + " on an input whose spatial dims are not known at load");
        return false;
    }
    const std::size_t sp = x->size() - 2;
    auto ints = [&](const char* k, std::int64_t fill) {
        const attribute* a = find(k);
        return a && a->as_ints() ? *a->as_ints() : std::vector<std::int64_t>(sp, fill);
    };
    std::vector<std::int64_t> kernel = ints("kernel_shape", -1);
    if (!kernel.empty() && kernel[0] < 0)
        if (const auto w = dims_of(op == "QLinearConv" ? 3 : 1)) kernel.assign(w->begin() + 2, w->end());
    const auto strides = ints("strides", 1), dilations = ints("dilations", 1);
    auto out_pad = ints("output_padding", 0);
    std::vector<std::int64_t> target = os && os->as_ints() ? *os->as_ints() : std::vector<std::int64_t>{};
    if (target.size() == sp + 2) target.erase(target.begin(), target.begin() + 2);  // given with N and C
    if (kernel.size() != sp || kernel.front() < 0 || strides.size() != sp || dilations.size() != sp || out_pad.size() != sp ||
        (os && target.size() != sp)) {
        unsupported(report, n, "kernel_shape, strides, dilations, output_padding or output_shape do not fit the input's " +
                           std::to_string(sp) + " spatial axes");
        return false;
    }
    // Out-of-range values are the description's to refuse (auto_pad is left as given).
    constexpr std::int64_t big = std::int64_t{1} << 31;
    for (std::size_t i = 0; i < sp; ++i)
        if (kernel[i] < 1 || kernel[i] > big || strides[i] < 1 || strides[i] > big || dilations[i] < 1 || dilations[i] > big ||
            out_pad[i] < 0 || out_pad[i] > big || (*x)[i + 2] > big || (os && (target[i] < 0 || target[i] > big)))
            return true;
    auto floor_div = [](std::int64_t a, std::int64_t b) { return a / b - ((a % b != 0) && ((a < 0) != (b < 0))); };
    std::vector<std::int64_t> pads(2 * sp, 0);
    for (std::size_t i = 0; i < sp && mode != "VALID"; ++i) {
        const std::int64_t in = (*x)[i + 2], s = strides[i], span = (kernel[i] - 1) * dilations[i] + 1;
        std::int64_t total;
        if (transposed) {
            const std::int64_t out = os ? target[i] : in * s;
            total = s * (in - 1) + out_pad[i] + span - out;
        } else {
            total = std::max<std::int64_t>(0, ((in + s - 1) / s - 1) * s + span - in);
        }
        // SAME_UPPER puts the odd pad at the end; SAME_LOWER, and ConvTranspose's
        // output_shape without SAME_UPPER, at the start (ONNX's rounding, towards -inf).
        pads[i] = mode == "SAME_UPPER" ? floor_div(total, 2) : total - floor_div(total, 2);
        pads[i + sp] = total - pads[i];
        if (pads[i + sp] < 0) {  // the output grows at the end: output_padding
            out_pad[i] -= pads[i + sp];
            pads[i + sp] = 0;
        }
        if (pads[i] < 0) {
            unsupported(report, n, "output_shape " + ops::to_string(target) + " would need a negative pad at the start");
            return false;
        }
    }
    erase("auto_pad");
    erase("output_shape");
    erase("pads");
    attrs.emplace_back("pads", attribute(attribute::ints(pads)));
    if (transposed) {
        erase("output_padding");
        attrs.emplace_back("output_padding", attribute(attribute::ints(out_pad)));
    }
    report.notes.push_back(node_label(n) + ": " + (os ? std::string("output_shape") : "auto_pad " + mode) +
                             " written as pads " + ops::to_string(pads) +
                             (transposed ? ", output_padding " + ops::to_string(out_pad) : std::string()));
    return true;
}

}  // namespace detail
}  // namespace onnx
SGMATCH_END_NAMESPACE
