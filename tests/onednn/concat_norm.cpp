// A channel Concat read by a BatchNorm (+ Relu) as one pass (onednn/concat_norm.hpp): the kernel
// against the concat and the BatchNorm written out by hand, in every layout its parts come in
// and on the OpenMP team; the property on a pre-activation dense block (DenseNet's layer) against
// the reference kernels, and the forms it declines with the reason.
#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <map>
#include <mutex>
#include <random>
#include <string>
#include <utility>
#include <vector>

#include "sgmatch/exec/executor.hpp"
#include "sgmatch/exec/subgraph.hpp"
#include "sgmatch/graph/builders.hpp"
#include "sgmatch/onednn/backend.hpp"
#include "sgmatch/onednn/threads.hpp"
#include "support/numeric.hpp"
#include "support/reports.hpp"

using namespace sgmatch;
using onednn::dims;
using onednn::tensor;

namespace {

using tag = dnnl::memory::format_tag;

struct cn_part {
    dims shape;
    tag layout;  // tag::undef: plain
};

onednn::batch_norm_spec cn_spec(std::int64_t C, bool relu, std::mt19937& rng) {
    std::uniform_real_distribution<float> u(0.0f, 1.0f);
    onednn::batch_norm_spec s;
    s.name = "norm";
    for (std::int64_t c = 0; c < C; ++c) {
        s.scale.push_back(0.5f + u(rng));
        s.shift.push_back(u(rng) - 0.5f);
        s.mean.push_back(u(rng) - 0.5f);
        s.var.push_back(0.5f + u(rng));
    }
    s.eps = 1e-3f;
    s.relu = relu;
    return s;
}

// Concat along axis 1, then (x - mean) / sqrt(var + eps) * scale + shift, then max(0, .), in
// plain order, element by element.
std::vector<float> cn_by_hand(const std::vector<std::vector<float>>& parts, const std::vector<cn_part>& forms,
                              const onednn::batch_norm_spec& s) {
    const dims& d = forms[0].shape;
    std::int64_t C = 0, S = 1;
    for (const auto& f : forms) C += f.shape[1];
    for (std::size_t i = 2; i < d.size(); ++i) S *= d[i];
    std::vector<float> y(static_cast<std::size_t>(d[0] * C * S));
    for (std::int64_t n = 0; n < d[0]; ++n) {
        std::int64_t c0 = 0;
        for (std::size_t k = 0; k < parts.size(); ++k) {
            const std::int64_t ck = forms[k].shape[1];
            for (std::int64_t c = 0; c < ck; ++c)
                for (std::int64_t i = 0; i < S; ++i) {
                    const auto ch = static_cast<std::size_t>(c0 + c);
                    const double x = parts[k][static_cast<std::size_t>((n * ck + c) * S + i)];
                    double v = (x - s.mean[ch]) / std::sqrt(static_cast<double>(s.var[ch]) + s.eps) * s.scale[ch] + s.shift[ch];
                    if (s.relu) v = std::max(v, 0.0);
                    y[static_cast<std::size_t>(((n * C) + c0 + c) * S + i)] = static_cast<float>(v);
                }
            c0 += ck;
        }
    }
    return y;
}

double cn_max_diff(const std::vector<float>& a, const std::vector<float>& b) {
    REQUIRE(a.size() == b.size());
    double m = 0;
    for (std::size_t i = 0; i < a.size(); ++i) m = std::max(m, std::abs(static_cast<double>(a[i]) - b[i]));
    return m;
}

}  // namespace

