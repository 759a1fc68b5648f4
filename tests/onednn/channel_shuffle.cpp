// A channel shuffle written out as exporters emit it (onednn/channel_shuffle.hpp): Reshape ->
// Transpose -> Reshape recognised by the ready-made backend as one fused node (one reorder in
// the source's layout), against the reference kernels running the three ops; forms that are no
// shuffle declined with the reason.
#include <doctest/doctest.h>

#include <cstdint>
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

struct shuffle_form {
    const char* what;
    std::vector<std::int64_t> x;      // the source's shape
    std::vector<std::int64_t> split;  // the first Reshape's
    std::vector<std::int64_t> perm;
    bool after_conv = false;          // the source a conv's output (channels last on oneDNN)
    bool declared = true;
};

// x (through a 1x1 conv or Add(., 0.5)) -> Reshape(split) -> Transpose(perm) -> Reshape(x's
// shape) -> Relu.
graph shuffle_graph(const shuffle_form& f, std::mt19937& rng) {
    graph g;
    auto in = g.add_input("x", tensor_type{dtype::f32, f.x});
    node_id x;
    if (f.after_conv) {
        const std::int64_t C = f.x[1];
        x = g.add_op("Conv", "conv", {in, g.add_constant("w", {C, C, 1, 1}, test::random_values(static_cast<std::size_t>(C * C), rng, 0.5f))});
    } else {
        x = g.add_op("Add", "shift", {in, g.add_scalar("c", 0.5f)});
    }
    if (f.declared) g.set_type({x, 0}, tensor_type{dtype::f32, f.x});
    auto split = g.add_op("Reshape", "split", {x, g.add_constant("split.shape", {static_cast<std::int64_t>(f.split.size())},
                                                                 std::vector<float>(f.split.begin(), f.split.end()))});
    auto t = g.add_op("Transpose", "swap", {split}, {{"perm", attribute::ints(f.perm)}});
    auto back = g.add_op("Reshape", "join", {t, g.add_constant("join.shape", {static_cast<std::int64_t>(f.x.size())},
                                                               std::vector<float>(f.x.begin(), f.x.end()))});
    if (f.declared) {
        std::vector<std::int64_t> swapped(f.split.size());
        for (std::size_t i = 0; i < swapped.size(); ++i) swapped[i] = f.split[static_cast<std::size_t>(f.perm[i])];
        g.set_type({split, 0}, tensor_type{dtype::f32, f.split});
        g.set_type({t, 0}, tensor_type{dtype::f32, swapped});
        g.set_type({back, 0}, tensor_type{dtype::f32, f.x});
    }
    g.mark_output(g.add_op("Relu", "relu", {back}));
    return g;
}

}  // namespace

TEST_CASE("a written-out channel shuffle is one fused node, equal to the ops it replaces, in plain and channels-last sources") {
    onednn::register_backend<graph>();
    std::mt19937 rng(41);
    const shuffle_form taken[] = {
        {"ShuffleNet, 2 groups, plain", {2, 6, 3, 3}, {2, 2, 3, 3, 3}, {0, 2, 1, 3, 4}, false, true},
        {"ShuffleNet, 2 groups, after a conv", {2, 16, 5, 5}, {2, 2, 8, 5, 5}, {0, 2, 1, 3, 4}, true, true},
        {"3 groups, after a conv", {1, 24, 4, 4}, {1, 3, 8, 4, 4}, {0, 2, 1, 3, 4}, true, true},
        {"4 groups of the last axis, rank 3", {2, 5, 12}, {2, 5, 4, 3}, {0, 1, 3, 2}, false, true},
    };
    for (const auto& f : taken) {
        CAPTURE(std::string(f.what));
        graph g = shuffle_graph(f, rng);
        const std::map<std::string, array> in{{"x", test::random_array(f.x, rng, 1.0f)}};
        const array want = exec::executor(g)(in).at(0);
        CHECK(test::report(apply_backend(g, "onednn"), "onednn.channel_shuffle").accepted == 1);
        std::size_t left = 0;
        for (node_id n : g.nodes()) left += g.kind(n) == node_kind::op && g.op_name(n) == "Transpose" ? 1 : 0;
        CHECK(left == 0);
        exec::run_stats st;
        const array got = exec::executor(g, exec::mode::onednn)(in, &st).at(0);
        CHECK(st.fallbacks == 0);
        REQUIRE(got.shape() == want.shape());
        CHECK(test::max_rel_error(got, want) <= (f.after_conv ? 1e-5 : 0.0));  // a permutation: exact after an Add
    }
}

TEST_CASE("Reshape -> Transpose -> Reshape that is no channel shuffle is declined with the reason") {
    onednn::register_backend<graph>();
    std::mt19937 rng(42);
    struct declined {
        shuffle_form f;
        const char* reason;
    };
    const declined cases[] = {
        {{"the spatial dims swapped", {1, 4, 2, 3}, {1, 2, 2, 2, 3}, {0, 1, 2, 4, 3}, false, true},
         "does not swap the two parts"},
        {{"shapes not declared", {1, 4, 2, 3}, {1, 2, 2, 2, 3}, {0, 2, 1, 3, 4}, false, false}, "a shape is unknown"},
    };
    for (const auto& c : cases) {
        CAPTURE(std::string(c.f.what));
        graph g = shuffle_graph(c.f, rng);
        const std::map<std::string, array> in{{"x", test::random_array(c.f.x, rng, 1.0f)}};
        const array want = exec::executor(g)(in).at(0);
        const auto reports = apply_backend(g, "onednn");
        const auto& r = test::report(reports, "onednn.channel_shuffle");
        CHECK(r.accepted == 0);
        CHECK(test::said(r, c.reason));
        CHECK(test::max_rel_error(exec::executor(g, exec::mode::onednn)(in).at(0), want) == 0);
    }
}
