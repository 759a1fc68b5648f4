// Match throughput on a ~1M-node graph of ResNet bottleneck blocks, three patterns:
//   P1 conv >> bn >> relu,  P2 conv >> bn >> add(any) >> relu,  P3 conv >> bn
// each scanned on its own with the same rules (non-overlapping in topological order; every
// user of an intermediate inside the match; no intermediate is a graph output). Variants:
//   sgmatch  - for_each_match over a prebuilt op_index
//   hand     - hand-written C++ for exactly these patterns, reading the built-in graph's arrays
//              with integer op ids over the same prebuilt candidate lists (the practical limit)
//   mxnet    - MXNet-style runtime matching: virtual selector objects with Select /
//              SelectInput / SelectOutput / Filter / Reset, op names compared as strings, driven
//              by a partitioner that grows a subgraph breadth-first from each seed node
// Variants are interleaved round by round; medians are reported. All three must agree on the
// matches (count and a checksum of node ids), checked every round.
//
// usage: match_throughput [--nodes N] [--rounds R] [--check]
//   --check: a small graph and one round; exits non-zero if the variants disagree (a ctest).
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <string>
#include <vector>

#include "sgmatch/graph/builders.hpp"
#include "sgmatch/sgmatch.hpp"

#include "hand_matcher.hpp"

using namespace sgmatch;
using namespace sgmatch::ops;
using clk = std::chrono::steady_clock;

