// Det, MeanVarianceNormalization, ReverseSequence and the Hann, Hamming and Blackman windows
// (exec/kernels/linalg.hpp, losses.hpp, positions.hpp, signal.hpp): Det against the Leibniz
// sum over permutations, MVN against a two-pass mean and variance, ReverseSequence against
// brute force, the windows by the identities their definitions imply. The ONNX conformance
// cases (test_det_*, test_mvn, test_reversesequence_*, test_*window*) check them too. Runs in
// every preset.
#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <map>
#include <numeric>
#include <random>
#include <string>
#include <vector>

#include "sgmatch/exec/executor.hpp"
#include "support/values.hpp"

using namespace sgmatch;
using exec::value;

// Named: the unity build compiles this file with other tests; its helpers stay apart from theirs.
namespace numeric_tests {

using test::elements;

// One op over input "x" (and "y" when given), its output 0.
value run_one(const std::string& op, const value& x, std::vector<std::pair<std::string, attribute>> attrs = {},
              const value* y = nullptr) {
    graph g;
    std::vector<input_ref> ins{g.add_input("x")};
    if (y != nullptr) ins.push_back(g.add_input("y"));
    const node_id n = g.add_op(op, "n", ins);
    for (const auto& [k, v] : attrs) g.set_attr(n, k, v);
    g.mark_output(n);
    std::map<std::string, value> in{{"x", x}};
    if (y != nullptr) in.emplace("y", *y);
    return exec::executor(g).run(in).at(0);
}

// The determinant as the sum over permutations of signed products (Leibniz).
double leibniz(const std::vector<double>& m, int n) {
    std::vector<int> p(static_cast<std::size_t>(n));
    std::iota(p.begin(), p.end(), 0);
    double total = 0;
    do {
        int inversions = 0;
        for (int i = 0; i < n; ++i)
            for (int j = i + 1; j < n; ++j) inversions += p[static_cast<std::size_t>(i)] > p[static_cast<std::size_t>(j)];
        double prod = 1;
        for (int i = 0; i < n; ++i) prod *= m[static_cast<std::size_t>(i * n + p[static_cast<std::size_t>(i)])];
        total += inversions % 2 ? -prod : prod;
    } while (std::next_permutation(p.begin(), p.end()));
    return total;
}

}  // namespace numeric_tests

using namespace numeric_tests;

TEST_CASE("Det: each matrix of a batch against the Leibniz sum, singular ones 0, f64 exact on integers") {
    std::mt19937 rng(41);
    for (const int n : {1, 2, 3, 4, 5}) {
        CAPTURE(n);
        const value x = test::random_value<double>(rng, {2, 3, n, n}, -4, 4);
        const value d = run_one("Det", x);
        REQUIRE(d.dims() == exec::shape{2, 3});
        for (std::int64_t b = 0; b < 6; ++b) {
            const std::vector<double> m(x.as<double>() + b * n * n, x.as<double>() + (b + 1) * n * n);
            CHECK(d.as<double>()[b] == doctest::Approx(leibniz(m, n)).epsilon(1e-12));
        }
    }
    // Two equal rows: 0, whatever the pivots do.
    const value s = value::of<float>({3, 3}, {1, 2, 3, 4, 5, 6, 1, 2, 3});
    CHECK(elements<float>(run_one("Det", s))[0] == 0.0f);
    graph g;
    g.mark_output(g.add_op("Det", "det", {g.add_input("x")}));
    CHECK(test::run_error(exec::executor(g), {{"x", value::zeros(dtype::f32, {2, 3})}})
              .find("node 'det' (Det): the input [2, 3] is not a (batch of) square matrices") != std::string::npos);
}

