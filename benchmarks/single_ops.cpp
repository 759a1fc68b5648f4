// Resize, PRelu, Sum and Less on oneDNN primitives against sgmatch's reference kernels (the
// executor in its oneDNN mode against its reference mode, one node each), at the sizes a
// detector's or a segmentation model's feature maps and a transformer's attention masks have
// (onednn_compare_min_elements: the last mask is under it, both variants run the typed kernel;
// with the threshold at 1 it measured 0.86x there, 0.50x at 256 elements, 1.40x at 4096).
//
//   onednn    - exec::mode::onednn: resampling, prelu, sum and binary primitives
//   reference - exec::mode::reference: the reference and typed kernels
//
// Timed by Google Benchmark (gbench.hpp: repetitions, random interleaving, medians; its flags
// pass through); the ratios reference / onednn follow the table. Both variants' outputs are
// compared before anything is timed.
// usage: single_ops [--check] [--benchmark_...]
#include <cstdio>
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

std::vector<float> rnd(std::int64_t n, std::mt19937& g) {
    std::uniform_real_distribution<float> d(-1.0f, 1.0f);
    std::vector<float> v(static_cast<std::size_t>(n));
    for (auto& x : v) x = d(g);
    return v;
}

std::int64_t count(const std::vector<std::int64_t>& d) {
    std::int64_t n = 1;
    for (auto x : d) n *= x;
    return n;
}

struct bench_case {
    std::string id;
    graph g;
    std::unique_ptr<exec::executor> onednn, reference;
    std::map<std::string, value> in;
};

// x [dims] into `op` with extra inputs and attributes; every input but x a constant.
struct op_case {
    std::string id;
    std::vector<std::int64_t> dims;
    std::string op;
    std::vector<std::pair<std::string, attribute>> attrs;
    int extra_inputs;  // Sum: more computed inputs of x's shape
};

std::unique_ptr<bench_case> make_case(const op_case& c, std::mt19937& rng) {
    auto b = std::make_unique<bench_case>();
    b->id = c.id;
    graph& g = b->g;
    std::vector<input_ref> in{g.add_input("x", tensor_type{dtype::f32, c.dims})};
    b->in.emplace("x", value::of<float>(c.dims, rnd(count(c.dims), rng)));
    if (c.op == "Resize") {
        in.push_back(g.add_constant("roi", {0}, std::vector<float>{}));
        in.push_back(g.add_constant("scales", {4}, std::vector<float>{1, 1, 2, 2}));
    } else if (c.op == "Less") {  // a mask against one row, as an attention mask is made
        const std::vector<std::int64_t> row{1, 1, 1, c.dims[3]};
        in.push_back(g.add_input("row", tensor_type{dtype::f32, row}));
        b->in.emplace("row", value::of<float>(row, rnd(c.dims[3], rng)));
    } else if (c.op == "PRelu") {
        in.push_back(g.add_constant("slope", {c.dims[1], 1, 1}, rnd(c.dims[1], rng)));
    }
    for (int k = 0; k < c.extra_inputs; ++k) {
        const std::string nm = "x" + std::to_string(k + 1);
        in.push_back(g.add_input(nm, tensor_type{dtype::f32, c.dims}));
        b->in.emplace(nm, value::of<float>(c.dims, rnd(count(c.dims), rng)));
    }
    const node_id n = g.add_op(c.op, "op", in);
    for (const auto& [key, v] : c.attrs) g.set_attr(n, key, v);
    g.mark_output(n);
    b->onednn = std::make_unique<exec::executor>(g, exec::mode::onednn);
    b->reference = std::make_unique<exec::executor>(g, exec::mode::reference);
    return b;
}

}  // namespace

int main(int argc, char** argv) {
    auto [check, rest] = sgbench::take_check(argc, argv);
    const std::vector<std::pair<std::string, attribute>> nearest{
        {"mode", std::string("nearest")}, {"coordinate_transformation_mode", std::string("asymmetric")}, {"nearest_mode", std::string("floor")}};
    const std::vector<std::pair<std::string, attribute>> bilinear{
        {"mode", std::string("linear")}, {"coordinate_transformation_mode", std::string("half_pixel")}};
    const std::vector<op_case> all{
        {"Resize nearest x2 [1, 256, 20, 20]", {1, 256, 20, 20}, "Resize", nearest, 0},
        {"Resize nearest x2 [1, 128, 40, 40]", {1, 128, 40, 40}, "Resize", nearest, 0},
        {"Resize bilinear x2 [1, 64, 64, 64]", {1, 64, 64, 64}, "Resize", bilinear, 0},
        {"PRelu [1, 64, 56, 56]", {1, 64, 56, 56}, "PRelu", {}, 0},
        {"Sum of 3 [1, 64, 56, 56]", {1, 64, 56, 56}, "Sum", {}, 2},
        {"Less [1, 12, 128, 128]", {1, 12, 128, 128}, "Less", {}, 0},
        {"Less [1, 1, 64, 64]", {1, 1, 64, 64}, "Less", {}, 0},
        {"Less [1, 1, 16, 64]", {1, 1, 16, 64}, "Less", {}, 0},
    };
    std::mt19937 rng(7);
    std::vector<std::unique_ptr<bench_case>> cases;
    std::vector<sgbench::ratio> ratios;
    int bad = 0;
    for (const op_case& c : all) {
        auto b = make_case(c, rng);
        const double diff = sgbench::max_abs_diff(b->onednn->run(b->in), b->reference->run(b->in));
        if (!(diff <= 1e-5)) {
            std::printf("MISMATCH %s: max abs diff %g\n", c.id.c_str(), diff);
            ++bad;
        }
        if (check) continue;
        const bench_case* k = b.get();
        sgbench::register_pair(
            c.id, "onednn", [k] { benchmark::DoNotOptimize(k->onednn->run(k->in)); }, "reference",
            [k] { benchmark::DoNotOptimize(k->reference->run(k->in)); }, ratios);
        cases.push_back(std::move(b));
    }
    if (bad) return 1;
    if (check) {
        std::printf("check: oneDNN's and the reference kernels' outputs agree on every op and size\n");
        return 0;
    }
    return sgbench::run(static_cast<int>(rest.size()), rest.data(), ratios);
}
