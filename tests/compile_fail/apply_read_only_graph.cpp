// expect: graph_traits<G> must define the write side
#include "sgmatch/partition/partition.hpp"
#include "sgmatch/sgmatch.hpp"
#include "support/tiny_graph.hpp"
using namespace sgmatch;
int main() {
    sgtest::tiny_graph g;
    auto prop = make_property<sgtest::tiny_graph>("relu", op<ops::Relu>(), [](const subgraph<sgtest::tiny_graph>&) { return 1; });
    return static_cast<int>(apply_property(g, prop).accepted);
}
