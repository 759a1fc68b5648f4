// Every attribute ONNX gives an op in the vocabulary (any opset up to libonnx's), read from
// libonnx's own schema registry, is in the op's description: implemented, or refused by name.
// An attribute the description does not know would be refused as unknown too, but a listed one
// gets its meaning, default and valid values written down.
#include <doctest/doctest.h>

#include <onnx/defs/schema.h>

#include <set>
#include <string>

#include "sgmatch/ops/table.hpp"

using namespace sgmatch;

TEST_CASE("every attribute of libonnx's schemas for the vocabulary's ops is described") {
    std::size_t checked_ops = 0, checked_attrs = 0;
    std::set<std::string> not_onnx;
    for (const ops::op_schema* s : ops::all_schemas()) {
        // The description's name that is an ONNX op (BatchNorm is BatchNormalization there).
        std::string onnx_name;
        for (std::size_t i = 0; i < s->name_count && onnx_name.empty(); ++i)
            if (::onnx::OpSchemaRegistry::Schema(std::string(s->names[i]), "") != nullptr) onnx_name = s->names[i];
        if (onnx_name.empty()) {
            not_onnx.insert(std::string(s->name()));
            continue;
        }
        ++checked_ops;
        for (int version = 1; version <= 17; ++version) {
            const ::onnx::OpSchema* o = ::onnx::OpSchemaRegistry::Schema(onnx_name, version, "");
            if (o == nullptr) continue;
            for (const auto& entry : o->attributes()) {
                const std::string& name = entry.first;
                CAPTURE(onnx_name);
                CAPTURE(version);
                CAPTURE(name);
                CHECK(s->attr(name) != nullptr);
                ++checked_attrs;
            }
        }
    }
    // The ops of the vocabulary that ONNX (1.12) does not have; everything else was checked.
    std::string missing;
    for (const auto& n : not_onnx) missing += n + " ";
    CHECK(missing == "Gelu Mish QLinearAdd Square Swish ");  // QLinearAdd: ONNX Runtime's (com.microsoft)
    CHECK(checked_ops + not_onnx.size() == ops::all_schemas().size());
    MESSAGE(checked_ops << " ops, " << checked_attrs << " attribute versions checked");
}
