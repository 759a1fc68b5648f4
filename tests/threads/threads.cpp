// Several threads at once: one built executor, its fused kernels and region nodes, the primitive
// caches filled concurrently, apply_backend on different graphs while backends are registered,
// and the per-thread cap of oneDNN's threads. Runs in the test preset, and under ThreadSanitizer
// in the tsan preset (with OMP_NUM_THREADS=1: TSan does not see into Debian's libgomp).
#include <dirent.h>

#include <algorithm>
#include <atomic>
#include <cstdint>
#include <map>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include <doctest/doctest.h>

#include "sgmatch/exec/executor.hpp"
#include "sgmatch/exec/subgraph.hpp"
#include "sgmatch/graph/builders.hpp"
#include "sgmatch/onednn/backend.hpp"
#include "sgmatch/onednn/threads.hpp"
#include "support/numeric.hpp"

using namespace sgmatch;
using array = xt::xarray<float>;

namespace {

constexpr int thread_count = 8;

/// Runs body(t) on thread_count threads that start together.
template <class F>
void together(F body) {
    std::atomic<int> ready{0};
    std::vector<std::thread> threads;
    for (int t = 0; t < thread_count; ++t)
        threads.emplace_back([&, t] {
            ready.fetch_add(1);
            while (ready.load() < thread_count) std::this_thread::yield();
            body(t);
        });
    for (auto& th : threads) th.join();
}

graph small_resnet(std::uint64_t seed) { return build::resnet50(1, 32, seed); }

std::map<std::string, array> resnet_input(std::uint32_t seed) {
    std::mt19937 rng(seed);
    return {{"data", test::random_array({1, 3, 32, 32}, rng, 1.0f)}};
}

/// The threads of this process (/proc/self/task).
int process_threads() {
    int n = 0;
    if (DIR* d = opendir("/proc/self/task")) {
        while (const dirent* e = readdir(d))
            if (e->d_name[0] != '.') ++n;
        closedir(d);
    }
    return n;
}

/// conv 3x3 + bias + relu, conv 1x1 + relu on input x of shape [-1, 8, 12, 12] (any batch).
graph conv_pair() {
    graph g;
    std::mt19937 rng(7);
    auto x = g.add_input("x", tensor_type{dtype::f32, {-1, 8, 12, 12}});
    auto c1 = g.add_op("Conv", "c1",
                       {x, g.add_constant("w1", {8, 8, 3, 3}, test::random_values(8 * 8 * 9, rng, 0.3f)),
                        g.add_constant("b1", {8}, test::random_values(8, rng, 0.5f))},
                       {{"pads", attribute::ints{1, 1, 1, 1}}});
    auto r1 = g.add_op("Relu", "r1", {c1});
    auto c2 = g.add_op("Conv", "c2", {r1, g.add_constant("w2", {4, 8, 1, 1}, test::random_values(32, rng, 0.3f))});
    g.mark_output(g.add_op("Relu", "r2", {c2}));
    return g;
}

}  // namespace

TEST_CASE("one fused executor, never run before, run from 8 threads at once: its kernels create their primitives concurrently") {
    onednn::register_backend<graph>();
    const graph g = small_resnet(3);
    graph fused = g;
    (void)apply_backend(fused, "onednn");
    const auto in = resnet_input(1);
    const array want = exec::executor(g)(in).at(0);
    // What one thread's first run builds, on kernels of their own (a second fused copy).
    graph alone = g;
    (void)apply_backend(alone, "onednn");
    std::size_t before = onednn::primitive_builds();
    (void)exec::executor(alone, exec::mode::onednn)(in);
    const std::size_t one_thread = onednn::primitive_builds() - before;
    CHECK(one_thread > 0);
    const exec::executor run(fused, exec::mode::onednn);
    std::vector<array> got(thread_count);
    std::vector<int> stable(thread_count, 0);
    before = onednn::primitive_builds();
    together([&](int t) {
        got[t] = run(in).at(0);
        stable[t] = run(in).at(0) == got[t] ? 1 : 0;
    });
    // Each kernel built its primitives once, whichever thread asked first; the others waited.
    CHECK(onednn::primitive_builds() - before == one_thread);
    for (int t = 0; t < thread_count; ++t) {
        CAPTURE(t);
        CHECK(test::max_rel_error(got[t], want) <= 1e-4);
        CHECK(got[t] == got[0]);
    }
    CHECK(stable == std::vector<int>(thread_count, 1));
}

TEST_CASE("a region node run from 8 threads at once") {
    exec::register_region_backend();
    const graph g = small_resnet(5);
    graph regions = g;
    const auto reports = apply_backend(regions, "onednn.regions");
    REQUIRE(reports.size() == 1);
    CHECK(reports[0].accepted == 1);
    const auto in = resnet_input(2);
    const array want = exec::executor(g)(in).at(0);
    const exec::executor run(regions, exec::mode::onednn);
    std::vector<array> got(thread_count);
    std::vector<std::size_t> region_nodes(thread_count, 0);
    together([&](int t) {
        exec::run_stats st;
        got[t] = run(in, &st).at(0);
        region_nodes[t] = st.region_nodes;
    });
    for (int t = 0; t < thread_count; ++t) {
        CAPTURE(t);
        CHECK(test::max_rel_error(got[t], want) <= 1e-4);
        CHECK(region_nodes[t] == 1);
    }
}

