// sgmatch/graph/types.hpp - the small value types the adapter contract speaks in.
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <initializer_list>
#include <memory>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>
#include <type_traits>
#include <utility>
#include <vector>

#include "sgmatch/detail/config.hpp"

SGMATCH_BEGIN_NAMESPACE

/// What a node of a user graph is, as far as patterns care.
/// `op` nodes compute; `input` nodes are graph inputs (placeholders); `constant` nodes hold
/// initializers / parameters. Inputs and constants have no inputs of their own.
enum class node_kind : std::uint8_t { op, input, constant };

/// One value of the graph: output `port` of `node`.
template <class Node>
struct value_ref {
    Node node{};
    std::uint32_t port = 0;

    friend bool operator==(const value_ref& a, const value_ref& b) {
        return a.node == b.node && a.port == b.port;
    }
    friend bool operator!=(const value_ref& a, const value_ref& b) { return !(a == b); }
};

/// One use of a node's output: `user` reads output `port` on its input `slot`.
template <class Node>
struct use {
    Node user{};
    std::uint32_t slot = 0;
    std::uint32_t port = 0;
};

/// Element types a shape-aware adapter may report.
enum class dtype : std::uint8_t { unknown, f32, f16, bf16, f64, i8, u8, i32, i64, boolean, i16, u16, u32, u64 };

/// Bytes per element (0 for unknown).
constexpr std::size_t size_of(dtype t) {
    switch (t) {
        case dtype::f64:
        case dtype::i64:
        case dtype::u64: return 8;
        case dtype::f32:
        case dtype::i32:
        case dtype::u32: return 4;
        case dtype::f16:
        case dtype::bf16:
        case dtype::i16:
        case dtype::u16: return 2;
        case dtype::i8:
        case dtype::u8:
        case dtype::boolean: return 1;
        case dtype::unknown: break;
    }
    return 0;
}

/// The name of an element type, as ONNX spells it in messages ("float", "int64", ...).
constexpr std::string_view name_of(dtype t) {
    switch (t) {
        case dtype::f32: return "float";
        case dtype::f16: return "float16";
        case dtype::bf16: return "bfloat16";
        case dtype::f64: return "double";
        case dtype::i8: return "int8";
        case dtype::u8: return "uint8";
        case dtype::i32: return "int32";
        case dtype::i64: return "int64";
        case dtype::boolean: return "bool";
        case dtype::i16: return "int16";
        case dtype::u16: return "uint16";
        case dtype::u32: return "uint32";
        case dtype::u64: return "uint64";
        case dtype::unknown: break;
    }
    return "unknown";
}

namespace detail {
// IEEE half and bfloat16 bits to float.
inline float half_to_float(std::uint16_t h) {
    const std::uint32_t sign = (h & 0x8000u) << 16, exp = (h >> 10) & 0x1f, man = h & 0x3ff;
    std::uint32_t bits;
    if (exp == 0) {
        if (man == 0) {
            bits = sign;
        } else {  // subnormal: normalize
            std::uint32_t e = 127 - 15 + 1, m = man;
            while ((m & 0x400u) == 0) {
                m <<= 1;
                --e;
            }
            bits = sign | (e << 23) | ((m & 0x3ffu) << 13);
        }
    } else if (exp == 31) {
        bits = sign | 0x7f800000u | (man << 13);
    } else {
        bits = sign | ((exp + 127 - 15) << 23) | (man << 13);
    }
    float f;
    std::memcpy(&f, &bits, sizeof f);
    return f;
}
inline float bf16_to_float(std::uint16_t h) {
    const std::uint32_t bits = std::uint32_t{h} << 16;
    float f;
    std::memcpy(&f, &bits, sizeof f);
    return f;
}
}  // namespace detail

class graph;

/// A graph-valued attribute: the body of a control-flow op (If's branches, Loop's and Scan's
/// body), a built-in graph. Its first `own_inputs` graph inputs are the body's own (ONNX's formal
/// inputs: Loop's iteration number, condition and carried values, ...); the rest are values of
/// the enclosing graph the body reads (ONNX's outer-scope names), which the node takes as its
/// last inputs, in the same order. All bodies of one node read the same enclosing values.
struct graph_body {
    std::shared_ptr<const graph> g;
    std::size_t own_inputs = 0;
};

