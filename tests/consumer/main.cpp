// Uses the installed core: build a graph, match a pattern, partition it.
#include <cstdio>

#include <sgmatch/graph/graph.hpp>
#include <sgmatch/partition/partition.hpp>
#include <sgmatch/sgmatch.hpp>

int main() {
    using namespace sgmatch;
    using namespace sgmatch::ops;
    graph g;
    auto x = g.add_input("x");
    auto c = g.add_op("Conv", "conv", {x});
    auto r = g.add_op("Relu", "relu", {c});
    g.mark_output(r);
    constexpr auto p = op<Conv>() >> op<Relu>();
    const auto found = find_all(g, p).size();
    const auto rep = apply_property(g, make_property<graph>("conv_relu", p, [](const subgraph<graph>& s) {
                                        return s.nodes.size();
                                    }));
    std::printf("consumer (core): %zu match(es), %zu fused, %zu nodes left\n", found, rep.accepted, g.node_count());
    return found == 1 && rep.accepted == 1 && g.node_count() == 2 ? 0 : 1;
}
