// Match throughput on a ~1M-node graph of ResNet bottleneck blocks, three patterns:
//   P1 conv >> bn >> relu,  P2 conv >> bn >> add(any) >> relu,  P3 conv >> bn
// each scanned on its own with the same rules (non-overlapping in topological order; every
// user of an intermediate inside the match; no intermediate is a graph output). Variants, each
// timing the three scans:
//   sgmatch  - for_each_match over a prebuilt op_index
//   sgmatch_with_index - the same with the op_index built inside the timed region (the mxnet
//              variant walks every node inside its timer: this is the like-for-like ratio)
//   hand     - hand-written C++ for exactly these patterns, reading the built-in graph's arrays
//              with integer op ids over the same prebuilt candidate lists (the practical limit)
//   mxnet    - MXNet-style runtime matching: virtual selector objects with Select /
//              SelectInput / SelectOutput / Filter / Reset, op names compared as strings, driven
//              by a partitioner that grows a subgraph breadth-first from each seed node
//   general  - sgmatch with the straight-line path off (what patterns with optional, repeat,
//              alternatives or operand patterns get)
// Timed by Google Benchmark (gbench.hpp: repetitions, random interleaving, medians, JSON with
// --benchmark_out); every variant must first agree on the matches (count and a checksum of
// node ids).
//
// usage: match_throughput [--nodes N] [--check] [Google Benchmark flags]
//   --check: a small graph, no timing; exits non-zero if the variants disagree (a ctest).
#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <string>
#include <vector>

#include "sgmatch/graph/builders.hpp"
#include "sgmatch/sgmatch.hpp"

#include "gbench.hpp"
#include "hand_matcher.hpp"

using namespace sgmatch;
using namespace sgmatch::ops;

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

}  // namespace

int main(int argc, char** argv) {
    std::size_t target = 1'000'000;
    bool check = false;
    std::vector<char*> rest{argv[0]};  // what is left for Google Benchmark
    for (int i = 1; i < argc; ++i) {
        if (!std::strcmp(argv[i], "--nodes") && i + 1 < argc) target = std::strtoull(argv[++i], nullptr, 10);
        else if (!std::strcmp(argv[i], "--check")) check = true;
        else rest.push_back(argv[i]);
    }
    if (check) target = 20'000;
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

    // Each variant: the three scans, in order.
    using scans = std::vector<tally>;
    auto sgmatch_scans = [&] { return scans{run_sgmatch(idx, p1), run_sgmatch(idx, p2), run_sgmatch(idx, p3)}; };
    auto indexed_scans = [&] {
        const op_index<graph> fresh(g);
        return scans{run_sgmatch(fresh, p1), run_sgmatch(fresh, p2), run_sgmatch(fresh, p3)};
    };
    auto hand_scans = [&] {
        return scans{run_hand<hand_pattern::conv_bn_relu>(h, convs), run_hand<hand_pattern::conv_bn_add_relu>(h, convs),
                     run_hand<hand_pattern::conv_bn>(h, convs)};
    };
    auto mxnet_scans = [&] { return scans{run_mxnet(g, s1), run_mxnet(g, s2), run_mxnet(g, s3)}; };
    auto general_scans = [&] { return scans{run_general(idx, p1), run_general(idx, p2), run_general(idx, p3)}; };

    const scans expect = sgmatch_scans();
    bool agree = true;
    for (const scans& other : {indexed_scans(), hand_scans(), mxnet_scans(), general_scans()})
        for (int i = 0; i < 3; ++i) agree = agree && other[i] == expect[i];
    std::printf("matches: P1 %zu, P2 %zu, P3 %zu; variants agree: %s\n", expect[0].count, expect[1].count,
                expect[2].count, agree ? "yes" : "NO");
    if (!agree || expect[0].count == 0 || expect[1].count == 0 || expect[2].count == 0) return 1;
    if (check) return 0;

    auto add = [](const char* name, auto& f) {
        benchmark::RegisterBenchmark(name, [&f](benchmark::State& st) {
            for (auto _ : st) benchmark::DoNotOptimize(f());
        })->Unit(benchmark::kMillisecond)->UseRealTime();
    };
    add("sgmatch", sgmatch_scans);
    add("sgmatch_with_index", indexed_scans);
    add("hand", hand_scans);
    add("mxnet", mxnet_scans);
    add("general", general_scans);
    return sgbench::run(static_cast<int>(rest.size()), rest.data(),
                        {{"sgmatch / hand", "sgmatch", "hand", "(target <= 1.2)"},
                         {"mxnet / sgmatch", "mxnet", "sgmatch", "(op_index prebuilt; target >= 5)"},
                         {"mxnet / sgmatch_with_index", "mxnet", "sgmatch_with_index", "(op_index built in the timer, as mxnet walks)"},
                         {"general / hand", "general", "hand", ""}});
}
