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
// Variants interleaved, order rotated each round, medians of per-round times; the outputs of
// fused and unfused are compared (max abs difference) before timing.
// usage: resnet50 [--rounds R] [--batch B ...] [--image N] [--check]
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <random>
#include <string>
#include <vector>

#include <oneapi/dnnl/dnnl.hpp>

#include "sgmatch/exec/executor.hpp"
#include "sgmatch/graph/builders.hpp"
#include "sgmatch/onednn/property.hpp"
#include "sgmatch/partition/partition.hpp"
#include "sgmatch/sgmatch.hpp"

using namespace sgmatch;
using namespace sgmatch::ops;
using clk = std::chrono::steady_clock;

namespace {

double median(std::vector<double> v) {
    std::sort(v.begin(), v.end());
    return v[v.size() / 2];
}

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
    int rounds = 7;
    std::int64_t image = 224;
    std::vector<std::int64_t> batches;
    bool check = false;
    for (int i = 1; i < argc; ++i) {
        const std::string a = argv[i];
        if (a == "--rounds" && i + 1 < argc) rounds = std::atoi(argv[++i]);
        else if (a == "--batch" && i + 1 < argc) batches.push_back(std::atoll(argv[++i]));
        else if (a == "--image" && i + 1 < argc) image = std::atoll(argv[++i]);
        else if (a == "--check") check = true;
        else {
            std::fprintf(stderr, "usage: resnet50 [--rounds R] [--batch B ...] [--image N] [--check]\n");
            return 2;
        }
    }
    if (check) image = 64, rounds = 1, batches = {1};
    if (batches.empty()) batches = {1, 8};
    const double sgemm = check ? 0 : sgemm_peak(), matmul = check ? 0 : matmul_peak();
    const double peak = std::max(sgemm, matmul);
    if (!check) std::printf("measured fp32 peak: dnnl_sgemm %.0f GFLOP/s, matmul primitive %.0f GFLOP/s\n", sgemm, matmul);
    std::printf("| batch | fused ms | unfused ms | plain ms | unfused / fused | plain / fused | fused GFLOP/s | of peak | max abs diff |\n");
    std::printf("|---|---|---|---|---|---|---|---|---|\n");
    int failures = 0;
    struct memory_row {
        std::int64_t batch;
        std::size_t planned, pooled;
    };
    std::vector<memory_row> memory;
    for (std::int64_t batch : batches) {
        const graph g = build::resnet50(batch, image, /*data_seed=*/2026);
        graph fused = g;
        backend<graph> b("bench");
        b.add(onednn::make_fused_property<graph>("cbar", op<Conv>() >> op<BatchNorm>() >> op<Add>(any()) >> op<Relu>()));
        b.add(onednn::make_fused_property<graph>("cba", op<Conv>() >> optional(op<BatchNorm>()) >> optional(op<Relu>())));
        std::size_t accepted = 0;
        for (const auto& p : b.properties()) accepted += apply_property(fused, p).accepted;
        if (accepted != 53) {
            std::fprintf(stderr, "expected 53 fused nodes, got %zu\n", accepted);
            return 1;
        }
        std::mt19937 rng(9);
        std::uniform_real_distribution<float> d(-1.0f, 1.0f);
        reference::array x = xt::zeros<float>({static_cast<std::size_t>(batch), std::size_t(3),
                                               static_cast<std::size_t>(image), static_cast<std::size_t>(image)});
        for (auto& v : x) v = d(rng);
        const std::map<std::string, reference::array> in{{"data", x}};
        const exec::executor runs[] = {exec::executor(fused, exec::mode::onednn), exec::executor(g, exec::mode::onednn),
                                       exec::executor(g, exec::mode::onednn_plain)};
        const auto y0 = runs[0](in).at(0), y1 = runs[1](in).at(0), y2 = runs[2](in).at(0);
        double diff = 0, scale = 1;
        for (std::size_t i = 0; i < y0.size(); ++i) {
            diff = std::max({diff, static_cast<double>(std::fabs(y0.data()[i] - y1.data()[i])),
                             static_cast<double>(std::fabs(y2.data()[i] - y1.data()[i]))});
            scale = std::max(scale, static_cast<double>(std::fabs(y1.data()[i])));
        }
        if (!(diff <= 1e-4 * scale)) {
            std::fprintf(stderr, "batch %lld: results differ by %g\n", static_cast<long long>(batch), diff);
            ++failures;
        }
        if (check) continue;
        for (int warm = 0; warm < 3; ++warm)
            for (const auto& r : runs) (void)r(in);
        std::vector<double> t[3];
        for (int r = 0; r < rounds; ++r)
            for (int k = 0; k < 3; ++k) {
                const int v = (k + r) % 3;
                const auto t0 = clk::now();
                (void)runs[v](in);
                t[v].push_back(ms_since(t0));
            }
        exec::run_stats mem;
        (void)runs[0](in, &mem);
        memory.push_back({batch, mem.planned_bytes, mem.pooled_bytes});
        const double f = median(t[0]), u = median(t[1]), p = median(t[2]);
        const double gflops = 8.18 * static_cast<double>(batch) * (image * image) / (224.0 * 224.0) / (f / 1e3);
        std::printf("| %lld | %.1f | %.1f | %.1f | %.2fx | %.2fx | %.0f | %.0f%% | %.2g |\n", static_cast<long long>(batch),
                    f, u, p, u / f, p / f, gflops, 100.0 * gflops / peak, diff);
        std::fflush(stdout);
    }
    if (!check) {
        // The fused nodes' outputs: placed by the liveness plan, against what a pool reusing
        // only same-size buffers holds for them (the handling without a plan).
        std::printf("\n| batch | fused outputs, planned MiB | same-size pool MiB | planned / pool |\n|---|---|---|---|\n");
        for (const auto& m : memory)
            std::printf("| %lld | %.1f | %.1f | %.2f |\n", static_cast<long long>(m.batch), m.planned / 1048576.0,
                        m.pooled / 1048576.0, m.pooled ? static_cast<double>(m.planned) / static_cast<double>(m.pooled) : 0.0);
    }
    if (check) std::printf("check: fused, unfused and plain runs agree\n");
    return failures ? 1 : 0;
}
