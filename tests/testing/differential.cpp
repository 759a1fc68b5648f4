// sgmatch::testing: differential tests synthesized from the ready-made backend's pattern types
// (every property fused vs the reference kernels, every option of every choice point drawn),
// random graphs of the generators' ops through the whole backend, and the generator itself:
// what it covers, that a wrong rewrite is caught with a reproducible failing graph, and that it
// draws only forms the ONNX conformance cases back.
// Presets: test (10k random graphs, 2k through regions), asan (200, 40), gcc20 and clang17 (1,000, 200),
// clang20 (as test). More on demand:
// SGMATCH_DIFFERENTIAL_GRAPHS=n and SGMATCH_DIFFERENTIAL_SEED=s.
#include <doctest/doctest.h>

#include <cstdlib>
#include <fstream>
#include <set>
#include <sstream>
#include <string>

#include "sgmatch/exec/subgraph.hpp"
#include "sgmatch/onednn/backend.hpp"
#include "sgmatch/onednn/threads.hpp"
#include "sgmatch/sgmatch.hpp"
#include "sgmatch/testing/differential.hpp"
#include "support/numeric.hpp"

using namespace sgmatch;
using namespace sgmatch::ops;

namespace {

// The graphs are tiny: one oneDNN thread each. Two test processes at once (ctest -j2) with two
// OpenMP threads each on two cores made these tests 20-50x slower.
struct one_thread {
    onednn::thread_cap cap{1};
};

const property<graph>& property_named(const backend<graph>& b, const std::string& name) {
    for (const auto& p : b.properties())
        if (p.name() == name) return p;
    throw std::runtime_error("no property " + name);
}

template <class P>
testing::differential_report check_property(const P& pattern, const std::string& name, bool expect_declines = false) {
    static const backend<graph> b = onednn::make_backend<graph>();
    const property<graph>& prop = property_named(b, name);
    testing::differential_options opt;
    opt.expect_declines = expect_declines;
    opt.extra_graphs = test::sanitized() ? 4 : 24;
    const auto r = testing::differential(pattern, [&](graph& g) { return apply_property(g, prop); }, opt);
    MESSAGE(name << ": " << r.summary());
    for (const auto& [why, n] : r.declines) MESSAGE("  declined " << n << "x: " << why);
    if (!r.ok()) MESSAGE(r.first_failure);
    return r;
}

}  // namespace

TEST_CASE("every property of the onednn backend, on graphs synthesized from its pattern: fused == reference") {
    const one_thread threads;
    SUBCASE("conv_post_ops") {
        const auto r = check_property(onednn::conv_post_ops, "onednn.conv_post_ops");
        CHECK(r.ok());
        CHECK(r.unmatched == 0);
        CHECK(r.uncovered.empty());
        CHECK(r.fused > r.graphs / 2);
    }
    SUBCASE("conv_transpose_post_ops") {
        const auto r = check_property(onednn::conv_transpose_post_ops, "onednn.conv_transpose_post_ops");
        CHECK(r.ok());
        CHECK(r.uncovered.empty());
        CHECK(r.fused > r.graphs / 2);
    }
    SUBCASE("matmul_post_ops") {
        const auto r = check_property(onednn::matmul_post_ops, "onednn.matmul_post_ops");
        CHECK(r.ok());
        CHECK(r.uncovered.empty());
        CHECK(r.fused > r.graphs / 2);
    }
    SUBCASE("conv1x1_depthwise") {
        // The backend's check keeps this fusion only where it pays, which drawn shapes rarely do.
        const auto r = check_property(onednn::conv1x1_depthwise, "onednn.conv1x1_depthwise", /*expect_declines=*/true);
        CHECK(r.ok());
        CHECK(r.uncovered.empty());
        CHECK(r.rejected_predicate > 0);  // 1x1 and depthwise 3x3: drawn until the predicates hold
        CHECK(r.fused + r.declined == r.graphs);
    }
    SUBCASE("conv1x1_depthwise without the check that it pays: the depthwise post-op itself") {
        // The backend keeps this fusion only where oneDNN runs it as one jit kernel (batch 8 at
        // 28x28 and larger), which the drawn shapes never are; the plain property fuses every
        // match, so that the fused kernel with its depthwise post-op is compared too.
        const auto prop = onednn::make_fused_property<graph>("conv1x1_depthwise", onednn::conv1x1_depthwise);
        testing::differential_options opt;
        opt.extra_graphs = test::sanitized() ? 4 : 24;
        const auto r = testing::differential(onednn::conv1x1_depthwise, [&](graph& g) { return apply_property(g, prop); }, opt);
        MESSAGE("conv1x1_depthwise, fused wherever it lowers: " << r.summary());
        for (const auto& [why, n] : r.declines) MESSAGE("  declined " << n << "x: " << why);
        if (!r.ok()) MESSAGE(r.first_failure);
        CHECK(r.ok());
        CHECK(r.uncovered.empty());
        CHECK(r.fused > 0);
    }
    SUBCASE("batch_norm_relu") {
        const auto r = check_property(onednn::batch_norm_relu, "onednn.batch_norm_relu");
        CHECK(r.ok());
        CHECK(r.fused == r.graphs);
    }
    SUBCASE("layer_norm") {
        const auto r = check_property(onednn::layer_norm_written_out, "onednn.layer_norm");
        CHECK(r.ok());
        CHECK(r.uncovered.empty());
        CHECK(r.fused > 0);
    }
}

