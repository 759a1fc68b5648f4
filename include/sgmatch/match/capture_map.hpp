// sgmatch/match/capture_map.hpp - a pattern's captures as hana::maps keyed by the capture's tag.
//
//   struct conv; struct bn;
//   constexpr auto p = op<Conv>().as<conv>() >> optional(op<BatchNorm>().as<bn>());
//   static_assert(hana::at_key(capture_kinds(p), hana::type_c<bn>) == capture_kind::optional);
//   if (auto m = match(g, n, p)) {
//       auto caps = capture_map(m);              // hana::map: type<conv> -> node, type<bn> -> optional
//       hana::for_each(hana::keys(caps), ...);   // every capture, in pattern order
//   }
//
// The structured form, m.get<conv, bn>(), stays the short way to read known names; the maps are
// for code generic over the pattern. Not part of <sgmatch/sgmatch.hpp> (it includes hana::map).
#pragma once

#include <boost/hana/basic_tuple.hpp>
#include <boost/hana/integral_constant.hpp>
#include <boost/hana/map.hpp>
#include <boost/hana/pair.hpp>
#include <boost/hana/type.hpp>
#include <boost/hana/unpack.hpp>

#include <type_traits>

#include "sgmatch/analysis/captures.hpp"
#include "sgmatch/detail/config.hpp"
#include "sgmatch/match/match.hpp"

SGMATCH_BEGIN_NAMESPACE

/// The kind of each capture of p (one, optional or many), as a hana::map from hana::type<Tag> to
/// hana::integral_constant<capture_kind, K>; usable in constant expressions.
template <class P>
constexpr auto capture_kinds(const P&) {
    namespace hana = boost::hana;
    return hana::unpack(captures_t<P>{}, [](auto... cs) {
        return hana::make_map(hana::make_pair(hana::type_c<typename decltype(cs)::type::tag>,
                                              hana::integral_c<capture_kind, decltype(cs)::type::kind>)...);
    });
}

/// The captures of a successful match, as a hana::map from hana::type<Tag> to what
/// m.get<Tag>() returns (a node, std::optional of one, or std::vector of them). On a failed
/// match: std::logic_error, as get().
template <class G, class P>
auto capture_map(const match_result<G, P>& m) {
    namespace hana = boost::hana;
    return hana::unpack(capture_names_t<P>{}, [&m](auto... names) {
        return hana::make_map(hana::make_pair(names, m.template get<typename decltype(names)::type>())...);
    });
}

SGMATCH_END_NAMESPACE
