// Brute-force checks for partitions: contract node sets and look for a cycle (Kahn).
#pragma once

#include <cstdint>
#include <map>
#include <set>
#include <vector>

#include "sgmatch/graph/graph.hpp"

namespace sgtest {

inline bool quotient_acyclic(const sgmatch::graph& g, const std::vector<std::vector<sgmatch::node_id>>& sets) {
    std::map<std::uint32_t, std::uint32_t> vert;  // node -> vertex key
    for (auto n : g.nodes()) vert[n.value] = n.value;
    for (std::size_t i = 0; i < sets.size(); ++i)
        for (auto n : sets[i]) vert[n.value] = 1000000u + static_cast<std::uint32_t>(i);
    std::map<std::uint32_t, std::set<std::uint32_t>> out;
    std::map<std::uint32_t, int> indeg;
    for (auto& [n, v] : vert) indeg[v] += 0;
    for (auto n : g.nodes())
        for (auto& u : g.users(n)) {
            const auto a = vert[n.value], b = vert[u.user.value];
            if (a != b && out[a].insert(b).second) ++indeg[b];
        }
    std::vector<std::uint32_t> ready;
    for (auto& [v, d] : indeg)
        if (d == 0) ready.push_back(v);
    std::size_t done = 0;
    while (!ready.empty()) {
        const auto v = ready.back();
        ready.pop_back();
        ++done;
        for (auto w : out[v])
            if (--indeg[w] == 0) ready.push_back(w);
    }
    return done == indeg.size();
}

}  // namespace sgtest
