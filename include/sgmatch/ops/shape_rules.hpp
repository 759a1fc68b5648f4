// sgmatch/ops/shape_rules.hpp - the shape arithmetic the op descriptions share: numpy
// broadcasting, convolution and pooling windows, axis normalization.
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "sgmatch/detail/checked.hpp"
#include "sgmatch/detail/config.hpp"
#include "sgmatch/ops/attrs.hpp"
#include "sgmatch/ops/schema.hpp"

SGMATCH_BEGIN_NAMESPACE
namespace ops {
namespace rules {

[[noreturn]] inline void fail(const op_attrs& a, const std::string& why) { throw op_error("sgmatch: " + a.where() + ": " + why); }

/// The shape rule of an op whose output shapes are known only when it runs (they depend on the
/// values it reads, or on a body it runs): shape_rule_of gives null for it.
inline std::vector<dims> known_when_run(const shape_inputs&, const op_attrs& a) { fail(a, "output shapes are known only when the op runs"); }

/// x + y and x * y of sizes, pads and strides from a model: past int64, a size_overflow naming
/// the node (`what`: which sizes).
inline std::int64_t add(const op_attrs& a, std::int64_t x, std::int64_t y, const char* what) {
    const auto r = sgmatch::detail::checked_signed_add(x, y);
    if (!r) throw size_overflow("sgmatch: " + a.where() + ": " + what + " overflow int64 (" + std::to_string(x) + " + " + std::to_string(y) + ")");
    return *r;
}
inline std::int64_t mul(const op_attrs& a, std::int64_t x, std::int64_t y, const char* what) {
    const auto r = sgmatch::detail::checked_signed_mul(x, y);
    if (!r) throw size_overflow("sgmatch: " + a.where() + ": " + what + " overflow int64 (" + std::to_string(x) + " * " + std::to_string(y) + ")");
    return *r;
}

/// An axis in [-rank, rank) as an index in [0, rank).
inline std::size_t axis(const op_attrs& a, std::int64_t ax, std::size_t rank, const char* what = "axis") {
    const auto r = static_cast<std::int64_t>(rank);
    if (ax < -r || ax >= r) fail(a, std::string(what) + " " + std::to_string(ax) + " is out of range for rank " + std::to_string(rank));
    return static_cast<std::size_t>(ax < 0 ? ax + r : ax);
}

/// Numpy (multidirectional) broadcasting of two shapes.
inline dims broadcast(const op_attrs& a, const dims& x, const dims& y) {
    dims out(std::max(x.size(), y.size()), 1);
    for (std::size_t i = 0; i < out.size(); ++i) {
        const std::int64_t dx = i < out.size() - x.size() ? 1 : x[i - (out.size() - x.size())];
        const std::int64_t dy = i < out.size() - y.size() ? 1 : y[i - (out.size() - y.size())];
        if (dx != dy && dx != 1 && dy != 1)
            fail(a, "shapes " + to_string(x) + " and " + to_string(y) + " do not broadcast");
        out[i] = dx == 1 ? dy : dx;
    }
    return out;
}

inline std::vector<dims> same_as_input0(const shape_inputs& in, const op_attrs&) { return {in.shapes.at(0)}; }

inline std::vector<dims> broadcast_all(const shape_inputs& in, const op_attrs& a) {
    dims out = in.shapes.at(0);
    for (std::size_t i = 1; i < in.shapes.size(); ++i) out = broadcast(a, out, in.shapes[i]);
    return {out};
}

/// Input 1 broadcasts to input 0, which keeps its shape (PRelu's slope).
inline std::vector<dims> unidirectional(const shape_inputs& in, const op_attrs& a) {
    const dims& x = in.shapes.at(0);
    if (broadcast(a, x, in.shapes.at(1)) != x)
        fail(a, "input 1 " + to_string(in.shapes[1]) + " does not broadcast to input 0 " + to_string(x));
    return {x};
}

/// A list parameter given as a constant input (newer opsets) or an attribute (older ones); an
/// input computed at run time cannot be known here.
inline std::optional<dims> param(const shape_inputs& in, const op_attrs& a, std::size_t slot, const char* attr) {
    if (in.shapes.size() > slot) {
        if (!in.values.at(slot))
            throw unknown_value("sgmatch: " + a.where() + ": " + attr + " (input " + std::to_string(slot) +
                                ") is computed: unknown before the op runs", slot);
        return *in.values[slot];
    }
    if (a.has(attr)) return a.ints(attr);
    return std::nullopt;
}

/// A real-valued parameter input (Resize's scales); one computed at run time cannot be known here.
inline std::vector<double> real_param(const shape_inputs& in, const op_attrs& a, std::size_t slot, const char* what) {
    if (in.reals.size() <= slot || !in.reals[slot])
        throw unknown_value("sgmatch: " + a.where() + ": " + what + " (input " + std::to_string(slot) +
                            ") is computed: unknown before the op runs", slot);
    return *in.reals[slot];
}

/// The spatial extent of a sliding window: floor((in + pads - ((k - 1) d + 1)) / s) + 1.
inline std::int64_t window_out(const op_attrs& a, std::int64_t in, std::int64_t k, std::int64_t s, std::int64_t d,
                               std::int64_t pb, std::int64_t pe, bool ceil) {
    if (s < 1 || d < 1 || k < 1) fail(a, "window sizes, strides and dilations must be positive");
    const char* what = "the window's sizes and pads";
    const std::int64_t span = add(a, mul(a, k - 1, d, what), 1, what);
    const std::int64_t room = add(a, add(a, add(a, in, pb, what), pe, what), -span, what);
    if (room < 0) fail(a, "a window of " + std::to_string(span) + " does not fit an input of " + std::to_string(in) + " padded by " +
                          std::to_string(pb) + "+" + std::to_string(pe));
    std::int64_t o = (ceil ? (room + s - 1) / s : room / s) + 1;
    if (ceil && (o - 1) * s >= in + pb) --o;  // the last window starts inside the input or the begin padding
    return o;
}

/// Reads kernel_shape (given or from the weights), strides, dilations and pads for `sp` axes,
/// checking their lengths.
struct window {
    dims kernel, strides, dilations, pads;
};
inline window window_of(const op_attrs& a, std::size_t sp, const dims* weights = nullptr) {
    window w;
    w.kernel = a.ints("kernel_shape");
    if (w.kernel.empty() && weights != nullptr && weights->size() >= 2) w.kernel.assign(weights->begin() + 2, weights->end());
    w.strides = a.ints("strides", sp);
    w.dilations = a.schema().attr("dilations") ? a.ints("dilations", sp) : dims(sp, 1);
    w.pads = a.ints("pads", sp);
    auto check = [&](const dims& v, std::size_t n, const char* what) {
        if (v.size() != n)
            fail(a, std::string(what) + " has " + std::to_string(v.size()) + " values for " + std::to_string(sp) + " spatial axes");
    };
    check(w.kernel, sp, "kernel_shape");
    check(w.strides, sp, "strides");
    check(w.dilations, sp, "dilations");
    check(w.pads, 2 * sp, "pads");
    return w;
}

inline void need_rank(const op_attrs& a, const dims& x, std::size_t lo, const char* what = "input") {
    if (x.size() < lo) fail(a, std::string(what) + " " + to_string(x) + " has rank below " + std::to_string(lo));
}

}  // namespace rules
}  // namespace ops
SGMATCH_END_NAMESPACE
