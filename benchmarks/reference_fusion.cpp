// A fusion oneDNN can only run on a reference implementation: relu(dwconv(x)) + x, a 3x3
// depthwise conv (pad 1) with a ReLU and a residual sum, in the plain and the blocked layouts.
//
//   fused    - hand-written oneDNN: the conv primitive with the ReLU and the sum as post-ops, what
//              a kernel that fuses every post-op it is given builds (oneDNN 2.6: ref:any).
//   sgmatch  - onednn::fused_conv with the same post-ops, run_into the residual (in place): it
//              sees that the fused primitive is a reference one and the conv alone is not, and
//              runs the post-ops after the conv (detail::build_or_unfuse).
//
// Weights are reordered outside the timed calls; the residual is the destination in both.
// Timed by Google Benchmark (gbench.hpp: repetitions, random interleaving, medians); the ratio
// sgmatch / fused follows the table with the implementations each ran. --check compares the two
// outputs (and checks that sgmatch's kernel does not run a reference implementation) and exits.
// usage: reference_fusion [--check] [--benchmark_...]
#include <algorithm>
#include <cmath>
#include <cstdio>
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
using md = dnnl::memory::desc;
using dt = dnnl::memory::data_type;
using tag = dnnl::memory::format_tag;

namespace {

constexpr std::int64_t channels = 32, side = 56;

// Both variants for one layout: the hand-written fused primitive and sgmatch's kernel, with
// their inputs in that layout and each with a residual buffer holding x.
struct variant_pair {
    variant_pair(tag layout, const std::vector<float>& x, const onednn::conv_spec& spec)
        : name(layout == tag::nchw ? "plain" : "blocked"), kernel(spec) {
        const auto& eng = onednn::cpu_engine();
        const dims sd{1, channels, side, side};
        dnnl::post_ops po;
        onednn::compat::append_eltwise(po, dnnl::algorithm::eltwise_relu, 0.0f, 0.0f);
        po.append_sum(1.0f);
        dnnl::primitive_attr attr;
        attr.set_post_ops(po);
        const md s(sd, dt::f32, layout), w({channels, 1, 1, 3, 3}, dt::f32, tag::any), b({channels}, dt::f32, tag::a);
        pd = onednn::compat::conv_pd(eng, s, w, b, s, {1, 1}, {0, 0}, {1, 1}, {1, 1}, attr);
        prim = dnnl::convolution_forward(pd);
        dnnl::stream strm(eng);
        auto from_plain = [&](const std::vector<float>& v, const dims& d, tag plain, const md& to) {
            dnnl::memory p(md(d, dt::f32, plain), eng, const_cast<float*>(v.data()));
            dnnl::memory m(to, eng);
            dnnl::reorder(p, m).execute(strm, p, m);
            return m;
        };
        src = from_plain(x, sd, tag::nchw, pd.src_desc());
        weights = from_plain(spec.weights.to_vector(), {channels, 1, 1, 3, 3}, tag::goihw, pd.weights_desc());
        bias = from_plain(spec.bias, {channels}, tag::a, pd.bias_desc());
        fused_dst = from_plain(x, sd, tag::nchw, pd.dst_desc());
        sgmatch_dst = from_plain(x, sd, tag::nchw, kernel.dst_desc(sd));
        strm.wait();
    }
    std::string name;
    dnnl::convolution_forward::primitive_desc pd;
    dnnl::convolution_forward prim;
    dnnl::memory src, weights, bias, fused_dst, sgmatch_dst;
    onednn::fused_conv kernel;
};

void run_fused(variant_pair& v) {
    dnnl::stream strm(onednn::cpu_engine());
    v.prim.execute(strm, {{DNNL_ARG_SRC, v.src}, {DNNL_ARG_WEIGHTS, v.weights}, {DNNL_ARG_BIAS, v.bias}, {DNNL_ARG_DST, v.fused_dst}});
    strm.wait();
}

void run_sgmatch(variant_pair& v) {
    const onednn::tensor src(v.src), y(v.sgmatch_dst);
    v.kernel.run_into(src, {y}, y);
}

std::vector<float> plain_values(const dnnl::memory& m) {
    const dims d = onednn::compat::dims_of(m.get_desc());
    std::vector<float> out(static_cast<std::size_t>(d[0] * d[1] * d[2] * d[3]));
    onednn::tensor(m).reorder_into(onednn::tensor::view(out.data(), d), onednn::cpu_stream());
    return out;
}

}  // namespace

int main(int argc, char** argv) {
    const auto cl = sgbench::take_check(argc, argv);
    std::mt19937 rng(5);
    std::uniform_real_distribution<float> u(-1.0f, 1.0f);
    std::vector<float> x(static_cast<std::size_t>(channels * side * side));
    for (auto& e : x) e = u(rng);
    onednn::conv_spec spec;
    spec.name = "dw";
    spec.weights_dims = {channels, 1, 3, 3};
    spec.groups = channels;
    std::vector<float> w(static_cast<std::size_t>(channels * 9)), b(static_cast<std::size_t>(channels));
    for (auto& e : w) e = u(rng) * 0.3f;
    for (auto& e : b) e = u(rng) * 0.3f;
    spec.weights = w;
    spec.bias = b;
    spec.pads_begin = spec.pads_end = {1, 1};
    spec.post_ops = {post_op::eltwise(dnnl::algorithm::eltwise_relu), post_op::sum(0)};

    std::vector<std::unique_ptr<variant_pair>> pairs;
    for (const tag layout : {tag::nchw, tag::nChw16c}) {
        onednn::conv_spec s = spec;
        s.layout = layout == tag::nchw ? onednn::conv_spec::layout_choice::plain : onednn::conv_spec::layout_choice::blocked;
        pairs.push_back(std::make_unique<variant_pair>(layout, x, s));
    }
    int failed = 0;
    for (auto& p : pairs) {
        variant_pair& v = *p;
        run_fused(v);
        run_sgmatch(v);
        const auto a = plain_values(v.fused_dst), c = plain_values(v.sgmatch_dst);
        double worst = 0;
        for (std::size_t i = 0; i < a.size(); ++i) worst = std::max(worst, std::fabs(double(a[i]) - c[i]) / (1.0 + std::fabs(a[i])));
        const std::string running = v.kernel.running_implementation({1, channels, side, side});
        std::printf("%s: fused primitive %s, sgmatch's kernel %s, max relative difference %.2e\n", v.name.c_str(),
                    onednn::compat::impl_name(v.pd), running.c_str(), worst);
        if (worst > 1e-4 || onednn::detail::reference_implementation(running)) failed = 1;
    }
    if (cl.check) return failed;
    std::vector<sgbench::ratio> ratios;
    for (auto& p : pairs) {
        variant_pair* v = p.get();
        sgbench::register_pair(v->name, "fused", [v] { run_fused(*v); }, "sgmatch", [v] { run_sgmatch(*v); }, ratios);
    }
    const int rc = sgbench::run(static_cast<int>(cl.rest.size()), const_cast<char**>(cl.rest.data()), ratios);
    return rc != 0 ? rc : failed;
}
