// Small models exported by PyTorch (tests/models/make_models.py: ResNet-, MobileNetV2-,
// DenseNet/Inception-, ShuffleNetV2-, U-Net-shaped CNNs, a transformer encoder and a recurrent model), each in the two forms
// a user gets (BatchNorm folded by the exporter; BatchNorm kept with constant folding off), run
// from the .onnx file against PyTorch's own output: on the reference kernels, on one oneDNN
// primitive per op, and after the ready-made fusion backend, with the fusions counted.
#include <doctest/doctest.h>

#include <any>
#include <cmath>
#include <map>
#include <string>
#include <thread>
#include <vector>

#include "sgmatch/exec/executor.hpp"
#include "sgmatch/onednn/backend.hpp"
#include "sgmatch/onnx/load.hpp"
#include "sgmatch/reference/npy.hpp"

using namespace sgmatch;
using reference::array;

namespace {

std::string path(const std::string& file) { return std::string(SGMATCH_MODELS_DIR) + "/" + file; }

// max |got - want| / max(1, |want|)
double error(const array& got, const array& want) {
    if (got.shape() != want.shape()) return INFINITY;
    double e = 0;
    for (std::size_t i = 0; i < want.size(); ++i)
        e = std::max(e, std::abs(static_cast<double>(got.data()[i]) - want.data()[i]) / std::max(1.0, std::abs(static_cast<double>(want.data()[i]))));
    return e;
}

struct counts {
    std::size_t convs_before = 0;            // Conv nodes as loaded
    std::size_t fused = 0;                   // fused nodes
    std::map<std::string, std::size_t> ops;  // op nodes left unfused, by op
};
counts count(const graph& g) {
    counts c;
    for (node_id n : g.nodes()) {
        if (g.kind(n) != node_kind::op) continue;
        if (std::any_cast<std::shared_ptr<const onednn::fused_node>>(&g.payload(n)) != nullptr) ++c.fused;
        else ++c.ops[std::string(g.op_name(n))];
    }
    return c;
}

std::size_t left(const counts& c, const char* op) {
    const auto it = c.ops.find(op);
    return it == c.ops.end() ? 0 : it->second;
}

struct expectation {
    const char* name;
    std::size_t fused;      // fused nodes after apply_backend("onednn")
    std::size_t convs;      // Conv nodes in the model: every one is fused
};

// Run one model file three ways against PyTorch's output; returns the fused graph's counts.
counts check_model(const std::string& file, const std::string& stem) {
    CAPTURE(file);
    const array x = reference::read_npy(path(stem + ".input.npy"));
    const array want = reference::read_npy(path(stem + ".output.npy"));
    sgmatch::onnx::model m = sgmatch::onnx::load(path(file));
    REQUIRE(m.inputs.size() == 1);
    const std::map<std::string, array> in{{m.inputs[0], x}};
    for (auto mode : {exec::mode::reference, exec::mode::onednn}) {
        const auto y = exec::executor(m.graph, mode)(in);
        REQUIRE(y.size() == 1);
        CHECK(error(y[0], want) < 1e-5);
    }
    graph fused = m.graph;
    (void)apply_backend(fused, "onednn");
    exec::run_stats st;
    const auto y = exec::executor(fused, exec::mode::onednn)(in, &st);
    CHECK(error(y.at(0), want) < 1e-5);
    CHECK(st.fallbacks == 0);
    counts c = count(fused);
    CHECK(st.fused_nodes == c.fused);
    c.convs_before = left(count(m.graph), "Conv");
    return c;
}

}  // namespace

TEST_CASE("CNNs exported by PyTorch load, run as PyTorch computes them, and every Conv is fused with its BatchNorm and activation") {
    onednn::register_backend<graph>();
    // fused: every Conv (with its BatchNorm, activation and residual Add), the classifier's
    // Gemm / MatMul + bias, and each channel shuffle (Reshape, Transpose, Reshape).
    const expectation cnns[] = {
        {"resnet_tiny", 7, 6},    // the stem, 2 blocks x 2 convs, 1 shortcut, the classifier
        {"mobile_tiny", 11, 10},  // the stem, 3 inverted residuals x 3 convs, the classifier
        {"dense_tiny", 9, 8},     // the stem, 3 dense layers, 4 convs in the branches, the classifier
        {"shuffle_tiny", 10, 7},  // the stem, 2 units x 3 convs, the classifier, 2 shuffles
        {"unet_tiny", 5, 5},      // 4 conv + BatchNorm + ReLU and the head; the two Resizes run between them
    };
    for (const auto& e : cnns) {
        for (const std::string form : {".onnx", ".preserve.onnx"}) {
            CAPTURE(e.name);
            CAPTURE(form);
            const counts c = check_model(e.name + form, e.name);
            CHECK(c.convs_before == e.convs);
            CHECK(c.fused == e.fused);
            CHECK(left(c, "Conv") == 0);
            CHECK(left(c, "BatchNormalization") == 0);  // every kept BatchNorm is folded into its conv
            CHECK(left(c, "Relu") + left(c, "Clip") == 0);
            CHECK(left(c, "Transpose") == 0);  // the channel shuffles are one reorder each
        }
    }
}