TEST_CASE("fused_concat_batch_norm equals the concat and the BatchNorm written out, whatever layout each part comes in") {
    std::mt19937 rng(5);
    struct form {
        const char* what;
        std::vector<cn_part> parts;
        bool relu;
        bool plain_result;  // the result in the plain layout (the first part is plain)
    };
    const form forms[] = {
        {"plain parts", {{{2, 3, 4, 5}, tag::undef}, {{2, 5, 4, 5}, tag::undef}}, true, true},
        {"channels-last parts", {{{2, 16, 6, 6}, tag::nhwc}, {{2, 8, 6, 6}, tag::nhwc}, {{2, 8, 6, 6}, tag::nhwc}}, true, false},
        {"a plain part after a channels-last one", {{{1, 16, 3, 7}, tag::nhwc}, {{1, 5, 3, 7}, tag::undef}}, false, false},
        {"a blocked part (16 channels a block)", {{{2, 32, 5, 5}, tag::nhwc}, {{2, 32, 5, 5}, tag::nChw16c}}, true, false},
        {"a blocked first part", {{{2, 32, 5, 5}, tag::nChw16c}, {{2, 3, 5, 5}, tag::undef}}, true, false},
        {"blocked parts, channels padded (20 in blocks of 8 and of 16)",
         {{{2, 16, 3, 4}, tag::nhwc}, {{2, 20, 3, 4}, tag::nChw8c}, {{2, 20, 3, 4}, tag::nChw16c}}, true, false},
        {"rank 3, a blocked part", {{{2, 6, 9}, tag::nwc}, {{2, 10, 9}, tag::nCw16c}}, true, false},
        {"rank 5, a blocked part", {{{1, 4, 3, 2, 5}, tag::ndhwc}, {{1, 12, 3, 2, 5}, tag::nCdhw8c}}, false, false},
        {"one part", {{{3, 20, 2, 2}, tag::nhwc}}, true, false},
        {"an empty image (a spatial dim of 0), plain", {{{2, 3, 0, 4}, tag::undef}, {{2, 5, 0, 4}, tag::undef}}, true, true},
        {"rank 2", {{{4, 7}, tag::undef}, {{4, 9}, tag::undef}}, true, true},
        {"rank 3, channels last", {{{2, 6, 9}, tag::nwc}, {{2, 10, 9}, tag::nwc}}, false, false},
        {"rank 5, channels last", {{{1, 4, 3, 2, 5}, tag::ndhwc}, {{1, 12, 3, 2, 5}, tag::ndhwc}}, true, false},
        // Large enough for the OpenMP team to split it (16384 values a thread at least).
        {"on two threads, channels last", {{{2, 64, 32, 32}, tag::nhwc}, {{2, 32, 32, 32}, tag::nhwc}}, true, false},
        {"on two threads, plain", {{{2, 64, 32, 32}, tag::undef}, {{2, 32, 32, 32}, tag::undef}}, true, true},
    };
    const onednn::thread_cap two(2);
    for (const auto& f : forms) {
        CAPTURE(std::string(f.what));
        std::int64_t C = 0;
        for (const auto& p : f.parts) C += p.shape[1];
        const auto spec = cn_spec(C, f.relu, rng);
        std::vector<std::vector<float>> values;
        std::vector<tensor> parts;
        dnnl::stream s(onednn::cpu_engine());
        for (const auto& p : f.parts) {
            std::size_t n = 1;
            for (auto d : p.shape) n *= static_cast<std::size_t>(d);
            values.push_back(test::random_values(n, rng, 2.0f));
            tensor t = tensor::from_values(values.back(), p.shape);
            if (p.layout != tag::undef) t = t.in_layout(dnnl::memory::desc(p.shape, dnnl::memory::data_type::f32, p.layout), s);
            parts.push_back(t);
        }
        s.wait();
        const onednn::fused_concat_batch_norm k(spec);
        const std::vector<tensor> extra(parts.begin() + 1, parts.end());
        const tensor y = k.run(parts[0], extra);
        dims out = f.parts[0].shape;
        out[1] = C;
        REQUIRE(y.shape() == out);
        CHECK(y.is_plain() == f.plain_result);
        CHECK(y.desc() == k.dst_desc_for(parts[0]));
        const auto want = cn_by_hand(values, f.parts, spec);
        CHECK(cn_max_diff(y.to_plain(), want) <= 1e-5);
        // Into a destination of another layout: plain, and blocked (computed, then reordered).
        for (tag t : {tag::undef, tag::nChw16c}) {
            if (t == tag::nChw16c && out.size() != 4) continue;
            const tensor z = tensor::allocate(t == tag::undef ? onednn::plain_desc(out) : dnnl::memory::desc(out, dnnl::memory::data_type::f32, t));
            k.run_into(parts[0], extra, z);
            CHECK(cn_max_diff(z.to_plain(), want) <= 1e-5);
        }
    }
}

