// The ONNX front end: models in, the built-in graph out; every bad input is a load_error naming
// what is wrong, never a crash; everything the kernels cannot run is reported at once.
#include <doctest/doctest.h>

#include <cmath>
#include <cstdio>
#include <cstring>
#include <unistd.h>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <limits>
#include <optional>
#include <random>

#include <onnx/checker.h>

#include "sgmatch/exec/executor.hpp"
#include "sgmatch/onnx/file.hpp"
#include "sgmatch/onnx/load.hpp"
#include "sgmatch/onnx/save.hpp"
#include "support/numeric.hpp"

using sgmatch::dtype;
using sgmatch::node_kind;
namespace sx = sgmatch::onnx;

namespace {

// A small model written with libonnx's own protobuf classes: x [1, 2, 4, 4] -> Conv (w, b) -> Relu.
struct builder {
    ::onnx::ModelProto m;
    ::onnx::GraphProto* g = m.mutable_graph();
    explicit builder(std::int64_t opset = 13) {
        m.set_ir_version(7);
        auto* o = m.add_opset_import();
        o->set_domain("");
        o->set_version(opset);
    }
    void input(const std::string& name, std::vector<std::int64_t> dims, int type = ::onnx::TensorProto::FLOAT,
               ::onnx::ValueInfoProto* v = nullptr) {
        if (v == nullptr) v = g->add_input();
        v->set_name(name);
        auto* t = v->mutable_type()->mutable_tensor_type();
        t->set_elem_type(type);
        for (auto d : dims) {
            if (d < 0) t->mutable_shape()->add_dim()->set_dim_param("N");
            else t->mutable_shape()->add_dim()->set_dim_value(d);
        }
    }
    void output(const std::string& name) { g->add_output()->set_name(name); }
    ::onnx::TensorProto* init(const std::string& name, std::vector<std::int64_t> dims, std::vector<float> v) {
        auto* t = g->add_initializer();
        t->set_name(name);
        t->set_data_type(::onnx::TensorProto::FLOAT);
        for (auto d : dims) t->add_dims(d);
        for (auto x : v) t->add_float_data(x);
        return t;
    }
    ::onnx::NodeProto* node(const std::string& op, std::vector<std::string> in, std::vector<std::string> out,
                            const std::string& name = {}) {
        auto* n = g->add_node();
        n->set_op_type(op);
        n->set_name(name);
        for (auto& i : in) n->add_input(i);
        for (auto& o : out) n->add_output(o);
        return n;
    }
    static void ints(::onnx::NodeProto* n, const std::string& k, std::vector<std::int64_t> v) {
        auto* a = n->add_attribute();
        a->set_name(k);
        a->set_type(::onnx::AttributeProto::INTS);
        for (auto x : v) a->add_ints(x);
    }
    static void integer(::onnx::NodeProto* n, const std::string& k, std::int64_t v) {
        auto* a = n->add_attribute();
        a->set_name(k);
        a->set_type(::onnx::AttributeProto::INT);
        a->set_i(v);
    }
    static void strings(::onnx::NodeProto* n, const std::string& k, std::vector<std::string> v) {
        auto* a = n->add_attribute();
        a->set_name(k);
        a->set_type(::onnx::AttributeProto::STRINGS);
        for (auto& x : v) a->add_strings(x);
    }
    std::string bytes() const { return m.SerializeAsString(); }
    sx::model load(const sx::load_options& o = {}) const {
        const std::string b = bytes();
        return sx::load_bytes(b.data(), b.size(), o);
    }
    std::string error(const sx::load_options& o = {}) const {
        try {
            (void)load(o);
        } catch (const sx::load_error& e) {
            return e.what();
        }
        return "";
    }
};

builder conv_relu(std::mt19937& rng) {
    builder b;
    b.input("x", {-1, 2, 4, 4});
    b.init("w", {3, 2, 3, 3}, test::random_values(54, rng, 0.5f));
    b.init("b", {3}, {0.1f, -0.2f, 0.3f});
    auto* c = b.node("Conv", {"x", "w", "b"}, {"c"}, "conv");
    builder::ints(c, "pads", {1, 1, 1, 1});
    b.node("Relu", {"c"}, {"y"}, "relu");
    b.output("y");
    return b;
}

}  // namespace

TEST_CASE("a model loads into the built-in graph: names, constants with their types, shapes by the op descriptions") {
    std::mt19937 rng(1);
    builder b = conv_relu(rng);
    // An int64 initializer and a Constant node of int64 values: typed constants.
    auto* s = b.g->add_initializer();
    s->set_name("shape");
    s->set_data_type(::onnx::TensorProto::INT64);
    s->add_dims(2);
    s->add_int64_data(1);
    s->add_int64_data(-1);
    b.node("Reshape", {"y", "shape"}, {"flat"}, "reshape");
    b.output("flat");
    sx::load_options o;
    o.batch = 2;
    const sx::model m = b.load(o);
    CHECK(m.opset == 13);
    CHECK(m.inputs == std::vector<std::string>{"x"});
    CHECK(m.outputs == std::vector<std::string>{"y", "flat"});
    CHECK(m.report.initializers == 3);
    const sgmatch::graph& g = m.graph;
    CHECK(g.graph_output_count() == 2);
    int constants = 0;
    for (auto n : g.nodes()) {
        if (g.kind(n) == node_kind::input) {
            CHECK(g.value_type(n, 0)->dims == std::vector<std::int64_t>{2, 2, 4, 4});  // the symbolic batch bound
        }
        if (g.kind(n) != node_kind::constant) continue;
        ++constants;
        const auto c = g.constant(n);
        if (g.name(n) == "shape") {
            CHECK(c->type == dtype::i64);
            CHECK(*c->to_ints() == std::vector<std::int64_t>{1, -1});
        } else {
            CHECK(c->type == dtype::f32);
        }
    }
    CHECK(constants == 3);
    // The descriptions' shape rules typed the intermediate values.
    for (auto n : g.nodes())
        if (g.kind(n) == node_kind::op && g.name(n) == "conv")
            CHECK(g.value_type(n, 0)->dims == std::vector<std::int64_t>{2, 3, 4, 4});
    // It runs, and the executor reads the int64 shape.
    const auto x = test::random_array({2, 2, 4, 4}, rng, 1.0f);
    const auto out = sgmatch::exec::executor(g)({{"x", x}});
    CHECK(out.at(1).shape() == std::vector<std::size_t>{1, 96});
}

