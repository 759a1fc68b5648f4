// sgmatch/partition/capability.hpp - capability partitioning: the largest connected, convex
// regions of supported nodes (the nGraph engine op, ONNX Runtime's GetCapability).
//
//   auto prop = sgmatch::make_capability_property<graph>("engine",
//       sgmatch::supported_ops<ops::Conv, ops::Relu, ops::Add, ops::MaxPool>{},   // or a predicate
//       [](const sgmatch::subgraph<graph>& s) { return my_engine_op(s); });
//   prop.min_size(2);
//   sgmatch::apply_property(g, prop);
//
// Regions grow in topological order: each supported node is merged with the regions of its
// supported producers whenever the merge keeps the region convex (no path leaves it and comes
// back). Then every edge between two supported regions is tried again until nothing changes, so
// the result is maximal: no two regions joined by an edge could merge without creating a cycle
// (or exceeding the property's maximum size). Unsupported nodes stay as they are, to run on the
// framework's own kernels. Convexity uses the same bounded search over a topological numbering
// of the contracted graph as convexity.hpp, after a landmark test that settles most long-range
// edges without a search (see build_landmarks); nothing recurses.
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <any>
#include <functional>
#include <stdexcept>
#include <string>
#include <string_view>
#include <type_traits>
#include <utility>
#include <vector>

#include "sgmatch/detail/config.hpp"
#include "sgmatch/graph/adapter.hpp"
#include "sgmatch/match/node_view.hpp"
#include "sgmatch/match/scan.hpp"
#include "sgmatch/partition/convexity.hpp"
#include "sgmatch/partition/partition.hpp"
#include "sgmatch/partition/property.hpp"
#include "sgmatch/pattern/tag.hpp"

SGMATCH_BEGIN_NAMESPACE

/// The supported set as op tags: a node is supported when its op is one of Tags' names.
template <class... Tags>
struct supported_ops {
    static_assert(sizeof...(Tags) > 0, "sgmatch::supported_ops<Tags...>: name at least one op tag");
    static_assert((is_op_tag_v<Tags> && ...),
                  "sgmatch::supported_ops<Tags...>: each Tag must be an op tag (see sgmatch/pattern/tag.hpp)");
};

namespace detail {

template <class T>
struct is_supported_ops : std::false_type {};
template <class... Tags>
struct is_supported_ops<supported_ops<Tags...>> : std::true_type {};

// Which nodes are supported, by index.
template <class G, class... Tags>
std::vector<std::uint8_t> supported_mask(const op_index<G>& index, supported_ops<Tags...>) {
    using traits = graph_traits<G>;
    const G& g = index.graph();
    std::vector<std::uint8_t> by_op(traits::op_count(g) + 1, 0);
    auto add = [&](auto tag) {
        using T = decltype(tag);
        for (std::size_t a = 0; a < op_tag_traits<T>::alias_count; ++a)
            if (auto o = traits::find_op(g, op_tag_traits<T>::alias(a))) by_op[*o] = 1;
    };
    (add(Tags{}), ...);
    std::vector<std::uint8_t> mask(traits::index_bound(g), 0);
    for (const auto& n : index.order())
        if (traits::kind(g, n) == node_kind::op) mask[traits::index(g, n)] = by_op[traits::op(g, n)];
    return mask;
}
template <class G, class Pred>
std::vector<std::uint8_t> supported_mask(const op_index<G>& index, const Pred& pred) {
    using traits = graph_traits<G>;
    const G& g = index.graph();
    std::vector<std::uint8_t> mask(traits::index_bound(g), 0);
    for (const auto& n : index.order())
        if (traits::kind(g, n) == node_kind::op && pred(node_view<G>(g, n))) mask[traits::index(g, n)] = 1;
    return mask;
}

/// Regions of supported nodes, merged along edges while convex. Vertices of the contracted
/// graph are union-find roots (unsupported nodes are their own).
template <class G>
class region_builder {
public:
    using traits = graph_traits<G>;
    using N = typename traits::node_type;

