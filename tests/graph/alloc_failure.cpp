// The built-in graph's strong guarantee under allocation failure: a replace or add_op that runs
// out of memory at any allocation leaves the graph exactly as it was. Every allocation (operator
// new and the realloc behind the graph's arrays) is counted; the k-th one fails, for every k.
// The bytes it allocates show that a run of replaces costs in proportion to its length.
// An executable of its own: it replaces the global operator new and the pod_array allocator.
#include <cstdlib>
#include <new>

// g++ 12 sees free() on memory from the replaced operator new (which is malloc's) as a mismatch.
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic ignored "-Wmismatched-new-delete"
#endif

namespace {
long fail_at = -1;  // allocations left before the one that fails; -1: never fail
long allocated_bytes = 0;  // by operator new
bool take_failure() {
    if (fail_at < 0) return false;
    if (fail_at-- == 0) {
        fail_at = -1;  // fail once
        return true;
    }
    return false;
}
void* test_realloc(void* p, std::size_t n) { return take_failure() ? nullptr : std::realloc(p, n); }
}  // namespace

#define SGMATCH_POD_ARRAY_REALLOC test_realloc

void* operator new(std::size_t n) {
    allocated_bytes += static_cast<long>(n);
    if (take_failure()) throw std::bad_alloc();
    if (void* p = std::malloc(n ? n : 1)) return p;
    throw std::bad_alloc();
}
void operator delete(void* p) noexcept { std::free(p); }
void operator delete(void* p, std::size_t) noexcept { std::free(p); }

#include <doctest/doctest.h>

#include <string>
#include <vector>

#include "sgmatch/graph/graph.hpp"
#include "support/graph_check.hpp"

using namespace sgmatch;

namespace {

struct ids {
    node_id conv, bn, relu, x, side;
};

// A graph whose arrays are all full (a copy has no spare capacity), with a producer whose use
// list must move and a member whose outside user comes between the members.
graph subject(ids& n) {
    auto& [conv, bn, relu, x, side] = n;
    graph g;
    x = g.add_input("x");
    auto w = g.add_constant("w", {4, 4});
    std::vector<node_id> others;
    for (int i = 0; i < 3; ++i) others.push_back(g.add_op("Other", "o" + std::to_string(i), {x}));
    conv = g.add_op("Conv", "conv", {x, w}, {{"group", 1}});
    bn = g.add_op("BatchNormalization", "bn", {conv});
    side = g.add_op("Sigmoid", "side", {conv});
    relu = g.add_op("Relu", "relu", {bn, x});
    auto mul = g.add_op("Mul", "mul", {relu, side});
    g.mark_output(mul);
    g.mark_output(relu);
    for (auto o : others) g.mark_output(o);
    return graph(g);  // copied: no spare capacity anywhere
}

// Runs write(g, ids) on a fresh subject with the k-th allocation failing, for k = 0, 1, ...
// until a run completes: after every failed run the graph must be exactly as before and
// consistent; the completed run goes to done(g, ids, result). Returns the number of failed runs.
template <class Write, class Done>
int each_failure(Write write, Done done) {
    int failures = 0;
    for (long k = 0;; ++k) {
        ids n;
        graph g = subject(n);
        const std::string before = sgmatch_test::fingerprint(g);
        const std::size_t count = g.node_count();
        fail_at = k;
        bool failed = false;
        node_id result{};
        try {
            result = write(g, n);
        } catch (const std::bad_alloc&) {
            failed = true;
        }
        fail_at = -1;
        CAPTURE(k);
        if (!failed) {
            CHECK(sgmatch_test::graph_problem(g) == "");
            done(g, n, result);
            return failures;
        }
        ++failures;
        REQUIRE(g.node_count() == count);
        REQUIRE(sgmatch_test::fingerprint(g) == before);
        REQUIRE(sgmatch_test::graph_problem(g) == "");
        REQUIRE(g.contains(n.conv));
        REQUIRE_FALSE(g.payload(n.conv).has_value());
    }
}

}  // namespace

TEST_CASE("a replace that fails at any allocation leaves the graph unchanged") {
    const int failures = each_failure(
        [](graph& g, const ids& n) {
            replacement<node_id> r;
            r.nodes = {n.conv, n.bn, n.relu};
            r.inputs = {{n.x, 0}, {g.input(n.conv, 1).node, 0}};
            r.outputs = {{n.relu, 0}, {n.conv, 0}};
            r.name = "fused_with_a_name_longer_than_the_small_string_buffer";
            r.op_name = "FusedConvBnRelu";
            r.payload = std::vector<int>(100, 7);
            return g.replace(std::move(r));
        },
        [](const graph& g, const ids& n, node_id f) {
            CHECK(g.op_name(f) == "FusedConvBnRelu");
            CHECK(std::any_cast<const std::vector<int>&>(g.payload(f)).size() == 100);
            CHECK(g.input(n.side, 0).node == f);
            CHECK(g.input(n.side, 0).port == 1);
        });
    CHECK(failures >= 8);  // the replace allocates this often before its commit: each was tried
}

TEST_CASE("an add_op that fails at any allocation leaves the graph unchanged") {
    const int failures = each_failure(
        [](graph& g, const ids& n) {
            return g.add_op("NewOpName", "a_node_name_longer_than_the_small_string_buffer",
                            {n.x, n.conv, n.conv, n.side});
        },
        [](const graph& g, const ids& n, node_id added) {
            CHECK(g.op_name(added) == "NewOpName");
            CHECK(g.user_count(n.conv) == 4);
        });
    CHECK(failures >= 5);
}

TEST_CASE("replaces on a typed graph allocate in proportion to their number, not to the graph") {
    // Each replace gives its new node the replaced value's type; the types' storage must grow
    // geometrically (growing it by exactly one type per replace moved every type each time: for
    // n replaces about n^2 / 2 types' worth of bytes, and a 1M-node backend run 30x slower).
    constexpr int n = 2000;
    graph g;
    node_id prev = g.add_input("x", tensor_type{dtype::f32, {1, 8}});
    std::vector<node_id> relus;
    for (int i = 0; i < n; ++i) {
        prev = g.add_op("Relu", "relu" + std::to_string(i), {prev});
        g.set_type({prev, 0}, tensor_type{dtype::f32, {1, 8}});
        relus.push_back(prev);
    }
    g.mark_output(prev);
    const long before = allocated_bytes;
    replacement<node_id> r;
    for (int i = 0; i < n; ++i) {
        r.nodes = {relus[static_cast<std::size_t>(i)]};
        g.prepare_replace(r.nodes.data(), r.nodes.size(), r.inputs, r.outputs);
        r.name = "f" + std::to_string(i);
        r.op_name = "Fused";
        const node_id f = g.replace(std::move(r));
        REQUIRE(g.value_type(f, 0).has_value());
    }
    const long used = allocated_bytes - before;
    CAPTURE(used);
    CHECK(used < 4096L * n);
    CHECK(sgmatch_test::graph_problem(g) == "");
}