TEST_CASE("8 threads with 4 input shapes at once: the kernels' per-shape primitives created concurrently") {
    onednn::register_backend<graph>();
    const graph g = conv_pair();
    graph fused = g;
    (void)apply_backend(fused, "onednn");
    std::vector<std::map<std::string, array>> inputs;
    std::vector<array> want;
    std::mt19937 rng(11);
    for (std::int64_t batch = 1; batch <= 4; ++batch) {
        inputs.push_back({{"x", test::random_array({batch, 8, 12, 12}, rng, 1.0f)}});
        want.push_back(exec::executor(g)(inputs.back()).at(0));
    }
    const exec::executor run(fused, exec::mode::onednn);
    std::vector<double> err(thread_count, 1.0);
    std::vector<std::size_t> fused_nodes(thread_count, 0);
    const std::size_t before = onednn::primitive_builds();
    together([&](int t) {
        const auto k = static_cast<std::size_t>(t % 4);
        exec::run_stats st;
        err[t] = test::max_rel_error(run(inputs[k], &st).at(0), want[k]);
        fused_nodes[t] = st.fused_nodes;
    });
    for (int t = 0; t < thread_count; ++t) {
        CAPTURE(t);
        CHECK(err[t] <= 1e-4);
        CHECK(fused_nodes[t] == 2);
    }
    // Two fused kernels, four shapes: eight builds, each once although two threads asked for it;
    // a second round of runs builds nothing.
    CHECK(onednn::primitive_builds() - before == 8);
    together([&](int t) { (void)run(inputs[static_cast<std::size_t>(t % 4)]); });
    CHECK(onednn::primitive_builds() - before == 8);
}

TEST_CASE("apply_backend on different graphs in parallel while backends are registered") {
    onednn::register_backend<graph>();
    const graph base = small_resnet(9);
    std::vector<std::size_t> conv_fused(thread_count, 0);
    std::vector<std::size_t> nodes_after(thread_count, 0);
    together([&](int t) {
        // Registration racing with the applies: a property appended to a shared backend, a
        // backend of this thread's own, and the ready-made backend under a second name.
        for (int i = 0; i < 10; ++i)
            register_property<graph>("threads.shared", make_property<graph>("p" + std::to_string(t) + "." + std::to_string(i),
                                                                            op<ops::Relu>(), [](const subgraph<graph>&) { return 0; }));
        register_property<graph>("threads.own" + std::to_string(t),
                                 make_property<graph>("p", op<ops::Relu>(), [](const subgraph<graph>&) { return 0; }));
        onednn::register_backend<graph>("threads.onednn");
        graph g = base;
        const auto reports = apply_backend(g, t % 2 ? "onednn" : "threads.onednn");
        for (const auto& r : reports)
            if (r.property == "onednn.conv_post_ops") conv_fused[t] = r.accepted;
        nodes_after[t] = g.node_count();
    });
    for (int t = 0; t < thread_count; ++t) {
        CAPTURE(t);
        CHECK(conv_fused[t] == 53);
        CHECK(nodes_after[t] == nodes_after[0]);
        CHECK(backend_registry<graph>::instance().find("threads.own" + std::to_string(t)) != nullptr);
    }
    CHECK(backend_registry<graph>::instance().find("threads.shared")->properties().size() == 10 * thread_count);
    CHECK(backend_registry<graph>::instance().find("threads.onednn")->properties().size() ==
          onednn::make_backend<graph>().properties().size());  // registered once
}

TEST_CASE("a run capped to 1 thread uses 1 thread, on its own thread only, and leaves the caller's setting as it was") {
    onednn::register_backend<graph>();
    REQUIRE(std::string(onednn::cpu_runtime()) == "OpenMP");  // Debian's oneDNN
    const graph g = small_resnet(13);
    graph fused = g;
    (void)apply_backend(fused, "onednn");
    const auto in = resnet_input(4);
    const array want = exec::executor(g)(in).at(0);
    const int before = onednn::max_threads();
    const int threads_at_start = process_threads();

    exec::executor capped(fused, exec::mode::onednn);
    capped.set_threads(1);
    exec::run_stats st;
    CHECK(test::max_rel_error(capped(in, &st).at(0), want) <= 1e-4);
    CHECK(st.threads == 1);
    CHECK(onednn::max_threads() == before);  // the caller's setting is back
    // Capped from the first primitive on: the OpenMP runtime started no thread of its own. (A
    // process that ran oneDNN uncapped before has its pool already: nothing to see then.)
    if (threads_at_start == 1) CHECK(process_threads() == 1);

    // Another thread's run, uncapped, at the same time as a capped one: each sees its own setting.
    int capped_threads = 0, uncapped_threads = 0;
    std::thread a([&] {
        exec::run_stats s;
        (void)capped(in, &s);
        capped_threads = s.threads;
    });
    std::thread b([&] {
        const exec::executor uncapped(fused, exec::mode::onednn);
        exec::run_stats s;
        (void)uncapped(in, &s);
        uncapped_threads = s.threads;
    });
    a.join();
    b.join();
    CHECK(capped_threads == 1);
    CHECK(uncapped_threads == before);
    // The measurement above can see OpenMP's threads: an uncapped run with more than one starts
    // them (in a pool of the calling thread's, alive as long as that thread is).
    const exec::executor uncapped(fused, exec::mode::onednn);
    exec::run_stats s;
    CHECK(test::max_rel_error(uncapped(in, &s).at(0), want) <= 1e-4);
    CHECK(s.threads == before);
    if (threads_at_start == 1 && before > 1) CHECK(process_threads() > 1);
}
