// The liveness plan of intermediate buffers: placement checked against brute force on random
// needs, and the executor's planned runs (from the second run of an input shape on) equal to
// the first run and to the reference, in less memory than the same-size pool.
// Presets: test, asan, and the compiler presets.
#include <doctest/doctest.h>

#include <random>

#include "sgmatch/exec/buffer_plan.hpp"
#include "sgmatch/exec/executor.hpp"
#include "sgmatch/graph/builders.hpp"
#include "sgmatch/onednn/backend.hpp"
#include "sgmatch/sgmatch.hpp"
#include "support/numeric.hpp"

using namespace sgmatch;

TEST_CASE("plan_buffers: buffers alive at one step never overlap, and the arena is near the live peak") {
    std::mt19937 rng(11);
    for (int round = 0; round < 300; ++round) {
        std::vector<exec::buffer_need> needs;
        const int n = 1 + static_cast<int>(rng() % 40), steps = 1 + static_cast<int>(rng() % 30);
        for (int i = 0; i < n; ++i) {
            const std::size_t a = rng() % static_cast<unsigned>(steps), b = rng() % static_cast<unsigned>(steps);
            needs.push_back({1 + rng() % 5000, std::min(a, b), std::max(a, b)});
        }
        const exec::buffer_plan p = exec::plan_buffers(needs);
        REQUIRE(p.offsets.size() == needs.size());
        std::size_t total = 0;
        for (std::size_t i = 0; i < needs.size(); ++i) {
            CHECK(p.offsets[i] % 64 == 0);
            CHECK(p.offsets[i] + needs[i].bytes <= p.arena);
            total += (needs[i].bytes + 63) / 64 * 64;
            for (std::size_t j = 0; j < i; ++j) {
                const bool same_time = needs[i].first <= needs[j].last && needs[j].first <= needs[i].last;
                const bool same_bytes = p.offsets[i] < p.offsets[j] + needs[j].bytes && p.offsets[j] < p.offsets[i] + needs[i].bytes;
                CHECK_FALSE((same_time && same_bytes));
            }
        }
        CHECK(p.arena >= exec::live_peak(needs));
        CHECK(p.arena <= total);
        CHECK(exec::pooled_bytes(needs) >= exec::live_peak(needs));
    }
    // A chain: each buffer read by the next step only. Two buffers suffice, whatever the sizes.
    std::vector<exec::buffer_need> chain;
    for (std::size_t i = 0; i < 10; ++i) chain.push_back({6400, i, i + 1});
    CHECK(exec::plan_buffers(chain).arena == 2 * 6400);
}

TEST_CASE("the executor places fused outputs by a liveness plan: same results, less memory, planned ahead where shapes are declared") {
    const std::int64_t image = test::sanitized() ? 32 : 64;
    const graph g = build::resnet50(2, image, /*data_seed=*/42);
    std::mt19937 rng(1);
    const std::map<std::string, reference::array> in{{"data", test::random_array({2, 3, image, image}, rng, 1.0f)}};
    const auto want = exec::executor(g)(in).at(0);
    graph fused = g;
    apply_backend(fused, onednn::make_backend<graph>());
    // Without a plan: the first run of a graph whose input shape is not declared records one.
    graph undeclared = fused;
    for (node_id n : undeclared.nodes())
        if (undeclared.kind(n) == node_kind::input) undeclared.set_type({n, 0}, tensor_type{});
    const exec::executor recorded(undeclared);
    exec::run_stats r0, r1;
    const auto a = recorded(in, &r0).at(0);
    CHECK(r0.planned_bytes == 0);  // the first run of a shape makes the plan
    const auto b = recorded(in, &r1).at(0);
    CHECK(r1.planned_bytes > 0);
    CHECK(r1.in_place_sums == r0.in_place_sums);
    CHECK(test::max_rel_error(b, a) == 0);  // the same kernels on the same data
    // Declared shapes: planned before the first run, the same plan.
    const exec::executor ahead(fused);
    exec::run_stats p0, p1;
    const auto c = ahead(in, &p0).at(0);
    const auto d = ahead(in, &p1).at(0);
    CHECK(p0.planned_bytes == r1.planned_bytes);
    CHECK(p1.planned_bytes == p0.planned_bytes);
    CHECK(p0.in_place_sums == r0.in_place_sums);
    MESSAGE("planned " << p0.planned_bytes << " bytes, the same-size pool " << p0.pooled_bytes);
    CHECK(p0.planned_bytes <= 0.8 * static_cast<double>(p0.pooled_bytes));
    CHECK(test::max_rel_error(c, a) == 0);
    CHECK(test::max_rel_error(d, a) == 0);
    CHECK(test::max_rel_error(a, want) <= 1e-4);
}

TEST_CASE("a planned BatchNorm + ReLU keeps the layout its source arrives in: no fallback, the reference's values (a dense block)") {
    // DenseNet's pattern: two convs concatenated, BatchNorm + ReLU (no conv before it to fold
    // into), a 1x1 conv. The concat's output is in the convs' layout (channels-last), which the
    // plan, made from shapes before the first run, does not know.
    graph g;
    build::layers L(g, true, /*data_seed=*/7);
    build::act x{g.add_input("x", tensor_type{dtype::f32, {2, 16, 12, 12}}), 2, 16, 12, 12};
    const build::act a = L.relu("ra", L.bn("ba", L.conv("ca", x, 32, 1, 1, 0)));
    const build::act b = L.relu("rb", L.bn("bb", L.conv("cb", x, 32, 3, 1, 1)));
    const node_id cat = g.add_op("Concat", "cat", {a.node, b.node}, {{"axis", 1}});
    g.set_type({cat, 0}, tensor_type{dtype::f32, {2, 64, 12, 12}});
    build::act y{cat, 2, 64, 12, 12};
    y = L.relu("r1", L.bn("norm1", y));
    y = L.conv("conv1", y, 32, 1, 1, 0);
    g.mark_output(y.node);
    g.mark_output(cat);  // read elsewhere too: the concat stays, BatchNorm + ReLU fuse on their own
    std::mt19937 rng(3);
    const std::map<std::string, reference::array> in{{"x", test::random_array({2, 16, 12, 12}, rng, 1.0f)}};
    const auto want = exec::executor(g)(in).at(0);
    graph fused = g;
    apply_backend(fused, onednn::make_backend<graph>());
    std::size_t bn_relu = 0;
    for (node_id n : fused.nodes())
        if (fused.kind(n) == node_kind::op && fused.op_name(n) == "onednn.fused_batch_norm") ++bn_relu;
    REQUIRE(bn_relu == 1);
    const exec::executor run(fused, exec::mode::onednn);
    for (int r = 0; r < 2; ++r) {
        exec::run_stats st;
        const auto got = run(in, &st).at(0);
        CHECK(st.planned_bytes > 0);  // planned ahead: every shape is declared
        CHECK(st.fallbacks == 0);
        CHECK(test::max_rel_error(got, want) <= 1e-4);
    }
}
