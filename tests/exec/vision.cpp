// NonMaxSuppression and RoiAlign (exec/kernels/vision.hpp): NMS on random boxes against what its
// definition implies (no two boxes taken overlap beyond the threshold, every box passed over
// overlaps one taken before it, scores in order, the limit kept, both box formats alike);
// RoiAlign on a linear image, where bilinear sampling is exact and each bin's mean is the image
// at the bin's center. The ONNX conformance cases (test_nonmaxsuppression_*, test_roialign_*)
// check them too. Runs in every preset.
#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <map>
#include <numeric>
#include <random>
#include <set>
#include <string>
#include <vector>

#include "sgmatch/exec/executor.hpp"
#include "support/values.hpp"

using namespace sgmatch;
using exec::value;

// Named: the unity build compiles this file with other tests; its helpers stay apart from theirs.
namespace vision_tests {

using test::elements;

double iou(const std::vector<float>& b, std::int64_t p, std::int64_t q) {
    auto lo = [&](std::int64_t i, int k) { return std::min(b[static_cast<std::size_t>(i * 4 + k)], b[static_cast<std::size_t>(i * 4 + k + 2)]); };
    auto hi = [&](std::int64_t i, int k) { return std::max(b[static_cast<std::size_t>(i * 4 + k)], b[static_cast<std::size_t>(i * 4 + k + 2)]); };
    const double ih = std::max(0.0, static_cast<double>(std::min(hi(p, 0), hi(q, 0)) - std::max(lo(p, 0), lo(q, 0))));
    const double iw = std::max(0.0, static_cast<double>(std::min(hi(p, 1), hi(q, 1)) - std::max(lo(p, 1), lo(q, 1))));
    const double ap = (hi(p, 0) - lo(p, 0)) * (hi(p, 1) - lo(p, 1)), aq = (hi(q, 0) - lo(q, 0)) * (hi(q, 1) - lo(q, 1));
    return ih * iw / (ap + aq - ih * iw);
}

value nms(const value& boxes, const value& scores, std::int64_t keep, float threshold, float min_score, bool center) {
    graph g;
    const node_id n = g.add_op("NonMaxSuppression", "nms",
                               {g.add_input("boxes"), g.add_input("scores"), g.add_input("keep"), g.add_input("iou"), g.add_input("min")});
    g.set_attr(n, "center_point_box", attribute(std::int64_t{center ? 1 : 0}));
    g.mark_output(n);
    return exec::executor(g)
        .run({{"boxes", boxes},
              {"scores", scores},
              {"keep", value::of<std::int64_t>({1}, {keep})},
              {"iou", value::of<float>({1}, {threshold})},
              {"min", value::of<float>({1}, {min_score})}})
        .at(0);
}

}  // namespace vision_tests

using namespace vision_tests;

