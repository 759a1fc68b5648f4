// The hand-written matcher the benchmarks measure sgmatch against: conv >> bn >> relu,
// conv >> bn >> add(any) >> relu and conv >> bn, written out for exactly those patterns. It reads
// sgmatch::graph's node records directly with integer op ids and applies the same rules
// (non-overlapping in topological order, every user of an intermediate inside the match, no
// intermediate a graph output), as fast as we can make it: it is the practical limit.
#pragma once

#include <cstdint>
#include <vector>

#include "sgmatch/graph/graph.hpp"

enum class hand_pattern { conv_bn_relu, conv_bn_add_relu, conv_bn };

struct hand_matcher {
    const sgmatch::graph& g;
    std::uint32_t conv, bn, relu, add;
    std::vector<std::uint8_t> taken;

    explicit hand_matcher(const sgmatch::graph& graph)
        : g(graph), conv(*g.find_op("Conv")), bn(*g.find_op("BatchNormalization")), relu(*g.find_op("Relu")),
          add(*g.find_op("Add")) {}

    // The single user of n (on any port), or false when n has not exactly one use or is a
    // graph output - the closure rule for a chain's intermediate.
    bool sole_user(sgmatch::node_id n, sgmatch::node_id& u) const {
        const auto& us = g.users(n);
        if (us.size() != 1 || us[0].port != 0 || g.is_graph_output(n, 0)) return false;
        u = us[0].user;
        return true;
    }
    bool free_op(sgmatch::node_id n, std::uint32_t op) const {
        return g.kind(n) == sgmatch::node_kind::op && g.op(n) == op && !taken[n.value];
    }

    // on_match(nodes, count) for each match anchored at one of `convs` (topological order).
    template <hand_pattern P, class F>
    void scan(const std::vector<sgmatch::node_id>& convs, F&& on_match) {
        taken.assign(g.index_bound(), 0);
        sgmatch::node_id m[4] = {};
        for (sgmatch::node_id c : convs) {
            if (taken[c.value]) continue;
            sgmatch::node_id b, x, r;
            if (!sole_user(c, b) || !free_op(b, bn)) continue;
            int n = 0;
            m[n++] = c;
            m[n++] = b;
            if (P == hand_pattern::conv_bn_relu) {
                if (!sole_user(b, r) || !free_op(r, relu)) continue;
                m[n++] = r;
            } else if (P == hand_pattern::conv_bn_add_relu) {
                if (!sole_user(b, x) || !free_op(x, add) || g.input_count(x) != 2) continue;
                if (!sole_user(x, r) || !free_op(r, relu)) continue;
                m[n++] = x;
                m[n++] = r;
            }
            for (int i = 0; i < n; ++i) taken[m[i].value] = 1;
            on_match(static_cast<const sgmatch::node_id*>(m), n);
        }
    }
};
