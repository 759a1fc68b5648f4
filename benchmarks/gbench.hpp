// benchmarks/gbench.hpp - the micro benchmarks run on Google Benchmark: its repetitions, random
// interleaving of the variants and JSON output (--benchmark_out=f.json
// --benchmark_out_format=json), with our defaults and the ratios of medians printed after the
// table.
//
// Defaults, each overridden by giving the flag: --benchmark_repetitions=7
// --benchmark_enable_random_interleaving=true --benchmark_report_aggregates_only=true
// --benchmark_min_time=0.2. Every variant is registered under its own name; a ratio names two.
#pragma once

#include <cstdio>
#include <map>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include <unistd.h>

#include <benchmark/benchmark.h>

namespace sgbench {

/// numerator / denominator of the median real times of two registered benchmarks.
struct ratio {
    std::string label, numerator, denominator, note;
};

/// The console table, plus each benchmark's median kept for the ratios.
class ratio_reporter : public benchmark::ConsoleReporter {
public:
    ratio_reporter() : ConsoleReporter(isatty(fileno(stdout)) ? OO_ColorTabular : OO_Tabular) {}
    void ReportRuns(const std::vector<Run>& runs) override {
        for (const auto& r : runs)
            if (r.run_type == Run::RT_Aggregate && r.aggregate_name == "median")
                medians_[r.run_name.function_name] = r.GetAdjustedRealTime();
        ConsoleReporter::ReportRuns(runs);
    }
    const std::map<std::string, double>& medians() const { return medians_; }

private:
    std::map<std::string, double> medians_;
};

/// The benchmark loop for a write: each iteration runs f on a fresh copy of base; neither the
/// copy nor freeing the previous one is timed.
template <class Graph, class F>
void on_fresh_copies(benchmark::State& st, const Graph& base, F&& f) {
    std::optional<Graph> copy;
    for (auto _ : st) {
        st.PauseTiming();
        copy.reset();
        copy.emplace(base);
        st.ResumeTiming();
        benchmark::DoNotOptimize(f(*copy));
    }
}

/// Two variants of one case registered as `first/id` and `second/id` (each call of f runs the
/// variant once; real time, microseconds), and the ratio second / first added to `ratios`.
template <class F1, class F2>
void register_pair(const std::string& id, const std::string& first, F1 f1, const std::string& second, F2 f2,
                   std::vector<ratio>& ratios, std::string note = "") {
    benchmark::RegisterBenchmark((first + "/" + id).c_str(), [f1](benchmark::State& st) {
        for (auto _ : st) f1();
    })->Unit(benchmark::kMicrosecond)->UseRealTime();
    benchmark::RegisterBenchmark((second + "/" + id).c_str(), [f2](benchmark::State& st) {
        for (auto _ : st) f2();
    })->Unit(benchmark::kMicrosecond)->UseRealTime();
    ratios.push_back({id + " " + second + "/" + first, second + "/" + id, first + "/" + id, std::move(note)});
}

/// The command line without --check (what Google Benchmark reads), and whether it was given.
struct command_line {
    bool check = false;
    std::vector<char*> rest;
};
inline command_line take_check(int argc, char** argv) {
    command_line c{false, {argv[0]}};
    for (int i = 1; i < argc; ++i) {
        if (std::string(argv[i]) == "--check") c.check = true;
        else c.rest.push_back(argv[i]);
    }
    return c;
}

/// Runs what is registered with our defaults under the user's flags; prints the ratios.
/// Returns main's exit code (1 on an unknown flag or a ratio whose benchmarks did not run).
inline int run(int argc, char** argv, const std::vector<ratio>& ratios) {
    std::vector<std::string> defaults = {"--benchmark_repetitions=7", "--benchmark_enable_random_interleaving=true",
                                         "--benchmark_report_aggregates_only=true", "--benchmark_min_time=0.2"};
    std::vector<char*> args{argv[0]};
    for (auto& d : defaults) args.push_back(d.data());  // the user's flags come after: they win
    for (int i = 1; i < argc; ++i) args.push_back(argv[i]);
    int n = static_cast<int>(args.size());
    benchmark::Initialize(&n, args.data());
    if (benchmark::ReportUnrecognizedArguments(n, args.data())) return 1;
    ratio_reporter rep;
    benchmark::RunSpecifiedBenchmarks(&rep);
    benchmark::Shutdown();
    int rc = 0;
    for (const auto& r : ratios) {
        const auto a = rep.medians().find(r.numerator), b = rep.medians().find(r.denominator);
        if (a == rep.medians().end() || b == rep.medians().end()) {
            if (rep.medians().empty()) continue;  // filtered out (--benchmark_filter)
            std::printf("%s: not measured\n", r.label.c_str());
            rc = 1;
            continue;
        }
        const double x = a->second / b->second;  // small ratios with enough digits to tell apart
        std::printf(x < 0.1 ? "%-28s %7.4fx  %s\n" : "%-28s %7.2fx  %s\n", (r.label + ":").c_str(), x, r.note.c_str());
    }
    return rc;
}

}  // namespace sgbench