TEST_CASE("fused_concat_batch_norm refuses parts that do not make its channels or differ outside them, naming the node") {
    std::mt19937 rng(6);
    const onednn::fused_concat_batch_norm k(cn_spec(8, true, rng));
    auto t = [&](const dims& d) {
        std::size_t n = 1;
        for (auto x : d) n *= static_cast<std::size_t>(x);
        return tensor::from_values(test::random_values(n, rng, 1.0f), d);
    };
    CHECK_THROWS_WITH_AS(k.run(t({1, 4, 2, 2}), {t({1, 3, 2, 2})}), doctest::Contains("'norm'): the parts have 7 channels, the BatchNorm 8"),
                         onednn::kernel_error);
    CHECK_THROWS_WITH_AS(k.run(t({1, 4, 2, 2}), {t({1, 4, 2, 3})}), doctest::Contains("differ outside the channels"), onednn::kernel_error);
    CHECK_THROWS_WITH_AS(k.run(t({1, 4, 2, 2}), {t({1, 4, 4})}), doctest::Contains("differ outside the channels"), onednn::kernel_error);
    const tensor wrong = tensor::allocate(onednn::plain_desc({1, 9, 2, 2}));
    CHECK_THROWS_WITH_AS(k.run_into(t({1, 4, 2, 2}), {t({1, 4, 2, 2})}, wrong), doctest::Contains("the destination is not of dims"),
                         onednn::kernel_error);
}

TEST_CASE("parallel_ranges covers 0 to n once, in ranges of at least the grain, on the calling thread when there is little work") {
    for (int cap : {1, 2}) {
        const onednn::thread_cap c(cap);
        for (std::size_t n : {0u, 1u, 7u, 100u, 1000u, 4097u}) {
            for (std::size_t grain : {1u, 16u, 1000u}) {
                CAPTURE(cap);
                CAPTURE(n);
                CAPTURE(grain);
                std::mutex mu;
                std::vector<std::pair<std::size_t, std::size_t>> ranges;
                onednn::parallel_ranges(n, grain, [&](std::size_t b, std::size_t e) {
                    std::lock_guard<std::mutex> lock(mu);
                    ranges.emplace_back(b, e);
                });
                std::sort(ranges.begin(), ranges.end());
                std::size_t at = 0;
                for (const auto& r : ranges) {
                    CHECK(r.first == at);
                    CHECK(r.second >= r.first);
                    if (ranges.size() > 1) CHECK(r.second - r.first >= grain);
                    at = r.second;
                }
                CHECK(at == n);
                const std::size_t most = std::min<std::size_t>(static_cast<std::size_t>(cap), n / grain);
                CHECK(ranges.size() <= std::max<std::size_t>(most, 1));
            }
        }
    }
}

namespace {

// DenseNet's layer, pre-activation: x -> conv -> f0; each layer i reads Concat(f0, ..., f(i-1)),
// BatchNorm, Relu, a 1x1 conv to 4 * growth, BatchNorm, Relu, a 3x3 conv to growth channels.
graph dense_block(std::int64_t batch, int layers, bool cat_also_output) {
    graph g;
    build::layers L(g, true, /*data_seed=*/9);
    const std::int64_t growth = 8;
    build::act x{g.add_input("x", tensor_type{dtype::f32, {batch, 3, 10, 10}}), batch, 3, 10, 10};
    std::vector<build::act> features{L.conv("stem", x, 16, 3, 1, 1)};
    for (int i = 0; i < layers; ++i) {
        const std::string n = "layer" + std::to_string(i);
        build::act in = features[0];
        if (features.size() > 1) {
            std::vector<input_ref> parts;
            std::int64_t C = 0;
            for (const auto& f : features) parts.push_back(f.node), C += f.c;
            const node_id cat = g.add_op("Concat", n + ".cat", parts, {{"axis", 1}});
            g.set_type({cat, 0}, tensor_type{dtype::f32, {batch, C, 10, 10}});
            in = build::act{cat, batch, C, 10, 10};
            if (cat_also_output && i == 1) g.mark_output(cat);
        }
        build::act y = L.relu(n + ".relu1", L.bn(n + ".norm1", in));
        y = L.relu(n + ".relu2", L.bn(n + ".norm2", L.conv(n + ".conv1", y, 4 * growth, 1, 1, 0)));
        features.push_back(L.conv(n + ".conv2", y, growth, 3, 1, 1));
    }
    g.mark_output(features.back().node);
    return g;
}

std::size_t count_ops(const graph& g, const std::string& op) {
    std::size_t k = 0;
    for (node_id n : g.nodes()) k += g.kind(n) == node_kind::op && g.op_name(n) == op ? 1 : 0;
    return k;
}

}  // namespace