TEST_CASE("NonMaxSuppression on random boxes keeps what its definition implies, in both box formats") {
    std::mt19937 rng(5);
    std::uniform_real_distribution<float> pos(0, 10), size(0.5f, 4), score(0, 1);
    const std::int64_t B = 2, C = 3, N = 40, keep = 7;
    const float threshold = 0.3f, min_score = 0.2f;
    std::vector<float> corners, centers, s;
    for (std::int64_t i = 0; i < B * N; ++i) {
        const float y = pos(rng), x = pos(rng), h = size(rng), w = size(rng);
        const bool flip = rng() % 2 == 0;  // opposite corners in either order
        for (float v : flip ? std::vector<float>{y + h, x + w, y, x} : std::vector<float>{y, x, y + h, x + w}) corners.push_back(v);
        for (float v : {x + w / 2, y + h / 2, w, h}) centers.push_back(v);
    }
    for (std::int64_t i = 0; i < B * C * N; ++i) s.push_back(score(rng));
    const value scores = value::of<float>({B, C, N}, s);
    const value got = nms(value::of<float>({B, N, 4}, corners), scores, keep, threshold, min_score, false);
    REQUIRE(got.dims().size() == 2);
    REQUIRE(got.dims()[1] == 3);
    const std::vector<std::int64_t> rows = elements<std::int64_t>(got);
    CHECK(elements<std::int64_t>(nms(value::of<float>({B, N, 4}, centers), scores, keep, threshold, min_score, true)) == rows);
    std::map<std::pair<std::int64_t, std::int64_t>, std::vector<std::int64_t>> taken;
    std::pair<std::int64_t, std::int64_t> last{-1, -1};
    for (std::size_t r = 0; r < rows.size(); r += 3) {
        const std::pair<std::int64_t, std::int64_t> bc{rows[r], rows[r + 1]};
        CHECK(bc >= last);  // by batch, then class
        last = bc;
        taken[bc].push_back(rows[r + 2]);
    }
    for (std::int64_t b = 0; b < B; ++b)
        for (std::int64_t c = 0; c < C; ++c) {
            const std::vector<float> bx(corners.begin() + b * N * 4, corners.begin() + (b + 1) * N * 4);
            auto sc = [&](std::int64_t i) { return s[static_cast<std::size_t>((b * C + c) * N + i)]; };
            const std::vector<std::int64_t>& t = taken[{b, c}];
            CHECK(static_cast<std::int64_t>(t.size()) <= keep);
            for (std::size_t k = 0; k < t.size(); ++k) {
                CHECK(sc(t[k]) > min_score);
                if (k > 0) CHECK(sc(t[k - 1]) >= sc(t[k]));
                for (std::size_t j = 0; j < k; ++j) CHECK(iou(bx, t[j], t[k]) <= threshold + 1e-6);
            }
            // A box scoring above the threshold and above the last one taken was passed over only
            // for overlapping one taken before it; with fewer than `keep` taken, every such box.
            const std::set<std::int64_t> in(t.begin(), t.end());
            for (std::int64_t i = 0; i < N; ++i) {
                if (in.count(i) || sc(i) <= min_score) continue;
                if (static_cast<std::int64_t>(t.size()) == keep && sc(i) <= sc(t.back())) continue;
                bool covered = false;
                for (const std::int64_t j : t) covered = covered || (sc(j) >= sc(i) && iou(bx, i, j) > threshold - 1e-6);
                CHECK(covered);
            }
        }
}

TEST_CASE("RoiAlign on a linear image: each bin is the image at the bin's center, in both coordinate modes") {
    const std::int64_t H = 12, W = 16;
    std::vector<float> img;
    for (std::int64_t c = 0; c < 2; ++c)
        for (std::int64_t y = 0; y < H; ++y)
            for (std::int64_t x = 0; x < W; ++x) img.push_back(static_cast<float>(0.5 * y - 0.25 * x + 3 * c));
    const std::vector<float> rois{2, 3, 10, 9, 4.5f, 1, 9, 7.5f};  // x1, y1, x2, y2, inside the image
    for (const char* mode : {"half_pixel", "output_half_pixel"})
        for (const std::int64_t ratio : {0, 2, 3}) {
            CAPTURE(mode);
            CAPTURE(ratio);
            graph g;
            const node_id n = g.add_op("RoiAlign", "roi", {g.add_input("x"), g.add_input("rois"), g.add_input("batch")});
            g.set_attr(n, "coordinate_transformation_mode", attribute(mode));
            g.set_attr(n, "output_height", attribute(std::int64_t{3}));
            g.set_attr(n, "output_width", attribute(std::int64_t{4}));
            g.set_attr(n, "sampling_ratio", attribute(ratio));
            g.set_attr(n, "spatial_scale", attribute(0.5));
            g.mark_output(n);
            const value y = exec::executor(g)
                                .run({{"x", value::of<float>({1, 2, H, W}, img)},
                                      {"rois", value::of<float>({2, 4}, {rois[0] * 2, rois[1] * 2, rois[2] * 2, rois[3] * 2, rois[4] * 2,
                                                                        rois[5] * 2, rois[6] * 2, rois[7] * 2})},
                                      {"batch", value::of<std::int64_t>({2}, {0, 0})}})
                                .at(0);
            REQUIRE(y.dims() == exec::shape{2, 2, 3, 4});
            const std::vector<float> got = elements<float>(y);
            const double shift = std::string(mode) == "half_pixel" ? 0.5 : 0.0;
            for (std::int64_t r = 0; r < 2; ++r) {
                const double x0 = rois[static_cast<std::size_t>(r * 4)] - shift, y0 = rois[static_cast<std::size_t>(r * 4 + 1)] - shift;
                const double bw = (rois[static_cast<std::size_t>(r * 4 + 2)] - rois[static_cast<std::size_t>(r * 4)]) / 4.0;
                const double bh = (rois[static_cast<std::size_t>(r * 4 + 3)] - rois[static_cast<std::size_t>(r * 4 + 1)]) / 3.0;
                for (std::int64_t c = 0; c < 2; ++c)
                    for (std::int64_t i = 0; i < 3; ++i)
                        for (std::int64_t j = 0; j < 4; ++j) {
                            const double yc = y0 + (static_cast<double>(i) + 0.5) * bh, xc = x0 + (static_cast<double>(j) + 0.5) * bw;
                            CHECK(got[static_cast<std::size_t>(((r * 2 + c) * 3 + i) * 4 + j)] ==
                                  doctest::Approx(0.5 * yc - 0.25 * xc + 3.0 * static_cast<double>(c)).epsilon(1e-5));
                        }
            }
        }
}

