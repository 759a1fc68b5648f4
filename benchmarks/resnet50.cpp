// The whole ResNet-50-shaped graph on oneDNN, fp32, the machine's threads (2 here), batch 1
// and 8: ms and GFLOP/s (8.18 GFLOP per image: 2 x MACs of the convs and the fc), against the
// machine's sgemm peak measured in the same process.
//
//   fused    - partitioned by make_fused_property (conv + bn + add + relu, conv + bn + act),
//              fused nodes on fused_conv kernels, the rest on single oneDNN primitives
//   unfused  - one oneDNN primitive per op, format any (the best unfused run)
//   plain    - one oneDNN primitive per op, plain NCHW (a naive integration)
//   peak     - dnnl_sgemm and the matmul primitive, 2048 x 2048 x 2048: the machine's measured
//              fp32 peak (the better of the two)
// and, after the timings, the bytes of the fused nodes' outputs as the executor's liveness plan
// places them, against a pool reusing only same-size buffers (run_stats::planned_bytes).
//
// Timed by Google Benchmark (gbench.hpp: repetitions, random interleaving, medians; its flags
// pass through), with FLOP/s per variant and the ratios of medians after the table; the
// outputs of the three are compared (max abs difference) before anything is timed.
// usage: resnet50 [--batch B ...] [--image N] [--check] [--benchmark_...]
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <map>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include <oneapi/dnnl/dnnl.hpp>

#include "gbench.hpp"
#include "sgmatch/exec/executor.hpp"
#include "sgmatch/graph/builders.hpp"
#include "sgmatch/onednn/property.hpp"
#include "sgmatch/partition/partition.hpp"
#include "sgmatch/sgmatch.hpp"

using namespace sgmatch;
using namespace sgmatch::ops;
using clk = std::chrono::steady_clock;

namespace {

double ms_since(clk::time_point t0) { return std::chrono::duration<double, std::milli>(clk::now() - t0).count(); }

// dnnl_sgemm on square matrices: GFLOP/s, best of a few.
double sgemm_peak() {
    const dnnl_dim_t n = 2048;
    std::vector<float> a(static_cast<std::size_t>(n * n), 0.5f), b(a), c(a);
    double best = 0;
    for (int i = 0; i < 5; ++i) {
        const auto t0 = clk::now();
        dnnl_sgemm('N', 'N', n, n, n, 1.0f, a.data(), n, b.data(), n, 0.0f, c.data(), n);
        best = std::max(best, 2.0 * n * n * n / (ms_since(t0) / 1e3) / 1e9);
    }
    return best;
}

// The matmul primitive on the same sizes (oneDNN's brgemm kernels): GFLOP/s, best of a few.
double matmul_peak() {
    const std::int64_t n = 2048;
    const auto md = onednn::plain_desc({n, n});
    std::vector<float> a(static_cast<std::size_t>(n * n), 0.5f), b(a), c(a);
    const auto pd = onednn::compat::matmul_pd(onednn::cpu_engine(), md, md, dnnl::memory::desc(), md);
    dnnl::matmul mm(pd);
    dnnl::stream s(onednn::cpu_engine());
    double best = 0;
    for (int i = 0; i < 6; ++i) {
        const auto t0 = clk::now();
        mm.execute(s, {{DNNL_ARG_SRC, onednn::tensor::view(a.data(), {n, n}).memory()},
                       {DNNL_ARG_WEIGHTS, onednn::tensor::view(b.data(), {n, n}).memory()},
                       {DNNL_ARG_DST, onednn::tensor::view(c.data(), {n, n}).memory()}});
        s.wait();
        best = std::max(best, 2.0 * n * n * n / (ms_since(t0) / 1e3) / 1e9);
    }
    return best;
}

}  // namespace

