// onnx::save: the built-in graph written back as ONNX. libonnx's checker accepts it; a model
// loaded, saved and loaded again is the same graph and computes the same outputs; a partitioned
// graph shows its fused nodes in their own domain with their pattern and member ops.
#include <doctest/doctest.h>

#include <map>
#include <onnx/checker.h>

#include "sgmatch/exec/executor.hpp"
#include "sgmatch/onednn/backend.hpp"
#include "sgmatch/onnx/load.hpp"
#include "sgmatch/onnx/save.hpp"
#include "sgmatch/reference/npy.hpp"

using namespace sgmatch;
namespace sx = sgmatch::onnx;

namespace {

std::string model_path(const std::string& file) { return std::string(SGMATCH_MODELS_DIR) + "/" + file; }

std::map<std::string, std::size_t> op_counts(const graph& g) {
    std::map<std::string, std::size_t> c;
    for (node_id n : g.nodes()) ++c[g.kind(n) == node_kind::op ? std::string(g.op_name(n)) : g.kind(n) == node_kind::input ? "(input)" : "(constant)"];
    return c;
}

}  // namespace

TEST_CASE("onnx::save: checker-valid, and load -> save -> load gives the same graph computing the same outputs") {
    for (const std::string stem : {"resnet_tiny", "mobile_tiny", "dense_tiny", "shuffle_tiny", "encoder_tiny"}) {
        for (const std::string form : {".onnx", ".preserve.onnx"}) {
            CAPTURE(stem + form);
            const sx::model a = sx::load(model_path(stem + form));
            sx::save_options o;
            o.opset = a.opset;
            ::onnx::ModelProto proto = sx::to_proto(a.graph, o);
            CHECK_NOTHROW(::onnx::checker::check_model(proto));
            const std::string bytes = sx::save_bytes(a.graph, o);
            sx::load_options same;
            same.cleanup = false;  // what was saved is already clean
            const sx::model b = sx::load_bytes(bytes.data(), bytes.size(), same);
            CHECK(op_counts(b.graph) == op_counts(a.graph));
            CHECK(b.graph.graph_output_count() == a.graph.graph_output_count());
            CHECK(b.opset == a.opset);
            // Constants keep their element types and bytes.
            std::map<std::string, std::string> ca, cb;
            for (const auto* m : {&a, &b})
                for (node_id n : m->graph.nodes())
                    if (const auto c = m->graph.constant(n); c && c->data)
                        (m == &a ? ca : cb)[std::string(m->graph.name(n))] =
                            std::string(name_of(c->type)) + ":" +
                            std::string(static_cast<const char*>(c->data), static_cast<std::size_t>(c->element_count()) * size_of(c->type));
            CHECK(ca == cb);
            const auto x = reference::read_npy(model_path(stem + ".input.npy"));
            const auto ya = exec::executor(a.graph)({{a.inputs.at(0), x}});
            const auto yb = exec::executor(b.graph)({{b.inputs.at(0), x}});
            REQUIRE(ya.size() == yb.size());
            CHECK(ya[0] == yb[0]);
        }
    }
}

TEST_CASE("onnx::save: a partitioned graph shows each fused node in its domain, with its pattern and member ops") {
    onednn::register_backend<graph>();
    sx::model m = sx::load(model_path("resnet_tiny.preserve.onnx"));
    (void)apply_backend(m.graph, "onednn");
    sx::save_options o;
    o.opset = m.opset;
    o.fused = onednn::describe_fused;
    const ::onnx::ModelProto proto = sx::to_proto(m.graph, o);
    CHECK_NOTHROW(::onnx::checker::check_model(proto));
    bool domain_imported = false;
    for (const auto& op : proto.opset_import()) domain_imported = domain_imported || op.domain() == "ai.sgmatch";
    CHECK(domain_imported);
    std::size_t fused = 0, with_bn = 0;
    for (const auto& n : proto.graph().node()) {
        if (n.domain() != "ai.sgmatch") continue;
        ++fused;
        std::string pattern;
        std::vector<std::string> members;
        for (const auto& a : n.attribute()) {
            if (a.name() == "pattern") pattern = a.s();
            if (a.name() == "members") members.assign(a.strings().begin(), a.strings().end());
        }
        REQUIRE_FALSE(members.empty());
        CHECK((members[0] == "Conv" || members[0] == "Gemm"));
        CHECK(pattern.find(members[0] == "Conv" ? "Conv" : "Gemm") != std::string::npos);
        with_bn += members.size() > 1 && members[1] == "BatchNormalization";
    }
    CHECK(fused == 7);
    CHECK(with_bn == 6);  // every conv with its BatchNorm
    // The saved partition is for looking at: loading it back says the fused domain is not ONNX's.
    const std::string bytes = sx::save_bytes(m.graph, o);
    CHECK_THROWS_WITH_AS(sx::load_bytes(bytes.data(), bytes.size()), doctest::Contains("domain 'ai.sgmatch' is not supported"),
                         sx::load_error);
}