TEST_CASE("random graphs of the generators' ops through the whole onednn backend: rewritten == reference") {
    const one_thread threads;
    const char* env = std::getenv("SGMATCH_DIFFERENTIAL_GRAPHS");
    const std::size_t n = env ? std::strtoul(env, nullptr, 10) : (test::sanitized() ? 200 : SGMATCH_DIFFERENTIAL_DEFAULT);
    const backend<graph> b = onednn::make_backend<graph>();
    testing::differential_options opt;
    const char* seed = std::getenv("SGMATCH_DIFFERENTIAL_SEED");
    opt.seed = seed ? std::strtoull(seed, nullptr, 10) : 7;
    const auto r = testing::random_graphs([&](graph& g) { return apply_backend(g, b); }, n, 6, opt);
    MESSAGE(r.summary());
    if (!r.ok()) MESSAGE(r.first_failure);
    CHECK(r.ok());
    CHECK(r.graphs == n);
    CHECK(r.fused > n / 4);
}

TEST_CASE("random graphs through the capability-region backend: each region one node running the fusions inside == reference") {
    const one_thread threads;
    const char* env = std::getenv("SGMATCH_DIFFERENTIAL_GRAPHS");
    const std::size_t n = (env ? std::strtoul(env, nullptr, 10) : (test::sanitized() ? 200 : SGMATCH_DIFFERENTIAL_DEFAULT)) / 5;
    exec::register_region_backend<graph>();
    testing::differential_options opt;
    const char* seed = std::getenv("SGMATCH_DIFFERENTIAL_SEED");
    opt.seed = seed ? std::strtoull(seed, nullptr, 10) + 1 : 8;
    const auto r = testing::random_graphs([&](graph& g) { return apply_backend(g, "onednn.regions"); }, n, 6, opt);
    MESSAGE(r.summary());
    if (!r.ok()) MESSAGE(r.first_failure);
    CHECK(r.ok());
    CHECK(r.graphs == n);
    CHECK(r.fused > n / 2);  // a region of two or more supported ops in most graphs
}

TEST_CASE("the synthesis draws every option of every choice point, and meets predicates by drawing again") {
    const one_thread threads;
    const auto p = op<Conv>().where(onednn::conv_1x1{}) >> optional(op<BatchNorm>()) >> repeat<1, 2>(op<Relu, Sigmoid>() | op<Sub>(any()));
    const auto r = testing::differential(p, [&](graph& g) { return apply_property(g, onednn::make_fused_property<graph>("p", p)); });
    MESSAGE(r.summary());
    CHECK(r.ok());
    // optional: 2, repeat counts: 2, the alternative: 2, Relu|Sigmoid: 2, Sub's chain input: 2.
    CHECK(r.options == 10);
    CHECK(r.covered == 10);
    CHECK(r.rejected_predicate > 0);
    CHECK(r.graphs >= 1 + 8);  // every option, then the extra graphs
}

