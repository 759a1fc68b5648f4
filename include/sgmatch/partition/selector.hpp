// sgmatch/partition/selector.hpp - MXNet's subgraph selectors: the interface, one generated
// from any pattern, and the partitioner that grows subgraphs from a selector.
//
// A selector answers five calls (MXNet's Select, SelectInput, SelectOutput, Filter, Reset):
//
//   select(n)                 start a subgraph at n?
//   select_input(n, input)    grow from n to the producer `input`?
//   select_output(n, output)  grow from n to the user `output`?
//   filter(candidates)        the nodes to keep of what was grown (empty: none)
//   reset()                   forget the last subgraph
//
// The partitioner (grow_subgraphs) does what MXNet's does: seeds in topological order, a
// breadth-first walk over inputs and users of each selected node (skipping nodes already in a
// subgraph), then filter; a kept subgraph that would create a cycle is declined (MXNet excludes
// nodes and retries, which is quadratic; see convexity.hpp). pattern_selector<G, P> answers the
// five calls from a pattern, so hand-written and generated selectors plug into the same
// partitioner and properties.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <any>
#include <memory>
#include <stdexcept>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#include "sgmatch/detail/config.hpp"
#include "sgmatch/graph/adapter.hpp"
#include "sgmatch/match/match.hpp"
#include "sgmatch/match/scan.hpp"
#include "sgmatch/partition/property.hpp"

SGMATCH_BEGIN_NAMESPACE

/// MXNet's SubgraphSelector, over a graph of type G. A selector is made for one graph (it may
/// keep a reference to it) and reused for every seed, with reset() in between.
template <class G>
class subgraph_selector {
public:
    using node_type = typename graph_traits<G>::node_type;
    virtual ~subgraph_selector() = default;
    virtual bool select(const node_type& n) = 0;
    virtual bool select_input(const node_type& n, const node_type& input) = 0;
    virtual bool select_output(const node_type& n, const node_type& output) = 0;
    virtual std::vector<node_type> filter(const std::vector<node_type>& candidates) { return candidates; }
    virtual void reset() {}
    /// Not MXNet's: the partitioner tells the selector which nodes are already in a subgraph
    /// (indexed by graph_traits<G>::index), for selectors that look ahead. Default: ignored.
    virtual void bind_taken(const std::uint8_t* taken) { (void)taken; }
};

/// The selector for pattern p: select(n) matches p at n (every intermediate may be used outside,
/// as MXNet allows), and the other calls accept exactly the matched nodes.
template <class G, class P>
class pattern_selector final : public subgraph_selector<G> {
public:
    using node_type = typename graph_traits<G>::node_type;

    pattern_selector(const G& g, const P& p) : m_(g, p) {}

    bool select(const node_type& n) override {
        nodes_.clear();
        const auto r = m_.at(n, taken_, /*escape_all=*/true);
        if (!r) return false;
        nodes_.assign(r.begin(), r.end());
        return true;
    }
    bool select_input(const node_type&, const node_type& input) override { return in_match(input); }
    bool select_output(const node_type&, const node_type& output) override { return in_match(output); }
    /// The candidates if they are the whole match, else nothing.
    std::vector<node_type> filter(const std::vector<node_type>& candidates) override {
        if (candidates.size() != nodes_.size()) return {};
        for (const node_type& c : candidates)
            if (!in_match(c)) return {};
        return candidates;
    }
    void reset() override { nodes_.clear(); }
    void bind_taken(const std::uint8_t* taken) override { taken_ = taken; }

private:
    bool in_match(const node_type& n) const {
        for (const node_type& x : nodes_)
            if (x == n) return true;
        return false;
    }
    matcher<G, P> m_;
    std::vector<node_type> nodes_;
    const std::uint8_t* taken_ = nullptr;
};

template <class G, class P>
std::unique_ptr<subgraph_selector<G>> make_selector(const G& g, const P& p) {
    static_assert(is_pattern_v<P>, "sgmatch::make_selector(g, p): p must be a pattern");
    return std::make_unique<pattern_selector<G, P>>(g, p);
}