TEST_CASE("shapes: computed by the descriptions' rules, checked against what the model declares, or by libonnx on request") {
    std::mt19937 rng(3);
    {  // a declared output shape that disagrees with the rule
        builder b = conv_relu(rng);
        b.input("c", {1, 3, 2, 2}, ::onnx::TensorProto::FLOAT, b.g->add_value_info());
        CHECK(b.error().find("node 'conv' (Conv): output 'c' has shape [-1, 3, 4, 4]") == std::string::npos);
        sx::load_options o;
        o.batch = 1;
        CHECK(b.error(o).find("node 'conv' (Conv): output 'c' has shape [1, 3, 4, 4]; the model declares [1, 3, 2, 2]") !=
              std::string::npos);
    }
    {  // inputs that do not fit the op: found at load, by name
        builder b;
        b.input("x", {1, 5, 4, 4});
        b.init("w", {3, 2, 3, 3}, test::random_values(54, rng, 0.5f));
        b.node("Conv", {"x", "w"}, {"y"}, "conv");
        b.output("y");
        CHECK(b.error().find("node 'conv' (Conv): input [1, 5, 4, 4] has 5 channels; weights [3, 2, 3, 3] in 1 group(s) take 2") !=
              std::string::npos);
    }
    {  // libonnx's shape inference, for a trusted file: the same shapes
        builder b = conv_relu(rng);
        sx::load_options o;
        o.batch = 2;
        o.onnx_shape_inference = true;
        const sx::model m = b.load(o);
        for (auto n : m.graph.nodes())
            if (m.graph.kind(n) == node_kind::op) CHECK(m.graph.value_type(n, 0)->dims == std::vector<std::int64_t>{2, 3, 4, 4});
        CHECK(m.report.notes.empty());
    }
}

TEST_CASE("everything the kernels cannot run is reported at once, with node names") {
    builder b;
    b.input("x", {1, 2, 5, 5});
    auto* p = b.node("MaxPool", {"x"}, {"p"}, "pool");
    builder::ints(p, "kernel_shape", {2, 2});
    builder::integer(p, "storage_order", 2);
    b.node("Frobnicate", {"p"}, {"q"}, "frob");
    auto* u = b.node("Unknown", {"q"}, {"r"}, "custom");
    u->set_domain("com.example");
    b.node("Relu", {"r"}, {"y"}, "relu");
    b.output("y");
    const std::string e = b.error();
    CAPTURE(e);
    CHECK(e.find("3 thing(s) the kernels cannot run") != std::string::npos);
    CHECK(e.find("node 'pool' (MaxPool): attribute storage_order = 2 is not implemented") != std::string::npos);
    CHECK(e.find("node 'frob' (Frobnicate): op Frobnicate is not supported") != std::string::npos);
    CHECK(e.find("node 'custom' (Unknown): domain 'com.example' is not supported") != std::string::npos);
    // Only reported, when asked: the graph is built (to partition it, say).
    sx::load_options o;
    o.check_support = false;
    const sx::model m = b.load(o);
    CHECK(m.report.unsupported.size() == 3);
    CHECK(m.graph.node_count() == 5);
}

TEST_CASE("opset meanings: Softmax before 13 gets an explicit axis or is refused, Clip's absent bounds") {
    builder b(11);
    b.input("x", {2, 3});
    b.node("Softmax", {"x"}, {"s"}, "sm");  // opset 11, axis 1 of a 2-D input: the last axis
    b.input("lo", {}, ::onnx::TensorProto::FLOAT, nullptr);
    b.g->mutable_input()->RemoveLast();  // (only the initializer below)
    auto* hi = b.g->add_initializer();
    hi->set_name("hi");
    hi->set_data_type(::onnx::TensorProto::FLOAT);
    hi->add_float_data(0.4f);
    b.node("Clip", {"s", "", "hi"}, {"y"}, "clip");  // min absent, max given
    b.output("y");
    const sx::model m = b.load();
    sgmatch::reference::array x = {{1.0f, 2.0f, 3.0f}, {0.0f, 0.0f, 5.0f}};
    const auto y = sgmatch::exec::executor(m.graph)({{"x", x}}).at(0);
    CHECK(y(0, 2) == doctest::Approx(0.4f));   // softmax 0.665, clipped
    CHECK(y(0, 0) == doctest::Approx(0.0900306f));
    CHECK(y(1, 0) == doctest::Approx(0.00664835f));

    builder c(11);
    c.input("x", {2, 3, 4});
    c.node("Softmax", {"x"}, {"y"}, "sm");  // axis 1 of 3-D: softmax over 12 values flattened
    c.output("y");
    CHECK(c.error().find("node 'sm' (Softmax): Softmax before opset 13 over axes 1..2 (flattened) is not supported") !=
          std::string::npos);
}