TEST_CASE("NonMaxSuppression and RoiAlign refuse what they cannot run, naming the node") {
    SUBCASE("RoiAlign's max mode, when the executor is built") {
        graph g;
        const node_id n = g.add_op("RoiAlign", "pool", {g.add_input("x"), g.add_input("rois"), g.add_input("batch")});
        g.set_attr(n, "mode", attribute("max"));
        g.mark_output(n);
        std::string e;
        try {
            exec::executor run(g);
        } catch (const exec::exec_error& x) {
            e = x.what();
        }
        CHECK(e.find("'pool'") != std::string::npos);
        CHECK(e.find("mode max is defined differently by ONNX Runtime and ONNX's reference") != std::string::npos);
    }
    SUBCASE("a batch index out of range; an IoU threshold outside [0, 1]") {
        graph g;
        const node_id n = g.add_op("RoiAlign", "pool", {g.add_input("x"), g.add_input("rois"), g.add_input("batch")});
        g.mark_output(n);
        const std::string e = test::run_error(exec::executor(g), {{"x", value::zeros(dtype::f32, {1, 1, 4, 4})},
                                                                  {"rois", value::of<float>({1, 4}, {0, 0, 2, 2})},
                                                                  {"batch", value::of<std::int64_t>({1}, {1})}});
        CHECK(e.find("'pool'") != std::string::npos);
        CHECK(e.find("batch index 1 is out of range for 1 images") != std::string::npos);

        std::string f;
        try {
            (void)nms(value::zeros(dtype::f32, {1, 2, 4}), value::zeros(dtype::f32, {1, 1, 2}), 1, 1.5f, 0, false);
        } catch (const exec::exec_error& x) {
            f = x.what();
        }
        CHECK(f.find("'nms'") != std::string::npos);
        CHECK(f.find("iou_threshold 1.5") != std::string::npos);
    }
}

namespace vision_tests {

// GridSample of x [1, 1, H, W] at the points (gx, gy) of a [1, 1, P, 2] grid.
std::vector<float> sample(const std::vector<float>& img, std::int64_t H, std::int64_t W, const std::vector<float>& pts, const char* mode,
                          const char* padding, bool align) {
    graph g;
    const node_id n = g.add_op("GridSample", "sample", {g.add_input("x"), g.add_input("grid")});
    g.set_attr(n, "mode", attribute(mode));
    g.set_attr(n, "padding_mode", attribute(padding));
    g.set_attr(n, "align_corners", attribute(std::int64_t{align ? 1 : 0}));
    g.mark_output(n);
    const auto P = static_cast<std::int64_t>(pts.size() / 2);
    return elements<float>(
        exec::executor(g).run({{"x", value::of<float>({1, 1, H, W}, img)}, {"grid", value::of<float>({1, 1, P, 2}, pts)}}).at(0));
}

}  // namespace vision_tests

