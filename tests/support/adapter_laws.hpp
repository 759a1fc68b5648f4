// tests/support/adapter_laws.hpp - the laws every graph adapter must satisfy.
// One generic suite, run against each adapter (built-in graph, the nnvm-style example, ...).
#pragma once

#include <doctest/doctest.h>

#include <cstddef>
#include <map>
#include <set>
#include <string>
#include <vector>

#include "sgmatch/graph/adapter.hpp"
#include "sgmatch/match/scan.hpp"

namespace sgtest {

template <class G>
void check_adapter_laws(const G& g) {
    using T = sgmatch::graph_traits<G>;
    static_assert(sgmatch::is_graph_v<G>);
    const std::size_t bound = T::index_bound(g);
    std::vector<long> pos(bound, -1);
    std::size_t count = 0;
    // nodes(): each node once, distinct dense indices below index_bound.
    for (const auto& n : T::nodes(g)) {
        const std::size_t i = T::index(g, n);
        REQUIRE(i < bound);
        REQUIRE_MESSAGE(pos[i] == -1, "index shared or node listed twice: " << T::name(g, n));
        pos[i] = static_cast<long>(count++);
    }
    CHECK(count == T::node_count(g));
    // Inputs: producers come first, ports in range, leaves have none, op ids are consistent.
    std::map<std::tuple<std::size_t, std::size_t, std::uint32_t, std::uint32_t>, int> edges;
    for (const auto& n : T::nodes(g)) {
        const std::size_t i = T::index(g, n);
        const auto k = T::kind(g, n);
        if (k != sgmatch::node_kind::op) {
            CHECK(T::input_count(g, n) == 0);
        } else {
            const auto o = T::op(g, n);
            CHECK(o < T::op_count(g));
            auto found = T::find_op(g, T::op_name(g, n));
            REQUIRE(found.has_value());
            CHECK(*found == o);
        }
        CHECK(T::output_count(g, n) >= 1);
        for (std::size_t s = 0; s < T::input_count(g, n); ++s) {
            const auto v = T::input(g, n, s);
            const std::size_t j = T::index(g, v.node);
            REQUIRE(j < bound);
            REQUIRE(pos[j] >= 0);
            CHECK(pos[j] < pos[i]);
            CHECK(v.port < T::output_count(g, v.node));
            ++edges[{j, i, static_cast<std::uint32_t>(s), v.port}];
        }
    }
    // Users are exactly the inverse of inputs.
    std::size_t uses = 0;
    for (const auto& n : T::nodes(g)) {
        const std::size_t j = T::index(g, n);
        for (std::size_t u = 0; u < T::user_count(g, n); ++u) {
            const auto use = T::user(g, n, u);
            auto it = edges.find({j, T::index(g, use.user), use.slot, use.port});
            REQUIRE_MESSAGE(it != edges.end(), "user without matching input at " << T::name(g, n));
            CHECK(it->second == 1);
            const auto back = T::input(g, use.user, use.slot);
            CHECK(T::index(g, back.node) == j);
            CHECK(back.port == use.port);
            ++uses;
        }
    }
    CHECK(uses == edges.size());
    // Graph outputs refer to nodes in the graph, and is_graph_output agrees with the list.
    std::set<std::pair<std::size_t, std::uint32_t>> outs;
    for (std::size_t i = 0; i < T::graph_output_count(g); ++i) {
        const auto v = T::graph_output(g, i);
        REQUIRE(pos[T::index(g, v.node)] >= 0);
        CHECK(v.port < T::output_count(g, v.node));
        outs.insert({T::index(g, v.node), v.port});
    }
    for (const auto& n : T::nodes(g))
        for (std::uint32_t p = 0; p < T::output_count(g, n); ++p)
            CHECK(sgmatch::adapter<G>::is_graph_output(g, n, p) == (outs.count({T::index(g, n), p}) == 1));
    // Names are usable in messages.
    for (const auto& n : T::nodes(g)) CHECK(!std::string(T::name(g, n)).empty());
    // The checked index accepts the graph.
    CHECK_NOTHROW(sgmatch::op_index<G>{g});
}

}  // namespace sgtest
