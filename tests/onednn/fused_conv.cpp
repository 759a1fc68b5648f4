// Fused convolution kernels against the xtensor reference: random shapes and attributes, every
// eltwise post-op, sum and binary post-ops, BatchNorm folding, the shape cache, concurrent runs.
#if defined(__GNUC__) && !defined(__clang__)
// g++ 12 -O3 in C++20 mode reports a false -Wrestrict inside std::string's operator+ (GCC bug
// 105329); sgmatch's headers silence it for their own code (detail/config.hpp), this file too.
#pragma GCC diagnostic ignored "-Wrestrict"
#endif
#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include "sgmatch/onednn/fused_conv.hpp"
#include "sgmatch/reference/kernels.hpp"
#include "sgmatch/reference/onednn.hpp"
#include "support/numeric.hpp"

using namespace sgmatch;
using onednn::broadcast;
using onednn::post_op;
using reference::array;
using reference::unary_kind;
using alg = dnnl::algorithm;

namespace {

// One eltwise op: how the fused kernel spells it and how the reference computes it.
struct eltwise_case {
    const char* name;
    std::vector<post_op> fused;
    unary_kind ref;
    float alpha, beta;
};

std::vector<eltwise_case> eltwise_cases() {
    auto e = [](alg a, float al = 0, float be = 0) { return post_op::eltwise(a, al, be); };
    return {
        {"relu", {e(alg::eltwise_relu)}, unary_kind::relu, 0, 0},
        {"leaky_relu", {e(alg::eltwise_relu, 0.1f)}, unary_kind::leaky_relu, 0.1f, 0},
        {"clip", {e(alg::eltwise_clip_v2, -0.5f, 0.75f)}, unary_kind::clip, -0.5f, 0.75f},
        {"relu6", {e(alg::eltwise_clip_v2, 0.0f, 6.0f)}, unary_kind::clip, 0.0f, 6.0f},
        {"sigmoid", {e(alg::eltwise_logistic)}, unary_kind::sigmoid, 0, 0},
        {"tanh", {e(alg::eltwise_tanh)}, unary_kind::tanh, 0, 0},
        {"elu", {e(alg::eltwise_elu, 0.7f)}, unary_kind::elu, 0.7f, 0},
        {"gelu_erf", {e(alg::eltwise_gelu_erf)}, unary_kind::gelu_erf, 0, 0},
        {"gelu_tanh", {e(alg::eltwise_gelu_tanh)}, unary_kind::gelu_tanh, 0, 0},
        {"swish", {e(alg::eltwise_swish, 1.0f)}, unary_kind::swish, 1.0f, 0},
        {"hardswish", {e(alg::eltwise_hardswish)}, unary_kind::hardswish, 0, 0},
        // No hardsigmoid eltwise in oneDNN 2.6: linear, then clip to [0, 1].
        {"hardsigmoid", {e(alg::eltwise_linear, 0.2f, 0.5f), e(alg::eltwise_clip_v2, 0.0f, 1.0f)},
         unary_kind::hardsigmoid, 0.2f, 0.5f},
        {"mish", {e(alg::eltwise_mish)}, unary_kind::mish, 0, 0},
        {"softplus", {e(alg::eltwise_soft_relu)}, unary_kind::softplus, 0, 0},
        {"exp", {e(alg::eltwise_exp)}, unary_kind::exp, 0, 0},
        {"square", {e(alg::eltwise_square)}, unary_kind::square, 0, 0},
        {"abs", {e(alg::eltwise_abs)}, unary_kind::abs, 0, 0},
        {"linear", {e(alg::eltwise_linear, 1.5f, -0.25f)}, unary_kind::linear, 1.5f, -0.25f},
    };
}

struct conv_case {
    std::int64_t n, c, o, h, w, k, stride, pad, dilation, groups;
};

conv_case random_conv(std::mt19937& rng) {
    auto pick = [&](std::initializer_list<std::int64_t> v) {
        return *(v.begin() + std::uniform_int_distribution<std::size_t>(0, v.size() - 1)(rng));
    };
    conv_case c{};
    c.n = pick({1, 1, 2, 8});
    c.k = pick({1, 3, 5, 7});
    c.stride = pick({1, 2});
    c.pad = c.k / 2;
    c.dilation = c.k == 3 ? pick({1, 1, 2}) : 1;
    const int kind = std::uniform_int_distribution<int>(0, 3)(rng);  // plain, plain, grouped, depthwise
    c.groups = kind == 2 ? 2 : 1;
    c.c = pick({3, 4, 8, 16}) * (kind == 2 ? 2 : 1);
    c.o = pick({4, 8, 16}) * (kind == 2 ? 2 : 1);
    if (kind == 3) c.groups = c.o = c.c = pick({4, 8, 16});
    c.h = pick({5, 7, 9, 12});
    c.w = pick({5, 8, 11});
    if (c.n == 8) c.h = c.w = 6;  // keep the reference fast
    return c;
}

onednn::conv_spec spec_for(const conv_case& c, std::mt19937& rng, bool bias) {
    onednn::conv_spec s;
    s.weights_dims = {c.o, c.c / c.groups, c.k, c.k};
    s.weights = test::random_values(static_cast<std::size_t>(c.o * (c.c / c.groups) * c.k * c.k), rng, 0.5f);
    if (bias) s.bias = test::random_values(static_cast<std::size_t>(c.o), rng, 0.5f);
    s.groups = c.groups;
    s.strides = {c.stride, c.stride};
    s.dilations = {c.dilation, c.dilation};
    s.pads_begin = s.pads_end = {c.pad, c.pad};
    return s;
}

array ref_conv(const array& x, const onednn::conv_spec& s) {
    array w = test::make_array(s.weights.to_vector(), s.weights_dims);
    array b = s.bias.empty() ? array() : test::make_array(s.bias, {s.out_channels()});
    if (s.bias.empty()) b = xt::zeros<float>({std::size_t(0)});
    return reference::conv(x, w, b, {s.strides, s.pads_begin, s.pads_end, s.dilations, s.groups});
}

std::string describe(const conv_case& c) {
    return "n" + std::to_string(c.n) + " c" + std::to_string(c.c) + " o" + std::to_string(c.o) + " " +
           std::to_string(c.h) + "x" + std::to_string(c.w) + " k" + std::to_string(c.k) + " s" +
           std::to_string(c.stride) + " d" + std::to_string(c.dilation) + " g" + std::to_string(c.groups);
}

}  // namespace

