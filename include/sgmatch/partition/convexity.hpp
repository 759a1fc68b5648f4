// sgmatch/partition/convexity.hpp - accepting node sets one by one without creating a cycle.
//
// A pass accepts disjoint node sets (matches) in order and contracts each into one node. The
// contraction must keep the graph acyclic: no path may leave an accepted set and re-enter it,
// in the graph with the earlier sets already contracted (the "quotient"). quotient_checker
// decides this for each new set without contracting anything, in time proportional to the part
// of the graph that could matter:
//
// - It keeps a topological numbering `pos` of the quotient (doubles, starting from the graph's
//   order, read from the op_index until a node first moves; unrelated vertices may share a
//   value). A path into the new set M only passes through
//   positions below max_pos(M), so a search from M's outside users never goes past max_pos(M)
//   (ties are searched too).
// - A set with a single exit (one member, the sink, has no users in the set; every other member
//   has users and all of them are in the set: every match under the closure rule) is accepted
//   at once, with nothing searched or recorded. Every member reaches the sink and paths leave
//   only from it, so a path from the set back into it would already be a cycle; and contracting
//   it changes no reachability between other vertices, so later checks may treat its nodes as
//   uncontracted. The checker's per-node arrays are allocated only when a set needs more.
// - Otherwise, a set whose only outside users come after all its members needs no search
//   either: each outside user is found past max_pos(M) at once.
// - When a set is accepted, it takes position max_pos(M), and the nodes the search reached
//   (downstream of an escaping user, before max_pos(M)) are renumbered into the gap after it, in
//   their old order, which keeps the numbering topological. If a gap runs out of double
//   precision the whole quotient is renumbered once (Kahn's algorithm, O(N + E)).
//
// Nothing recurses; the search is an explicit queue.
#pragma once

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <vector>

#include "sgmatch/detail/config.hpp"
#include "sgmatch/graph/adapter.hpp"
#include "sgmatch/match/scan.hpp"

