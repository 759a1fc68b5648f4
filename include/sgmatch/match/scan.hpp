// sgmatch/match/scan.hpp - whole-graph matching.
//
// op_index<G> reads the graph once: it checks it (dangling inputs, ports out of range, cycles
// or an order that is not topological raise sgmatch::graph_error naming the node; skipped for
// graphs whose traits declare them checked_by_construction, as the built-in graph's do), records
// each node's topological position and groups nodes by op id. A scan then visits only the
// nodes whose op is an anchor of the pattern, in topological order, and compares integer op
// ids, never strings, in its loop.
//
// Within one scan, matches do not overlap: candidates are tried in topological order of their
// anchor and the nodes of a match are not available to later candidates (the partition rule).
//
// An op_index describes the graph as it was when built: build a new one after writing to the
// graph. Scans of simple chains use the straight-line path (docs/design.md), which relies on the
// checks op_index made.
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <iterator>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#include "sgmatch/analysis/anchors.hpp"
#include "sgmatch/detail/config.hpp"
#include "sgmatch/graph/adapter.hpp"
#include "sgmatch/match/match.hpp"

SGMATCH_BEGIN_NAMESPACE

template <class G>
class op_index {
public:
    using traits = graph_traits<G>;
    using node_type = typename traits::node_type;
    static constexpr std::uint32_t unplaced = 0xffffffffu;

    explicit op_index(const G& g) : g_(&g) {
        static_assert(detail::check_graph<G>(), "sgmatch::op_index<G>: see the message above");
        const std::size_t bound = traits::index_bound(g);
        const std::size_t ops = traits::op_count(g);
        pos_.assign(bound, unplaced);
        order_.reserve(traits::node_count(g));
        std::vector<std::uint32_t> count(ops + 1, 0);
        // Each node's op (ops for non-op nodes): from the graph's op_codes array when it has one
        // (4 bytes a node, read twice), else read from each node once into op_at, which the
        // grouping below then reads in order.
        std::vector<std::uint32_t> op_at;
        auto op_of = [&](const node_type& n) {
            if constexpr (detail::has_op_codes_v<G>) {
                return std::min(traits::op_codes(g)[traits::index(g, n)], static_cast<std::uint32_t>(ops));
            } else {
                return traits::kind(g, n) == node_kind::op ? static_cast<std::uint32_t>(traits::op(g, n))
                                                            : static_cast<std::uint32_t>(ops);
            }
        };
        if constexpr (!detail::has_op_codes_v<G>) op_at.reserve(traits::node_count(g));
        std::uint32_t p = 0;
        for (const node_type& n : traits::nodes(g)) {
            // A graph that vouches for its order and ranges is not checked again.
            if constexpr (!detail::checked_by_construction_v<G>) check_node(g, n, bound);
            const std::uint32_t o = op_of(n);
            ++count[o];
            if constexpr (!detail::has_op_codes_v<G>) op_at.push_back(o);
            pos_[traits::index(g, n)] = p++;
            order_.push_back(n);
        }
        if (order_.size() != traits::node_count(g))
            throw graph_error("sgmatch::graph_error: nodes(g) lists " + std::to_string(order_.size()) +
                              " nodes but node_count(g) is " + std::to_string(traits::node_count(g)));
        if constexpr (!detail::checked_by_construction_v<G>) check_users(g, bound);
        // Group by op id (counting sort keeps topological order inside each group).
        offsets_.assign(ops + 1, 0);
        for (std::size_t o = 0; o < ops; ++o) offsets_[o + 1] = offsets_[o] + count[o];
        by_op_.resize(offsets_[ops]);
        std::vector<std::uint32_t> fill(offsets_.begin(), offsets_.end() - 1);
        for (std::size_t i = 0; i < order_.size(); ++i) {
            std::uint32_t o;
            if constexpr (detail::has_op_codes_v<G>)
                o = op_of(order_[i]);
            else
                o = op_at[i];
            if (o < ops) by_op_[fill[o]++] = order_[i];
        }
    }