TEST_CASE("fused conv + one eltwise post-op equals reference conv then the op, over random shapes") {
    std::mt19937 rng(7);
    const auto cases = eltwise_cases();
    const int rounds = test::sanitized() ? 1 : 3;
    for (int r = 0; r < rounds; ++r)
        for (const auto& ec : cases) {
            const conv_case c = random_conv(rng);
            CAPTURE(ec.name);
            const std::string shape = describe(c);
            CAPTURE(shape);
            onednn::conv_spec s = spec_for(c, rng, r % 2 == 0);
            const array x = test::random_array({c.n, c.c, c.h, c.w}, rng, 1.0f);
            array expect = ref_conv(x, s);
            expect = reference::unary(expect, ec.ref, ec.alpha, ec.beta);
            s.post_ops = ec.fused;
            onednn::fused_conv k(s);
            const array got = reference::to_array(k.run(reference::to_tensor(x)));
            CHECK(test::max_rel_error(got, expect) <= 1e-4);
        }
}

TEST_CASE("BatchNorm folded into weights and bias, then a chain of up to three post-ops") {
    std::mt19937 rng(11);
    const auto cases = eltwise_cases();
    for (int r = 0; r < (test::sanitized() ? 4 : 24); ++r) {
        const conv_case c = random_conv(rng);
        const std::string shape = describe(c);
        CAPTURE(shape);
        onednn::conv_spec s = spec_for(c, rng, r % 3 != 0);
        const array x = test::random_array({c.n, c.c, c.h, c.w}, rng, 1.0f);
        const auto O = static_cast<std::size_t>(c.o);
        auto scale = test::random_values(O, rng, 1.0f), shift = test::random_values(O, rng, 1.0f);
        auto mean = test::random_values(O, rng, 0.5f), var = test::random_values(O, rng, 0.5f);
        for (auto& v : var) v = std::fabs(v) + 0.1f;
        const auto vec = [](const std::vector<float>& v) { return test::make_array(v, {std::int64_t(v.size())}); };
        array expect = reference::batch_norm(ref_conv(x, s), vec(scale), vec(shift), vec(mean), vec(var), 1e-5f);
        s.fold_batch_norm(scale, shift, mean, var, 1e-5f);
        const int chain = r % 4;
        std::string ops;
        for (int i = 0; i < chain; ++i) {
            const auto& ec = cases[std::uniform_int_distribution<std::size_t>(0, cases.size() - 1)(rng)];
            if (std::string(ec.name) == "exp" || std::string(ec.name) == "square") continue;  // keep magnitudes sane
            ops += std::string(ec.name) + " ";
            expect = reference::unary(expect, ec.ref, ec.alpha, ec.beta);
            s.post_ops.insert(s.post_ops.end(), ec.fused.begin(), ec.fused.end());
        }
        CAPTURE(ops);
        onednn::fused_conv k(s);
        CHECK(test::max_rel_error(reference::to_array(k.run(reference::to_tensor(x))), expect) <= 1e-4);
    }
}

TEST_CASE("residual sum, then relu: the residual is read, never written") {
    std::mt19937 rng(3);
    for (int r = 0; r < (test::sanitized() ? 2 : 8); ++r) {
        conv_case c = random_conv(rng);
        c.stride = 1;
        const std::string shape = describe(c);
        CAPTURE(shape);
        onednn::conv_spec s = spec_for(c, rng, true);
        const array x = test::random_array({c.n, c.c, c.h, c.w}, rng, 1.0f);
        array y = ref_conv(x, s);
        const array residual = test::random_array(test::dims_of(y), rng, 1.0f);
        const array residual_before = residual;
        const array expect = reference::unary(y + residual, unary_kind::relu);
        s.post_ops = {post_op::sum(0), post_op::eltwise(alg::eltwise_relu)};
        onednn::fused_conv k(s);
        const array got = reference::to_array(k.run(reference::to_tensor(x), {reference::to_tensor(residual)}));
        CHECK(test::max_rel_error(got, expect) <= 1e-4);
        CHECK(residual == residual_before);
    }
}

