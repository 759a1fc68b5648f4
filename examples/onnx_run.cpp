// Load an ONNX model, fuse it, run it, check it:  onnx_run model.onnx input.npy expected.npy
#include <cmath>
#include <cstdio>

#include <sgmatch/exec/executor.hpp>
#include <sgmatch/onednn/backend.hpp>
#include <sgmatch/onnx/load.hpp>
#include <sgmatch/reference/npy.hpp>

int main(int argc, char** argv) {
    if (argc != 4) return std::fprintf(stderr, "usage: %s model.onnx input.npy expected.npy\n", argv[0]), 2;
    using sgmatch::reference::array;
    // Loaded, cleaned up (Identity, Dropout, shape subgraphs, weights behind Transpose), and
    // checked: everything the kernels cannot run is refused at once, by node name.
    sgmatch::onnx::model m = sgmatch::onnx::load(argv[1]);
    const array x = sgmatch::reference::read_npy(argv[2]);
    const array want = sgmatch::reference::read_npy(argv[3]);

    const std::size_t before = m.graph.node_count();
    sgmatch::onednn::register_backend<sgmatch::graph>();
    sgmatch::apply_backend(m.graph, "onednn");  // every Conv + BatchNorm + ReLU + Add chain: one fused node
    sgmatch::exec::run_stats st;
    const array y = sgmatch::exec::executor(m.graph, sgmatch::exec::mode::onednn)({{m.inputs.at(0), x}}, &st).at(0);

    double diff = y.shape() == want.shape() ? 0 : INFINITY;
    for (std::size_t i = 0; std::isfinite(diff) && i < y.size(); ++i)
        diff = std::max(diff, static_cast<double>(std::abs(y.data()[i] - want.data()[i])));
    const auto& c = m.report.cleanup;
    std::printf("%zu ONNX nodes; clean-up: %zu pass-through removed, %zu shapes and %zu ops folded\n", m.report.nodes,
                c.pass_through, c.shapes, c.folded);
    std::printf("%zu nodes -> %zu: %zu fused; max |diff| vs PyTorch %.3g\n", before, m.graph.node_count(),
                st.fused_nodes, diff);
    return diff <= 1e-4 ? 0 : 1;
}