TEST_CASE("a wrong rewrite is caught, with its seed, choices and the graph in DOT, and the graph is drawn again from them") {
    const one_thread threads;
    // The rewrite under test swaps the inputs of every Sub after fusing: wrong wherever a Sub
    // was not taken into the fused node, or ran unfused.
    const auto p = op<Conv>() >> op<Sub>(any());
    auto wrong = [](graph& g) {
        property_report rep;
        rep.candidates = 1;
        for (node_id n : std::vector<node_id>(g.nodes().begin(), g.nodes().end()))
            if (g.kind(n) == node_kind::op && g.op_name(n) == "Sub") {
                const auto a = g.input(n, 0), b = g.input(n, 1);
                const node_id s = g.add_op("Sub", std::string(g.name(n)) + "_swapped", {b, a});
                g.set_type({s, 0}, *g.value_type(n, 0));
                g.redirect({n, 0}, {s, 0});
            }
        return rep;
    };
    testing::differential_options opt;
    opt.extra_graphs = 4;
    const auto r = testing::differential(p, wrong, opt);
    CHECK(r.failures == r.graphs);
    REQUIRE_FALSE(r.first_failure.empty());
    CHECK(r.first_failure.find("digraph") != std::string::npos);
    CHECK(r.first_failure.find("Sub") != std::string::npos);
    // "seed S, choices [c ...]": the same graph again.
    std::istringstream is(r.first_failure.substr(5));
    std::uint64_t seed = 0;
    is >> seed;
    const auto at = r.first_failure.find('[');
    std::istringstream cs(r.first_failure.substr(at + 1, r.first_failure.find(']') - at - 1));
    std::vector<std::size_t> choices;
    for (std::size_t c; cs >> c;) choices.push_back(c);
    const testing::draw again = testing::synthesize(p, seed, choices);
    std::ostringstream dot;
    write_dot(dot, again.g, {}, "failing graph");
    CHECK(r.first_failure.find(dot.str()) != std::string::npos);

    // A rewrite that finds nothing: each graph counts as unmatched.
    const auto none = testing::differential(p, [](graph&) { return property_report{}; }, opt);
    CHECK(none.unmatched == none.graphs);
    CHECK_FALSE(none.ok());
}

TEST_CASE("a fusion that declines every match fails its differential test, unless declines are expected") {
    const one_thread threads;
    const auto p = op<Conv>() >> op<Relu>();
    auto prop = onednn::make_fused_property<graph>("never", p);
    prop.check([](const graph&, const node_id*, std::size_t) { return std::string("declined on purpose"); });
    testing::differential_options opt;
    opt.extra_graphs = 2;
    const auto r = testing::differential(p, [&](graph& g) { return apply_property(g, prop); }, opt);
    CHECK(r.failures == 0);  // every graph ran, unfused, equal to the reference
    CHECK(r.fused == 0);
    CHECK(r.declined == r.graphs);
    CHECK(r.fused_none);
    CHECK_FALSE(r.ok());
    CHECK(r.first_failure.find("fused none") != std::string::npos);
    CHECK(r.first_failure.find("declined on purpose") != std::string::npos);
    opt.expect_declines = true;
    const auto expected = testing::differential(p, [&](graph& g) { return apply_property(g, prop); }, opt);
    CHECK(expected.ok());
}

TEST_CASE("the generators draw only ops whose ONNX conformance cases pass") {
    std::ifstream in(SGMATCH_CONFORMANCE_LIST);
    REQUIRE(in);
    std::set<std::string> pass;
    for (std::string line; std::getline(in, line);) pass.insert(line);
    for (const auto& e : testing::generators()) {
        CAPTURE(e.op);
        CHECK(find_schema(e.op) != nullptr);
        CHECK_FALSE(e.conformance.empty());
        for (auto c : e.conformance) {
            CAPTURE(c);
            CHECK(pass.count(std::string(c)) == 1);
        }
    }
    // Ops with no conformance case in the test data are not drawn (a pattern naming them has
    // them reported as undrawable).
    CHECK_FALSE(testing::can_draw("Gelu"));
    CHECK_FALSE(testing::can_draw("Mish"));
}