SGMATCH_BEGIN_NAMESPACE
namespace detail {

// Evenly spaced, increasing positions strictly inside (from, to) for n vertices, handed to
// set(i, position) in order; false when double precision cannot separate them (the caller then
// renumbers everything).
template <class Set>
bool spread_into_gap(double from, double to, std::size_t n, Set&& set) {
    const double step = (to - from) / static_cast<double>(n + 1);
    double last = from;
    bool ok = true;
    for (std::size_t i = 0; i < n; ++i) {
        const double p = from + step * static_cast<double>(i + 1);
        ok = ok && p > last && p < to;
        last = p;
        set(i, p);
    }
    return ok;
}

// A gap (from, to) ran out of precision: rather than renumber the whole contracted graph
// (O(N + E)), spread the vertices whose positions lie in a window around the gap evenly over
// that window, in the order they had (equal positions stay equal). Vertices outside it keep
// their positions, so the numbering stays topological, and the gap becomes wide again.
// visit(f) calls f(double&) on the position of every vertex except those about to be placed in
// the gap; three passes over them (O(V)), two orders of magnitude cheaper than renumbering a
// graph of a million nodes. The window doubles until its vertices are at least 1/64 apart;
// false if none up to 2^16 around the gap is that thin. (The capability regions use it; the
// quotient checker does not: there a fresh Kahn numbering keeps its later searches short, and
// relabeling instead made the rewrite of 1M-node capability partitions 5x slower.)
template <class Visit>
bool relabel_window(double& from, double& to, Visit&& visit) {
    std::vector<double> keys;
    for (double radius = 64; radius <= 65536; radius *= 2) {
        const double lo = std::floor(from) - radius, hi = std::ceil(to) + radius;
        std::size_t inside = 2;  // a count first (no sort of a window too dense to use)
        visit([&](double& p) { inside += p > lo && p < hi; });
        if ((hi - lo) / static_cast<double>(inside + 1) < 1.0 / 64) continue;
        keys.assign({from, to});
        visit([&](double& p) {
            if (p > lo && p < hi) keys.push_back(p);
        });
        std::sort(keys.begin(), keys.end());
        keys.erase(std::unique(keys.begin(), keys.end()), keys.end());
        const double step = (hi - lo) / static_cast<double>(keys.size() + 1);
        const auto moved = [&](double p) {
            return lo + step * static_cast<double>(std::lower_bound(keys.begin(), keys.end(), p) - keys.begin() + 1);
        };
        visit([&](double& p) {
            if (p > lo && p < hi) p = moved(p);
        });
        from = moved(from);
        to = moved(to);
        return true;
    }
    return false;
}

// Kahn's algorithm over a contracted graph, from scratch: every node n belongs to vertex
// key_of(n) (< key_count); set_pos(key, position) numbers each vertex topologically.
template <class G, class Nodes, class Key, class SetPos>
void renumber_contracted(const G& g, const Nodes& nodes, std::size_t key_count, Key&& key_of, SetPos&& set_pos) {
    using traits = graph_traits<G>;
    // The contracted edges as one array grouped by source (counted, then filled): no per-vertex
    // allocation, which dominated on graphs of a million nodes.
    std::vector<std::uint32_t> indeg(key_count, 0);
    std::vector<std::size_t> first(key_count + 1, 0);
    std::vector<std::uint8_t> present(key_count, 0);
    auto for_each_edge = [&](auto&& f) {
        for (const auto& n : nodes) {
            const std::size_t k = key_of(n);
            const std::size_t uc = traits::user_count(g, n);
            for (std::size_t i = 0; i < uc; ++i) {
                const std::size_t ku = key_of(traits::user(g, n, i).user);
                if (ku != k) f(k, ku);
            }
        }
    };
    for (const auto& n : nodes) present[key_of(n)] = 1;
    for_each_edge([&](std::size_t k, std::size_t ku) {
        ++first[k + 1];
        ++indeg[ku];
    });
    for (std::size_t k = 0; k < key_count; ++k) first[k + 1] += first[k];
    std::vector<std::size_t> outs(first[key_count]);
    {
        std::vector<std::size_t> at(first.begin(), first.end() - 1);
        for_each_edge([&](std::size_t k, std::size_t ku) { outs[at[k]++] = ku; });
    }
    std::vector<std::size_t> ready;
    for (std::size_t k = 0; k < key_count; ++k)
        if (present[k] && indeg[k] == 0) ready.push_back(k);
    double p = 0;
    for (std::size_t r = 0; r < ready.size(); ++r) {
        const std::size_t k = ready[r];
        set_pos(k, p++);
        for (std::size_t e = first[k]; e < first[k + 1]; ++e)
            if (--indeg[outs[e]] == 0) ready.push_back(outs[e]);
    }
}

template <class G>
class quotient_checker {
public:
    using traits = graph_traits<G>;
    using N = typename traits::node_type;

    /// always_renumber: renumber the whole quotient after every accepted set (tests use it to
    /// check the fallback that a gap out of precision takes).
    explicit quotient_checker(const op_index<G>& index, bool always_renumber = false)
        : g_(index.graph()),
          index_(index),
          always_renumber_(always_renumber) {}

