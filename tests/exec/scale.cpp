// Scale: a 1M-node chain and a 1M-node random DAG of cheap ops are partitioned and run on a
// thread whose stack is 256 KiB, so nothing may recurse as deep as the graph; every value is
// checked against a plain loop over the same graph. The built-in graph's memory per node is
// measured and bounded. Runs in every preset; under the sanitizers with 200k nodes (10x slower).
#include <pthread.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <cstdio>
#include <cmath>
#include <cstdint>
#include <exception>
#include <functional>
#include <random>
#include <string>
#include <vector>

#include <doctest/doctest.h>

#include "sgmatch/exec/executor.hpp"
#include "sgmatch/pattern/vocabulary.hpp"
#include "sgmatch/partition/partition.hpp"
#include "sgmatch/pattern/combinators.hpp"
#include "support/numeric.hpp"

using namespace sgmatch;

namespace {

constexpr std::size_t scale_nodes = test::sanitized() ? 200000 : 1000000;
constexpr std::size_t lanes = 4;
using lane_values = std::array<float, lanes>;

/// Runs f on a thread with a 256 KiB stack; rethrows what it threw.
void on_small_stack(const std::function<void()>& f) {
    struct job {
        const std::function<void()>* f;
        std::exception_ptr error;
    } j{&f, nullptr};
    pthread_attr_t attr;
    pthread_attr_init(&attr);
    REQUIRE(pthread_attr_setstacksize(&attr, 256 * 1024) == 0);
    pthread_t t;
    REQUIRE(pthread_create(&t, &attr, [](void* p) -> void* {
        auto* jb = static_cast<job*>(p);
        try {
            (*jb->f)();
        } catch (...) {
            jb->error = std::current_exception();
        }
        return nullptr;
    }, &j) == 0);
    pthread_join(t, nullptr);
    pthread_attr_destroy(&attr);
    if (j.error) std::rethrow_exception(j.error);
}

/// A graph of cheap elementwise ops on one [1, 4] input, and the same computation as a loop.
struct scale_graph {
    graph g;
    std::vector<std::string> ops;                 // per op node, in order
    std::vector<std::vector<std::size_t>> ins;    // per op node: earlier values (0 = the input)

    lane_values evaluate(const lane_values& x) const {
        std::vector<lane_values> v{x};
        v.reserve(ops.size() + 1);
        for (std::size_t i = 0; i < ops.size(); ++i) {
            lane_values r{};
            for (std::size_t l = 0; l < lanes; ++l) {
                const float a = v[ins[i][0]][l];
                if (ops[i] == "Neg") r[l] = -a;
                else if (ops[i] == "Tanh") r[l] = std::tanh(a);
                else if (ops[i] == "Sigmoid") r[l] = 1.0f / (1.0f + std::exp(-a));
                else {
                    float m = a;
                    for (std::size_t k = 1; k < ins[i].size(); ++k)
                        m = ops[i] == "Max" ? std::max(m, v[ins[i][k]][l]) : std::min(m, v[ins[i][k]][l]);
                    r[l] = m;
                }
            }
            v.push_back(r);
        }
        return v.back();
    }
};

/// Chain: Neg, Tanh, Sigmoid, Neg, Tanh, ...
scale_graph make_chain(std::size_t n) {
    scale_graph s;
    std::vector<node_id> all{s.g.add_input("x", tensor_type{dtype::f32, {1, lanes}})};
    const char* cycle[] = {"Neg", "Tanh", "Sigmoid"};
    for (std::size_t i = 0; i < n; ++i) {
        s.ops.push_back(cycle[i % 3]);
        s.ins.push_back({i});
        all.push_back(s.g.add_op(s.ops.back(), "n" + std::to_string(i), {all.back()}));
    }
    s.g.mark_output(all.back());
    return s;
}

/// Random DAG: each node reads 1-3 values, mostly of the previous 64, sometimes any earlier one;
/// one input: Neg, Tanh or Sigmoid; two or three: Max or Min.
scale_graph make_dag(std::size_t n, std::uint64_t seed, bool record = true) {
    scale_graph s;
    std::vector<node_id> all{s.g.add_input("x", tensor_type{dtype::f32, {1, lanes}})};
    std::mt19937_64 rng(seed);
    const char* unary[] = {"Neg", "Tanh", "Sigmoid"};
    for (std::size_t i = 0; i < n; ++i) {
        const std::size_t have = all.size();
        const std::size_t arity = 1 + rng() % 3;
        std::vector<std::size_t> from;
        std::vector<input_ref> refs;
        for (std::size_t a = 0; a < arity; ++a) {
            const std::size_t lo = have > 64 ? have - 64 : 0;
            const std::size_t j = rng() % 50 == 0 ? rng() % have : lo + rng() % (have - lo);
            from.push_back(j);
            refs.push_back(all[j]);
        }
        const char* op = arity == 1 ? unary[rng() % 3] : (rng() % 2 ? "Max" : "Min");
        if (record) {
            s.ops.push_back(op);
            s.ins.push_back(from);
        }
        all.push_back(s.g.add_op(op, "n" + std::to_string(i), refs));
    }
    s.g.mark_output(all.back());
    return s;
}

/// The process's resident bytes (/proc/self/statm): the graph's large arrays are mappings of
/// their own (detail/pod_array.hpp), which the heap's statistics do not count.
std::size_t resident_bytes() {
    std::FILE* f = std::fopen("/proc/self/statm", "r");
    REQUIRE(f != nullptr);
    unsigned long size = 0, resident = 0;
    const int read = std::fscanf(f, "%lu %lu", &size, &resident);
    std::fclose(f);
    REQUIRE(read == 2);
    return static_cast<std::size_t>(resident) * static_cast<std::size_t>(sysconf(_SC_PAGESIZE));
}

double max_abs_diff(const xt::xarray<float>& got, const lane_values& want) {
    REQUIRE(got.size() == lanes);
    double d = 0;
    for (std::size_t l = 0; l < lanes; ++l) d = std::max(d, static_cast<double>(std::abs(got.flat(l) - want[l])));
    return d;
}

/// Partition s's graph with `pattern` (a property whose nodes are only counted), and run s's
/// graph on the reference kernels, both on a small stack; returns the fused count.
template <class P>
std::size_t partition_and_run(scale_graph& s, P pattern, double& diff) {
    std::size_t fused = 0;
    on_small_stack([&] {
        const lane_values x{0.5f, -1.25f, 2.0f, -0.01f};
        const lane_values want = s.evaluate(x);
        const exec::executor run(s.g);
        diff = max_abs_diff(run({{"x", test::make_array({x.begin(), x.end()}, {1, lanes})}}).at(0), want);
        graph p = s.g;
        const std::size_t before = p.node_count();
        auto prop = make_property<graph>("scale", pattern, [](const subgraph<graph>&) { return 0; });
        fused = apply_property(p, prop).accepted;
        CHECK(p.node_count() == before - fused);  // each match is two nodes
        const op_index<graph> checked(p);          // the rewritten graph is valid
        CHECK(checked.order().size() == p.node_count());
    });
    return fused;
}

}  // namespace

