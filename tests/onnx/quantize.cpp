// Static quantization (onnx/quantize.hpp): an f32 model becomes the QDQ model quantization tools
// write (libonnx's checker accepts it), which loads back with every quantized conv and matmul
// as one integer op running on oneDNN int8, and computes close to the f32 model; the choices it
// makes (per-channel s8 weights, int32 bias in x_scale * w_scale units, u8 activations with the
// Relu folded into the range, graph outputs kept f32, keep_last_float) are checked on the graph.
#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <map>
#include <random>
#include <string>
#include <vector>

#include <onnx/checker.h>

#include "sgmatch/exec/executor.hpp"
#include "sgmatch/onnx/load.hpp"
#include "sgmatch/onnx/quantize.hpp"
#include "sgmatch/onnx/save.hpp"

namespace quantize_tests {

using namespace sgmatch;
namespace sx = sgmatch::onnx;
using exec::value;

std::vector<float> random_floats(std::size_t n, std::mt19937& rng, float scale) {
    std::normal_distribution<float> d(0.0f, scale);
    std::vector<float> v(n);
    for (auto& x : v) x = d(rng);
    return v;
}

// x [2, 3, 12, 12] -> Conv + Relu -> Conv -> Add (the first Relu's output) -> Relu ->
// GlobalAveragePool -> Flatten -> MatMul -> Softmax -> y; with `batch` -1 the first dim is
// unknown (as exporters write a batch), and so is every rank after the input.
sx::model small_net(std::int64_t batch = 2) {
    std::mt19937 rng(3);
    sx::model m;
    graph& g = m.graph;
    const node_id x = g.add_input("x", tensor_type::of(dtype::f32, {batch, 3, 12, 12}));
    const node_id w1 = g.add_constant("w1", {8, 3, 3, 3}, random_floats(8 * 27, rng, 0.3f));
    const node_id b1 = g.add_constant("b1", {8}, random_floats(8, rng, 0.1f));
    const node_id c1 = g.add_op("Conv", "conv1", {x, w1, b1}, {{"pads", attribute::ints{1, 1, 1, 1}}});
    const node_id r1 = g.add_op("Relu", "relu1", {c1});
    const node_id w2 = g.add_constant("w2", {8, 8, 3, 3}, random_floats(8 * 72, rng, 0.15f));
    const node_id b2 = g.add_constant("b2", {8}, random_floats(8, rng, 0.1f));
    const node_id c2 = g.add_op("Conv", "conv2", {r1, w2, b2}, {{"pads", attribute::ints{1, 1, 1, 1}}});
    const node_id add = g.add_op("Add", "add", {c2, r1});
    const node_id r2 = g.add_op("Relu", "relu2", {add});
    const node_id pool = g.add_op("GlobalAveragePool", "pool", {r2});
    const node_id flat = g.add_op("Flatten", "flat", {pool});
    const node_id w3 = g.add_constant("w3", {8, 5}, random_floats(40, rng, 0.5f));
    const node_id mm = g.add_op("MatMul", "fc", {flat, w3});
    const node_id y = g.add_op("Softmax", "prob", {mm}, {{"axis", std::int64_t{1}}});
    g.set_type(graph::value{y, 0}, tensor_type::of(dtype::f32, {batch, 5}));  // as an exporter declares it
    g.mark_output(y);
    m.inputs = {"x"};
    m.outputs = {"prob"};
    m.opset = 13;
    return m;
}

std::map<std::string, value> random_input(unsigned seed) {
    std::mt19937 rng(seed);
    std::uniform_real_distribution<float> u(-1.0f, 1.0f);
    std::vector<float> v(2 * 3 * 12 * 12);
    for (auto& x : v) x = u(rng);
    return {{"x", value::of<float>({2, 3, 12, 12}, v)}};
}

std::vector<std::map<std::string, value>> calibration(int n) {
    std::vector<std::map<std::string, value>> sets;
    for (int k = 0; k < n; ++k) sets.push_back(random_input(static_cast<unsigned>(10 + k)));
    return sets;
}

const std::string& op_of_input(const graph& g, node_id n, std::size_t i) {
    static std::string s;
    s = std::string(g.op_name(g.inputs(n)[i].node));
    return s;
}

node_id node_named(const graph& g, const std::string& name) {
    for (node_id n : g.nodes())
        if (g.name(n) == name) return n;
    FAIL("no node " << name);
    return node_id{};
}

TEST_CASE("quantize_static writes the QDQ form: DQ of per-channel s8 weights, an int32 bias, u8 activations, the Relu in the range") {
    const sx::model f = small_net();
    const quantize::result q = quantize::quantize_static(f, calibration(6));
    CHECK(q.what.convs == 2);
    CHECK(q.what.matmuls == 1);
    CHECK(q.what.activations == 1);  // conv1's Relu; conv2's reader is the Add
    CHECK(q.what.kept_float.empty());
    const graph& g = q.model.graph;
    for (const char* name : {"conv1", "conv2", "fc"}) {
        CAPTURE(name);
        const node_id n = node_named(g, name);
        CHECK(op_of_input(g, n, 0) == "DequantizeLinear");
        CHECK(op_of_input(g, n, 1) == "DequantizeLinear");
        const node_id wdq = g.inputs(n)[1].node;
        const auto w = g.constant(g.inputs(wdq)[0].node);
        REQUIRE(w);
        CHECK(w->type == dtype::i8);
        const auto scales = g.constant(g.inputs(wdq)[1].node);
        CHECK(scales->element_count() == (std::string(name) == "fc" ? 5 : 8));  // one per output channel
        // The largest weight of each channel is +-127: symmetric, the range used whole.
        const auto* p = static_cast<const std::int8_t*>(w->data);
        const std::int64_t count = w->element_count(), channels = scales->element_count();
        for (std::int64_t c = 0; c < channels; ++c) {
            int most = 0;
            for (std::int64_t i = 0; i < count; ++i) {
                const std::int64_t ch = std::string(name) == "fc" ? i % channels : i / (count / channels);
                if (ch == c) most = std::max(most, std::abs(static_cast<int>(p[i])));
            }
            CHECK(most == 127);
        }
    }
    // The f32 weights are gone (the file holds the s8 ones only).
    for (node_id n : g.nodes())
        if (g.kind(n) == node_kind::constant) {
            const bool f32_weights = g.constant(n)->type == dtype::f32 && g.constant(n)->rank >= 2;
            CHECK_FALSE(f32_weights);
        }
    // conv1's bias: int32, its scale x_scale * w_scale[m].
    const node_id c1 = node_named(g, "conv1");
    const node_id bdq = g.inputs(c1)[2].node;
    CHECK(g.op_name(bdq) == "DequantizeLinear");
    const auto bq = g.constant(g.inputs(bdq)[0].node);
    CHECK(bq->type == dtype::i32);
    const node_id xdq = g.inputs(c1)[0].node;
    const float x_scale = static_cast<float>(*g.constant(g.inputs(xdq)[1].node)->scalar());
    const auto w_scales = *g.constant(g.inputs(g.inputs(c1)[1].node)[1].node)->to_floats();
    const auto b_scales = *g.constant(g.inputs(bdq)[1].node)->to_floats();
    for (std::size_t m = 0; m < 8; ++m) CHECK(b_scales[m] == x_scale * w_scales[m]);
    // relu1's output is quantized with zero point 0 (its range starts at 0): what conv2 and the Add read.
    const node_id relu_dq = g.inputs(node_named(g, "conv2"))[0].node;
    CHECK(g.constant(g.inputs(relu_dq)[2].node)->scalar() == 0.0);
    CHECK(g.inputs(node_named(g, "add"))[1].node == relu_dq);
}

TEST_CASE("a quantized model saves as ONNX the checker accepts, loads with every group on oneDNN int8, and stays close to f32") {
    for (const std::int64_t batch : {std::int64_t{2}, std::int64_t{-1}}) {  // a known batch, and one kept unknown in the file
        CAPTURE(batch);
        const sx::model f = small_net(batch);
        const quantize::result q = quantize::quantize_static(f, calibration(8));
        sx::save_options so;
        so.opset = q.model.opset;
        const std::string bytes = sx::save_bytes(q.model.graph, so);
        ::onnx::ModelProto proto;
        REQUIRE(proto.ParseFromString(bytes));
        CHECK_NOTHROW(::onnx::checker::check_model(proto));
        const sx::model loaded = sx::load_bytes(bytes.data(), bytes.size());
        CHECK(loaded.report.qdq.convs == 2);
        CHECK(loaded.report.qdq.matmuls == 1);
        CHECK(loaded.report.qdq.notes.empty());
        const auto in = random_input(99);
        exec::run_stats st;
        const value y8 = exec::executor(loaded.graph, exec::mode::onednn).run(in, &st).at(0).dense_value();
        const value y32 = exec::executor(f.graph, exec::mode::onednn).run(in).at(0).dense_value();
        CHECK(st.onednn_typed_nodes == 3);
        REQUIRE(y8.size() == y32.size());
        // Softmax probabilities: int8 moves each by little (random weights: a check of the error, not of accuracy).
        double worst = 0;
        for (std::int64_t i = 0; i < y8.size(); ++i) worst = std::max(worst, static_cast<double>(std::abs(y8.as<float>()[i] - y32.as<float>()[i])));
        CAPTURE(worst);
        CHECK(worst < 0.02);
    }
}

TEST_CASE("quantize_static: percentile calibration and keep_last_float, a graph output stays f32, no calibration is an error") {
    const sx::model f = small_net();
    quantize::options o;
    o.method = quantize::calibration_method::percentile;
    o.keep_last_float = true;
    const quantize::result q = quantize::quantize_static(f, calibration(4), o);
    CHECK(q.what.convs == 2);
    CHECK(q.what.matmuls == 0);
    REQUIRE(q.what.kept_float.size() == 1);
    CHECK(q.what.kept_float[0].find("'fc'") != std::string::npos);
    CHECK(op_of_input(q.model.graph, node_named(q.model.graph, "fc"), 1) != "DequantizeLinear");
    // A conv whose output is the graph's output is left f32.
    sx::model tail;
    const node_id x = tail.graph.add_input("x", tensor_type::of(dtype::f32, {2, 3, 12, 12}));
    std::mt19937 rng(4);
    const node_id w = tail.graph.add_constant("w", {4, 3, 1, 1}, random_floats(12, rng, 0.5f));
    tail.graph.mark_output(tail.graph.add_op("Conv", "last", {x, w}));
    tail.inputs = {"x"};
    tail.outputs = {"last"};
    const quantize::result t = quantize::quantize_static(tail, calibration(2));
    CHECK(t.what.convs == 0);
    REQUIRE(t.what.kept_float.size() == 1);
    CHECK(t.what.kept_float[0].find("graph output") != std::string::npos);
    CHECK_THROWS_AS(quantize::quantize_static(f, {}), quantize::quantize_error);
}

}  // namespace quantize_tests
