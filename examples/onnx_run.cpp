// Load an ONNX model, fuse it, run it, check it:  onnx_run model.onnx input_0.pb output_0.pb
#include <cmath>
#include <cstdio>
#include <string>

#include <sgmatch/exec/executor.hpp>
#include <sgmatch/onednn/backend.hpp>
#include <sgmatch/onnx/load.hpp>

int main(int argc, char** argv) {
    if (argc != 4) return std::fprintf(stderr, "usage: %s model.onnx input.pb expected.pb\n", argv[0]), 2;
    using sgmatch::reference::array;
    auto to_array = [](const sgmatch::onnx::tensor& t) {
        array a = xt::zeros<float>(std::vector<std::size_t>(t.dims.begin(), t.dims.end()));
        const auto v = t.to_floats();
        std::copy(v.begin(), v.end(), a.begin());
        return a;
    };
    sgmatch::onnx::model m = sgmatch::onnx::load(argv[1]);  // refuses what the kernels cannot run
    const array x = to_array(sgmatch::onnx::read_tensor_file(argv[2]));
    const array want = to_array(sgmatch::onnx::read_tensor_file(argv[3]));

    const std::size_t before = m.graph.node_count();
    sgmatch::onednn::register_backend<sgmatch::graph>();
    sgmatch::apply_backend(m.graph, "onednn");  // rewrite the fusable chains into fused nodes
    sgmatch::exec::run_stats st;
    const array y = sgmatch::exec::executor(m.graph, sgmatch::exec::mode::onednn)({{m.inputs.at(0), x}}, &st).at(0);

    double diff = y.shape() == want.shape() ? 0 : INFINITY;
    for (std::size_t i = 0; std::isfinite(diff) && i < y.size(); ++i)
        diff = std::max(diff, static_cast<double>(std::abs(y.data()[i] - want.data()[i])));
    std::printf("opset %lld, %zu nodes -> %zu, %zu fused, max |diff| vs ONNX's output %.3g\n",
                static_cast<long long>(m.opset), before, m.graph.node_count(), st.fused_nodes, diff);
    return diff <= 1e-4 ? 0 : 1;
}
