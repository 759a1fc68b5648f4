// sgmatch's side of benchmarks/models/bench.py: one model in one process, driven over stdin.
//
//   sgmatch_worker model.onnx BACKEND BATCH input.npy expected.npy THREADS
//
// BACKEND is onednn or onednn.regions (partitioned by that backend, then run) or none (not
// partitioned: one oneDNN primitive per op, the unfused baseline). Loads the model (batch bound to
// BATCH), partitions it and builds the executor (load_ms), runs once (first_run_ms; oneDNN
// primitives are created there), compares with expected.npy and prints one JSON line. Then each
// line "K" on stdin runs K times and prints {"ms": [...], "planned_bytes": .., "pooled_bytes": ..}
// (run_stats of the last run); end of input ends the process.
// With --check (no stdin loop) it exits 1 when the output differs from expected.npy by more than
// 1e-4 + 1e-3 * |expected|: the smoke test in the test preset.
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <iostream>
#include <string>
#include <vector>

#include <sgmatch/exec/executor.hpp>
#include <sgmatch/exec/subgraph.hpp>
#include <sgmatch/onednn/backend.hpp>
#include <sgmatch/onnx/load.hpp>
#include <sgmatch/reference/npy.hpp>

namespace {

double ms_since(std::chrono::steady_clock::time_point t0) {
    return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
}

}  // namespace

int main(int argc, char** argv) {
    std::vector<std::string> args(argv + 1, argv + argc);
    const bool check = !args.empty() && args.back() == "--check";
    if (check) args.pop_back();
    if (args.size() != 6) {
        std::fprintf(stderr, "usage: sgmatch_worker model.onnx onednn|onednn.regions|none BATCH input.npy expected.npy THREADS [--check]\n");
        return 2;
    }
    const std::string& backend = args[1];
    // The benchmark is the framework here: it decides the threads, before oneDNN first runs.
    setenv("OMP_NUM_THREADS", args[5].c_str(), 1);
    try {
        using sgmatch::exec::value;
        const auto x = sgmatch::reference::read_npy(args[3]);
        const auto want = sgmatch::reference::read_npy(args[4]);

        auto t0 = std::chrono::steady_clock::now();
        sgmatch::onnx::load_options opt;
        opt.batch = std::stoll(args[2]);
        sgmatch::onnx::model m = sgmatch::onnx::load(args[0], opt);
        if (backend == "onednn") {
            sgmatch::onednn::register_backend<sgmatch::graph>();
            sgmatch::apply_backend(m.graph, backend);
        } else if (backend == "onednn.regions") {
            sgmatch::exec::register_region_backend();
            sgmatch::apply_backend(m.graph, backend);
        } else if (backend != "none") {
            std::fprintf(stderr, "sgmatch_worker: unknown backend %s\n", backend.c_str());
            return 2;
        }
        const sgmatch::exec::executor run(m.graph, sgmatch::exec::mode::onednn);
        const double load_ms = ms_since(t0);

        const std::map<std::string, value> inputs{
            {m.inputs.at(0), value::view(x.data(), sgmatch::dtype::f32, sgmatch::exec::shape(x.shape().begin(), x.shape().end()))}};
        t0 = std::chrono::steady_clock::now();
        sgmatch::exec::run_stats st;
        const value y = run.run(inputs, &st).at(0);
        const double first_ms = ms_since(t0);

        bool ok = y.size() == static_cast<std::int64_t>(want.size()) &&
                  std::equal(want.shape().begin(), want.shape().end(), y.dims().begin(), y.dims().end());
        double diff = 0;
        if (ok) {
            const auto got = y.as_constant();
            for (std::size_t i = 0; i < want.size(); ++i) {
                const double d = std::abs(got.at(i) - want.data()[i]);
                diff = std::max(diff, d);
                ok = ok && d <= 1e-4 + 1e-3 * std::abs(want.data()[i]);
            }
        }
        std::printf("{\"load_ms\": %.3f, \"first_run_ms\": %.3f, \"max_abs_diff\": %s, \"ok\": %s, \"nodes\": %zu, "
                    "\"fused_nodes\": %zu, \"onednn_nodes\": %zu, \"reference_nodes\": %zu, \"typed_nodes\": %zu, "
                    "\"fallbacks\": %zu}\n",
                    load_ms, first_ms, ok || y.size() == static_cast<std::int64_t>(want.size()) ? std::to_string(diff).c_str() : "null",
                    ok ? "true" : "false", m.graph.node_count(), st.fused_nodes, st.onednn_nodes, st.reference_nodes,
                    st.typed_nodes, st.fallbacks);
        std::fflush(stdout);
        if (check) return ok ? 0 : 1;

        std::string line;
        while (std::getline(std::cin, line)) {
            std::string out = "{\"ms\": [";
            sgmatch::exec::run_stats last;
            for (int k = std::atoi(line.c_str()); k > 0; --k) {
                t0 = std::chrono::steady_clock::now();
                last = {};
                (void)run.run(inputs, &last);
                char buf[32];
                std::snprintf(buf, sizeof buf, "%s%.4f", out.back() == '[' ? "" : ", ", ms_since(t0));
                out += buf;
            }
            // The fused nodes' outputs as the liveness plan places them, and what a pool reusing
            // only same-size buffers holds for them (0 and 0: unfused, or the plan's first run).
            std::printf("%s], \"planned_bytes\": %zu, \"pooled_bytes\": %zu}\n", out.c_str(), last.planned_bytes, last.pooled_bytes);
            std::fflush(stdout);
        }
        return 0;
    } catch (const std::exception& e) {
        std::fprintf(stderr, "sgmatch_worker: %s\n", e.what());
        return 2;
    }
}