    /// always_renumber: renumber the whole contracted graph after every merge; always_relabel:
    /// relabel the window around every gap vertices move into (tests use them to check what a
    /// gap out of precision takes: the regions must not change).
    region_builder(const op_index<G>& index, std::vector<std::uint8_t> supported, std::size_t max_size,
                   bool always_renumber = false, bool always_relabel = false)
        : g_(index.graph()),
          supported_(std::move(supported)),
          max_size_(max_size),
          always_renumber_(always_renumber),
          always_relabel_(always_relabel) {
        const std::size_t bound = traits::index_bound(g_);
        parent_.resize(bound);
        pos_.assign(bound, 0.0);
        next_.assign(bound, none);
        tail_.resize(bound);
        size_.assign(bound, 1);
        if (!index.order().empty()) node_.assign(bound, index.order().front());
        version_.assign(bound, 0);
        seen_f_.assign(bound, 0);
        seen_b_.assign(bound, 0);
        double p = 0;
        for (const N& n : index.order()) {
            const std::size_t x = traits::index(g_, n);
            parent_[x] = static_cast<std::uint32_t>(x);
            pos_[x] = p++;
            node_[x] = n;
            tail_[x] = static_cast<std::uint32_t>(x);
        }
        order_ = &index.order();
        build_adjacency();
        build_landmarks();
    }

    /// Grow the regions (see the top of this header). Returns them, each in topological order,
    /// ordered by their first node.
    std::vector<std::vector<N>> run() {
        // Pass 1: in topological order, merge each supported node with its producers' regions.
        for (const N& v : *order_) {
            if (!supported_[traits::index(g_, v)]) continue;
            const std::size_t ic = traits::input_count(g_, v);
            for (std::size_t i = 0; i < ic; ++i) {
                const N p = traits::input(g_, v, i).node;
                if (supported_[traits::index(g_, p)]) try_merge(p, v);
            }
        }
        // Then the edges that failed, again, until nothing merges: maximality. A failed merge of
        // a and b can only succeed later if a or b has grown since (contraction elsewhere never
        // removes a path between them), so an edge is retried only then.
        while (!failed_.empty()) {
            std::vector<failure> retry;
            retry.swap(failed_);
            bool changed = false;
            for (const failure& f : retry) {
                const std::uint32_t a = find(f.a_root), b = find(f.b_root);
                if (a == b) continue;
                if (a == f.a_root && b == f.b_root && version_[a] == f.a_version && version_[b] == f.b_version) {
                    failed_.push_back(f);  // nothing changed for this edge yet
                    continue;
                }
                // The path that closed the cycle went through the witness's region. Merges only
                // contract it: while that region is neither a nor b, a path from a to b through it
                // remains (a part of it merged into a or b would close a cycle before), and so
                // does the cycle, with no search.
                if (const std::uint32_t w = find(static_cast<std::uint32_t>(traits::index(g_, f.witness))); w != a && w != b) {
                    failed_.push_back(failure{f.u, f.v, f.witness, a, b, version_[a], version_[b]});
                    continue;
                }
                if (try_merge(f.u, f.v)) changed = true;
            }
            if (!changed) break;
        }
        std::vector<std::vector<N>> out;
        std::vector<std::uint8_t> done(parent_.size(), 0);
        std::vector<std::uint32_t> rank(parent_.size(), 0);
        std::uint32_t r = 0;
        for (const N& n : *order_) rank[traits::index(g_, n)] = r++;
        for (const N& n : *order_) {
            const std::size_t x = traits::index(g_, n);
            if (!supported_[x]) continue;
            const std::uint32_t root = find(static_cast<std::uint32_t>(x));
            if (done[root]) continue;
            done[root] = 1;
            std::vector<N> m;
            m.reserve(size_[root]);
            for (std::uint32_t k = root; k != none; k = next_[k]) m.push_back(node_[k]);
            std::sort(m.begin(), m.end(), [&](const N& a, const N& b) {
                return rank[traits::index(g_, a)] < rank[traits::index(g_, b)];
            });
            out.push_back(std::move(m));
        }
        return out;
    }

