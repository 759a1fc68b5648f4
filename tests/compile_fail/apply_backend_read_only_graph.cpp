// expect: sgmatch::apply_backend(g, backend): graph_traits<G> must define the write side
#include "sgmatch/partition/partition.hpp"
#include "sgmatch/sgmatch.hpp"
#include "support/tiny_graph.hpp"
using namespace sgmatch;
int main() {
    sgtest::tiny_graph g;
    backend<sgtest::tiny_graph> b("read_only");
    b.add(make_property<sgtest::tiny_graph>("relu", op<ops::Relu>(), [](const subgraph<sgtest::tiny_graph>&) { return 1; }));
    return static_cast<int>(apply_backend(g, b).size());
}