TEST_CASE("a pre-activation dense block: each Concat + BatchNorm + Relu one fused node, equal to the reference kernels") {
    onednn::register_backend<graph>();
    for (std::int64_t batch : {1, 2}) {
        CAPTURE(batch);
        graph g = dense_block(batch, 4, false);
        std::mt19937 rng(8);
        const std::map<std::string, reference::array> in{{"x", test::random_array({batch, 3, 10, 10}, rng, 1.0f)}};
        const auto want = exec::executor(g)(in).at(0);
        const auto reports = apply_backend(g, "onednn");
        CHECK(test::report(reports, "onednn.concat_batch_norm").accepted == 3);  // layers 1 to 3
        CHECK(count_ops(g, "Concat") == 0);
        CHECK(count_ops(g, "onednn.fused_concat_batch_norm") == 3);
        CHECK(count_ops(g, "onednn.fused_batch_norm") == 1);  // layer 0 reads the stem alone
        for (const auto m : {exec::mode::onednn}) {
            const exec::executor run(g, m);
            for (int r = 0; r < 2; ++r) {
                exec::run_stats st;
                const auto got = run(in, &st).at(0);
                CHECK(st.fallbacks == 0);
                CHECK(st.planned_bytes > 0);  // the concat's result placed by the plan, in its layout
                CHECK(test::max_rel_error(got, want) <= 1e-4);
            }
        }
        // Through the regions backend as well (the same fusion inside each region).
        exec::register_region_backend();
        graph regions = dense_block(batch, 4, false);
        apply_backend(regions, "onednn.regions");
        CHECK(test::max_rel_error(exec::executor(regions, exec::mode::onednn)(in).at(0), want) <= 1e-4);
    }
}

TEST_CASE("Concat + BatchNorm that is no dense layer's stays unfused, declined with the reason where it matches") {
    onednn::register_backend<graph>();
    std::mt19937 rng(9);
    SUBCASE("the concat's result is read elsewhere too") {
        graph g = dense_block(1, 3, true);
        const std::map<std::string, reference::array> in{{"x", test::random_array({1, 3, 10, 10}, rng, 1.0f)}};
        const auto want = exec::executor(g)(in);
        const auto reports = apply_backend(g, "onednn");
        const auto& r = test::report(reports, "onednn.concat_batch_norm");
        CHECK(r.accepted == 1);
        // A chain's intermediate read elsewhere is no match at all: only layer 2's is a candidate.
        CHECK(r.candidates == 1);
        CHECK(count_ops(g, "Concat") == 1);
        const auto got = exec::executor(g, exec::mode::onednn)(in);
        for (std::size_t i = 0; i < got.size(); ++i) CHECK(test::max_rel_error(got[i], want[i]) <= 1e-4);
    }
    SUBCASE("along another axis than the channels") {
        graph g;
        build::layers L(g, true, 3);
        build::act x{g.add_input("x", tensor_type{dtype::f32, {1, 8, 4, 4}}), 1, 8, 4, 4};
        const build::act a = L.conv("a", x, 8, 1, 1, 0), b = L.conv("b", x, 8, 1, 1, 0);
        const node_id cat = g.add_op("Concat", "cat", {a.node, b.node}, {{"axis", 2}});
        g.set_type({cat, 0}, tensor_type{dtype::f32, {1, 8, 8, 4}});
        g.mark_output(L.relu("r", L.bn("norm", build::act{cat, 1, 8, 8, 4})).node);
        const std::map<std::string, reference::array> in{{"x", test::random_array({1, 8, 4, 4}, rng, 1.0f)}};
        const auto want = exec::executor(g)(in).at(0);
        const auto reports = apply_backend(g, "onednn");
        const auto& r = test::report(reports, "onednn.concat_batch_norm");
        CHECK(r.accepted == 0);
        CHECK(test::said(r, "not along the channels"));
        CHECK(test::max_rel_error(exec::executor(g, exec::mode::onednn)(in).at(0), want) <= 1e-4);
    }
    SUBCASE("a part's shape unknown") {
        graph g;
        build::layers L(g, true, 3);
        build::act x{g.add_input("x", tensor_type{dtype::f32, {1, 8, 4, 4}}), 1, 8, 4, 4};
        const build::act a = L.conv("a", x, 8, 1, 1, 0);
        const node_id b = g.add_op("Sigmoid", "b", {x.node});  // no declared type
        const node_id cat = g.add_op("Concat", "cat", {a.node, b}, {{"axis", 1}});
        g.mark_output(L.relu("r", L.bn("norm", build::act{cat, 1, 16, 4, 4})).node);
        const auto reports = apply_backend(g, "onednn");
        const auto& r = test::report(reports, "onednn.concat_batch_norm");
        CHECK(r.accepted == 0);
        CHECK(test::said(r, "the shape of part 1 is unknown"));
    }
}