    /// Whether the regions of a and b are one (for tests).
    bool same(const N& a, const N& b) {
        return find(static_cast<std::uint32_t>(traits::index(g_, a))) ==
               find(static_cast<std::uint32_t>(traits::index(g_, b)));
    }

private:
    std::uint32_t find(std::uint32_t x) {
        while (parent_[x] != x) {
            parent_[x] = parent_[parent_[x]];  // path halving, no recursion
            x = parent_[x];
        }
        return x;
    }

    // One direction of the search: the vertices found, those still to expand (a heap, the one
    // nearest the other end first), and where the expansion of the current one stands.
    struct side {
        std::vector<std::uint32_t> found;                    // found[0]: where the search starts
        std::vector<std::pair<double, std::uint32_t>> heap;  // (position, vertex)
        std::uint32_t current = 0;
        std::uint32_t member = none;  // the next member of current to expand (none: done)
    };
    // What one try_merge's two searches share.
    struct search {
        std::uint32_t a, b;  // the two roots, pos(a) < pos(b)
        double lo, hi;       // the window: pos(a), pos(b)
        std::uint32_t epoch;
        bool cycle;
        std::uint32_t witness;  // index of a node on the path that closed the cycle
    };

    // Expand one member on one side (Forward: a's side, along users; else b's, along inputs);
    // false when that side has nothing left. Forward expands the highest position first,
    // backward the lowest.
    template <bool Forward>
    bool step(search& s) {
        side& sd = Forward ? fwd_ : bwd_;
        const auto nearer = [](const std::pair<double, std::uint32_t>& x, const std::pair<double, std::uint32_t>& y) {
            return Forward ? x.first < y.first : x.first > y.first;
        };
        if (sd.member == none) {
            if (sd.heap.empty()) return false;
            std::pop_heap(sd.heap.begin(), sd.heap.end(), nearer);
            sd.current = sd.heap.back().second;
            sd.heap.pop_back();
            sd.member = sd.current;  // a root heads its member list
        }
        const std::uint32_t vert = sd.current, m = sd.member;
        sd.member = next_[m];
        const std::uint32_t near = Forward ? s.a : s.b, far = Forward ? s.b : s.a;
        std::uint32_t* const mine = Forward ? seen_f_.data() : seen_b_.data();
        const std::uint32_t* const theirs = Forward ? seen_b_.data() : seen_f_.data();
        const std::uint32_t* it = Forward ? users_begin(m) : inputs_begin(m);
        const std::uint32_t* const end = Forward ? users_end(m) : inputs_end(m);
        for (; it != end; ++it) {
            const std::uint32_t w = find(*it);
            if (w == vert || mine[w] == s.epoch) continue;
            if (w == far) {
                if (vert != near) {  // around the direct edge
                    s.cycle = true;
                    s.witness = m;
                    return true;
                }
                continue;
            }
            if (Forward ? pos_[w] > s.hi : pos_[w] < s.lo) continue;  // outside the window
            if (theirs[w] == s.epoch) {  // a reaches w and w reaches b
                s.cycle = true;
                s.witness = *it;
                return true;
            }
            mine[w] = s.epoch;
            sd.found.push_back(w);
            sd.heap.emplace_back(pos_[w], w);
            std::push_heap(sd.heap.begin(), sd.heap.end(), nearer);
        }
        return true;
    }
    // Whether a side has nothing left to expand.
    static bool exhausted(const side& sd) { return sd.member == none && sd.heap.empty(); }

