// sgmatch/exec/kernels/typed_support.hpp - what the kernels over typed values (exec::value)
// share: the kernel signature, errors that name the node, the shape rule read at run time,
// broadcast strides, an n-dimensional loop, a strided byte copy and element conversion.
#pragma once

#include <algorithm>
#include <array>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <functional>
#include <limits>
#include <optional>
#include <string>
#include <string_view>
#include <type_traits>
#include <vector>

#include "sgmatch/detail/config.hpp"
#include "sgmatch/exec/error.hpp"
#include "sgmatch/exec/value.hpp"
#include "sgmatch/ops/attrs.hpp"
#include "sgmatch/ops/schema.hpp"
#include "sgmatch/ops/shape_rule_table.hpp"
#include "sgmatch/ops/shape_rules.hpp"
#include "sgmatch/ops/table.hpp"

SGMATCH_BEGIN_NAMESPACE
namespace exec {

using values = std::vector<value>;
/// A node's typed kernel: its input values, in order, to its output values.
using typed_fn = std::function<values(const values&)>;

/// The typed kernels on this thread that ran a oneDNN primitive, counted up (kernels/typed_onednn.hpp:
/// each run that takes its primitive adds one; the executor reports a step whose run moved it in
/// run_stats::onednn_typed_nodes).
inline std::size_t& onednn_typed_runs() {
    static thread_local std::size_t runs = 0;
    return runs;
}

/// The layout conversions those kernels ran on this thread, counted up (an int8 conv's x
/// reordered into its primitive's layout, its y out of it; run_stats::typed_reorders).
inline std::size_t& onednn_typed_reorders() {
    static thread_local std::size_t reorders = 0;
    return reorders;
}

/// How one op runs on typed values, made when the executor is built (or when a clean-up pass
/// folds constants) from the node's checked attributes and the node itself: the facets
/// typed_kernels<Tag> and onednn_typed_kernels<Tag> of the op's entry.
///
/// Minimal complete definition: `make`, returning the kernel (values in, values out, one per
/// output) or refusing the node (typed::refuse, naming it). Laws (tests/onednn/registry.cpp and
/// the kernels' tests): a oneDNN typed kernel has a typed kernel to check it against and gives
/// its results for the element types it takes; a kernel checks what it reads at run time
/// (typed::fail, naming the node).
struct typed_binding {
    typed_fn (*make)(const ops::op_attrs&, const ops::node_source&) = nullptr;
};

namespace kernels {
/// The exec layer's facets of an op's entry (ops/schema.hpp) on typed values: its typed kernel
/// (exec/kernels/typed.hpp) and its oneDNN kernel over typed values (typed_onednn.hpp). Not
/// specialized: none.
template <class Tag>
inline constexpr ops::no_facet typed_kernels{};
template <class Tag>
inline constexpr ops::no_facet onednn_typed_kernels{};
}  // namespace kernels

namespace typed {

[[noreturn]] inline void fail(const ops::op_attrs& a, const std::string& why) {
    throw exec_error("sgmatch::exec::executor: " + a.where() + ": " + why);
}
// A refusal when the kernel is made.
[[noreturn]] inline void refuse(const ops::op_attrs& a, const std::string& why) { fail(a, why); }

inline const value& in(const values& x, std::size_t i, const ops::op_attrs& a) {
    if (i >= x.size()) fail(a, "needs " + std::to_string(i + 1) + " inputs");
    return x[i];
}

/// What the op's shape rule sees at run time: every input's dims, the values of the integer
/// inputs (parameters such as a shape or starts) and of the real ones (Resize's scales).
inline ops::shape_inputs shapes_of(const values& x) {
    ops::shape_inputs s;
    for (const value& v : x) {
        s.shapes.push_back(v.dims());
        if (v.is_sequence() || v.is_none()) {  // no shape, no values
            s.values.push_back(std::nullopt);
            s.reals.push_back(std::nullopt);
            continue;
        }
        const bool small = (v.has_data() || v.size() == 0) && v.size() <= 4096;
        const bool integer = v.type() == dtype::i64 || v.type() == dtype::i32;
        const bool real = v.type() == dtype::f32 || v.type() == dtype::f64;
        if ((integer || real) && small) {
            const value d = v.dense_value();
            s.values.push_back(integer ? std::optional<ops::dims>(d.to_ints()) : std::nullopt);
            s.reals.push_back(real ? d.as_constant().to_reals() : std::nullopt);
        } else {
            s.values.push_back(std::nullopt);
            s.reals.push_back(std::nullopt);
        }
    }
    return s;
}
/// f(), with a refusal of the op's description (op_error) raised as the executor's error.
template <class F>
auto as_executor_error(F&& f) -> decltype(f()) {
    try {
        return f();
    } catch (const ops::op_error& e) {
        std::string_view m = e.what();
        if (m.substr(0, 9) == "sgmatch: ") m.remove_prefix(9);
        throw exec_error("sgmatch::exec::executor: " + std::string(m));
    }
}
/// The op's output shapes by its shape rule, a refusal as the executor's error.
inline std::vector<ops::dims> rule(const ops::op_attrs& a, const ops::shape_inputs& in) {
    return as_executor_error([&] { return ops::infer_shapes(a, in); });
}
inline std::vector<ops::dims> rule(const ops::op_attrs& a, const values& x) { return rule(a, shapes_of(x)); }

/// An upper bound of the bytes a node's kernel computes from `x`, by the op's shape rule (8
/// bytes an element); 0 when the rule has no answer (the kernel then says what is wrong).
inline long double estimated_bytes(const ops::op_attrs& a, const values& x) {
    if (ops::shape_rule_of(a.schema()) == nullptr) return 0;
    long double bytes = 0;
    try {
        for (const auto& d : ops::infer_shapes(a, shapes_of(x))) {
            long double count = 8;
            for (auto k : d) count *= static_cast<long double>(std::max<std::int64_t>(k, 0));
            bytes += count;
        }
    } catch (const ops::op_error&) {
        return 0;
    }
    return bytes;
}

/// Strides (in elements) of `d` read as `out` under numpy broadcasting: 0 along broadcast axes.
inline shape broadcast_strides(const shape& d, const shape& out) {
    const shape dense = value::dense_strides(d);
    shape s(out.size(), 0);
    const std::size_t lead = out.size() - d.size();
    for (std::size_t i = 0; i < d.size(); ++i) s[lead + i] = d[i] == 1 ? 0 : dense[i];
    return s;
}

/// f(i, offsets) for every element i of `out` (row-major), with each input's element offset
/// under its strides.
template <std::size_t N, class F>
void nd_loop(const shape& out, const std::array<shape, N>& strides, F&& f) {
    const std::int64_t n = element_count(out);
    shape idx(out.size(), 0);
    std::array<std::int64_t, N> off{};
    for (std::int64_t i = 0; i < n; ++i) {
        f(i, off);
        for (std::size_t k = out.size(); k-- > 0;) {
            if (++idx[k] < out[k]) {
                for (std::size_t j = 0; j < N; ++j) off[j] += strides[j][k];
                break;
            }
            for (std::size_t j = 0; j < N; ++j) off[j] -= strides[j][k] * (out[k] - 1);
            idx[k] = 0;
        }
    }
}

// Wrapping integer arithmetic (signed overflow is undefined in C++).
template <class T, class Op>
T wrap(T a, T b, Op op) {
    if constexpr (std::is_integral_v<T> && !std::is_same_v<T, bool>) {
        // In unsigned int at least: 16-bit operands would be promoted to int, and overflow it.
        using U = std::common_type_t<unsigned, std::make_unsigned_t<T>>;
        return static_cast<T>(static_cast<U>(op(static_cast<U>(a), static_cast<U>(b))));
    } else {
        return static_cast<T>(op(a, b));
    }
}

/// x's element type is one the op's kernels take (op_schema::dtypes), or an error naming the node.
inline void require_type(const ops::op_attrs& a, const value& x) {
    if (!ops::types::has(a.schema().dtypes, x.type())) fail(a, "no kernel for element type " + std::string(name_of(x.type())));
}

inline std::byte* bytes_of(value& v) { return static_cast<std::byte*>(v.mutable_data()); }
inline const std::byte* bytes_of(const value& v) { return static_cast<const std::byte*>(v.data()); }

/// The elements of `x` at `offset` + the element strides `strides` over `walk` (row-major),
/// copied as bytes into a new dense value of dims `out` (as many elements as `walk`): a
/// transpose, a broadcast, a slice or a block permutation, on any element type.
inline value strided_copy(const value& x, const shape& walk, const shape& strides, shape out, std::int64_t offset = 0) {
    value y = value::zeros(x.type(), std::move(out));
    const auto es = static_cast<std::int64_t>(size_of(x.type()));
    std::byte* o = bytes_of(y);
    const std::byte* s = bytes_of(x);
    nd_loop<1>(walk, std::array<shape, 1>{strides}, [&](std::int64_t i, const std::array<std::int64_t, 1>& off) {
        std::memcpy(o + i * es, s + (offset + off[0]) * es, static_cast<std::size_t>(es));
    });
    return y;
}

/// The values `xs` (one type, dims equal but along `axis`) joined along `axis` into a new value
/// of dims `out` (Concat, ConcatFromSequence).
inline value join(const values& xs, std::size_t axis, const shape& out) {
    value y = value::zeros(xs.at(0).type(), out);
    std::int64_t outer = 1;
    for (std::size_t k = 0; k < axis; ++k) outer *= out[k];
    const auto es = static_cast<std::int64_t>(size_of(y.type()));
    const std::int64_t row = element_count(out) / std::max<std::int64_t>(outer, 1) * es;
    std::byte* o = bytes_of(y);
    std::int64_t at = 0;
    for (const value& v0 : xs) {
        const value v = v0.dense_value();
        const std::int64_t piece = outer == 0 ? 0 : v.size() / outer * es;
        const std::byte* s = bytes_of(v);
        for (std::int64_t r = 0; r < outer && piece > 0; ++r) std::memcpy(o + r * row + at, s + r * piece, static_cast<std::size_t>(piece));
        at += piece;
    }
    return y;
}

/// `x` cut along `axis` into new values of dims `pieces` (dims equal to x's but along `axis`,
/// whose lengths add up to x's: Split, SplitToSequence).
inline values cut(const value& x0, std::size_t axis, const std::vector<ops::dims>& pieces) {
    const value x = x0.dense_value();
    std::int64_t outer = 1;
    for (std::size_t k = 0; k < axis; ++k) outer *= x.dims()[k];
    const auto es = static_cast<std::int64_t>(size_of(x.type()));
    const std::int64_t row = outer == 0 ? 0 : x.size() / outer * es;
    const std::byte* s = bytes_of(x);
    values r;
    std::int64_t at = 0;
    for (const auto& d : pieces) {
        value v = value::zeros(x.type(), d);
        const std::int64_t piece = outer == 0 ? 0 : v.size() / outer * es;
        std::byte* o = bytes_of(v);
        for (std::int64_t k = 0; k < outer && piece > 0; ++k) std::memcpy(o + k * piece, s + k * row + at, static_cast<std::size_t>(piece));
        at += piece;
        r.push_back(std::move(v));
    }
    return r;
}

// ---- conversions --------------------------------------------------------------------------

/// A real as an integer type: truncated, saturated at the type's range, NaN as 0.
template <class To, class From>
To convert(From v) {
    if constexpr (std::is_same_v<To, bool>) {
        return v != From{};
    } else if constexpr (std::is_integral_v<To> && std::is_floating_point_v<From>) {
        if (std::isnan(v)) return 0;
        if (v <= static_cast<From>(std::numeric_limits<To>::min())) return std::numeric_limits<To>::min();
        if (v >= static_cast<From>(std::numeric_limits<To>::max())) return std::numeric_limits<To>::max();
        return static_cast<To>(v);
    } else {
        return static_cast<To>(v);
    }
}

/// A real to IEEE half bits, rounded to nearest even from the double (no double rounding through
/// float); overflow to infinity, underflow through the subnormals to zero, NaN kept.
inline std::uint16_t half_bits(double v) {
    const auto sign = static_cast<std::uint16_t>(std::signbit(v) ? 0x8000u : 0u);
    const double a = std::fabs(v);
    if (std::isnan(v)) return static_cast<std::uint16_t>(sign | 0x7e00u);
    if (a >= 65520.0) return static_cast<std::uint16_t>(sign | 0x7c00u);  // from 65504 + half an ulp: infinity
    if (a < 0x1p-14)  // subnormal; may round up to the smallest normal, whose bits follow on
        return static_cast<std::uint16_t>(sign | static_cast<std::uint16_t>(std::nearbyint(a * 0x1p24)));
    int e = 0;
    const double f = std::frexp(a, &e);  // a = f 2^e, f in [0.5, 1)
    auto m = static_cast<std::uint32_t>(std::nearbyint((f * 2.0 - 1.0) * 1024.0));
    auto exp = static_cast<std::uint32_t>(e - 1 + 15);
    if (m == 1024) m = 0, ++exp;  // rounded up to the next power of two (65504 stays below infinity)
    return static_cast<std::uint16_t>(sign | (exp << 10) | m);
}
/// A float to bfloat16 bits, rounded to nearest even; NaN kept, quiet.
inline std::uint16_t bf16_bits(float v) {
    std::uint32_t bits;
    std::memcpy(&bits, &v, sizeof bits);
    if (std::isnan(v)) return static_cast<std::uint16_t>((bits >> 16) | 0x40u);
    bits += 0x7fffu + ((bits >> 16) & 1u);
    return static_cast<std::uint16_t>(bits >> 16);
}

/// `x` converted to `to` (every type sgmatch has, float16 and bfloat16 included: rounded to
/// nearest even).
inline value cast_to(const value& x0, dtype to) {
    const value x = x0.dense_value();
    if (x.type() == to) return x;
    value out = value::zeros(to, x.dims());
    const auto n = static_cast<std::size_t>(x.size());
    const bool from_half = x.type() == dtype::f16 || x.type() == dtype::bf16;
    if (to == dtype::f16 || to == dtype::bf16) {
        auto* o = static_cast<std::uint16_t*>(out.mutable_data());
        const const_tensor_view c = x.as_constant();  // every type read as double (int64 beyond 2^53 rounds, as half must)
        for (std::size_t i = 0; i < n; ++i) o[i] = to == dtype::f16 ? half_bits(c.at(i)) : bf16_bits(static_cast<float>(c.at(i)));
        return out;
    }
    bool from_known = true;
    const bool done = visit_any_type(to, [&](auto t) {
        using T = typename decltype(t)::type;
        T* o = out.as<T>();
        if (from_half) {
            const const_tensor_view c = x.as_constant();
            for (std::size_t i = 0; i < n; ++i) o[i] = convert<T>(static_cast<float>(c.at(i)));
            return;
        }
        from_known = visit_any_type(x.type(), [&](auto s) {
            using S = typename decltype(s)::type;
            const S* p = x.as<S>();
            for (std::size_t i = 0; i < n; ++i) o[i] = convert<T>(p[i]);
        });
    });
    if (!done || !from_known)
        throw value_error("sgmatch::exec: no conversion from " + std::string(name_of(x.type())) + " to " + std::string(name_of(to)));
    return out;
}

}  // namespace typed
}  // namespace exec
SGMATCH_END_NAMESPACE
