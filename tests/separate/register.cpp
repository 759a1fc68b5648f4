// The ready-made backend registered and applied from a translation unit built with
// SGMATCH_SEPARATE_COMPILATION: it includes onednn/register.hpp, which only declares the backend;
// compiled.cpp compiles it (onednn/src.hpp). CMake builds this file as an object of its own so
// that a second test (separate_light) can check that it emits none of the backend's code.
#include <doctest/doctest.h>

#include <map>
#include <string>

#include "sgmatch/graph/builders.hpp"
#include "sgmatch/graph/graph.hpp"
#include "sgmatch/onednn/register.hpp"
#include "sgmatch/sgmatch.hpp"

#if !defined(SGMATCH_SEPARATE_COMPILATION)
#error "tests/separate/register.cpp is built with SGMATCH_SEPARATE_COMPILATION"
#endif

namespace {

std::map<std::string, std::size_t> op_counts(const sgmatch::graph& g) {
    std::map<std::string, std::size_t> n;
    for (auto id : g.nodes())  // inputs and constants count under their kind
        ++n[std::string(g.op_name(id))];
    return n;
}

}  // namespace

TEST_CASE("separate compilation: a light translation unit registers and applies the compiled backend") {
    using namespace sgmatch;
    CHECK(onednn::register_backend<graph>());
    CHECK(onednn::register_backend<graph>());  // idempotent
    const auto registered = backend_registry<graph>::instance().find("onednn");
    REQUIRE(static_cast<bool>(registered));

    std::vector<std::string> names;
    for (const auto& p : registered->properties()) names.push_back(p.name());
    CHECK(names == std::vector<std::string>{"onednn.conv1x1_depthwise", "onednn.conv_post_ops",
                                            "onednn.conv_transpose_post_ops", "onednn.attention",
                                            "onednn.matmul_post_ops", "onednn.concat_batch_norm", "onednn.batch_norm_relu",
                                            "onednn.layer_norm", "onednn.channel_shuffle"});

    // ResNet-50 (at 64x64): every Conv ends up in a fused conv with its BatchNorm, and every Relu
    // and residual Add is taken as a post-op.
    graph g = build::resnet50(1, 64, /*data_seed=*/1);
    const auto before = op_counts(g);
    REQUIRE(before.at("Conv") == 53);
    std::string declines;
    for (const auto& r : apply_backend(g, "onednn"))
        for (const auto& [reason, n] : r.check_reasons) declines += r.property + ": " + reason + "\n";
    INFO(declines);
    const auto after = op_counts(g);
    CHECK(after.count("Conv") == 0);
    CHECK(after.count("BatchNormalization") == 0);
    CHECK(after.count("Relu") == 0);
    CHECK(after.count("Add") == 0);
    CHECK(after.at("onednn.fused_conv") == before.at("Conv"));
}
