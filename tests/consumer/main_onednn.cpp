// Uses the installed oneDNN part: a fused conv + relu kernel from sgmatch's onednn headers.
#include <cstdio>
#include <vector>

#include <sgmatch/onednn/fused_conv.hpp>
#include <sgmatch/sgmatch.hpp>

int main() {
    namespace so = sgmatch::onednn;
    so::conv_spec s;
    s.weights_dims = {1, 1, 1, 1};  // y = relu(2 x - 1)
    s.weights = {2.0f};
    s.bias = {-1.0f};
    s.post_ops = {so::post_op::eltwise(dnnl::algorithm::eltwise_relu)};
    const so::fused_conv k(s);
    std::vector<float> in = {-1.f, 0.f, 1.f, 2.f};
    const std::vector<float> out = k.run(so::tensor::view(in.data(), {1, 1, 2, 2})).to_plain();
    const bool ok = out == std::vector<float>{0.f, 0.f, 1.f, 3.f} &&
                    sgmatch::is_pattern_v<decltype(sgmatch::op<sgmatch::ops::Relu>())>;
    std::printf("consumer (onednn): fused conv + relu %s\n", ok ? "ok" : "WRONG");
    return ok ? 0 : 1;
}
