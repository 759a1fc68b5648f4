// A chain of N Relu nodes on a [1, 16] float input, for benchmarks/models/bench.py: the cost of
// one node of a long graph, where the kernel's work is negligible.
//
//   relu_chain DIR N...    writes DIR/relu_chain_N.onnx, .input.npy and .output.npy for each N
//
// The expected output is max(x, 0), computed here without sgmatch.
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <string>

#include <onnx/onnx_pb.h>

#include <sgmatch/reference/npy.hpp>

namespace {

void typed(onnx::ValueInfoProto* v, const std::string& name) {
    v->set_name(name);
    auto* t = v->mutable_type()->mutable_tensor_type();
    t->set_elem_type(onnx::TensorProto::FLOAT);
    t->mutable_shape()->add_dim()->set_dim_value(1);
    t->mutable_shape()->add_dim()->set_dim_value(16);
}

}  // namespace

int main(int argc, char** argv) {
    if (argc < 3) {
        std::fprintf(stderr, "usage: relu_chain DIR N...\n");
        return 2;
    }
    const std::string dir = argv[1];
    for (int a = 2; a < argc; ++a) {
        char* end = nullptr;
        const long n = std::strtol(argv[a], &end, 10);
        if (*end != '\0' || n < 1 || n > 10000000) {
            std::fprintf(stderr, "relu_chain: N must be a whole number from 1 to 10000000, not '%s'\n", argv[a]);
            return 2;
        }
        onnx::ModelProto m;
        m.set_ir_version(8);
        m.add_opset_import()->set_version(17);
        auto* g = m.mutable_graph();
        g->set_name("relu_chain");
        typed(g->add_input(), "x");
        for (long i = 0; i < n; ++i) {
            auto* node = g->add_node();
            node->set_op_type("Relu");
            node->set_name("relu" + std::to_string(i));
            node->add_input(i == 0 ? "x" : "v" + std::to_string(i));
            node->add_output(i + 1 == n ? "y" : "v" + std::to_string(i + 1));
        }
        typed(g->add_output(), "y");
        const std::string stem = dir + "/relu_chain_" + std::to_string(n);
        std::ofstream out(stem + ".onnx", std::ios::binary);
        if (!m.SerializeToOstream(&out)) {
            std::fprintf(stderr, "relu_chain: cannot write %s.onnx\n", stem.c_str());
            return 1;
        }
        sgmatch::reference::array x = sgmatch::reference::array::from_shape({1, 16});
        sgmatch::reference::array y = x;
        for (std::size_t i = 0; i < 16; ++i) {
            x(0, i) = static_cast<float>(i) / 8.0f - 1.0f;
            y(0, i) = x(0, i) > 0.0f ? x(0, i) : 0.0f;
        }
        sgmatch::reference::write_npy(stem + ".input.npy", x);
        sgmatch::reference::write_npy(stem + ".output.npy", y);
        std::printf("%s.onnx: %ld Relu nodes\n", stem.c_str(), n);
    }
    return 0;
}
