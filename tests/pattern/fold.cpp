// The one recursion over patterns: pat::fold on values, pat::fold_t on types, pat::nodes walked
// with hana::for_each, and the captures as hana::maps.
#include <doctest/doctest.h>

#include <boost/hana/at_key.hpp>
#include <boost/hana/contains.hpp>
#include <boost/hana/for_each.hpp>
#include <boost/hana/keys.hpp>
#include <boost/hana/length.hpp>
#include <boost/hana/type.hpp>

#include <cstddef>
#include <optional>
#include <string>
#include <type_traits>
#include <vector>

#include "sgmatch/graph/graph.hpp"
#include "sgmatch/match/capture_map.hpp"
#include "sgmatch/sgmatch.hpp"

using namespace sgmatch;
using namespace sgmatch::ops;
namespace hana = boost::hana;

namespace {
struct c;
struct b;
struct r;

constexpr auto cbr = op<Conv>().as<c>() >> optional(op<BatchNorm>().as<b>()) >> repeat<0, 3>((op<Relu>() | op<Clip>()).as<r>());

// A user's own analysis on types: the deepest nesting of the pattern.
template <class P, class... Rs>
struct depth_on : std::integral_constant<std::size_t, 1 + detail::max_of(0, Rs::value...)> {
    using type = depth_on;
};

// A user's own analysis on values: how many predicates, and the text of each.
struct preds_alg {
    template <class P, class... Rs>
    std::vector<std::string> operator()(const P&, const Rs&... rs) const {
        std::vector<std::string> out;
        (out.insert(out.end(), rs.begin(), rs.end()), ...);
        return out;
    }
    template <class P, class F, class R>
    std::vector<std::string> operator()(const pat::guarded<P, F>& g, const R& r) const {
        std::vector<std::string> out{detail::describe_pred(g.pred)};
        out.insert(out.end(), r.begin(), r.end());
        return out;
    }
};
}  // namespace

// The deepest path: chain > repeat > capture > alternative > op.
static_assert(pat::fold_t<std::decay_t<decltype(cbr)>, depth_on>::value == 5);
static_assert(pat::fold_t<std::decay_t<decltype(op<Relu>())>, depth_on>::value == 1);
static_assert(std::is_same_v<pat::children_t<std::decay_t<decltype(op<Add>(any(), constant()))>>,
                             hana::basic_tuple<hana::type<pat::any>, hana::type<pat::constant>>>);

TEST_CASE("pat::fold runs a user's algebra over the nodes, bottom-up") {
    const auto p = op<Conv>().where(pred::attr_eq("group", 1)) >> op<Add>(any().where(pred::attr_eq("axis", 0))) >> op<Relu>();
    const auto texts = pat::fold(p, preds_alg{});
    REQUIRE(texts.size() == 2);
    CHECK(texts[0] == "group==1");
    CHECK(texts[1] == "axis==0");
    CHECK(pat::fold(op<Relu>(), preds_alg{}).empty());
}

TEST_CASE("pat::nodes lists every node in pre-order, for hana::for_each") {
    const auto p = op<Add>(op<Mul>(any(), constant()), any()) >> op<Relu>();
    std::vector<std::string> seen;
    hana::for_each(pat::nodes(p), [&](const auto& n) { seen.push_back(notation(n)); });
    const std::vector<std::string> expected{"Add(Mul(_, const), _) >> Relu", "Add(Mul(_, const), _)", "Mul(_, const)",
                                            "_", "const", "_", "Relu"};
    CHECK(seen == expected);
    static_assert(decltype(hana::length(pat::nodes(cbr)))::value == 11);
}

TEST_CASE("capture_kinds: the kinds of a pattern's captures as a hana::map, at compile time") {
    constexpr auto kinds = capture_kinds(cbr);
    static_assert(hana::at_key(kinds, hana::type_c<c>) == capture_kind::one);
    static_assert(hana::at_key(kinds, hana::type_c<b>) == capture_kind::optional);
    static_assert(hana::at_key(kinds, hana::type_c<r>) == capture_kind::many);
    static_assert(!decltype(hana::contains(kinds, hana::type_c<int>))::value);
    CHECK(decltype(hana::length(hana::keys(kinds)))::value == 3);
}

TEST_CASE("capture_map: a match's captures keyed by tag, equal to get<>()") {
    graph g;
    const auto x = g.add_input("x");
    const auto conv = g.add_op("Conv", "conv", {x});
    const auto relu = g.add_op("Relu", "relu", {conv});
    const auto clip = g.add_op("Clip", "clip", {relu});
    g.mark_output(clip);
    const auto m = match(g, conv, cbr);
    REQUIRE(m);
    const auto caps = capture_map(m);
    CHECK(caps[hana::type_c<c>] == conv);
    const std::optional<node_id> bn = caps[hana::type_c<b>];
    CHECK_FALSE(bn.has_value());
    CHECK(caps[hana::type_c<r>] == std::vector<node_id>{relu, clip});
    CHECK(caps[hana::type_c<r>] == m.get<r>());
    std::size_t n = 0;
    hana::for_each(hana::keys(caps), [&](auto) { ++n; });
    CHECK(n == 3);

    const auto failed = match(g, relu, cbr);
    CHECK_THROWS_AS(capture_map(failed), std::logic_error);
}