TEST_CASE("MeanVarianceNormalization: each group over the axes has mean 0 and unit variance, as a two-pass computation gives") {
    std::mt19937 rng(43);
    const value x = test::random_value<float>(rng, {2, 3, 4, 5}, -20, 20);
    for (const bool given : {false, true}) {
        CAPTURE(given);
        const std::vector<std::int64_t> axes = given ? std::vector<std::int64_t>{1, -1} : std::vector<std::int64_t>{0, 2, 3};
        const value y = given ? run_one("MeanVarianceNormalization", x, {{"axes", attribute::ints{1, -1}}})
                              : run_one("MeanVarianceNormalization", x);
        std::vector<bool> reduced(4, false);
        for (auto a : axes) reduced[static_cast<std::size_t>(a < 0 ? a + 4 : a)] = true;
        // Groups by the kept coordinates; two passes in double.
        std::map<std::vector<std::int64_t>, std::vector<std::int64_t>> groups;
        const exec::shape d = x.dims();
        for (std::int64_t e = 0; e < x.size(); ++e) {
            std::vector<std::int64_t> key;
            std::int64_t r = e;
            std::vector<std::int64_t> pos(4);
            for (std::size_t k = 4; k-- > 0;) pos[k] = r % d[k], r /= d[k];
            for (std::size_t k = 0; k < 4; ++k)
                if (!reduced[k]) key.push_back(pos[k]);
            groups[key].push_back(e);
        }
        for (const auto& [key, members] : groups) {
            double mean = 0, var = 0;
            for (auto e : members) mean += x.as<float>()[e];
            mean /= static_cast<double>(members.size());
            for (auto e : members) var += (x.as<float>()[e] - mean) * (x.as<float>()[e] - mean);
            var /= static_cast<double>(members.size());
            for (auto e : members) CHECK(y.as<float>()[e] == doctest::Approx((x.as<float>()[e] - mean) / std::sqrt(var)).epsilon(1e-5));
        }
    }
}

TEST_CASE("ReverseSequence: each batch's first sequence_lens steps reversed, the rest kept, batch-major and time-major") {
    std::mt19937 rng(47);
    for (const bool batch_first : {false, true}) {
        CAPTURE(batch_first);
        const std::int64_t steps = 5, batches = 4, inner = 3;
        const exec::shape d = batch_first ? exec::shape{batches, steps, inner} : exec::shape{steps, batches, inner};
        const value x = test::random_value<std::int64_t>(rng, d, -100, 100);
        const std::vector<std::int64_t> lens{0, 1, 3, 5};
        const value l = value::of<std::int64_t>({batches}, lens);
        const value y = run_one("ReverseSequence", x, {{"batch_axis", batch_first ? 0 : 1}, {"time_axis", batch_first ? 1 : 0}}, &l);
        auto at = [&](std::int64_t b, std::int64_t t, std::int64_t i) { return ((batch_first ? b * steps + t : t * batches + b) * inner) + i; };
        for (std::int64_t b = 0; b < batches; ++b)
            for (std::int64_t t = 0; t < steps; ++t)
                for (std::int64_t i = 0; i < inner; ++i) {
                    const std::int64_t from = t < lens[static_cast<std::size_t>(b)] ? lens[static_cast<std::size_t>(b)] - 1 - t : t;
                    CHECK(y.as<std::int64_t>()[at(b, t, i)] == x.as<std::int64_t>()[at(b, from, i)]);
                }
    }
}

TEST_CASE("Windows: symmetric ones are mirror images with the ends a0 - a1 + a2, periodic ones are symmetric ones of size + 1 cut short") {
    struct kind {
        const char* op;
        double end;   // a0 - a1 + a2: the value at n = 0
        double mean;  // a0: the mean of a periodic window (the cosines sum to 0)
    };
    for (const kind& k : {kind{"HannWindow", 0.0, 0.5}, kind{"HammingWindow", 4.0 / 46, 25.0 / 46}, kind{"BlackmanWindow", 0.0, 0.42}}) {
        CAPTURE(k.op);
        for (const std::int64_t n : {8, 9}) {
            const value size = value::of<std::int64_t>({}, {n}), bigger = value::of<std::int64_t>({}, {n + 1});
            const auto periodic = elements<float>(run_one(k.op, size));
            const auto symmetric = elements<float>(run_one(k.op, size, {{"periodic", 0}}));
            const auto symmetric_1 = elements<float>(run_one(k.op, bigger, {{"periodic", 0}}));
            REQUIRE(periodic.size() == static_cast<std::size_t>(n));
            CHECK(symmetric.front() == doctest::Approx(k.end));
            for (std::size_t i = 0; i < symmetric.size(); ++i) CHECK(symmetric[i] == doctest::Approx(symmetric[symmetric.size() - 1 - i]));
            for (std::size_t i = 0; i < periodic.size(); ++i) CHECK(periodic[i] == doctest::Approx(symmetric_1[i]));
            CHECK(std::accumulate(periodic.begin(), periodic.end(), 0.0) / static_cast<double>(n) == doctest::Approx(k.mean));
            // f64 on request: the same values, closer.
            const value w64 = run_one(k.op, size, {{"output_datatype", 11}});
            REQUIRE(w64.type() == dtype::f64);
            for (std::size_t i = 0; i < periodic.size(); ++i) CHECK(w64.as<double>()[i] == doctest::Approx(periodic[i]));
        }
    }
}