TEST_CASE("binary post-ops: scalar, per-channel and full operands, constant or runtime") {
    std::mt19937 rng(5);
    const std::pair<alg, reference::binary_kind> kinds[] = {
        {alg::binary_add, reference::binary_kind::add}, {alg::binary_sub, reference::binary_kind::sub},
        {alg::binary_mul, reference::binary_kind::mul}, {alg::binary_div, reference::binary_kind::div},
        {alg::binary_max, reference::binary_kind::max}, {alg::binary_min, reference::binary_kind::min}};
    for (const auto& kind : kinds)
        for (broadcast b : {broadcast::scalar, broadcast::per_channel, broadcast::full}) {
            const alg a = kind.first;  // not structured bindings: CAPTURE's lambda cannot capture them
            const reference::binary_kind rk = kind.second;
            const conv_case c = random_conv(rng);
            onednn::conv_spec s = spec_for(c, rng, true);
            const array x = test::random_array({c.n, c.c, c.h, c.w}, rng, 1.0f);
            const array y = ref_conv(x, s);
            const auto yd = test::dims_of(y);
            onednn::dims od(yd.size(), 1);
            if (b == broadcast::full) od = yd;
            if (b == broadcast::per_channel) od[1] = yd[1];
            array operand = test::random_array(od, rng, 1.0f);
            if (rk == reference::binary_kind::div) operand = xt::abs(operand) + 0.5f;
            const array expect = reference::binary(y, operand, rk);
            const bool constant = b != broadcast::full;
            const int bcast = static_cast<int>(b);
            const std::string op_name = onednn::describe(post_op::binary_input(a, 0, b));
            CAPTURE(bcast);
            CAPTURE(op_name);
            s.post_ops.clear();
            if (constant) s.post_ops.push_back(post_op::binary_constant(a, std::vector<float>(operand.begin(), operand.end()), b));
            else s.post_ops.push_back(post_op::binary_input(a, 0, b));
            onednn::fused_conv k(s);
            std::vector<onednn::tensor> extra;
            if (!constant) extra.push_back(reference::to_tensor(operand));
            CHECK(test::max_rel_error(reference::to_array(k.run(reference::to_tensor(x), extra)), expect) <= 1e-4);
        }
}

TEST_CASE("round: exact on integer data") {
    onednn::conv_spec s;
    s.weights_dims = {2, 1, 1, 1};
    s.weights = {1.0f, 2.0f};
    s.post_ops = {post_op::eltwise(alg::eltwise_linear, 0.5f, 0.25f), post_op::eltwise(alg::eltwise_round)};
    const array x = test::make_array({-3, -2, -1, 0, 1, 2, 3, 4}, {1, 1, 2, 4});
    const array got = reference::to_array(onednn::fused_conv(s).run(reference::to_tensor(x)));
    const array expect = reference::unary(reference::unary(
        reference::conv(x, test::make_array(s.weights.to_vector(), s.weights_dims), xt::zeros<float>({std::size_t(0)}),
                        {{1, 1}, {0, 0}, {0, 0}, {1, 1}, 1}),
        unary_kind::linear, 0.5f, 0.25f), unary_kind::round);
    CHECK(got == expect);
}

TEST_CASE("1-D and 3-D convolutions") {
    std::mt19937 rng(9);
    for (std::size_t sp : {1u, 3u}) {
        onednn::conv_spec s;
        onednn::dims xd{2, 4}, wd{6, 4};
        for (std::size_t i = 0; i < sp; ++i) {
            xd.push_back(7);
            wd.push_back(3);
            s.strides.push_back(2);
            s.dilations.push_back(1);
            s.pads_begin.push_back(1);
            s.pads_end.push_back(0);
        }
        s.weights_dims = wd;
        std::size_t nw = 1;
        for (auto d : wd) nw *= static_cast<std::size_t>(d);
        s.weights = test::random_values(nw, rng, 0.5f);
        s.post_ops = {post_op::eltwise(alg::eltwise_tanh)};
        const array x = test::random_array(xd, rng, 1.0f);
        const array expect = reference::unary(
            reference::conv(x, test::make_array(s.weights.to_vector(), wd), xt::zeros<float>({std::size_t(0)}),
                            {s.strides, s.pads_begin, s.pads_end, s.dilations, 1}),
            unary_kind::tanh);
        onednn::fused_conv k(s);
        CHECK(test::max_rel_error(reference::to_array(k.run(reference::to_tensor(x))), expect) <= 1e-4);
    }
}

TEST_CASE("one primitive per input shape, rebuilt when the shape changes - NHWC input accepted") {
    std::mt19937 rng(13);
    conv_case c{1, 8, 16, 10, 10, 3, 1, 1, 1, 1};
    onednn::conv_spec s = spec_for(c, rng, true);
    s.post_ops = {post_op::eltwise(alg::eltwise_relu)};
    onednn::fused_conv k(s);
    const array x1 = test::random_array({1, 8, 10, 10}, rng, 1.0f);
    const array x2 = test::random_array({2, 8, 6, 9}, rng, 1.0f);
    for (int i = 0; i < 3; ++i) {
        CHECK(test::max_rel_error(reference::to_array(k.run(reference::to_tensor(x1))),
                                  reference::unary(ref_conv(x1, s), unary_kind::relu)) <= 1e-4);
        CHECK(test::max_rel_error(reference::to_array(k.run(reference::to_tensor(x2))),
                                  reference::unary(ref_conv(x2, s), unary_kind::relu)) <= 1e-4);
    }
    CHECK(k.cached_shapes() == 2);
    // The output of one run, in whatever layout the primitive chose, feeds the next kernel as is.
    onednn::conv_spec s2 = spec_for(conv_case{1, 16, 8, 10, 10, 1, 1, 0, 1, 1}, rng, false);
    onednn::fused_conv k2(s2);
    const onednn::tensor mid = k.run(reference::to_tensor(x1));
    const array expect = ref_conv(reference::unary(ref_conv(x1, s), unary_kind::relu), s2);
    CHECK(test::max_rel_error(reference::to_array(k2.run(mid)), expect) <= 1e-4);
}

