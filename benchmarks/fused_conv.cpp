// Fused conv kernels: sgmatch's fused_conv against a hand-written oneDNN fused primitive and
// against unfused oneDNN (one primitive per op), for ResNet-50 and MobileNetV2 layer shapes.
//
//   hand     - hand-written oneDNN: conv with format any and the algorithm sgmatch's kernel picks
//              (Winograd for a 3x3 stride-1 conv with 14x14 outputs or more, else direct), BN
//              folded into weights and bias, post-ops relu (or sum + relu), weights reordered
//              once, every buffer allocated once, the residual accumulated in place.
//   sgmatch  - onednn::fused_conv from a conv_spec (BN folded by fold_batch_norm), run_into a
//              reused destination; with a residual, the destination is the residual (in place).
//   alloc    - the same kernel through run(), which allocates its destination each call and
//              copies the residual into it (a run without a buffer plan).
//   unfused  - one primitive per op, format any, the same conv algorithm: conv,
//              batch_normalization (global stats, scale and shift) in the conv's layout, binary
//              add, eltwise relu; buffers allocated once.
//   direct   - where sgmatch's kernel runs Winograd: the same kernel with conv_spec::winograd
//              off (the direct kernel), its input and residual in the layouts it prefers.
//
// Inputs arrive in the layout the conv primitive prefers (what the previous fused node hands
// on), for every variant; weight reorders are outside the timed calls. Timed by Google
// Benchmark (gbench.hpp: repetitions, random interleaving, medians; its flags pass through); the
// ratios of medians follow the table, the first of each case with the implementation oneDNN
// picked. All variants' outputs are compared with the hand-written one before anything is timed.
// usage: fused_conv [--check] [--only SUBSTRING] [--benchmark_...]
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <functional>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include <oneapi/dnnl/dnnl.hpp>

#include "gbench.hpp"
#include "sgmatch/onednn/fused_conv.hpp"

using namespace sgmatch;
using onednn::dims;
using onednn::post_op;
using tag = dnnl::memory::format_tag;
using dt = dnnl::memory::data_type;
using md = dnnl::memory::desc;

