// Built when SGMATCH_CHECK_DEPENDENCIES is on (a package build) with the oneDNN and reference
// parts: the executor, the lowering and every kernel compile and link against both.
#include <sgmatch/exec/executor.hpp>
#include <sgmatch/exec/subgraph.hpp>

int main() {
    sgmatch::graph g;
    const auto x = g.add_input("x");
    g.mark_output(g.add_op("Relu", "r", {x}));
    sgmatch::exec::register_region_backend();
    const sgmatch::exec::executor run(g, sgmatch::exec::mode::onednn);
    return run({{"x", sgmatch::reference::array{-1.0f, 2.0f}}}).at(0)(1) == 2.0f ? 0 : 1;
}