namespace {

struct tally {
    std::size_t count = 0;
    std::uint64_t checksum = 0;
    void add(const node_id* b, const node_id* e) {
        ++count;
        for (auto it = b; it != e; ++it) checksum = checksum * 1000003u + it->value + 1;
    }
    bool operator==(const tally& o) const { return count == o.count && checksum == o.checksum; }
};

// ---------------- sgmatch ----------------
// The taken mask is reused across runs and cleared each time, as the hand-written one is.
taken_mask scan_mask;
template <class P>
tally run_sgmatch(const op_index<graph>& idx, const P& p) {
    tally t;
    scan_mask.assign(idx.graph().index_bound(), 0);
    for_each_match(idx, p, [&](const auto& m) { t.add(m.begin(), m.end()); }, scan_mask);
    return t;
}

// The same scan with the straight-line path switched off: what patterns with optional, repeat,
// alternatives or operand patterns get (the general path of the engine).
template <class P>
tally run_general(const op_index<graph>& idx, const P& p) {
    tally t;
    scan_mask.assign(idx.graph().index_bound(), 0);
    const matcher<graph, P> m(idx.graph(), p);
    sgmatch::detail::scan(
        idx, m.program(), scan_mask, &t,
        +[](const void* obj, const sgmatch::detail::engine<graph, false>& e) {
            static_cast<tally*>(const_cast<void*>(obj))->add(e.nodes(), e.nodes() + e.count());
            return true;
        },
        /*allow_fast=*/false);
    return t;
}

// ---------------- hand-written (hand_matcher.hpp) ----------------
template <hand_pattern P>
tally run_hand(hand_matcher& h, const std::vector<node_id>& convs) {
    tally t;
    h.scan<P>(convs, [&](const node_id* m, int n) { t.add(m, m + n); });
    return t;
}

// ---------------- MXNet-style runtime selectors ----------------
class subgraph_selector {
public:
    virtual ~subgraph_selector() = default;
    virtual bool select(const graph& g, node_id n) = 0;
    virtual bool select_input(const graph& g, node_id n, node_id input) = 0;
    virtual bool select_output(const graph& g, node_id n, node_id output) = 0;
    virtual std::vector<node_id> filter(const graph& g, const std::vector<node_id>& candidates) = 0;
    virtual void reset() = 0;
};

// Accepts a chain of op names along output edges, like the tutorial's Conv -> BatchNorm one.
class chain_selector final : public subgraph_selector {
public:
    explicit chain_selector(std::vector<std::string> ops) : ops_(std::move(ops)) {}
    bool select(const graph& g, node_id n) override {
        if (g.kind(n) != node_kind::op || g.op_name(n) != ops_[0]) return false;
        last_ = n;
        pos_ = 0;
        return true;
    }
    bool select_input(const graph&, node_id, node_id) override { return false; }
    bool select_output(const graph& g, node_id n, node_id out) override {
        if (pos_ + 1 >= ops_.size() || n != last_) return false;
        if (g.kind(out) != node_kind::op || g.op_name(out) != ops_[pos_ + 1]) return false;
        ++pos_;
        last_ = out;
        return true;
    }
    std::vector<node_id> filter(const graph&, const std::vector<node_id>& c) override {
        return pos_ + 1 == ops_.size() ? c : std::vector<node_id>{};
    }
    void reset() override { pos_ = 0; }

private:
    std::vector<std::string> ops_;
    std::size_t pos_ = 0;
    node_id last_{};
};

// The partitioner: seed in topological order, grow breadth-first through select_output /
// select_input, filter, then apply the same legality rule as the others.
tally run_mxnet(const graph& g, subgraph_selector& sel) {
    tally t;
    std::vector<std::uint8_t> taken(g.index_bound(), 0);
    std::vector<node_id> sub, queue;
    for (node_id n : g.nodes()) {
        if (taken[n.value]) continue;
        sel.reset();
        if (!sel.select(g, n)) continue;
        sub.assign(1, n);
        queue.assign(1, n);
        for (std::size_t q = 0; q < queue.size(); ++q) {
            const node_id cur = queue[q];
            for (auto& in : g.inputs(cur)) {
                const node_id p = in.node;
                if (taken[p.value] || std::find(sub.begin(), sub.end(), p) != sub.end()) continue;
                if (sel.select_input(g, cur, p)) {
                    sub.push_back(p);
                    queue.push_back(p);
                }
            }
            for (auto& u : g.users(cur)) {
                if (taken[u.user.value] || std::find(sub.begin(), sub.end(), u.user) != sub.end()) continue;
                if (sel.select_output(g, cur, u.user)) {
                    sub.push_back(u.user);
                    queue.push_back(u.user);
                }
            }
        }
        auto kept = sel.filter(g, sub);
        if (kept.empty()) continue;
        // Legality: intermediates (all but the last added) are used only inside.
        bool ok = true;
        for (std::size_t i = 0; ok && i + 1 < kept.size(); ++i) {
            if (g.is_graph_output(kept[i], 0)) ok = false;
            for (auto& u : g.users(kept[i]))
                if (std::find(kept.begin(), kept.end(), u.user) == kept.end()) ok = false;
        }
        if (!ok) continue;
        for (auto k : kept) taken[k.value] = 1;
        t.add(kept.data(), kept.data() + kept.size());
    }
    return t;
}

double median(std::vector<double> v) {
    std::sort(v.begin(), v.end());
    return v.empty() ? 0 : v[v.size() / 2];
}

}  // namespace