namespace {

struct shape {
    const char* name;
    std::int64_t c, o, hw, k, stride, groups;
};

const shape shapes[] = {
    {"resnet 1x1 64->256 @56", 64, 256, 56, 1, 1, 1},
    {"resnet 3x3 64->64 @56", 64, 64, 56, 3, 1, 1},
    {"resnet 3x3 256->256 @14", 256, 256, 14, 3, 1, 1},
    {"resnet 1x1 1024->2048 @14 s2", 1024, 2048, 14, 1, 2, 1},
    {"mobilenetv2 dw3x3 96 @112 s2", 96, 96, 112, 3, 2, 96},
};

std::vector<float> rnd(std::size_t n, std::mt19937& g, float lo, float hi) {
    std::uniform_real_distribution<float> d(lo, hi);
    std::vector<float> v(n);
    for (auto& x : v) x = d(g);
    return v;
}

float max_abs_diff(const onednn::tensor& a, const onednn::tensor& b) {
    const auto x = a.to_plain(), y = b.to_plain();
    float m = 0;
    for (std::size_t i = 0; i < x.size(); ++i) m = std::max(m, std::fabs(x[i] - y[i]));
    return m;
}

struct setup {
    shape sh;
    std::int64_t batch;
    bool residual;
    dims src_d, dst_d, w_d;
    std::vector<float> w, scale, shift, mean, var;
    double gflop;
};

setup make_setup(const shape& sh, std::int64_t batch, bool residual, std::mt19937& rng) {
    setup s{sh, batch, residual, {}, {}, {}, {}, {}, {}, {}, {}, 0};
    const std::int64_t pad = sh.k / 2, out = (sh.hw + 2 * pad - sh.k) / sh.stride + 1;
    s.src_d = {batch, sh.c, sh.hw, sh.hw};
    s.dst_d = {batch, sh.o, out, out};
    s.w_d = {sh.o, sh.c / sh.groups, sh.k, sh.k};
    const auto wn = static_cast<std::size_t>(sh.o * (sh.c / sh.groups) * sh.k * sh.k);
    const float bound = std::sqrt(6.0f / static_cast<float>(sh.c / sh.groups * sh.k * sh.k));
    s.w = rnd(wn, rng, -bound, bound);
    const auto O = static_cast<std::size_t>(sh.o);
    s.scale = rnd(O, rng, 0.5f, 1.0f), s.shift = rnd(O, rng, -0.2f, 0.2f);
    s.mean = rnd(O, rng, -0.2f, 0.2f), s.var = rnd(O, rng, 0.5f, 1.5f);
    s.gflop = 2.0 * static_cast<double>(batch * sh.o * out * out) * static_cast<double>(sh.c / sh.groups * sh.k * sh.k) / 1e9;
    return s;
}

// ---------------- the variants: each prepares once and returns the timed call ----------------
struct variant {
    const char* name;
    std::function<void()> run;
    std::function<onednn::tensor()> output;  // after run(): the result, for the cross-check
};

dnnl::memory::dims conv_strides(const setup& s) { return {s.sh.stride, s.sh.stride}; }
dnnl::memory::dims conv_pads(const setup& s) { return {s.sh.k / 2, s.sh.k / 2}; }
dims weights_dims(const setup& s) {
    return s.sh.groups > 1 ? dims{s.sh.groups, s.sh.o / s.sh.groups, s.sh.c / s.sh.groups, s.sh.k, s.sh.k} : s.w_d;
}

// Shared state: the input in the conv's preferred layout and the residual in the dst layout.
struct io {
    onednn::tensor src;       // preferred layout
    onednn::tensor residual;  // dst layout, never written
};

std::shared_ptr<onednn::fused_conv> sgmatch_kernel(const setup& s, bool winograd = true);

// The conv algorithm sgmatch's kernel runs for this case: every variant runs the same one.
dnnl::algorithm conv_algorithm(const setup& s) {
    return sgmatch_kernel(s)->implementation(s.src_d).find("wino") != std::string::npos ? dnnl::algorithm::convolution_winograd
                                                                                        : dnnl::algorithm::convolution_direct;
}

variant hand(const setup& s, const io& in) {
    const auto& eng = onednn::cpu_engine();
    // Fold BN by hand.
    std::vector<float> w = s.w, b(static_cast<std::size_t>(s.sh.o));
    const std::size_t per = w.size() / b.size();
    for (std::size_t o = 0; o < b.size(); ++o) {
        const float k = s.scale[o] / std::sqrt(s.var[o] + 1e-5f);
        for (std::size_t i = 0; i < per; ++i) w[o * per + i] *= k;
        b[o] = -s.mean[o] * k + s.shift[o];
    }
    dnnl::post_ops po;
    if (s.residual) po.append_sum(1.0f);
    onednn::compat::append_eltwise(po, dnnl::algorithm::eltwise_relu, 0.0f, 0.0f);
    dnnl::primitive_attr attr;
    attr.set_post_ops(po);
    auto pd = onednn::compat::conv_pd(eng, md(s.src_d, dt::f32, tag::any), md(weights_dims(s), dt::f32, tag::any),
                                      md({s.sh.o}, dt::f32, tag::a), md(s.dst_d, dt::f32, tag::any), conv_strides(s),
                                      {0, 0}, conv_pads(s), conv_pads(s), attr, conv_algorithm(s));
    struct state {
        dnnl::convolution_forward prim;
        dnnl::memory src, w, b, dst;
        onednn::tensor src_held, residual;  // src_held: what src views
        bool sum;
        dnnl::stream st;
    };
    auto st = std::make_shared<state>();
    st->prim = dnnl::convolution_forward(pd);
    dnnl::stream strm(eng);
    st->src_held = in.src.in_layout(pd.src_desc(), strm);
    st->src = st->src_held.memory();
    st->w = dnnl::memory(pd.weights_desc(), eng);
    onednn::tensor::view(w.data(), weights_dims(s)).reorder_into(onednn::tensor(st->w), strm);
    st->b = dnnl::memory(pd.bias_desc(), eng);
    std::memcpy(st->b.get_data_handle(), b.data(), b.size() * sizeof(float));
    st->dst = dnnl::memory(pd.dst_desc(), eng);
    st->residual = in.residual;
    st->sum = s.residual;
    st->st = strm;
    auto refill = [st] {  // the in-place accumulation consumes the residual: restore it (untimed)
        if (st->sum) st->residual.reorder_into(onednn::tensor(st->dst), st->st);
    };
    refill();
    return {"hand",
            [st] { st->prim.execute(st->st, {{DNNL_ARG_SRC, st->src}, {DNNL_ARG_WEIGHTS, st->w}, {DNNL_ARG_BIAS, st->b}, {DNNL_ARG_DST, st->dst}}); },
            [st, refill] {
                refill();
                st->prim.execute(st->st, {{DNNL_ARG_SRC, st->src}, {DNNL_ARG_WEIGHTS, st->w}, {DNNL_ARG_BIAS, st->b}, {DNNL_ARG_DST, st->dst}});
                st->st.wait();
                return onednn::tensor(st->dst);
            }};
}

std::shared_ptr<onednn::fused_conv> sgmatch_kernel(const setup& s, bool winograd) {
    onednn::conv_spec spec;
    spec.winograd = winograd;
    spec.weights_dims = s.w_d;
    spec.weights = s.w;
    spec.groups = s.sh.groups;
    spec.strides = conv_strides(s);
    spec.pads_begin = spec.pads_end = conv_pads(s);
    spec.fold_batch_norm(s.scale, s.shift, s.mean, s.var, 1e-5f);
    if (s.residual) spec.post_ops.push_back(post_op::sum(0));
    spec.post_ops.push_back(post_op::eltwise(dnnl::algorithm::eltwise_relu));
    return std::make_shared<onednn::fused_conv>(spec);
}

variant sgmatch_into(const setup& s, const io& in, bool winograd = true) {
    auto k = sgmatch_kernel(s, winograd);
    auto dst = std::make_shared<onednn::tensor>(onednn::tensor::allocate(k->dst_desc(s.src_d)));
    auto src = in.src;
    auto residual = in.residual;
    const bool sum = s.residual;
    auto refill = [dst, residual, sum] {
        if (sum) residual.reorder_into(*dst, dnnl::stream(onednn::cpu_engine()));
    };
    refill();
    auto extra = std::make_shared<std::vector<onednn::tensor>>();
    if (sum) extra->push_back(*dst);  // in place: the destination is the residual
    return {winograd ? "sgmatch" : "direct", [k, src, dst, extra] { k->run_into(src, *extra, *dst); },
            [k, src, dst, extra, refill] {
                refill();
                k->run_into(src, *extra, *dst);
                return *dst;
            }};
}

variant sgmatch_alloc(const setup& s, const io& in) {
    auto k = sgmatch_kernel(s);
    auto src = in.src;
    auto extra = std::make_shared<std::vector<onednn::tensor>>();
    if (s.residual) extra->push_back(in.residual);
    auto last = std::make_shared<onednn::tensor>();
    return {"alloc", [k, src, extra, last] { *last = k->run(src, *extra); },
            [k, src, extra] { return k->run(src, *extra); }};
}

variant unfused(const setup& s, const io& in) {
    const auto& eng = onednn::cpu_engine();
    dnnl::primitive_attr none;
    auto cpd = onednn::compat::conv_pd(eng, md(s.src_d, dt::f32, tag::any), md(weights_dims(s), dt::f32, tag::any), md(),
                                       md(s.dst_d, dt::f32, tag::any), conv_strides(s), {0, 0}, conv_pads(s),
                                       conv_pads(s), none, conv_algorithm(s));
    const md y = cpd.dst_desc();
    using bn = dnnl::batch_normalization_forward;
#if DNNL_VERSION_MAJOR >= 3
    const auto flags = dnnl::normalization_flags::use_global_stats | dnnl::normalization_flags::use_scale |
                       dnnl::normalization_flags::use_shift;
    bn::primitive_desc bpd(eng, dnnl::prop_kind::forward_inference, y, y, 1e-5f, flags);
#else
    const auto flags = dnnl::normalization_flags::use_global_stats | dnnl::normalization_flags::use_scale_shift;
    bn::primitive_desc bpd(bn::desc(dnnl::prop_kind::forward_inference, y, 1e-5f, flags), eng);
#endif
    auto epd = onednn::compat::eltwise_pd(eng, dnnl::algorithm::eltwise_relu, y, 0.0f, 0.0f);
    auto apd = onednn::compat::binary_pd(eng, dnnl::algorithm::binary_add, y, y, y);
    struct state {
        dnnl::convolution_forward conv;
        bn bnorm;
        dnnl::eltwise_forward relu;
        dnnl::binary add;
        dnnl::memory src, w, dst, mean, var, ss, residual;
        onednn::tensor src_held, residual_held;  // what src and residual view, when reordered
        bool sum;
        dnnl::stream st;
    };
    auto st = std::make_shared<state>();
    dnnl::stream strm(eng);
    st->conv = dnnl::convolution_forward(cpd);
    st->bnorm = bn(bpd);
    st->relu = dnnl::eltwise_forward(epd);
    st->add = dnnl::binary(apd);
    st->src_held = in.src.in_layout(cpd.src_desc(), strm);
    st->src = st->src_held.memory();
    st->w = dnnl::memory(cpd.weights_desc(), eng);
    onednn::tensor::view(s.w.data(), weights_dims(s)).reorder_into(onednn::tensor(st->w), strm);
    st->dst = dnnl::memory(y, eng);
    const auto O = static_cast<std::size_t>(s.sh.o);
    st->mean = dnnl::memory(md({s.sh.o}, dt::f32, tag::a), eng);
    st->var = dnnl::memory(md({s.sh.o}, dt::f32, tag::a), eng);
    std::memcpy(st->mean.get_data_handle(), s.mean.data(), O * sizeof(float));
    std::memcpy(st->var.get_data_handle(), s.var.data(), O * sizeof(float));
    std::vector<float> ss(s.scale);
    ss.insert(ss.end(), s.shift.begin(), s.shift.end());
    st->ss = dnnl::memory(md({2, s.sh.o}, dt::f32, tag::ab), eng);
    std::memcpy(st->ss.get_data_handle(), ss.data(), 2 * O * sizeof(float));
    st->residual_held = in.residual.in_layout(y, strm);
    st->residual = st->residual_held.memory();
    st->sum = s.residual;
    st->st = strm;
    auto run = [st] {
        st->conv.execute(st->st, {{DNNL_ARG_SRC, st->src}, {DNNL_ARG_WEIGHTS, st->w}, {DNNL_ARG_DST, st->dst}});
#if DNNL_VERSION_MAJOR >= 3
        st->bnorm.execute(st->st, {{DNNL_ARG_SRC, st->dst}, {DNNL_ARG_MEAN, st->mean}, {DNNL_ARG_VARIANCE, st->var},
                                   {DNNL_ARG_SCALE, st->ss}, {DNNL_ARG_DST, st->dst}});
#else
        st->bnorm.execute(st->st, {{DNNL_ARG_SRC, st->dst}, {DNNL_ARG_MEAN, st->mean}, {DNNL_ARG_VARIANCE, st->var},
                                   {DNNL_ARG_SCALE_SHIFT, st->ss}, {DNNL_ARG_DST, st->dst}});
#endif
        if (st->sum)
            st->add.execute(st->st, {{DNNL_ARG_SRC_0, st->dst}, {DNNL_ARG_SRC_1, st->residual}, {DNNL_ARG_DST, st->dst}});
        st->relu.execute(st->st, {{DNNL_ARG_SRC, st->dst}, {DNNL_ARG_DST, st->dst}});
    };
    return {"unfused", run, [st, run] {
                run();
                st->st.wait();
                return onednn::tensor(st->dst);
            }};
}

// One case: its inputs (kept alive: a view of them may be what a variant reads) and variants.
struct bench_case {
    std::string label, implementation;
    std::vector<float> plain_x, plain_r;
    io in;
    io direct_in;  // for the direct variant: in the layouts the direct kernel prefers
    std::vector<variant> vs;
};

}  // namespace