    const G& graph() const { return *g_; }
    /// All nodes in topological order.
    const std::vector<node_type>& order() const { return order_; }
    /// Topological position of a node.
    std::uint32_t position(node_type n) const { return pos_[traits::index(*g_, n)]; }
    /// Topological position of the node with index i (unplaced if no node has it).
    std::uint32_t position_at(std::size_t i) const { return pos_[i]; }
    /// The op nodes with op id o, in topological order.
    std::pair<const node_type*, const node_type*> nodes_with_op(std::uint32_t o) const {
        if (o + 1 >= offsets_.size()) return {nullptr, nullptr};
        return {by_op_.data() + offsets_[o], by_op_.data() + offsets_[o + 1]};
    }

private:
    // Raises graph_error naming n if its index, inputs or op id are out of range, it was listed
    // before, or a producer has not been listed yet.
    void check_node(const G& g, const node_type& n, std::size_t bound) const {
        const std::size_t ops = traits::op_count(g);
        const std::size_t i = traits::index(g, n);
        auto nm = [&] { return std::string(traits::name(g, n)); };  // for errors only
        if (i >= bound)
            throw graph_error("sgmatch::graph_error: node '" + nm() + "' has index " + std::to_string(i) +
                              ", not below index_bound " + std::to_string(bound));
        if (pos_[i] != unplaced)
            throw graph_error("sgmatch::graph_error: node '" + nm() + "' appears twice in nodes(g) "
                              "(or shares its index with another node)");
        const node_kind k = traits::kind(g, n);
        const std::size_t ins = traits::input_count(g, n);
        if (k != node_kind::op && ins != 0)
            throw graph_error("sgmatch::graph_error: node '" + nm() + "' is a graph input or constant "
                              "but has inputs");
        for (std::size_t s = 0; s < ins; ++s) check_input(g, n, s, bound);
        if (k == node_kind::op) {
            const std::uint32_t o = traits::op(g, n);
            if (o >= ops)
                throw graph_error("sgmatch::graph_error: node '" + nm() + "' has op id " + std::to_string(o) +
                                  ", not below op_count " + std::to_string(ops));
        }
    }

    // Raises graph_error naming the first node whose users (user_count, user) are not the input
    // slots that read it: the matcher walks users, and an adapter that under-reports them would
    // have patterns match (or fail to match) on a graph that is not the one the inputs describe.
    void check_users(const G& g, std::size_t bound) const {
        std::vector<std::uint32_t> reads(bound, 0);
        for (const node_type& n : order_)
            for (std::size_t s = 0, k = traits::input_count(g, n); s < k; ++s) ++reads[traits::index(g, traits::input(g, n, s).node)];
        for (const node_type& n : order_) {
            const std::size_t uc = traits::user_count(g, n), want = reads[traits::index(g, n)];
            bool ok = uc == want;
            for (std::size_t u = 0; ok && u < uc; ++u) {
                const auto use = traits::user(g, n, u);
                const std::size_t j = traits::index(g, use.user);
                ok = j < bound && pos_[j] != unplaced && use.slot < traits::input_count(g, use.user) &&
                     traits::input(g, use.user, use.slot).node == n;
            }
            if (!ok)
                throw graph_error("sgmatch::graph_error: node '" + std::string(traits::name(g, n)) + "' has " + std::to_string(uc) +
                                  " user(s) by user_count/user, but " + std::to_string(want) +
                                  " input slot(s) of the graph's nodes read it: users must list each (node, slot) that reads it");
        }
    }

    void check_input(const G& g, const node_type& n, std::size_t s, std::size_t bound) const {
        auto nm = [&] { return std::string(traits::name(g, n)); };  // for errors only
        const auto v = traits::input(g, n, s);
        const std::size_t j = traits::index(g, v.node);
        if (j >= bound || pos_[j] == unplaced) {
            // Either the producer is not in the graph, or it comes later: not a DAG order.
            bool listed = false;
            if (j < bound)
                for (const node_type& m : traits::nodes(g))
                    if (m == v.node) {
                        listed = true;
                        break;
                    }
            if (!listed)
                throw graph_error("sgmatch::graph_error: node '" + nm() + "' input " + std::to_string(s) +
                                  " refers to a node that is not in the graph");
            throw graph_error("sgmatch::graph_error: node '" + nm() + "' input " + std::to_string(s) + " reads '" +
                              std::string(traits::name(g, v.node)) +
                              "', which does not come before it in nodes(g): the graph has a cycle "
                              "or its order is not topological");
        }
        const std::size_t outs = traits::output_count(g, v.node);
        if (v.port >= outs)
            throw graph_error("sgmatch::graph_error: node '" + nm() + "' input " + std::to_string(s) +
                              " reads output " + std::to_string(v.port) + " of '" +
                              std::string(traits::name(g, v.node)) + "', which has " +
                              std::to_string(outs) + " output(s)");
    }

    const G* g_;
    std::vector<std::uint32_t> pos_;
    std::vector<node_type> order_;
    std::vector<std::uint32_t> offsets_;
    std::vector<node_type> by_op_;
};

