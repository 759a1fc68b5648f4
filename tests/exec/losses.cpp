// TopK, the losses and InstanceNormalization (exec/kernels/positions.hpp, losses.hpp) against
// brute force written here from the ONNX definitions, and against each other through ops with
// kernels of their own (SoftmaxCrossEntropyLoss as LogSoftmax then NegativeLogLikelihoodLoss);
// their refusals name the node. (The ONNX conformance cases check them too.) Runs in every
// preset.
#include <doctest/doctest.h>

#include <cmath>
#include <limits>
#include <map>
#include <random>

#include "sgmatch/exec/executor.hpp"
#include "support/values.hpp"

using namespace sgmatch;
using exec::value;

// Named: the unity build compiles this file with other tests; its helpers stay apart from theirs.
namespace loss_tests {

using test::count;
using test::random_value;
using test::run_error;

value random_real(std::mt19937& rng, const std::vector<std::int64_t>& dims) {
    std::normal_distribution<float> d(0.0f, 2.0f);
    std::vector<float> v(static_cast<std::size_t>(count(dims)));
    for (auto& x : v) x = d(rng);
    return value::of<float>(dims, v);
}

TEST_CASE("TopK: the k-th output is the element with exactly k elements ranked above it (larger, or equal at a lower index)") {
    std::mt19937 rng(23);
    for (int trial = 0; trial < 60; ++trial) {
        const std::size_t rank = static_cast<std::size_t>(1 + trial % 3);
        std::vector<std::int64_t> dims(rank);
        for (auto& d : dims) d = std::uniform_int_distribution<int>(1, 5)(rng);
        const auto r = static_cast<std::int64_t>(rank);
        const std::int64_t ax = (trial / 3) % (2 * r) - r;
        const auto a = static_cast<std::size_t>(ax < 0 ? ax + r : ax);
        const std::int64_t k = std::uniform_int_distribution<std::int64_t>(0, dims[a])(rng);
        const bool largest = trial % 2 == 0;
        graph g;
        const node_id t = g.add_op("TopK", "top", {g.add_input("x"), g.add_input("k")}, {{"axis", ax}, {"largest", largest ? 1 : 0}}, 2);
        g.mark_output({t, 0});
        g.mark_output({t, 1});
        const value x = trial % 4 < 2 ? random_value<float>(rng, dims, 0, 3) : random_value<std::int64_t>(rng, dims, -2, 2);  // ties
        const auto out = exec::executor(g).run({{"x", x}, {"k", value::of<std::int64_t>({1}, {k})}});
        auto want_dims = dims;
        want_dims[a] = k;
        REQUIRE(out[0].dims() == want_dims);
        REQUIRE(out[0].type() == x.type());
        REQUIRE(out[1].type() == dtype::i64);
        const auto xs = x.as_constant();
        const auto vs = out[0].as_constant();
        std::int64_t inner = 1;
        for (std::size_t i = a + 1; i < rank; ++i) inner *= dims[i];
        const std::int64_t len = dims[a];
        for (std::int64_t e = 0; e < out[0].size(); ++e) {
            const std::int64_t outer = e / (k * inner), j = e / inner % k, in_row = e % inner;
            auto at = [&](std::int64_t i) { return xs.at(static_cast<std::size_t>((outer * len + i) * inner + in_row)); };
            std::int64_t want = -1;  // the element with j elements above it
            for (std::int64_t i = 0; i < len; ++i) {
                std::int64_t above = 0;
                for (std::int64_t o = 0; o < len; ++o)
                    above += (largest ? at(o) > at(i) : at(o) < at(i)) || (at(o) == at(i) && o < i);
                if (above == j) want = i;
            }
            REQUIRE(out[1].as<std::int64_t>()[e] == want);
            REQUIRE(vs.at(static_cast<std::size_t>(e)) == at(want));
        }
    }
    graph g;
    const node_id t = g.add_op("TopK", "top", {g.add_input("x"), g.add_input("k")}, {}, 2);
    g.mark_output({t, 0});
    g.mark_output({t, 1});
    const float nan = std::numeric_limits<float>::quiet_NaN();
    const value x = value::of<float>({4}, {1, nan, 3, 3});
    const auto big = exec::executor(g).run({{"x", x}, {"k", value::of<std::int64_t>({1}, {3})}});
    CHECK(std::isnan(big[0].as<float>()[0]));  // NaN ranks above every number
    CHECK(std::vector<std::int64_t>(big[1].as<std::int64_t>(), big[1].as<std::int64_t>() + 3) == std::vector<std::int64_t>{1, 2, 3});
    CHECK(run_error(exec::executor(g), {{"x", x}, {"k", value::of<std::int64_t>({1}, {5})}})
              .find("node 'top' (TopK): K 5 is outside [0, 4]") != std::string::npos);
    CHECK(run_error(exec::executor(g), {{"x", x}, {"k", value::of<std::int64_t>({2}, {1, 1})}})
              .find("node 'top' (TopK): K is [2], not [1]") != std::string::npos);
    // Before opset 10, k is an attribute.
    graph h;
    const node_id t1 = h.add_op("TopK", "top1", {h.add_input("x")}, {{"k", std::int64_t{2}}}, 2);
    h.mark_output({t1, 1});
    const auto idx = exec::executor(h).run({{"x", value::of<std::int32_t>({2, 3}, {5, 9, 7, 1, 1, 0})}})[0];
    CHECK(std::vector<std::int64_t>(idx.as<std::int64_t>(), idx.as<std::int64_t>() + 4) == std::vector<std::int64_t>{1, 2, 0, 1});
    graph none;
    const node_id t2 = none.add_op("TopK", "top2", {none.add_input("x")}, {}, 2);
    none.mark_output({t2, 0});
    CHECK(run_error(exec::executor(none), {{"x", x}}).find("node 'top2' (TopK): neither input K nor attribute k gives the count") !=
          std::string::npos);
}

TEST_CASE("SoftmaxCrossEntropyLoss is NegativeLogLikelihoodLoss of LogSoftmax over the classes, in every reduction, with weights and ignore_index") {
    std::mt19937 rng(31);
    for (int trial = 0; trial < 36; ++trial) {
        const std::vector<std::int64_t> dims = trial % 3 == 0 ? std::vector<std::int64_t>{3, 5} : std::vector<std::int64_t>{2, 4, 3, 2};
        std::vector<std::int64_t> tdims = dims;
        tdims.erase(tdims.begin() + 1);
        const char* reduction = trial % 3 == 0 ? "none" : trial % 3 == 1 ? "sum" : "mean";
        const bool weighted = trial % 2 == 0, ignoring = trial % 4 < 2;
        graph g;
        auto loss = [&](const char* op, const char* name, std::vector<input_ref> in, std::uint32_t outputs) {
            return ignoring ? g.add_op(op, name, std::move(in), {{"reduction", std::string(reduction)}, {"ignore_index", std::int64_t{1}}}, outputs)
                            : g.add_op(op, name, std::move(in), {{"reduction", std::string(reduction)}}, outputs);
        };
        std::vector<input_ref> ins{g.add_input("x"), g.add_input("t")};
        if (weighted) ins.push_back(g.add_input("w"));
        const node_id sce = loss("SoftmaxCrossEntropyLoss", "sce", ins, 2);
        g.mark_output({sce, 0});
        g.mark_output({sce, 1});
        // The same through LogSoftmax's own kernel (the classes on axis 1).
        const node_id ls = g.add_op("Transpose", "to_last", {ins[0]}, {{"perm", dims.size() == 2 ? std::vector<std::int64_t>{0, 1} : std::vector<std::int64_t>{0, 2, 3, 1}}});
        const node_id lsm = g.add_op("LogSoftmax", "lsm", {ls}, {{"axis", std::int64_t{-1}}});
        const node_id back = g.add_op("Transpose", "back", {lsm}, {{"perm", dims.size() == 2 ? std::vector<std::int64_t>{0, 1} : std::vector<std::int64_t>{0, 3, 1, 2}}});
        std::vector<input_ref> nll_in{back, ins[1]};
        if (weighted) nll_in.push_back(ins[2]);
        g.mark_output(loss("NegativeLogLikelihoodLoss", "nll", nll_in, 1));
        const value x = random_real(rng, dims);
        const value t = random_value<std::int64_t>(rng, tdims, 0, static_cast<int>(dims[1]) - 1);
        std::vector<float> wv{0.5f, 2.0f, 1.0f, 0.25f, 3.0f};
        wv.resize(static_cast<std::size_t>(dims[1]));
        const value w = value::of<float>({dims[1]}, wv);
        std::map<std::string, value> feed{{"x", x}, {"t", t}};
        if (weighted) feed.emplace("w", w);
        const auto out = exec::executor(g).run(feed);
        REQUIRE(out[0].dims() == (std::string(reduction) == "none" ? tdims : std::vector<std::int64_t>{}));
        REQUIRE(out[1].dims() == dims);
        REQUIRE(out[2].dims() == out[0].dims());
        // The log-probabilities against a brute force, the loss against the LogSoftmax route.
        const auto lp = out[1].as_constant();
        const std::int64_t C = dims[1], D = count(dims) / (dims[0] * C);
        for (std::int64_t n = 0; n < dims[0]; ++n)
            for (std::int64_t d = 0; d < D; ++d) {
                long double s = 0;
                for (std::int64_t c = 0; c < C; ++c) s += std::exp(static_cast<long double>(x.as<float>()[(n * C + c) * D + d]));
                for (std::int64_t c = 0; c < C; ++c) {
                    const auto i = static_cast<std::size_t>((n * C + c) * D + d);
                    CHECK(lp.at(i) == doctest::Approx(static_cast<double>(x.as<float>()[i] - std::log(s))).epsilon(1e-5));
                }
            }
        for (std::int64_t i = 0; i < out[0].size(); ++i)
            CHECK(out[0].as<float>()[i] == doctest::Approx(out[2].as<float>()[i]).epsilon(1e-5));
    }
}

TEST_CASE("NegativeLogLikelihoodLoss: a target outside the classes is refused naming the node, every target ignored gives NaN as ONNX's mean does") {
    graph g;
    g.mark_output(g.add_op("NegativeLogLikelihoodLoss", "nll", {g.add_input("x"), g.add_input("t")}, {{"ignore_index", std::int64_t{-1}}}));
    const value x = value::of<float>({2, 3}, {1, 2, 3, 4, 5, 6});
    const exec::executor run(g);
    const auto ok = run.run({{"x", x}, {"t", value::of<std::int64_t>({2}, {2, -1})}});
    CHECK(ok[0].as<float>()[0] == -3.0f);  // one target counted: -x[0, 2] / 1
    CHECK(std::isnan(run.run({{"x", x}, {"t", value::of<std::int64_t>({2}, {-1, -1})}})[0].as<float>()[0]));
    CHECK(run_error(run, {{"x", x}, {"t", value::of<std::int64_t>({2}, {0, 3})}})
              .find("node 'nll' (NegativeLogLikelihoodLoss): target 3 at position 1 is not a class in [0, 3) nor ignore_index -1") !=
          std::string::npos);
    CHECK(run_error(run, {{"x", x}, {"t", value::of<std::int64_t>({3}, {0, 1, 2})}})
              .find("node 'nll' (NegativeLogLikelihoodLoss): the targets [3] are not the input [2, 3] without its class axis") !=
          std::string::npos);
    CHECK(run_error(run, {{"x", x}, {"t", value::of<float>({2}, {0, 1})}}).find("node 'nll' (NegativeLogLikelihoodLoss): the targets are float (int64 or int32 expected)") != std::string::npos);
}

TEST_CASE("InstanceNormalization: each (n, c) plane by its own mean and biased variance, scaled and shifted per channel") {
    std::mt19937 rng(5);
    const std::vector<std::int64_t> dims{2, 3, 4, 5};
    graph g;
    g.mark_output(g.add_op("InstanceNormalization", "in", {g.add_input("x"), g.add_input("s"), g.add_input("b")}, {{"epsilon", 0.01}}));
    const value x = random_real(rng, dims);
    const value s = value::of<float>({3}, {1.0f, -0.5f, 2.0f}), b = value::of<float>({3}, {0.0f, 1.0f, -2.0f});
    const auto y = exec::executor(g).run({{"x", x}, {"s", s}, {"b", b}})[0];
    REQUIRE(y.dims() == dims);
    for (std::int64_t n = 0; n < 2; ++n)
        for (std::int64_t c = 0; c < 3; ++c) {
            const float* p = x.as<float>() + (n * 3 + c) * 20;
            long double m = 0, v = 0;
            for (int i = 0; i < 20; ++i) m += p[i];
            m /= 20;
            for (int i = 0; i < 20; ++i) v += (p[i] - m) * (p[i] - m);
            v /= 20;
            for (int i = 0; i < 20; ++i) {
                const long double want = s.as<float>()[c] * (p[i] - m) / std::sqrt(v + 0.01L) + b.as<float>()[c];
                CHECK(y.as<float>()[(n * 3 + c) * 20 + i] == doctest::Approx(static_cast<double>(want)).epsilon(1e-5));
            }
        }
    CHECK(run_error(exec::executor(g), {{"x", x}, {"s", value::of<float>({2}, {1, 1})}, {"b", b}})
              .find("node 'in' (InstanceNormalization): input 1 [2] is not one value per channel") != std::string::npos);
}

TEST_CASE("BatchNormalization in training mode: the batch as one instance of InstanceNormalization, the running statistics by momentum") {
    std::mt19937 rng(6);
    const std::int64_t N = 2, C = 3, D = 10;
    const value x = random_real(rng, {N, C, 2, 5});
    const value s = value::of<float>({3}, {1.0f, -0.5f, 2.0f}), b = value::of<float>({3}, {0.0f, 1.0f, -2.0f});
    const value mean = value::of<float>({3}, {0.1f, -0.2f, 0.3f}), var = value::of<float>({3}, {1.0f, 2.0f, 0.5f});
    graph g;
    const node_id bn = g.add_op("BatchNormalization", "bn", {g.add_input("x"), g.add_input("s"), g.add_input("b"), g.add_input("m"), g.add_input("v")},
                                {{"training_mode", 1}, {"momentum", 0.75}, {"epsilon", 0.01}}, 3);
    for (std::uint32_t o = 0; o < 3; ++o) g.mark_output(input_ref(value_ref<node_id>{bn, o}));
    const auto y = exec::executor(g).run({{"x", x}, {"s", s}, {"b", b}, {"m", mean}, {"v", var}});
    REQUIRE(y.size() == 3);
    REQUIRE(y[0].dims() == x.dims());
    // x [N, C, D] laid out as one instance [1, C, N * D], through InstanceNormalization.
    std::vector<float> one(static_cast<std::size_t>(N * C * D));
    for (std::int64_t n = 0; n < N; ++n)
        for (std::int64_t c = 0; c < C; ++c)
            for (std::int64_t i = 0; i < D; ++i)
                one[static_cast<std::size_t>((c * N + n) * D + i)] = x.as<float>()[(n * C + c) * D + i];
    graph in;
    in.mark_output(in.add_op("InstanceNormalization", "in", {in.add_input("x"), in.add_input("s"), in.add_input("b")}, {{"epsilon", 0.01}}));
    const auto z = exec::executor(in).run({{"x", value::of<float>({1, C, N * D}, one)}, {"s", s}, {"b", b}})[0];
    for (std::int64_t n = 0; n < N; ++n)
        for (std::int64_t c = 0; c < C; ++c)
            for (std::int64_t i = 0; i < D; ++i)
                CHECK(y[0].as<float>()[(n * C + c) * D + i] == doctest::Approx(z.as<float>()[(c * N + n) * D + i]).epsilon(1e-5));
    for (std::int64_t c = 0; c < C; ++c) {
        double m = 0, v = 0;
        for (std::int64_t k = 0; k < N * D; ++k) m += one[static_cast<std::size_t>(c * N * D + k)];
        m /= static_cast<double>(N * D);
        for (std::int64_t k = 0; k < N * D; ++k) v += (one[static_cast<std::size_t>(c * N * D + k)] - m) * (one[static_cast<std::size_t>(c * N * D + k)] - m);
        v /= static_cast<double>(N * D);
        CHECK(y[1].as<float>()[c] == doctest::Approx(0.75 * mean.as<float>()[c] + 0.25 * m).epsilon(1e-5));
        CHECK(y[2].as<float>()[c] == doctest::Approx(0.75 * var.as<float>()[c] + 0.25 * v).epsilon(1e-5));
    }
}

}  // namespace loss_tests