int main(int argc, char** argv) {
    bool check = false;
    std::string only;
    std::vector<char*> rest{argv[0]};  // what is left for Google Benchmark
    for (int i = 1; i < argc; ++i) {
        const std::string a = argv[i];
        if (a == "--check") check = true;
        else if (a == "--only" && i + 1 < argc) only = argv[++i];
        else rest.push_back(argv[i]);
    }
    std::mt19937 rng(1);
    int failures = 0;
    std::vector<std::unique_ptr<bench_case>> cases;
    std::vector<sgbench::ratio> ratios;
    for (const shape& sh : shapes)
        for (std::int64_t batch : {1, 8})
            for (bool residual : {false, true}) {
                const std::string label = std::string(sh.name) + " b" + std::to_string(batch) + (residual ? " cbar" : " cbr");
                if (!only.empty() && label.find(only) == std::string::npos) continue;
                if (check && (batch != 1 || sh.c > 256)) continue;  // --check: the small cases only
                const setup s = make_setup(sh, batch, residual, rng);
                auto c = std::make_unique<bench_case>();
                c->label = label;
                c->implementation = sgmatch_kernel(s)->implementation(s.src_d);
                c->plain_x = rnd(static_cast<std::size_t>(batch * sh.c * sh.hw * sh.hw), rng, -1.0f, 1.0f);
                c->plain_r = rnd(static_cast<std::size_t>(s.dst_d[0] * s.dst_d[1] * s.dst_d[2] * s.dst_d[3]), rng, -1.0f, 1.0f);
                dnnl::stream strm(onednn::cpu_engine());
                // The input as the previous fused node would hand it on: in the conv's preferred layout.
                const auto x_pd = onednn::compat::conv_pd(
                    onednn::cpu_engine(), md(s.src_d, dt::f32, tag::any), md(weights_dims(s), dt::f32, tag::any), md(),
                    md(s.dst_d, dt::f32, tag::any), conv_strides(s), {0, 0}, conv_pads(s), conv_pads(s), {}, conv_algorithm(s));
                c->in.src = onednn::tensor::view(c->plain_x.data(), s.src_d).in_layout(x_pd.src_desc(), strm);
                c->in.residual = onednn::tensor::view(c->plain_r.data(), s.dst_d).in_layout(sgmatch_kernel(s)->dst_desc(s.src_d), strm);
                c->vs = {hand(s, c->in), sgmatch_into(s, c->in), sgmatch_alloc(s, c->in), unfused(s, c->in)};
                // Where the kernel runs Winograd: the same kernel on the direct algorithm, its input
                // and residual in the layouts that one prefers.
                const bool winograd = c->implementation.find("wino") != std::string::npos;
                if (winograd) {
                    const auto direct = sgmatch_kernel(s, false);
                    c->direct_in.src = onednn::tensor::view(c->plain_x.data(), s.src_d).in_layout(direct->src_desc(s.src_d), strm);
                    c->direct_in.residual = onednn::tensor::view(c->plain_r.data(), s.dst_d).in_layout(direct->dst_desc(s.src_d), strm);
                    c->vs.push_back(sgmatch_into(s, c->direct_in, false));
                }
                // Cross-check every variant against the hand-written one.
                const onednn::tensor ref = c->vs[0].output();
                const std::vector<float> ref_plain = ref.to_plain();
                for (std::size_t v = 1; v < c->vs.size(); ++v) {
                    const float d = max_abs_diff(ref, c->vs[v].output());
                    float scale = 1;
                    for (float x : ref_plain) scale = std::max(scale, std::fabs(x));
                    if (!(d <= 1e-4f * scale)) {
                        std::fprintf(stderr, "%s: %s differs from hand by %g\n", label.c_str(), c->vs[v].name, d);
                        ++failures;
                    }
                }
                if (check) continue;
                for (const variant& v : c->vs) {
                    const std::function<void()> run = v.run;
                    benchmark::RegisterBenchmark((std::string(v.name) + "/" + label).c_str(), [run](benchmark::State& st) {
                        for (auto _ : st) run();
                    })->Unit(benchmark::kMicrosecond)->UseRealTime();
                }
                ratios.push_back({label + " sgmatch/hand", "sgmatch/" + label, "hand/" + label, c->implementation});
                ratios.push_back({label + " alloc/hand", "alloc/" + label, "hand/" + label, ""});
                ratios.push_back({label + " unfused/sgmatch", "unfused/" + label, "sgmatch/" + label, ""});
                if (winograd) ratios.push_back({label + " direct/sgmatch", "direct/" + label, "sgmatch/" + label, ""});
                cases.push_back(std::move(c));
            }
    if (failures) {
        std::fprintf(stderr, "%d variant(s) disagreed\n", failures);
        return 1;
    }
    if (check) {
        std::printf("check: all variants agree\n");
        return 0;
    }
    return sgbench::run(static_cast<int>(rest.size()), rest.data(), ratios);
}
