// RNN, GRU and LSTM on oneDNN's recurrent primitives against sgmatch's reference kernel (the
// executor in its oneDNN mode against its reference mode, one node each), over sizes from the
// test models' tiny layers to a speech- or text-sized layer.
//
//   onednn    - exec::mode::onednn: the weights converted once, a primitive per (sequence, batch)
//   reference - exec::mode::reference: the double-accumulating reference kernel
//
// Timed by Google Benchmark (gbench.hpp: repetitions, random interleaving, medians; its flags
// pass through); the ratios reference / onednn follow the table. Both variants' outputs are
// compared before anything is timed.
// usage: recurrent [--check] [--benchmark_...]
#include <cmath>
#include <cstdio>
#include <cstring>
#include <map>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include "gbench.hpp"
#include "outputs.hpp"
#include "sgmatch/exec/executor.hpp"

using namespace sgmatch;
using exec::value;

namespace {

struct size_case {
    const char* name;
    std::int64_t seq, batch, input, hidden;
};
// tiny: below onednn_recurrent_min_work, both variants run the reference kernel.
const size_case sizes[] = {
    {"tiny s7 b2 i4 h2", 7, 2, 4, 2},
    {"small s16 b1 i64 h64", 16, 1, 64, 64},
    {"medium s32 b8 i128 h256", 32, 8, 128, 256},
};
struct cell_case {
    const char* op;
    std::int64_t gates;
    const char* direction;
};
const cell_case cells[] = {{"LSTM", 4, "forward"}, {"LSTM", 4, "bidirectional"}, {"GRU", 3, "forward"}, {"RNN", 1, "forward"}};

std::vector<float> rnd(std::int64_t n, std::mt19937& g, float bound) {
    std::uniform_real_distribution<float> d(-bound, bound);
    std::vector<float> v(static_cast<std::size_t>(n));
    for (auto& x : v) x = d(g);
    return v;
}

struct bench_case {
    graph g;
    std::unique_ptr<exec::executor> onednn, reference;
    std::map<std::string, value> in;
};

std::unique_ptr<bench_case> make_case(const cell_case& c, const size_case& s, std::mt19937& rng) {
    auto b = std::make_unique<bench_case>();
    graph& g = b->g;
    const std::int64_t D = std::string(c.direction) == "bidirectional" ? 2 : 1, G = c.gates, H = s.hidden, I = s.input;
    // PyTorch's initialisation, U(-1/sqrt(hidden), 1/sqrt(hidden)): larger recurrent weights make
    // a vanilla RNN chaotic, where float and double runs part ways whatever the kernel.
    const float init = 1.0f / std::sqrt(static_cast<float>(H));
    auto k = [&](const char* name, std::vector<std::int64_t> dims) {
        std::int64_t n = 1;
        for (auto d : dims) n *= d;
        const auto v = rnd(n, rng, init);
        std::vector<unsigned char> bytes(v.size() * sizeof(float));
        std::memcpy(bytes.data(), v.data(), bytes.size());
        return input_ref(g.add_constant(name, std::move(dims), dtype::f32, std::move(bytes)));
    };
    std::vector<input_ref> in{input_ref(g.add_input("X")), k("W", {D, G * H, I}), k("R", {D, G * H, H}), k("B", {D, 2 * G * H})};
    const std::uint32_t outs = G == 4 ? 3 : 2;
    const node_id n = g.add_op(c.op, "cell", in, {{"direction", c.direction}}, outs);
    for (std::uint32_t o = 0; o < outs; ++o) g.mark_output(input_ref(value_ref<node_id>{n, o}));
    b->onednn = std::make_unique<exec::executor>(g, exec::mode::onednn);
    b->reference = std::make_unique<exec::executor>(g, exec::mode::reference);
    b->in.emplace("X", value::of<float>({s.seq, s.batch, I}, rnd(s.seq * s.batch * I, rng, 1.0f)));
    return b;
}

}  // namespace

int main(int argc, char** argv) {
    auto [check, rest] = sgbench::take_check(argc, argv);
    std::mt19937 rng(7);
    std::vector<std::unique_ptr<bench_case>> cases;
    std::vector<sgbench::ratio> ratios;
    int bad = 0;
    for (const cell_case& c : cells)
        for (const size_case& s : sizes) {
            if (check && s.hidden > 64) continue;
            auto b = make_case(c, s, rng);
            const double diff = sgbench::max_abs_diff(b->onednn->run(b->in), b->reference->run(b->in));
            const std::string id = std::string(c.op) + " " + c.direction + " " + s.name;
            if (!(diff <= 1e-4)) {
                std::printf("MISMATCH %s: max abs diff %g\n", id.c_str(), diff);
                ++bad;
            }
            if (check) continue;
            const bench_case* k = b.get();
            sgbench::register_pair(
                id, "onednn", [k] { benchmark::DoNotOptimize(k->onednn->run(k->in)); }, "reference",
                [k] { benchmark::DoNotOptimize(k->reference->run(k->in)); }, ratios);
            cases.push_back(std::move(b));
        }
    if (bad) return 1;
    if (check) {
        std::printf("check: oneDNN's and the reference kernel's outputs agree on every cell and size\n");
        return 0;
    }
    return sgbench::run(static_cast<int>(rest.size()), rest.data(), ratios);
}
