// The executor checks a graph against the op descriptions when it is built, and every computed
// shape against the declared one when it runs: never a silently wrong number.
#include <doctest/doctest.h>

#include <cmath>
#include <optional>
#include <random>
#include <utility>
#include <vector>

#include "sgmatch/exec/executor.hpp"
#include "support/numeric.hpp"
#include "support/values.hpp"

using namespace sgmatch;
using reference::array;

namespace {

std::string build_error(const graph& g, exec::mode m = exec::mode::reference) {
    try {
        exec::executor run(g, m);
    } catch (const exec::exec_error& e) {
        return e.what();
    }
    return "";
}

}  // namespace

TEST_CASE("an attribute no kernel implements is refused when the executor is built, in every mode") {
    for (auto m : {exec::mode::reference, exec::mode::onednn, exec::mode::onednn_plain}) {
        graph g;
        auto x = g.add_input("x", tensor_type{dtype::f32, {1, 2, 5, 5}});
        auto p = g.add_op("MaxPool", "pool1", {x}, {{"kernel_shape", attribute::ints{2, 2}}, {"storage_order", 2}});
        g.mark_output(g.add_op("Relu", "r", {p}));
        const std::string e = build_error(g, m);
        CHECK(e.find("node 'pool1' (MaxPool): attribute storage_order = 2 is not implemented") != std::string::npos);
    }
    graph avg;
    auto ax = avg.add_input("x");
    avg.mark_output(avg.add_op("AveragePool", "avg", {ax},
                               {{"kernel_shape", attribute::ints{2, 2}}, {"ceil_mode", 1}, {"count_include_pad", 1}}));
    CHECK(build_error(avg).find("node 'avg' (AveragePool): ceil_mode 1 with count_include_pad 1 is not implemented") !=
          std::string::npos);
    graph g;
    auto x = g.add_input("x");
    g.mark_output(g.add_op("Relu", "r", {x}, {{"alpha", 0.5}}));  // ignored before: now refused
    CHECK(build_error(g).find("node 'r' (Relu): attribute alpha is not one of Relu's attributes") != std::string::npos);
    graph clip;  // a computed bound must hold one value
    auto c = clip.add_input("c");
    clip.mark_output(clip.add_op("Clip", "clip", {c, clip.add_input("lo")}));
    const exec::executor run_clip(clip);
    CHECK_THROWS_WITH_AS(run_clip({{"c", xt::zeros<float>({3})}, {"lo", xt::zeros<float>({2})}}),
                         "sgmatch::exec::executor: node 'clip' (Clip): the bound on input 1 has 2 values, not 1", exec::exec_error);
    graph outs;
    auto o = outs.add_input("o", tensor_type{dtype::f32, {1, 1, 4, 4}});
    outs.mark_output(outs.add_op("AveragePool", "ap", {o}, {{"kernel_shape", attribute::ints{2, 2}}}, 2));
    CHECK(build_error(outs).find("node 'ap' (AveragePool): 2 outputs; the kernels compute 1") != std::string::npos);
    graph ints;
    auto i = ints.add_input("i");
    auto r = ints.add_op("Relu", "r", {i});
    ints.set_type({r, 0}, tensor_type{dtype::i64, {}});
    ints.mark_output(r);
    CHECK(build_error(ints).find("node 'r' (Relu): output 0 is declared int64 (the kernels of Relu compute float)") != std::string::npos);
    graph unknown;
    unknown.mark_output(unknown.add_op("Frobnicate", "f", {unknown.add_input("u")}));
    CHECK(build_error(unknown) == "sgmatch::exec::executor: no kernel for op 'Frobnicate' (node 'f')");
}

