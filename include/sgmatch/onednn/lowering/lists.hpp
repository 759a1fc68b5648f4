// sgmatch/onednn/lowering/lists.hpp - the op lists of the oneDNN layer, derived from the
// lowering<Tag> specializations (roles.hpp) over the standard vocabulary.
//
// A tag given an eltwise or binary lowering is a post-op in every fusion that takes post-ops;
// a tag whose lowering says keeps_layout lets a conv's blocked layout through. Nothing here is
// written out per op: specialize lowering<Tag> and the lists follow.
#pragma once

#include <string_view>
#include <vector>

#include <boost/hana/filter.hpp>
#include <boost/hana/tuple.hpp>
#include <boost/hana/type.hpp>
#include <boost/hana/unpack.hpp>

#include "sgmatch/detail/config.hpp"
#include "sgmatch/onednn/lowering/roles.hpp"
#include "sgmatch/pattern/vocabulary.hpp"

SGMATCH_BEGIN_NAMESPACE
namespace onednn {
namespace detail {

template <class List>
struct vocabulary_tuple;
template <class... T>
struct vocabulary_tuple<ops::tag_list<T...>> {
    static constexpr auto value = boost::hana::tuple_t<T...>;
};

/// The vocabulary's tags (as hana types) whose lowering has role R, in vocabulary order.
template <lowering_role R>
constexpr auto tags_with_role() {
    return boost::hana::filter(vocabulary_tuple<ops::vocabulary>::value, [](auto t) {
        return boost::hana::bool_c<lowering<typename decltype(t)::type>::role == R>;
    });
}

}  // namespace detail

/// Every tag whose lowering has role R, as a hana tuple of types.
template <lowering_role R>
inline constexpr auto tags_with_role = detail::tags_with_role<R>();

/// The names (every alias) of the tags whose lowering keeps a conv's blocked layout.
inline const std::vector<std::string_view>& layout_keeping_names() {
    static const std::vector<std::string_view> names = [] {
        std::vector<std::string_view> v;
        boost::hana::unpack(detail::vocabulary_tuple<ops::vocabulary>::value, [&](auto... t) {
            auto add = [&](auto tag) {
                using T = typename decltype(tag)::type;
                if constexpr (keeps_layout_v<T>)
                    for (std::string_view n : T::names) v.push_back(n);
            };
            (add(t), ...);
        });
        return v;
    }();
    return names;
}

}  // namespace onednn
SGMATCH_END_NAMESPACE