TEST_CASE("recurrent ops: the default activations load, others are refused by name, an absent input between given ones is absent") {
    auto rnn = [](std::vector<std::string> activations) {
        builder b;
        b.input("x", {4, 1, 2});
        b.init("W", {1, 3, 2}, {0.1f, -0.2f, 0.3f, 0.4f, -0.5f, 0.6f});
        b.init("R", {1, 3, 3}, {0.1f, 0.2f, 0.3f, -0.1f, -0.2f, -0.3f, 0.5f, 0.0f, 0.5f});
        b.input("h0", {1, 1, 3});
        auto* r = b.node("RNN", {"x", "W", "R", "", "", "h0"}, {"", "h"}, "rnn");  // no B, no sequence_lens
        builder::strings(r, "activations", activations);
        builder::integer(r, "hidden_size", 3);
        b.output("h");
        return b;
    };
    const sx::model m = rnn({"Tanh"}).load();
    CHECK(m.report.unsupported.empty());
    CHECK(rnn({"Relu"}).error().find("node 'rnn' (RNN): activations [Relu]: only the defaults are implemented") != std::string::npos);
    CHECK(rnn({"Tanh", "Tanh"}).error().empty());  // one per direction: still the default
    // One step of the four: h = tanh(W x + R h0), with no biases.
    using sgmatch::exec::value;
    const auto y = sgmatch::exec::executor(m.graph).run({{"x", value::of<float>({4, 1, 2}, {1, 2, 0, 0, 0, 0, 0, 0})},
                                                         {"h0", value::of<float>({1, 1, 3}, {0, 0, 0})}});
    REQUIRE(y[0].dims() == sgmatch::exec::shape{1, 1, 3});
    // Step 1 from h0 = 0: tanh(W x); steps 2 to 4 on x = 0: h = tanh(R h).
    std::vector<double> h{std::tanh(0.1 - 0.4), std::tanh(0.3 + 0.8), std::tanh(-0.5 + 1.2)};
    for (int step = 0; step < 3; ++step)
        h = {std::tanh(0.1 * h[0] + 0.2 * h[1] + 0.3 * h[2]), std::tanh(-0.1 * h[0] - 0.2 * h[1] - 0.3 * h[2]), std::tanh(0.5 * h[0] + 0.5 * h[2])};
    for (int j = 0; j < 3; ++j) CHECK(y[0].as<float>()[j] == doctest::Approx(h[static_cast<std::size_t>(j)]).epsilon(1e-6));
}

TEST_CASE("opset < 7 broadcasting at an axis is written out as B with trailing axes of 1, or refused by name") {
    builder b(6);
    b.input("a", {2, 3, 4});
    b.input("b", {3});
    auto* add = b.node("Add", {"a", "b"}, {"y"}, "add");
    builder::integer(add, "broadcast", 1);
    builder::integer(add, "axis", 1);
    b.output("y");
    const sx::model m = b.load();
    using sgmatch::exec::value;
    std::vector<float> a(24);
    for (std::size_t i = 0; i < a.size(); ++i) a[i] = static_cast<float>(i);
    const auto y = sgmatch::exec::executor(m.graph).run({{"a", value::of<float>({2, 3, 4}, a)}, {"b", value::of<float>({3}, {100, 200, 300})}});
    REQUIRE(y[0].dims() == sgmatch::exec::shape{2, 3, 4});
    for (std::size_t i = 0; i < a.size(); ++i) CHECK(y[0].as<float>()[i] == a[i] + 100.0f * static_cast<float>(i / 4 % 3 + 1));
    // B of rank 3 cannot start at axis 1 of a rank-3 A.
    builder c(6);
    c.input("a", {2, 3, 4});
    c.input("b", {3, 4, 1});
    auto* bad = c.node("Add", {"a", "b"}, {"y"}, "add");
    builder::integer(bad, "broadcast", 1);
    builder::integer(bad, "axis", 1);
    c.output("y");
    CHECK(c.error().find("node 'add' (Add): B of rank 3 does not fit A of rank 3 at axis 1") != std::string::npos);
}

TEST_CASE("BatchNormalization before opset 7 runs in training mode unless is_test is set: refused by name, loaded with it") {
    auto bn = [](std::optional<std::int64_t> is_test) {
        builder b(6);
        b.input("x", {1, 2, 3, 3});
        for (const char* p : {"s", "b", "m", "v"}) b.init(p, {2}, {1.0f, 0.5f});
        auto* n = b.node("BatchNormalization", {"x", "s", "b", "m", "v"}, {"y"}, "bn");
        if (is_test) builder::integer(n, "is_test", *is_test);
        b.output("y");
        return b;
    };
    CHECK(bn(std::nullopt).error().find("node 'bn' (BatchNormalization): is_test 0 (opset 6): training mode, inference only") != std::string::npos);
    CHECK(bn(0).error().find("training mode, inference only") != std::string::npos);
    CHECK(bn(1).error().empty());
}