TEST_CASE("several threads run one kernel at once") {
    std::mt19937 rng(17);
    conv_case c{1, 16, 32, 14, 14, 3, 1, 1, 1, 1};
    onednn::conv_spec s = spec_for(c, rng, true);
    s.post_ops = {post_op::sum(0), post_op::eltwise(alg::eltwise_relu)};
    onednn::fused_conv k(s);
    constexpr int threads = 4;
    std::vector<array> xs, rs, expect(threads), got(threads);
    for (int t = 0; t < threads; ++t) {
        xs.push_back(test::random_array({1, 16, 14, 14}, rng, 1.0f));
        rs.push_back(test::random_array({1, 32, 14, 14}, rng, 1.0f));
        expect[static_cast<std::size_t>(t)] = reference::unary(ref_conv(xs.back(), s) + rs.back(), unary_kind::relu);
    }
    std::vector<std::thread> pool;
    std::vector<double> worst(threads, 0.0);
    for (int t = 0; t < threads; ++t)
        pool.emplace_back([&, t] {
            const auto i = static_cast<std::size_t>(t);
            for (int rep = 0; rep < 20; ++rep) {
                const array y = reference::to_array(k.run(reference::to_tensor(xs[i]), {reference::to_tensor(rs[i])}));
                worst[i] = std::max(worst[i], test::max_rel_error(y, expect[i]));
            }
        });
    for (auto& th : pool) th.join();
    for (double w : worst) CHECK(w <= 1e-4);
    CHECK(k.cached_shapes() == 1);
}

TEST_CASE("bad specs and shapes raise kernel_error naming the kernel") {
    onednn::conv_spec s;
    s.name = "convX";
    s.weights_dims = {4, 3, 3, 3};
    s.weights.assign(10, 0.0f);
    CHECK_THROWS_WITH_AS(onednn::fused_conv{s}, doctest::Contains("convX"), onednn::kernel_error);
    s.weights.assign(4 * 3 * 3 * 3, 0.1f);
    onednn::fused_conv k(s);
    std::vector<float> x(1 * 5 * 8 * 8, 1.0f);
    CHECK_THROWS_WITH_AS(k.run(onednn::tensor::view(x.data(), {1, 5, 8, 8})), doctest::Contains("5 channels"),
                         onednn::kernel_error);
    std::vector<float> tiny(1 * 3 * 2 * 2, 1.0f);
    CHECK_THROWS_WITH_AS(k.run(onednn::tensor::view(tiny.data(), {1, 3, 2, 2})), doctest::Contains("does not fit"),
                         onednn::kernel_error);
    s.post_ops = {post_op::sum(0)};
    onednn::fused_conv needs_residual(s);
    std::vector<float> x3(1 * 3 * 8 * 8, 1.0f);
    CHECK_THROWS_WITH_AS(needs_residual.run(onednn::tensor::view(x3.data(), {1, 3, 8, 8})),
                         doctest::Contains("extra inputs"), onednn::kernel_error);
    std::vector<float> wrong(1 * 4 * 5 * 5, 1.0f);
    CHECK_THROWS_WITH_AS(needs_residual.run(onednn::tensor::view(x3.data(), {1, 3, 8, 8}),
                                            {onednn::tensor::view(wrong.data(), {1, 4, 5, 5})}),
                         doctest::Contains("sum operand has shape [1,4,5,5]"), onednn::kernel_error);
    s.post_ops = {post_op::sum(0), post_op::sum(1)};
    CHECK_THROWS_WITH_AS(onednn::fused_conv{s}, doctest::Contains("at most one sum"), onednn::kernel_error);
}

TEST_CASE("an eltwise post-op repeated with other parameters runs after the primitive (oneDNN 2.6 fuses it wrongly)") {
    // Fused, oneDNN 2.6.3 applies the first instance's parameters to both (see compat.hpp).
    std::mt19937 rng(19);
    struct step {
        alg a;
        float alpha, beta;
        unary_kind k;
    };
    const std::vector<std::vector<step>> chains = {
        {{alg::eltwise_relu, 0.1f, 0, unary_kind::leaky_relu}, {alg::eltwise_relu, 0, 0, unary_kind::relu}},
        {{alg::eltwise_clip_v2, -0.5f, 0.75f, unary_kind::clip}, {alg::eltwise_clip_v2, 0, 6, unary_kind::clip}},
        {{alg::eltwise_clip_v2, -0.5f, 0.75f, unary_kind::clip}, {alg::eltwise_tanh, 0, 0, unary_kind::tanh},
         {alg::eltwise_clip_v2, 0, 6, unary_kind::clip}},
        {{alg::eltwise_linear, 2, 1, unary_kind::linear}, {alg::eltwise_linear, 0.5f, -1, unary_kind::linear}},
        {{alg::eltwise_elu, 0.5f, 0, unary_kind::elu}, {alg::eltwise_elu, 2, 0, unary_kind::elu}},
    };
    for (const auto& chain : chains)
        for (std::int64_t g : {1, 8}) {
            conv_case c{1, 8, 8, 9, 11, 3, 1, 1, 1, g};
            onednn::conv_spec s = spec_for(c, rng, true);
            const array x = test::random_array({1, 8, 9, 11}, rng, 1.0f);
            array expect = ref_conv(x, s);
            for (const auto& st : chain) {
                s.post_ops.push_back(post_op::eltwise(st.a, st.alpha, st.beta));
                expect = reference::unary(expect, st.k, st.alpha, st.beta);
            }
            // With a residual sum after the repeat, the sum runs after the primitive too.
            const array residual = test::random_array(test::dims_of(expect), rng, 1.0f);
            s.post_ops.push_back(post_op::sum(0));
            expect = expect + residual;
            onednn::fused_conv k(s);
            CHECK(test::max_rel_error(reference::to_array(k.run(reference::to_tensor(x), {reference::to_tensor(residual)})),
                                      expect) <= 1e-4);
        }
}