int main(int argc, char** argv) {
    std::size_t target = 1'000'000;
    int rounds = 7;
    bool check = false;
    for (int i = 1; i < argc; ++i) {
        if (!std::strcmp(argv[i], "--nodes") && i + 1 < argc) target = std::strtoull(argv[++i], nullptr, 10);
        else if (!std::strcmp(argv[i], "--rounds") && i + 1 < argc) rounds = std::atoi(argv[++i]);
        else if (!std::strcmp(argv[i], "--check")) check = true;
    }
    if (check) {
        target = 20'000;
        rounds = 1;
    }
    const graph probe = build::resnet_blocks(8);
    const std::size_t per_block = probe.node_count() / 8;
    const graph g = build::resnet_blocks(target / per_block);
    std::size_t op_nodes = 0;
    for (auto n : g.nodes()) op_nodes += g.kind(n) == node_kind::op;
    std::printf("graph: %zu nodes (%zu ops) in %zu bottleneck blocks\n", g.node_count(), op_nodes, target / per_block);

    const op_index<graph> idx(g);
    const std::uint32_t conv_id = *g.find_op("Conv");
    auto [cb, ce] = idx.nodes_with_op(conv_id);
    const std::vector<node_id> convs(cb, ce);
    hand_matcher h(g);

    constexpr auto p1 = op<Conv>() >> op<BatchNorm>() >> op<Relu>();
    constexpr auto p2 = op<Conv>() >> op<BatchNorm>() >> op<Add>(any()) >> op<Relu>();
    constexpr auto p3 = op<Conv>() >> op<BatchNorm>();
    chain_selector s1({"Conv", "BatchNormalization", "Relu"});
    chain_selector s2({"Conv", "BatchNormalization", "Add", "Relu"});
    chain_selector s3({"Conv", "BatchNormalization"});

    std::vector<double> t_sg, t_hand, t_mx, t_gen, r_hand, r_mx, r_gen;
    tally expect[3];
    bool agree = true;
    auto timed = [](auto&& f, tally* out) {
        const auto a = clk::now();
        tally t[3] = {f(0), f(1), f(2)};
        const double s = std::chrono::duration<double>(clk::now() - a).count();
        for (int i = 0; i < 3; ++i) out[i] = t[i];
        return s;
    };
    for (int r = 0; r < rounds; ++r) {
        tally a[3], b[3], c[3], d[3];
        // Rotate the order each round so that no variant always runs first.
        double ts = 0, th = 0, tm = 0, tg = 0;
        for (int k = 0; k < 4; ++k) {
            const int which = (r + k) % 4;
            if (which == 0)
                ts = timed([&](int i) { return i == 0 ? run_sgmatch(idx, p1) : i == 1 ? run_sgmatch(idx, p2) : run_sgmatch(idx, p3); }, a);
            else if (which == 1)
                th = timed(
                    [&](int i) {
                        return i == 0   ? run_hand<hand_pattern::conv_bn_relu>(h, convs)
                               : i == 1 ? run_hand<hand_pattern::conv_bn_add_relu>(h, convs)
                                        : run_hand<hand_pattern::conv_bn>(h, convs);
                    },
                    b);
            else if (which == 2)
                tm = timed([&](int i) { return run_mxnet(g, i == 0 ? static_cast<subgraph_selector&>(s1) : i == 1 ? s2 : s3); }, c);
            else
                tg = timed([&](int i) { return i == 0 ? run_general(idx, p1) : i == 1 ? run_general(idx, p2) : run_general(idx, p3); }, d);
        }
        for (int i = 0; i < 3; ++i) {
            if (!(a[i] == b[i]) || !(a[i] == c[i]) || !(a[i] == d[i])) agree = false;
            expect[i] = a[i];
        }
        t_sg.push_back(ts);
        t_hand.push_back(th);
        t_mx.push_back(tm);
        t_gen.push_back(tg);
        r_gen.push_back(tg / th);
        r_hand.push_back(ts / th);
        r_mx.push_back(tm / ts);
    }
    std::printf("matches: P1 %zu, P2 %zu, P3 %zu; variants agree: %s\n", expect[0].count, expect[1].count,
                expect[2].count, agree ? "yes" : "NO");
    if (!agree || expect[0].count == 0 || expect[1].count == 0 || expect[2].count == 0) return 1;
    if (check) return 0;
    const double nodes3 = 3.0 * static_cast<double>(g.node_count());
    std::printf("median of %d interleaved rounds, time for the three scans:\n", rounds);
    std::printf("  sgmatch   %8.2f ms  (%6.1f M nodes/s per pattern scan)\n", median(t_sg) * 1e3, nodes3 / median(t_sg) / 1e6);
    std::printf("  hand      %8.2f ms  (%6.1f M nodes/s)\n", median(t_hand) * 1e3, nodes3 / median(t_hand) / 1e6);
    std::printf("  mxnet     %8.2f ms  (%6.1f M nodes/s)\n", median(t_mx) * 1e3, nodes3 / median(t_mx) / 1e6);
    std::printf("  general   %8.2f ms  (%6.1f M nodes/s; sgmatch with the straight-line path off)\n", median(t_gen) * 1e3,
                nodes3 / median(t_gen) / 1e6);
    std::printf("ratios (median of per-round ratios): sgmatch/hand = %.2fx (target <= 1.2), mxnet/sgmatch = %.1fx (target >= 5)\n",
                median(r_hand), median(r_mx));
    std::printf("general path / hand = %.2fx\n", median(r_gen));
    return 0;
}
