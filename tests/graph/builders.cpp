// Graph builders: the ResNet-50 shape, block graphs and seeded random DAGs.
#include <doctest/doctest.h>

#include <map>
#include <string>

#include "sgmatch/graph/builders.hpp"

using namespace sgmatch;

namespace {
std::map<std::string, int> op_histogram(const graph& g) {
    std::map<std::string, int> h;
    for (auto n : g.nodes())
        if (g.kind(n) == node_kind::op) ++h[std::string(g.op_name(n))];
    return h;
}
node_id find(const graph& g, std::string_view name) {
    for (auto n : g.nodes())
        if (g.name(n) == name) return n;
    FAIL("no node " << name);
    return {};
}
}  // namespace

TEST_CASE("resnet50 has ResNet-50's layers and shapes") {
    const graph g = build::resnet50();
    auto h = op_histogram(g);
    CHECK(h["Conv"] == 53);
    CHECK(h["BatchNormalization"] == 53);
    CHECK(h["Add"] == 16);
    CHECK(h["Relu"] == 49);
    CHECK(h["Gemm"] == 1);
    CHECK(g.value_type(find(g, "conv1"), 0)->dims == std::vector<std::int64_t>{1, 64, 112, 112});
    CHECK(g.value_type(find(g, "layer1.0.conv3"), 0)->dims == std::vector<std::int64_t>{1, 256, 56, 56});
    CHECK(g.value_type(find(g, "layer4.2.relu3"), 0)->dims == std::vector<std::int64_t>{1, 2048, 7, 7});
    CHECK(g.value_type(find(g, "fc"), 0)->dims == std::vector<std::int64_t>{1, 1000});
    CHECK(*g.attr(find(g, "layer2.0.conv2"), "strides")->as_ints() == attribute::ints{2, 2});
}

TEST_CASE("resnet_blocks scales linearly") {
    const graph g = build::resnet_blocks(16);
    auto h = op_histogram(g);
    CHECK(h["Add"] == 16);
    CHECK(h["Conv"] == 16 * 3 + 2);  // two projection blocks (0 and 8)
}

TEST_CASE("random_dag is deterministic per seed and respects its window") {
    const graph a = build::random_dag(500, 7), b = build::random_dag(500, 7), c = build::random_dag(500, 8);
    auto sig = [](const graph& g) {
        std::string s;
        for (auto n : g.nodes()) {
            s += std::string(g.op_name(n));
            for (auto& v : g.inputs(n)) {  // not "," + to_string(): g++ 12 -Wrestrict false positive
                s += ',';
                s += std::to_string(v.node.value);
            }
            s += ";";
        }
        return s;
    };
    CHECK(sig(a) == sig(b));
    CHECK(sig(a) != sig(c));
    CHECK(a.node_count() == 502);
    std::size_t long_edges = 0, edges = 0;
    for (auto n : a.nodes())
        for (auto& v : a.inputs(n)) {
            ++edges;
            CHECK(v.node.value < n.value);
            long_edges += (n.value - v.node.value > 64);
        }
    CHECK(long_edges > 0);
    CHECK(long_edges * 10 < edges);
}