TEST_CASE("a transformer encoder exported by PyTorch (attention, GELU, LayerNorm written out) runs as PyTorch computes it") {
    onednn::register_backend<graph>();
    const counts folded = check_model("encoder_tiny.onnx", "encoder_tiny");
    // The input projection, the output projection and the two feed-forward layers (MatMul + bias,
    // the first with its written-out GELU), the three LayerNorms written out (two in the layer,
    // one after it) and the attention (the heads' transposes, the scale, QK^T, softmax, the
    // product with V, the transpose back): 8.
    CHECK(folded.fused == 8);
    CHECK(left(folded, "ReduceMean") == 0);
    CHECK(left(folded, "Erf") == 0);
    CHECK(left(folded, "MatMul") == 0);
    CHECK(left(folded, "Softmax") == 0);
    CHECK(left(folded, "Transpose") == 2);  // the batch-first input and output of nn.MultiheadAttention
    const counts kept = check_model("encoder_tiny.preserve.onnx", "encoder_tiny");
    // Exported with constant folding off, the weights sit behind Transpose nodes: the loader's
    // clean-up folds them, and the same eight fuse.
    CHECK(kept.fused == 8);
    CHECK(left(kept, "MatMul") == 0);
}

TEST_CASE("a sequence model exported by PyTorch (two-layer bidirectional LSTM, GRU, RNN) runs as PyTorch computes it") {
    onednn::register_backend<graph>();
    for (const std::string form : {".onnx", ".preserve.onnx"}) {
        CAPTURE(form);
        const counts c = check_model("recurrent_tiny" + form, "recurrent_tiny");
        // The recurrent layers run on their own kernels (one LSTM node per layer); the linear
        // head on every step and on the last hidden state are MatMul + bias, fused.
        CHECK(left(c, "LSTM") == 2);
        CHECK(left(c, "GRU") == 1);
        CHECK(left(c, "RNN") == 1);
        CHECK(left(c, "MatMul") == 0);
        CHECK(c.fused == 2);
    }
}

TEST_CASE("one built executor run from 8 threads at once computes what one thread computes") {
    onednn::register_backend<graph>();
    for (const std::string stem : {"resnet_tiny", "encoder_tiny"}) {
        CAPTURE(stem);
        sgmatch::onnx::model m = sgmatch::onnx::load(path(stem + ".preserve.onnx"));
        (void)apply_backend(m.graph, "onednn");
        const exec::executor run(m.graph, exec::mode::onednn);
        const array x = reference::read_npy(path(stem + ".input.npy"));
        const array want = run({{m.inputs[0], x}}).at(0);
        std::vector<int> same(8, 0);
        std::vector<std::thread> threads;
        for (std::size_t t = 0; t < same.size(); ++t)
            threads.emplace_back([&, t] {
                int ok = 1;
                for (int round = 0; round < 20; ++round) ok &= run({{m.inputs[0], x}}).at(0) == want ? 1 : 0;
                same[t] = ok;
            });
        for (auto& t : threads) t.join();
        CHECK(same == std::vector<int>(8, 1));
    }
}

TEST_CASE("fused convs share their weights with the model's constants, and a BatchNorm folded into them copies first") {
    onednn::register_backend<graph>();
    for (const std::string form : {".onnx", ".preserve.onnx"}) {
        CAPTURE(form);
        sgmatch::onnx::model m = sgmatch::onnx::load(path("resnet_tiny" + form));
        // The weights' bytes as loaded, by constant name.
        // The loader keeps weights of 4 KiB and more in the strings protobuf decoded (an owner).
        std::map<std::string, std::vector<float>> before;
        std::size_t held = 0;
        for (node_id n : m.graph.nodes())
            if (const auto c = m.graph.constant(n); c && c->type == dtype::f32 && c->rank == 4) {
                before[std::string(m.graph.name(n))].assign(static_cast<const float*>(c->data),
                                                             static_cast<const float*>(c->data) + c->element_count());
                held += m.graph.constant_owner(n) != nullptr;
            }
        REQUIRE(!before.empty());
        CHECK(held >= 2);
        (void)apply_backend(m.graph, "onednn");
        std::size_t convs = 0, shared = 0;
        for (node_id n : m.graph.nodes()) {
            const auto* f = std::any_cast<std::shared_ptr<const onednn::fused_node>>(&m.graph.payload(n));
            if (f == nullptr) continue;
            const auto* conv = dynamic_cast<const onednn::fused_conv*>((*f)->kernel.get());
            if (conv == nullptr) continue;
            ++convs;
            shared += conv->spec().weights.is_shared();
        }
        CHECK(convs == 6);
        // Exported with BatchNorm folded, each conv shares its weight as loaded (where the
        // loader kept an owner); kept, each BatchNorm is folded into a copy of its own.
        CHECK(shared == (form == ".onnx" ? held : 0));
        for (node_id n : m.graph.nodes())
            if (const auto c = m.graph.constant(n); c && before.count(std::string(m.graph.name(n))))
                CHECK(std::equal(before[std::string(m.graph.name(n))].begin(), before[std::string(m.graph.name(n))].end(),
                                 static_cast<const float*>(c->data)));
        const auto x = reference::read_npy(path("resnet_tiny.input.npy"));
        const auto want = reference::read_npy(path("resnet_tiny.output.npy"));
        CHECK(error(exec::executor(m.graph, exec::mode::onednn)({{m.inputs.at(0), x}}).at(0), want) < 1e-4);
    }
}