TEST_CASE("auto_pad and ConvTranspose's output_shape are written out as pads from the input's dims, or refused by name") {
    auto string_attr = [](::onnx::NodeProto* n, const std::string& k, const std::string& v) {
        auto* a = n->add_attribute();
        a->set_name(k);
        a->set_type(::onnx::AttributeProto::STRING);
        a->set_s(v);
    };
    auto pads_of = [](const sx::model& m, const char* name) {
        for (auto n : m.graph.nodes())
            if (m.graph.name(n) == name) return *m.graph.attr(n, "pads")->as_ints();
        return std::vector<std::int64_t>{};
    };
    // 5 wide, window 2, stride 2: 3 outputs need 1 pad; SAME_UPPER puts it at the end,
    // SAME_LOWER at the start; VALID drops it (2 outputs).
    struct auto_pad_case {
        const char* mode;
        std::vector<std::int64_t> want;
        std::int64_t out;
    };
    for (const auto& c : {auto_pad_case{"SAME_UPPER", {0, 0, 1, 1}, 3}, auto_pad_case{"SAME_LOWER", {1, 1, 0, 0}, 3},
                          auto_pad_case{"VALID", {0, 0, 0, 0}, 2}}) {
        const std::string mode = c.mode;
        const auto& want = c.want;
        const std::int64_t out = c.out;
        CAPTURE(mode);
        builder b;
        b.input("x", {1, 1, 5, 5});
        auto* p = b.node("MaxPool", {"x"}, {"y"}, "pool");
        builder::ints(p, "kernel_shape", {2, 2});
        builder::ints(p, "strides", {2, 2});
        string_attr(p, "auto_pad", mode);
        b.output("y");
        const sx::model m = b.load();
        CHECK(pads_of(m, "pool") == want);
        for (auto n : m.graph.nodes())
            if (m.graph.name(n) == "pool") {
                CHECK(!m.graph.attr(n, "auto_pad"));
                CHECK(m.graph.value_type(n, 0)->dims == std::vector<std::int64_t>{1, 1, out, out});
            }
        CHECK(m.report.notes.size() == 1);
    }
    // ConvTranspose: output_shape 10 from 3 inputs at stride 3 and a window of 3 is one more than
    // the 9 it makes unpadded: the one goes to output_padding.
    {
        std::mt19937 rng(3);
        builder b;
        b.input("x", {1, 1, 3, 3});
        b.init("w", {1, 2, 3, 3}, test::random_values(18, rng, 0.5f));
        auto* t = b.node("ConvTranspose", {"x", "w"}, {"y"}, "up");
        builder::ints(t, "strides", {3, 2});
        builder::ints(t, "output_shape", {10, 8});
        b.output("y");
        const sx::model m = b.load();
        for (auto n : m.graph.nodes())
            if (m.graph.name(n) == "up") {
                CHECK(*m.graph.attr(n, "pads")->as_ints() == std::vector<std::int64_t>{0, 0, 0, 0});
                CHECK(*m.graph.attr(n, "output_padding")->as_ints() == std::vector<std::int64_t>{1, 1});
                CHECK(m.graph.value_type(n, 0)->dims == std::vector<std::int64_t>{1, 2, 10, 8});
            }
    }
    // Spatial dims unknown at load: refused, by name.
    builder u;
    u.input("x", {1, 1, -1, 5});
    auto* p = u.node("AveragePool", {"x"}, {"y"}, "avg");
    builder::ints(p, "kernel_shape", {2, 2});
    string_attr(p, "auto_pad", "SAME_UPPER");
    u.output("y");
    CHECK(u.error().find("node 'avg' (AveragePool): auto_pad SAME_UPPER on an input whose spatial dims are not known at load") !=
          std::string::npos);
    // An empty kernel_shape with auto_pad: refused, by name (it once read past the list).
    builder e;
    e.input("x", {1, 3, 8, 8});
    auto* k = e.node("MaxPool", {"x"}, {"y"}, "empty");
    builder::ints(k, "kernel_shape", {});
    string_attr(k, "auto_pad", "SAME_UPPER");
    e.output("y");
    CHECK(e.error().find("node 'empty' (MaxPool): kernel_shape, strides, dilations, output_padding or output_shape do not fit") !=
          std::string::npos);
    // A graph built by hand with auto_pad SAME is refused when the executor is built, saying why.
    sgmatch::graph g;
    const auto x = g.add_input("x");
    const auto q = g.add_op("MaxPool", "pool", {x}, {{"kernel_shape", std::vector<std::int64_t>{2, 2}}, {"auto_pad", std::string("SAME_UPPER")}});
    g.mark_output(q);
    std::string why;
    try {
        sgmatch::exec::executor run(g);
    } catch (const std::exception& e) {
        why = e.what();
    }
    CAPTURE(why);
    CHECK(why.find("node 'pool' (MaxPool): attribute auto_pad = 'SAME_UPPER' is not implemented") != std::string::npos);
    CHECK(why.find("give explicit pads") != std::string::npos);
}

TEST_CASE("Upsample (opset 9) is written as Resize and repeats each element") {
    builder b(9);
    b.input("x", {1, 1, 2, 2});
    auto* s = b.g->add_initializer();
    s->set_name("scales");
    s->set_data_type(::onnx::TensorProto::FLOAT);
    s->add_dims(4);
    for (float v : {1.0f, 1.0f, 2.0f, 3.0f}) s->add_float_data(v);
    b.node("Upsample", {"x", "scales"}, {"y"}, "up");
    b.output("y");
    const sx::model m = b.load();
    for (auto n : m.graph.nodes())
        if (m.graph.name(n) == "up") {
            CHECK(m.graph.op_name(n) == "Resize");
            CHECK(m.graph.value_type(n, 0)->dims == std::vector<std::int64_t>{1, 1, 4, 6});
        }
    sgmatch::reference::array x = sgmatch::reference::array::from_shape({1, 1, 2, 2});
    for (std::size_t i = 0; i < 4; ++i) x.data()[i] = static_cast<float>(i + 1);
    const auto y = sgmatch::exec::executor(m.graph)({{"x", x}}).at(0);
    REQUIRE(y.shape() == std::vector<std::size_t>{1, 1, 4, 6});
    for (std::size_t r = 0; r < 4; ++r)
        for (std::size_t c = 0; c < 6; ++c) CHECK(y(0, 0, r, c) == x(0, 0, r / 2, c / 3));
}

TEST_CASE("LpNormalization loads with its shape and runs: each row divided by its L1 norm, worked by hand") {
    builder b(1);
    b.input("x", {2, 2});
    builder::integer(b.node("LpNormalization", {"x"}, {"y"}, "lp"), "p", 1);
    b.output("y");
    const sx::model m = b.load();
    for (auto n : m.graph.nodes())
        if (m.graph.name(n) == "lp") CHECK(m.graph.value_type(n, 0)->dims == std::vector<std::int64_t>{2, 2});
    sgmatch::reference::array x = sgmatch::reference::array::from_shape({2, 2});
    const float in[] = {1, -3, 2, 2};
    std::copy(std::begin(in), std::end(in), x.data());
    for (const auto mode : {sgmatch::exec::mode::reference, sgmatch::exec::mode::onednn}) {
        const auto y = sgmatch::exec::executor(m.graph, mode)({{"x", x}}).at(0);
        CHECK(y(0, 0) == doctest::Approx(0.25));
        CHECK(y(0, 1) == doctest::Approx(-0.75));
        CHECK(y(1, 0) == doctest::Approx(0.5));
        CHECK(y(1, 1) == doctest::Approx(0.5));
    }
}

