// sgmatch/graph/types.hpp - the small value types the adapter contract speaks in.
#pragma once

#include <any>
#include <cstdint>
#include <initializer_list>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>
#include <type_traits>
#include <utility>
#include <variant>
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
enum class dtype : std::uint8_t { unknown, f32, f16, bf16, f64, i8, u8, i32, i64, boolean };

/// A typed attribute value. Integers are held as int64, reals as double.
class attribute {
public:
    using ints = std::vector<std::int64_t>;
    using reals = std::vector<double>;
    using storage = std::variant<std::int64_t, double, std::string, ints, reals>;

    attribute() : v_(std::int64_t{0}) {}
    template <class I, std::enable_if_t<std::is_integral_v<I> && !std::is_same_v<I, bool>, int> = 0>
    attribute(I i) : v_(static_cast<std::int64_t>(i)) {}
    attribute(bool b) : v_(std::int64_t{b ? 1 : 0}) {}
    template <class F, std::enable_if_t<std::is_floating_point_v<F>, int> = 0>
    attribute(F f) : v_(static_cast<double>(f)) {}
    attribute(const char* s) : v_(std::string(s)) {}
    attribute(std::string s) : v_(std::move(s)) {}
    attribute(std::string_view s) : v_(std::string(s)) {}
    attribute(ints v) : v_(std::move(v)) {}
    attribute(reals v) : v_(std::move(v)) {}
    attribute(std::initializer_list<std::int64_t> v) : v_(ints(v)) {}

    const storage& get() const { return v_; }

    std::optional<std::int64_t> as_int() const {
        if (auto p = std::get_if<std::int64_t>(&v_)) return *p;
        return std::nullopt;
    }
    /// A real, or an integer widened to one.
    std::optional<double> as_real() const {
        if (auto p = std::get_if<double>(&v_)) return *p;
        if (auto p = std::get_if<std::int64_t>(&v_)) return static_cast<double>(*p);
        return std::nullopt;
    }
    std::optional<std::string_view> as_string() const {
        if (auto p = std::get_if<std::string>(&v_)) return std::string_view(*p);
        return std::nullopt;
    }
    const ints* as_ints() const { return std::get_if<ints>(&v_); }
    const reals* as_reals() const { return std::get_if<reals>(&v_); }

    friend bool operator==(const attribute& a, const attribute& b) { return a.v_ == b.v_; }
    friend bool operator!=(const attribute& a, const attribute& b) { return !(a == b); }

private:
    storage v_;
};

/// Shape and element type of one value. `rank < 0` means unknown; a dim of -1 is unknown.
struct tensor_type {
    dtype type = dtype::unknown;
    std::vector<std::int64_t> dims;
    bool known() const { return type != dtype::unknown || !dims.empty(); }
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
    /// The single value of a one-element f32/f64 constant.
    std::optional<double> scalar() const {
        if (data == nullptr || element_count() != 1) return std::nullopt;
        if (type == dtype::f32) return static_cast<double>(*static_cast<const float*>(data));
        if (type == dtype::f64) return *static_cast<const double*>(data);
        return std::nullopt;
    }
};

/// Raised when a graph handed to sgmatch is inconsistent (dangling input, cycle, port out of
/// range) or a write is malformed. The message names the node and the rule.
class graph_error : public std::runtime_error {
public:
    using std::runtime_error::runtime_error;
};

/// The one write sgmatch asks of a graph: replace `nodes` by one new node.
/// The new node reads `inputs` in order; its output i takes the place of `outputs[i]` for every
/// user outside `nodes` and for the graph outputs. `payload` is what the user's graph stores
/// for the fused node. The write either completes or leaves the graph unchanged.
template <class Node>
struct replacement {
    std::vector<Node> nodes;
    std::vector<value_ref<Node>> inputs;
    std::vector<value_ref<Node>> outputs;
    std::string name;
    std::string op_name;
    std::any payload;
};

SGMATCH_END_NAMESPACE