    /// Whether contracting `nodes` (none in an accepted set) keeps the quotient acyclic. If so
    /// and `commit`, the set is recorded as accepted (a single-exit set needs no record).
    bool accept(const N* nodes, std::size_t count, bool commit = true) {
        if (single_exit(nodes, count)) {
            ++single_exit_;
            return true;
        }
        if (group_.empty()) {  // the first set that needs a search or a record
            group_.assign(traits::index_bound(g_), -1);
            stamp_.assign(traits::index_bound(g_), 0);
        }
        ++epoch_;
        double max_pos = -1;
        for (std::size_t i = 0; i < count; ++i) {
            const std::size_t x = traits::index(g_, nodes[i]);
            stamp_[x] = member_stamp();
            max_pos = std::max(max_pos, pos_of(x));
        }
        // Search forward from the outside users of the set, below max_pos only.
        queue_.clear();
        for (std::size_t i = 0; i < count; ++i) push_users(nodes[i], max_pos, /*from_member=*/true);
        bool cycle = false;
        for (std::size_t q = 0; q < queue_.size() && !cycle; ++q) {
            const vertex v = queue_[q];
            if (v.group >= 0) {
                for (const N& m : members(v.group))
                    if (!push_users(m, max_pos, false)) cycle = true;
            } else if (!push_users(v.node, max_pos, false)) {
                cycle = true;
            }
        }
        if (cycle || !commit) return !cycle;
        // Accept: the set becomes one vertex at max_pos; what the search reached moves after it.
        const auto gid = static_cast<std::int32_t>(group_pos_.size());
        member_nodes_.insert(member_nodes_.end(), nodes, nodes + count);
        member_end_.push_back(member_nodes_.size());
        group_pos_.push_back(max_pos);
        for (std::size_t i = 0; i < count; ++i) group_[traits::index(g_, nodes[i])] = gid;
        if (always_renumber_)
            renumber();
        else if (!queue_.empty())
            move_after(max_pos);
        return true;
    }

    /// Sets recorded as accepted (single-exit sets are not recorded).
    std::size_t accepted() const { return group_pos_.size(); }
    /// How many calls were settled by the single-exit rule.
    std::size_t single_exit_count() const { return single_exit_; }

private:
    struct member_span {
        const N* b;
        const N* e;
        const N* begin() const { return b; }
        const N* end() const { return e; }
    };
    // The members of accepted set gid.
    member_span members(std::int32_t gid) const {
        const auto k = static_cast<std::size_t>(gid);
        const N* base = member_nodes_.data();
        return {base + (k == 0 ? 0 : member_end_[k - 1]), base + member_end_[k]};
    }

    struct vertex {
        std::int32_t group;  // >= 0: an accepted set; else the node
        N node;
        double pos;
    };

    // One member has no users in the set and every other member has users, all in the set (see
    // the top of this header). Sets of more than 16 take the general path (membership here is
    // a scan of the set).
    bool single_exit(const N* nodes, std::size_t count) const {
        if (count > 16) return false;
        bool sink = false;
        for (std::size_t i = 0; i < count; ++i) {
            const std::size_t uc = traits::user_count(g_, nodes[i]);
            std::size_t inside = 0;
            for (std::size_t k = 0; k < uc; ++k) {
                const N u = traits::user(g_, nodes[i], k).user;
                inside += std::find(nodes, nodes + count, u) != nodes + count;
            }
            if (inside == 0) {
                if (sink) return false;  // a second sink
                sink = true;
            } else if (inside != uc) {
                return false;  // an exit that is not the sink
            }
        }
        return sink;
    }

    std::uint32_t member_stamp() const { return epoch_ * 2; }
    std::uint32_t seen_stamp() const { return epoch_ * 2 + 1; }

    vertex vertex_of(const N& n) const {
        const std::size_t x = traits::index(g_, n);
        const std::int32_t gid = group_[x];
        if (gid >= 0) return vertex{gid, n, group_pos_[static_cast<std::size_t>(gid)]};
        return vertex{-1, n, pos_of(x)};
    }

