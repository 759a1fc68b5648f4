#include <cstdio>

#include "sgmatch/graph/graph.hpp"
#include "sgmatch/sgmatch.hpp"

using namespace sgmatch;
using namespace sgmatch::ops;

struct conv;  // capture names are tag types
struct bn;

int main() {
    // A graph: the built-in one here; your own through graph_traits<YourGraph>.
    graph g;
    auto x = g.add_input("x");
    auto c = g.add_op("Conv", "conv1", {x, g.add_constant("w", {64, 3, 3, 3})}, {{"group", 1}});
    auto b = g.add_op("BatchNormalization", "bn1", {c});
    auto r = g.add_op("Relu", "relu1", {b});
    g.mark_output(r);

    // A pattern: its type is its AST, checked at compile time.
    constexpr auto p = op<Conv>().as<conv>().where(pred::attr_eq("group", 1))  //
                       >> optional(op<BatchNorm>().as<bn>())                    //
                       >> repeat<0, 3>(op<Relu>() | op<Clip>());

    for (const auto& m : find_all(g, p)) {
        auto [conv_node, bn_node] = m.get<conv, bn>();  // node_id, std::optional<node_id>
        std::printf("%s: %s .. %s (%zu nodes, bn %s)\n", notation(p).c_str(), std::string(g.name(conv_node)).c_str(),
                    std::string(g.name(m.output())).c_str(), m.size(), bn_node ? "fused" : "absent");
    }
    // Why something does not match:
    std::printf("%s\n", explain(g, c, op<Conv>() >> op<Relu>()).c_str());
}
