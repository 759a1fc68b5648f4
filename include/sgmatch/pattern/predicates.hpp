// sgmatch/pattern/predicates.hpp - ready-made predicates for p.where(...).
//
// A predicate is any callable taking a node view (sgmatch/match/node_view.hpp) and returning
// bool. The ones here are literal types, so patterns using them stay constexpr, and each has
// describe() for notation and explain text. The pattern layer knows nothing of graphs: these
// are templates over the view type.
#pragma once

#include <array>
#include <cstddef>
#include <cstdio>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <type_traits>

#include "sgmatch/detail/config.hpp"
#include "sgmatch/pattern/ast.hpp"

SGMATCH_BEGIN_NAMESPACE
namespace pred {

/// attr `key` equals `value` (int64, double, string or a fixed list of ints).
template <class T>
struct attr_eq_t {
    std::string_view key;
    T value;

    template <class V>
    bool operator()(const V& n) const {
        if constexpr (std::is_same_v<T, std::int64_t>) {
            auto a = n.attr_int(key);
            return a && *a == value;
        } else if constexpr (std::is_same_v<T, double>) {
            auto a = n.attr_real(key);
            return a && *a == value;
        } else if constexpr (std::is_same_v<T, std::string_view>) {
            auto a = n.attr(key);
            auto s = a ? a->as_string() : std::nullopt;
            return s && *s == value;
        } else {
            auto a = n.attr(key);
            auto v = a ? a->as_ints() : nullptr;
            if (!v || v->size() != value.size()) return false;
            for (std::size_t i = 0; i < value.size(); ++i)
                if ((*v)[i] != value[i]) return false;
            return true;
        }
    }
    std::string describe() const {
        std::string s = std::string(key) + "==";
        if constexpr (std::is_same_v<T, std::int64_t>)
            s += std::to_string(value);
        else if constexpr (std::is_same_v<T, double>)
            s += std::to_string(value);
        else if constexpr (std::is_same_v<T, std::string_view>)
            s += std::string(value);
        else {
            s += "[";
            for (std::size_t i = 0; i < value.size(); ++i)
                s += (i ? "," : "") + std::to_string(value[i]);
            s += "]";
        }
        return s;
    }
};

template <class V>
constexpr auto attr_eq(std::string_view key, V v) {
    if constexpr (std::is_integral_v<V>)
        return attr_eq_t<std::int64_t>{key, static_cast<std::int64_t>(v)};
    else if constexpr (std::is_floating_point_v<V>)
        return attr_eq_t<double>{key, static_cast<double>(v)};
    else if constexpr (std::is_convertible_v<V, std::string_view>)
        return attr_eq_t<std::string_view>{key, std::string_view(v)};
    else
        return attr_eq_t<V>{key, v};
}
/// attr `key` is exactly the list `vals`, e.g. attr_ints_eq("kernel_shape", 1, 1).
template <class... I>
constexpr auto attr_ints_eq(std::string_view key, I... vals) {
    return attr_eq_t<std::array<std::int64_t, sizeof...(I)>>{
        key, std::array<std::int64_t, sizeof...(I)>{static_cast<std::int64_t>(vals)...}};
}

/// attr `key` is present.
struct has_attr {
    std::string_view key;
    template <class V>
    bool operator()(const V& n) const { return n.attr(key).has_value(); }
    std::string describe() const { return "has " + std::string(key); }
};

/// the node has exactly `count` inputs.
struct num_inputs {
    std::size_t count;
    template <class V>
    bool operator()(const V& n) const { return n.input_count() == count; }
    std::string describe() const { return "inputs==" + std::to_string(count); }
};

/// output 0 has a known shape of rank `rank`.
struct rank_eq {
    std::size_t rank;
    template <class V>
    bool operator()(const V& n) const {
        auto t = n.type(0);
        return t && t->dims.size() == rank;
    }
    std::string describe() const { return "rank==" + std::to_string(rank); }
};

/// input `slot` is produced by a constant node.
struct input_is_constant {
    std::size_t slot;
    template <class V>
    bool operator()(const V& n) const {
        return slot < n.input_count() && n.input(slot).is_constant();
    }
    std::string describe() const { return "input " + std::to_string(slot) + " constant"; }
};

/// a one-element constant within `tol` (relative to max(1, |value|)) of `value`.
struct scalar_near {
    double value;
    double tol = 1e-5;
    template <class V>
    bool operator()(const V& n) const {
        auto s = n.scalar();
        if (!s) return false;
        auto abs = [](double v) { return v < 0 ? -v : v; };
        const double scale = abs(value) > 1.0 ? abs(value) : 1.0;
        return abs(*s - value) <= tol * scale;
    }
    std::string describe() const {
        char buf[32];
        std::snprintf(buf, sizeof buf, "~%.9g", value);
        return buf;
    }
};

}  // namespace pred

/// A constant holding one value near `value` (GELU's 1.4142135, 0.5, ...).
constexpr auto constant(double value, double tol = 1e-5) {
    return pat::guarded<pat::constant, pred::scalar_near>(pat::constant{}, pred::scalar_near{value, tol});
}

SGMATCH_END_NAMESPACE