TEST_CASE("a QDQ model loads with each conv group as one QLinearConv (or, asked, as written) and both agree within a step") {
    // As quantization tools write it: f32 in, Q / DQ around the conv, s8 weights per channel
    // (axis 0), an int32 bias in units of x_scale * w_scale, the Relu inside the output's Q.
    std::mt19937 rng(5);
    builder b;
    b.input("x", {1, 4, 6, 6});
    auto raw = [&](const std::string& name, int type, std::vector<std::int64_t> dims, const void* data, std::size_t bytes) {
        auto* t = b.g->add_initializer();
        t->set_name(name);
        t->set_data_type(type);
        for (auto d : dims) t->add_dims(d);
        t->set_raw_data(std::string(static_cast<const char*>(data), bytes));
    };
    using P = ::onnx::TensorProto;
    const float xs = 0.02f, ys = 0.03f;
    const float ws[3] = {0.004f, 0.006f, 0.005f};
    std::vector<std::int8_t> w(3 * 4 * 3 * 3);
    std::uniform_int_distribution<int> d(-127, 127);
    for (auto& v : w) v = static_cast<std::int8_t>(d(rng));
    const std::int32_t bias[3] = {250, -400, 90};
    float bs[3];
    for (int m = 0; m < 3; ++m) bs[m] = xs * ws[m];
    const std::uint8_t xz = 128, yz = 0;
    raw("xs", P::FLOAT, {}, &xs, 4);
    raw("xz", P::UINT8, {}, &xz, 1);
    raw("ys", P::FLOAT, {}, &ys, 4);
    raw("yz", P::UINT8, {}, &yz, 1);
    raw("wq", P::INT8, {3, 4, 3, 3}, w.data(), w.size());
    raw("ws", P::FLOAT, {3}, ws, sizeof ws);
    raw("bq", P::INT32, {3}, bias, sizeof bias);
    raw("bs", P::FLOAT, {3}, bs, sizeof bs);
    b.node("QuantizeLinear", {"x", "xs", "xz"}, {"xq"}, "qx");
    b.node("DequantizeLinear", {"xq", "xs", "xz"}, {"xd"}, "dqx");
    builder::integer(b.node("DequantizeLinear", {"wq", "ws"}, {"wd"}, "dqw"), "axis", 0);
    builder::integer(b.node("DequantizeLinear", {"bq", "bs"}, {"bd"}, "dqb"), "axis", 0);
    builder::ints(b.node("Conv", {"xd", "wd", "bd"}, {"c"}, "conv"), "pads", {1, 1, 1, 1});
    b.node("Relu", {"c"}, {"r"}, "relu");
    b.node("QuantizeLinear", {"r", "ys", "yz"}, {"yq"}, "qy");
    b.node("DequantizeLinear", {"yq", "ys", "yz"}, {"y"}, "dqy");
    b.output("y");
    auto ops = [](const sx::model& m) {
        std::vector<std::string> v;
        for (auto n : m.graph.nodes())
            if (m.graph.kind(n) == node_kind::op) v.emplace_back(m.graph.op_name(n));
        return v;
    };
    const sx::model folded = b.load();
    CHECK(folded.report.qdq.convs == 1);
    CHECK(folded.report.qdq.activations == 1);
    CHECK(ops(folded) == std::vector<std::string>{"QuantizeLinear", "QLinearConv", "DequantizeLinear"});
    sx::load_options as_written;
    as_written.fold_qdq = false;
    const sx::model plain = b.load(as_written);
    CHECK(ops(plain) == std::vector<std::string>{"QuantizeLinear", "DequantizeLinear", "Conv", "Relu", "QuantizeLinear", "DequantizeLinear"});
    sgmatch::reference::array x = sgmatch::reference::array::from_shape({1, 4, 6, 6});
    std::uniform_real_distribution<float> u(-1.0f, 1.5f);
    for (auto& v : x) v = u(rng);
    sgmatch::exec::run_stats st;
    const auto got = sgmatch::exec::executor(folded.graph, sgmatch::exec::mode::onednn).run({{"x", sgmatch::exec::value::view(x.data(), dtype::f32, {1, 4, 6, 6})}}, &st).at(0);
    const auto want = sgmatch::exec::executor(plain.graph, sgmatch::exec::mode::reference)({{"x", x}}).at(0);
    CHECK(st.onednn_typed_nodes == 1);
    REQUIRE(got.size() == static_cast<std::int64_t>(want.size()));
    std::size_t off = 0;
    for (std::size_t i = 0; i < want.size(); ++i) {
        const float g = got.as<float>()[i];
        CHECK(std::abs(g - want.data()[i]) <= ys * 1.001f);
        off += g != want.data()[i];
    }
    CHECK(off * 100 <= want.size());
}

