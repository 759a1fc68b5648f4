// Each part the package was built with, included, linked and run once.
#include <cstdio>
#include <string>

#include <sgmatch/graph/graph.hpp>
#include <sgmatch/sgmatch.hpp>
#ifdef SGMATCH_TEST_ONEDNN
#include <sgmatch/onednn/fused_conv.hpp>
#endif
#ifdef SGMATCH_TEST_REFERENCE
#include <sgmatch/reference/kernels.hpp>
#endif
#ifdef SGMATCH_TEST_ONNX
#include <sgmatch/onnx/load.hpp>
#endif

int main() {
    using namespace sgmatch;
    graph g;
    auto x = g.add_input("x");
    g.mark_output(g.add_op("Relu", "relu", {g.add_op("Conv", "conv", {x})}));
    bool ok = find_all(g, op<ops::Conv>() >> op<ops::Relu>()).size() == 1;
#ifdef SGMATCH_TEST_ONEDNN
    {  // a 1x1 conv with a ReLU post-op on oneDNN: links dnnl
        onednn::conv_spec s;
        s.weights_dims = {1, 1, 1, 1};
        s.weights = {-2.0f};
        s.post_ops = {onednn::post_op::eltwise(dnnl::algorithm::eltwise_relu)};
        const float in[2] = {1.0f, -1.0f};
        float out[2] = {0, 0};
        onednn::fused_conv(s).run(onednn::tensor::view(in, {1, 1, 1, 2})).copy_to(out);
        ok = ok && out[0] == 0.0f && out[1] == 2.0f;
    }
#endif
#ifdef SGMATCH_TEST_REFERENCE
    ok = ok && reference::unary(xt::xarray<float>{-1.0f, 2.0f}, reference::unary_kind::relu)(1) == 2.0f;
#endif
#ifdef SGMATCH_TEST_ONNX
    try {
        (void)sgmatch::onnx::load_bytes("x", 1);
        ok = false;
    } catch (const sgmatch::onnx::load_error&) {  // links libonnx and protobuf
    }
#endif
    std::printf("sgmatch test_package: %s\n", ok ? "ok" : "WRONG");
    return ok ? 0 : 1;
}