/// Nodes already taken by a match, indexed by graph_traits<G>::index. A scan skips taken nodes
/// and marks the nodes of each match it accepts, so one mask shared by several scans keeps
/// their matches disjoint (and lets a caller reuse the buffer).
using taken_mask = std::vector<std::uint8_t>;

namespace detail {

/// The scan itself, shared by every pattern on graphs of type G: calls on_match(obj, engine)
/// for each match; when it returns true the match is accepted and its nodes marked taken.
/// allow_fast = false keeps to the general path (benchmarks measure it that way); escape_all
/// lets every matched node have outside users (see engine).
template <class G>
std::size_t scan(const op_index<G>& index, const program<G>& prog, taken_mask& taken, const void* obj,
                 bool (*on_match)(const void*, const engine<G, false>&), bool allow_fast = true,
                 bool escape_all = false, const void* veto_obj = nullptr,
                 typename engine<G, false>::veto_fn veto = nullptr) {
    using traits = graph_traits<G>;
    using N = typename traits::node_type;
    const G& g = index.graph();
    if (taken.size() < traits::index_bound(g)) taken.resize(traits::index_bound(g), 0);
    std::size_t found = 0;
    engine<G, false> e(g, prog, taken.data(), nullptr, escape_all);  // reused
    e.set_veto(veto_obj, veto);
    allow_fast = allow_fast && !escape_all;  // the straight-line path follows single uses only
    if (prog.fast && allow_fast) e.prepare_fast();
    auto matches_at = [&](const N& n) {
        if (prog.fast && allow_fast) {  // the graph was checked by op_index
            const auto r = e.run_fast(n);
            if (r != fast_result::fallback) return r == fast_result::matched;
        }
        return e.run(n);
    };
    auto attempt = [&](const N& n) {
        if (taken[traits::index(g, n)] || !matches_at(n) || !on_match(obj, e)) return;
        for (std::size_t i = 0; i < e.count(); ++i) taken[traits::index(g, e.nodes()[i])] = 1;
        ++found;
    };
    if (prog.wildcard) {
        for (const N& n : index.order()) attempt(n);
    } else if (prog.anchor_ids.size() == 1) {
        auto [b, end] = index.nodes_with_op(prog.anchor_ids[0]);
        for (auto it = b; it != end; ++it) attempt(*it);
    } else if (!prog.anchor_ids.empty()) {
        // Merge the per-op lists (each in topological order) by position.
        std::vector<std::pair<const N*, const N*>> lists;
        for (auto o : prog.anchor_ids) lists.push_back(index.nodes_with_op(o));
        for (;;) {
            std::size_t best = lists.size();
            for (std::size_t i = 0; i < lists.size(); ++i)
                if (lists[i].first != lists[i].second &&
                    (best == lists.size() || index.position(*lists[i].first) < index.position(*lists[best].first)))
                    best = i;
            if (best == lists.size()) break;
            attempt(*lists[best].first++);
        }
    }
    return found;
}

}  // namespace detail

/// Call f(result) for each match of p that uses no taken node, in topological order of the
/// anchors; accepted matches are marked in `taken` (resized to the graph's index bound if
/// smaller). Returns the number of matches.
template <class G, class P, class F>
std::size_t for_each_match(const op_index<G>& index, const P& p, F&& f, taken_mask& taken) {
    if constexpr (!detail::check_entry<G, P>()) {
        return 0;
    } else {
        const matcher<G, P> m(index.graph(), p);
        using fn = std::remove_reference_t<F>;
        return detail::scan(index, m.program(), taken, &f, +[](const void* obj, const detail::engine<G, false>& e) {
            (*static_cast<fn*>(const_cast<void*>(obj)))(match_result<G, P>(e));
            return true;
        });
    }
}

/// Call f(result) for each non-overlapping match of p, in topological order of the anchors.
/// Returns the number of matches.
template <class G, class P, class F>
std::size_t for_each_match(const op_index<G>& index, const P& p, F&& f) {
    taken_mask taken;
    return for_each_match(index, p, f, taken);
}

namespace detail {

// The storage of a match_list: depends on the node type only, so that lists of many patterns
// share one set of vector instantiations.
template <class N>
struct match_store {
    struct span {
        std::uint32_t node_at, node_n, log_at, log_n;
        N output;
    };
    template <class G>
    void add(const engine<G, false>& e) {
        spans.push_back(span{static_cast<std::uint32_t>(nodes.size()), static_cast<std::uint32_t>(e.count()),
                             static_cast<std::uint32_t>(log.size()), static_cast<std::uint32_t>(e.log_size()),
                             e.output()});
        nodes.insert(nodes.end(), e.nodes(), e.nodes() + e.count());
        log.insert(log.end(), e.log(), e.log() + e.log_size());
    }
    std::vector<N> nodes;
    std::vector<cap_entry<N>> log;
    std::vector<span> spans;
};

}  // namespace detail

