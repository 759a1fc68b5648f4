// sgmatch/onednn/lowering/chain_view.hpp - the matched nodes as a composite lowering (a
// written-out activation, decomposed.hpp) sees them.
#pragma once

#include <cstddef>
#include <optional>
#include <string_view>
#include <vector>

#include "sgmatch/detail/config.hpp"
#include "sgmatch/graph/adapter.hpp"
#include "sgmatch/graph/types.hpp"
#include "sgmatch/onednn/post_ops.hpp"

SGMATCH_BEGIN_NAMESPACE
namespace onednn {

/// The matched nodes as a composite lowering sees them (a decomposed activation: several ops
/// after the chain's value x, ending in one value). Recognizers (decomposed.hpp) walk from x
/// through members only and say which post-op(s) the ops compute.
template <class G>
struct chain_view {
    using traits = graph_traits<G>;
    using N = typename traits::node_type;
    const G& g;
    const N* nodes;
    std::size_t count;

    bool member(N n) const {
        for (std::size_t i = 0; i < count; ++i)
            if (nodes[i] == n) return true;
        return false;
    }
    /// The distinct users of n (port 0) when every user is a member and n is no graph output;
    /// empty otherwise (a value used outside the match cannot be internal to a kernel).
    std::vector<N> inner_users(N n) const {
        std::vector<N> out;
        if (adapter<G>::has_graph_output(g, n)) return out;
        const std::size_t uc = traits::user_count(g, n);
        for (std::size_t i = 0; i < uc; ++i) {
            const auto u = traits::user(g, n, i);
            if (u.port != 0 || !member(u.user)) return {};
            bool seen = false;
            for (const auto& o : out) seen = seen || o == u.user;
            if (!seen) out.push_back(u.user);
        }
        return out;
    }
    /// The one member that reads n, when n has exactly one user and is internal.
    std::optional<N> sole_user(N n) const {
        auto us = inner_users(n);
        if (us.size() != 1) return std::nullopt;
        return us[0];
    }
    template <class Tag>
    bool is(N n) const {
        if (traits::kind(g, n) != node_kind::op) return false;
        for (auto name : Tag::names)
            if (traits::op_name(g, n) == name) return true;
        return false;
    }
    std::size_t inputs(N n) const { return traits::input_count(g, n); }
    bool reads(N n, std::size_t slot, N v) const {
        return slot < inputs(n) && traits::input(g, n, slot) == value_ref<N>{v, 0};
    }
    /// The value of input slot when it is a one-element constant.
    std::optional<double> scalar(N n, std::size_t slot) const {
        if (slot >= inputs(n)) return std::nullopt;
        const auto c = adapter<G>::constant(g, traits::input(g, n, slot).node);
        return c ? c->scalar() : std::nullopt;
    }
    /// For a two-input node reading v: the other input's scalar constant.
    std::optional<double> other_scalar(N n, N v) const {
        if (inputs(n) != 2) return std::nullopt;
        if (reads(n, 0, v)) return scalar(n, 1);
        if (reads(n, 1, v)) return scalar(n, 0);
        return std::nullopt;
    }
    /// n reads both a and b (in either order), and has two inputs.
    bool reads_pair(N n, N a, N b) const {
        return inputs(n) == 2 && ((reads(n, 0, a) && reads(n, 1, b)) || (reads(n, 0, b) && reads(n, 1, a)));
    }
    std::optional<attribute> attr(N n, std::string_view key) const { return traits::attr(g, n, key); }
};

/// What a composite lowering recognized after x: the post-ops, the last node (its output is the
/// chain's value from then on) and how many nodes it took (x not counted).
template <class N>
struct composite_result {
    std::vector<post_op> post_ops;
    N last;
    std::size_t nodes = 0;
};

}  // namespace onednn
SGMATCH_END_NAMESPACE