    // Merge the regions of u and v (an edge u -> v) if the result stays convex: no path from
    // a = region(u) to b = region(v) through another vertex. Such a path stays strictly between
    // pos(a) and pos(b). Two searches run in turns, one member at a time: forward from a and
    // backward from b, each kept inside that window. They meeting is a cycle; either running out
    // proves there is none, at a cost bounded by the smaller of the two regions searched. Each
    // side expands the vertex it found nearest the other end first (best-first by position):
    // where a path exists, it dives along it in about (window / edge span) steps instead of
    // sweeping the window breadth-first (a long-range edge over a chain of local ones).
    bool try_merge(const N& u, const N& v) {
        std::uint32_t a = find(static_cast<std::uint32_t>(traits::index(g_, u)));
        std::uint32_t b = find(static_cast<std::uint32_t>(traits::index(g_, v)));
        if (a == b) return false;
        if (std::size_t{size_[a]} + size_[b] > max_size_) return false;  // regions only grow
        if (pos_[a] > pos_[b]) std::swap(a, b);  // edges run from lower to higher positions
        if (landmark_between(a, b)) return false;  // a cycle for good
        search s{a, b, pos_[a], pos_[b], ++epoch_, false, 0};
        for (auto [sd, start] : {std::pair<side*, std::uint32_t>{&fwd_, a}, {&bwd_, b}}) {
            sd->found.clear();  // not assign(1, start): a fill, at a million calls
            sd->found.push_back(start);
            sd->heap.clear();
            sd->current = start;
            sd->member = start;
        }
        seen_f_[a] = s.epoch;
        seen_b_[b] = s.epoch;
        // The smaller region's side goes first: in the first pass b is mostly the node being
        // added, whose few inputs settle most merges in one step. A side is done as soon as it
        // has nothing left (not one turn later).
        bool forward_done = false;
        for (bool forward = size_[a] <= size_[b];; forward = !forward) {
            if (forward) {
                if (!step<true>(s) || (!s.cycle && exhausted(fwd_))) {
                    forward_done = true;
                    break;
                }
            } else if (!step<false>(s) || (!s.cycle && exhausted(bwd_))) {
                break;
            }
            if (s.cycle) break;
        }
        if (s.cycle) {
            failed_.push_back(failure{u, v, node_[s.witness], a, b, version_[a], version_[b]});
            return false;
        }
        const double lo = s.lo, hi = s.hi;
        // Merge. Forward search complete: the union sits at pos(b) and what it reached
        // (downstream of a, below pos(b)) moves into the gap after it. Backward complete: the
        // union sits at pos(a) and what it reached (upstream of b, above pos(a)) moves before it.
        std::uint32_t big = a, small = b;
        if (size_[big] < size_[small]) std::swap(big, small);
        next_[tail_[big]] = small;  // small's members after big's: big still heads the list
        tail_[big] = tail_[small];
        size_[big] += size_[small];
        parent_[small] = big;
        for (std::size_t w = 0; w < words_; ++w) {  // the union reaches, and is reached from, what either was
            to_[big * words_ + w] |= to_[small * words_ + w];
            from_[big * words_ + w] |= from_[small * words_ + w];
        }
        ++version_[big];
        queue_.clear();
        if (forward_done) {
            queue_.assign(fwd_.found.begin() + 1, fwd_.found.end());
            pos_[big] = hi;
            if (!queue_.empty()) move_after(big, hi);
        } else {
            queue_.assign(bwd_.found.begin() + 1, bwd_.found.end());
            pos_[big] = lo;
            if (!queue_.empty()) move_before(big, lo);
        }
        if (always_renumber_) renumber();
        return true;
    }