TEST_CASE("a computed shape that disagrees with the declared one is an error naming the node") {
    std::mt19937 rng(3);
    for (auto m : {exec::mode::reference, exec::mode::onednn}) {
        CAPTURE(static_cast<int>(m));
        graph g;
        auto x = g.add_input("x", tensor_type{dtype::f32, {1, 2, 6, 6}});
        auto w = g.add_constant("w", {4, 2, 3, 3}, test::random_values(72, rng, 0.5f));
        auto conv = g.add_op("Conv", "conv1", {x, w}, {{"pads", attribute::ints{1, 1, 1, 1}}});
        g.set_type({conv, 0}, tensor_type{dtype::f32, {1, 4, 4, 4}});  // wrong: pads 1 keep 6x6
        g.mark_output(g.add_op("Relu", "relu", {conv}));
        const exec::executor run(g, m);
        CHECK_THROWS_WITH_AS(run({{"x", test::random_array({1, 2, 6, 6}, rng, 1.0f)}}),
                             "sgmatch::exec::executor: node 'conv1' (Conv) computed shape [1,4,6,6] on output 0; the graph "
                             "declares [1,4,4,4]",
                             exec::exec_error);
        // A dim of -1 (unknown, a symbolic batch) is not checked; the known ones are.
        g.set_type({conv, 0}, tensor_type{dtype::f32, {-1, 4, 6, 6}});
        const exec::executor ok(g, m);
        CHECK(ok({{"x", test::random_array({1, 2, 6, 6}, rng, 1.0f)}}).at(0).shape() == std::vector<std::size_t>{1, 4, 6, 6});
    }
}

TEST_CASE("defaults come from the descriptions: an absent attribute computes what ONNX specifies") {
    std::mt19937 rng(4);
    const array x = test::random_array({2, 3}, rng, 2.0f);
    graph g;
    auto in = g.add_input("x");
    g.mark_output(g.add_op("LeakyRelu", "l", {in}));
    g.mark_output(g.add_op("HardSigmoid", "h", {in}));
    g.mark_output(g.add_op("Elu", "e", {in}));
    for (auto m : {exec::mode::reference, exec::mode::onednn}) {
        const auto out = exec::executor(g, m)({{"x", x}});
        for (std::size_t i = 0; i < x.size(); ++i) {
            const float v = x.data()[i];
            CHECK(out[0].data()[i] == doctest::Approx(v > 0 ? v : 0.01f * v));
            CHECK(out[1].data()[i] == doctest::Approx(std::max(0.0f, std::min(1.0f, 0.2f * v + 0.5f))));
            CHECK(out[2].data()[i] == doctest::Approx(v > 0 ? v : std::exp(v) - 1.0f).epsilon(1e-4));
        }
    }
}

TEST_CASE("pooling with ceil_mode: the last, partial window counts, against brute force") {
    std::mt19937 rng(6);
    for (const bool max : {true, false})
        for (auto m : {exec::mode::reference, exec::mode::onednn}) {
            CAPTURE(max);
            graph g;
            auto x = g.add_input("x", tensor_type{dtype::f32, {1, 2, 7, 6}});
            g.mark_output(g.add_op(max ? "MaxPool" : "AveragePool", "p", {x},
                                   {{"kernel_shape", attribute::ints{3, 2}}, {"strides", attribute::ints{2, 2}},
                                    {"pads", attribute::ints{1, 0, 0, 0}}, {"ceil_mode", 1}}));
            const array in = test::random_array({1, 2, 7, 6}, rng, 1.0f);
            const array y = exec::executor(g, m)({{"x", in}}).at(0);
            // ceil((7 + 1 - 3) / 2) + 1 = 4 rows (floor would give 3), ceil((6 - 2) / 2) + 1 = 3 columns.
            REQUIRE(y.shape() == std::vector<std::size_t>{1, 2, 4, 3});
            for (std::size_t c = 0; c < 2; ++c)
                for (std::int64_t oh = 0; oh < 4; ++oh)
                    for (std::int64_t ow = 0; ow < 3; ++ow) {
                        float best = -1e30f, sum = 0;
                        int n = 0;
                        for (std::int64_t kh = 0; kh < 3; ++kh)
                            for (std::int64_t kw = 0; kw < 2; ++kw) {
                                const std::int64_t h = oh * 2 - 1 + kh, w = ow * 2 + kw;
                                if (h < 0 || h >= 7 || w >= 6) continue;
                                const float v = in(0, c, static_cast<std::size_t>(h), static_cast<std::size_t>(w));
                                best = std::max(best, v);
                                sum += v;
                                ++n;
                            }
                        CHECK(y(0, c, static_cast<std::size_t>(oh), static_cast<std::size_t>(ow)) ==
                              doctest::Approx(max ? best : sum / static_cast<float>(n)));
                    }
        }
}