namespace numeric_tests {

// One op over the given inputs ("i0", "i1", ...; an empty value: the input left out), output 0.
value run_inputs(const std::string& op, const std::vector<value>& xs, std::vector<std::pair<std::string, attribute>> attrs = {}) {
    graph g;
    std::vector<input_ref> ins;
    std::map<std::string, value> in;
    for (std::size_t i = 0; i < xs.size(); ++i) {
        const std::string name = "i" + std::to_string(i);
        ins.push_back(g.add_input(name));
        in.emplace(name, xs[i]);
    }
    const node_id n = g.add_op(op, "n", ins);
    for (const auto& [k, v] : attrs) g.set_attr(n, k, v);
    g.mark_output(n);
    return exec::executor(g).run(in).at(0);
}

// The DFT of one complex line by its defining sum, in long double.
std::vector<long double> direct_dft(const std::vector<long double>& re, const std::vector<long double>& im, std::size_t n, bool inverse) {
    const long double pi = 3.141592653589793238462643383279L;
    std::vector<long double> out(2 * n);
    for (std::size_t k = 0; k < n; ++k) {
        long double sr = 0, si = 0;
        for (std::size_t t = 0; t < n && t < re.size(); ++t) {
            const long double angle = (inverse ? 2 : -2) * pi * static_cast<long double>(k) * static_cast<long double>(t) / static_cast<long double>(n);
            sr += re[t] * std::cos(angle) - im[t] * std::sin(angle);
            si += re[t] * std::sin(angle) + im[t] * std::cos(angle);
        }
        out[2 * k] = inverse ? sr / static_cast<long double>(n) : sr;
        out[2 * k + 1] = inverse ? si / static_cast<long double>(n) : si;
    }
    return out;
}

}  // namespace numeric_tests

TEST_CASE("DFT: against its defining sum, the inverse undoes it, onesided keeps the first half, dft_length pads") {
    std::mt19937 rng(17);
    std::uniform_real_distribution<double> u(-1.0, 1.0);
    const std::int64_t batch = 2, n = 7, inner = 3;
    std::vector<double> x(static_cast<std::size_t>(batch * n * inner * 2));
    for (auto& v : x) v = u(rng);
    const value input = value::of<double>({batch, n, inner, 2}, x);
    auto at = [&](std::int64_t b, std::int64_t t, std::int64_t i, int c) { return static_cast<std::size_t>(((b * n + t) * inner + i) * 2 + c); };
    const value y = run_inputs("DFT", {input});
    REQUIRE(y.dims() == exec::shape{batch, n, inner, 2});
    const double* py = y.as<double>();
    for (std::int64_t b = 0; b < batch; ++b)
        for (std::int64_t i = 0; i < inner; ++i) {
            std::vector<long double> re, im;
            for (std::int64_t t = 0; t < n; ++t) re.push_back(x[at(b, t, i, 0)]), im.push_back(x[at(b, t, i, 1)]);
            const auto want = direct_dft(re, im, static_cast<std::size_t>(n), false);
            for (std::int64_t k = 0; k < n; ++k)
                for (int c = 0; c < 2; ++c)
                    CHECK(py[at(b, k, i, c)] == doctest::Approx(static_cast<double>(want[static_cast<std::size_t>(2 * k + c)])).epsilon(1e-12));
        }
    // The inverse gives the input back.
    const value back = run_inputs("DFT", {y}, {{"inverse", 1}});
    for (std::size_t j = 0; j < x.size(); ++j) CHECK(back.as<double>()[j] == doctest::Approx(x[j]).epsilon(1e-12));
    // A real input: onesided keeps bins 0 .. n / 2 of the full transform; dft_length 10 is the
    // input padded with zeros; along axis 2 (negative: counted from the back).
    std::vector<float> r(static_cast<std::size_t>(n * 4));
    for (auto& v : r) v = static_cast<float>(u(rng));
    const value real = value::of<float>({1, n, 4, 1}, r);
    const auto full = elements<float>(run_inputs("DFT", {real}));
    const value half = run_inputs("DFT", {real}, {{"onesided", 1}});
    REQUIRE(half.dims() == exec::shape{1, n / 2 + 1, 4, 2});
    const auto h = elements<float>(half);
    for (std::size_t j = 0; j < h.size(); ++j) CHECK(h[j] == full[j]);
    const value padded = run_inputs("DFT", {real, value::of<std::int64_t>({}, {10})});
    REQUIRE(padded.dims() == exec::shape{1, 10, 4, 2});
    std::vector<float> r10(static_cast<std::size_t>(10 * 4), 0.0f);
    std::copy(r.begin(), r.end(), r10.begin());
    CHECK(elements<float>(padded) == elements<float>(run_inputs("DFT", {value::of<float>({1, 10, 4, 1}, r10)})));
    const value along2 = run_inputs("DFT", {real}, {{"axis", -2}});
    REQUIRE(along2.dims() == exec::shape{1, n, 4, 2});
    // A complex input cannot be onesided; the last axis must be the real / imaginary one.
    CHECK_THROWS_WITH_AS(run_inputs("DFT", {input}, {{"onesided", 1}}), doctest::Contains("onesided with a complex input"), exec::exec_error);
    CHECK_THROWS_WITH_AS(run_inputs("DFT", {value::of<float>({2, 3}, std::vector<float>(6, 0.0f))}),
                         doctest::Contains("the last axis must hold 1 (real) or 2 (complex) values"), exec::exec_error);
}

