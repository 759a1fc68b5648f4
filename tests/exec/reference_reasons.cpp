// Why a node runs on its reference kernel in the oneDNN modes (executor::reference_reasons): a
// kernel factory that declines says why, a primitive oneDNN refuses says so, and an op with no
// oneDNN kernel is named; nodes inside a region are reported under the region node's name.
#include <doctest/doctest.h>

#include <algorithm>
#include <map>
#include <string>
#include <vector>

#include "sgmatch/exec/executor.hpp"
#include "sgmatch/exec/subgraph.hpp"
#include "sgmatch/onednn/backend.hpp"

using namespace sgmatch;

// Named: the unity build compiles this file with other tests; its helpers stay apart from theirs.
namespace reference_reason_tests {

std::string reason_of(const std::vector<exec::executor::reference_reason>& rs, const std::string& node) {
    for (const auto& r : rs)
        if (r.node == node) return r.op + ": " + r.why;
    return "";
}

TEST_CASE("reference_reasons: every node on a reference kernel in a oneDNN mode says why, and no other node does") {
    // x [2, 8, 4, 4] -> Relu -> LRN (size 2) -> Erf; a Gemm whose B is computed; a Relu of a
    // constant.
    graph g;
    const node_id x = g.add_input("x", tensor_type{dtype::f32, {2, 8, 4, 4}});
    const node_id relu = g.add_op("Relu", "relu", {x});
    const node_id lrn = g.add_op("LRN", "lrn_even", {relu}, {{"size", std::int64_t{2}}});
    const node_id erf = g.add_op("Erf", "erf", {lrn});
    g.mark_output(erf);
    const node_id a = g.add_input("a", tensor_type{dtype::f32, {3, 4}});
    const node_id b = g.add_input("b", tensor_type{dtype::f32, {4, 5}});
    g.mark_output(g.add_op("Gemm", "gemm_computed_b", {a, b}));
    g.mark_output(g.add_op("Relu", "relu_of_constant", {g.add_constant("c", {2}, {-1.0f, 1.0f})}));

    const exec::executor run(g, exec::mode::onednn);
    const auto rs = run.reference_reasons();
    CHECK(reason_of(rs, "lrn_even").find("LRN: an even size") == 0);
    CHECK(reason_of(rs, "erf") == "Erf: oneDNN has no kernel for Erf");
    CHECK(reason_of(rs, "gemm_computed_b") == "Gemm: B (input 1) is not a constant");
    CHECK(reason_of(rs, "relu_of_constant").find("input 0 is a constant") != std::string::npos);
    CHECK(reason_of(rs, "relu").empty());
    CHECK(rs.size() == 4);

    // The same nodes run on their reference kernels, and only they.
    exec::run_stats st;
    (void)run.run({{"x", exec::value::of<float>({2, 8, 4, 4}, std::vector<float>(256, 0.5f))},
                   {"a", exec::value::of<float>({3, 4}, std::vector<float>(12, 1.0f))},
                   {"b", exec::value::of<float>({4, 5}, std::vector<float>(20, 1.0f))}},
                  &st);
    CHECK(st.reference_nodes == rs.size());
    CHECK(st.onednn_nodes == 1);

    CHECK(exec::executor(g, exec::mode::reference).reference_reasons().empty());
}

TEST_CASE("a commutative op whose first operand is a constant runs on oneDNN with its operands swapped, and equals the reference") {
    // Add(b, x) as PyTorch exports a bias, Mul(s, x); Sub(c, x) is not commutative: reference.
    graph g;
    const node_id x = g.add_input("x", tensor_type{dtype::f32, {2, 3, 4}});
    const node_id b = g.add_constant("b", {4}, {0.5f, -1.0f, 2.0f, 0.25f});
    const node_id add = g.add_op("Add", "bias_first", {b, x});
    const node_id mul = g.add_op("Mul", "scale_first", {g.add_constant("s", {3, 1}, {2.0f, -3.0f, 0.5f}), add});
    g.mark_output(g.add_op("Sub", "sub_first", {g.add_constant("c", {4}, {1.0f, 2.0f, 3.0f, 4.0f}), mul}));
    const exec::executor run(g, exec::mode::onednn);
    const auto rs = run.reference_reasons();
    CHECK(reason_of(rs, "bias_first").empty());
    CHECK(reason_of(rs, "scale_first").empty());
    CHECK(reason_of(rs, "sub_first").find("input 0 is a constant") != std::string::npos);
    std::vector<float> xs(24);
    for (std::size_t i = 0; i < xs.size(); ++i) xs[i] = static_cast<float>(i) * 0.37f - 4.0f;
    const std::map<std::string, exec::value> in{{"x", exec::value::of<float>({2, 3, 4}, xs)}};
    exec::run_stats st;
    const exec::value got = run.run(in, &st).at(0).dense_value();
    const exec::value want = exec::executor(g, exec::mode::reference).run(in).at(0).dense_value();
    CHECK(st.onednn_nodes == 2);
    CHECK(st.reference_nodes == 1);
    REQUIRE(got.size() == want.size());
    for (std::int64_t i = 0; i < got.size(); ++i) CHECK(got.as<float>()[i] == want.as<float>()[i]);
    // A constant operand larger than the computed one: oneDNN's binary broadcasts only its second
    // operand, so the kernel refuses it at run time and the reference kernel computes it.
    graph h;
    const node_id y = h.add_input("y", tensor_type{dtype::f32, {4}});
    h.mark_output(h.add_op("Add", "wide_constant", {h.add_constant("w", {2, 4}, {1, 2, 3, 4, 5, 6, 7, 8}), y}));
    const exec::value r = exec::executor(h, exec::mode::onednn).run({{"y", exec::value::of<float>({4}, {10, 20, 30, 40})}}).at(0).dense_value();
    CHECK(r.dims() == exec::shape{2, 4});
    CHECK(r.as<float>()[7] == 48.0f);
}

TEST_CASE("reference_reasons: a node inside a region is named under its region node") {
    graph g;
    const node_id x = g.add_input("x", tensor_type{dtype::f32, {1, 4, 3, 3}});
    g.mark_output(g.add_op("Neg", "neg", {g.add_op("LRN", "lrn4", {g.add_op("Relu", "relu", {x})}, {{"size", std::int64_t{4}}})}));
    exec::register_region_backend();
    REQUIRE(apply_backend(g, "onednn.regions").at(0).accepted == 1);
    node_id region{};
    for (node_id n : g.nodes())
        if (g.kind(n) == node_kind::op) region = n;
    const auto rs = exec::executor(g, exec::mode::onednn).reference_reasons();
    REQUIRE(rs.size() == 1);
    CHECK(rs[0].node == std::string(g.name(region)) + "/lrn4");
    CHECK(rs[0].why.find("an even size") == 0);
}

}  // namespace reference_reason_tests
