// The clean-up passes (passes/cleanup.hpp): what they remove and fold, checked on the graph
// they leave (adapter laws, the constants' values worked out here) and by running the graph
// before and after on the same input.
#include <doctest/doctest.h>

#include <cstring>
#include <random>

#include "sgmatch/exec/executor.hpp"
#include "sgmatch/passes/cleanup.hpp"
#include "support/adapter_laws.hpp"

using namespace sgmatch;
using exec::value;

namespace {

std::vector<unsigned char> int64_bytes(const std::vector<std::int64_t>& v) {
    std::vector<unsigned char> b(v.size() * 8);
    std::memcpy(b.data(), v.data(), b.size());
    return b;
}
std::size_t ops_named(const graph& g, std::string_view op) {
    std::size_t n = 0;
    for (node_id id : g.nodes()) n += g.kind(id) == node_kind::op && g.op_name(id) == op;
    return n;
}
// Runs g before and after the clean-up on the same input; returns the report.
passes::cleanup_report clean_and_compare(graph& g, const std::map<std::string, value>& in) {
    const auto before = exec::executor(g).run(in);
    const auto r = passes::cleanup(g);
    sgtest::check_adapter_laws(g);
    const auto after = exec::executor(g).run(in);
    REQUIRE(before.size() == after.size());
    for (std::size_t i = 0; i < before.size(); ++i) {
        CHECK(after[i].type() == before[i].type());
        CHECK(after[i].dims() == before[i].dims());
        CHECK(std::memcmp(after[i].data(), before[i].data(), before[i].bytes()) == 0);
    }
    return r;
}

}  // namespace

TEST_CASE("cleanup: Identity and inference Dropout go, their users read the input") {
    graph g;
    auto x = g.add_input("x");
    auto bias = g.add_op("Identity", "bias_id", {g.add_constant("b", {4}, {1, 2, 3, 4})});
    auto a = g.add_op("Add", "add", {g.add_op("Identity", "id", {x}), bias});
    auto d = g.add_op("Dropout", "drop", {a}, {}, 2);
    auto kept = g.add_op("Dropout", "drop_mask_read", {d}, {}, 2);  // its mask is an output: it stays
    g.mark_output(g.add_op("Relu", "relu", {kept}));
    g.mark_output({kept, 1});
    graph pass;  // a graph input straight to a graph output keeps its Identity
    pass.mark_output(pass.add_op("Identity", "through", {pass.add_input("x")}));

    const auto r = clean_and_compare(g, {{"x", value::of<float>({2, 4}, {-1, 2, -3, 4, 5, -6, 7, -8})}});
    CHECK(r.pass_through == 3);
    CHECK(ops_named(g, "Identity") == 0);
    CHECK(ops_named(g, "Dropout") == 1);
    // The Add now reads the graph input and the constant itself (what the lowering needs).
    for (node_id n : g.nodes())
        if (g.kind(n) == node_kind::op && g.op_name(n) == "Add") {
            CHECK(g.kind(g.input(n, 0).node) == node_kind::input);
            CHECK(g.kind(g.input(n, 1).node) == node_kind::constant);
        }
    CHECK(passes::cleanup(pass).pass_through == 0);
    CHECK(ops_named(pass, "Identity") == 1);
}

TEST_CASE("cleanup: a Pad of zero pads goes (PyTorch's before an AveragePool), one that pads stays") {
    graph g;
    auto x = g.add_input("x", tensor_type{dtype::f32, {1, 1, 2, 2}});
    auto zero = g.add_op("Pad", "pad0", {x, g.add_constant("z", {8}, dtype::i64, int64_bytes({0, 0, 0, 0, 0, 0, 0, 0}))});
    auto zero_attr = g.add_op("Pad", "pad0_attr", {zero}, {{"pads", attribute::ints{0, 0, 0, 0, 0, 0, 0, 0}}});
    auto one = g.add_op("Pad", "pad1", {zero_attr, g.add_constant("p", {8}, dtype::i64, int64_bytes({0, 0, 1, 0, 0, 0, 0, 1}))});
    g.mark_output(g.add_op("Relu", "relu", {one}));
    const auto r = clean_and_compare(g, {{"x", value::of<float>({1, 1, 2, 2}, {-1, 2, -3, 4})}});
    CHECK(r.pass_through == 2);
    CHECK(ops_named(g, "Pad") == 1);
}

