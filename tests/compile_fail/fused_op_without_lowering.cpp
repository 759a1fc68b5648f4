// expect: sgmatch::onednn::make_fused_property<G>(name, p): every op of p must have a oneDNN lowering
// expect-also: ops::Pow>
#include "sgmatch/graph/graph.hpp"
#include "sgmatch/onednn/property.hpp"
#include "sgmatch/sgmatch.hpp"
using namespace sgmatch::ops;
int main() {
    auto p = sgmatch::onednn::make_fused_property<sgmatch::graph>(
        "p", sgmatch::op<Conv>() >> sgmatch::op<Pow>(sgmatch::constant()) >> sgmatch::op<Relu>());
    (void)p;
}
