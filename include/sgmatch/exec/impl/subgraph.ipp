// sgmatch/exec/impl/subgraph.ipp - region_op_names (exec/subgraph.hpp), which reads every op's
// kernel binding: included by that header, or compiled once by exec/src.hpp.
#pragma once

#include <string_view>
#include <type_traits>
#include <vector>

#include "sgmatch/detail/config.hpp"
#include "sgmatch/exec/kernels.hpp"
#include "sgmatch/exec/subgraph.hpp"
#include "sgmatch/pattern/vocabulary.hpp"

SGMATCH_BEGIN_NAMESPACE
namespace exec {

namespace detail {
template <class... T>
std::vector<std::string_view> region_op_names(ops::tag_list<T...>) {
    std::vector<std::string_view> v;
    auto add = [&](auto tag) {
        using X = decltype(tag);
        bool onednn = std::is_same_v<X, ops::Erf>;
        if constexpr (ops::has_facet_v<decltype(kernels::f32_kernels<X>)>) onednn = onednn || kernels::f32_kernels<X>.onednn != nullptr;
        if (onednn) v.insert(v.end(), std::begin(X::names), std::end(X::names));
    };
    (add(T{}), ...);
    return v;
}
}  // namespace detail

SGMATCH_DECL const std::vector<std::string_view>& region_op_names() {
    static const std::vector<std::string_view> names = detail::region_op_names(ops::vocabulary{});
    return names;
}

}  // namespace exec
SGMATCH_END_NAMESPACE