/// A typed attribute value: an integer (held as int64), a real (double), a string, a list of
/// integers or reals, or a graph (graph_body).
class attribute {
public:
    enum class type : std::uint8_t { integer, real, string, integers, reals, graph };
    using ints = std::vector<std::int64_t>;
    using reals = std::vector<double>;

    attribute() = default;
    template <class I, std::enable_if_t<std::is_integral_v<I> && !std::is_same_v<I, bool>, int> = 0>
    attribute(I i) : i_(static_cast<std::int64_t>(i)) {}
    attribute(bool b) : i_(b ? 1 : 0) {}
    template <class F, std::enable_if_t<std::is_floating_point_v<F>, int> = 0>
    attribute(F f) : t_(type::real), r_(static_cast<double>(f)) {}
    attribute(const char* s) : t_(type::string), s_(s) {}
    attribute(std::string s) : t_(type::string), s_(std::move(s)) {}
    attribute(std::string_view s) : t_(type::string), s_(s) {}
    attribute(ints v) : t_(type::integers), is_(std::move(v)) {}
    attribute(reals v) : t_(type::reals), rs_(std::move(v)) {}
    attribute(std::initializer_list<std::int64_t> v) : t_(type::integers), is_(v) {}
    attribute(graph_body b) : t_(type::graph), body_(std::move(b)) {}

    type kind() const { return t_; }
    std::optional<std::int64_t> as_int() const {
        return t_ == type::integer ? std::optional<std::int64_t>(i_) : std::nullopt;
    }
    /// A real, or an integer widened to one.
    std::optional<double> as_real() const {
        if (t_ == type::real) return r_;
        if (t_ == type::integer) return static_cast<double>(i_);
        return std::nullopt;
    }
    std::optional<std::string_view> as_string() const {
        return t_ == type::string ? std::optional<std::string_view>(s_) : std::nullopt;
    }
    const ints* as_ints() const { return t_ == type::integers ? &is_ : nullptr; }
    const reals* as_reals() const { return t_ == type::reals ? &rs_ : nullptr; }
    const graph_body* as_graph() const { return t_ == type::graph ? &body_ : nullptr; }

    friend bool operator==(const attribute& a, const attribute& b) {
        if (a.t_ != b.t_) return false;
        switch (a.t_) {
            case type::integer: return a.i_ == b.i_;
            case type::real: return a.r_ == b.r_;
            case type::string: return a.s_ == b.s_;
            case type::integers: return a.is_ == b.is_;
            case type::reals: return a.rs_ == b.rs_;
            case type::graph: return a.body_.g == b.body_.g && a.body_.own_inputs == b.body_.own_inputs;  // the same body
        }
        return false;
    }
    friend bool operator!=(const attribute& a, const attribute& b) { return !(a == b); }

private:
    type t_ = type::integer;
    std::int64_t i_ = 0;
    double r_ = 0;
    std::string s_;
    ints is_;
    reals rs_;
    graph_body body_;
};

/// Shape and element type of one value. Empty dims are an unknown rank unless `scalar` says the
/// value has rank 0; a dim of -1 is unknown.
struct tensor_type {
    dtype type = dtype::unknown;
    std::vector<std::int64_t> dims;
    bool sequence = false;  // a sequence of tensors of `type` (ONNX's sequence type; no dims)
    bool scalar = false;    // rank 0 (dims empty): a scalar, not a value of unknown rank
    bool optional = false;  // ONNX's optional type: none, or a value of the type the rest says
    bool known() const { return type != dtype::unknown || !dims.empty() || sequence || scalar || optional; }
    /// Whether the rank is known (dims hold every axis, or none for a scalar).
    bool ranked() const { return !dims.empty() || scalar; }
    /// A tensor of element type t and dims d (of rank 0 when d is empty).
    static tensor_type of(dtype t, std::vector<std::int64_t> d) {
        tensor_type r{t, std::move(d)};
        r.scalar = r.dims.empty();
        return r;
    }
};