TEST_CASE("onnx::save: a Loop whose body reads enclosing values is written with outer-scope names, and loads back the same") {
    // Loop(M, cond, acc0) with body: acc + x * float(i), cond = i < k, reading x and k from the
    // enclosing graph; an If inside the body picks the step's sign from the enclosing `flip`.
    graph neg;
    {
        const node_id s = neg.add_input("step");
        neg.mark_output(neg.add_op("Neg", "minus", {s}));
    }
    graph pos;
    {
        const node_id s = pos.add_input("step");
        pos.mark_output(pos.add_op("Identity", "plus", {s}));
    }
    graph body;
    {
        const node_id i = body.add_input("i", tensor_type::of(dtype::i64, {}));
        body.add_input("cond_in", tensor_type::of(dtype::boolean, {}));
        const node_id acc = body.add_input("acc", tensor_type{dtype::f32, {3}});
        const node_id x = body.add_input("x", tensor_type{dtype::f32, {3}});
        const node_id k = body.add_input("k", tensor_type::of(dtype::i64, {}));
        const node_id flip = body.add_input("flip", tensor_type::of(dtype::boolean, {}));
        const node_id fi = body.add_op("Cast", "fi", {i});
        body.set_attr(fi, "to", attribute(std::int64_t{1}));
        const node_id step = body.add_op("Mul", "step", {x, fi});
        const node_id sign = body.add_op("If", "sign", {flip, step});
        body.set_attr(sign, "then_branch", attribute(graph_body{std::make_shared<const graph>(std::move(neg)), 0}));
        body.set_attr(sign, "else_branch", attribute(graph_body{std::make_shared<const graph>(std::move(pos)), 0}));
        const node_id next = body.add_op("Add", "next", {acc, sign});
        body.mark_output(body.add_op("Less", "go", {i, k}));
        body.mark_output(next);
        body.mark_output(body.add_op("Identity", "each", {next}));
    }
    graph g;
    const node_id m = g.add_input("M", tensor_type::of(dtype::i64, {}));
    const node_id cond = g.add_input("cond", tensor_type::of(dtype::boolean, {}));
    const node_id acc0 = g.add_input("acc0", tensor_type{dtype::f32, {3}});
    const node_id x = g.add_input("x", tensor_type{dtype::f32, {3}});
    const node_id k = g.add_input("k", tensor_type::of(dtype::i64, {}));
    const node_id flip = g.add_input("flip", tensor_type::of(dtype::boolean, {}));
    const node_id loop = g.add_op("Loop", "loop", {m, cond, acc0, x, k, flip}, {}, 2);
    g.set_attr(loop, "body", attribute(graph_body{std::make_shared<const graph>(std::move(body)), 3}));
    g.mark_output({loop, 0});
    g.mark_output({loop, 1});
    // The outputs' types, as a loaded model declares them (ONNX's checker wants graph outputs'
    // shapes: at least their ranks).
    g.set_type({loop, 0}, tensor_type{dtype::f32, {3}});
    g.set_type({loop, 1}, tensor_type{dtype::f32, {-1, 3}});

    sx::save_options o;
    o.opset = 13;
    ::onnx::ModelProto proto = sx::to_proto(g, o);
    CHECK_NOTHROW(::onnx::checker::check_model(proto));
    // The body reads x, k and flip by their outer names: the Loop node has 3 inputs, the body 3.
    const auto& node = proto.graph().node(0);
    CHECK(node.op_type() == "Loop");
    CHECK(node.input_size() == 3);
    REQUIRE(node.attribute_size() == 1);
    CHECK(node.attribute(0).g().input_size() == 3);
    const std::string bytes = sx::save_bytes(g, o);
    const sx::model back = sx::load_bytes(bytes.data(), bytes.size());
    auto flag = [](bool b) { return exec::value::of<bool>({}, {b}); };
    for (const bool f : {false, true}) {
        const std::map<std::string, exec::value> in{{"M", exec::value::of<std::int64_t>({}, {4})},
                                                    {"cond", flag(true)},
                                                    {"acc0", exec::value::of<float>({3}, {1, 2, 3})},
                                                    {"x", exec::value::of<float>({3}, {0.5f, -1, 2})},
                                                    {"k", exec::value::of<std::int64_t>({}, {2})},
                                                    {"flip", flag(f)}};
        const auto want = exec::executor(g).run(in);
        const auto got = exec::executor(back.graph).run(in);
        REQUIRE(want.size() == 2);
        REQUIRE(got.size() == 2);
        // 4 trips allowed, the condition (i < 2) stops it after i = 2: steps 0, 1, 2.
        const float s = f ? -1.0f : 1.0f;
        const std::vector<float> acc{1 + s * 0.5f * 3, 2 + s * -1.0f * 3, 3 + s * 2.0f * 3};
        CHECK(std::vector<float>(want[0].as<float>(), want[0].as<float>() + 3) == acc);
        CHECK(want[1].dims() == exec::shape{3, 3});
        for (std::size_t p = 0; p < 2; ++p) {
            REQUIRE(got[p].dims() == want[p].dims());
            CHECK(std::vector<float>(got[p].as<float>(), got[p].as<float>() + got[p].size()) ==
                  std::vector<float>(want[p].as<float>(), want[p].as<float>() + want[p].size()));
        }
    }
}