TEST_CASE("run_into: a reused destination, and a sum that accumulates in place into its residual") {
    std::mt19937 rng(29);
    conv_case c{2, 8, 16, 9, 9, 3, 1, 1, 1, 1};
    for (bool tail : {false, true}) {  // tail: the sum runs after the primitive (repeated eltwise first)
        onednn::conv_spec s = spec_for(c, rng, true);
        const array x = test::random_array({2, 8, 9, 9}, rng, 1.0f);
        array expect = ref_conv(x, s);
        if (tail) {
            s.post_ops = {post_op::eltwise(alg::eltwise_relu, 0.1f), post_op::eltwise(alg::eltwise_relu)};
            expect = reference::unary(reference::unary(expect, unary_kind::leaky_relu, 0.1f), unary_kind::relu);
        }
        s.post_ops.push_back(post_op::sum(0));
        const array residual = test::random_array(test::dims_of(expect), rng, 1.0f);
        expect = expect + residual;
        onednn::fused_conv k(s);
        const onednn::tensor xt_ = reference::to_tensor(x);
        // The residual in the destination's layout, then used as the destination itself.
        onednn::tensor acc = onednn::tensor::allocate(k.dst_desc(xt_.shape()));
        reference::to_tensor(residual).reorder_into(acc, dnnl::stream(onednn::cpu_engine()));
        k.run_into(xt_, {acc}, acc);
        CHECK(test::max_rel_error(reference::to_array(acc), expect) <= 1e-4);
        // A wrong destination layout is refused.
        std::vector<float> buf(test::dims_of(expect).size() ? expect.size() : 0);
        const auto plain = onednn::tensor::view(buf.data(), test::dims_of(expect));
        if (k.dst_desc(xt_.shape()) != plain.desc())
            CHECK_THROWS_AS(k.run_into(xt_, {reference::to_tensor(residual)}, plain), onednn::kernel_error);
    }
}

TEST_CASE("transposed convolutions (ConvTranspose): 1-D to 3-D, groups, strides, dilations, output_padding, BatchNorm, post-ops") {
    std::mt19937 rng(21);
    const auto cases = eltwise_cases();
    auto pick = [&](std::initializer_list<std::int64_t> v) {
        return *(v.begin() + std::uniform_int_distribution<std::size_t>(0, v.size() - 1)(rng));
    };
    int built = 0;
    for (int r = 0; r < (test::sanitized() ? 12 : 60); ++r) {
        const std::size_t sp = r % 5 == 0 ? 1 : r % 5 == 1 ? 3 : 2;
        const int kind = static_cast<int>(pick({0, 0, 1, 2}));  // plain, grouped, depthwise
        const std::int64_t G = kind == 1 ? 2 : 1;
        std::int64_t C = pick({2, 4, 8}) * G, Og = pick({1, 3, 4, 8});
        std::int64_t groups = G;
        if (kind == 2) groups = C = pick({4, 8}), Og = 1;
        const std::int64_t n = sp == 3 ? 1 : pick({1, 2, 8}), k = pick({1, 2, 3, 4, 5}), s = pick({1, 2}),
                           d = k > 1 ? pick({1, 1, 2}) : 1;
        onednn::conv_spec spec;
        spec.transposed = true;
        spec.groups = groups;
        spec.weights_dims = {C, Og};
        onednn::dims xd{n, C};
        for (std::size_t i = 0; i < sp; ++i) {
            const std::int64_t pb = std::uniform_int_distribution<std::int64_t>(0, k - 1)(rng);
            const std::int64_t pe = std::uniform_int_distribution<std::int64_t>(0, k - 1)(rng);
            const std::int64_t op = std::min(pe, std::uniform_int_distribution<std::int64_t>(0, std::max(s, d) - 1)(rng));
            spec.weights_dims.push_back(k);
            spec.strides.push_back(s);
            spec.dilations.push_back(d);
            spec.pads_begin.push_back(pb);
            spec.pads_end.push_back(pe);
            spec.output_padding.push_back(op);
            xd.push_back(sp == 3 ? 4 : n == 8 ? 5 : pick({3, 6, 7}));
        }
        std::size_t nw = 1;
        for (auto v : spec.weights_dims) nw *= static_cast<std::size_t>(v);
        spec.weights = test::random_values(nw, rng, 0.5f);
        const std::int64_t O = Og * groups;
        if (r % 2) spec.bias = test::random_values(static_cast<std::size_t>(O), rng, 0.5f);
        const array x = test::random_array(xd, rng, 1.0f);
        const reference::conv_attrs a{spec.strides, spec.pads_begin, spec.pads_end, spec.dilations, groups};
        array expect;
        try {
            const array b = spec.bias.empty() ? array(xt::zeros<float>({std::size_t(0)})) : test::make_array(spec.bias, {O});
            expect = reference::conv_transpose(x, test::make_array(spec.weights.to_vector(), spec.weights_dims), b, a,
                                               spec.output_padding);
        } catch (const reference::kernel_error&) {
            continue;  // pads larger than the output
        }
        std::string what = "sp" + std::to_string(sp) + " n" + std::to_string(n) + " C" + std::to_string(C) + " O" +
                           std::to_string(O) + " g" + std::to_string(groups) + " k" + std::to_string(k) + " s" +
                           std::to_string(s) + " d" + std::to_string(d) + " pads " + onednn::to_string(spec.pads_begin) +
                           onednn::to_string(spec.pads_end) + " op " + onednn::to_string(spec.output_padding);
        if (r % 3 == 0) {  // a BatchNorm folded into the [C, O/G, k...] weights
            const auto on = static_cast<std::size_t>(O);
            auto scale = test::random_values(on, rng, 1.0f), shift = test::random_values(on, rng, 1.0f);
            auto mean = test::random_values(on, rng, 0.5f), var = test::random_values(on, rng, 0.5f);
            for (auto& v : var) v = std::fabs(v) + 0.1f;
            const auto vec = [](const std::vector<float>& v) { return test::make_array(v, {std::int64_t(v.size())}); };
            expect = reference::batch_norm(expect, vec(scale), vec(shift), vec(mean), vec(var), 1e-5f);
            spec.fold_batch_norm(scale, shift, mean, var, 1e-5f);
            what += " +bn";
        }
        std::vector<onednn::tensor> extra;
        array residual;
        if (r % 4 == 1) {  // a residual sum
            residual = test::random_array(std::vector<std::int64_t>(expect.shape().begin(), expect.shape().end()), rng, 1.0f);
            expect = expect + residual;
            spec.post_ops.push_back(post_op::sum(0));
            extra.push_back(reference::to_tensor(residual));
            what += " +sum";
        }
        const auto& ec = cases[static_cast<std::size_t>(r) % cases.size()];
        if (std::string(ec.name) != "exp" && std::string(ec.name) != "square") {
            expect = reference::unary(expect, ec.ref, ec.alpha, ec.beta);
            spec.post_ops.insert(spec.post_ops.end(), ec.fused.begin(), ec.fused.end());
            what += std::string(" +") + ec.name;
        }
        CAPTURE(what);
        onednn::fused_conv kernel(spec);
        const array got = reference::to_array(kernel.run(reference::to_tensor(x), extra));
        REQUIRE(got.shape() == expect.shape());
        CHECK(test::max_rel_error(got, expect) <= 1e-4);
        ++built;
    }
    CHECK(built >= (test::sanitized() ? 8 : 45));
    // output_padding beyond pads_end: oneDNN 2.x would need a negative right padding.
    onednn::conv_spec bad;
    bad.transposed = true;
    bad.weights_dims = {2, 2, 3};
    bad.weights.assign(12, 0.5f);
    bad.strides = {2};
    bad.output_padding = {1};
    CHECK_THROWS_WITH_AS(onednn::fused_conv{bad}, doctest::Contains("output_padding [1] above pads_end []"),
                         onednn::kernel_error);
}

