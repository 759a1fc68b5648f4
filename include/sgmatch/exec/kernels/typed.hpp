// sgmatch/exec/kernels/typed.hpp - kernels over typed values (exec::value): every element
// type, several outputs, parameters read at run time.
//
// Which ops have a typed kernel is each op's typed_kernels<Tag> facet (below and in the files
// this one includes); the list is exec::find_typed_kernel's table, derived from them, and each
// op's description says the element types its kernels take (op_schema::dtypes).
//
// The executor runs an op's typed kernel when the op has no fp32 kernel, when its data input is
// not f32, when an input computed at run time is not f32 (an int64 shape, a bool mask), or when
// the node has more outputs than the fp32 kernel computes; the fp32 kernels (reference or
// oneDNN) run everything else. Parameters (a Reshape's shape, Slice's starts, Gather's indices)
// are read from the values at run time, through the op's own shape rule.
//
// Integer arithmetic wraps around (two's complement), as ONNX Runtime's does; an integer
// division by zero is an error; a real cast to an integer saturates (NaN to 0).
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
#include <random>
#include <string>
#include <type_traits>
#include <unordered_map>
#include <utility>
#include <vector>

#include "sgmatch/detail/config.hpp"
#include "sgmatch/exec/error.hpp"
#include "sgmatch/exec/kernels/einsum.hpp"
#include "sgmatch/exec/kernels/losses.hpp"
#include "sgmatch/exec/kernels/max_pool.hpp"
#include "sgmatch/exec/kernels/positions.hpp"
#include "sgmatch/exec/kernels/quantize.hpp"
#include "sgmatch/exec/kernels/selection.hpp"
#include "sgmatch/exec/kernels/sequence.hpp"
#include "sgmatch/exec/kernels/signal.hpp"
#include "sgmatch/exec/kernels/text.hpp"
#include "sgmatch/exec/kernels/linalg.hpp"
#include "sgmatch/exec/kernels/recurrent.hpp"
#include "sgmatch/exec/kernels/reduce_typed.hpp"
#include "sgmatch/exec/kernels/resize.hpp"
#include "sgmatch/exec/kernels/typed_support.hpp"
#include "sgmatch/exec/kernels/vision.hpp"
#include "sgmatch/exec/value.hpp"
#include "sgmatch/ops/attrs.hpp"
#include "sgmatch/ops/elementwise.hpp"
#include "sgmatch/ops/nn.hpp"
#include "sgmatch/ops/optional.hpp"
#include "sgmatch/ops/shape_rules.hpp"
#include "sgmatch/ops/table.hpp"
#include "sgmatch/ops/tensor.hpp"

