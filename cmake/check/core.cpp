// Built when SGMATCH_CHECK_DEPENDENCIES is on (a package build): the core headers compile and
// link against the Boost that was found.
#include <sgmatch/graph/graph.hpp>
#include <sgmatch/sgmatch.hpp>

int main() {
    sgmatch::graph g;
    const auto x = g.add_input("x");
    g.mark_output(g.add_op("Relu", "r", {x}));
    return sgmatch::op_index<sgmatch::graph>(g).order().size() == 2 ? 0 : 1;
}