TEST_CASE("when oneDNN rejects the fused primitive, the post-ops run unfused after it (logged once), same result") {
    // oneDNN 2.x takes at most 32 post-ops in one primitive: 40 are rejected fused.
    std::mt19937 rng(22);
    const conv_case c{1, 4, 8, 6, 6, 3, 1, 1, 1, 1};
    onednn::conv_spec s = spec_for(c, rng, true);
    const array x = test::random_array({c.n, c.c, c.h, c.w}, rng, 1.0f);
    array expect = ref_conv(x, s);
    for (int i = 0; i < 40; ++i) {
        s.post_ops.push_back(post_op::eltwise(i % 2 ? alg::eltwise_tanh : alg::eltwise_linear, 1.5f, 0.1f));
        expect = i % 2 ? reference::unary(expect, unary_kind::tanh, 0, 0) : reference::unary(expect, unary_kind::linear, 1.5f, 0.1f);
    }
    onednn::fused_conv k(s);
    CHECK(k.unfused_shapes() == 0);
    CHECK(test::max_rel_error(reference::to_array(k.run(reference::to_tensor(x))), expect) <= 1e-4);
    CHECK(k.unfused_shapes() == 1);
    CHECK(test::max_rel_error(reference::to_array(k.run(reference::to_tensor(x))), expect) <= 1e-4);  // cached
    CHECK(k.unfused_shapes() == 1);
    // A short chain fuses.
    s.post_ops.resize(3);
    onednn::fused_conv k3(s);
    (void)k3.run(reference::to_tensor(x));
    CHECK(k3.unfused_shapes() == 0);
}

TEST_CASE("1x1 conv + depthwise 3x3 post-op (stride 1 and 2), BatchNorms folded into each, eltwise around it") {
    std::mt19937 rng(23);
    for (int r = 0; r < (test::sanitized() ? 4 : 16); ++r) {
        const std::int64_t n = r % 4 == 3 ? 8 : 1, C = 8 + 8 * (r % 3), O = 16 + 8 * (r % 2), hw = n == 8 ? 6 : 7 + r % 5;
        const std::int64_t stride = 1 + r % 2;
        const conv_case c{n, C, O, hw, hw, 1, 1, 0, 1, 1};
        onednn::conv_spec s = spec_for(c, rng, r % 2 == 0);
        const array x = test::random_array({n, C, hw, hw}, rng, 1.0f);
        const auto vec = [](const std::vector<float>& v) { return test::make_array(v, {std::int64_t(v.size())}); };
        auto bn_params = [&] {
            std::vector<std::vector<float>> p{test::random_values(static_cast<std::size_t>(O), rng, 1.0f),
                                              test::random_values(static_cast<std::size_t>(O), rng, 0.5f),
                                              test::random_values(static_cast<std::size_t>(O), rng, 0.5f),
                                              test::random_values(static_cast<std::size_t>(O), rng, 0.5f)};
            for (auto& v : p[3]) v = std::fabs(v) + 0.2f;
            return p;
        };
        const auto bn1 = bn_params(), bn2 = bn_params();
        // reference: conv1x1 -> BN -> relu6 -> dw3x3 (pad 1) -> BN -> relu6
        array y = reference::batch_norm(ref_conv(x, s), vec(bn1[0]), vec(bn1[1]), vec(bn1[2]), vec(bn1[3]), 1e-5f);
        y = reference::unary(y, unary_kind::clip, 0.0f, 6.0f);
        const auto dw_w = test::random_values(static_cast<std::size_t>(O * 9), rng, 0.5f);
        const auto dw_b = test::random_values(static_cast<std::size_t>(O), rng, 0.5f);
        y = reference::conv(y, test::make_array(dw_w, {O, 1, 3, 3}), vec(dw_b), {{stride, stride}, {1, 1}, {1, 1}, {1, 1}, O});
        y = reference::batch_norm(y, vec(bn2[0]), vec(bn2[1]), vec(bn2[2]), vec(bn2[3]), 1e-5f);
        y = reference::unary(y, unary_kind::clip, 0.0f, 6.0f);
        s.fold_batch_norm(bn1[0], bn1[1], bn1[2], bn1[3], 1e-5f);
        s.post_ops.push_back(post_op::eltwise(alg::eltwise_clip_v2, 0.0f, 6.0f));
        s.post_ops.push_back(post_op::depthwise(dw_w, dw_b, stride));
        s.fold_batch_norm(bn2[0], bn2[1], bn2[2], bn2[3], 1e-5f);
        s.post_ops.push_back(post_op::eltwise(alg::eltwise_clip_v2, 0.0f, 6.0f));
        const std::string shape = describe(c) + " dw stride " + std::to_string(stride);
        CAPTURE(shape);
        onednn::fused_conv k(s);
        CHECK(s.output_dims({n, C, hw, hw}) == onednn::dims{n, O, (hw - 1) / stride + 1, (hw - 1) / stride + 1});
        const array got = reference::to_array(k.run(reference::to_tensor(x)));
        REQUIRE(got.shape() == y.shape());
        CHECK(test::max_rel_error(got, y) <= 1e-4);
        CHECK(k.unfused_shapes() == 0);
    }
    // Only after a 1x1 conv; binary and sum only after the depthwise one.
    onednn::conv_spec bad = spec_for({1, 4, 4, 5, 5, 3, 1, 1, 1, 1}, rng, false);
    bad.post_ops.push_back(post_op::depthwise(std::vector<float>(36, 0.1f), {}, 1));
    CHECK_THROWS_WITH_AS(onednn::fused_conv{bad}, doctest::Contains("needs a 2-D 1x1 convolution"), onednn::kernel_error);
    onednn::conv_spec bad2 = spec_for({1, 4, 4, 5, 5, 1, 1, 0, 1, 1}, rng, false);
    bad2.post_ops.push_back(post_op::binary_constant(alg::binary_add, {1.0f}, broadcast::scalar));
    bad2.post_ops.push_back(post_op::depthwise(std::vector<float>(36, 0.1f), {}, 1));
    CHECK_THROWS_WITH_AS(onednn::fused_conv{bad2}, doctest::Contains("must follow the depthwise"), onednn::kernel_error);
}

