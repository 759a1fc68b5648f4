// Conv 1x1 + depthwise 3x3 (MobileNetV2's expansion and depthwise convs): one fused_conv with a
// depthwise post-op against two fused_convs (1x1 + BN + relu6, then depthwise + BN + relu6),
// both with format any, on MobileNetV2's block shapes at batch 1 and 8.
//
//   fused  - conv_spec 1x1, BN folded, clip(0, 6), post_op::depthwise (BN folded), clip(0, 6):
//            one primitive; run_into a reused destination.
//   two    - the same ops as two fused_convs, the 1x1's output handed on in its layout
//            (run_into reused buffers): the best the library does without the post-op.
//
// The source arrives in the layout the first primitive prefers. Timed by Google Benchmark
// (gbench.hpp: repetitions, random interleaving, medians; its flags pass through); the ratios
// two / fused follow the table, each with the implementation oneDNN picked for the fused
// primitive: ref_fused_convolution means oneDNN runs the two convolutions one after the other
// internally (no gain expected). Both variants' outputs are compared before anything is timed.
// usage: conv1x1_depthwise [--check] [--benchmark_...]
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include "gbench.hpp"
#include "sgmatch/onednn/fused_conv.hpp"

using namespace sgmatch;
using onednn::dims;
using onednn::post_op;

namespace {

struct shape {
    const char* name;
    std::int64_t c, e, hw, stride;
};

// MobileNetV2 inverted residual blocks (input channels, expanded channels, input size, stride).
const shape shapes[] = {
    {"block2 24->144 @56", 24, 144, 56, 1},  {"block3 24->144 @56 s2", 24, 144, 56, 2},
    {"block4 32->192 @28", 32, 192, 28, 1},  {"block6 32->192 @28 s2", 32, 192, 28, 2},
    {"block8 64->384 @14", 64, 384, 14, 1},  {"block13 96->576 @14 s2", 96, 576, 14, 2},
    {"block15 160->960 @7", 160, 960, 7, 1},
};

std::vector<float> rnd(std::size_t n, std::mt19937& g, float lo, float hi) {
    std::uniform_real_distribution<float> d(lo, hi);
    std::vector<float> v(n);
    for (auto& x : v) x = d(g);
    return v;
}

struct bn {
    std::vector<float> scale, shift, mean, var;
};
bn random_bn(std::int64_t c, std::mt19937& g) {
    const auto n = static_cast<std::size_t>(c);
    return {rnd(n, g, 0.5f, 1.5f), rnd(n, g, -0.5f, 0.5f), rnd(n, g, -0.5f, 0.5f), rnd(n, g, 0.5f, 1.5f)};
}

// One shape at one batch: the kernels, their sources in the layouts they prefer, and reused
// destinations.
struct bench_case {
    onednn::fused_conv k1, k2, kf;
    dims src;
    onednn::tensor xf, x1, yf, ym, y2;
    std::string implementation;

    bench_case(const onednn::conv_spec& s1, const onednn::conv_spec& s2, const onednn::conv_spec& sf, dims source,
               const std::vector<float>& x)
        : k1(s1), k2(s2), kf(sf), src(std::move(source)) {
        dnnl::stream st(onednn::cpu_engine());
        const onednn::tensor plain = onednn::tensor::view(x.data(), src);
        xf = onednn::tensor::allocate(kf.src_desc(src));
        x1 = onednn::tensor::allocate(k1.src_desc(src));
        plain.reorder_into(xf, st);
        plain.reorder_into(x1, st);
        yf = onednn::tensor::allocate(kf.dst_desc(src));
        ym = onednn::tensor::allocate(k1.dst_desc(src));
        y2 = onednn::tensor::allocate(k2.dst_desc(s1.output_dims(src)));
        st.wait();
        implementation = kf.implementation(src);
    }
    void fused() const { kf.run_into(xf, {}, yf); }
    void two() const {
        k1.run_into(x1, {}, ym);
        k2.run_into(ym, {}, y2);
    }
    // max |fused - two| in plain layout (infinity when the shapes differ).
    double difference() const {
        fused();
        two();
        if (yf.shape() != y2.shape()) return INFINITY;
        const std::vector<float> a = yf.to_plain(), b = y2.to_plain();
        double diff = 0;
        for (std::size_t i = 0; i < a.size(); ++i) diff = std::max(diff, static_cast<double>(std::fabs(a[i] - b[i])));
        return diff;
    }
};

std::unique_ptr<bench_case> make_case(const shape& sh, std::int64_t n, std::int64_t hw, std::mt19937& g) {
    const std::int64_t c = sh.c, e = sh.e;
    const auto w1 = rnd(static_cast<std::size_t>(e * c), g, -0.3f, 0.3f);
    const auto wd = rnd(static_cast<std::size_t>(e * 9), g, -0.3f, 0.3f);
    const bn b1 = random_bn(e, g), b2 = random_bn(e, g);
    const post_op relu6 = post_op::eltwise(dnnl::algorithm::eltwise_clip_v2, 0.0f, 6.0f);

    onednn::conv_spec s1;  // 1x1 + BN + relu6
    s1.weights_dims = {e, c, 1, 1};
    s1.weights = w1;
    s1.fold_batch_norm(b1.scale, b1.shift, b1.mean, b1.var, 1e-5f);
    s1.post_ops = {relu6};
    onednn::conv_spec s2;  // depthwise 3x3 + BN + relu6
    s2.weights_dims = {e, 1, 3, 3};
    s2.weights = wd;
    s2.groups = e;
    s2.strides = {sh.stride, sh.stride};
    s2.pads_begin = s2.pads_end = {1, 1};
    s2.fold_batch_norm(b2.scale, b2.shift, b2.mean, b2.var, 1e-5f);
    s2.post_ops = {relu6};
    onednn::conv_spec sf = s1;  // all of it in one primitive
    sf.post_ops.push_back(post_op::depthwise(wd, {}, sh.stride));
    sf.fold_batch_norm(b2.scale, b2.shift, b2.mean, b2.var, 1e-5f);
    sf.post_ops.push_back(relu6);
    const auto x = rnd(static_cast<std::size_t>(n * c * hw * hw), g, -1.0f, 1.0f);
    return std::make_unique<bench_case>(s1, s2, sf, dims{n, c, hw, hw}, x);
}

}  // namespace

int main(int argc, char** argv) {
    auto [check, rest] = sgbench::take_check(argc, argv);
    std::mt19937 g(5);
    std::vector<std::unique_ptr<bench_case>> cases;
    std::vector<sgbench::ratio> ratios;
    int bad = 0;
    for (const shape& sh : shapes)
        for (std::int64_t n : {std::int64_t{1}, std::int64_t{8}}) {
            if (check && n == 8) continue;
            auto c = make_case(sh, n, check ? 9 : sh.hw, g);
            const double diff = c->difference();
            if (!(diff <= 1e-3)) {
                std::printf("MISMATCH %s batch %lld: max abs diff %g\n", sh.name, static_cast<long long>(n), diff);
                ++bad;
            }
            if (check) continue;
            const std::string id = std::string(sh.name) + " b" + std::to_string(n);
            const bench_case* k = c.get();
            sgbench::register_pair(id, "fused", [k] { k->fused(); }, "two", [k] { k->two(); }, ratios, c->implementation);
            cases.push_back(std::move(c));
        }
    if (bad) return 1;
    if (check) {
        std::printf("check: fused and two-primitive outputs agree on every shape\n");
        return 0;
    }
    return sgbench::run(static_cast<int>(rest.size()), rest.data(), ratios);
}