TEST_CASE("a 1M-node chain partitions and runs on a 256 KiB stack") {
    scale_graph s = make_chain(scale_nodes);
    double diff = 1;
    const std::size_t fused = partition_and_run(s, op<ops::Neg>() >> op<ops::Tanh>(), diff);
    CHECK(fused == (scale_nodes + 1) / 3);  // every Neg but a last node's is followed by a Tanh
    CHECK(diff <= 1e-6);
}

TEST_CASE("a 1M-node random DAG partitions and runs on a 256 KiB stack") {
    scale_graph s = make_dag(scale_nodes, 21);
    // The pairs the pattern can take (the closure rule): a Max whose one user is a Neg.
    std::vector<std::size_t> users(s.ops.size() + 1, 0);
    for (const auto& in : s.ins)
        for (std::size_t j : in) ++users[j];
    std::size_t candidates = 0;
    for (std::size_t i = 0; i < s.ops.size(); ++i) {
        const std::size_t j = s.ins[i][0];  // value j > 0 is op node j - 1's
        if (s.ops[i] == "Neg" && j > 0 && s.ops[j - 1] == "Max" && users[j] == 1) ++candidates;
    }
    double diff = 1;
    const std::size_t fused = partition_and_run(s, op<ops::Max>() >> op<ops::Neg>(), diff);
    CHECK(fused == candidates);
    CHECK(candidates > scale_nodes / 400);  // about 1 in 200
    CHECK(diff <= 1e-6);
}

TEST_CASE("the built-in graph's memory per node, measured") {
    // Under the sanitizers, freed memory is held back and shadow memory added: no figure there.
    if (test::sanitized()) return;
    const std::size_t n = scale_nodes;
    const std::size_t before = resident_bytes();
    const scale_graph s = make_dag(n, 5, /*record=*/false);  // the graph alone (the builder's ids are freed)
    const std::size_t bytes = resident_bytes() - before;
    REQUIRE(s.g.node_count() == n + 1);
    const double per_node = static_cast<double>(bytes) / static_cast<double>(n);
    MESSAGE("built-in graph, random DAG of ", n, " op nodes with 1-3 inputs (2 on average), names of 2-7 characters: ",
            per_node, " bytes per node resident");
    CHECK(per_node >= 32);  // a node's hot record alone is 32 bytes: the measurement sees the graph
    CHECK(per_node < 256);
}