TEST_CASE("implementation() names oneDNN's choice from the descriptor alone, and a spec without weights runs no kernel") {
    onednn::conv_spec s;
    s.name = "c";
    s.weights_dims = {32, 16, 3, 3};
    s.strides = {2, 2};
    s.pads_begin = s.pads_end = {1, 1};
    // No weights: the spec describes a kernel (what a property's check lowers), which can say
    // which implementation oneDNN would pick but cannot run.
    onednn::fused_conv described(s);
    using md = dnnl::memory::desc;
    using dt = dnnl::memory::data_type;
    using tag = dnnl::memory::format_tag;
    dnnl::primitive_attr attr;
    attr.set_scratchpad_mode(dnnl::scratchpad_mode::user);
    const auto pd = onednn::compat::conv_pd(onednn::cpu_engine(), md({1, 16, 28, 28}, dt::f32, tag::any),
                                            md({32, 16, 3, 3}, dt::f32, tag::any), md(),
                                            md({1, 32, 14, 14}, dt::f32, tag::any), {2, 2}, {0, 0}, {1, 1}, {1, 1}, attr);
    const std::string name = described.implementation({1, 16, 28, 28});
    CHECK(name == std::string(pd.impl_info_str()));
    const auto layouts = described.layouts({1, 16, 28, 28});  // the layouts oneDNN picked, likewise
    CHECK(layouts.first == pd.src_desc());
    CHECK(layouts.second == pd.dst_desc());
    CHECK(described.cached_shapes() == 0);  // nothing was built
    const array x = xt::ones<float>({std::size_t(1), std::size_t(16), std::size_t(28), std::size_t(28)});
    CHECK_THROWS_WITH_AS(described.run(reference::to_tensor(x)), doctest::Contains("fused_conv('c'): the spec has no weights"),
                         onednn::kernel_error);
    // With weights it runs, on the implementation named.
    std::mt19937 rng(5);
    s.weights = test::random_values(32 * 16 * 9, rng, 0.5f);
    onednn::fused_conv k(s);
    CHECK(k.run(reference::to_tensor(x)).shape() == onednn::dims{1, 32, 14, 14});
    CHECK(k.implementation({1, 16, 28, 28}) == name);
    CHECK(k.src_desc({1, 16, 28, 28}) == layouts.first);
}

