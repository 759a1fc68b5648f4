// Your graph, your fusion: a Conv followed by SiLU (x * sigmoid(x), as exporters write it)
// becomes one oneDNN primitive in a graph type of your own (examples/own_graph.hpp), which
// sgmatch's executor then runs; the fusion is checked against the unfused run and tested on
// graphs synthesized from its pattern.
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <vector>

#include <sgmatch/exec/graph_executor.hpp>
#include <sgmatch/onednn/decomposed.hpp>
#include <sgmatch/onednn/property.hpp>
#include <sgmatch/partition/dot.hpp>
#include <sgmatch/testing/check_adapter.hpp>
#include <sgmatch/testing/differential.hpp>

#include "own_graph.hpp"

using namespace sgmatch;
using namespace sgmatch::ops;

struct x;  // a capture: the input of the SiLU
// The fusion: a definition that serves any graph type (yours, and the built-in one the tests use).
const auto conv_silu = onednn::fusion("conv_silu", capture<x>(op<Conv>()) >> onednn::swish<x>());

// x [1, 8, 16, 16] -> Conv 3x3 -> SiLU -> Conv 1x1 -> SiLU
my::graph small_net() {
    my::graph g;
    auto weights = [](std::size_t n) {
        std::vector<float> w(n);
        for (std::size_t i = 0; i < n; ++i) w[i] = 0.05f * static_cast<float>(static_cast<int>(i % 7) - 3);
        return w;
    };
    const int in = g.input("x", {1, 8, 16, 16});
    const int c1 = g.op("Conv", "conv1", {{in, 0}, {g.constant("w1", {16, 8, 3, 3}, weights(16 * 8 * 9)), 0}},
                        {{"pads", attribute::ints{1, 1, 1, 1}}});
    const int s1 = g.op("Mul", "silu1", {{c1, 0}, {g.op("Sigmoid", "sig1", {{c1, 0}}), 0}});
    const int c2 = g.op("Conv", "conv2", {{s1, 0}, {g.constant("w2", {16, 16, 1, 1}, weights(16 * 16)), 0}});
    g.output = {g.op("Mul", "silu2", {{c2, 0}, {g.op("Sigmoid", "sig2", {{c2, 0}}), 0}}), 0};
    return g;
}

int main() {
    my::graph g = small_net();
    // 1. The adapter keeps the contract, and offers what partitioning and the executor need.
    const auto laws = testing::check_adapter(g);
    if (!laws.ok() || !laws.can_partition || !laws.runs_fused_nodes) return std::puts(laws.str().c_str()), 1;

    // 2. The graph as it is, on sgmatch's executor over your graph: the oracle.
    std::vector<float> data(8 * 16 * 16);
    for (std::size_t i = 0; i < data.size(); ++i) data[i] = std::sin(0.1f * static_cast<float>(i));
    const exec::value in = exec::value::view(data.data(), dtype::f32, {1, 8, 16, 16});
    const exec::value want = exec::graph_executor<my::graph>(g).run({in}).at(0);

    // 3. Your fusion, applied in place: each Conv + SiLU becomes one node with a oneDNN kernel.
    const property_report fused = apply_property(g, conv_silu);
    std::printf("%s", summary({fused}).c_str());

    // 4. Run the fused graph, compare.
    exec::run_stats st;
    const exec::value got = exec::graph_executor<my::graph>(g, exec::mode::onednn).run({in}, &st).at(0);
    double diff = 0;
    for (std::int64_t i = 0; i < got.size(); ++i) diff = std::max(diff, double(std::fabs(got.as<float>()[i] - want.as<float>()[i])));
    std::printf("%zu nodes now, %zu fused nodes ran; largest difference from the unfused run %.1e\n", g.order.size(),
                st.fused_nodes, diff);

    // 5. The same fusion tested on graphs synthesized from its pattern (on sgmatch's built-in graph).
    const auto report = testing::differential(conv_silu);
    std::printf("%s\n", report.summary().c_str());
    return report.ok() && st.fused_nodes == 2 && diff < 1e-4 ? 0 : 1;
}