TEST_CASE("STFT: each frame is the transform of the windowed slice of the signal") {
    std::mt19937 rng(23);
    std::uniform_real_distribution<float> u(-1.0f, 1.0f);
    const std::int64_t length = 40, step = 5, frame = 8;
    std::vector<float> s(static_cast<std::size_t>(2 * length)), w(static_cast<std::size_t>(frame));
    for (auto& v : s) v = u(rng);
    for (auto& v : w) v = u(rng);
    const value signal = value::of<float>({2, length, 1}, s);
    const value y = run_inputs("STFT", {signal, value::of<std::int64_t>({}, {step}), value::of<float>({frame}, w)});
    const std::int64_t frames = (length - frame) / step + 1, bins = frame / 2 + 1;
    REQUIRE(y.dims() == exec::shape{2, frames, bins, 2});
    const auto got = elements<float>(y);
    for (std::int64_t b = 0; b < 2; ++b)
        for (std::int64_t f = 0; f < frames; ++f) {
            std::vector<long double> re, im(static_cast<std::size_t>(frame), 0.0L);
            for (std::int64_t t = 0; t < frame; ++t)
                re.push_back(static_cast<long double>(s[static_cast<std::size_t>(b * length + f * step + t)]) * w[static_cast<std::size_t>(t)]);
            const auto want = direct_dft(re, im, static_cast<std::size_t>(frame), false);
            for (std::int64_t k = 0; k < bins; ++k)
                for (int c = 0; c < 2; ++c)
                    CHECK(got[static_cast<std::size_t>(((b * frames + f) * bins + k) * 2 + c)] ==
                          doctest::Approx(static_cast<double>(want[static_cast<std::size_t>(2 * k + c)])).epsilon(1e-5));
        }
    // frame_length without a window: a window of ones; both given must agree.
    const value ones = value::of<float>({frame}, std::vector<float>(static_cast<std::size_t>(frame), 1.0f));
    const value step_v = value::of<std::int64_t>({}, {step}), length_v = value::of<std::int64_t>({}, {frame});
    const value plain = run_inputs("STFT", {signal, step_v, value::of<float>({0}, std::vector<float>{}), length_v});
    CHECK(elements<float>(plain) == elements<float>(run_inputs("STFT", {signal, step_v, ones})));
    CHECK_THROWS_WITH_AS(run_inputs("STFT", {signal, step_v, ones, value::of<std::int64_t>({}, {6})}),
                         doctest::Contains("frame_length 6 differs from the window's length 8"), exec::exec_error);
}