TEST_CASE("GridSample: at the pixels themselves every mode gives the image, on a linear image bilinear is exact, outside each padding") {
    const std::int64_t H = 5, W = 7;
    std::vector<float> img;
    for (std::int64_t y = 0; y < H; ++y)
        for (std::int64_t x = 0; x < W; ++x) img.push_back(static_cast<float>(2 * y - 0.5 * x + 1));
    for (const bool align : {false, true}) {
        CAPTURE(align);
        // Each pixel's own grid point: its center.
        auto norm = [&](double p, std::int64_t size) { return align ? 2 * p / static_cast<double>(size - 1) - 1 : (2 * p + 1) / static_cast<double>(size) - 1; };
        std::vector<float> pts;
        for (std::int64_t y = 0; y < H; ++y)
            for (std::int64_t x = 0; x < W; ++x) {
                pts.push_back(static_cast<float>(norm(static_cast<double>(x), W)));
                pts.push_back(static_cast<float>(norm(static_cast<double>(y), H)));
            }
        for (const char* mode : {"bilinear", "nearest", "bicubic"})
            for (const char* padding : {"zeros", "border", "reflection"}) {
                CAPTURE(mode);
                CAPTURE(padding);
                const std::vector<float> got = sample(img, H, W, pts, mode, padding, align);
                for (std::size_t i = 0; i < img.size(); ++i) CHECK(got[i] == doctest::Approx(img[i]).epsilon(1e-5));
            }
        // Bilinear inside the pixel centers' hull: the linear function itself.
        std::mt19937 rng(3);
        std::uniform_real_distribution<double> py(0, static_cast<double>(H - 1)), px(0, static_cast<double>(W - 1));
        std::vector<float> inner;
        std::vector<double> want;
        for (int k = 0; k < 30; ++k) {
            const double y = py(rng), x = px(rng);
            inner.push_back(static_cast<float>(norm(x, W)));
            inner.push_back(static_cast<float>(norm(y, H)));
            want.push_back(2 * y - 0.5 * x + 1);
        }
        for (const char* padding : {"zeros", "border", "reflection"}) {
            const std::vector<float> got = sample(img, H, W, inner, "bilinear", padding, align);
            for (std::size_t i = 0; i < want.size(); ++i) CHECK(got[i] == doctest::Approx(want[i]).epsilon(1e-4));
        }
        // Far outside (x beyond the right edge by several pixels, y at row 2): zeros, the edge
        // pixel, or the image reflected back (with align_corners, x = W - 1 + 2 is pixel W - 3).
        const std::vector<float> out{static_cast<float>(norm(static_cast<double>(W - 1 + 2), W)), static_cast<float>(norm(2, H))};
        CHECK(sample(img, H, W, out, "nearest", "zeros", align)[0] == 0.0f);
        CHECK(sample(img, H, W, out, "nearest", "border", align)[0] == img[static_cast<std::size_t>(2 * W + W - 1)]);
        if (align) CHECK(sample(img, H, W, out, "nearest", "reflection", align)[0] == img[static_cast<std::size_t>(2 * W + W - 3)]);
    }
}

TEST_CASE("MaxUnpool after MaxPool puts each window's maximum back where it was, zeros elsewhere, padded to output_shape") {
    std::mt19937 rng(9);
    const std::int64_t N = 2, C = 3, H = 6, W = 8;
    std::vector<float> x(static_cast<std::size_t>(N * C * H * W));
    std::iota(x.begin(), x.end(), 0.0f);
    std::shuffle(x.begin(), x.end(), rng);  // distinct: no ties
    for (const bool padded : {false, true}) {
        CAPTURE(padded);
        graph g;
        const node_id pool = g.add_op("MaxPool", "pool", {g.add_input("x")}, {}, 2);
        g.set_attr(pool, "kernel_shape", attribute(attribute::ints{2, 2}));
        g.set_attr(pool, "strides", attribute(attribute::ints{2, 2}));
        std::vector<input_ref> ins{input_ref(pool, 0), input_ref(pool, 1)};
        if (padded) ins.push_back(g.add_input("shape"));
        const node_id unpool = g.add_op("MaxUnpool", "unpool", ins);
        g.set_attr(unpool, "kernel_shape", attribute(attribute::ints{2, 2}));
        g.set_attr(unpool, "strides", attribute(attribute::ints{2, 2}));
        g.mark_output(unpool);
        std::map<std::string, value> in{{"x", value::of<float>({N, C, H, W}, x)}};
        const std::int64_t Ho = padded ? H + 1 : H, Wo = padded ? W + 2 : W;
        if (padded) in.emplace("shape", value::of<std::int64_t>({4}, {N, C, Ho, Wo}));
        const value y = exec::executor(g).run(in).at(0);
        REQUIRE(y.dims() == exec::shape{N, C, Ho, Wo});
        const std::vector<float> got = elements<float>(y);
        for (std::int64_t p = 0; p < N * C; ++p)
            for (std::int64_t i = 0; i < Ho; ++i)
                for (std::int64_t j = 0; j < Wo; ++j) {
                    float want = 0;
                    if (i < H && j < W) {
                        const float v = x[static_cast<std::size_t>((p * H + i) * W + j)];
                        float m = v;
                        for (std::int64_t a = i / 2 * 2; a < i / 2 * 2 + 2; ++a)
                            for (std::int64_t b = j / 2 * 2; b < j / 2 * 2 + 2; ++b) m = std::max(m, x[static_cast<std::size_t>((p * H + a) * W + b)]);
                        want = m == v ? v : 0.0f;
                    }
                    CHECK(got[static_cast<std::size_t>((p * Ho + i) * Wo + j)] == want);
                }
    }
}