    // Queue the quotient successors of n below max_pos; false if n is outside the set and one
    // of them is in it (a path left the set and came back).
    bool push_users(const N& n, double max_pos, bool from_member) {
        const std::size_t uc = traits::user_count(g_, n);
        for (std::size_t i = 0; i < uc; ++i) {
            const N u = traits::user(g_, n, i).user;
            const std::size_t x = traits::index(g_, u);
            if (stamp_[x] == member_stamp()) {
                if (from_member) continue;  // an edge inside the set
                return false;
            }
            const vertex v = vertex_of(u);
            if (v.pos > max_pos) continue;  // cannot lead back into the set (ties are searched)
            // Mark the vertex seen (a set by its first member's stamp slot).
            const std::size_t key = v.group >= 0 ? traits::index(g_, *members(v.group).begin()) : x;
            if (stamp_[key] == seen_stamp()) continue;
            stamp_[key] = seen_stamp();
            queue_.push_back(v);
        }
        return true;
    }

    // Renumber the reached vertices into (max_pos, next), keeping their order; next is the
    // smallest position among their successors at or after max_pos.
    void move_after(double max_pos) {
        double next = max_pos + static_cast<double>(queue_.size()) + 1;
        for (const vertex& v : queue_) {
            auto scan_users = [&](const N& n) {
                const std::size_t uc = traits::user_count(g_, n);
                for (std::size_t i = 0; i < uc; ++i) {
                    const vertex w = vertex_of(traits::user(g_, n, i).user);
                    if (w.pos > max_pos && w.pos < next) next = w.pos;
                }
            };
            if (v.group >= 0)
                for (const N& m : members(v.group)) scan_users(m);
            else
                scan_users(v.node);
        }
        std::vector<vertex> order(queue_.begin(), queue_.end());
        std::sort(order.begin(), order.end(), [](const vertex& a, const vertex& b) { return a.pos < b.pos; });
        if (!spread_into_gap(max_pos, next, order.size(), [&](std::size_t i, double p) { set_pos(order[i], p); }))
            renumber();
    }

    // Until a node first moves, positions are the index's (no array of the checker's own to
    // allocate and fill: a pass of matches under the closure rule never moves one).
    double pos_of(std::size_t x) const {
        return pos_.empty() ? static_cast<double>(index_.position_at(x)) : pos_[x];
    }
    void own_positions() {
        if (!pos_.empty()) return;
        pos_.resize(traits::index_bound(g_));
        for (std::size_t i = 0; i < pos_.size(); ++i) pos_[i] = static_cast<double>(index_.position_at(i));
    }

    void set_pos(const vertex& v, double p) {
        if (v.group >= 0) {
            group_pos_[static_cast<std::size_t>(v.group)] = p;
        } else {
            own_positions();
            pos_[traits::index(g_, v.node)] = p;
        }
    }

    // The whole quotient from scratch (rarely: a gap ran out of precision). Vertices: ungrouped
    // nodes (key = index) and groups (key = index_bound + group).
    void renumber() {
        own_positions();
        const std::size_t bound = traits::index_bound(g_);
        renumber_contracted(
            g_, traits::nodes(g_), bound + group_pos_.size(),
            [&](const N& n) {
                const std::int32_t gid = group_[traits::index(g_, n)];
                return gid >= 0 ? bound + static_cast<std::size_t>(gid) : traits::index(g_, n);
            },
            [&](std::size_t k, double p) {
                if (k >= bound)
                    group_pos_[k - bound] = p;
                else
                    pos_[k] = p;
            });
    }

    const G& g_;
    const op_index<G>& index_;
    bool always_renumber_;
    std::vector<double> pos_;            // by node index (ungrouped nodes); empty: index_'s
    std::vector<std::int32_t> group_;    // by node index: accepted set, or -1 (empty until needed)
    std::vector<std::uint32_t> stamp_;   // by node index: member / seen marks of the current check
    std::uint32_t epoch_ = 0;
    std::size_t single_exit_ = 0;
    std::vector<N> member_nodes_;         // the accepted sets' members, set after set
    std::vector<std::size_t> member_end_;  // by set: where its members end in member_nodes_
    std::vector<double> group_pos_;        // by set: its position
    std::vector<vertex> queue_;
};

}  // namespace detail
SGMATCH_END_NAMESPACE
