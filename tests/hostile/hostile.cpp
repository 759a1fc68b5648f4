// Hostile input against sgmatch-run: malformed and oversized models, tensor files and argument
// vectors, each written here with libonnx's protobuf classes (no Python needed) and run as a
// child process with an expected outcome (exit code and a fragment of what it prints). A case
// fails on another exit code, a missing fragment, a signal (an abort, a sanitizer report), a
// run past its time limit (a hang) or, unless --no-rss, a peak resident set over 200 MB
// (getrusage through wait4: refusals happen before any large allocation, and the cases that
// run, a Sum of 100,001 inputs among them, stay small).
//
//   hostile <sgmatch-run> <work dir> [--no-rss] [--loop-limit N] [--only NAME] [--write-corpus DIR]
//
// --loop-limit N runs the unbounded loops with --max-loop-iterations N rather than the default
// (the sanitizer builds: 100,000 iterations take minutes there, and N as many check the same).
// --write-corpus writes every case's model into DIR (the onnx_load fuzz target's corpus) and
// its argument vector, .npy and .pb files into DIR/../run_inputs (the run_inputs target's),
// files of up to 64 KiB: `hostile - - --write-corpus tests/fuzz/onnx_load` made the committed
// seeds named hostile-*.
// The last line is "N passed, M failed"; the largest peak RSS of a refused case is printed.
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <fcntl.h>
#include <signal.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <functional>
#include <iostream>
#include <limits>
#include <map>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include <onnx/onnx_pb.h>

namespace fs = std::filesystem;
using P = ::onnx::TensorProto;

