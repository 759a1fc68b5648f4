// sgmatch/graph/graph_order.hpp - the built-in graph's topological order: kept by each write
// where it can be, dropped of its dead on the next read, or recomputed (Kahn, O(N + E)).
// Members of sgmatch::graph (graph/graph.hpp), defined here.
#pragma once

#include <algorithm>
#include <cstdint>
#include <vector>

#include "sgmatch/detail/config.hpp"
#include "sgmatch/graph/graph.hpp"

SGMATCH_BEGIN_NAMESPACE

inline bool graph::reaches(node_id from, node_id to) const {
    if (from == to) return true;
    (void)nodes();  // settles the order: the keys below are exact
    if (key_[to.value] < key_[from.value]) return false;
    std::vector<node_id> stack{from};
    std::vector<bool> seen(recs_.size(), false);
    while (!stack.empty()) {
        const node_id n = stack.back();
        stack.pop_back();
        for (const auto& u : users(n)) {
            if (u.user == to) return true;
            if (seen[u.user.value] || key_[u.user.value] > key_[to.value]) continue;
            seen[u.user.value] = true;
            stack.push_back(u.user);
        }
    }
    return false;
}

inline void graph::settle_order() const {
    if (order_ == order_state::stale) {
        std::size_t w = 0;
        for (std::size_t i = 0; i < order_list_.size(); ++i) {
            const node_id n = order_list_[i];
            if (n == tombstone) continue;
            key_[n.value] = static_cast<std::uint32_t>(w);
            order_list_[w++] = n;
        }
        order_list_.resize(w);
    } else {
        recompute_order();
    }
    order_ = order_state::clean;
}

inline void graph::recompute_order() const {
    std::vector<std::uint32_t> pending(recs_.size(), 0);
    std::vector<node_id> order;
    order.reserve(live_);
    for (std::uint32_t i = 0; i < recs_.size(); ++i) {
        if (!recs_[i].alive()) continue;
        pending[i] = recs_[i].in_count;
        if (pending[i] == 0) order.push_back(node_id{i});
    }
    for (std::size_t h = 0; h < order.size(); ++h)
        for (auto& u : users(order[h]))
            if (--pending[u.user.value] == 0) order.push_back(u.user);
    if (order.size() != live_)
        throw graph_error("sgmatch::graph: the graph has a cycle (a replace of a node set that a path "
                          "leaves and re-enters)");
    for (std::size_t i = 0; i < order.size(); ++i) key_[order[i].value] = static_cast<std::uint32_t>(i);
    order_list_.swap(order);
}

SGMATCH_END_NAMESPACE