    // The graph's edges by node index, inputs then users of each node in one array: what the
    // searches, the landmarks and the renumbering after a merge read, a few contiguous words per
    // node instead of an adapter call per edge. Node x's inputs are nbr_[first_[x], mid_[x]),
    // its users nbr_[mid_[x], first_[x + 1]) (8 bytes a node besides the edges: on a graph of a
    // million nodes every array here is megabytes of pages to fault in).
    void build_adjacency() {
        const std::size_t bound = parent_.size();
        first_.assign(bound + 1, 0);
        mid_.resize(bound);
        for (const N& n : *order_)
            first_[traits::index(g_, n) + 1] =
                static_cast<std::uint32_t>(traits::input_count(g_, n) + traits::user_count(g_, n));
        std::size_t edges = 0;
        for (std::size_t x = 0; x < bound; ++x) {
            edges += first_[x + 1];
            if (edges >= none) throw std::length_error("sgmatch::capability_regions: 2^32 edges or more");
            first_[x + 1] = static_cast<std::uint32_t>(edges);
        }
        nbr_.resize(edges);
        for (const N& n : *order_) {
            const std::size_t x = traits::index(g_, n);
            std::uint32_t at = first_[x];
            const std::size_t ic = traits::input_count(g_, n), uc = traits::user_count(g_, n);
            for (std::size_t i = 0; i < ic; ++i)
                nbr_[at++] = static_cast<std::uint32_t>(traits::index(g_, traits::input(g_, n, i).node));
            mid_[x] = at;
            for (std::size_t k = 0; k < uc; ++k)
                nbr_[at++] = static_cast<std::uint32_t>(traits::index(g_, traits::user(g_, n, k).user));
        }
    }
    const std::uint32_t* inputs_begin(std::size_t x) const { return nbr_.data() + first_[x]; }
    const std::uint32_t* inputs_end(std::size_t x) const { return nbr_.data() + mid_[x]; }
    const std::uint32_t* users_begin(std::size_t x) const { return nbr_.data() + mid_[x]; }
    const std::uint32_t* users_end(std::size_t x) const { return nbr_.data() + first_[x + 1]; }

    // Landmarks: up to 64 * landmark_words unsupported op nodes spread over the topological
    // order. An unsupported node is a vertex of its own for good, so a path u -> L -> v through a
    // landmark L proves, once and for all, that merging the regions of u and v makes a cycle (the
    // regions only grow, L stays outside them): the long-range edges whose windows a search
    // would take long to cross are settled by two bitset reads. from_[x]: the landmarks with a
    // path to x (or that are x); to_[x]: those x has a path to (or that are x); by node at
    // first, then by root (a merge ORs the two: a path from any member is the region's).
    static constexpr std::size_t landmark_words = 2;
    void build_landmarks() {
        const std::vector<N>& order = *order_;
        std::vector<std::size_t> unsupported;  // positions in order
        for (std::size_t i = 0; i < order.size(); ++i) {
            const std::size_t x = traits::index(g_, order[i]);
            if (!supported_[x] && traits::kind(g_, order[i]) == node_kind::op) unsupported.push_back(i);
        }
        if (unsupported.empty()) return;
        words_ = std::min(landmark_words, (unsupported.size() + 63) / 64);
        const std::size_t K = std::min(64 * words_, unsupported.size());
        const std::size_t bound = parent_.size();
        from_.assign(bound * words_, 0);
        to_.assign(bound * words_, 0);
        // Each landmark starts with its own bit in both sets, so that a plain OR along the edges
        // carries it (a landmark is unsupported, never a region: its own bit is never asked).
        for (std::size_t k = 0; k < K; ++k) {
            const std::size_t at = traits::index(g_, order[unsupported[k * unsupported.size() / K]]) * words_ + k / 64;
            from_[at] |= std::uint64_t{1} << (k % 64);
            to_[at] |= std::uint64_t{1} << (k % 64);
        }
        // Locals, not members: a store through a std::uint64_t* may alias a std::size_t member,
        // which would make every iteration reload them.
        const std::size_t W = words_;
        auto add = [W](std::uint64_t* into, std::size_t x, std::size_t y) {  // into[x] |= into[y]
            for (std::size_t w = 0; w < W; ++w) into[x * W + w] |= into[y * W + w];
        };
        std::uint64_t* const from = from_.data();
        std::uint64_t* const to = to_.data();
        for (const N& n : order) {
            const std::size_t x = traits::index(g_, n);
            for (const std::uint32_t* in = inputs_begin(x); in != inputs_end(x); ++in) add(from, x, *in);
        }
        for (std::size_t i = order.size(); i-- > 0;) {
            const std::size_t x = traits::index(g_, order[i]);
            for (const std::uint32_t* out = users_begin(x); out != users_end(x); ++out) add(to, x, *out);
        }
    }
    // Whether a path root a -> landmark -> root b exists.
    bool landmark_between(std::uint32_t a, std::uint32_t b) const {
        for (std::size_t w = 0; w < words_; ++w)
            if ((to_[a * words_ + w] & from_[b * words_ + w]) != 0) return true;
        return false;
    }