TEST_CASE("onnx::save: optionals, as graph inputs and outputs and Optional's type attribute, load back the same") {
    graph g;
    tensor_type opt_seq;
    opt_seq.type = dtype::f32;
    opt_seq.sequence = opt_seq.optional = true;
    const node_id x = g.add_input("x", opt_seq);
    const node_id has = g.add_op("OptionalHasElement", "has", {x});
    g.set_type({has, 0}, tensor_type::of(dtype::boolean, {}));
    const node_id empty = g.add_op("Optional", "empty", {});
    g.set_attr(empty, "type", attribute(std::string("tensor(int64)")));
    tensor_type opt_i64 = tensor_type::of(dtype::i64, {2});
    opt_i64.optional = true;
    g.set_type({empty, 0}, opt_i64);
    const node_id same = g.add_op("Identity", "same", {x});
    g.set_type({same, 0}, opt_seq);
    g.mark_output(has);
    g.mark_output(empty);
    g.mark_output(same);
    sx::save_options o;
    o.opset = 16;
    const ::onnx::ModelProto proto = sx::to_proto(g, o);
    CHECK_NOTHROW(::onnx::checker::check_model(proto));
    REQUIRE(proto.graph().input_size() == 1);
    CHECK(proto.graph().input(0).type().optional_type().elem_type().sequence_type().elem_type().tensor_type().elem_type() ==
          ::onnx::TensorProto::FLOAT);
    const ::onnx::NodeProto& opt = proto.graph().node(1);
    REQUIRE(opt.op_type() == "Optional");
    REQUIRE(opt.attribute_size() == 1);
    CHECK(opt.attribute(0).type() == ::onnx::AttributeProto::TYPE_PROTO);
    CHECK(opt.attribute(0).tp().tensor_type().elem_type() == ::onnx::TensorProto::INT64);
    const std::string bytes = sx::save_bytes(g, o);
    const sx::model back = sx::load_bytes(bytes.data(), bytes.size());
    const exec::executor run(back.graph);
    const auto with = run.run({{"x", exec::value::sequence(dtype::f32, {exec::value::of<float>({1}, {2.5f})})}});
    REQUIRE(with.size() == 3);
    CHECK(with[0].as<bool>()[0]);
    CHECK(with[1].is_none());
    CHECK(with[1].type() == dtype::i64);
    REQUIRE(with[2].is_sequence());
    CHECK(with[2].items().at(0).as<float>()[0] == 2.5f);
    const auto without = run.run({{"x", exec::value::none(dtype::f32, true)}});
    CHECK_FALSE(without[0].as<bool>()[0]);
    CHECK(without[2].is_none());
    CHECK(without[2].none_of_sequence());
    std::size_t attrs = 0;
    for (node_id n : back.graph.nodes())
        if (back.graph.kind(n) == node_kind::op && back.graph.op_name(n) == "Optional") {
            CHECK(back.graph.attr(n, "type")->as_string() == std::string_view("tensor(int64)"));
            ++attrs;
        }
    CHECK(attrs == 1);
}
