// Uses the installed onnx part: a model written with libonnx's classes, loaded by sgmatch.
#include <cstdio>
#include <string>

#include <sgmatch/onnx/load.hpp>

int main() {
    ::onnx::ModelProto m;
    m.set_ir_version(7);
    m.add_opset_import()->set_version(13);
    auto* g = m.mutable_graph();
    auto* x = g->add_input();
    x->set_name("x");
    x->mutable_type()->mutable_tensor_type()->set_elem_type(::onnx::TensorProto::FLOAT);
    x->mutable_type()->mutable_tensor_type()->mutable_shape()->add_dim()->set_dim_value(4);
    auto* n = g->add_node();
    n->set_op_type("Relu");
    n->add_input("x");
    n->add_output("y");
    g->add_output()->set_name("y");
    const std::string bytes = m.SerializeAsString();
    const sgmatch::onnx::model loaded = sgmatch::onnx::load_bytes(bytes.data(), bytes.size());
    const bool ok = loaded.graph.node_count() == 2 && loaded.inputs.size() == 1 && loaded.outputs.at(0) == "y" &&
                    loaded.graph.value_type(loaded.graph.graph_output(0).node, 0)->dims == std::vector<std::int64_t>{4};
    std::printf("consumer (onnx): a Relu model loaded %s\n", ok ? "ok" : "WRONG");
    return ok ? 0 : 1;
}
