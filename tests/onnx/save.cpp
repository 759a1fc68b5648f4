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
