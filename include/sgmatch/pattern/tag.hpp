// sgmatch/pattern/tag.hpp - op tags: a type that names an op, its aliases and its traits.
//
// A tag is any type with a static array of names; the first is the canonical one:
//
//   struct Conv {
//       static constexpr std::string_view names[] = {"Conv", "Convolution"};
//   };
//   struct Add {
//       static constexpr std::string_view names[] = {"Add", "elemwise_add"};
//       static constexpr bool commutative = true;   // optional, default false
//       static constexpr int arity = 2;             // optional, default -1 (any)
//   };
//
// Users add their own tags anywhere; the library holds no registry of them.
#pragma once

#include <cstddef>
#include <string_view>
#include <type_traits>

#include "sgmatch/detail/config.hpp"

SGMATCH_BEGIN_NAMESPACE
namespace detail {

template <class T, class = void>
struct has_names : std::false_type {};
template <class T>
struct has_names<T, std::void_t<decltype(T::names)>>
    : std::bool_constant<std::is_array_v<std::remove_cv_t<decltype(T::names)>> &&
                         std::is_convertible_v<decltype(T::names[0]), std::string_view>> {};

template <class T, class = void>
struct tag_commutative : std::false_type {};
template <class T>
struct tag_commutative<T, std::void_t<decltype(T::commutative)>>
    : std::bool_constant<T::commutative> {};

template <class T, class = void>
struct tag_arity : std::integral_constant<int, -1> {};
template <class T>
struct tag_arity<T, std::void_t<decltype(T::arity)>> : std::integral_constant<int, T::arity> {};

}  // namespace detail

/// True for a type usable as an op tag.
template <class T>
constexpr bool is_op_tag_v = detail::has_names<T>::value;

/// What sgmatch reads from a tag.
template <class T>
struct op_tag_traits {
    static constexpr std::size_t alias_count = std::extent_v<std::remove_cv_t<decltype(T::names)>>;
    static constexpr std::string_view name() { return T::names[0]; }
    static constexpr std::string_view alias(std::size_t i) { return T::names[i]; }
    static constexpr bool commutative = detail::tag_commutative<T>::value;
    static constexpr int arity = detail::tag_arity<T>::value;
};

SGMATCH_END_NAMESPACE