TEST_CASE("bad input is a load_error naming what is wrong, never a crash") {
    std::mt19937 rng(2);
    const std::string good = conv_relu(rng).bytes();
    // Truncated or corrupt protobuf: every prefix of the file either loads or is a load_error.
    int errors = 0;
    for (std::size_t len = 0; len < good.size(); len += 7) {
        try {
            (void)sx::load_bytes(good.data(), len);
        } catch (const sx::load_error&) {
            ++errors;
        }
    }
    CHECK(errors > 0);
    std::string corrupt = good;
    for (std::size_t i = 10; i < corrupt.size(); i += 13) corrupt[i] = static_cast<char>(corrupt[i] ^ 0x5a);
    try {
        (void)sx::load_bytes(corrupt.data(), corrupt.size());
    } catch (const sx::load_error&) {
    }
    CHECK_THROWS_WITH_AS(sx::load_bytes("garbage!", 8), doctest::Contains("not an ONNX model"), sx::load_error);

    {  // a dangling input name
        builder b;
        b.input("x", {1, 4});
        b.node("Relu", {"nowhere"}, {"y"}, "r");
        b.output("y");
        CHECK(b.error().find("node 'r' (Relu) input 0 'nowhere' is not produced by any node, graph input or initializer") !=
              std::string::npos);
    }
    {  // a cycle
        builder b;
        b.input("x", {1, 4});
        b.node("Add", {"x", "b"}, {"a"}, "first");
        b.node("Relu", {"a"}, {"b"}, "second");
        b.output("b");
        CHECK(b.error().find("the graph has a cycle through node") != std::string::npos);
    }
    {  // a value produced twice; an output listed twice
        builder b;
        b.input("x", {1, 4});
        b.node("Relu", {"x"}, {"y"}, "r1");
        b.node("Relu", {"x"}, {"y"}, "r2");
        b.output("y");
        CHECK(b.error().find("value 'y' is produced twice") != std::string::npos);
        builder c;
        c.input("x", {1, 4});
        c.node("Relu", {"x"}, {"y"}, "r1");
        c.output("y");
        c.output("y");
        CHECK(c.error().find("graph output 'y' is listed twice") != std::string::npos);
    }
    {  // an initializer whose data disagrees with its dims; absurd dims refused before allocating
        builder b;
        b.input("x", {1, 4});
        b.init("w", {4, 4}, {1, 2, 3});
        b.node("MatMul", {"x", "w"}, {"y"}, "mm");
        b.output("y");
        CHECK(b.error().find("tensor 'w': float_data holds 3 values for dims of 16") != std::string::npos);
        builder c;
        c.input("x", {1, 4});
        auto* t = c.init("w", {1000000, 1000000, 1000000}, {});
        t->set_raw_data("abcd");
        c.node("MatMul", {"x", "w"}, {"y"}, "mm");
        c.output("y");
        CHECK(c.error().find("tensor 'w': dims hold more than") != std::string::npos);
        builder d;
        d.input("x", {1, 4});
        d.init("w", {4, -4}, {});
        d.node("MatMul", {"x", "w"}, {"y"}, "mm");
        d.output("y");
        CHECK(d.error().find("tensor 'w': negative dim -4") != std::string::npos);
    }
}

TEST_CASE("external data is read beside the model and may not leave its directory") {
    namespace fs = std::filesystem;
    const fs::path dir = fs::temp_directory_path() / ("sgmatch_onnx_ext_" + std::to_string(::getpid()));
    fs::create_directories(dir / "model");
    const std::vector<float> w = {1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16};
    {
        std::ofstream f(dir / "model" / "weights.bin", std::ios::binary);
        const float pad = 0;
        f.write(reinterpret_cast<const char*>(&pad), sizeof pad);  // the tensor starts at offset 4
        f.write(reinterpret_cast<const char*>(w.data()), static_cast<std::streamsize>(w.size() * sizeof(float)));
    }
    auto write = [&](const std::string& location) {
        builder b;
        b.input("x", {1, 4});
        auto* t = b.g->add_initializer();
        t->set_name("w");
        t->set_data_type(::onnx::TensorProto::FLOAT);
        t->add_dims(4);
        t->add_dims(4);
        t->set_data_location(::onnx::TensorProto::EXTERNAL);
        auto* kv = t->add_external_data();
        kv->set_key("location");
        kv->set_value(location);
        kv = t->add_external_data();
        kv->set_key("offset");
        kv->set_value("4");
        b.node("MatMul", {"x", "w"}, {"y"}, "mm");
        b.output("y");
        std::ofstream f(dir / "model" / "m.onnx", std::ios::binary);
        f << b.bytes();
    };
    write("weights.bin");
    const sx::model m = sx::load((dir / "model" / "m.onnx").string());
    bool found = false;
    for (auto n : m.graph.nodes())
        if (m.graph.kind(n) == node_kind::constant) {
            found = true;
            CHECK(*m.graph.constant(n)->to_floats() == w);
        }
    CHECK(found);
    for (const char* escape : {"../outside.bin", "/etc/passwd", "sub/../../outside.bin"}) {
        write(escape);
        CAPTURE(escape);
        CHECK_THROWS_WITH_AS(sx::load((dir / "model" / "m.onnx").string()), doctest::Contains("is outside the model's directory"),
                             sx::load_error);
    }
    write("missing.bin");
    CHECK_THROWS_WITH_AS(sx::load((dir / "model" / "m.onnx").string()), doctest::Contains("cannot open external data"),
                         sx::load_error);
    fs::remove_all(dir);
}

TEST_CASE("a conformance model loads: inputs, outputs, opset") {
    const sx::model m = sx::load(std::string(SGMATCH_ONNX_TESTDATA) + "/node/test_conv_with_strides_padding/model.onnx");
    CHECK(m.opset == 11);
    CHECK(m.inputs == std::vector<std::string>{"x", "W"});
    CHECK(m.outputs == std::vector<std::string>{"y"});
}