SGMATCH_BEGIN_NAMESPACE
namespace exec {
namespace typed {

// ---- element-wise -------------------------------------------------------------------------

// Mod's two meanings: mod takes the divisor's sign (Python's %), fmod the dividend's (C's).
enum class binop { add, sub, mul, div, pow, mod, fmod, max, min, equal, less, greater, less_equal, greater_equal, logical_and, logical_or, logical_xor };

template <class T>
bool compare(binop k, T a, T b) {
    switch (k) {
        case binop::equal: return a == b;
        case binop::less: return a < b;
        case binop::greater: return a > b;
        case binop::less_equal: return a <= b;
        case binop::greater_equal: return a >= b;
        case binop::logical_and: return a && b;
        case binop::logical_or: return a || b;
        case binop::logical_xor: return a != b;
        default: return false;
    }
}

template <class T>
T arith(binop k, T a, T b, const ops::op_attrs& at) {
    switch (k) {
        case binop::add: return wrap(a, b, [](auto p, auto q) { return p + q; });
        case binop::sub: return wrap(a, b, [](auto p, auto q) { return p - q; });
        case binop::mul: return wrap(a, b, [](auto p, auto q) { return p * q; });
        case binop::div:
            if constexpr (std::is_integral_v<T>) {
                if (b == 0) fail(at, "integer division by zero");
                if constexpr (std::is_signed_v<T>)
                    if (a == std::numeric_limits<T>::min() && b == T(-1)) return a;  // wraps
            }
            return static_cast<T>(a / b);
        case binop::mod:
        case binop::fmod:
            if constexpr (std::is_integral_v<T>) {
                if (b == 0) fail(at, "integer modulo by zero");
                if constexpr (std::is_signed_v<T>)
                    if (b == T(-1)) return T{0};  // also min % -1, which overflows in C++
                T r = static_cast<T>(a % b);
                if (k == binop::mod && r != 0 && ((r < 0) != (b < 0))) r = static_cast<T>(r + b);
                return r;
            } else {
                if (k == binop::mod) fail(at, "fmod 0 on real values (ONNX defines Mod of reals with fmod 1)");
                return static_cast<T>(std::fmod(a, b));
            }
        case binop::max:  // a NaN wins, as numpy's maximum and minimum
            if constexpr (std::is_floating_point_v<T>)
                if (std::isnan(a)) return a;
            return a > b ? a : b;
        case binop::min:
            if constexpr (std::is_floating_point_v<T>)
                if (std::isnan(a)) return a;
            return a < b ? a : b;
        default: return T{};
    }
}

inline value binary(const value& x0, const value& y0, binop k, const ops::op_attrs& a) {
    const value x = x0.dense_value(), y = y0.dense_value();
    const bool cmp = k >= binop::equal;
    if (k != binop::pow && x.type() != y.type())
        fail(a, "inputs of types " + std::string(name_of(x.type())) + " and " + std::string(name_of(y.type())) + " (the same type expected)");
    require_type(a, x);
    const shape out_dims = ops::rules::broadcast(a, x.dims(), y.dims());
    value out = value::zeros(cmp ? dtype::boolean : x.type(), out_dims);
    const std::array<shape, 2> st{broadcast_strides(x.dims(), out_dims), broadcast_strides(y.dims(), out_dims)};
    visit_any_type(x.type(), [&](auto t) {
        using T = typename decltype(t)::type;
        const T* p = x.as<T>();
        if (k == binop::pow) {
            const value yd = cast_to(y, dtype::f64);
            const double* q = yd.as<double>();
            T* o = out.as<T>();
            nd_loop<2>(out_dims, st, [&](std::int64_t i, const std::array<std::int64_t, 2>& off) {
                o[i] = convert<T>(std::pow(static_cast<double>(p[off[0]]), q[off[1]]));
            });
            return;
        }
        const T* q = y.as<T>();
        if (cmp) {
            bool* o = out.as<bool>();
            nd_loop<2>(out_dims, st, [&](std::int64_t i, const std::array<std::int64_t, 2>& off) { o[i] = compare<T>(k, p[off[0]], q[off[1]]); });
        } else if constexpr (!std::is_same_v<T, bool>) {
            T* o = out.as<T>();
            nd_loop<2>(out_dims, st, [&](std::int64_t i, const std::array<std::int64_t, 2>& off) { o[i] = arith<T>(k, p[off[0]], q[off[1]], a); });
        }
    });
    return out;
}

template <binop K>
typed_fn binary_kernel(const ops::op_attrs& a0, const ops::node_source&) {
    return [a = a0](const values& x) { return values{binary(in(x, 0, a), in(x, 1, a), K, a)}; };
}

/// f(x) for ops whose result on float16 or bfloat16 values is such a value again (a maximum, a
/// minimum, a remainder: nothing to round), computed on the values widened to f32 and narrowed back.
template <class F>
values widening_halves(const values& x, F&& f) {
    const dtype t = x.empty() ? dtype::unknown : x[0].type();
    if (t != dtype::f16 && t != dtype::bf16) return f(x);
    values wide;
    for (const value& v : x) wide.push_back(v.type() == t ? cast_to(v, dtype::f32) : v);  // another type: refused by f
    values out = f(wide);
    for (value& v : out) v = cast_to(v, t);
    return out;
}

/// Max and Min of one or more inputs (numpy broadcasting), on the numeric types other than f32.
template <binop K>
typed_fn variadic_kernel(const ops::op_attrs& a0, const ops::node_source&) {
    return [a = a0](const values& xs) {
        return widening_halves(xs, [&](const values& x) {
            value out = in(x, 0, a).dense_value();
            require_type(a, out);
            for (std::size_t i = 1; i < x.size(); ++i) out = binary(out, x[i], K, a);
            return values{out};
        });
    };
}

inline typed_fn mod(const ops::op_attrs& a0, const ops::node_source&) {
    return [a = a0, k = a0.i("fmod") != 0 ? binop::fmod : binop::mod](const values& xs) {
        return widening_halves(xs, [&](const values& x) { return values{binary(in(x, 0, a), in(x, 1, a), k, a)}; });
    };
}

/// BitShift on the unsigned integers: X << Y or X >> Y (both of one type), numpy broadcasting;
/// a shift by the type's width or more gives 0.
inline typed_fn bit_shift(const ops::op_attrs& a0, const ops::node_source&) {
    return [a = a0, left = a0.s("direction") == "LEFT"](const values& xs) {
        const value x = in(xs, 0, a).dense_value(), y = in(xs, 1, a).dense_value();
        if (x.type() != y.type())
            fail(a, "inputs of types " + std::string(name_of(x.type())) + " and " + std::string(name_of(y.type())) + " (the same type expected)");
        require_type(a, x);
        const shape out_dims = ops::rules::broadcast(a, x.dims(), y.dims());
        value out = value::zeros(x.type(), out_dims);
        visit_any_type(x.type(), [&](auto t) {
            using T = typename decltype(t)::type;
            if constexpr (std::is_unsigned_v<T> && !std::is_same_v<T, bool>) {
                using W = std::common_type_t<unsigned, T>;  // shifted without promotion to int
                const T* p = x.as<T>();
                const T* q = y.as<T>();
                T* o = out.as<T>();
                const std::array<shape, 2> st{broadcast_strides(x.dims(), out_dims), broadcast_strides(y.dims(), out_dims)};
                nd_loop<2>(out_dims, st, [&](std::int64_t i, const std::array<std::int64_t, 2>& off) {
                    const W v = p[off[0]], by = q[off[1]];
                    o[i] = by >= 8 * sizeof(T) ? T{0} : static_cast<T>(left ? v << by : v >> by);
                });
            }
        });
        return values{out};
    };
}

enum class unop { neg, abs, logical_not };

template <unop K>
typed_fn unary_kernel(const ops::op_attrs& a0, const ops::node_source&) {
    return [a = a0](const values& xs) {
        const value x = in(xs, 0, a).dense_value();
        require_type(a, x);
        value out = value::zeros(x.type(), x.dims());
        const auto n = static_cast<std::size_t>(x.size());
        visit_type(x.type(), [&](auto t) {
            using T = typename decltype(t)::type;
            const T* p = x.as<T>();
            T* o = out.as<T>();
            for (std::size_t i = 0; i < n; ++i) {
                if constexpr (std::is_same_v<T, bool>) {
                    o[i] = !p[i];
                } else if constexpr (K == unop::neg) {
                    o[i] = wrap(T{0}, p[i], [](auto u, auto v) { return u - v; });
                } else if constexpr (std::is_unsigned_v<T>) {
                    o[i] = p[i];
                } else {
                    o[i] = p[i] < T{0} ? wrap(T{0}, p[i], [](auto u, auto v) { return u - v; }) : p[i];
                }
            }
        });
        return values{out};
    };
}

/// What IsNaN and IsInf detect.
enum class value_class { nan, inf };

/// IsNaN, and IsInf (detect_negative, detect_positive): bool results of f32 or f64 values.
template <value_class C>
typed_fn classify(const ops::op_attrs& a0, const ops::node_source&) {
    bool neg = false, pos = false;  // IsInf: which infinities count
    if (C == value_class::inf) neg = a0.i("detect_negative") != 0, pos = a0.i("detect_positive") != 0;
    return [a = a0, neg, pos](const values& xs) {
        const value x = in(xs, 0, a).dense_value();
        require_type(a, x);  // f32 or f64
        value out = value::zeros(dtype::boolean, x.dims());
        bool* o = out.as<bool>();
        const const_tensor_view c = x.as_constant();
        for (std::size_t i = 0, n = static_cast<std::size_t>(x.size()); i < n; ++i) {
            const double v = c.at(i);
            o[i] = C == value_class::inf ? std::isinf(v) && (v < 0 ? neg : pos) : std::isnan(v);
        }
        return values{out};
    };
}

/// Clip on the numeric types other than f32 (whose kernels are the reference and oneDNN ones):
/// the bounds are inputs 1 and 2, of the data's type (absent or empty: no bound), or the
/// attributes before opset 11 (saturated into the type); a NaN stays NaN.
inline typed_fn clip(const ops::op_attrs& a0, const ops::node_source&) {
    return [a = a0](const values& xs) {
        const value x = in(xs, 0, a).dense_value();
        require_type(a, x);
        value out = value::zeros(x.type(), x.dims());
        visit_type(x.type(), [&](auto t) {
            using T = typename decltype(t)::type;
            if constexpr (!std::is_same_v<T, bool>) {
                constexpr T lowest = std::numeric_limits<T>::has_infinity ? -std::numeric_limits<T>::infinity() : std::numeric_limits<T>::lowest();
                constexpr T highest = std::numeric_limits<T>::has_infinity ? std::numeric_limits<T>::infinity() : std::numeric_limits<T>::max();
                T b[2] = {a.has("min") ? convert<T>(a.f("min")) : lowest, a.has("max") ? convert<T>(a.f("max")) : highest};
                for (std::size_t slot = 1; slot < 3 && slot < xs.size(); ++slot) {
                    if (xs[slot].size() == 0) continue;
                    if (xs[slot].size() != 1 || xs[slot].type() != x.type())
                        fail(a, "the bound on input " + std::to_string(slot) + " is " + std::string(name_of(xs[slot].type())) + " " +
                                    to_string(xs[slot].dims()) + ", not one " + std::string(name_of(x.type())) + " value");
                    const value bound = xs[slot].dense_value();
                    b[slot - 1] = bound.as<T>()[0];
                }
                const T* p = x.as<T>();
                T* o = out.as<T>();
                for (std::int64_t i = 0, n = x.size(); i < n; ++i) o[i] = p[i] < b[0] ? b[0] : p[i] > b[1] ? b[1] : p[i];
            }
        });
        return values{out};
    };
}

inline typed_fn where(const ops::op_attrs& a0, const ops::node_source&) {
    return [a = a0](const values& xs) {
        const value cond = in(xs, 0, a).dense_value(), x = in(xs, 1, a).dense_value(), y = in(xs, 2, a).dense_value();
        if (cond.type() != dtype::boolean) fail(a, "the condition is " + std::string(name_of(cond.type())) + ", not bool");
        if (x.type() != y.type()) fail(a, "X and Y of types " + std::string(name_of(x.type())) + " and " + std::string(name_of(y.type())));
        const shape out_dims = rule(a, xs).at(0);
        value out = value::zeros(x.type(), out_dims);
        const std::size_t es = size_of(x.type());
        const std::array<shape, 3> st{broadcast_strides(cond.dims(), out_dims), broadcast_strides(x.dims(), out_dims),
                                      broadcast_strides(y.dims(), out_dims)};
        const bool* k = cond.as<bool>();
        std::byte* o = bytes_of(out);
        const std::byte *p = bytes_of(x), *q = bytes_of(y);
        nd_loop<3>(out_dims, st, [&](std::int64_t i, const std::array<std::int64_t, 3>& off) {
            std::memcpy(o + i * static_cast<std::int64_t>(es), (k[off[0]] ? p + off[1] * static_cast<std::int64_t>(es) : q + off[2] * static_cast<std::int64_t>(es)), es);
        });
        return values{out};
    };
}

// ---- data movement ------------------------------------------------------------------------

/// Reshape, Unsqueeze, Squeeze, Flatten: the same data under the dims the op's rule gives.
inline typed_fn same_data(const ops::op_attrs& a0, const ops::node_source&) {
    return [a = a0](const values& x) { return values{in(x, 0, a).reshaped(rule(a, x).at(0))}; };
}

inline typed_fn identity(const ops::op_attrs& a0, const ops::node_source&) {
    return [a = a0](const values& x) { return values{in(x, 0, a)}; };
}

// ---- optionals (ops/optional.hpp) -----------------------------------------------------------

/// Optional: its input (an optional holding a value is that value), or an empty optional of the
/// type the `type` attribute names.
inline typed_fn optional(const ops::op_attrs& a0, const ops::node_source& node) {
    if (node.input_count() > 0) return identity(a0, node);
    if (!a0.has("type")) refuse(a0, "without an input, the type attribute must say what the empty optional is of");
    const auto t = ops::parse_type_notation(a0.s("type"));
    if (!t || t->optional) refuse(a0, "type '" + std::string(a0.s("type")) + "' is not a tensor or a sequence of tensors of a type sgmatch has");
    return [t = *t](const values&) { return values{value::none(t.type, t.sequence)}; };
}
/// OptionalHasElement: a bool scalar, false for an empty optional or an absent input.
inline typed_fn optional_has_element(const ops::op_attrs&, const ops::node_source&) {
    return [](const values& x) { return values{value::of<bool>({}, {!x.empty() && !x[0].is_none()})}; };
}
/// OptionalGetElement: the value an optional holds; an error for an empty one.
inline typed_fn optional_get_element(const ops::op_attrs& a0, const ops::node_source&) {
    return [a = a0](const values& x) {
        if (in(x, 0, a).is_none()) fail(a, "the optional is empty");
        return values{x[0]};
    };
}

/// Dropout's keep mask in training: element i is kept when the i-th draw of a Mersenne Twister
/// (MT19937) seeded with `seed`, as a double in [0, 1) made of 53 random bits from two 32-bit
/// outputs, is at least `ratio`. These are numpy's draws: with the same seed, the mask of
/// `np.random.seed(seed); np.random.uniform(0, 1, n) >= ratio`, which is how ONNX's reference
/// computes Dropout, so a seeded node reproduces it. Written to keep[0, n).
inline void dropout_keep(std::uint32_t seed, double ratio, bool* keep, std::size_t n) {
    std::mt19937 g(seed);
    for (std::size_t i = 0; i < n; ++i) {
        const std::uint32_t hi = static_cast<std::uint32_t>(g()) >> 5, lo = static_cast<std::uint32_t>(g()) >> 6;
        keep[i] = (hi * 67108864.0 + lo) / 9007199254740992.0 >= ratio;
    }
}

/// Dropout: in inference (no training_mode, or false, or a ratio of 0) the data and a mask of
/// all true. In training, each element is kept with probability 1 - ratio and scaled by
/// 1 / (1 - ratio), the others are 0; the mask says which were kept. With a `seed` attribute the
/// mask is the same on every run (dropout_keep: its low 32 bits seed the generator); without,
/// each run draws a new seed. A ratio outside [0, 1) is an error naming the node.
inline typed_fn dropout(const ops::op_attrs& a0, const ops::node_source&) {
    const std::optional<std::int64_t> seed = a0.has("seed") ? std::optional<std::int64_t>(a0.i("seed")) : std::nullopt;
    return [a = a0, seed](const values& x) {
        double ratio = 0;
        if (x.size() > 2) {
            const auto training = x[2].dense_value().as_constant().scalar();
            const auto r = x[1].size() == 0 ? std::optional<double>(0.5) : x[1].dense_value().as_constant().scalar();
            if (!training || !r) fail(a, "training_mode and ratio must hold one value each");
            if (*training != 0) ratio = *r;
            if (!(ratio >= 0 && ratio < 1)) fail(a, "ratio " + std::to_string(ratio) + " is outside [0, 1)");
        }
        const value& d = in(x, 0, a);
        value mask = value::zeros(dtype::boolean, d.dims());
        const auto n = static_cast<std::size_t>(mask.size());
        if (ratio == 0) {
            std::fill_n(mask.as<bool>(), n, true);
            values out{d};
            if (a.outputs() > 1) out.push_back(mask);
            return out;
        }
        dropout_keep(seed ? static_cast<std::uint32_t>(*seed) : static_cast<std::uint32_t>(std::random_device{}()), ratio, mask.as<bool>(), n);
        const bool* keep = std::as_const(mask).as<bool>();
        const dtype t = d.type();
        if (t != dtype::f32 && t != dtype::f64 && t != dtype::f16 && t != dtype::bf16)
            fail(a, "training on " + std::string(name_of(t)) + " data (float types only)");
        value y = t == dtype::f32 || t == dtype::f64 ? d.clone() : cast_to(d, dtype::f32);  // written below
        visit_type(y.type(), [&](auto e) {
            using T = typename decltype(e)::type;
            if constexpr (std::is_floating_point_v<T>) {
                const T scale = static_cast<T>(1 / (1 - ratio));
                T* p = y.as<T>();
                for (std::size_t i = 0; i < n; ++i) p[i] = keep[i] ? p[i] * scale : T(0);
            }
        });
        values out{cast_to(y, t)};
        if (a.outputs() > 1) out.push_back(mask);
        return out;
    };
}

inline typed_fn transpose(const ops::op_attrs& a0, const ops::node_source&) {
    return [a = a0](const values& xs) {
        const value x = in(xs, 0, a).dense_value();
        const ops::dims p = ops::rules::perm_of(a, x.rank());
        const shape out_dims = rule(a, xs).at(0);
        const shape src = value::dense_strides(x.dims());
        shape st(p.size());
        for (std::size_t k = 0; k < p.size(); ++k) st[k] = src[static_cast<std::size_t>(p[k])];
        return values{strided_copy(x, out_dims, st, out_dims)};
    };
}

inline typed_fn concat(const ops::op_attrs& a0, const ops::node_source&) {
    return [a = a0](const values& xs) {
        const shape out_dims = rule(a, xs).at(0);
        const std::size_t ax = ops::rules::axis(a, a.i("axis"), out_dims.size());
        const dtype t = in(xs, 0, a).type();
        for (const value& v : xs)
            if (v.type() != t) fail(a, "inputs of types " + std::string(name_of(t)) + " and " + std::string(name_of(v.type())));
        return values{join(xs, ax, out_dims)};
    };
}

inline typed_fn slice(const ops::op_attrs& a0, const ops::node_source&) {
    return [a = a0](const values& xs) {
        const value x = in(xs, 0, a).dense_value();
        const shape out_dims = rule(a, xs).at(0);
        const ops::rules::slice_params p = ops::rules::slice_params_of(shapes_of(xs), a);
        const shape src = value::dense_strides(x.dims());
        shape st = src;
        std::int64_t base = 0;
        for (std::size_t k = 0; k < p.axes.size(); ++k) {
            const auto ax = static_cast<std::size_t>(p.axes[k]);
            const std::int64_t dim = x.dims()[ax], step = p.steps[k], start = p.starts[k];
            // The first index taken: ONNX's clamping into [0, dim] (positive steps) or [0, dim - 1]
            // (negative), as in the shape rule.
            if (out_dims[ax] > 0) {  // then dim >= 1
                std::int64_t s = start < 0 ? start + dim : start;
                s = step > 0 ? std::clamp<std::int64_t>(s, 0, dim) : std::clamp<std::int64_t>(s, 0, dim - 1);
                base += s * src[ax];
            }
            st[ax] = src[ax] * step;
        }
        return values{strided_copy(x, out_dims, st, out_dims, base)};
    };
}

inline typed_fn gather(const ops::op_attrs& a0, const ops::node_source&) {
    return [a = a0](const values& xs) {
        const value x = in(xs, 0, a).dense_value(), ind = in(xs, 1, a).dense_value();
        if (ind.type() != dtype::i64 && ind.type() != dtype::i32)
            fail(a, "indices of type " + std::string(name_of(ind.type())) + " (int64 or int32 expected)");
        const shape out_dims = rule(a, xs).at(0);
        const std::size_t ax = ops::rules::axis(a, a.i("axis"), x.rank());
        const std::int64_t dim = x.dims()[ax];
        std::int64_t outer = 1, inner = 1;
        for (std::size_t k = 0; k < ax; ++k) outer *= x.dims()[k];
        for (std::size_t k = ax + 1; k < x.rank(); ++k) inner *= x.dims()[k];
        const std::vector<std::int64_t> idx = ind.to_ints();
        const auto es = static_cast<std::int64_t>(size_of(x.type()));
        value out = value::zeros(x.type(), out_dims);
        std::byte* o = bytes_of(out);
        const std::byte* s = bytes_of(x);
        const std::int64_t block = inner * es;
        for (std::int64_t r = 0; r < outer; ++r)
            for (std::size_t j = 0; j < idx.size(); ++j) {
                std::int64_t i = idx[j];
                if (i < -dim || i >= dim) fail(a, "index " + std::to_string(i) + " is out of range for axis " + std::to_string(ax) + " of size " + std::to_string(dim));
                if (i < 0) i += dim;
                std::memcpy(o + (r * static_cast<std::int64_t>(idx.size()) + static_cast<std::int64_t>(j)) * block,
                            s + (r * dim + i) * block, static_cast<std::size_t>(block));
            }
        return values{out};
    };
}

inline typed_fn expand(const ops::op_attrs& a0, const ops::node_source&) {
    return [a = a0](const values& xs) {
        const value x = in(xs, 0, a).dense_value();
        const shape out_dims = rule(a, xs).at(0);
        return values{strided_copy(x, out_dims, broadcast_strides(x.dims(), out_dims), out_dims)};
    };
}

inline typed_fn split(const ops::op_attrs& a0, const ops::node_source&) {
    return [a = a0](const values& xs) {
        const value& x = in(xs, 0, a);
        return cut(x, ops::rules::axis(a, a.i("axis"), x.rank()), rule(a, xs));
    };
}

// ---- normalization ------------------------------------------------------------------------

/// LayerNorm with its optional outputs, the mean and the inverse standard deviation over the
/// normalized axes (float, computed in double).
inline typed_fn layer_norm(const ops::op_attrs& a0, const ops::node_source&) {
    return [a = a0](const values& xs) {
        const value x = cast_to(in(xs, 0, a), dtype::f64), scale = cast_to(in(xs, 1, a), dtype::f64);
        const value bias = xs.size() > 2 ? cast_to(xs[2], dtype::f64) : value::zeros(dtype::f64, {});
        if (x.type() != dtype::f64 || in(xs, 0, a).type() != dtype::f32) fail(a, "the data is not float");
        const std::vector<ops::dims> shapes = rule(a, xs);
        const std::size_t ax = ops::rules::axis(a, a.i("axis"), x.rank());
        std::int64_t outer = 1, inner = 1;
        for (std::size_t k = 0; k < x.rank(); ++k) (k < ax ? outer : inner) *= x.dims()[k];
        const shape norm(x.dims().begin() + static_cast<std::ptrdiff_t>(ax), x.dims().end());
        const shape ss = broadcast_strides(scale.dims(), norm), bs = broadcast_strides(bias.dims(), norm);
        // The scale's and bias's element for each normalized element.
        std::vector<double> sc(static_cast<std::size_t>(inner)), bi(static_cast<std::size_t>(inner));
        const double *sp = scale.as<double>(), *bp = bias.as<double>();
        nd_loop<2>(norm, std::array<shape, 2>{ss, bs}, [&](std::int64_t i, const std::array<std::int64_t, 2>& off) {
            sc[static_cast<std::size_t>(i)] = sp[off[0]];
            bi[static_cast<std::size_t>(i)] = bp[off[1]];
        });
        value y = value::zeros(dtype::f32, shapes.at(0)), mean = value::zeros(dtype::f32, shapes.at(1)),
              inv = value::zeros(dtype::f32, shapes.at(2));
        const double eps = a.f("epsilon");
        const double* p = x.as<double>();
        float *yo = y.as<float>(), *mo = mean.as<float>(), *io = inv.as<float>();
        for (std::int64_t o = 0; o < outer; ++o) {
            const double* row = p + o * inner;
            double m = 0, v = 0;
            for (std::int64_t i = 0; i < inner; ++i) m += row[i];
            m /= static_cast<double>(std::max<std::int64_t>(inner, 1));
            for (std::int64_t i = 0; i < inner; ++i) v += (row[i] - m) * (row[i] - m);
            v /= static_cast<double>(std::max<std::int64_t>(inner, 1));
            const double r = 1.0 / std::sqrt(v + eps);
            for (std::int64_t i = 0; i < inner; ++i)
                yo[o * inner + i] = static_cast<float>((row[i] - m) * r * sc[static_cast<std::size_t>(i)] + bi[static_cast<std::size_t>(i)]);
            mo[o] = static_cast<float>(m);
            io[o] = static_cast<float>(r);
        }
        return values{y, mean, inv};
    };
}

// ---- shapes and constants -----------------------------------------------------------------

inline typed_fn shape_of(const ops::op_attrs& a0, const ops::node_source&) {
    return [a = a0](const values& xs) {
        const value& x = in(xs, 0, a);
        const auto [b, e] = ops::rules::shape_range(a, x.rank());
        return values{value::of<std::int64_t>({static_cast<std::int64_t>(e - b)},
                                               std::vector<std::int64_t>(x.dims().begin() + static_cast<std::ptrdiff_t>(b),
                                                                         x.dims().begin() + static_cast<std::ptrdiff_t>(e)))};
    };
}

inline typed_fn size_of_value(const ops::op_attrs& a0, const ops::node_source&) {
    return [a = a0](const values& xs) { return values{value::of<std::int64_t>({}, {in(xs, 0, a).size()})}; };
}

inline typed_fn constant_of_shape(const ops::op_attrs& a0, const ops::node_source&) {
    const dtype t = ops::output_type(a0, {});
    if (t == dtype::unknown || t == dtype::f16 || t == dtype::bf16)
        refuse(a0, "a value of element type code " + std::to_string(a0.i("dtype")) + ", which the kernels do not make");
    const double v = a0.has("value") ? a0.reals("value").at(0) : 0.0;
    return [a = a0, t, v](const values& xs) {
        if (in(xs, 0, a).type() != dtype::i64) fail(a, "the shape is " + std::string(name_of(xs[0].type())) + ", not int64");
        value out = value::zeros(t, rule(a, xs).at(0));
        visit_type(t, [&](auto k) {
            using T = typename decltype(k)::type;
            std::fill_n(out.as<T>(), static_cast<std::size_t>(out.size()), convert<T>(v));
        });
        return values{out};
    };
}

inline typed_fn cast(const ops::op_attrs& a0, const ops::node_source&) {
    const dtype t = ops::output_type(a0, {});
    if (t == dtype::unknown) refuse(a0, "Cast to element type code " + std::to_string(a0.i("to")) + ": the kernels do not make it");
    return [a = a0, t](const values& xs) { return values{cast_to(in(xs, 0, a), t)}; };
}

/// CastLike: input 0 as the element type of input 1.
inline typed_fn cast_like(const ops::op_attrs& a0, const ops::node_source&) {
    return [a = a0](const values& xs) {
        return values{cast_to(in(xs, 0, a), in(xs, 1, a).type())};
    };
}

}  // namespace typed

namespace kernels {

// The typed_kernels<Tag> facets of the ops whose typed kernels are in this header (the other
// families' are in theirs).
template <> inline constexpr typed_binding typed_kernels<ops::Add>{typed::binary_kernel<typed::binop::add>};
template <> inline constexpr typed_binding typed_kernels<ops::Sub>{typed::binary_kernel<typed::binop::sub>};
template <> inline constexpr typed_binding typed_kernels<ops::Mul>{typed::binary_kernel<typed::binop::mul>};
template <> inline constexpr typed_binding typed_kernels<ops::Div>{typed::binary_kernel<typed::binop::div>};
template <> inline constexpr typed_binding typed_kernels<ops::Pow>{typed::binary_kernel<typed::binop::pow>};
template <> inline constexpr typed_binding typed_kernels<ops::Equal>{typed::binary_kernel<typed::binop::equal>};
template <> inline constexpr typed_binding typed_kernels<ops::Less>{typed::binary_kernel<typed::binop::less>};
template <> inline constexpr typed_binding typed_kernels<ops::Greater>{typed::binary_kernel<typed::binop::greater>};
template <> inline constexpr typed_binding typed_kernels<ops::LessOrEqual>{typed::binary_kernel<typed::binop::less_equal>};
template <> inline constexpr typed_binding typed_kernels<ops::GreaterOrEqual>{typed::binary_kernel<typed::binop::greater_equal>};
template <> inline constexpr typed_binding typed_kernels<ops::And>{typed::binary_kernel<typed::binop::logical_and>};
template <> inline constexpr typed_binding typed_kernels<ops::Or>{typed::binary_kernel<typed::binop::logical_or>};
template <> inline constexpr typed_binding typed_kernels<ops::Xor>{typed::binary_kernel<typed::binop::logical_xor>};
template <> inline constexpr typed_binding typed_kernels<ops::Neg>{typed::unary_kernel<typed::unop::neg>};
template <> inline constexpr typed_binding typed_kernels<ops::Abs>{typed::unary_kernel<typed::unop::abs>};
template <> inline constexpr typed_binding typed_kernels<ops::Not>{typed::unary_kernel<typed::unop::logical_not>};
template <> inline constexpr typed_binding typed_kernels<ops::Where>{typed::where};
template <> inline constexpr typed_binding typed_kernels<ops::LayerNorm>{typed::layer_norm};
template <> inline constexpr typed_binding typed_kernels<ops::Identity>{typed::identity};
template <> inline constexpr typed_binding typed_kernels<ops::Dropout>{typed::dropout};
template <> inline constexpr typed_binding typed_kernels<ops::Optional>{typed::optional};
template <> inline constexpr typed_binding typed_kernels<ops::OptionalHasElement>{typed::optional_has_element};
template <> inline constexpr typed_binding typed_kernels<ops::OptionalGetElement>{typed::optional_get_element};
template <> inline constexpr typed_binding typed_kernels<ops::Reshape>{typed::same_data};
template <> inline constexpr typed_binding typed_kernels<ops::Unsqueeze>{typed::same_data};
template <> inline constexpr typed_binding typed_kernels<ops::Squeeze>{typed::same_data};
template <> inline constexpr typed_binding typed_kernels<ops::Flatten>{typed::same_data};
template <> inline constexpr typed_binding typed_kernels<ops::Transpose>{typed::transpose};
template <> inline constexpr typed_binding typed_kernels<ops::Concat>{typed::concat};
template <> inline constexpr typed_binding typed_kernels<ops::Slice>{typed::slice};
template <> inline constexpr typed_binding typed_kernels<ops::Gather>{typed::gather};
template <> inline constexpr typed_binding typed_kernels<ops::Expand>{typed::expand};
template <> inline constexpr typed_binding typed_kernels<ops::Split>{typed::split};
template <> inline constexpr typed_binding typed_kernels<ops::Shape>{typed::shape_of};
template <> inline constexpr typed_binding typed_kernels<ops::Size>{typed::size_of_value};
template <> inline constexpr typed_binding typed_kernels<ops::ConstantOfShape>{typed::constant_of_shape};
template <> inline constexpr typed_binding typed_kernels<ops::Cast>{typed::cast};
template <> inline constexpr typed_binding typed_kernels<ops::Mod>{typed::mod};
template <> inline constexpr typed_binding typed_kernels<ops::BitShift>{typed::bit_shift};
template <> inline constexpr typed_binding typed_kernels<ops::IsNaN>{typed::classify<typed::value_class::nan>};
template <> inline constexpr typed_binding typed_kernels<ops::IsInf>{typed::classify<typed::value_class::inf>};
template <> inline constexpr typed_binding typed_kernels<ops::CastLike>{typed::cast_like};
template <> inline constexpr typed_binding typed_kernels<ops::Clip>{typed::clip};
template <> inline constexpr typed_binding typed_kernels<ops::Max>{typed::variadic_kernel<typed::binop::max>};
template <> inline constexpr typed_binding typed_kernels<ops::Min>{typed::variadic_kernel<typed::binop::min>};

}  // namespace kernels

/// The typed kernel of the op described by `s`, or null.
inline const typed_binding* find_typed_kernel(const ops::op_schema* s) {
    static const auto by_schema = ops::facet_table<const typed_binding*>([](auto tag) -> const typed_binding* {
        if constexpr (ops::has_facet_v<decltype(kernels::typed_kernels<decltype(tag)>)>) return &kernels::typed_kernels<decltype(tag)>;
        return nullptr;
    });
    const auto it = by_schema.find(s);
    return it == by_schema.end() ? nullptr : it->second;
}

}  // namespace exec
SGMATCH_END_NAMESPACE