TEST_CASE("run_stats::times: one entry per node run, in the order they ran, naming the kernel that ran it") {
    graph g;
    auto x = g.add_input("x", tensor_type{dtype::f32, {1, 2, 4, 4}});
    auto relu = g.add_op("Relu", "relu", {x});     // a oneDNN eltwise primitive in mode onednn
    auto erf = g.add_op("Erf", "erf", {relu});     // no oneDNN kernel: the reference kernel
    auto shape = g.add_op("Shape", "shape", {erf});  // int64: the typed kernel
    g.mark_output(erf);
    g.mark_output(shape);
    const exec::executor run(g, exec::mode::onednn);
    const auto in = exec::value::of<float>({1, 2, 4, 4}, std::vector<float>(32, 0.5f));
    std::vector<exec::node_time> times;
    exec::run_stats st;
    st.times = &times;
    (void)run.run({{"x", in}}, &st);
    REQUIRE(times.size() == 3);
    const char* want[][2] = {{"relu", "onednn"}, {"erf", "reference"}, {"shape", "typed"}};
    for (std::size_t i = 0; i < 3; ++i) {
        CHECK(g.name(times[i].node) == want[i][0]);
        CHECK(std::string(times[i].kernel) == want[i][1]);
        CHECK(times[i].ms >= 0);
    }
    // Appended run after run; a run without the vector times nothing.
    (void)run.run({{"x", in}}, &st);
    CHECK(times.size() == 6);
    exec::run_stats quiet;
    (void)run.run({{"x", in}}, &quiet);
    CHECK(times.size() == 6);
}

TEST_CASE("scalars stay scalars in mode onednn: binary ops of rank-0 values and a reduction to one value") {
    graph g;
    auto a = g.add_input("a", tensor_type{dtype::f32, {}}), b = g.add_input("b", tensor_type{dtype::f32, {}});
    auto x = g.add_input("x", tensor_type{dtype::f32, {2, 3}});
    auto div = g.add_op("Div", "div", {a, b}, {}, 1);
    g.set_type({div, 0}, tensor_type{dtype::f32, {}});
    auto sum = g.add_op("ReduceSum", "sum", {x}, {{"keepdims", 0}}, 1);
    g.set_type({sum, 0}, tensor_type{dtype::f32, {}});
    g.mark_output(div);
    g.mark_output(sum);
    const exec::executor run(g, exec::mode::onednn);
    const auto out = run.run({{"a", exec::value::of<float>({}, {3.f})}, {"b", exec::value::of<float>({}, {2.f})},
                              {"x", exec::value::of<float>({2, 3}, {1, 2, 3, 4, 5, 6})}});
    CHECK(out[0].dims().empty());
    CHECK(out[0].as<float>()[0] == 1.5f);
    CHECK(out[1].dims().empty());
    CHECK(out[1].as<float>()[0] == 21.f);
}