TEST_CASE("cleanup: a shape subgraph of known dims folds into a Reshape's constant shape") {
    graph g;
    auto x = g.add_input("x", tensor_type{dtype::f32, {2, 3, 4}});
    auto shape = g.add_op("Shape", "shape", {x});
    auto n = g.add_op("Gather", "batch", {shape, g.add_constant("zero", {}, dtype::i64, int64_bytes({0}))});
    auto n1 = g.add_op("Unsqueeze", "batch1", {n}, {{"axes", attribute::ints{0}}});
    auto target = g.add_op("Concat", "target", {n1, g.add_constant("minus1", {1}, dtype::i64, int64_bytes({-1}))}, {{"axis", 0}});
    auto y = g.add_op("Reshape", "flat", {x, target});
    g.mark_output(g.add_op("Relu", "relu", {y}));
    std::vector<float> xs(24);
    for (std::size_t i = 0; i < xs.size(); ++i) xs[i] = static_cast<float>(i) - 12.f;
    const auto r = clean_and_compare(g, {{"x", value::of<float>({2, 3, 4}, xs)}});
    CHECK(r.shapes == 1);
    CHECK(r.folded == 3);    // Gather, Unsqueeze, Concat
    CHECK(r.erased == 5);    // zero and minus1, and the constants each fold made for the next one
    CHECK(g.node_count() == 4);  // x, the shape constant, Reshape, Relu
    for (node_id id : g.nodes())
        if (g.kind(id) == node_kind::op && g.op_name(id) == "Reshape") {
            const auto c = g.constant(g.input(id, 1).node);
            REQUIRE(c);
            CHECK(c->type == dtype::i64);
            CHECK(*c->to_ints() == std::vector<std::int64_t>{2, -1});
        }
}

TEST_CASE("cleanup: Transpose and Cast of weights become the weights, worked out here") {
    std::mt19937 rng(3);
    std::uniform_real_distribution<float> u(-1, 1);
    std::vector<float> w(3 * 5);
    for (auto& v : w) v = u(rng);
    graph g;
    auto x = g.add_input("x");
    auto wt = g.add_op("Transpose", "wT", {g.add_constant("w", {3, 5}, w)}, {{"perm", attribute::ints{1, 0}}});
    auto wc = g.add_op("Cast", "wcast", {wt}, {{"to", 1}});
    g.mark_output(g.add_op("MatMul", "mm", {x, wc}));
    std::vector<float> xs(2 * 5);
    for (auto& v : xs) v = u(rng);
    const auto r = clean_and_compare(g, {{"x", value::of<float>({2, 5}, xs)}});
    CHECK(r.folded == 2);
    for (node_id id : g.nodes())
        if (g.kind(id) == node_kind::op && g.op_name(id) == "MatMul") {
            const auto c = g.constant(g.input(id, 1).node);
            REQUIRE(c);
            REQUIRE(c->rank == 2);
            CHECK(c->dims[0] == 5);
            CHECK(c->dims[1] == 3);
            for (std::size_t i = 0; i < 5; ++i)
                for (std::size_t j = 0; j < 3; ++j) CHECK(c->at(i * 3 + j) == w[j * 5 + i]);
        }
}

TEST_CASE("cleanup: a fold its kernel refuses leaves the node as it was and says why, and unknown dims stay") {
    graph g;
    auto data = g.add_constant("data", {2}, dtype::i64, int64_bytes({7, 8}));
    auto bad = g.add_op("Gather", "bad", {data, g.add_constant("five", {1}, dtype::i64, int64_bytes({5}))});
    g.mark_output(bad);
    auto unknown = g.add_op("Shape", "unknown_rank", {g.add_input("y")});
    g.mark_output(unknown);
    const auto r = passes::cleanup(g);
    CHECK(r.folded == 0);
    CHECK(r.shapes == 0);
    REQUIRE(r.notes.size() == 1);
    CHECK(r.notes[0].find("'bad' (Gather) not folded") != std::string::npos);
    CHECK(r.notes[0].find("index 5 is out of range for axis 0 of size 2") != std::string::npos);
    CHECK(ops_named(g, "Gather") == 1);
    CHECK(ops_named(g, "Shape") == 1);
    sgtest::check_adapter_laws(g);
    // Each pass can be switched off.
    graph h;
    h.mark_output(h.add_op("Relu", "r", {h.add_op("Identity", "i", {h.add_input("x")})}));
    passes::cleanup_options off;
    off.pass_through = false;
    CHECK(passes::cleanup(h, off).pass_through == 0);
    CHECK(ops_named(h, "Identity") == 1);
}