TEST_CASE("a 3x3 stride-1 conv with at least 14x14 outputs runs on oneDNN's Winograd kernel where oneDNN has one, post-ops and all") {
    std::mt19937 rng(17);
    using md = dnnl::memory::desc;
    using dt = dnnl::memory::data_type;
    using tag = dnnl::memory::format_tag;
    struct shape {
        std::int64_t n, c, o, hw, stride;
        bool wanted;  // 3x3, stride 1, 14x14 outputs or more
    };
    const shape shapes[] = {{2, 16, 32, 16, 1, true}, {1, 64, 64, 14, 1, true}, {1, 16, 16, 12, 1, false}, {1, 16, 16, 30, 2, false}};
    for (const auto& sh : shapes) {
        CAPTURE(sh.c);
        CAPTURE(sh.hw);
        CAPTURE(sh.stride);
        const conv_case c{sh.n, sh.c, sh.o, sh.hw, sh.hw, 3, sh.stride, 1, 1, 1};
        onednn::conv_spec s = spec_for(c, rng, true);
        const array x = test::random_array({c.n, c.c, c.h, c.w}, rng, 1.0f);
        const array y = ref_conv(x, s);
        const array residual = test::random_array(test::dims_of(y), rng, 1.0f);
        const array expect = reference::unary(y + residual, unary_kind::relu);
        s.post_ops = {post_op::sum(0), post_op::eltwise(alg::eltwise_relu)};
        // Whether this oneDNN has a Winograd kernel for the conv and its post-ops, asked directly.
        bool has_winograd = false;
        try {
            dnnl::primitive_attr attr;
            dnnl::post_ops po;
            po.append_sum(1.0f);
            po.append_eltwise(1.0f, alg::eltwise_relu, 0.0f, 0.0f);
            attr.set_post_ops(po);
            const std::int64_t oh = (c.h + 2 - 3) / c.stride + 1;
            const auto pd = onednn::compat::conv_pd(onednn::cpu_engine(), md({c.n, c.c, c.h, c.w}, dt::f32, tag::any),
                                                    md({c.o, c.c, 3, 3}, dt::f32, tag::any), md({c.o}, dt::f32, tag::a),
                                                    md({c.n, c.o, oh, oh}, dt::f32, tag::any), {c.stride, c.stride}, {0, 0}, {1, 1},
                                                    {1, 1}, attr, alg::convolution_winograd);
            has_winograd = std::string(onednn::compat::impl_name(pd)).find("wino") != std::string::npos;
        } catch (const dnnl::error&) {
        }
        const onednn::fused_conv k(s);
        const std::string impl = k.implementation({c.n, c.c, c.h, c.w});
        MESSAGE(impl);
        CHECK((impl.find("wino") != std::string::npos) == (sh.wanted && has_winograd));
        const array got = reference::to_array(k.run(reference::to_tensor(x), {reference::to_tensor(residual)}));
        CHECK(test::max_rel_error(got, expect) <= 1e-4);
        // Asked not to: the direct kernel, the same values.
        s.winograd = false;
        const onednn::fused_conv direct(s);
        CHECK(direct.implementation({c.n, c.c, c.h, c.w}).find("wino") == std::string::npos);
        CHECK(test::max_rel_error(reference::to_array(direct.run(reference::to_tensor(x), {reference::to_tensor(residual)})), got) <= 1e-4);
    }
}

TEST_CASE("float_values: shared with an owner without a copy, copied before any write, copies share until one writes") {
    auto owner = std::make_shared<std::vector<float>>(std::vector<float>{1, 2, 3});
    const onednn::float_values shared = onednn::float_values::shared(owner, owner->data(), owner->size());
    CHECK(shared.is_shared());
    CHECK(shared.data() == owner->data());
    onednn::float_values w = shared;
    w.mutable_data()[0] = 10;  // a copy of its own first
    CHECK(!w.is_shared());
    CHECK((*owner)[0] == 1);
    CHECK(shared[0] == 1);
    CHECK(w.to_vector() == std::vector<float>{10, 2, 3});
    onednn::float_values a = std::vector<float>{4, 5};
    onednn::float_values b = a;
    CHECK(b.data() == a.data());  // shared between copies
    b.mutable_data()[1] = 7;
    CHECK(a.to_vector() == std::vector<float>{4, 5});
    CHECK(b.to_vector() == std::vector<float>{4, 7});
    const float* before = b.data();
    b.mutable_data()[0] = 1;  // the only holder of its own values: written in place
    CHECK(b.data() == before);
}

TEST_CASE("a fusion is never slower than its members: where oneDNN would run the fused primitive on its reference implementation, the post-ops run after the optimized conv") {
    // relu(dwconv(x)) + x on [1, 32, 56, 56] (3x3, pad 1, 32 groups): in the plain and blocked
    // layouts oneDNN 2.6 has only ref:any for the conv with these post-ops fused, many times the
    // time of the conv alone on its jit kernel plus the post-ops after it (benchmarks/reference_fusion).
    std::mt19937 rng(31);
    const conv_case c{1, 32, 32, 56, 56, 3, 1, 1, 1, 32};
    for (const auto layout : {onednn::conv_spec::layout_choice::plain, onednn::conv_spec::layout_choice::blocked}) {
        CAPTURE(static_cast<int>(layout));
        onednn::conv_spec s = spec_for(c, rng, true);
        s.name = "dw";
        s.layout = layout;
        const array x = test::random_array({c.n, c.c, c.h, c.w}, rng, 1.0f);
        const array expect = xt::maximum(ref_conv(x, s), 0.0f) + x;
        s.post_ops = {post_op::eltwise(alg::eltwise_relu), post_op::sum(0)};
        onednn::fused_conv k(s);
        const onednn::dims src{c.n, c.c, c.h, c.w};
        const array got = reference::to_array(k.run(reference::to_tensor(x), {reference::to_tensor(x)}));
        CHECK(test::max_rel_error(got, expect) <= 1e-4);
        // Into the residual itself (what the executor does with a residual read for the last
        // time): the sum after the conv reads a copy of it, not the conv's output.
        const onednn::tensor residual = onednn::tensor::allocate(k.dst_desc(src));
        reference::to_tensor(x).reorder_into(residual, onednn::cpu_stream());
        k.run_into(reference::to_tensor(x), {residual}, residual);
        CHECK(test::max_rel_error(reference::to_array(residual), expect) <= 1e-4);
        const std::string running = k.running_implementation(src);
        CAPTURE(running);
        CHECK(running.substr(0, 3) != "ref");
        CHECK(k.implementation(src) == running);  // what the partitioner and layout plan are told
        if (k.unfused_shapes() == 1) {
            CHECK(k.unfused_reason().find("reference implementation (ref") != std::string::npos);
        } else {
            // A oneDNN with an optimized kernel for the fused form fuses it.
            CHECK(k.unfused_shapes() == 0);
            MESSAGE("oneDNN fuses this form on " << running);
        }
    }
}
