// detail/checked.hpp against brute force in 128-bit arithmetic: every product and sum of
// values around the int64 boundaries is exact or refused, never wrapped. And the shape rules
// through ops::infer_shapes: an output whose element count overflows is ops::size_overflow
// naming the node.
#include <doctest/doctest.h>

#include <cstdint>
#include <limits>
#include <random>
#include <vector>

#include "sgmatch/detail/checked.hpp"
#include "sgmatch/graph/graph.hpp"
#include "sgmatch/ops/attrs.hpp"
#include "sgmatch/ops/fill_shapes.hpp"
#include "sgmatch/ops/shape_rule_table.hpp"

using namespace sgmatch;

TEST_CASE("checked arithmetic: exact or refused, against 128-bit brute force") {
    const std::int64_t mx = std::numeric_limits<std::int64_t>::max(), mn = std::numeric_limits<std::int64_t>::min();
    std::vector<std::int64_t> v{0, 1, -1, 2, -2, 3, mx, mn, mx - 1, mn + 1, mx / 2, mn / 2, mx / 2 + 1, 3037000499, 3037000500,
                                -3037000499, -3037000500, std::int64_t{1} << 32, std::int64_t{1} << 31, -(std::int64_t{1} << 32)};
    std::mt19937_64 rng(7);
    for (int i = 0; i < 200; ++i) v.push_back(static_cast<std::int64_t>(rng()) >> (rng() % 63));
    const __int128 hi = mx, lo = mn;
    std::size_t refused = 0;
    for (auto a : v)
        for (auto b : v) {
            const __int128 p = static_cast<__int128>(a) * b, s = static_cast<__int128>(a) + b;
            const auto m = detail::checked_signed_mul(a, b), t = detail::checked_signed_add(a, b);
            CHECK(m.has_value() == (p >= lo && p <= hi));
            if (m) CHECK(*m == static_cast<std::int64_t>(p));
            CHECK(t.has_value() == (s >= lo && s <= hi));
            if (t) CHECK(*t == static_cast<std::int64_t>(s));
            const auto um = detail::checked_mul(a, b), ua = detail::checked_add(a, b);
            CHECK(um.has_value() == (a >= 0 && b >= 0 && p <= hi));
            CHECK(ua.has_value() == (a >= 0 && b >= 0 && s <= hi));
            refused += !m;
        }
    CHECK(refused > 0);
    CHECK(!detail::checked_product(std::vector<std::int64_t>{std::int64_t{1} << 32, std::int64_t{1} << 31}));
    CHECK(detail::checked_product(std::vector<std::int64_t>{std::int64_t{1} << 31, std::int64_t{1} << 31}) == std::int64_t{1} << 62);
    CHECK(!detail::checked_product(std::vector<std::int64_t>{3, -1}));
    // An empty shape counts 0 elements, but its strides are products of its other dims: those must fit.
    CHECK(detail::checked_product(std::vector<std::int64_t>{0, std::int64_t{1} << 31, std::int64_t{1} << 31}) == 0);
    CHECK(detail::checked_product(std::vector<std::int64_t>{mx, 0}) == 0);
    CHECK(!detail::checked_product(std::vector<std::int64_t>{0, mx, mx}));
    CHECK(!detail::checked_product(std::vector<std::int64_t>{0, 800000000, 9999999999, 4}));
}

TEST_CASE("shape rules: an output whose element count overflows int64 is size_overflow naming the node") {
    graph g;
    const node_id x = g.add_input("x", tensor_type{dtype::f32, {1}});
    const std::vector<std::int64_t> shape{std::int64_t{1} << 32, std::int64_t{1} << 32};
    const node_id s = g.add_constant("shape", {2}, dtype::i64,
                                     std::vector<unsigned char>(reinterpret_cast<const unsigned char*>(shape.data()),
                                                                reinterpret_cast<const unsigned char*>(shape.data() + 2)));
    g.mark_output(g.add_op("Expand", "huge", {x, s}));
    CHECK_THROWS_WITH_AS(ops::fill_shapes(g), doctest::Contains("node 'huge' (Expand): output 0 of shape [4294967296, 4294967296]"),
                         ops::size_overflow);
    // A Pad whose pads overflow a dim.
    graph p;
    const node_id px = p.add_input("x", tensor_type{dtype::f32, {1, 4}});
    const std::vector<std::int64_t> pads{0, 0, std::numeric_limits<std::int64_t>::max(), 1};
    const node_id pc = p.add_constant("pads", {4}, dtype::i64,
                                      std::vector<unsigned char>(reinterpret_cast<const unsigned char*>(pads.data()),
                                                                 reinterpret_cast<const unsigned char*>(pads.data() + 4)));
    p.mark_output(p.add_op("Pad", "pad", {px, pc}));
    CHECK_THROWS_WITH_AS(ops::fill_shapes(p), doctest::Contains("node 'pad' (Pad): the padded dims overflow int64"), ops::size_overflow);
}
