// sgmatch/onednn/lowering/table.hpp - the runtime table of what a pattern's ops lower to,
// built from the pattern's tags, and the compile-time checks made from it (an op that cannot
// lower, a pattern not anchored on a main op).
#pragma once

#include <cstddef>
#include <iterator>
#include <optional>
#include <string_view>
#include <type_traits>
#include <utility>
#include <vector>

#include <boost/hana/basic_tuple.hpp>
#include <boost/hana/type.hpp>
#include <oneapi/dnnl/dnnl.hpp>

#include "sgmatch/analysis/anchors.hpp"
#include "sgmatch/detail/config.hpp"
#include "sgmatch/graph/adapter.hpp"
#include "sgmatch/onednn/lowering/chain_view.hpp"
#include "sgmatch/onednn/lowering/roles.hpp"
#include "sgmatch/onednn/post_ops.hpp"
#include "sgmatch/ops/attrs.hpp"
#include "sgmatch/ops/table.hpp"
#include "sgmatch/pattern/fold.hpp"
#include "sgmatch/pattern/tag.hpp"

SGMATCH_BEGIN_NAMESPACE
namespace onednn {

// ----- the runtime table built from a pattern's tags ----------------------------------------

/// One op a pattern may match, as the runtime lowering sees it.
struct lowering_entry {
    const std::string_view* names;
    std::size_t name_count;
    lowering_role role;
    std::vector<post_op> (*eltwise)(const ops::op_attrs&, const ops::node_source&);
    dnnl::algorithm binary_alg;
    bool commutative;
    const ops::op_schema* schema;  // the op's description; null for an op that has none
};

namespace detail {

template <class L, class = void>
struct has_post_ops : std::false_type {};
template <class L>
struct has_post_ops<L, std::void_t<decltype(L::post_ops(std::declval<const ops::op_attrs&>(), std::declval<const ops::node_source&>()))>>
    : std::is_convertible<decltype(L::post_ops(std::declval<const ops::op_attrs&>(), std::declval<const ops::node_source&>())),
                          std::vector<post_op>> {};
template <class L, class = void>
struct has_alg : std::false_type {};
template <class L>
struct has_alg<L, std::void_t<decltype(L::alg)>> : std::is_convertible<decltype(L::alg), dnnl::algorithm> {};

// Every lowering<Tag> is read here: its contract (roles.hpp) is checked once, then an
// incomplete one is left inert (no post-op, no algorithm) so that one error is all the user sees.
template <class Tag>
lowering_entry entry_of() {
    using L = lowering<Tag>;
    if constexpr (L::role == lowering_role::composite) {
        return lowering_entry{nullptr, 0, lowering_role::composite, nullptr, dnnl::algorithm::undef, false, nullptr};
    } else {
        static_assert(L::role != lowering_role::eltwise || has_post_ops<L>::value,
                      "sgmatch::onednn::lowering<Tag> with role eltwise must define static std::vector<post_op> "
                      "post_ops(const ops::op_attrs&, const ops::node_source&) -- see onednn/lowering/roles.hpp");
        static_assert(L::role != lowering_role::binary || has_alg<L>::value,
                      "sgmatch::onednn::lowering<Tag> with role binary must define static constexpr dnnl::algorithm alg "
                      "-- see onednn/lowering/roles.hpp");
        lowering_entry e{Tag::names, std::size(Tag::names), L::role, nullptr, dnnl::algorithm::undef,
                         sgmatch::detail::tag_commutative<Tag>::value, ops::find_schema(Tag::names[0])};
        if constexpr (L::role == lowering_role::eltwise && has_post_ops<L>::value) e.eltwise = &L::post_ops;
        if constexpr (L::role == lowering_role::binary && has_alg<L>::value) e.binary_alg = L::alg;
        return e;
    }
}

template <class List>
struct entries;
template <class... Tags>
struct entries<boost::hana::basic_tuple<Tags...>> {
    static const std::vector<lowering_entry>& get() {
        static const std::vector<lowering_entry> table{entry_of<typename Tags::type>()...};
        return table;
    }
};

template <class G>
using recognize_fn = std::optional<composite_result<typename graph_traits<G>::node_type>> (*)(
    const chain_view<G>&, typename graph_traits<G>::node_type);

template <class G, class Tag>
void composite_of(std::vector<recognize_fn<G>>& out) {
    if constexpr (lowering<Tag>::role == lowering_role::composite) out.push_back(&lowering<Tag>::template recognize<G>);
}
template <class G, class List>
struct composites;
template <class G, class... Tags>
struct composites<G, boost::hana::basic_tuple<Tags...>> {
    static const std::vector<recognize_fn<G>>& get() {
        static const std::vector<recognize_fn<G>> table = [] {
            std::vector<recognize_fn<G>> v;
            (composite_of<G, typename Tags::type>(v), ...);
            return v;
        }();
        return table;
    }
};

// The units lowering sees in P: every op tag, except that a named sub-pattern whose name has a
// composite lowering (a decomposed activation, decomposed.hpp) is one unit, its inner ops not
// looked at (Erf or Pow need no lowering of their own there).
template <class P, class... Rs>
struct units_on : sgmatch::detail::tags_on<P, Rs...> {};
template <class T, class P, class R>
struct units_on<pat::named<T, P>, R> {
    using type = std::conditional_t<lowering<T>::role == lowering_role::composite,
                                    boost::hana::basic_tuple<boost::hana::type<T>>, R>;
};
template <class P>
using units_t = pat::fold_t<P, units_on>;

// The first tag of a list that cannot lower (void if none).
template <class List>
struct first_unlowerable {
    using type = void;
};
template <class T, class... Ts>
struct first_unlowerable<boost::hana::basic_tuple<T, Ts...>> {
    using type = std::conditional_t<lowerable_v<typename T::type>,
                                    typename first_unlowerable<boost::hana::basic_tuple<Ts...>>::type, typename T::type>;
};

template <class List>
struct all_main;
template <class... Tags>
struct all_main<boost::hana::basic_tuple<Tags...>>
    : std::bool_constant<sizeof...(Tags) != 0 && ((lowering<typename Tags::type>::role == lowering_role::conv ||
                                                   lowering<typename Tags::type>::role == lowering_role::conv_transpose ||
                                                   lowering<typename Tags::type>::role == lowering_role::matmul ||
                                                   lowering<typename Tags::type>::role == lowering_role::batch_norm) &&
                                                  ...)> {};

}  // namespace detail

/// The tags of P that cannot lower: void when every op of P has a lowering.
template <class P>
using unlowerable_op_t = typename detail::first_unlowerable<detail::units_t<std::decay_t<P>>>::type;
/// True when P's first node is always a main op lowering knows (Conv, ConvTranspose, MatMul, Gemm,
/// BatchNorm).
template <class P>
constexpr bool anchored_on_main_op_v = !anchor_is_wildcard_v<P> && detail::all_main<anchor_tags_t<P>>::value;

namespace detail {

inline const lowering_entry* find_entry(const std::vector<lowering_entry>& table, std::string_view op) {
    for (const auto& e : table)
        for (std::size_t i = 0; i < e.name_count; ++i)
            if (e.names[i] == op) return &e;
    return nullptr;
}

}  // namespace detail

}  // namespace onednn
SGMATCH_END_NAMESPACE