    void move_after(std::uint32_t merged, double limit) {
        double next = limit + static_cast<double>(queue_.size()) + 1;
        for (std::uint32_t w : queue_)
            for (std::uint32_t k = w; k != none; k = next_[k]) {
                for (const std::uint32_t* out = users_begin(k); out != users_end(k); ++out) {
                    const std::uint32_t x = find(*out);
                    if (x != merged && pos_[x] > limit && pos_[x] < next) next = pos_[x];
                }
            }
        spread(limit, next);
    }

    void move_before(std::uint32_t merged, double limit) {
        double prev = limit - static_cast<double>(queue_.size()) - 1;
        for (std::uint32_t w : queue_)
            for (std::uint32_t k = w; k != none; k = next_[k]) {
                for (const std::uint32_t* in = inputs_begin(k); in != inputs_end(k); ++in) {
                    const std::uint32_t x = find(*in);
                    if (x != merged && pos_[x] < limit && pos_[x] > prev) prev = pos_[x];
                }
            }
        spread(prev, limit);
    }

    // Renumber the queued vertices into (from, to), keeping their order.
    void spread(double from, double to) {
        std::sort(queue_.begin(), queue_.end(), [&](std::uint32_t x, std::uint32_t y) { return pos_[x] < pos_[y]; });
        const auto set = [&](std::size_t i, double p) { pos_[queue_[i]] = p; };
        if (!always_relabel_ && spread_into_gap(from, to, queue_.size(), set)) return;
        // Out of precision: the vertices around the gap first, everything only when that keeps
        // happening (convexity.hpp).
        if (queued_.empty()) queued_.assign(parent_.size(), 0);
        for (std::uint32_t x : queue_) queued_[x] = 1;
        const auto visit = [&](auto&& f) {
            for (std::uint32_t x = 0; x < parent_.size(); ++x)
                if (parent_[x] == x && !queued_[x]) f(pos_[x]);
        };
        const bool relabeled = (relabels_ < max_relabels || always_relabel_) && relabel_window(from, to, visit);
        for (std::uint32_t x : queue_) queued_[x] = 0;
        if (relabeled && spread_into_gap(from, to, queue_.size(), set)) {
            ++relabels_;
            return;
        }
        renumber();
    }

    // Local relabelings (relabel_window) in a row before the next gap renumbers everything.
    static constexpr std::size_t max_relabels = 64;

    // The contracted graph from scratch (rarely: gaps ran out of precision too often).
    void renumber() {
        relabels_ = 0;
        renumber_contracted(
            g_, *order_, parent_.size(),
            [&](const N& n) { return static_cast<std::size_t>(find(static_cast<std::uint32_t>(traits::index(g_, n)))); },
            [&](std::size_t root, double p) { pos_[root] = p; });
    }

    const G& g_;
    const std::vector<N>* order_ = nullptr;
    std::vector<std::uint8_t> supported_;
    std::size_t max_size_;
    bool always_renumber_, always_relabel_;
    std::vector<std::uint32_t> parent_;
    std::vector<double> pos_;               // by root
    // Members as lists in flat arrays (no allocation per node): a root heads its list.
    static constexpr std::uint32_t none = 0xffffffffu;
    std::vector<N> node_;                 // by index: the node
    std::vector<std::uint32_t> next_;     // by index: the next member of its region, or none
    std::vector<std::uint32_t> tail_;     // by root: the last member
    std::vector<std::uint32_t> size_;     // by root: how many members
    std::vector<std::uint32_t> seen_f_, seen_b_;  // by root: found by the forward / backward search
    std::vector<std::uint32_t> first_, mid_;  // by index: where its inputs, then users, are in nbr_
    std::vector<std::uint32_t> nbr_;          // every node's inputs then users, as indices
    std::uint32_t epoch_ = 0;
    side fwd_, bwd_;
    struct failure {
        N u, v;
        N witness;  // a node in a region on the path from a to b that made the cycle
        std::uint32_t a_root, b_root;
        std::uint32_t a_version, b_version;
    };
    std::vector<failure> failed_;
    std::vector<std::uint32_t> version_;  // by root: merges so far
    std::size_t words_ = 0;                      // landmark bitset words per vertex (0: no landmarks)
    std::vector<std::uint64_t> from_, to_;       // by root: landmark bitsets
    std::vector<std::uint32_t> queue_;  // vertices to renumber
    std::vector<std::uint8_t> queued_;  // by root: in queue_, while a window is relabeled (empty until then)
    std::size_t relabels_ = 0;          // local relabelings since the last renumbering
};

}  // namespace detail