TEST_CASE("MelWeightMatrix: triangles peaking at 1, each band's support contiguous, the bands in order") {
    const value m = run_inputs("MelWeightMatrix", {value::of<std::int32_t>({}, {6}), value::of<std::int32_t>({}, {64}),
                                                   value::of<std::int32_t>({}, {16000}), value::of<float>({}, {100.0f}),
                                                   value::of<float>({}, {8000.0f})});
    REQUIRE(m.dims() == exec::shape{33, 6});
    const auto v = elements<float>(m);
    std::int64_t last_peak = -1;
    for (std::int64_t band = 0; band < 6; ++band) {
        CAPTURE(band);
        std::int64_t first = -1, end = -1, peak = -1;
        for (std::int64_t row = 0; row < 33; ++row) {
            const float x = v[static_cast<std::size_t>(row * 6 + band)];
            CHECK(x >= 0.0f);
            CHECK(x <= 1.0f);
            if (x > 0 && first < 0) first = row;
            if (x > 0) end = row + 1;
            if (x == 1.0f && peak < 0) peak = row;
        }
        REQUIRE(first >= 0);
        for (std::int64_t row = first; row < end; ++row) CHECK(v[static_cast<std::size_t>(row * 6 + band)] > 0.0f);
        CHECK(peak > last_peak);
        last_peak = peak;
    }
}

TEST_CASE("TfIdfVectorizer: counts of 1-grams and gapped 2-grams against pairs of positions, in TF, IDF and TFIDF modes") {
    std::mt19937 rng(29);
    const std::int64_t rows = 3, cols = 10, max_skip = 2;
    std::vector<std::int64_t> tokens(static_cast<std::size_t>(rows * cols));
    for (auto& t : tokens) t = static_cast<std::int64_t>(rng() % 5);
    // Pool: 1-grams 1, 3; 2-grams (1 2), (4 4), (0 3); their output positions and weights.
    const attribute::ints pool{1, 3, 1, 2, 4, 4, 0, 3}, counts{0, 2}, indexes{4, 0, 1, 3, 2};
    const std::vector<double> weights{0.5, 2, 3, 0.25, 1.5};
    const std::vector<std::vector<std::int64_t>> grams{{1}, {3}, {1, 2}, {4, 4}, {0, 3}};
    for (const char* mode : {"TF", "IDF", "TFIDF"}) {
        CAPTURE(mode);
        const value y = run_one("TfIdfVectorizer", value::of<std::int64_t>({rows, cols}, tokens),
                                {{"min_gram_length", 1}, {"max_gram_length", 2}, {"max_skip_count", max_skip}, {"mode", mode},
                                 {"ngram_counts", counts}, {"ngram_indexes", indexes}, {"pool_int64s", pool},
                                 {"weights", attribute(attribute::reals(weights.begin(), weights.end()))}});
        REQUIRE(y.dims() == exec::shape{rows, 5});
        const auto got = elements<float>(y);
        for (std::int64_t r = 0; r < rows; ++r)
            for (std::size_t g = 0; g < grams.size(); ++g) {
                const std::int64_t* row = tokens.data() + r * cols;
                double c = 0;
                if (grams[g].size() == 1) {
                    c = static_cast<double>(std::count(row, row + cols, grams[g][0]));
                } else {
                    for (std::int64_t i = 0; i < cols; ++i)
                        for (std::int64_t j = i + 1; j < cols && j - i <= max_skip + 1; ++j)
                            c += row[i] == grams[g][0] && row[j] == grams[g][1];
                }
                const double w = weights[g];
                const double want = std::string(mode) == "TF" ? c : std::string(mode) == "IDF" ? (c > 0 ? w : 0.0) : c * w;
                CHECK(got[static_cast<std::size_t>(r * 5 + indexes[g])] == doctest::Approx(want));
            }
    }
    CHECK_THROWS_WITH_AS(run_one("TfIdfVectorizer", value::of<std::int64_t>({4}, {1, 2, 3, 4}),
                                 {{"min_gram_length", 1}, {"max_gram_length", 2}, {"max_skip_count", 0}, {"mode", "TF"},
                                  {"ngram_counts", attribute::ints{0, 3}}, {"ngram_indexes", attribute::ints{0, 1, 2}}, {"pool_int64s", pool}}),
                         doctest::Contains("do not split the pool"), exec::exec_error);
}
