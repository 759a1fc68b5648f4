// examples/minifw_demo.cpp - sgmatch inside a framework of its own (examples/minifw/): one model
// run on the framework's kernels, then with each lineage integration, each run compared with the
// native one and its counts checked. The framework's user code is the same three lines each time:
// build the graph, (bind), run.
//
// - MXNet Subgraph API style (mxnet_style.hpp): SGMATCH_BACKEND=onednn at bind time; each fused
//   chain a "_sg_onednn" node of the framework's own, computed through sgmatch::exec::node_call.
// - nGraph bridge style (ngraph_style.hpp): capability regions as "_sgmatch_engine" nodes, each
//   compiled once per input-shape signature; the rest on the framework's kernels.
// - ONNX Runtime execution provider style (ort_style.hpp): the framework's own provider interface
//   (GetCapability, Compile, a Session); sgmatch's provider claims the regions and compiles each
//   once; layouts stay blocked inside a region, reordered only at its boundary.
// - sgmatch's own executor over the framework's graph (exec::graph_executor through the adapter):
//   the whole graph as it is, then partitioned in place, its fused nodes read back as payloads.
//
// A test (ctest example.minifw_demo) in the test, asan and clang20 presets; gcc20 and clang17
// compile it.
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <map>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include "minifw/framework.hpp"
#include "minifw/mxnet_style.hpp"
#include "minifw/ngraph_style.hpp"
#include "minifw/ort_style.hpp"
#include "sgmatch/exec/graph_executor.hpp"

namespace {

int failures = 0;
void check(bool ok, const std::string& what) {
    std::printf("  %s: %s\n", ok ? "ok" : "FAILED", what.c_str());
    failures += ok ? 0 : 1;
}

std::shared_ptr<const minifw::Tensor> random_tensor(std::vector<std::int64_t> shape, std::mt19937& rng, float lo, float hi) {
    minifw::Tensor t = minifw::Tensor::zeros(std::move(shape));
    std::uniform_real_distribution<float> d(lo, hi);
    for (float& v : t.data) v = d(rng);
    return std::make_shared<const minifw::Tensor>(std::move(t));
}

// A residual block, a layer sgmatch has no op for (Activation softsign), a BatchNorm with MXNet's
// default fix_gamma=True (no ONNX attribute says "ignore gamma": sgmatch refuses it), a classifier.
// With sgmatch_knows_all, the softsign is a tanh and bn3 keeps gamma: every op is one sgmatch runs.
minifw::Graph make_model(bool sgmatch_knows_all = false) {
    std::mt19937 rng(42);
    minifw::Graph g;
    auto param = [&](const std::string& name, std::vector<std::int64_t> shape, float lo = -0.4f, float hi = 0.4f) {
        return minifw::Entry{g.variable(name, random_tensor(std::move(shape), rng, lo, hi)), 0};
    };
    auto bn = [&](const std::string& name, minifw::Entry x, std::int64_t c, bool fix_gamma) {
        return minifw::Entry{g.op("BatchNorm", name,
                                  {x, param(name + "_gamma", {c}, 0.5f, 1.5f), param(name + "_beta", {c}),
                                   param(name + "_mean", {c}), param(name + "_var", {c}, 0.5f, 2.0f)},
                                  {{"eps", "1e-5"}, {"fix_gamma", fix_gamma ? "True" : "False"}}),
                             0};
    };
    auto act = [&](const std::string& name, minifw::Entry x, const char* type) {
        return minifw::Entry{g.op("Activation", name, {x}, {{"act_type", type}}), 0};
    };
    const minifw::Entry data{g.variable("data"), 0};
    minifw::Entry c1{g.op("Convolution", "conv1", {data, param("conv1_weight", {8, 3, 3, 3}), param("conv1_bias", {8})},
                          {{"kernel", "(3, 3)"}, {"pad", "(1, 1)"}, {"num_filter", "8"}}),
                     0};
    const minifw::Entry r1 = act("relu1", bn("bn1", c1, 8, false), "relu");
    minifw::Entry c2{g.op("Convolution", "conv2", {r1, param("conv2_weight", {8, 8, 3, 3})},
                          {{"kernel", "(3, 3)"}, {"pad", "(1, 1)"}, {"num_filter", "8"}, {"no_bias", "True"}}),
                     0};
    minifw::Entry sum{g.op("elemwise_add", "add", {bn("bn2", c2, 8, false), r1}), 0};
    const minifw::Entry r2 = act("relu2", sum, "relu");
    minifw::Entry p1{g.op("Pooling", "pool1", {r2}, {{"kernel", "(2, 2)"}, {"stride", "(2, 2)"}, {"pool_type", "max"}}), 0};
    const minifw::Entry s1 = act("softsign", p1, sgmatch_knows_all ? "tanh" : "softsign");
    minifw::Entry c3{g.op("Convolution", "conv3", {s1, param("conv3_weight", {16, 8, 1, 1}), param("conv3_bias", {16})},
                          {{"kernel", "(1, 1)"}, {"num_filter", "16"}}),
                     0};
    const minifw::Entry a3 = act("sigmoid3", bn("bn3", c3, 16, /*fix_gamma=*/!sgmatch_knows_all), "sigmoid");
    minifw::Entry gp{g.op("Pooling", "pool2", {a3}, {{"global_pool", "True"}, {"pool_type", "avg"}, {"kernel", "(1, 1)"}}), 0};
    minifw::Entry fl{g.op("Flatten", "flatten", {gp}), 0};
    minifw::Entry fc{g.op("FullyConnected", "fc", {fl, param("fc_weight", {10, 16}), param("fc_bias", {10})},
                          {{"num_hidden", "10"}}),
                     0};
    g.outputs.push_back(fc);
    return g;
}

minifw::Tensor input(std::int64_t batch, std::uint32_t seed) {
    std::mt19937 rng(seed);
    return *random_tensor({batch, 3, 16, 16}, rng, -1.0f, 1.0f);
}

double max_rel_diff(const minifw::Tensor& a, const minifw::Tensor& b) {
    if (a.shape != b.shape) return INFINITY;
    double m = 0;
    for (std::size_t i = 0; i < a.data.size(); ++i)
        m = std::max(m, std::fabs(static_cast<double>(a.data[i]) - b.data[i]) / std::max(1.0, std::fabs(static_cast<double>(b.data[i]))));
    return m;
}

}  // namespace