TEST_CASE("a graph output is the caller's own: later runs, which reuse recycled buffers, leave an output held from an earlier run as it was") {
    graph g;
    auto x = g.add_input("x", tensor_type{dtype::f32, {4, 64}});
    g.mark_output(g.add_op("Relu", "r", {g.add_op("Add", "a", {x, g.add_scalar("one", 1.0f)})}));
    for (const auto m : {exec::mode::reference, exec::mode::onednn}) {
        CAPTURE(static_cast<int>(m));
        const exec::executor run(g, m);
        std::vector<float> a(256), b(256);
        for (std::size_t i = 0; i < a.size(); ++i) a[i] = static_cast<float>(i), b[i] = -static_cast<float>(i);
        const exec::value first = run.run({{"x", exec::value::view(a.data(), dtype::f32, {4, 64})}}).at(0);
        REQUIRE(first.owned());
        for (int k = 0; k < 3; ++k) {
            const exec::value later = run.run({{"x", exec::value::view(b.data(), dtype::f32, {4, 64})}}).at(0);
            CHECK(later.data() != first.data());
            CHECK(test::elements<float>(later)[2] == 0.0f);  // max(1 - 2, 0)
        }
        const auto f = test::elements<float>(first);
        for (std::size_t i = 0; i < f.size(); ++i) CHECK(f[i] == a[i] + 1.0f);
    }
}

TEST_CASE("Dropout in training: numpy's draws for a seed, new ones without, the kept elements scaled") {
    using exec::value;
    auto flag = [](bool b) {
        value v = value::zeros(dtype::boolean, {});
        v.as<bool>()[0] = b;
        return v;
    };
    auto dropout = [](std::optional<std::int64_t> seed) {
        graph g;
        auto d = g.add_op("Dropout", "dr", {g.add_input("d"), g.add_input("ratio"), g.add_input("training")}, {}, 2);
        if (seed) g.set_attr(d, "seed", *seed);
        g.mark_output(input_ref(value_ref<node_id>{d, 0}));
        g.mark_output(input_ref(value_ref<node_id>{d, 1}));
        return g;
    };
    const graph seeded = dropout(0);
    const exec::executor run(seeded);
    std::vector<float> x(8);
    for (std::size_t i = 0; i < x.size(); ++i) x[i] = static_cast<float>(i + 1);
    const value d = value::of<float>({2, 4}, x);
    // numpy: np.random.seed(0); np.random.uniform(0, 1, 8) is 0.5488, 0.7152, 0.6028, 0.5449,
    // 0.4237, 0.6459, 0.4376, 0.8918: kept where at least the ratio.
    for (int again = 0; again < 2; ++again) {
        const auto half = run.run({{"d", d}, {"ratio", value::of<float>({}, {0.5f})}, {"training", flag(true)}});
        CHECK(test::elements<float>(half[0]) == std::vector<float>{2, 4, 6, 8, 0, 12, 0, 16});
        CHECK(test::elements<bool>(half[1]) == std::vector<bool>{true, true, true, true, false, true, false, true});
    }
    const auto most = run.run({{"d", d}, {"ratio", value::of<float>({}, {0.75f})}, {"training", flag(true)}});
    CHECK(test::elements<float>(most[0]) == std::vector<float>{0, 0, 0, 0, 0, 0, 0, 32});
    // Not training, or a ratio of 0: the data and a mask of all true.
    for (auto [ratio, training] : {std::pair{0.5f, false}, std::pair{0.0f, true}}) {
        const auto same = run.run({{"d", d}, {"ratio", value::of<float>({}, {ratio})}, {"training", flag(training)}});
        CHECK(test::elements<float>(same[0]) == x);
        CHECK(test::elements<bool>(same[1]) == std::vector<bool>(8, true));
    }
    CHECK(test::run_error(run, {{"d", d}, {"ratio", value::of<float>({}, {1.0f})}, {"training", flag(true)}})
              .find("node 'dr' (Dropout): ratio 1.000000 is outside [0, 1)") != std::string::npos);
    // Without a seed, each run draws its own mask: about 1 - ratio of the elements kept, each
    // scaled by 1 / (1 - ratio) (20,000 draws: the fraction is within 0.03 of 0.7 but for
    // chance below 1e-15).
    const graph unseeded = dropout(std::nullopt);
    const exec::executor fresh(unseeded);
    std::vector<double> big(20000);
    for (std::size_t i = 0; i < big.size(); ++i) big[i] = 1.0 + static_cast<double>(i);
    const value bd = value::of<double>({20000}, big);
    std::vector<bool> masks[2];
    for (auto& m : masks) {
        const auto out = fresh.run({{"d", bd}, {"ratio", value::of<float>({}, {0.3f})}, {"training", flag(true)}});
        const auto y = test::elements<double>(out[0]);
        m = test::elements<bool>(out[1]);
        std::size_t kept = 0, wrong = 0;
        for (std::size_t i = 0; i < big.size(); ++i) {
            kept += m[i];
            wrong += y[i] != (m[i] ? big[i] * (1 / (1 - static_cast<double>(0.3f))) : 0.0);
        }
        CHECK(wrong == 0);
        CHECK(std::abs(static_cast<double>(kept) / 20000.0 - 0.7) < 0.03);
    }
    CHECK(masks[0] != masks[1]);
    // Constant training_mode and ratio: drawn the same way when the node runs.
    graph constant;
    auto training = constant.add_constant("training", {}, dtype::boolean, {1});
    auto ratio = constant.add_constant("ratio", {}, dtype::f32, {0, 0, 0, 63});  // 0.5f
    constant.mark_output(constant.add_op("Dropout", "dc", {constant.add_input("d"), ratio, training}, {{"seed", 0}}));
    CHECK(test::elements<float>(exec::executor(constant).run({{"d", d}})[0]) == std::vector<float>{2, 4, 6, 8, 0, 12, 0, 16});
}