/// The capability regions of g: connected, convex, maximal sets of supported nodes (each in
/// topological order), by their first node's position.
template <class G, class Supported>
std::vector<std::vector<typename graph_traits<G>::node_type>> capability_regions(
    const op_index<G>& index, const Supported& supported, std::size_t max_size = static_cast<std::size_t>(-1)) {
    detail::region_builder<G> b(index, detail::supported_mask(index, supported), max_size);
    return b.run();
}

/// ONNX Runtime's GetCapability: the capability regions of g with at least min_size nodes, each
/// with its boundary (nodes in topological order; inputs, the values read from outside, in order
/// of first use; outputs, the values used outside or graph outputs, in node order), g unchanged.
/// A framework fuses them itself and compiles each (exec::build_region, or its own engine).
template <class G, class Supported>
std::vector<subgraph<G>> capability(const G& g, const Supported& supported, std::size_t min_size = 1) {
    static_assert(detail::is_supported_ops<Supported>::value || std::is_invocable_r_v<bool, const Supported&, node_view<G>>,
                  "sgmatch::capability(g, supported): supported must be supported_ops<Tags...>{} or a predicate "
                  "bool(sgmatch::node_view<G>)");
    const op_index<G> index(g);
    std::vector<subgraph<G>> out;
    detail::index_marks marks;
    for (auto& r : capability_regions(index, supported)) {
        if (r.size() < min_size) continue;
        subgraph<G> s;
        detail::boundary(s, g, r.data(), r.size(), &marks);
        s.id = out.size();
        out.push_back(std::move(s));
    }
    return out;
}

/// A property whose subgraphs are the capability regions of `supported` (a supported_ops<...>
/// value, or a predicate over node_view<G>). The factory is called as factory(subgraph). The
/// property's min_size leaves small regions alone; max_size bounds the regions as they grow.
template <class G, class Supported, class F>
property<G> make_capability_property(std::string name, Supported supported, F factory) {
    static_assert(detail::is_supported_ops<Supported>::value || std::is_invocable_r_v<bool, const Supported&, node_view<G>>,
                  "sgmatch::make_capability_property(name, supported, factory): supported must be "
                  "supported_ops<Tags...>{} or a predicate bool(sgmatch::node_view<G>)");
    static_assert(std::is_invocable_v<const F&, const subgraph<G>&>,
                  "sgmatch::make_capability_property(name, supported, factory): factory must be "
                  "callable as factory(const subgraph<G>&)");
    using N = typename graph_traits<G>::node_type;
    auto scan = [supported, factory](const op_index<G>& index, taken_mask& taken,
                                     const typename property<G>::accept_fn& accept,
                                     const typename property<G>::sink& out, bool /*escape_all*/,
                                     std::size_t max_nodes) {
        const G& g = index.graph();
        if (taken.size() < graph_traits<G>::index_bound(g)) taken.resize(graph_traits<G>::index_bound(g), 0);
        std::vector<std::vector<N>> kept;
        for (auto& r : capability_regions(index, supported, max_nodes)) {
            if (!accept(r.data(), r.size())) continue;
            for (const N& n : r) taken[graph_traits<G>::index(g, n)] = 1;
            kept.push_back(std::move(r));
        }
        detail::sink_sets<G>(kept, factory, out);
    };
    property<G> prop(std::move(name), std::move(scan));
    prop.convex_by_construction();  // the regions are convex together (see the top of this header)
    return prop;
}

SGMATCH_END_NAMESPACE
