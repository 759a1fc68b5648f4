// A LayerNorm written out as PyTorch exports it (onednn/layer_norm.hpp): recognised by the
// ready-made backend as one fused node and run on oneDNN's layer normalization, against the
// reference kernels running the written-out ops; the forms it cannot take declined with the
// reason.
#include <doctest/doctest.h>

#include <map>
#include <random>
#include <string>
#include <vector>

#include "sgmatch/exec/executor.hpp"
#include "sgmatch/onednn/backend.hpp"
#include "support/numeric.hpp"
#include "support/reports.hpp"

using namespace sgmatch;
using reference::array;

namespace {

struct ln_form {
    std::vector<std::int64_t> dims;  // of x
    std::vector<std::int64_t> axes;  // of both means
    std::int64_t keepdims = 1;       // of the second mean
    bool gamma = true, beta = true;
    bool scalar_gamma = false;
    std::vector<std::int64_t> var_axes = {};  // of the second mean, when not `axes`
    bool two_to_the = false;                  // Pow(2, d) where the form has Pow(d, 2)
};

// x -> Add(x, 0.5) (so x is computed) -> the written-out LayerNorm -> Relu.
graph written_out(const ln_form& f, std::mt19937& rng) {
    graph g;
    auto x = g.add_input("x", tensor_type{dtype::f32, f.dims});
    auto xin = g.add_op("Add", "shift", {x, g.add_scalar("half", 0.5f)});
    g.set_type({xin, 0}, tensor_type{dtype::f32, f.dims});
    std::int64_t inner = 1;
    std::vector<std::int64_t> norm;
    for (auto a : f.axes) {
        const auto d = f.dims[static_cast<std::size_t>(a < 0 ? a + static_cast<std::int64_t>(f.dims.size()) : a)];
        inner *= d;
        norm.push_back(d);
    }
    auto mean = g.add_op("ReduceMean", "mean", {xin}, {{"axes", attribute::ints(f.axes)}});
    auto d = g.add_op("Sub", "centered", {xin, mean});
    const node_id two = g.add_scalar("two", 2.0f);
    auto sq = f.two_to_the ? g.add_op("Pow", "squared", {two, d}) : g.add_op("Pow", "squared", {d, two});
    auto var = g.add_op("ReduceMean", "var", {sq},
                        {{"axes", attribute::ints(f.var_axes.empty() ? f.axes : f.var_axes)}, {"keepdims", f.keepdims}});
    auto ve = g.add_op("Add", "var_eps", {var, g.add_scalar("eps", 1e-5f)});
    auto sd = g.add_op("Sqrt", "std", {ve});
    input_ref y = g.add_op("Div", "normalized", {d, sd});
    if (f.gamma)
        y = g.add_op("Mul", "scaled", {y, f.scalar_gamma ? g.add_scalar("gamma", 1.5f)
                                                          : g.add_constant("gamma", norm, test::random_values(static_cast<std::size_t>(inner), rng, 1.0f))});
    if (f.beta) y = g.add_op("Add", "shifted", {y, g.add_constant("beta", norm, test::random_values(static_cast<std::size_t>(inner), rng, 1.0f))});
    g.mark_output(g.add_op("Relu", "relu", {y}));
    return g;
}

}  // namespace

TEST_CASE("a written-out LayerNorm is one fused node on oneDNN's layer normalization, equal to the ops it replaces") {
    onednn::register_backend<graph>();
    std::mt19937 rng(21);
    const ln_form taken[] = {
        {{2, 5, 8}, {-1}},                             // PyTorch's nn.LayerNorm(8)
        {{2, 5, 8}, {1, 2}},                           // nn.LayerNorm([5, 8])
        {{3, 16}, {-1}, 1, false, false},              // no affine parameters
        {{3, 16}, {-1}, 1, true, false, true},         // a scalar gamma, no beta
    };
    for (const auto& f : taken) {
        CAPTURE(f.dims.size());
        CAPTURE(f.axes.size());
        CAPTURE(f.gamma);
        graph g = written_out(f, rng);
        const std::map<std::string, array> in{{"x", test::random_array(f.dims, rng, 2.0f)}};
        const array want = exec::executor(g)(in).at(0);
        CHECK(test::report(apply_backend(g, "onednn"), "onednn.layer_norm").accepted == 1);
        std::size_t left = 0;  // the written-out ops are gone
        for (node_id n : g.nodes())
            left += g.kind(n) == node_kind::op && (g.op_name(n) == "ReduceMean" || g.op_name(n) == "Sqrt");
        CHECK(left == 0);
        exec::run_stats st;
        const array got = exec::executor(g, exec::mode::onednn)(in, &st).at(0);
        CHECK(st.fused_nodes == 1);
        CHECK(st.fallbacks == 0);
        CHECK(test::max_rel_error(got, want) <= 1e-4);
    }
}

TEST_CASE("2 to the power x - mean is no LayerNorm: not fused, whatever else matches") {
    // Found by the differential test synthesized from layer_norm_written_out (tests/testing):
    // Pow's operands were matched in either order, and 2^d was fused as d^2 (0.2 off, no error).
    std::mt19937 rng(5);
    ln_form f{{2, 5, 8}, {-1}};
    f.two_to_the = true;
    graph g = written_out(f, rng);
    const std::map<std::string, array> in{{"x", test::random_array(f.dims, rng, 2.0f)}};
    const array want = exec::executor(g)(in).at(0);
    CHECK(test::report(apply_backend(g, onednn::make_backend<graph>()), "onednn.layer_norm").accepted == 0);
    CHECK(test::max_rel_error(exec::executor(g)(in).at(0), want) <= 1e-4);
}

TEST_CASE("written-out LayerNorms oneDNN does not compute are declined with the reason") {
    onednn::register_backend<graph>();
    std::mt19937 rng(22);
    struct declined {
        ln_form f;
        const char* reason;
    };
    const declined cases[] = {
        {{{2, 5, 8}, {1}, 1, false, false}, "the normalized axes are not the last ones"},
        {{{2, 5, 8}, {-1}, 1, true, true, false, {1, 2}}, "the means are not over the same given axes, kept as 1"},
    };
    for (const auto& c : cases) {
        CAPTURE(std::string(c.reason));
        graph g = written_out(c.f, rng);
        const std::map<std::string, array> in{{"x", test::random_array(c.f.dims, rng, 2.0f)}};
        const array want = exec::executor(g)(in).at(0);
        const auto reports = apply_backend(g, "onednn");
        const auto& r = test::report(reports, "onednn.layer_norm");
        CHECK(r.accepted == 0);
        CHECK(test::said(r, c.reason));
        CHECK(test::max_rel_error(exec::executor(g, exec::mode::onednn)(in).at(0), want) <= 1e-4);
    }
}