int main(int argc, char** argv) {
    std::int64_t image = 224;
    std::vector<std::int64_t> batches;
    bool check = false;
    std::vector<char*> rest{argv[0]};  // what is left for Google Benchmark
    for (int i = 1; i < argc; ++i) {
        const std::string a = argv[i];
        if (a == "--batch" && i + 1 < argc) batches.push_back(std::atoll(argv[++i]));
        else if (a == "--image" && i + 1 < argc) image = std::atoll(argv[++i]);
        else if (a == "--check") check = true;
        else rest.push_back(argv[i]);
    }
    if (check) image = 64, batches = {1};
    if (batches.empty()) batches = {1, 8};
    if (!check) std::printf("measured fp32 peak: dnnl_sgemm %.0f GFLOP/s, matmul primitive %.0f GFLOP/s\n", sgemm_peak(), matmul_peak());
    int failures = 0;
    struct memory_row {
        std::int64_t batch;
        std::size_t planned, pooled;
    };
    std::vector<memory_row> memory;
    // Per batch: the three executors and their input, alive until the benchmarks have run.
    struct bench_case {
        graph g, fused;
        std::vector<std::unique_ptr<const exec::executor>> runs;
        std::map<std::string, reference::array> in;
    };
    std::vector<std::unique_ptr<bench_case>> cases;
    std::vector<sgbench::ratio> ratios;
    static const char* names[] = {"fused", "unfused", "plain"};
    for (std::int64_t batch : batches) {
        auto c = std::make_unique<bench_case>();
        c->g = build::resnet50(batch, image, /*data_seed=*/2026);
        c->fused = c->g;
        backend<graph> b("bench");
        b.add(onednn::make_fused_property<graph>("cbar", op<Conv>() >> op<BatchNorm>() >> op<Add>(any()) >> op<Relu>()));
        b.add(onednn::make_fused_property<graph>("cba", op<Conv>() >> optional(op<BatchNorm>()) >> optional(op<Relu>())));
        std::size_t accepted = 0;
        for (const auto& p : b.properties()) accepted += apply_property(c->fused, p).accepted;
        if (accepted != 53) {
            std::fprintf(stderr, "expected 53 fused nodes, got %zu\n", accepted);
            return 1;
        }
        std::mt19937 rng(9);
        std::uniform_real_distribution<float> d(-1.0f, 1.0f);
        reference::array x = xt::zeros<float>({static_cast<std::size_t>(batch), std::size_t(3),
                                               static_cast<std::size_t>(image), static_cast<std::size_t>(image)});
        for (auto& v : x) v = d(rng);
        c->in = {{"data", x}};
        c->runs.push_back(std::make_unique<const exec::executor>(c->fused, exec::mode::onednn));
        c->runs.push_back(std::make_unique<const exec::executor>(c->g, exec::mode::onednn));
        c->runs.push_back(std::make_unique<const exec::executor>(c->g, exec::mode::onednn_plain));
        const auto y0 = (*c->runs[0])(c->in).at(0), y1 = (*c->runs[1])(c->in).at(0), y2 = (*c->runs[2])(c->in).at(0);
        double diff = 0, scale = 1;
        for (std::size_t i = 0; i < y0.size(); ++i) {
            diff = std::max({diff, static_cast<double>(std::fabs(y0.data()[i] - y1.data()[i])),
                             static_cast<double>(std::fabs(y2.data()[i] - y1.data()[i]))});
            scale = std::max(scale, static_cast<double>(std::fabs(y1.data()[i])));
        }
        std::printf("batch %lld: 53 fused nodes; fused, unfused and plain outputs differ by %.2g at most\n", static_cast<long long>(batch), diff);
        if (!(diff <= 1e-4 * scale)) {
            std::fprintf(stderr, "batch %lld: results differ by %g\n", static_cast<long long>(batch), diff);
            ++failures;
        }
        if (check) continue;
        exec::run_stats mem;
        (void)(*c->runs[0])(c->in, &mem);
        memory.push_back({batch, mem.planned_bytes, mem.pooled_bytes});
        // GFLOP/s of each variant: 8.18 GFLOP per 224x224 image.
        const double flop = 8.18e9 * static_cast<double>(batch) * static_cast<double>(image * image) / (224.0 * 224.0);
        const std::string b_id = "b" + std::to_string(batch);
        for (std::size_t v = 0; v < 3; ++v) {
            const bench_case* k = c.get();
            benchmark::RegisterBenchmark((std::string(names[v]) + "/" + b_id).c_str(), [k, v, flop](benchmark::State& st) {
                for (auto _ : st) benchmark::DoNotOptimize((*k->runs[v])(k->in));
                st.counters["FLOP/s"] = benchmark::Counter(flop, benchmark::Counter::kIsIterationInvariantRate);
            })->Unit(benchmark::kMillisecond)->UseRealTime();
        }
        ratios.push_back({"batch " + std::to_string(batch) + " unfused / fused", "unfused/" + b_id, "fused/" + b_id, ""});
        ratios.push_back({"batch " + std::to_string(batch) + " plain / fused", "plain/" + b_id, "fused/" + b_id, ""});
        cases.push_back(std::move(c));
    }
    if (failures) return 1;
    if (check) {
        std::printf("check: fused, unfused and plain runs agree\n");
        return 0;
    }
    const int rc = sgbench::run(static_cast<int>(rest.size()), rest.data(), ratios);
    // The fused nodes' outputs: placed by the liveness plan, against what a pool reusing only
    // same-size buffers holds for them (the handling without a plan).
    std::printf("\n| batch | fused outputs, planned MiB | same-size pool MiB | planned / pool |\n|---|---|---|---|\n");
    for (const auto& m : memory)
        std::printf("| %lld | %.1f | %.1f | %.2f |\n", static_cast<long long>(m.batch), m.planned / 1048576.0, m.pooled / 1048576.0,
                    m.pooled ? static_cast<double>(m.planned) / static_cast<double>(m.pooled) : 0.0);
    return rc;
}
