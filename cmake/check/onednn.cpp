// Built when SGMATCH_CHECK_DEPENDENCIES is on (a package build): the oneDNN part's headers
// compile and link against the oneDNN that was found (2.x and 3.x differ in their API).
#include <vector>

#include <sgmatch/onednn/backend.hpp>
#include <sgmatch/onednn/fused_conv.hpp>
#include <sgmatch/onednn/fused_matmul.hpp>
#include <sgmatch/onednn/op_kernels.hpp>
#include <sgmatch/onednn/threads.hpp>

int main() {
    namespace so = sgmatch::onednn;
    so::conv_spec s;
    s.weights_dims = {1, 1, 1, 1};
    s.weights = {2.0f};
    s.post_ops = {so::post_op::eltwise(dnnl::algorithm::eltwise_relu)};
    const so::fused_conv k(s);
    std::vector<float> in = {-1.f, 0.f, 1.f, 2.f};
    return k.run(so::tensor::view(in.data(), {1, 1, 2, 2})).to_plain().size() == 4 && so::max_threads() >= 0 ? 0 : 1;
}
