// expect: sgmatch::onednn::make_fused_property<G>(name, p): p must start with op<Conv>(), op<ConvTranspose>(), op<MatMul>(), op<Gemm>() or op<BatchNorm>()
#include "sgmatch/graph/graph.hpp"
#include "sgmatch/onednn/property.hpp"
#include "sgmatch/sgmatch.hpp"
using namespace sgmatch::ops;
int main() {
    auto p = sgmatch::onednn::make_fused_property<sgmatch::graph>("p", sgmatch::optional(sgmatch::op<Conv>()) >>
                                                                           sgmatch::op<Relu>());
    (void)p;
}