TEST_CASE("a model file is mapped while it is parsed: the same model as its bytes, and what cannot be read is a load_error") {
    const std::string path = std::string(SGMATCH_ONNX_TESTDATA) + "/node/test_conv_with_strides_padding/model.onnx";
    const sx::detail::file_bytes f(path);
#if defined(__unix__) || defined(__APPLE__)
    CHECK(f.mapped());
#endif
    std::ifstream in(path, std::ios::binary);
    const std::string bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    REQUIRE(f.size() == bytes.size());
    CHECK(std::memcmp(f.data(), bytes.data(), bytes.size()) == 0);
    const sx::model a = sx::load(path), b = sx::load_bytes(bytes.data(), bytes.size());
    CHECK(a.graph.node_count() == b.graph.node_count());
    CHECK(a.inputs == b.inputs);
    CHECK(a.outputs == b.outputs);

    namespace fs = std::filesystem;
    const fs::path dir = fs::temp_directory_path() / ("sgmatch_onnx_file_" + std::to_string(::getpid()));
    fs::create_directories(dir);
    CHECK_THROWS_WITH_AS(sx::load((dir / "absent.onnx").string()), doctest::Contains("cannot open"), sx::load_error);
    CHECK_THROWS_AS(sx::load(dir.string()), sx::load_error);  // a directory: not mapped, not readable
    { std::ofstream empty(dir / "empty.onnx"); }
    CHECK_THROWS_WITH_AS(sx::load((dir / "empty.onnx").string()), doctest::Contains("no graph"), sx::load_error);
    fs::remove_all(dir);
}

TEST_CASE("A sequence of tensors as graph input and output: loaded as one, run, saved as one, refused where declared otherwise") {
    // With the length as an output declared `length_output_kind` ("" : not an output).
    auto sequence_io = [](const std::string& length_output_kind) {
        builder b;
        auto* s = b.g->add_input();
        s->set_name("s");
        s->mutable_type()->mutable_sequence_type()->mutable_elem_type()->mutable_tensor_type()->set_elem_type(::onnx::TensorProto::FLOAT);
        b.input("x", {2});
        b.node("SequenceInsert", {"s", "x"}, {"s2"}, "insert");
        b.node("SequenceLength", {"s2"}, {"n"}, "length");
        auto* o = b.g->add_output();
        o->set_name("s2");
        o->mutable_type()->mutable_sequence_type()->mutable_elem_type()->mutable_tensor_type()->set_elem_type(::onnx::TensorProto::FLOAT);
        if (length_output_kind.empty()) return b;
        auto* n = b.g->add_output();
        n->set_name("n");
        if (length_output_kind == "sequence")
            n->mutable_type()->mutable_sequence_type()->mutable_elem_type()->mutable_tensor_type()->set_elem_type(::onnx::TensorProto::INT64);
        else
            n->mutable_type()->mutable_tensor_type()->set_elem_type(::onnx::TensorProto::INT64);
        return b;
    };
    using sgmatch::exec::value;
    const sx::model m = sequence_io("tensor").load();
    const auto s_type = m.graph.value_type(m.graph.graph_output(0).node, 0);
    REQUIRE(s_type);
    CHECK(s_type->sequence);
    CHECK(s_type->type == dtype::f32);
    const value in = value::sequence(dtype::f32, {value::of<float>({3}, {1, 2, 3}), value::of<float>({1}, {4})});
    const auto y = sgmatch::exec::executor(m.graph).run({{"s", in}, {"x", value::of<float>({2}, {5, 6})}});
    REQUIRE(y[0].is_sequence());
    REQUIRE(y[0].items().size() == 3);
    CHECK(std::vector<float>(y[0].items()[2].as<float>(), y[0].items()[2].as<float>() + 2) == std::vector<float>{5, 6});
    CHECK(y[1].as<std::int64_t>()[0] == 3);
    // Written back with sequence types, which libonnx's checker and the loader read as such.
    const sx::model just_the_sequence = sequence_io("").load();
    const ::onnx::ModelProto p = sx::to_proto(just_the_sequence.graph, {});
    CHECK_NOTHROW(::onnx::checker::check_model(p));
    CHECK(p.graph().input(0).type().has_sequence_type());
    CHECK(p.graph().input(1).type().has_tensor_type());
    CHECK(p.graph().output(0).type().has_sequence_type());
    CHECK(sx::to_proto(m.graph, {}).graph().output(1).type().has_tensor_type());
    const std::string bytes = sx::save_bytes(m.graph, {});
    const sx::model again = sx::load_bytes(bytes.data(), bytes.size());
    const auto t = again.graph.value_type(again.graph.graph_output(0).node, 0);
    REQUIRE(t);
    CHECK(t->sequence);
    // A length declared a sequence: refused by name.
    CHECK(sequence_io("sequence").error().find("node 'length' (SequenceLength): output 0 'n' is declared a sequence; the op computes a tensor") !=
          std::string::npos);
}

TEST_CASE("RoiAlign before opset 16 had no half-pixel shift: written out as output_half_pixel") {
    for (const std::int64_t opset : {10, 16}) {
        builder b(opset);
        b.input("x", {1, 1, 4, 4});
        b.input("rois", {1, 4});
        b.input("batch", {1}, ::onnx::TensorProto::INT64);
        b.node("RoiAlign", {"x", "rois", "batch"}, {"y"}, "roi");
        b.output("y");
        const sx::model m = b.load();
        std::optional<std::string> mode;
        for (sgmatch::node_id n : m.graph.nodes())
            if (m.graph.kind(n) == sgmatch::node_kind::op)
                if (const auto a = m.graph.attr(n, "coordinate_transformation_mode")) mode = std::string(*a->as_string());
        if (opset < 16) {
            REQUIRE(mode);
            CHECK(*mode == "output_half_pixel");
        } else {
            CHECK(!mode);  // the description's default, half_pixel
        }
    }
}

