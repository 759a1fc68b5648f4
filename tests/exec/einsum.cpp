// Einsum (ops/einsum.hpp, exec/kernels/einsum.hpp): each equation against loops written here
// from its meaning (a batched matmul, a diagonal, a trace, a transpose, broadcast '...' axes, an
// outer product of three, sums); the implicit output's order; every malformed equation refused
// naming the node. The ONNX conformance cases (test_einsum_*) check it too. Runs in every preset.
#include <doctest/doctest.h>

#include <map>
#include <random>
#include <string>
#include <vector>

#include "sgmatch/exec/executor.hpp"
#include "support/values.hpp"

using namespace sgmatch;
using exec::value;

// Named: the unity build compiles this file with other tests; its helpers stay apart from theirs.
namespace einsum_tests {

using test::elements;
using test::random_value;
using test::run_error;

// One Einsum node over inputs "x0", "x1", ...
struct einsum_graph {
    graph g;
    explicit einsum_graph(const std::string& equation, std::size_t inputs) {
        std::vector<input_ref> ins;
        for (std::size_t i = 0; i < inputs; ++i) ins.push_back(g.add_input("x" + std::to_string(i)));
        g.mark_output(g.add_op("Einsum", "e", ins, {{"equation", std::string(equation)}}));
    }
};

value run1(const std::string& equation, const std::vector<value>& xs) {
    einsum_graph e(equation, xs.size());
    const exec::executor run(e.g);
    std::map<std::string, value> in;
    for (std::size_t i = 0; i < xs.size(); ++i) in.emplace("x" + std::to_string(i), xs[i]);
    return run.run(in).at(0);
}

TEST_CASE("Einsum: a batched matmul, a diagonal, a trace, a transpose and a sum, against loops") {
    std::mt19937 rng(3);
    // bij,bjk->bik on small integers held as floats: every sum is exact.
    const value a = random_value<float>(rng, {2, 3, 4}, -4, 4), b = random_value<float>(rng, {2, 4, 5}, -4, 4);
    const value y = run1("bij,bjk->bik", {a, b});
    REQUIRE(y.dims() == exec::shape{2, 3, 5});
    const auto av = elements<float>(a), bv = elements<float>(b), yv = elements<float>(y);
    for (int bb = 0; bb < 2; ++bb)
        for (int i = 0; i < 3; ++i)
            for (int k = 0; k < 5; ++k) {
                float s = 0;
                for (int j = 0; j < 4; ++j) s += av[static_cast<std::size_t>((bb * 3 + i) * 4 + j)] * bv[static_cast<std::size_t>((bb * 4 + j) * 5 + k)];
                CHECK(yv[static_cast<std::size_t>((bb * 3 + i) * 5 + k)] == s);
            }
    // The same with spaces; implicit, "bij,bjk" keeps the labels that occur once (i, k) and sums
    // over b as well as j.
    CHECK(elements<float>(run1(" bij , bjk -> bik ", {a, b})) == yv);
    const value ik = run1("bij,bjk", {a, b});
    REQUIRE(ik.dims() == exec::shape{3, 5});
    for (std::size_t i = 0; i < 15; ++i) CHECK(elements<float>(ik)[i] == yv[i] + yv[15 + i]);

    // ii->i reads the diagonal; ii (implicit) sums it: the trace.
    const value m = random_value<double>(rng, {4, 4}, -9, 9);
    const auto mv = elements<double>(m);
    const value d = run1("ii->i", {m});
    REQUIRE(d.dims() == exec::shape{4});
    double trace = 0;
    for (std::size_t i = 0; i < 4; ++i) {
        CHECK(elements<double>(d)[i] == mv[i * 4 + i]);
        trace += mv[i * 4 + i];
    }
    const value t = run1("ii", {m});
    CHECK(t.dims().empty());
    CHECK(elements<double>(t)[0] == trace);

    // Implicit order is the labels' ASCII order, not their order in the term: "ba" is a transpose.
    const value r = random_value<std::int64_t>(rng, {2, 3}, -9, 9);
    const value rt = run1("ba", {r});
    REQUIRE(rt.dims() == exec::shape{3, 2});
    for (std::size_t i = 0; i < 2; ++i)
        for (std::size_t j = 0; j < 3; ++j) CHECK(elements<std::int64_t>(rt)[j * 2 + i] == elements<std::int64_t>(r)[i * 3 + j]);
    CHECK(elements<std::int64_t>(run1("ij->ji", {r})) == elements<std::int64_t>(rt));
    // ij-> sums everything; i,i is an inner product (int64, exact).
    std::int64_t all = 0;
    for (auto v : elements<std::int64_t>(r)) all += v;
    CHECK(elements<std::int64_t>(run1("ij->", {r}))[0] == all);
    const value u = value::of<std::int64_t>({3}, {1, -2, 3}), v = value::of<std::int64_t>({3}, {4, 5, -6});
    CHECK(elements<std::int64_t>(run1("i,i", {u, v}))[0] == 4 - 10 - 18);
}

TEST_CASE("Einsum: '...' axes broadcast against each other, a label of extent 1 broadcasts, three operands") {
    std::mt19937 rng(5);
    // [2,1 | 3,4] x [5 | 4,2]: the '...' axes [2,1] and [5] broadcast to [2,5].
    const value a = random_value<float>(rng, {2, 1, 3, 4}, -3, 3), b = random_value<float>(rng, {5, 4, 2}, -3, 3);
    const value y = run1("...ij,...jk->...ik", {a, b});
    REQUIRE(y.dims() == exec::shape{2, 5, 3, 2});
    const auto av = elements<float>(a), bv = elements<float>(b), yv = elements<float>(y);
    for (int p = 0; p < 2; ++p)
        for (int q = 0; q < 5; ++q)
            for (int i = 0; i < 3; ++i)
                for (int k = 0; k < 2; ++k) {
                    float s = 0;
                    for (int j = 0; j < 4; ++j) s += av[static_cast<std::size_t>((p * 3 + i) * 4 + j)] * bv[static_cast<std::size_t>((q * 4 + j) * 2 + k)];
                    CHECK(yv[static_cast<std::size_t>(((p * 5 + q) * 3 + i) * 2 + k)] == s);
                }
    // Implicit with '...': the '...' axes first, then the labels that occur once.
    CHECK(elements<float>(run1("...ij,...jk", {a, b})) == yv);
    // A label of extent 1 in one term broadcasts against the other's (numpy.einsum's rule).
    const value c = value::of<float>({3, 1}, {1, 2, 3}), e = random_value<float>(rng, {3, 4}, -3, 3);
    const value ce = run1("ij,ij->ij", {c, e});
    REQUIRE(ce.dims() == exec::shape{3, 4});
    for (std::size_t i = 0; i < 3; ++i)
        for (std::size_t j = 0; j < 4; ++j) CHECK(elements<float>(ce)[i * 4 + j] == static_cast<float>(i + 1) * elements<float>(e)[i * 4 + j]);
    // i,j,k->ijk: an outer product of three (int32).
    const value p = value::of<std::int32_t>({2}, {1, 2}), q = value::of<std::int32_t>({3}, {3, 4, 5}), s = value::of<std::int32_t>({2}, {-1, 7});
    const value o = run1("i,j,k->ijk", {p, q, s});
    REQUIRE(o.dims() == exec::shape{2, 3, 2});
    for (std::size_t i = 0; i < 2; ++i)
        for (std::size_t j = 0; j < 3; ++j)
            for (std::size_t k = 0; k < 2; ++k)
                CHECK(elements<std::int32_t>(o)[(i * 3 + j) * 2 + k] ==
                      elements<std::int32_t>(p)[i] * elements<std::int32_t>(q)[j] * elements<std::int32_t>(s)[k]);
}

TEST_CASE("Einsum: a malformed equation or mismatched inputs are refused, naming the node and what is wrong") {
    const value m = value::of<float>({2, 3}, {1, 2, 3, 4, 5, 6}), n = value::of<float>({4, 2}, {1, 2, 3, 4, 5, 6, 7, 8});
    auto error = [](const std::string& equation, const std::vector<value>& xs) {
        einsum_graph e(equation, xs.size());
        const exec::executor run(e.g);
        std::map<std::string, value> in;
        for (std::size_t i = 0; i < xs.size(); ++i) in.emplace("x" + std::to_string(i), xs[i]);
        return run_error(run, in);
    };
    CHECK(error("ij,jk->ik", {m}).find("'e'") != std::string::npos);
    CHECK(error("ij,jk->ik", {m}).find("2 input terms for 1 inputs") != std::string::npos);
    CHECK(error("ij,jk->ik", {m, n}).find("label 'j' has extent 4 in input 1 and 3 elsewhere") != std::string::npos);
    CHECK(error("ij->iz", {m}).find("output label 'z' is in no input") != std::string::npos);
    CHECK(error("ij->ii", {m}).find("output label 'i' occurs twice") != std::string::npos);
    CHECK(error("ijk->i", {m}).find("input 0 has rank 2, its term 'ijk' names 3 axes") != std::string::npos);
    CHECK(error("i2->i", {m}).find("holds something other than letters") != std::string::npos);
    CHECK(error("ii->i", {m}).find("label 'i' has extent 3 in input 0 and 2 elsewhere") != std::string::npos);
    CHECK(error("...j->j", {m}).find("'...' axes the output does not keep") != std::string::npos);
    CHECK(error("ij,jk", {m, value::of<double>({3, 1}, {1, 2, 3})}).find("input 1 is double, input 0 is float") != std::string::npos);
    CHECK(error("i", {value::zeros(dtype::boolean, {2})}).find("no kernel for element type bool") != std::string::npos);
}

}  // namespace einsum_tests
