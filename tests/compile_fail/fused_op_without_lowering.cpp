// expect: sgmatch::onednn::make_fused_property<G>(name, p): op Erf in p has no oneDNN lowering
#include "sgmatch/graph/graph.hpp"
#include "sgmatch/onednn/property.hpp"
#include "sgmatch/sgmatch.hpp"
using namespace sgmatch::ops;
int main() {
    auto p = sgmatch::onednn::make_fused_property<sgmatch::graph>(
        "p", sgmatch::op<Conv>() >> sgmatch::op<Erf>() >> sgmatch::op<Relu>());
    (void)p;
}