int main() {
    const minifw::Graph native_model = make_model();
    std::map<std::int64_t, minifw::Tensor> want;
    for (std::int64_t batch : {1, 4}) want[batch] = minifw::run(native_model, {{"data", input(batch, 7)}}).at(0);

    std::printf("MXNet Subgraph API style: SGMATCH_BACKEND=onednn when the framework binds the graph\n");
    {
        minifw::Graph g = make_model();
        setenv("SGMATCH_BACKEND", "onednn", 1);
        const auto reports = minifw_sgmatch::bind(g, sgmatch::environment::read());
        unsetenv("SGMATCH_BACKEND");
        std::size_t fused = 0;
        for (const auto& r : reports) {
            fused += r.accepted;
            if (r.accepted + r.rejected_check > 0)
                std::printf("  %s: %zu fused, %zu declined\n", r.property.c_str(), r.accepted, r.rejected_check);
            for (const auto& [why, n] : r.check_reasons) std::printf("    declined %zux: %s\n", n, why.c_str());
        }
        minifw::RunInfo info;
        const minifw::Tensor got = minifw::run(g, {{"data", input(1, 7)}}, &info).at(0);
        // conv1+bn1+relu1, conv2+bn2+add+relu2, conv3 (its BatchNorm declined), fc
        check(fused == 4 && info.ops_run["_sg_onednn"] == 4, "4 fused nodes, run as the framework's _sg_onednn ops");
        check(info.ops_run["Convolution"] == 0 && info.ops_run["FullyConnected"] == 0, "no Convolution or FullyConnected left");
        check(info.ops_run["BatchNorm"] == 1 && info.ops_run["Activation"] == 2,
              "bn3 (fix_gamma=True) and the softsign and sigmoid after it run on the framework's kernels");
        check(max_rel_diff(got, want[1]) <= 1e-4, "the same numbers as the framework's own run (batch 1)");
        const minifw::Tensor got4 = minifw::run(g, {{"data", input(4, 7)}}).at(0);
        check(max_rel_diff(got4, want[4]) <= 1e-4, "and at batch 4, with the same bound graph");
        // Without SGMATCH_BACKEND the framework runs as it did.
        minifw::Graph h = make_model();
        check(minifw_sgmatch::bind(h, sgmatch::environment::read()).empty() && h.nodes.size() == native_model.nodes.size(),
              "SGMATCH_BACKEND unset: the graph is left as it is");
    }

    std::printf("MXNet Subgraph API style with a selector: SGMATCH_BACKEND=onednn.selectors\n");
    {
        minifw::Graph g = make_model();
        setenv("SGMATCH_BACKEND", "onednn.selectors", 1);
        const auto reports = minifw_sgmatch::bind(g, sgmatch::environment::read());
        unsetenv("SGMATCH_BACKEND");
        minifw::RunInfo info;
        const minifw::Tensor got = minifw::run(g, {{"data", input(1, 7)}}, &info).at(0);
        // conv1+bn1+relu1; conv2+bn2 (its user is the add); conv3 alone (bn3 keeps fix_gamma=True)
        check(reports.size() == 1 && reports[0].accepted == 3 && info.ops_run["_sg_onednn"] == 3,
              "the selector's 3 subgraphs, run as the framework's _sg_onednn ops");
        check(info.ops_run["Convolution"] == 0 && info.ops_run["elemwise_add"] == 1 && info.ops_run["BatchNorm"] == 1,
              "no Convolution left; the add and bn3 on the framework's kernels");
        check(max_rel_diff(got, want[1]) <= 1e-4, "the same numbers as the framework's own run");
    }

    std::printf("nGraph bridge style: capability regions as engine ops, compiled per input-shape signature\n");
    {
        minifw::Graph off = make_model();
        check(minifw_sgmatch::enable_bridge(off, {/*enabled=*/false, 2}) == 0 && off.nodes.size() == native_model.nodes.size(),
              "the flag off: the graph is left as it is");
        minifw::Graph g = make_model();
        const std::size_t engines = minifw_sgmatch::enable_bridge(g, {minifw_sgmatch::bridge_enabled_by_environment(), 2});
        minifw::RunInfo info;
        double diff = 0;
        for (std::int64_t batch : {1, 4, 1, 4, 4}) diff = std::max(diff, max_rel_diff(minifw::run(g, {{"data", input(batch, 7)}}, &info).at(0), want[batch]));
        const auto c = minifw_sgmatch::count_engine_ops(g);
        // conv1 .. pool1 before the softsign; conv3 alone after it (bn3 stays outside); sigmoid3 ..
        // fc after bn3.
        std::printf("  %zu engine ops; compiled %zu times, reused %zu times over 5 runs (batch 1, 4, 1, 4, 4)\n", c.engine_ops,
                    c.misses, c.hits);
        check(engines == 2 && c.engine_ops == 2, "2 engine ops (conv1 .. pool1; sigmoid3 .. fc)");
        check(c.misses == 2 * 2 && c.hits == 2 * 3, "each compiled once per signature (2 misses, 3 hits each)");
        check(info.ops_run["_sgmatch_engine"] == 10 && info.ops_run["Activation"] == 5 && info.ops_run["Convolution"] == 5 &&
                  info.ops_run["BatchNorm"] == 5,
              "softsign, conv3 (a region of one) and bn3 on the framework's kernels");
        check(diff <= 1e-4, "the same numbers as the framework's own run");
    }
    std::printf("ONNX Runtime execution provider style: GetCapability, Compile, a session\n");
    {
        auto provider = std::make_shared<minifw_sgmatch::sgmatch_provider>();
        {
            const minifw::Session session(make_model(), provider);
            minifw::RunInfo info;
            double diff = 0;
            for (std::int64_t batch : {1, 4, 1})
                diff = std::max(diff, max_rel_diff(session.run({{"data", input(batch, 7)}}, &info).at(0), want[batch]));
            std::printf("  %d fused nodes; %zu fused kernels ran inside them; %zu values reordered at region boundaries\n",
                        info.ops_run["_ep_fused"] / 3, provider->fused_kernels(), provider->boundary_reorders());
            check(info.ops_run["_ep_fused"] == 2 * 3 && provider->states_created() == 2, "2 regions claimed, compiled and created once");
            // Inside: conv1+bn1+relu1 and conv2+bn2+add+relu2 (then the max pool) in the first,
            // the fc in the second, on blocked layouts; each region's one output reordered to plain.
            check(provider->fused_kernels() == 3 * 3, "3 fused kernels inside the regions each run");
            check(provider->boundary_reorders() == 2 * 3, "one reorder per region output, none inside");
            check(info.ops_run["Activation"] == 3 && info.ops_run["Convolution"] == 3 && info.ops_run["BatchNorm"] == 3,
                  "softsign, conv3 (a region of one: left to the framework) and bn3 on the framework's kernels");
            check(diff <= 1e-4, "the same numbers as the framework's own run");
        }
        check(provider->states_released() == 2, "the states released with the session");
    }
    std::printf("sgmatch's executor over the framework's graph, read through the adapter (exec::graph_executor)\n");
    {
        minifw::Graph odd = make_model();
        const minifw_view odd_view(odd, nullptr);
        std::string refusal;
        try {
            const sgmatch::exec::graph_executor<minifw_view> e(odd_view);
        } catch (const sgmatch::exec::exec_error& e) {
            refusal = e.what();
        }
        check(refusal.find("softsign") != std::string::npos || refusal.find("bn3") != std::string::npos,
              "a graph with ops sgmatch cannot run is refused, by node: " + refusal);

        minifw::Graph g = make_model(/*sgmatch_knows_all=*/true);
        const minifw::Tensor x = input(4, 9);
        const minifw::Tensor native = minifw::run(g, {{"data", x}}).at(0);
        const minifw_view view(g, nullptr);
        const sgmatch::exec::graph_executor<minifw_view> plain(view);
        check(plain.input_names() == std::vector<std::string>{"data"}, "one graph input, 'data'; the parameters are constants");
        check(max_rel_diff(minifw_sgmatch::tensors(plain.run(minifw_sgmatch::views({&x}))).at(0), native) <= 1e-4,
              "the whole graph on sgmatch's reference kernels: the framework's numbers");

        setenv("SGMATCH_BACKEND", "onednn", 1);
        minifw_sgmatch::bind(g, sgmatch::environment::read());  // partitioned in place, MXNet style
        unsetenv("SGMATCH_BACKEND");
        const minifw_view bound(g, nullptr);
        const sgmatch::exec::graph_executor<minifw_view> fused(bound, sgmatch::exec::mode::onednn);
        sgmatch::exec::run_stats st;
        const minifw::Tensor got = minifw_sgmatch::tensors(fused.run(minifw_sgmatch::views({&x}), &st)).at(0);
        // conv1+bn1+relu1, conv2+bn2+add+relu2, conv3+bn3+sigmoid3, fc: the _sg_onednn nodes'
        // payloads, read through the adapter; the pools, the tanh and the flatten on oneDNN's.
        check(st.fused_nodes == 4, "the framework's 4 _sg_onednn nodes run as fused kernels (" + std::to_string(st.fused_nodes) + ")");
        check(max_rel_diff(got, native) <= 1e-4, "the partitioned graph on oneDNN: the framework's numbers");
    }
    std::printf("%s\n", failures == 0 ? "all integrations agree with the framework" : "FAILURES");
    return failures == 0 ? 0 : 1;
}