TEST_CASE("onnx::load: Scan before opset 9 (a batch axis) runs as a Loop of opset-9 Scans, reading an enclosing value") {
    // Scan-8 over s0 [B, 2] and x [B, T, 2], backwards: s <- s + x_t * k (k read from the
    // enclosing graph), each step's s scanned out.
    builder b(8);
    b.input("s0", {2, 2});
    b.input("x", {2, 3, 2});
    b.input("k", {1});
    auto* scan = b.node("Scan", {"", "s0", "x"}, {"s", "steps"}, "batched_scan");
    builder::integer(scan, "num_scan_inputs", 1);
    builder::ints(scan, "directions", {1});
    auto* body_attr = scan->add_attribute();
    body_attr->set_name("body");
    body_attr->set_type(::onnx::AttributeProto::GRAPH);
    ::onnx::GraphProto* body = body_attr->mutable_g();
    body->set_name("step");
    for (const char* in : {"s_in", "x_t"}) body->add_input()->set_name(in);
    auto* mul = body->add_node();
    mul->set_op_type("Mul");
    for (const char* in : {"x_t", "k"}) mul->add_input(in);
    mul->add_output("scaled");
    auto* add = body->add_node();
    add->set_op_type("Add");
    for (const char* in : {"s_in", "scaled"}) add->add_input(in);
    add->add_output("s_out");
    auto* copy = body->add_node();
    copy->set_op_type("Identity");
    copy->add_input("s_out");
    copy->add_output("each");
    for (const char* out : {"s_out", "each"}) body->add_output()->set_name(out);
    b.output("s");
    b.output("steps");
    const sx::model m = b.load();
    std::size_t loops = 0;
    for (sgmatch::node_id n : m.graph.nodes()) loops += m.graph.kind(n) == node_kind::op && m.graph.op_name(n) == "Loop";
    CHECK(loops == 1);
    std::mt19937 rng(31);
    const std::vector<float> s0 = test::random_values(4, rng, 1.0f), x = test::random_values(12, rng, 1.0f);
    const float k = -1.5f;
    const auto out = sgmatch::exec::executor(m.graph).run({{"s0", sgmatch::exec::value::of<float>({2, 2}, s0)},
                                                           {"x", sgmatch::exec::value::of<float>({2, 3, 2}, x)},
                                                           {"k", sgmatch::exec::value::of<float>({1}, {k})}});
    REQUIRE(out.size() == 2);
    REQUIRE(out[0].dims() == sgmatch::exec::shape{2, 2});
    REQUIRE(out[1].dims() == sgmatch::exec::shape{2, 3, 2});
    for (std::size_t bi = 0; bi < 2; ++bi) {
        float s[2] = {s0[bi * 2], s0[bi * 2 + 1]};
        for (std::size_t step = 0; step < 3; ++step) {
            const std::size_t t = 2 - step;  // backwards
            for (std::size_t c = 0; c < 2; ++c) {
                s[c] += x[(bi * 3 + t) * 2 + c] * k;
                CHECK(out[1].as<float>()[(bi * 3 + step) * 2 + c] == doctest::Approx(s[c]));
            }
        }
        for (std::size_t c = 0; c < 2; ++c) CHECK(out[0].as<float>()[bi * 2 + c] == doctest::Approx(s[c]));
    }
    // Per-element lengths are refused by name.
    builder lens(8);
    lens.input("n", {2}, ::onnx::TensorProto::INT64);
    lens.input("s0", {2, 2});
    lens.input("x", {2, 3, 2});
    lens.input("k", {1});
    auto* with_lens = lens.node("Scan", {"n", "s0", "x"}, {"s", "steps"}, "ragged");
    with_lens->add_attribute()->CopyFrom(scan->attribute(0));
    with_lens->add_attribute()->CopyFrom(scan->attribute(2));
    lens.output("s");
    lens.output("steps");
    CHECK(lens.error().find("node 'ragged' (Scan): sequence_lens (a scan length per batch element) is not implemented") != std::string::npos);
}

TEST_CASE("int16, uint16, uint32 and uint64 tensors decode from their typed fields and from raw data") {
    using T = ::onnx::TensorProto;
    T u32;
    u32.set_data_type(T::UINT32);
    u32.add_dims(3);
    for (std::uint64_t v : {std::uint64_t{0}, std::uint64_t{7}, std::uint64_t{4294967295u}}) u32.add_uint64_data(v);
    const auto a = sgmatch::onnx::decode(u32).to_value();
    CHECK(a.type() == dtype::u32);
    CHECK(std::vector<std::uint32_t>(a.as<std::uint32_t>(), a.as<std::uint32_t>() + 3) == std::vector<std::uint32_t>{0, 7, 4294967295u});
    T u64;
    u64.set_data_type(T::UINT64);
    u64.add_dims(1);
    u64.add_uint64_data(std::numeric_limits<std::uint64_t>::max());
    CHECK(sgmatch::onnx::decode(u64).to_value().as<std::uint64_t>()[0] == std::numeric_limits<std::uint64_t>::max());
    T i16;
    i16.set_data_type(T::INT16);
    i16.add_dims(2);
    i16.add_int32_data(-32768);
    i16.add_int32_data(1234);
    const auto c = sgmatch::onnx::decode(i16).to_value();
    CHECK(c.type() == dtype::i16);
    CHECK(c.as<std::int16_t>()[0] == -32768);
    CHECK(c.as<std::int16_t>()[1] == 1234);
    T u16;
    u16.set_data_type(T::UINT16);
    u16.add_dims(1);
    const std::uint16_t raw = 65000;
    u16.set_raw_data(std::string(reinterpret_cast<const char*>(&raw), sizeof raw));
    CHECK(sgmatch::onnx::decode(u16).to_value().as<std::uint16_t>()[0] == 65000);
    T short_field;  // two dims' worth of elements declared, one given
    short_field.set_data_type(T::UINT32);
    short_field.add_dims(2);
    short_field.add_uint64_data(1);
    CHECK_THROWS_AS(sgmatch::onnx::decode(short_field), sgmatch::onnx::load_error);
}