TEST_CASE("an element-wise kernel writes over its input only where nothing else reads it: a value read twice, a graph output and a graph input keep their values") {
    // x -> n = Neg(x) -> r1 = Relu(n) (n read twice: not over n) -> r2 = Relu(r1) (r1 an output:
    // not over it) -> r3 = LeakyRelu(r2) (over r2) -> s = Add(r3, Abs(n)); both the small-tensor
    // loop and the primitive, against the values computed here.
    for (const std::vector<std::int64_t>& d : {std::vector<std::int64_t>{2, 8}, std::vector<std::int64_t>{2, 16, 32, 32}}) {
        CAPTURE(d.size());
        graph g;
        auto x = g.add_input("x", tensor_type{dtype::f32, d});
        auto n = g.add_op("Neg", "n", {x});
        auto r1 = g.add_op("Relu", "r1", {n});
        auto r2 = g.add_op("Relu", "r2", {r1});
        auto r3 = g.add_op("LeakyRelu", "r3", {r2}, {{"alpha", 0.5}});
        auto s = g.add_op("Add", "s", {r3, g.add_op("Abs", "a", {n})});
        g.mark_output(r1);
        g.mark_output(s);
        const exec::executor run(g, exec::mode::onednn);
        const std::int64_t count = test::count(d);
        std::vector<float> in(static_cast<std::size_t>(count));
        for (std::size_t i = 0; i < in.size(); ++i) in[i] = static_cast<float>(static_cast<int>(i % 7) - 3);
        const std::vector<float> kept = in;
        for (int k = 0; k < 2; ++k) {
            exec::run_stats st;
            const auto out = run.run({{"x", exec::value::view(in.data(), dtype::f32, d)}}, &st);
            CHECK(st.onednn_nodes == 6);
            CHECK(in == kept);
            const auto y1 = test::elements<float>(out.at(0));
            const auto y2 = test::elements<float>(out.at(1));
            REQUIRE(y1.size() == in.size());
            REQUIRE(y2.size() == in.size());
            std::size_t wrong = 0;
            for (std::size_t i = 0; i < in.size(); ++i) {
                const float neg = -in[i];
                const float relu = neg > 0 ? neg : 0.0f;
                wrong += y1[i] != relu || y2[i] != relu + std::fabs(neg);
            }
            CHECK(wrong == 0);
        }
    }
}
