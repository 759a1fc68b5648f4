// sgmatch/ops/positions.hpp - descriptions of the ops that work by element position: Tile
// (repeat), Trilu (a triangle's mask), Range (count), CumSum (scan), ArgMax and ArgMin (search),
// Hardmax (the first maximum along an axis as 1, the rest 0), TopK (the k largest or smallest
// along an axis, with their indices), OneHot (indices as one-hot rows),
// GatherElements and ScatterElements (indices per element), GatherND and ScatterND (index
// tuples naming slices), DepthToSpace and SpaceToDepth (blocks between channels and space),
// EyeLike (a diagonal of ones), ReverseSequence; NonZero, Compress and Unique, whose output size depends on the
// data (no shape rule: their shapes are known when they run).
#pragma once

#include <cmath>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "sgmatch/detail/config.hpp"
#include "sgmatch/ops/schema.hpp"
#include "sgmatch/ops/shape_rules.hpp"
#include "sgmatch/pattern/vocabulary.hpp"

SGMATCH_BEGIN_NAMESPACE
namespace ops {
namespace rules {

/// Tile: each dim times its repeat.
inline std::vector<dims> tile(const shape_inputs& in, const op_attrs& a) {
    const dims& x = in.shapes.at(0);
    const auto repeats = param(in, a, 1, "repeats");
    if (!repeats || repeats->size() != x.size())
        fail(a, "repeats " + (repeats ? to_string(*repeats) : std::string("(none)")) + " do not give one repeat for each of the " +
                    std::to_string(x.size()) + " axes");
    dims out(x.size());
    for (std::size_t i = 0; i < x.size(); ++i) {
        const std::int64_t r = (*repeats)[i];
        if (r < 0) fail(a, "a negative repeat in " + to_string(*repeats));
        if (r != 0 && x[i] > (std::int64_t{1} << 62) / r) fail(a, "repeats " + to_string(*repeats) + " make a dim too large");
        out[i] = x[i] * r;
    }
    return {out};
}

/// Trilu: the input's shape; a matrix (or a batch of them) at least.
inline std::vector<dims> trilu(const shape_inputs& in, const op_attrs& a) {
    const dims& x = in.shapes.at(0);
    if (x.size() < 2) fail(a, "the input has rank " + std::to_string(x.size()) + " (at least 2: matrices)");
    if (in.shapes.size() > 1 && !in.shapes[1].empty() && !(in.shapes[1].size() == 1 && in.shapes[1][0] == 1))
        fail(a, "k is " + to_string(in.shapes[1]) + ", not one value");
    return {x};
}

/// A one-value parameter input (Range's start, limit, delta) as a double, exactly as an integer
/// where it is one; nullopt while unknown.
struct scalar_param {
    double real = 0;
    std::optional<std::int64_t> integer;
};
inline scalar_param scalar_input(const shape_inputs& in, const op_attrs& a, std::size_t slot, const char* what) {
    const dims& d = in.shapes.at(slot);
    if (!(d.empty() || (d.size() == 1 && d[0] == 1))) fail(a, std::string(what) + " is " + to_string(d) + ", not one value");
    const bool has_real = in.reals.size() > slot && in.reals[slot] && in.reals[slot]->size() == 1;
    const bool has_int = in.values.size() > slot && in.values[slot] && in.values[slot]->size() == 1;
    if (!has_real && !has_int)
        throw unknown_value("sgmatch: " + a.where() + ": " + what + " (input " + std::to_string(slot) + ") is computed: unknown before the op runs",
                            slot);
    scalar_param p;
    p.real = has_real ? (*in.reals[slot])[0] : static_cast<double>((*in.values[slot])[0]);
    if (has_int && (!has_real || p.real == std::floor(p.real))) p.integer = (*in.values[slot])[0];
    return p;
}

/// Range: max(ceil((limit - start) / delta), 0) values.
inline std::int64_t range_count(const shape_inputs& in, const op_attrs& a) {
    const scalar_param start = scalar_input(in, a, 0, "start"), limit = scalar_input(in, a, 1, "limit"), delta = scalar_input(in, a, 2, "delta");
    if (delta.real == 0) fail(a, "delta is 0");
    if (start.integer && limit.integer && delta.integer) {
        const std::int64_t s = *start.integer, l = *limit.integer, d = *delta.integer;
        if ((d > 0 && l <= s) || (d < 0 && l >= s)) return 0;
        // |l - s| without overflow, then a ceiling division by |d|.
        const std::uint64_t span = d > 0 ? static_cast<std::uint64_t>(l) - static_cast<std::uint64_t>(s)
                                         : static_cast<std::uint64_t>(s) - static_cast<std::uint64_t>(l);
        const std::uint64_t step = d > 0 ? static_cast<std::uint64_t>(d) : 0 - static_cast<std::uint64_t>(d);
        return static_cast<std::int64_t>(span / step + (span % step != 0));
    }
    const double n = std::ceil((limit.real - start.real) / delta.real);
    if (std::isnan(n)) fail(a, "start, limit and delta give no count");
    if (!(n < 4.0e18)) fail(a, "start, limit and delta give too many values");
    return n > 0 ? static_cast<std::int64_t>(n) : 0;
}
inline std::vector<dims> range(const shape_inputs& in, const op_attrs& a) { return {dims{range_count(in, a)}}; }

/// CumSum: the input's shape; the axis, where known, is one value within the rank.
inline std::vector<dims> cumsum(const shape_inputs& in, const op_attrs& a) {
    const dims& x = in.shapes.at(0);
    if (x.empty()) fail(a, "the input is a scalar (at least one axis to sum along)");
    if (in.shapes.size() > 1) {
        const dims& d = in.shapes[1];
        if (!(d.empty() || (d.size() == 1 && d[0] == 1))) fail(a, "axis is " + to_string(d) + ", not one value");
        if (in.values.size() > 1 && in.values[1] && in.values[1]->size() == 1) axis(a, (*in.values[1])[0], x.size());
    }
    return {x};
}

/// ArgMax, ArgMin: the axis removed, or kept as 1.
inline std::vector<dims> arg_reduce(const shape_inputs& in, const op_attrs& a) {
    dims x = in.shapes.at(0);
    const std::size_t ax = axis(a, a.i("axis"), x.size());
    if (x[ax] == 0) fail(a, "axis " + std::to_string(ax) + " is empty: no element to pick");
    if (a.i("keepdims") != 0) x[ax] = 1;
    else x.erase(x.begin() + static_cast<std::ptrdiff_t>(ax));
    return {x};
}

/// Hardmax: the input's shape; the axis in range.
inline std::vector<dims> hardmax(const shape_inputs& in, const op_attrs& a) {
    const dims& x = in.shapes.at(0);
    if (x.empty()) fail(a, "the input is a scalar (at least one axis)");
    axis(a, a.i("axis"), x.size());
    return {x};
}

/// TopK: the input's shape with the axis cut to k (values and indices alike); k is one value
/// within the axis' length: input K (known only at run time when computed), or attribute k
/// (opset < 10).
inline std::vector<dims> top_k(const shape_inputs& in, const op_attrs& a) {
    dims x = in.shapes.at(0);
    if (x.empty()) fail(a, "the input is a scalar (at least one axis)");
    const std::size_t ax = axis(a, a.i("axis"), x.size());
    std::int64_t k = 0;
    if (in.shapes.size() > 1) {
        const dims& kd = in.shapes[1];
        if (kd != dims{1}) fail(a, "K is " + to_string(kd) + ", not [1]");
        if (in.values.size() < 2 || !in.values[1] || in.values[1]->size() != 1)
            throw unknown_value("sgmatch: " + a.where() + ": K (input 1) is computed: unknown before the op runs", 1);
        k = (*in.values[1])[0];
    } else if (a.has("k")) {
        k = a.i("k");
    } else {
        fail(a, "neither input K nor attribute k gives the count");
    }
    if (k < 0 || k > x[ax]) fail(a, "K " + std::to_string(k) + " is outside [0, " + std::to_string(x[ax]) + "], the length of axis " + std::to_string(ax));
    x[ax] = k;
    return {x, x};
}

/// OneHot: the indices' shape with an axis of `depth` inserted at `axis` (in [-r - 1, r]).
inline std::vector<dims> one_hot(const shape_inputs& in, const op_attrs& a) {
    dims x = in.shapes.at(0);
    const scalar_param depth = scalar_input(in, a, 1, "depth");
    const std::int64_t d = depth.integer ? *depth.integer : static_cast<std::int64_t>(depth.real);
    if (!(depth.real >= 1) || d > (std::int64_t{1} << 32)) fail(a, "depth " + std::to_string(depth.real) + " (at least 1)");
    if (in.shapes.at(2) != dims{2}) fail(a, "values is " + to_string(in.shapes[2]) + ", not [off, on]");
    const auto r = static_cast<std::int64_t>(x.size());
    std::int64_t ax = a.i("axis");
    if (ax < -r - 1 || ax > r) fail(a, "axis " + std::to_string(ax) + " is out of range for an output of rank " + std::to_string(r + 1));
    if (ax < 0) ax += r + 1;
    x.insert(x.begin() + ax, d);
    return {x};
}

/// GatherElements: the indices' shape; data and indices of one rank.
inline std::vector<dims> gather_elements(const shape_inputs& in, const op_attrs& a) {
    const dims &x = in.shapes.at(0), &i = in.shapes.at(1);
    if (x.size() != i.size()) fail(a, "data " + to_string(x) + " and indices " + to_string(i) + " differ in rank");
    axis(a, a.i("axis"), x.size());
    return {i};
}

/// ScatterElements: the data's shape; indices and updates of one shape, of the data's rank.
inline std::vector<dims> scatter_elements(const shape_inputs& in, const op_attrs& a) {
    const dims &x = in.shapes.at(0), &i = in.shapes.at(1), &u = in.shapes.at(2);
    if (i != u) fail(a, "indices " + to_string(i) + " and updates " + to_string(u) + " differ");
    if (x.size() != i.size()) fail(a, "data " + to_string(x) + " and indices " + to_string(i) + " differ in rank");
    axis(a, a.i("axis"), x.size());
    return {x};
}

/// GatherND: index tuples (indices' last dim, k long) naming slices of data within the leading
/// batch_dims dims the two share: indices' dims but the last, then data's dims after
/// batch_dims + k.
inline std::vector<dims> gather_nd(const shape_inputs& in, const op_attrs& a) {
    const dims &x = in.shapes.at(0), &i = in.shapes.at(1);
    if (i.empty()) fail(a, "indices are a scalar (a tuple of indices in the last dim taken)");
    const std::int64_t b = a.i("batch_dims");
    if (b < 0 || static_cast<std::size_t>(b) >= i.size() || static_cast<std::size_t>(b) >= x.size())
        fail(a, "batch_dims " + std::to_string(b) + " for data " + to_string(x) + " and indices " + to_string(i));
    const auto nb = static_cast<std::size_t>(b);
    for (std::size_t d = 0; d < nb; ++d)
        if (x[d] != i[d]) fail(a, "data " + to_string(x) + " and indices " + to_string(i) + " differ in the batch dims");
    const std::int64_t k = i.back();
    if (k < 1 || nb + static_cast<std::size_t>(k) > x.size())
        fail(a, "index tuples of " + std::to_string(k) + " for data " + to_string(x) + " past " + std::to_string(b) + " batch dims");
    dims out(i.begin(), i.end() - 1);
    out.insert(out.end(), x.begin() + static_cast<std::ptrdiff_t>(nb + static_cast<std::size_t>(k)), x.end());
    return {out};
}

/// ScatterND: the data's shape; updates of indices' dims but the last, then data's dims after
/// the tuples' length k.
inline std::vector<dims> scatter_nd(const shape_inputs& in, const op_attrs& a) {
    const dims &x = in.shapes.at(0), &i = in.shapes.at(1), &u = in.shapes.at(2);
    if (i.empty()) fail(a, "indices are a scalar (a tuple of indices in the last dim taken)");
    const std::int64_t k = i.back();
    if (k < 1 || static_cast<std::size_t>(k) > x.size())
        fail(a, "index tuples of " + std::to_string(k) + " for data " + to_string(x));
    dims want(i.begin(), i.end() - 1);
    want.insert(want.end(), x.begin() + k, x.end());
    if (u != want) fail(a, "updates " + to_string(u) + " are not " + to_string(want));
    return {x};
}

/// EyeLike: the input's shape, a matrix.
inline std::vector<dims> eye_like(const shape_inputs& in, const op_attrs& a) {
    const dims& x = in.shapes.at(0);
    if (x.size() != 2) fail(a, "the input has rank " + std::to_string(x.size()) + " (2 taken: a matrix)");
    return {x};
}

/// ReverseSequence: the input's shape; batch_axis and time_axis are 0 and 1 (either way round),
/// sequence_lens one per batch.
inline std::vector<dims> reverse_sequence(const shape_inputs& in, const op_attrs& a) {
    const dims &x = in.shapes.at(0), &l = in.shapes.at(1);
    if (x.size() < 2) fail(a, "the input has rank " + std::to_string(x.size()) + " (2 at least)");
    const std::int64_t b = a.i("batch_axis"), t = a.i("time_axis");
    if (!((b == 0 && t == 1) || (b == 1 && t == 0)))
        fail(a, "batch_axis " + std::to_string(b) + " and time_axis " + std::to_string(t) + " (0 and 1, either way round, taken)");
    if (l != dims{x[static_cast<std::size_t>(b)]}) fail(a, "sequence_lens " + to_string(l) + " is not one per batch of " + to_string(x));
    return {x};
}

/// Which way blocks move between channels and space.
enum class block_move { depth_to_space, space_to_depth };

/// DepthToSpace and SpaceToDepth on [N, C, H, W] by blocksize b.
template <block_move M>
std::vector<dims> blocks(const shape_inputs& in, const op_attrs& a) {
    const dims& x = in.shapes.at(0);
    const std::int64_t b = a.i("blocksize");
    if (x.size() != 4) fail(a, "the input has rank " + std::to_string(x.size()) + " (4 expected: N, C, H, W)");
    if (b < 1 || b > (std::int64_t{1} << 20)) fail(a, "blocksize " + std::to_string(b));
    if (M == block_move::depth_to_space) {
        if (x[1] % (b * b) != 0) fail(a, "channels " + std::to_string(x[1]) + " are not a multiple of blocksize^2 " + std::to_string(b * b));
        return {dims{x[0], x[1] / (b * b), x[2] * b, x[3] * b}};
    }
    if (x[2] % b != 0 || x[3] % b != 0) fail(a, "height and width " + to_string(x) + " are not multiples of blocksize " + std::to_string(b));
    return {dims{x[0], x[1] * b * b, x[2] / b, x[3] / b}};
}

}  // namespace rules

namespace schemas {

inline constexpr input_spec tile_inputs[] = {{"input"}, {"repeats", input_spec::presence::required, true}};
inline constexpr op_schema tile = typed(describe<Tile>(tile_inputs), types::all);

inline constexpr input_spec trilu_inputs[] = {{"input"}, {"k", input_spec::presence::optional, true}};
inline constexpr attr_spec trilu_attrs[] = {{"upper", attr_type::integer, def::value(1), support::range(0, 1)}};
inline constexpr op_schema trilu = typed(describe<Trilu>(trilu_inputs, trilu_attrs), types::all);

inline constexpr input_spec range_inputs[] = {{"start", input_spec::presence::required, true},
                                              {"limit", input_spec::presence::required, true},
                                              {"delta", input_spec::presence::required, true}};
inline constexpr op_schema range = typed(describe<Range>(range_inputs), types::numeric);

inline constexpr input_spec cumsum_inputs[] = {{"x"}, {"axis", input_spec::presence::required, true}};
inline constexpr attr_spec cumsum_attrs[] = {{"exclusive", attr_type::integer, def::value(0), support::range(0, 1)},
                                             {"reverse", attr_type::integer, def::value(0), support::range(0, 1)}};
inline constexpr op_schema cumsum = typed(describe<CumSum>(cumsum_inputs, cumsum_attrs), types::numeric);

inline constexpr attr_spec arg_reduce_attrs[] = {{"axis", attr_type::integer, def::value(0), support::any()},
                                                 {"keepdims", attr_type::integer, def::value(1), support::range(0, 1)},
                                                 {"select_last_index", attr_type::integer, def::value(0), support::range(0, 1)}};
inline constexpr input_spec arg_reduce_inputs[] = {{"data"}};
inline constexpr type_rule arg_index{type_rule::from::fixed, 0, dtype::i64, {}};
inline constexpr op_schema arg_max = typed(describe<ArgMax>(arg_reduce_inputs, arg_reduce_attrs, arg_index), types::numeric);
inline constexpr op_schema arg_min = typed(describe<ArgMin>(arg_reduce_inputs, arg_reduce_attrs, arg_index), types::numeric);

inline constexpr input_spec hardmax_inputs[] = {{"input"}};
inline constexpr attr_spec hardmax_attrs[] = {{"axis", attr_type::integer, def::value(-1), support::any()}};
inline constexpr op_schema hardmax = typed(describe<Hardmax>(hardmax_inputs, hardmax_attrs), types::f32 | types::bit(dtype::f64));

inline constexpr input_spec top_k_inputs[] = {{"X"}, {"K", input_spec::presence::optional, true}};
inline constexpr attr_spec top_k_attrs[] = {{"axis", attr_type::integer, def::value(-1), support::any()},
                                            {"k", attr_type::integer, def::absent(), support::any()},  // opset < 10
                                            {"largest", attr_type::integer, def::value(1), support::range(0, 1)},
                                            {"sorted", attr_type::integer, def::value(1), support::range(0, 1)}};
/// TopK: the values, and (output 1) their int64 indices along the axis.
inline constexpr op_schema top_k = typed(describe<TopK>(top_k_inputs, top_k_attrs,
                                                        type_rule{type_rule::from::input, 0, dtype::unknown, {}, dtype::i64}, 2),
                                         types::numeric);

inline constexpr input_spec one_hot_inputs[] = {{"indices"}, {"depth", input_spec::presence::required, true}, {"values"}};
inline constexpr attr_spec one_hot_attrs[] = {{"axis", attr_type::integer, def::value(-1), support::any()}};
inline constexpr type_rule one_hot_type{type_rule::from::input, 2, dtype::unknown, {}};
inline constexpr op_schema one_hot = typed(describe<OneHot>(one_hot_inputs, one_hot_attrs, one_hot_type), types::computing);

inline constexpr input_spec gather_elements_inputs[] = {{"data"}, {"indices"}};
inline constexpr attr_spec gather_elements_attrs[] = {{"axis", attr_type::integer, def::value(0), support::any()}};
inline constexpr op_schema gather_elements =
    typed(describe<GatherElements>(gather_elements_inputs, gather_elements_attrs), types::all);
inline constexpr input_spec scatter_elements_inputs[] = {{"data"}, {"indices"}, {"updates"}};
inline constexpr attr_spec scatter_elements_attrs[] = {{"axis", attr_type::integer, def::value(0), support::any()},
                                                       {"reduction", attr_type::string, def::text("none"), support::one_of("none|add|mul|max|min")}};
inline constexpr op_schema scatter_elements =
    typed(describe<ScatterElements>(scatter_elements_inputs, scatter_elements_attrs), types::computing);
inline constexpr input_spec gather_nd_inputs[] = {{"data"}, {"indices"}};
inline constexpr attr_spec gather_nd_attrs[] = {{"batch_dims", attr_type::integer, def::value(0), support::at_least(0)}};
inline constexpr op_schema gather_nd = typed(describe<GatherND>(gather_nd_inputs, gather_nd_attrs), types::all);
inline constexpr input_spec scatter_nd_inputs[] = {{"data"}, {"indices"}, {"updates"}};
inline constexpr attr_spec scatter_nd_attrs[] = {
    {"reduction", attr_type::string, def::text("none"), support::one_of("none|add|mul|max|min")}};
inline constexpr op_schema scatter_nd = typed(describe<ScatterND>(scatter_nd_inputs, scatter_nd_attrs), types::computing);
/// EyeLike: ones on diagonal k of a matrix of the input's shape, of type `dtype` (the input's
/// when absent).
inline constexpr input_spec eye_like_inputs[] = {{"input"}};
inline constexpr attr_spec eye_like_attrs[] = {{"dtype", attr_type::integer, def::absent(), support::any()},
                                               {"k", attr_type::integer, def::value(0), support::any()}};
inline constexpr op_schema eye_like = typed(
    describe<EyeLike>(eye_like_inputs, eye_like_attrs, type_rule{type_rule::from::attribute, 0, dtype::unknown, "dtype"}), types::computing);
/// NonZero: the int64 coordinates [rank, count] of the elements that are not zero, in row-major
/// order.
inline constexpr input_spec non_zero_inputs[] = {{"X"}};
inline constexpr op_schema non_zero =
    typed(describe<NonZero>(non_zero_inputs, type_rule{type_rule::from::fixed, 0, dtype::i64, {}}), types::computing);
/// Compress: the slices along `axis` (of the flattened input without one) where the bool
/// condition holds; a condition shorter than the axis drops the slices past its end.
inline constexpr input_spec compress_inputs[] = {{"input"}, {"condition"}};
inline constexpr attr_spec compress_attrs[] = {{"axis", attr_type::integer, def::absent(), support::any()}};
inline constexpr op_schema compress = typed(describe<Compress>(compress_inputs, compress_attrs), types::all);
/// Unique: the distinct elements (or slices along `axis`), sorted or in order of first
/// appearance, with the int64 index of each one's first appearance, the index into them of every
/// element (or slice) of X, and how often each appears.
inline constexpr input_spec unique_inputs[] = {{"X"}};
inline constexpr attr_spec unique_attrs[] = {{"axis", attr_type::integer, def::absent(), support::any()},
                                             {"sorted", attr_type::integer, def::value(1), support::range(0, 1)}};
inline constexpr op_schema unique =
    typed(describe<Unique>(unique_inputs, unique_attrs, type_rule{type_rule::from::input, 0, dtype::unknown, {}, dtype::i64}, 4),
          types::computing);
/// ReverseSequence: each batch's first sequence_lens[b] steps along the time axis reversed, the
/// rest kept.
inline constexpr input_spec reverse_sequence_inputs[] = {{"input"}, {"sequence_lens"}};
inline constexpr attr_spec reverse_sequence_attrs[] = {{"batch_axis", attr_type::integer, def::value(1), support::range(0, 1)},
                                                       {"time_axis", attr_type::integer, def::value(0), support::range(0, 1)}};
inline constexpr op_schema reverse_sequence =
    typed(describe<ReverseSequence>(reverse_sequence_inputs, reverse_sequence_attrs), types::all);
inline constexpr attr_spec depth_to_space_attrs[] = {{"blocksize", attr_type::integer, def::required(), support::any()},
                                                     {"mode", attr_type::string, def::text("DCR"), support::one_of("DCR|CRD")}};
inline constexpr attr_spec space_to_depth_attrs[] = {{"blocksize", attr_type::integer, def::required(), support::any()}};
inline constexpr input_spec blocks_inputs[] = {{"input"}};
inline constexpr op_schema depth_to_space = typed(describe<DepthToSpace>(blocks_inputs, depth_to_space_attrs), types::all);
inline constexpr op_schema space_to_depth = typed(describe<SpaceToDepth>(blocks_inputs, space_to_depth_attrs), types::all);

}  // namespace schemas

// The ops layer's facets of each op's entry (its vocabulary tag): the description and the shape rule.
template <> inline constexpr const op_schema* description<Tile> = &schemas::tile;
template <> inline constexpr shape_rule shape_rule_for<Tile> = rules::tile;
template <> inline constexpr const op_schema* description<Trilu> = &schemas::trilu;
template <> inline constexpr shape_rule shape_rule_for<Trilu> = rules::trilu;
template <> inline constexpr const op_schema* description<Range> = &schemas::range;
template <> inline constexpr shape_rule shape_rule_for<Range> = rules::range;
template <> inline constexpr const op_schema* description<CumSum> = &schemas::cumsum;
template <> inline constexpr shape_rule shape_rule_for<CumSum> = rules::cumsum;
template <> inline constexpr const op_schema* description<ArgMax> = &schemas::arg_max;
template <> inline constexpr shape_rule shape_rule_for<ArgMax> = rules::arg_reduce;
template <> inline constexpr const op_schema* description<ArgMin> = &schemas::arg_min;
template <> inline constexpr shape_rule shape_rule_for<ArgMin> = rules::arg_reduce;
template <> inline constexpr const op_schema* description<Hardmax> = &schemas::hardmax;
template <> inline constexpr shape_rule shape_rule_for<Hardmax> = rules::hardmax;
template <> inline constexpr const op_schema* description<TopK> = &schemas::top_k;
template <> inline constexpr shape_rule shape_rule_for<TopK> = rules::top_k;
template <> inline constexpr const op_schema* description<OneHot> = &schemas::one_hot;
template <> inline constexpr shape_rule shape_rule_for<OneHot> = rules::one_hot;
template <> inline constexpr const op_schema* description<GatherElements> = &schemas::gather_elements;
template <> inline constexpr shape_rule shape_rule_for<GatherElements> = rules::gather_elements;
template <> inline constexpr const op_schema* description<ScatterElements> = &schemas::scatter_elements;
template <> inline constexpr shape_rule shape_rule_for<ScatterElements> = rules::scatter_elements;
template <> inline constexpr const op_schema* description<GatherND> = &schemas::gather_nd;
template <> inline constexpr shape_rule shape_rule_for<GatherND> = rules::gather_nd;
template <> inline constexpr const op_schema* description<ScatterND> = &schemas::scatter_nd;
template <> inline constexpr shape_rule shape_rule_for<ScatterND> = rules::scatter_nd;
template <> inline constexpr const op_schema* description<EyeLike> = &schemas::eye_like;
template <> inline constexpr shape_rule shape_rule_for<EyeLike> = rules::eye_like;
template <> inline constexpr const op_schema* description<NonZero> = &schemas::non_zero;
template <> inline constexpr shape_rule shape_rule_for<NonZero> = rules::known_when_run;
template <> inline constexpr const op_schema* description<Compress> = &schemas::compress;
template <> inline constexpr shape_rule shape_rule_for<Compress> = rules::known_when_run;
template <> inline constexpr const op_schema* description<Unique> = &schemas::unique;
template <> inline constexpr shape_rule shape_rule_for<Unique> = rules::known_when_run;
template <> inline constexpr const op_schema* description<ReverseSequence> = &schemas::reverse_sequence;
template <> inline constexpr shape_rule shape_rule_for<ReverseSequence> = rules::reverse_sequence;
template <> inline constexpr const op_schema* description<DepthToSpace> = &schemas::depth_to_space;
template <> inline constexpr shape_rule shape_rule_for<DepthToSpace> = rules::blocks<rules::block_move::depth_to_space>;
template <> inline constexpr const op_schema* description<SpaceToDepth> = &schemas::space_to_depth;
template <> inline constexpr shape_rule shape_rule_for<SpaceToDepth> = rules::blocks<rules::block_move::space_to_depth>;

}  // namespace ops
SGMATCH_END_NAMESPACE
