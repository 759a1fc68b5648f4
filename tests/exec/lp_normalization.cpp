// LpNormalization (ops/nn.hpp, exec/kernels/nn.hpp) against brute force written here from the
// ONNX definition (x divided by its L1 or L2 norm along the axis), on the reference kernel and on
// oneDNN's primitives, in the executor's run_stats; its attribute refusals name the node.
#include <doctest/doctest.h>

#include <cmath>
#include <map>
#include <random>
#include <string>
#include <tuple>
#include <vector>

#include "sgmatch/exec/executor.hpp"
#include "support/values.hpp"

using namespace sgmatch;
using exec::value;

// Named: the unity build compiles this file with other tests; its helpers stay apart from theirs.
namespace lp_normalization_tests {

using test::count;
using test::elements;
using test::random_value;
using test::run_error;

// The ONNX definition, one output element at a time: x[i] / (sum over the axis of |x|^p)^(1/p).
std::vector<float> brute_force(const std::vector<float>& x, const std::vector<std::int64_t>& dims, std::size_t axis, int p) {
    std::int64_t inner = 1;
    for (std::size_t i = axis + 1; i < dims.size(); ++i) inner *= dims[i];
    const std::int64_t len = dims[axis];
    std::vector<float> y(x.size());
    for (std::size_t e = 0; e < x.size(); ++e) {
        const auto i = static_cast<std::int64_t>(e);
        const std::int64_t first = i - (i / inner) % len * inner;  // the same position, index 0 on the axis
        double norm = 0;
        for (std::int64_t k = 0; k < len; ++k) {
            const double v = std::abs(x[static_cast<std::size_t>(first + k * inner)]);
            norm += p == 1 ? v : v * v;
        }
        y[e] = static_cast<float>(x[e] / (p == 1 ? norm : std::sqrt(norm)));
    }
    return y;
}

TEST_CASE("LpNormalization: L1 and L2 along every axis equal the ONNX definition, on the reference kernel and on oneDNN") {
    std::mt19937 rng(31);
    int cases = 0;
    for (const std::vector<std::int64_t>& dims : {std::vector<std::int64_t>{2, 3, 4, 5}, {7}, {3, 1}, {1, 16, 5, 5}, {2, 6, 9}}) {
        const auto rank = static_cast<std::int64_t>(dims.size());
        for (std::int64_t ax = -rank; ax < rank; ++ax)
            for (int p : {1, 2}) {
                CAPTURE(dims.size());
                CAPTURE(ax);
                CAPTURE(p);
                graph g;
                const node_id n = g.add_op("LpNormalization", "norm", {g.add_input("x", tensor_type{dtype::f32, dims})},
                                           {{"axis", ax}, {"p", std::int64_t{p}}});
                g.set_type({n, 0}, tensor_type{dtype::f32, dims});
                g.mark_output(n);
                const value x = random_value<float>(rng, dims, -3, 3);
                auto want = brute_force(elements<float>(x), dims, static_cast<std::size_t>(ax < 0 ? ax + rank : ax), p);
                for (const exec::mode m : {exec::mode::reference, exec::mode::onednn}) {
                    exec::run_stats stats;
                    const auto out = exec::executor(g, m).run({{"x", x}}, &stats);
                    REQUIRE(out.at(0).dims() == dims);
                    const auto got = elements<float>(out[0]);
                    for (std::size_t i = 0; i < want.size(); ++i) {
                        // A vector of zeros gives 0 / 0 (NaN) in both.
                        if (std::isnan(want[i])) CHECK(std::isnan(got[i]));
                        else CHECK(got[i] == doctest::Approx(want[i]).epsilon(1e-5));
                    }
                    if (m == exec::mode::onednn) CHECK(stats.onednn_nodes == 1);
                    else CHECK(stats.reference_nodes == 1);
                }
                ++cases;
            }
    }
    CHECK(cases == 4 * (4 + 1 + 2 + 4 + 3));
}

TEST_CASE("LpNormalization: a p other than 1 or 2, or an axis beyond the rank, is refused naming the node") {
    for (const auto& [key, v, says] : std::vector<std::tuple<std::string, std::int64_t, std::string>>{{"p", 3, "p"}, {"axis", 2, "axis 2 is out of range"}}) {
        graph g;
        const node_id n = g.add_op("LpNormalization", "norm7", {g.add_input("x", tensor_type{dtype::f32, {2, 3}})});
        g.set_attr(n, key, v);
        g.mark_output(n);
        std::string error;
        try {
            const exec::executor run(g, exec::mode::onednn);
            error = run_error(run, {{"x", value::of<float>({2, 3}, {1, 2, 3, 4, 5, 6})}});
        } catch (const std::exception& e) {
            error = e.what();
        }
        CAPTURE(error);
        CHECK(error.find("norm7") != std::string::npos);
        CHECK(error.find(says) != std::string::npos);
    }
}

}  // namespace lp_normalization_tests
