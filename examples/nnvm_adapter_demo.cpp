// sgmatch on an MXNet/nnvm-style graph, in place: MXNet op names, string attributes,
// Activation(act_type=relu) recognized with a user tag and a predicate, and each
// Convolution -> BatchNorm -> Activation chain rewritten into one fused node by the adapter.
#include <algorithm>
#include <cstdio>
#include <string>

#include "nnvm_adapter.hpp"
#include "sgmatch/sgmatch.hpp"

using namespace sgmatch;
using mini_nnvm::Node;
using mini_nnvm::NodeEntry;

// A user's own tag: MXNet spells ReLU as Activation with act_type=relu.
struct Activation {
    static constexpr std::string_view names[] = {"Activation"};
};
struct conv;

int main() {
    // data -> [Convolution -> BatchNorm -> Activation(relu)] x 3 -> Pooling
    mini_nnvm::Symbol sym;
    NodeEntry x{Node::Variable("data"), 0};
    for (int i = 0; i < 3; ++i) {
        const std::string s = std::to_string(i);
        auto c = Node::Create("Convolution", "conv" + s, {x, {Node::Variable("conv" + s + "_weight", true), 0}},
                              {{"kernel", "(3, 3)"}, {"num_filter", "64"}, {"num_group", "1"}});
        auto b = Node::Create("BatchNorm", "bn" + s, {{c, 0}, {Node::Variable("bn" + s + "_gamma", true), 0}});
        auto a = Node::Create("Activation", "relu" + s, {{b, 0}}, {{"act_type", i == 2 ? "sigmoid" : "relu"}});
        x = NodeEntry{a, 0};
    }
    sym.outputs.push_back({Node::Create("Pooling", "pool", {x}), 0});

    nnvm_view view(sym);
    constexpr auto pattern = op<ops::Conv>().as<conv>().where(pred::attr_ints_eq("kernel", 3, 3)) >>
                             op<ops::BatchNorm>() >>
                             op<Activation>().where(pred::attr_eq("act_type", "relu"));
    std::printf("pattern: %s\n", notation(pattern).c_str());

    const auto matches = find_all(view, pattern);
    std::printf("matches: %zu\n", matches.size());
    const auto conv2 = *std::find_if(view.order().begin(), view.order().end(), [](auto* n) { return n->name == "conv2"; });
    std::printf("%s\n", explain(view, conv2, pattern).c_str());

    // Rewrite each match in place: inputs are the boundary values, the output is the last node's.
    int fused = 0;
    for (const auto& m : matches) {
        replacement<nnvm_view::node_ptr> r;
        r.nodes.assign(m.begin(), m.end());
        for (const auto* n : m)  // boundary inputs: every value read from outside, in order
            for (auto& in : n->inputs) {
                const value_ref<nnvm_view::node_ptr> v{in.node.get(), in.index};
                if (!m.contains(v.node) && std::find(r.inputs.begin(), r.inputs.end(), v) == r.inputs.end())
                    r.inputs.push_back(v);
            }
        r.outputs.push_back({m.output(), 0});
        r.name = "sg_conv_bn_relu" + std::to_string(fused++);
        r.op_name = "_sg_onednn_conv";
        graph_traits<nnvm_view>::replace(view, r);
    }
    std::printf("after rewrite:");
    for (auto* n : view.order())
        if (!n->is_variable()) std::printf(" %s(%s)", n->name.c_str(), n->op->name.c_str());
    std::printf("\n");

    // The graph now reads: fused0 -> fused1 -> conv2 -> bn2 -> relu2(sigmoid) -> pool.
    const auto* pool = sym.outputs[0].node.get();
    const auto* sig = pool->inputs[0].node.get();
    const auto* f1 = sig->inputs[0].node->inputs[0].node->inputs[0].node.get();
    const bool ok = matches.size() == 2 && fused == 2 && f1->name == "sg_conv_bn_relu1" &&
                    f1->inputs[0].node->name == "sg_conv_bn_relu0" && view.order().size() == 13 &&
                    f1->inputs.size() == 3;  // conv1's input and weight, bn1's gamma
    std::printf("%s\n", ok ? "rewritten as expected" : "UNEXPECTED RESULT");
    return ok ? 0 : 1;
}