/// Grow subgraphs the MXNet way (see the top of this header). For each kept subgraph (nodes in
/// the order the walk found them), accept(nodes, count) decides; accepted ones are marked in
/// `taken` and passed to `out`. Returns the number accepted.
template <class G, class Accept, class Out>
std::size_t grow_subgraphs(const op_index<G>& index, subgraph_selector<G>& sel, taken_mask& taken, Accept&& accept,
                           Out&& out) {
    using traits = graph_traits<G>;
    using N = typename traits::node_type;
    const G& g = index.graph();
    if (taken.size() < traits::index_bound(g)) taken.resize(traits::index_bound(g), 0);
    sel.bind_taken(taken.data());
    std::vector<std::uint32_t> stamp(traits::index_bound(g), 0);  // in the subgraph being grown
    std::uint32_t epoch = 0;
    std::size_t found = 0;
    std::vector<N> sub;
    for (const N& seed : index.order()) {
        if (taken[traits::index(g, seed)] || traits::kind(g, seed) != node_kind::op) continue;
        sel.reset();
        if (!sel.select(seed)) continue;
        ++epoch;
        sub.clear();
        sub.push_back(seed);
        stamp[traits::index(g, seed)] = epoch;
        auto offer = [&](const N& n) {
            const std::size_t x = traits::index(g, n);
            return !taken[x] && stamp[x] != epoch && traits::kind(g, n) == node_kind::op;
        };
        for (std::size_t q = 0; q < sub.size(); ++q) {  // breadth-first; sub grows as we go
            const N cur = sub[q];
            const std::size_t ic = traits::input_count(g, cur);
            for (std::size_t i = 0; i < ic; ++i) {
                const N p = traits::input(g, cur, i).node;
                if (offer(p) && sel.select_input(cur, p)) {
                    stamp[traits::index(g, p)] = epoch;
                    sub.push_back(p);
                }
            }
            const std::size_t uc = traits::user_count(g, cur);
            for (std::size_t i = 0; i < uc; ++i) {
                const N u = traits::user(g, cur, i).user;
                if (offer(u) && sel.select_output(cur, u)) {
                    stamp[traits::index(g, u)] = epoch;
                    sub.push_back(u);
                }
            }
        }
        const std::vector<N> kept = sel.filter(sub);
        if (kept.empty()) continue;
        bool fresh = true;  // a filter may only keep what was grown
        for (const N& k : kept) fresh = fresh && stamp[traits::index(g, k)] == epoch;
        if (!fresh)
            throw std::logic_error("sgmatch::grow_subgraphs: the selector's filter returned a node it was not offered");
        if (!accept(kept.data(), kept.size())) continue;
        for (const N& k : kept) taken[traits::index(g, k)] = 1;
        ++found;
        out(kept);
    }
    return found;
}

/// A property whose subgraphs come from a selector (hand-written or generated): make_selector_
/// property<G>(name, [](const G& g) { return std::make_unique<MySelector>(g); }, factory).
/// The node factory is called as factory(subgraph).
template <class G, class MakeSelector, class F>
property<G> make_selector_property(std::string name, MakeSelector make_selector_fn, F factory) {
    static_assert(std::is_invocable_v<const F&, const subgraph<G>&>,
                  "sgmatch::make_selector_property(name, make, factory): factory must be callable as "
                  "factory(const subgraph<G>&)");
    using N = typename graph_traits<G>::node_type;
    auto scan = [make_selector_fn, factory](const op_index<G>& index, taken_mask& taken,
                                            const typename property<G>::accept_fn& accept,
                                            const typename property<G>::sink& out, bool /*escape_all*/,
                                            std::size_t /*max_nodes*/) {
        std::unique_ptr<subgraph_selector<G>> sel = make_selector_fn(index.graph());
        std::vector<std::vector<N>> kept;
        grow_subgraphs(index, *sel, taken, accept, [&](const std::vector<N>& nodes) { kept.push_back(nodes); });
        detail::sink_sets<G>(kept, factory, out);
    };
    return property<G>(std::move(name), std::move(scan));
}

SGMATCH_END_NAMESPACE