/// The matches of one scan, stored compactly (all nodes in one array, all captures in another)
/// and handed out as match_result values: `list[i]`, `front()`, range-for.
template <class G, class P>
class match_list {
public:
    using node_type = typename graph_traits<G>::node_type;
    using value_type = match_result<G, P>;

    std::size_t size() const { return store_.spans.size(); }
    bool empty() const { return store_.spans.empty(); }
    value_type operator[](std::size_t i) const {
        const auto& s = store_.spans[i];
        return value_type(store_.nodes.data() + s.node_at, s.node_n, store_.log.data() + s.log_at, s.log_n,
                          s.output);
    }
    value_type front() const { return (*this)[0]; }
    value_type back() const { return (*this)[size() - 1]; }

    class iterator {
    public:
        using value_type = match_result<G, P>;
        using reference = value_type;
        using difference_type = std::ptrdiff_t;
        using iterator_category = std::input_iterator_tag;
        iterator(const match_list* l, std::size_t i) : l_(l), i_(i) {}
        value_type operator*() const { return (*l_)[i_]; }
        iterator& operator++() {
            ++i_;
            return *this;
        }
        bool operator==(const iterator& o) const { return i_ == o.i_; }
        bool operator!=(const iterator& o) const { return i_ != o.i_; }

    private:
        const match_list* l_;
        std::size_t i_;
    };
    iterator begin() const { return iterator(this, 0); }
    iterator end() const { return iterator(this, size()); }

private:
    template <class G2, class P2, class A2>
    friend auto find_all(const op_index<G2>&, const P2&, taken_mask&, A2&&, bool);

    detail::match_store<node_type> store_;
};

namespace detail {
struct accept_all {
    template <class N>
    bool operator()(const N*, std::size_t) const { return true; }
};
}  // namespace detail

/// Every non-overlapping match of p, in topological order of the anchors, that uses no node
/// marked in `taken` and for which accept(nodes, count) holds; accepted matches are marked. At
/// an anchor the first match accept takes wins, alternatives tried longest first (a match it
/// declines makes the matcher backtrack to shorter ones).
template <class G, class P, class Accept = detail::accept_all>
auto find_all(const op_index<G>& index, const P& p, taken_mask& taken, Accept&& accept = {}, bool escape_all = false) {
    if constexpr (!detail::check_entry<G, P>()) {
        return 0;
    } else {
        using N = typename graph_traits<G>::node_type;
        using A = std::remove_reference_t<Accept>;
        match_list<G, P> out;
        const matcher<G, P> m(index.graph(), p);
        {
            // Room for a match at every candidate anchor, reserved once: growing by doubling
            // copied the lists into fresh memory again and again on a large graph (pages never
            // written cost nothing).
            const auto& prog = m.program();
            std::size_t anchors = prog.wildcard ? index.order().size() : 0;
            for (auto o : prog.anchor_ids) {
                const auto [b, e] = index.nodes_with_op(o);
                anchors += static_cast<std::size_t>(e - b);
            }
            out.store_.spans.reserve(anchors);
            // Matches are disjoint: never more nodes than the graph has.
            out.store_.nodes.reserve(std::min(anchors * prog.max_nodes, index.order().size()));
        }
        struct ctx {
            detail::match_store<N>* store;
            A* accept;
        } c{&out.store_, &accept};
        detail::scan(
            index, m.program(), taken, &c,
            +[](const void* obj, const detail::engine<G, false>& e) {
                static_cast<const ctx*>(obj)->store->add(e);
                return true;
            },
            /*allow_fast=*/true, escape_all, &c,
            std::is_same_v<std::decay_t<Accept>, detail::accept_all>
                ? nullptr  // nothing to veto: keep the check off the scan's path
                : +[](const void* obj, const N* nodes, std::size_t count) {
                      return (*static_cast<const ctx*>(obj)->accept)(nodes, count);
                  });
        return out;
    }
}

/// Every non-overlapping match of p, in topological order of the anchors.
template <class G, class P>
auto find_all(const op_index<G>& index, const P& p) {
    taken_mask taken;
    return find_all(index, p, taken);
}

/// Same, indexing (and checking) the graph first.
template <class G, class P>
auto find_all(const G& g, const P& p) {
    if constexpr (!detail::check_entry<G, P>())
        return 0;
    else
        return find_all(op_index<G>(g), p);
}

SGMATCH_END_NAMESPACE
