// Conv 1x1 + depthwise 3x3 (MobileNetV2's expansion and depthwise convs): one fused_conv with a
// depthwise post-op against two fused_convs (1x1 + BN + relu6, then depthwise + BN + relu6),
// both with format any, on MobileNetV2's block shapes at batch 1 and 8.
//
//   fused  - conv_spec 1x1, BN folded, clip(0, 6), post_op::depthwise (BN folded), clip(0, 6):
//            one primitive; run_into a reused destination.
//   two    - the same ops as two fused_convs, the 1x1's output handed on in its layout
//            (run_into reused buffers): the best the library does without the post-op.
//
// The source arrives in the layout the first primitive prefers. Each round times both variants
// (order alternated) for a fixed number of iterations; the figure is the median over rounds.
// It also prints the implementation oneDNN picked for the fused primitive: ref_fused_convolution
// means oneDNN runs the two convolutions one after the other internally (no gain expected).
// usage: conv1x1_depthwise [--rounds R] [--min-ms M] [--check]
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <functional>
#include <random>
#include <string>
#include <vector>

#include "sgmatch/onednn/fused_conv.hpp"

using namespace sgmatch;
using onednn::dims;
using onednn::post_op;
using clk = std::chrono::steady_clock;

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

double median(std::vector<double> v) {
    std::sort(v.begin(), v.end());
    return v[v.size() / 2];
}

}  // namespace

int main(int argc, char** argv) {
    int rounds = 7;
    double min_ms = 30;
    bool check = false;
    for (int i = 1; i < argc; ++i) {
        if (!std::strcmp(argv[i], "--rounds") && i + 1 < argc) rounds = std::atoi(argv[++i]);
        else if (!std::strcmp(argv[i], "--min-ms") && i + 1 < argc) min_ms = std::atof(argv[++i]);
        else if (!std::strcmp(argv[i], "--check")) check = true;
    }
    std::mt19937 g(5);
    std::printf("%-26s %5s %10s %10s %8s  %s\n", "shape", "batch", "fused us", "two us", "two/fused", "fused implementation");
    int bad = 0;
    for (const shape& sh : shapes) {
        for (std::int64_t n : {std::int64_t{1}, std::int64_t{8}}) {
            const std::int64_t hw = check ? 9 : sh.hw;
            if (check && n == 8) continue;
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

            const onednn::fused_conv k1(s1), k2(s2), kf(sf);
            const dims src{n, c, hw, hw};
            const auto x = rnd(static_cast<std::size_t>(n * c * hw * hw), g, -1.0f, 1.0f);
            const onednn::tensor plain = onednn::tensor::view(x.data(), src);
            dnnl::stream st(onednn::cpu_engine());
            // Sources in the layouts the first primitives prefer (what a previous node hands on).
            const onednn::tensor xf = onednn::tensor::allocate(kf.src_desc(src));
            const onednn::tensor x1 = onednn::tensor::allocate(k1.src_desc(src));
            plain.reorder_into(xf, st);
            plain.reorder_into(x1, st);
            const dims mid = s1.output_dims(src);
            const onednn::tensor yf = onednn::tensor::allocate(kf.dst_desc(src));
            const onednn::tensor ym = onednn::tensor::allocate(k1.dst_desc(src));
            const onednn::tensor y2 = onednn::tensor::allocate(k2.dst_desc(mid));
            st.wait();
            auto fused = [&] { kf.run_into(xf, {}, yf); };
            auto two = [&] {
                k1.run_into(x1, {}, ym);
                k2.run_into(ym, {}, y2);
            };
            fused();
            two();
            // Same result: compare in plain layout.
            const std::vector<float> a = yf.to_plain(), b = y2.to_plain();
            double diff = 0;
            for (std::size_t i = 0; i < a.size() && i < b.size(); ++i) diff = std::max(diff, double(std::fabs(a[i] - b[i])));
            if (yf.shape() != y2.shape() || diff > 1e-3) {
                std::printf("MISMATCH %s batch %lld: max abs diff %g\n", sh.name, static_cast<long long>(n), diff);
                ++bad;
            }
            if (check) continue;
            // Iterations per timing so that one timing lasts about min_ms.
            auto time_it = [&](const std::function<void()>& f, int iters) {
                const auto t0 = clk::now();
                for (int i = 0; i < iters; ++i) f();
                return std::chrono::duration<double, std::micro>(clk::now() - t0).count() / iters;
            };
            const double one = time_it(fused, 3);
            const int iters = std::max(3, static_cast<int>(min_ms * 1000 / std::max(one, 1.0)));
            std::vector<double> tf, tt;
            for (int r = 0; r < rounds; ++r) {
                if (r % 2) {
                    tt.push_back(time_it(two, iters));
                    tf.push_back(time_it(fused, iters));
                } else {
                    tf.push_back(time_it(fused, iters));
                    tt.push_back(time_it(two, iters));
                }
            }
            const double mf = median(tf), mt = median(tt);
            std::printf("%-26s %5lld %10.1f %10.1f %8.2fx  %s\n", sh.name, static_cast<long long>(n), mf, mt, mt / mf,
                        kf.implementation(src).c_str());
        }
    }
    if (bad) return 1;
    if (check) std::printf("check: fused and two-primitive outputs agree on every shape\n");
    return 0;
}