namespace {

constexpr std::int64_t i64_max = std::numeric_limits<std::int64_t>::max();

// ---------------------------------------------------------------------------------------------
// A small builder of ONNX models.

struct model {
    ::onnx::ModelProto m;
    explicit model(std::int64_t opset = 17) {
        m.set_ir_version(8);
        m.set_producer_name("hostile");
        auto* o = m.add_opset_import();
        o->set_domain("");
        o->set_version(opset);
        m.mutable_graph()->set_name("g");
    }
    ::onnx::GraphProto& g() { return *m.mutable_graph(); }
    static void typed(::onnx::ValueInfoProto* v, const std::string& name, int elem, const std::vector<std::int64_t>& dims) {
        v->set_name(name);
        auto* t = v->mutable_type()->mutable_tensor_type();
        t->set_elem_type(elem);
        auto* s = t->mutable_shape();
        for (auto d : dims) s->add_dim()->set_dim_value(d);
    }
    model& input(const std::string& name, int elem, const std::vector<std::int64_t>& dims) {
        typed(g().add_input(), name, elem, dims);
        return *this;
    }
    model& output(const std::string& name, int elem = P::FLOAT) {
        auto* v = g().add_output();
        v->set_name(name);
        v->mutable_type()->mutable_tensor_type()->set_elem_type(elem);
        return *this;
    }
    ::onnx::NodeProto& node(const std::string& op, const std::vector<std::string>& ins, const std::vector<std::string>& outs,
                            const std::string& name = "") {
        auto* n = g().add_node();
        n->set_op_type(op);
        n->set_name(name.empty() ? op + "_" + std::to_string(g().node_size()) : name);
        for (const auto& i : ins) n->add_input(i);
        for (const auto& o : outs) n->add_output(o);
        return *n;
    }
    P& initializer(const std::string& name, int elem, const std::vector<std::int64_t>& dims) {
        auto* t = g().add_initializer();
        t->set_name(name);
        t->set_data_type(elem);
        for (auto d : dims) t->add_dims(d);
        return *t;
    }
    model& ints(const std::string& name, const std::vector<std::int64_t>& v) {
        auto& t = initializer(name, P::INT64, {static_cast<std::int64_t>(v.size())});
        for (auto x : v) t.add_int64_data(x);
        return *this;
    }
    model& floats(const std::string& name, const std::vector<std::int64_t>& dims, float fill = 0.5f) {
        auto& t = initializer(name, P::FLOAT, dims);
        std::int64_t n = 1;
        for (auto d : dims) n *= d;
        for (std::int64_t i = 0; i < n; ++i) t.add_float_data(fill);
        return *this;
    }
    std::string bytes() const { return m.SerializeAsString(); }
};

void attr_ints(::onnx::NodeProto& n, const std::string& name, const std::vector<std::int64_t>& v) {
    auto* a = n.add_attribute();
    a->set_name(name);
    a->set_type(::onnx::AttributeProto::INTS);
    for (auto x : v) a->add_ints(x);
}
void attr_int(::onnx::NodeProto& n, const std::string& name, std::int64_t v) {
    auto* a = n.add_attribute();
    a->set_name(name);
    a->set_type(::onnx::AttributeProto::INT);
    a->set_i(v);
}
void attr_graph(::onnx::NodeProto& n, const std::string& name, const ::onnx::GraphProto& body) {
    auto* a = n.add_attribute();
    a->set_name(name);
    a->set_type(::onnx::AttributeProto::GRAPH);
    *a->mutable_g() = body;
}

// A Relu model: X [1, 4] -> Y.
model relu_model() {
    model m;
    m.input("X", P::FLOAT, {1, 4}).output("Y");
    m.node("Relu", {"X"}, {"Y"}, "relu");
    return m;
}

// A Loop whose body adds one to a float state; trip count and condition as given ("" = absent).
model loop_model(const std::string& trip, const std::string& cond, int cond_type = P::BOOL) {
    model m;
    m.input("X", P::FLOAT, {1}).output("Y");
    if (!trip.empty()) m.ints("trip", {i64_max});
    if (!cond.empty()) {
        auto& t = m.initializer("cond", P::BOOL, {});
        t.add_int32_data(1);
    }
    ::onnx::GraphProto body;
    body.set_name("body");
    model::typed(body.add_input(), "i", P::INT64, {});
    model::typed(body.add_input(), "c", P::BOOL, {});
    model::typed(body.add_input(), "x", P::FLOAT, {1});
    auto* one = body.add_initializer();
    one->set_name("one");
    one->set_data_type(P::FLOAT);
    one->add_dims(1);
    one->add_float_data(1);
    auto* add = body.add_node();
    add->set_op_type("Add");
    add->set_name("body_add");
    add->add_input("x");
    add->add_input("one");
    add->add_output("x2");
    auto* idc = body.add_node();
    if (cond_type == P::BOOL) {
        idc->set_op_type("Identity");
        idc->add_input("c");
    } else {  // a float condition
        idc->set_op_type("Cast");
        idc->add_input("c");
        attr_int(*idc, "to", cond_type);
    }
    idc->set_name("body_cond");
    idc->add_output("c2");
    model::typed(body.add_output(), "c2", cond_type, {});
    model::typed(body.add_output(), "x2", P::FLOAT, {1});
    auto& n = m.node("Loop", {trip.empty() ? "" : "trip", cond.empty() ? "" : "cond", "X"}, {"Y"}, "loop");
    attr_graph(n, "body", body);
    return m;
}

// If nodes nested `depth` deep, each branch passing X through.
::onnx::GraphProto if_body(int depth, const std::string& tag) {
    ::onnx::GraphProto b;
    b.set_name("b" + tag);
    auto* id = b.add_node();
    const std::string out = "y" + tag;
    if (depth == 0) {
        id->set_op_type("Identity");
        id->add_input("X");
        id->add_output(out);
    } else {
        id->set_op_type("If");
        id->set_name("if" + tag);
        id->add_input("C");
        id->add_output(out);
        attr_graph(*id, "then_branch", if_body(depth - 1, tag + "t"));
        attr_graph(*id, "else_branch", if_body(0, tag + "e"));  // one branch nests: linear in depth
    }
    model::typed(b.add_output(), out, P::FLOAT, {1});
    return b;
}
model nested_if(int depth) {
    model m;
    m.input("X", P::FLOAT, {1}).input("C", P::BOOL, {}).output("Y");
    auto& n = m.node("If", {"C"}, {"Y"}, "if");
    // Only one branch nests further: the model stays small at any depth.
    attr_graph(n, "then_branch", if_body(depth - 1, "t"));
    attr_graph(n, "else_branch", if_body(0, "e"));
    return m;
}

// ---------------------------------------------------------------------------------------------
// .npy and .pb files.

std::string npy(const std::string& shape, std::int64_t values, const char* descr = "<f4") {
    std::string h = std::string("{'descr': '") + descr + "', 'fortran_order': False, 'shape': " + shape + ", }";
    while ((10 + h.size() + 1) % 64 != 0) h += ' ';
    h += '\n';
    std::string out("\x93NUMPY\x01\x00", 8);
    out += static_cast<char>(h.size() & 0xff);
    out += static_cast<char>(h.size() >> 8);
    out += h;
    out.append(static_cast<std::size_t>(values) * 4, '\0');
    return out;
}

// ---------------------------------------------------------------------------------------------
// A case: files to write, the arguments, what must come out.

struct file {
    std::string name;
    std::string bytes;
    enum kind_t { regular, fifo, symlink } kind = regular;
};

struct hostile_case {
    std::string name, cls;                    // its name; the class of input (the table in RESULTS.md)
    std::vector<file> files;                  // written into the case's folder
    std::vector<std::string> args;            // "{dir}" is the case's folder
    int exit_code = 2;
    std::vector<std::string> expect;          // fragments of stdout + stderr, each required
    bool in_dir = false;                      // run from inside the case's folder
    int seconds = 60;
};

std::vector<hostile_case> cases() {
    std::vector<hostile_case> c;
    const std::string relu = relu_model().bytes();
    auto model_case = [&](std::string name, std::string cls, std::string bytes, std::vector<std::string> expect, int code = 2) {
        hostile_case k;
        k.name = std::move(name);
        k.cls = std::move(cls);
        k.files.push_back({"model.onnx", std::move(bytes)});
        k.args = {"{dir}/model.onnx", "--rounds", "1"};
        k.expect = std::move(expect);
        k.exit_code = code;
        c.push_back(std::move(k));
    };
    auto args_case = [&](std::string name, std::vector<std::string> args, std::vector<std::string> expect, int code = 2) {
        hostile_case k;
        k.name = std::move(name);
        k.cls = "command line";
        k.files.push_back({"model.onnx", relu});
        k.args = std::move(args);
        k.expect = std::move(expect);
        k.exit_code = code;
        c.push_back(std::move(k));
    };

    // --- the command line -------------------------------------------------------------------
    const std::string m = "{dir}/model.onnx";
    args_case("rounds_not_a_number", {m, "--rounds", "abc"}, {"--rounds", "'abc'", "usage"});
    args_case("batch_not_a_number", {m, "--batch", "abc"}, {"--batch", "'abc'"});
    args_case("threads_too_large", {m, "--threads", "99999999999"}, {"--threads", "99999999999"});
    args_case("rounds_trailing", {m, "--rounds", "3x"}, {"--rounds", "'3x'"});
    args_case("rounds_negative", {m, "--rounds", "-4"}, {"--rounds", "-4"});
    args_case("missing_value", {m, "--rounds"}, {"--rounds needs a value"});
    args_case("missing_value_input", {m, "--input"}, {"--input needs a value"});
    args_case("max_memory_bad", {m, "--max-memory", "8Q"}, {"--max-memory", "'8Q'"});
    args_case("unknown_option", {m, "--frobnicate"}, {"unknown option --frobnicate", "usage"});
    args_case("tolerance_not_a_fraction", {m, "--expect", m, "--tolerance", "2"}, {"--tolerance", "(0, 1]", "'2'"});
    args_case("tolerance_without_expect", {m, "--tolerance", "0.1"}, {"--tolerance needs --expect"});
    args_case("two_models", {m, m}, {"one model"});
    args_case("help", {"--help"}, {"--max-memory", "--max-loop-iterations", "--backend", "--input", "--expect", "--save",
                                   "--dot", "--json", "--profile", "--explain", "--threads", "--batch", "--rounds"}, 0);
    args_case("help_short", {"-h"}, {"--max-memory", "--max-loop-iterations"}, 0);
    args_case("no_arguments", {}, {"usage", "--max-memory", "--max-loop-iterations", "--profile"});
    args_case("dot_unwritable", {m, "--dot", "/nonexistent-dir/out.dot"}, {"--dot", "/nonexistent-dir/out.dot"});
    args_case("save_unwritable", {m, "--save", "/nonexistent-dir/out.onnx"}, {"/nonexistent-dir/out.onnx"});
    args_case("input_unknown_name", {m, "--input", "Z={dir}/x.npy"}, {"no input 'Z'", "'X'"});
    {
        hostile_case k;
        k.name = "expect_other_shape";
        k.cls = "command line";
        k.files = {{"model.onnx", relu}, {"x.npy", npy("(1, 4)", 4)}, {"want.npy", npy("(2, 2)", 4)}};
        k.args = {m, "--input", "X={dir}/x.npy", "--expect", "{dir}/want.npy", "--rounds", "1"};
        k.exit_code = 1;
        k.expect = {"[2, 2]", "[1, 4]", "MISMATCH"};
        c.push_back(k);
        k.name = "expect_nan";
        std::string nan = npy("(1, 4)", 0);
        const float q = std::numeric_limits<float>::quiet_NaN();
        for (int i = 0; i < 4; ++i) nan.append(reinterpret_cast<const char*>(&q), 4);
        k.files = {{"model.onnx", relu}, {"x.npy", npy("(1, 4)", 4)}, {"want.npy", nan}};
        k.expect = {"NaN", "MISMATCH"};
        c.push_back(k);
    }

    // --- .npy and .pb inputs ------------------------------------------------------------------
    auto npy_case = [&](std::string name, std::string bytes, std::vector<std::string> expect) {
        hostile_case k;
        k.name = std::move(name);
        k.cls = ".npy input";
        k.files = {{"model.onnx", relu}, {"x.npy", std::move(bytes)}};
        k.args = {m, "--input", "X={dir}/x.npy", "--rounds", "1"};
        k.expect = std::move(expect);
        c.push_back(std::move(k));
    };
    npy_case("npy_dim_too_large", npy("(99999999999999999999999, 4)", 0), {"x.npy", "99999999999999999999999"});
    // No elements, but strides (products of the trailing dims) past int64.
    npy_case("npy_empty_strides_overflow", npy("(0, 800000000, 9999999999, 4)", 0), {"x.npy", "too large"});
    npy_case("npy_header_only_2e29", npy("(536870912,)", 0), {"x.npy", "shorter"});
    npy_case("npy_negative_dim", npy("(-1, 3, 8, 8)", 192), {"x.npy", "-1"});
    npy_case("npy_dim_garbage", npy("(1, 3x8, 8)", 192), {"x.npy", "3x8"});
    npy_case("npy_shape_mismatch", npy("(2, 4)", 8), {"input 'X'", "[2, 4]", "[1, 4]"});
    npy_case("npy_big_endian", npy("(1, 4)", 4, ">f4"), {"x.npy", ">f4"});
    npy_case("npy_truncated", npy("(1, 4)", 4).substr(0, 100), {"x.npy"});
    {
        P t;
        t.set_data_type(P::FLOAT);
        t.set_name("X");
        t.add_dims(std::int64_t{1} << 30);
        hostile_case k;
        k.name = "pb_dims_without_data";
        k.cls = ".pb input";
        k.files = {{"model.onnx", relu}, {"x.pb", t.SerializeAsString()}};
        k.args = {m, "--input", "X={dir}/x.pb", "--rounds", "1"};
        k.expect = {"float_data holds 0 values"};
        c.push_back(k);
        k.name = "pb_not_a_tensor";
        k.files = {{"model.onnx", relu}, {"x.pb", std::string("\xff\xff\xff\xff garbage", 12)}};
        k.expect = {"x.pb", "not a TensorProto"};
        c.push_back(k);
    }

    // --- model structure ----------------------------------------------------------------------
    {
        model x;
        x.input("X", P::FLOAT, {1, 4});
        x.node("Relu", {"X"}, {"Y"}, "relu");
        model_case("no_outputs", "graph structure", x.bytes(), {"no outputs"});
    }
    {
        model x;
        x.input("X", P::FLOAT, {1, 4}).input("X", P::FLOAT, {1, 4}).output("Y");
        x.node("Relu", {"X"}, {"Y"}, "relu");
        model_case("input_listed_twice", "graph structure", x.bytes(), {"'X'", "twice"});
    }
    {
        model x;
        x.input("W", P::FLOAT, {9, 9}).input("X", P::FLOAT, {1, 3, 8, 8}).output("Y");
        x.floats("W", {4, 3, 3, 3});
        x.node("Conv", {"X", "W"}, {"Y"}, "conv");
        model_case("input_initializer_shape_conflict", "graph structure", x.bytes(), {"'W'", "[9, 9]", "[4, 3, 3, 3]"});
    }
    {  // IR >= 4: an initializer listed as an input with the same shape is an input with a default
        model x;
        x.input("X", P::FLOAT, {1, 4}).input("B", P::FLOAT, {1, 4}).output("Y");
        x.floats("B", {1, 4});
        x.node("Add", {"X", "B"}, {"Y"}, "add");
        model_case("input_with_default", "graph structure", x.bytes(), {"partition"}, 0);
    }
    for (std::int64_t v : {std::int64_t{0}, std::int64_t{-3}, std::int64_t{99}, i64_max}) {
        model x(v);
        x.input("X", P::FLOAT, {1, 4}).output("Y");
        x.node("Relu", {"X"}, {"Y"}, "relu");
        model_case("opset_" + (v == i64_max ? std::string("int64_max") : v < 0 ? "minus" + std::to_string(-v) : std::to_string(v)),
                   "opset", x.bytes(), {"opset " + std::to_string(v), "1 to"});
    }

    // --- types ----------------------------------------------------------------------------------
    {
        model x;
        x.input("X", P::FLOAT, {1, 3, 8, 8}).output("Y");
        auto& w = x.initializer("W", P::DOUBLE, {4, 3, 3, 3});
        for (int i = 0; i < 108; ++i) w.add_double_data(0.5);
        x.node("Conv", {"X", "W"}, {"Y"}, "conv");
        model_case("conv_f32_f64_weights", "type constraints", x.bytes(), {"'conv'", "float", "double"});
    }
    {
        model x;
        x.input("X", P::FLOAT, {1, 4}).output("Y");
        x.ints("B", {1, 2, 3, 4});
        x.node("Add", {"X", "B"}, {"Y"}, "add");
        model_case("add_f32_i64", "type constraints", x.bytes(), {"'add'", "float", "int64"});
    }
    model_case("loop_float_condition", "type constraints", loop_model("trip", "cond", P::FLOAT).bytes(), {"'loop'", "condition", "float"});

    // --- shape arithmetic ---------------------------------------------------------------------
    {
        model x;
        x.input("X", P::FLOAT, {1}).output("Y");
        x.ints("S", {std::int64_t{1} << 32, std::int64_t{1} << 32});
        x.node("Expand", {"X", "S"}, {"Y"}, "expand");
        model_case("expand_2e64", "shape arithmetic", x.bytes(), {"'expand'", "overflow"});
    }
    {
        model x;
        x.input("X", P::FLOAT, {1}).output("Y");
        x.ints("S", {std::int64_t{1} << 25, std::int64_t{1} << 25});
        x.node("Expand", {"X", "S"}, {"Y"}, "expand");
        model_case("expand_2e50", "memory budget", x.bytes(), {"'expand'", "memory"});
    }
    {
        model x;
        x.input("X", P::FLOAT, {1}).output("Y");
        x.ints("S", {std::int64_t{1} << 18, std::int64_t{1} << 20});  // 1 TiB of floats
        x.node("Expand", {"X", "S"}, {"Y"}, "expand");
        model_case("expand_1tib", "memory budget", x.bytes(), {"'expand'", "memory"});
    }
    {
        model x;
        x.input("X", P::FLOAT, {1, 4}).output("Y");
        x.ints("pads", {0, 0, 0, std::int64_t{1} << 45});
        x.node("Pad", {"X", "pads"}, {"Y"}, "pad");
        model_case("pad_2e45", "memory budget", x.bytes(), {"'pad'", "memory"});
    }
    {
        model x;
        x.input("X", P::FLOAT, {1, 3, 8, 8}).output("Y");
        x.floats("W", {4, 3, 3, 3});
        auto& n = x.node("Conv", {"X", "W"}, {"Y"}, "conv");
        const std::int64_t p = std::int64_t{1} << 40;
        attr_ints(n, "pads", {p, p, p, p});
        model_case("conv_pads_2e40", "shape arithmetic", x.bytes(), {"'conv'"});
    }
    {
        model x;
        x.input("X", P::FLOAT, {1, 3, 8, 8}).output("Y");
        x.floats("W", {4, 3, 3, 3});
        auto& n = x.node("Conv", {"X", "W"}, {"Y"}, "conv");
        attr_ints(n, "pads", {i64_max, 0, 0, 0});
        model_case("conv_pads_int64_max", "shape arithmetic", x.bytes(), {"'conv'"});
    }
    {
        model x;
        x.input("X", P::FLOAT, {1, 4}).output("Y");
        x.ints("pads", {0, 0, i64_max, i64_max});
        x.node("Pad", {"X", "pads"}, {"Y"}, "pad");
        model_case("pad_int64_max", "shape arithmetic", x.bytes(), {"'pad'", "overflow"});
    }
    {
        model x;
        x.input("X", P::FLOAT, {1, 3, 8, 8}).output("Y");
        x.floats("W", {3, 4, 3, 3});
        auto& n = x.node("ConvTranspose", {"X", "W"}, {"Y"}, "deconv");
        attr_ints(n, "strides", {std::int64_t{1} << 62, 1});
        model_case("conv_transpose_strides_2e62", "shape arithmetic", x.bytes(), {"'deconv'", "overflow"});
    }
    {
        model x;
        x.input("X", P::FLOAT, {1, 3, 8, 8}).output("Y");
        auto& n = x.node("MaxPool", {"X"}, {"Y"}, "pool");
        attr_ints(n, "kernel_shape", {3, 3});
        attr_ints(n, "dilations", {i64_max, 1});
        model_case("pool_dilation_int64_max", "shape arithmetic", x.bytes(), {"'pool'", "overflow"});
    }
    {
        model x;
        x.input("X", P::FLOAT, {4, 4}).output("Y");
        x.ints("starts", {std::numeric_limits<std::int64_t>::min()});
        x.ints("ends", {i64_max});
        x.ints("axes", {1});
        x.ints("steps", {-1});
        x.node("Slice", {"X", "starts", "ends", "axes", "steps"}, {"Y"}, "slice");
        model_case("slice_extreme_backwards", "shape arithmetic", x.bytes(), {"partition"}, 0);
    }
    {
        model x;
        x.input("X", P::FLOAT, {4, 4}).output("Y");
        x.ints("starts", {i64_max, std::numeric_limits<std::int64_t>::min()});
        x.ints("ends", {std::numeric_limits<std::int64_t>::min(), i64_max});
        x.node("Slice", {"X", "starts", "ends"}, {"Y"}, "slice");
        // ONNX clamps: axis 0 takes nothing, the output is [0, 4]: a valid, empty result.
        model_case("slice_extreme", "shape arithmetic", x.bytes(), {"partition"}, 0);
    }
    {
        hostile_case k;
        k.name = "input_shape_2e40";
        k.cls = "memory budget";
        model x;
        x.input("X", P::FLOAT, {std::int64_t{1} << 20, std::int64_t{1} << 20}).output("Y");
        x.node("Relu", {"X"}, {"Y"}, "relu");
        k.files = {{"model.onnx", x.bytes()}};
        k.args = {m, "--rounds", "1"};
        k.expect = {"input 'X'", "memory"};
        c.push_back(k);
    }

    // --- tensors in the model -----------------------------------------------------------------
    {
        model x;
        x.input("X", P::FLOAT, {1}).output("Y");
        x.initializer("B", P::FLOAT, {std::int64_t{1} << 30});
        x.node("Add", {"X", "B"}, {"Y"}, "add");
        model_case("initializer_dims_without_data", "tensor data", x.bytes(), {"'B'", "float_data holds 0"});
    }
    {
        model x;
        x.input("X", P::FLOAT, {1}).output("Y");
        auto& n = x.node("Constant", {}, {"B"}, "const");
        auto* a = n.add_attribute();
        a->set_name("value");
        a->set_type(::onnx::AttributeProto::TENSOR);
        a->mutable_t()->set_data_type(P::FLOAT);
        a->mutable_t()->add_dims(std::int64_t{1} << 30);
        x.node("Add", {"X", "B"}, {"Y"}, "add");
        model_case("constant_dims_without_data", "tensor data", x.bytes(), {"float_data holds 0"});
    }
    {
        model x;
        x.input("X", P::FLOAT, {1}).output("Y");
        auto& t = x.initializer("B", P::FLOAT, {std::int64_t{1} << 40, std::int64_t{1} << 40});
        t.add_float_data(1);
        x.node("Add", {"X", "B"}, {"Y"}, "add");
        model_case("initializer_dims_overflow", "tensor data", x.bytes(), {"'B'", "bytes"});
    }
    {
        model x;
        x.input("X", P::FLOAT, {1}).output("Y");
        (void)x.initializer("B", P::FLOAT, {0, std::int64_t{1} << 40, std::int64_t{1} << 40});
        x.node("Add", {"X", "B"}, {"Y"}, "add");
        model_case("initializer_empty_strides_overflow", "tensor data", x.bytes(), {"'B'", "overflows int64"});
    }
    auto external = [&](std::string name, std::string location, std::string offset, std::vector<file> extra,
                        std::vector<std::string> expect, int code = 2) {
        model x;
        x.input("X", P::FLOAT, {4}).output("Y");
        auto& t = x.initializer("B", P::FLOAT, {4});
        t.set_data_location(P::EXTERNAL);
        auto* kv = t.add_external_data();
        kv->set_key("location");
        kv->set_value(location);
        if (!offset.empty()) {
            kv = t.add_external_data();
            kv->set_key("offset");
            kv->set_value(offset);
        }
        x.node("Add", {"X", "B"}, {"Y"}, "add");
        hostile_case k;
        k.name = std::move(name);
        k.cls = "external data";
        k.files = std::move(extra);
        k.files.push_back({"model.onnx", x.bytes()});
        k.args = {m, "--rounds", "1"};
        k.expect = std::move(expect);
        k.exit_code = code;
        c.push_back(std::move(k));
    };
    const std::string weights(64, '\0');
    external("external_fifo", "w.bin", "", {{"w.bin", "", file::fifo}}, {"'B'", "w.bin", "not a regular file"});
    external("external_offset_garbage", "w.bin", "12abc", {{"w.bin", weights}}, {"'B'", "12abc"});
    external("external_offset_negative", "w.bin", "-1", {{"w.bin", weights}}, {"'B'", "-1"});
    external("external_path_escape", "../../../../etc/passwd", "", {}, {"'B'", "outside the model's directory"});  // CVE-2022-25882
    external("external_absolute", "/etc/passwd", "", {}, {"'B'", "outside the model's directory"});
    external("external_symlink_out", "link.bin", "", {{"link.bin", "/etc/passwd", file::symlink}},
             {"'B'", "outside the model's directory"});  // CVE-2024-27318
    external("external_directory", ".", "", {}, {"'B'", "not a regular file"});
    external("external_short", "w.bin", "60", {{"w.bin", weights}}, {"'B'", "shorter"});
    external("external_ok", "w.bin", "16", {{"w.bin", weights}}, {"partition"}, 0);
    {
        // A bare relative model path, run from the model's own folder: its external data is found.
        hostile_case k = c.back();
        k.name = "external_from_model_dir";
        k.args = {"model.onnx", "--rounds", "1"};
        k.in_dir = true;
        c.push_back(k);
    }

    // --- loops, nesting, size of the graph ----------------------------------------------------
    {
        hostile_case k;
        k.name = "loop_int64_max_trips";
        k.cls = "loops";
        k.files = {{"model.onnx", loop_model("trip", "cond").bytes()}};
        k.args = {m, "--rounds", "1"};
        k.expect = {"'loop'", "--max-loop-iterations"};
        k.seconds = 300;  // 100,000 iterations: 2 s at -O2, longer under the sanitizers
        c.push_back(k);
        k.name = "loop_no_bound";
        k.files = {{"model.onnx", loop_model("", "").bytes()}};
        c.push_back(k);
        k.name = "loop_bound_given";
        k.files = {{"model.onnx", loop_model("trip", "cond").bytes()}};
        k.args = {m, "--rounds", "1", "--max-loop-iterations", "1000"};
        k.expect = {"'loop'", "1000 iterations"};
        c.push_back(k);
    }
    model_case("if_nested_40", "nesting", nested_if(40).bytes(), {"partition"}, 0);
    model_case("if_nested_200", "nesting", nested_if(200).bytes(), {"nested deeper than"});
    {
        // 100,000 distinct producers (initializers) and X: memory linear in the input count.
        model x;
        x.input("X", P::FLOAT, {1}).output("Y");
        std::vector<std::string> ins{"X"};
        for (int i = 0; i < 100000; ++i) {
            ins.push_back("c" + std::to_string(i));
            x.floats(ins.back(), {1}, static_cast<float>(i % 7));
        }
        x.node("Sum", ins, {"Y"}, "sum");
        hostile_case k;
        k.name = "sum_100000_inputs";
        k.cls = "graph size";
        k.files = {{"model.onnx", x.bytes()}};
        k.args = {m, "--rounds", "1", "--backend", "none"};
        k.exit_code = 0;
        k.expect = {"partition"};
        c.push_back(k);
    }
    {
        model x;
        x.input("X", P::FLOAT, {1, 4}).output("Y");
        x.node("Relu", {"X"}, {"Y"}, "relu");
        std::string bytes = x.bytes();
        model_case("truncated_protobuf", "protobuf", bytes.substr(0, bytes.size() / 2), {"does not parse"});
        model_case("empty_file", "protobuf", "", {"no graph"});
    }
    return c;
}

// ---------------------------------------------------------------------------------------------
// Running a case.

struct outcome {
    int exit_code = -1;
    int signal = 0;
    bool timed_out = false;
    long max_rss_kb = 0;
    std::string output;
};

outcome run(const std::string& exe, const std::vector<std::string>& args, const fs::path& dir, bool in_dir, int seconds) {
    const fs::path log = dir / "output.txt";
    std::vector<std::string> owned{exe};
    for (auto a : args) {
        for (auto at = a.find("{dir}"); at != std::string::npos; at = a.find("{dir}")) a.replace(at, 5, dir.string());
        owned.push_back(a);
    }
    std::vector<char*> argv;
    for (auto& a : owned) argv.push_back(a.data());
    argv.push_back(nullptr);
    const pid_t pid = fork();
    if (pid == 0) {
        const int fd = ::open(log.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
        ::dup2(fd, 1);
        ::dup2(fd, 2);
        if (in_dir && ::chdir(dir.c_str()) != 0) _exit(127);
        ::execv(exe.c_str(), argv.data());
        _exit(127);
    }
    outcome o;
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(seconds);
    int status = 0;
    rusage ru{};
    for (;;) {
        const pid_t r = ::wait4(pid, &status, WNOHANG, &ru);
        if (r == pid) break;
        if (std::chrono::steady_clock::now() > deadline) {
            ::kill(pid, SIGKILL);
            ::wait4(pid, &status, 0, &ru);
            o.timed_out = true;
            break;
        }
        std::this_thread::sleep_for(std::chrono::milliseconds(20));
    }
    if (WIFEXITED(status)) o.exit_code = WEXITSTATUS(status);
    if (WIFSIGNALED(status)) o.signal = WTERMSIG(status);
    o.max_rss_kb = ru.ru_maxrss;
    std::ifstream in(log);
    std::stringstream ss;
    ss << in.rdbuf();
    o.output = ss.str();
    return o;
}

void write_files(const hostile_case& k, const fs::path& dir) {
    fs::remove_all(dir);
    fs::create_directories(dir);
    for (const auto& f : k.files) {
        const fs::path p = dir / f.name;
        if (f.kind == file::fifo) {
            if (::mkfifo(p.c_str(), 0644) != 0) throw std::runtime_error("mkfifo " + p.string());
        } else if (f.kind == file::symlink) {
            fs::create_symlink(f.bytes, p);
        } else {
            std::ofstream(p, std::ios::binary) << f.bytes;
        }
    }
}

}  // namespace

int main(int argc, char** argv) {
    if (argc < 3) {
        std::fprintf(stderr, "usage: hostile <sgmatch-run> <work dir> [--no-rss] [--loop-limit N] [--only NAME] [--write-corpus DIR]\n");
        return 2;
    }
    std::setvbuf(stdout, nullptr, _IOLBF, 0);
    const std::string exe = fs::absolute(argv[1]).string();
    const fs::path work = argv[2];
    bool rss = true;
    std::string only, corpus, loop_limit;
    for (int i = 3; i < argc; ++i) {
        const std::string a = argv[i];
        if (a == "--no-rss") rss = false;
        else if (a == "--loop-limit" && i + 1 < argc) loop_limit = argv[++i];
        else if (a == "--only" && i + 1 < argc) only = argv[++i];
        else if (a == "--write-corpus" && i + 1 < argc) corpus = argv[++i];
        else {
            std::fprintf(stderr, "hostile: unknown argument %s\n", a.c_str());
            return 2;
        }
    }
    auto all = cases();
    if (!loop_limit.empty())  // the unbounded loops stopped at N iterations, not the default's 100,000
        for (auto& k : all)
            if (k.cls == "loops" && std::find(k.args.begin(), k.args.end(), "--max-loop-iterations") == k.args.end()) {
                k.args.insert(k.args.end(), {"--max-loop-iterations", loop_limit});
                k.expect.push_back(loop_limit + " iterations");
            }
    if (!corpus.empty()) {  // the fuzz targets' seeds
        const fs::path runs = fs::path(corpus).parent_path() / "run_inputs";
        fs::create_directories(corpus);
        fs::create_directories(runs);
        for (const auto& k : all) {
            for (const auto& f : k.files) {
                if (f.kind != file::regular || f.bytes.size() > (64 << 10)) continue;  // small seeds only
                const std::string ext = fs::path(f.name).extension().string();
                if (f.name == "model.onnx") std::ofstream(fs::path(corpus) / ("hostile-" + k.name + ".onnx"), std::ios::binary) << f.bytes;
                else if (ext == ".npy" || ext == ".pb")  // run_inputs: 'N' then a .npy file, 'P' then a .pb file
                    std::ofstream(runs / ("hostile-" + k.name + "-" + f.name), std::ios::binary) << (ext == ".npy" ? "N" : "P") << f.bytes;
            }
            std::string joined = "A";  // run_inputs: "A" then NUL-separated arguments
            for (const auto& a : k.args) joined += a + '\0';
            std::ofstream(runs / ("hostile-" + k.name + ".args"), std::ios::binary) << joined;
        }
        return 0;
    }
    int passed = 0, failed = 0;
    long largest_rss = 0;
    std::string largest;
    std::map<std::string, std::pair<int, int>> per_class;
    for (const auto& k : all) {
        if (!only.empty() && k.name != only) continue;
        const fs::path dir = work / k.name;
        write_files(k, dir);
        const auto t0 = std::chrono::steady_clock::now();
        const outcome o = run(exe, k.args, dir, k.in_dir, k.seconds);
        const double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
        std::vector<std::string> why;
        if (o.timed_out) why.push_back("did not finish in " + std::to_string(k.seconds) + " s");
        else if (o.signal) why.push_back("killed by signal " + std::to_string(o.signal));
        else if (o.exit_code != k.exit_code)
            why.push_back("exit " + std::to_string(o.exit_code) + ", expected " + std::to_string(k.exit_code));
        for (const auto& e : k.expect)
            if (o.output.find(e) == std::string::npos) why.push_back("no '" + e + "' in the output");
        if (o.output.find("runtime error:") != std::string::npos || o.output.find("AddressSanitizer") != std::string::npos)
            why.push_back("a sanitizer report");
        const long rss_limit_kb = 200 * 1024;
        if (rss && o.max_rss_kb > rss_limit_kb)
            why.push_back("peak RSS " + std::to_string(o.max_rss_kb / 1024) + " MB, over 200 MB");
        if (k.exit_code != 0 && o.max_rss_kb > largest_rss) {
            largest_rss = o.max_rss_kb;
            largest = k.name;
        }
        auto& pc = per_class[k.cls];
        if (why.empty()) {
            ++passed;
            ++pc.first;
            std::printf("ok    %-36s exit %d, %5.2f s, peak RSS %ld MB\n", k.name.c_str(), o.exit_code, s, o.max_rss_kb / 1024);
        } else {
            ++failed;
            ++pc.second;
            std::printf("FAIL  %-36s", k.name.c_str());
            for (const auto& w : why) std::printf(" [%s]", w.c_str());
            std::string out = o.output.substr(0, 600);
            std::printf("\n      output: %s\n", out.c_str());
        }
    }
    std::printf("\nper class (passed/failed):\n");
    for (const auto& [cls, n] : per_class) std::printf("  %-20s %d/%d\n", cls.c_str(), n.first, n.second);
    std::printf("largest peak RSS of a refused case: %ld MB (%s)\n", largest_rss / 1024, largest.c_str());
    std::printf("%d passed, %d failed\n", passed, failed);
    return failed == 0 ? 0 : 1;
}