/// Read-only view of a constant tensor. `data` may be null when the adapter knows only the
/// shape (a weight that has not been loaded).
struct const_tensor_view {
    dtype type = dtype::f32;
    const std::int64_t* dims = nullptr;
    std::size_t rank = 0;
    const void* data = nullptr;

    std::int64_t element_count() const {
        std::int64_t n = 1;
        for (std::size_t i = 0; i < rank; ++i) n *= dims[i];
        return n;
    }
    /// The single value of a one-element constant (of any element type).
    std::optional<double> scalar() const {
        if (data == nullptr || element_count() != 1 || type == dtype::unknown) return std::nullopt;
        return at(0);
    }
    /// The values as floats (every type: i32 / i64 such as a Reshape's shape, f16, bool as 0 / 1),
    /// or nullopt without data.
    std::optional<std::vector<float>> to_floats() const {
        if (data == nullptr || type == dtype::unknown) return std::nullopt;
        const auto n = static_cast<std::size_t>(element_count());
        if (type == dtype::f32) {  // a model's weights: one copy, no conversion
            const auto* p = static_cast<const float*>(data);
            return std::vector<float>(p, p + n);
        }
        std::vector<float> v(n);
        for (std::size_t i = 0; i < n; ++i) v[i] = static_cast<float>(at(i));
        return v;
    }
    /// Element i as a double (no bounds check; data must be set).
    double at(std::size_t i) const {
        switch (type) {
            case dtype::f32: return static_cast<const float*>(data)[i];
            case dtype::f64: return static_cast<const double*>(data)[i];
            case dtype::i64: return static_cast<double>(static_cast<const std::int64_t*>(data)[i]);
            case dtype::i32: return static_cast<const std::int32_t*>(data)[i];
            case dtype::i8: return static_cast<const std::int8_t*>(data)[i];
            case dtype::u8:
            case dtype::boolean: return static_cast<const std::uint8_t*>(data)[i];
            case dtype::f16: return detail::half_to_float(static_cast<const std::uint16_t*>(data)[i]);
            case dtype::bf16: return detail::bf16_to_float(static_cast<const std::uint16_t*>(data)[i]);
            case dtype::i16: return static_cast<const std::int16_t*>(data)[i];
            case dtype::u16: return static_cast<const std::uint16_t*>(data)[i];
            case dtype::u32: return static_cast<const std::uint32_t*>(data)[i];
            case dtype::u64: return static_cast<double>(static_cast<const std::uint64_t*>(data)[i]);
            case dtype::unknown: break;
        }
        return 0;
    }
    /// The values as doubles (every type), or nullopt without data (none needed for no elements).
    std::optional<std::vector<double>> to_reals() const {
        if (type == dtype::unknown || (data == nullptr && element_count() != 0)) return std::nullopt;
        std::vector<double> v(static_cast<std::size_t>(element_count()));
        for (std::size_t i = 0; i < v.size(); ++i) v[i] = at(i);
        return v;
    }
    /// The values as int64 (integers and bools; reals truncated), or nullopt without data (none
    /// needed for no elements) or for a real that no int64 holds (NaN, infinite, beyond +-2^63).
    std::optional<std::vector<std::int64_t>> to_ints() const {
        if (type == dtype::unknown || (data == nullptr && element_count() != 0)) return std::nullopt;
        const auto n = static_cast<std::size_t>(element_count());
        std::vector<std::int64_t> v(n);
        for (std::size_t i = 0; i < n; ++i) {
            if (type == dtype::i64) {
                v[i] = static_cast<const std::int64_t*>(data)[i];
                continue;
            }
            const double d = at(i);
            if (!(d > -9.2233720368547758e18 && d < 9.2233720368547758e18)) return std::nullopt;
            v[i] = static_cast<std::int64_t>(d);
        }
        return v;
    }
};

/// Raised when a graph handed to sgmatch is inconsistent (dangling input, cycle, port out of
/// range) or a write is malformed. The message names the node and the rule.
class graph_error : public std::runtime_error {
public:
    using std::runtime_error::runtime_error;
};

SGMATCH_END_NAMESPACE
