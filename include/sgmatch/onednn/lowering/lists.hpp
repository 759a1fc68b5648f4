// sgmatch/onednn/lowering/lists.hpp - the op lists of the oneDNN layer, derived from the
// lowering<Tag> specializations (roles.hpp) over the standard vocabulary.
//
// A tag given an eltwise or binary lowering is a post-op in every fusion that takes post-ops;
// a tag whose lowering says keeps_layout lets a conv's blocked layout through. Nothing here is
// written out per op: specialize lowering<Tag> and the lists follow.
#pragma once

#include <string_view>
#include <type_traits>
#include <vector>

#include "sgmatch/detail/config.hpp"
#include "sgmatch/onednn/lowering/roles.hpp"
#include "sgmatch/pattern/combinators.hpp"
#include "sgmatch/pattern/vocabulary.hpp"

SGMATCH_BEGIN_NAMESPACE
namespace onednn {
namespace detail {

// Type-list filtering by class templates and one fold, not hana::filter, which over the whole
// vocabulary costs more than half a second in every translation unit that includes the backend.
template <class... A, class... B>
ops::tag_list<A..., B...> operator+(ops::tag_list<A...>, ops::tag_list<B...>);  // declared only

template <lowering_role R, class T>
using if_role = std::conditional_t<lowering<T>::role == R, ops::tag_list<T>, ops::tag_list<>>;

template <lowering_role R, class... T>
auto with_role(ops::tag_list<T...>) -> decltype((ops::tag_list<>{} + ... + if_role<R, T>{}));

template <class... T>
std::vector<std::string_view> names_keeping_layout(ops::tag_list<T...>) {
    std::vector<std::string_view> v;
    auto add = [&](auto tag) {
        using X = decltype(tag);
        if constexpr (keeps_layout_v<X>)
            for (std::string_view n : X::names) v.push_back(n);
    };
    (add(T{}), ...);
    return v;
}

}  // namespace detail

/// Every tag of the vocabulary whose lowering has role R, in vocabulary order (an ops::tag_list).
template <lowering_role R>
using tags_with_role = decltype(detail::with_role<R>(ops::vocabulary{}));

/// op<T...>() over a tag_list: a pattern matching any of its tags.
template <class... T>
constexpr auto op_of(ops::tag_list<T...>) {
    return op<T...>();
}
/// op<T...>(operands...) over a tag_list.
template <class... T, class... Operands>
constexpr auto op_of(ops::tag_list<T...>, Operands... operands) {
    return op<T...>(operands...);
}

/// The names (every alias) of the tags whose lowering keeps a conv's blocked layout.
inline const std::vector<std::string_view>& layout_keeping_names() {
    static const std::vector<std::string_view> names = detail::names_keeping_layout(ops::vocabulary{});
    return names;
}

}  // namespace onednn
SGMATCH_END_NAMESPACE
