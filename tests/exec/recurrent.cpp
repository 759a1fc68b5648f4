// RNN, GRU and LSTM (exec/kernels/recurrent.hpp). Their outputs are checked against PyTorch in
// tests/models and against the ONNX conformance data; here the attributes those leave out, each
// by a relation that does not come from the kernels: a sequence length is a shorter run of that
// batch entry alone, reverse is forward in reversed time, bidirectional stacks the two, layout 1
// is layout 0 transposed, clip 0 has a closed form, and one LSTM step with input_forget is
// written out by hand. In the oneDNN modes the layers run on oneDNN's primitives
// (kernels/recurrent_onednn.hpp): the same results as the reference kernel, every cell and
// direction, and the forms oneDNN has no primitive for fall back to it.
#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <map>
#include <random>
#include <string>
#include <vector>

#include "sgmatch/exec/executor.hpp"
#include "sgmatch/exec/kernels/typed_onednn.hpp"
#include "sgmatch/ops/attrs.hpp"
#include "support/values.hpp"

using namespace sgmatch;
using exec::value;

namespace {

using vec = std::vector<double>;

vec random_vec(std::mt19937& rng, std::int64_t n) {
    std::uniform_real_distribution<double> d(-0.8, 0.8);
    vec v(static_cast<std::size_t>(n));
    for (auto& x : v) x = d(rng);
    return v;
}

struct rnn_case {
    const char* op;
    std::int64_t gates;
    std::int64_t S = 5, N = 3, I = 4, H = 3;
};

// A recurrent node's parameters for `dirs` directions.
struct params {
    vec W, R, B, h0, c0, P;
};
params random_params(std::mt19937& rng, const rnn_case& c, std::int64_t dirs) {
    params p;
    p.W = random_vec(rng, dirs * c.gates * c.H * c.I);
    p.R = random_vec(rng, dirs * c.gates * c.H * c.H);
    p.B = random_vec(rng, dirs * 2 * c.gates * c.H);
    p.h0 = random_vec(rng, dirs * c.N * c.H);
    p.c0 = random_vec(rng, dirs * c.N * c.H);
    p.P = random_vec(rng, dirs * 3 * c.H);
    return p;
}

// [A, B, inner] as [B, A, inner].
vec swap_outer(const vec& v, std::int64_t A, std::int64_t B, std::int64_t inner) {
    vec o(v.size());
    for (std::int64_t a = 0; a < A; ++a)
        for (std::int64_t b = 0; b < B; ++b)
            for (std::int64_t i = 0; i < inner; ++i)
                o[static_cast<std::size_t>((b * A + a) * inner + i)] = v[static_cast<std::size_t>((a * B + b) * inner + i)];
    return o;
}

// The node run on X [S, N, I], with `lens` when given; returns Y, Y_h (and Y_c). With
// `batch_first`, X and the initial states are given batch first (layout 1) and so are the
// outputs.
std::vector<value> run_cell(const rnn_case& c, const params& p, const vec& X, std::int64_t S, std::int64_t N, const char* direction,
                       const std::vector<std::int32_t>& lens = {}, const std::vector<std::pair<std::string, attribute>>& extra = {},
                       bool batch_first = false) {
    const std::int64_t dirs = std::string(direction) == "bidirectional" ? 2 : 1;
    graph g;
    auto k = [&](const char* name, std::vector<std::int64_t> dims, const vec& v) {
        std::vector<unsigned char> b(v.size() * sizeof(double));
        std::memcpy(b.data(), v.data(), b.size());
        return input_ref(g.add_constant(name, std::move(dims), dtype::f64, std::move(b)));
    };
    std::vector<input_ref> in{input_ref(g.add_input("X")), k("W", {dirs, c.gates * c.H, c.I}, p.W), k("R", {dirs, c.gates * c.H, c.H}, p.R),
                              k("B", {dirs, 2 * c.gates * c.H}, p.B)};
    if (lens.empty()) {
        in.push_back(input_ref(g.add_constant("no_lens", {0}, dtype::f32, {})));
    } else {
        std::vector<unsigned char> b(lens.size() * sizeof(std::int32_t));
        std::memcpy(b.data(), lens.data(), b.size());
        in.push_back(input_ref(g.add_constant("lens", {N}, dtype::i32, std::move(b))));
    }
    // An initial state [dirs, N, H], or [N, dirs, H] batch first.
    auto state = [&](const char* name, const vec& v) {
        const vec own(v.begin(), v.begin() + dirs * N * c.H);
        return batch_first ? k(name, {N, dirs, c.H}, swap_outer(own, dirs, N, c.H)) : k(name, {dirs, N, c.H}, own);
    };
    in.push_back(state("h0", p.h0));
    if (c.gates == 4) {
        in.push_back(state("c0", p.c0));
        in.push_back(k("P", {dirs, 3 * c.H}, p.P));
    }
    const std::uint32_t outs = c.gates == 4 ? 3 : 2;
    const node_id n = g.add_op(c.op, "cell", in, {{"direction", direction}, {"layout", batch_first ? 1 : 0}}, outs);
    for (const auto& [key, v] : extra) g.set_attr(n, key, v);
    for (std::uint32_t o = 0; o < outs; ++o) g.mark_output(input_ref(value_ref<node_id>{n, o}));
    if (batch_first) return exec::executor(g).run({{"X", value::of<double>({N, S, c.I}, swap_outer(X, S, N, c.I))}});
    return exec::executor(g).run({{"X", value::of<double>({S, N, c.I}, X)}});
}

// The rows [t, d, b, :] of Y [S, D, N, H], or [d, b, :] of a state [D, N, H].
vec y_row(const value& y, std::int64_t t, std::int64_t d, std::int64_t b) {
    const auto& s = y.dims();
    const double* p = y.as<double>() + ((t * s[1] + d) * s[2] + b) * s[3];
    return vec(p, p + s[3]);
}
vec state_row(const value& y, std::int64_t d, std::int64_t b) {
    const auto& s = y.dims();
    const double* p = y.as<double>() + (d * s[1] + b) * s[2];
    return vec(p, p + s[2]);
}
bool same(const vec& a, const vec& b) {
    if (a.size() != b.size()) return false;
    for (std::size_t i = 0; i < a.size(); ++i)
        if (std::abs(a[i] - b[i]) > 1e-12) return false;
    return true;
}

// One batch entry's parameters alone (its initial states), and its X cut to `len` steps (reversed in time with `flip`).
params entry(const params& p, const rnn_case& c, std::int64_t dirs, std::int64_t b) {
    params q = p;
    q.h0.clear();
    q.c0.clear();
    for (std::int64_t d = 0; d < dirs; ++d)
        for (std::int64_t j = 0; j < c.H; ++j) {
            q.h0.push_back(p.h0[static_cast<std::size_t>((d * c.N + b) * c.H + j)]);
            q.c0.push_back(p.c0[static_cast<std::size_t>((d * c.N + b) * c.H + j)]);
        }
    return q;
}
vec entry_x(const vec& X, const rnn_case& c, std::int64_t b, std::int64_t len, bool flip = false) {
    vec x;
    for (std::int64_t s = 0; s < len; ++s) {
        const std::int64_t t = flip ? len - 1 - s : s;
        for (std::int64_t i = 0; i < c.I; ++i) x.push_back(X[static_cast<std::size_t>((t * c.N + b) * c.I + i)]);
    }
    return x;
}

const rnn_case recurrent_cases[] = {{"RNN", 1}, {"GRU", 3}, {"LSTM", 4}};

}  // namespace

TEST_CASE("recurrent ops: a sequence length is a shorter run of that entry alone, Y is zero past it, in every direction") {
    std::mt19937 rng(5);
    for (const auto& c : recurrent_cases)
        for (const char* direction : {"forward", "reverse", "bidirectional"}) {
            CAPTURE(c.op);
            CAPTURE(direction);
            const std::int64_t dirs = std::string(direction) == "bidirectional" ? 2 : 1;
            const params p = random_params(rng, c, dirs);
            const vec X = random_vec(rng, c.S * c.N * c.I);
            const std::vector<std::int32_t> lens{5, 2, 0};
            const auto all = run_cell(c, p, X, c.S, c.N, direction, lens);
            REQUIRE(all[0].dims() == exec::shape{c.S, dirs, c.N, c.H});
            for (std::int64_t b = 0; b < c.N; ++b) {
                const std::int64_t len = lens[static_cast<std::size_t>(b)];
                const params q = entry(p, c, dirs, b);
                for (std::int64_t d = 0; d < dirs; ++d) {
                    const vec h0(q.h0.begin() + d * c.H, q.h0.begin() + (d + 1) * c.H);
                    if (len == 0) {  // the state stays the initial one
                        CHECK(same(state_row(all[1], d, b), h0));
                        for (std::int64_t t = 0; t < c.S; ++t) CHECK(same(y_row(all[0], t, d, b), vec(static_cast<std::size_t>(c.H), 0.0)));
                        continue;
                    }
                    const rnn_case one{c.op, c.gates, len, 1, c.I, c.H};
                    const auto alone = run_cell(one, q, entry_x(X, c, b, len), len, 1, direction);
                    for (std::int64_t t = 0; t < c.S; ++t)
                        CHECK(same(y_row(all[0], t, d, b), t < len ? y_row(alone[0], t, d, 0) : vec(static_cast<std::size_t>(c.H), 0.0)));
                    CHECK(same(state_row(all[1], d, b), state_row(alone[1], d, 0)));
                    if (c.gates == 4) CHECK(same(state_row(all[2], d, b), state_row(alone[2], d, 0)));
                }
            }
        }
}

TEST_CASE("recurrent ops: reverse is forward in reversed time, bidirectional is the two stacked, layout 1 is layout 0 transposed") {
    std::mt19937 rng(9);
    for (const auto& c : recurrent_cases) {
        CAPTURE(c.op);
        const params both = random_params(rng, c, 2);
        const vec X = random_vec(rng, c.S * c.N * c.I);
        // Direction d's own parameters.
        auto half = [&](std::int64_t d) {
            params q;
            auto cut = [d](const vec& v) { return vec(v.begin() + d * static_cast<std::int64_t>(v.size()) / 2, v.begin() + (d + 1) * static_cast<std::int64_t>(v.size()) / 2); };
            q.W = cut(both.W), q.R = cut(both.R), q.B = cut(both.B), q.h0 = cut(both.h0), q.c0 = cut(both.c0), q.P = cut(both.P);
            return q;
        };
        const auto bi = run_cell(c, both, X, c.S, c.N, "bidirectional");
        const auto fwd = run_cell(c, half(0), X, c.S, c.N, "forward");
        const auto rev = run_cell(c, half(1), X, c.S, c.N, "reverse");
        for (std::int64_t b = 0; b < c.N; ++b) {
            for (std::int64_t t = 0; t < c.S; ++t) {
                CHECK(same(y_row(bi[0], t, 0, b), y_row(fwd[0], t, 0, b)));
                CHECK(same(y_row(bi[0], t, 1, b), y_row(rev[0], t, 0, b)));
            }
            CHECK(same(state_row(bi[1], 1, b), state_row(rev[1], 0, b)));
        }
        // Reverse on X is forward on X reversed in time, each batch entry alone, Y read backwards.
        for (std::int64_t b = 0; b < c.N; ++b) {
            const params q = entry(half(1), c, 1, b);
            const rnn_case one{c.op, c.gates, c.S, 1, c.I, c.H};
            const auto flipped = run_cell(one, q, entry_x(X, c, b, c.S, true), c.S, 1, "forward");
            for (std::int64_t t = 0; t < c.S; ++t) CHECK(same(y_row(rev[0], t, 0, b), y_row(flipped[0], c.S - 1 - t, 0, 0)));
            CHECK(same(state_row(rev[1], 0, b), state_row(flipped[1], 0, 0)));
        }
        // layout 1: X [N, S, I], Y [N, S, D, H], states [N, D, H] (the initial ones too).
        const auto bf = run_cell(c, both, X, c.S, c.N, "bidirectional", {}, {}, true);
        REQUIRE(bf[0].dims() == exec::shape{c.N, c.S, 2, c.H});
        REQUIRE(bf[1].dims() == exec::shape{c.N, 2, c.H});
        // Y [S, 2, N, H] seen as [S * 2, N, H]: N moves to the front.
        CHECK(same(test::elements<double>(bf[0]), swap_outer(test::elements<double>(bi[0]), c.S * 2, c.N, c.H)));
        CHECK(same(test::elements<double>(bf[1]), swap_outer(test::elements<double>(bi[1]), 2, c.N, c.H)));
    }
}

TEST_CASE("recurrent ops: clip bounds every activation's input (clip 0 has a closed form), a large clip changes nothing") {
    std::mt19937 rng(3);
    for (const auto& c : recurrent_cases) {
        CAPTURE(c.op);
        const params p = random_params(rng, c, 1);
        const vec X = random_vec(rng, c.S * c.N * c.I);
        const auto zero = run_cell(c, p, X, c.S, c.N, "forward", {}, {{"clip", 0.0}});
        // Every gate is sigmoid(0) = 1/2, every candidate tanh(0) = 0: RNN's H and LSTM's H are 0,
        // GRU halves H each step, LSTM halves C each step.
        for (std::int64_t t = 0; t < c.S; ++t)
            for (std::int64_t b = 0; b < c.N; ++b) {
                vec want(static_cast<std::size_t>(c.H), 0.0);
                if (c.gates == 3)
                    for (std::int64_t j = 0; j < c.H; ++j) want[static_cast<std::size_t>(j)] = p.h0[static_cast<std::size_t>(b * c.H + j)] * std::pow(0.5, static_cast<double>(t + 1));
                CHECK(same(y_row(zero[0], t, 0, b), want));
            }
        if (c.gates == 4)
            for (std::int64_t b = 0; b < c.N; ++b) {
                vec want(static_cast<std::size_t>(c.H));
                for (std::int64_t j = 0; j < c.H; ++j) want[static_cast<std::size_t>(j)] = p.c0[static_cast<std::size_t>(b * c.H + j)] * std::pow(0.5, static_cast<double>(c.S));
                CHECK(same(state_row(zero[2], 0, b), want));
            }
        const auto unclipped = run_cell(c, p, X, c.S, c.N, "forward");
        const auto wide = run_cell(c, p, X, c.S, c.N, "forward", {}, {{"clip", 1e9}});
        CHECK(same(test::elements<double>(unclipped[0]), test::elements<double>(wide[0])));
    }
}

TEST_CASE("LSTM with input_forget: one step of one unit written out by hand") {
    const rnn_case c{"LSTM", 4, 1, 1, 1, 1};
    params p;
    p.W = {0.3, -0.2, 0.5, 0.7};  // i, o, f, c
    p.R = {0.1, 0.4, -0.6, 0.2};
    p.B = {0.05, -0.1, 0.2, 0.3, -0.05, 0.15, 0.1, -0.2};
    p.h0 = {0.4};
    p.c0 = {-0.3};
    p.P = {0.25, -0.35, 0.45};  // i, o, f
    const double x = 0.9, h = 0.4, cp = -0.3;
    auto sig = [](double v) { return 1 / (1 + std::exp(-v)); };
    auto pre = [&](int g) { return p.W[g] * x + p.R[g] * h + p.B[g] + p.B[4 + g]; };
    for (const int forget : {0, 1}) {
        CAPTURE(forget);
        const double i = sig(pre(0) + p.P[0] * cp);
        const double f = forget ? 1 - i : sig(pre(2) + p.P[2] * cp);
        const double C = f * cp + i * std::tanh(pre(3));
        const double o = sig(pre(1) + p.P[1] * C);
        const auto y = run_cell(c, p, {x}, 1, 1, "forward", {}, {{"input_forget", forget}});
        CHECK(std::abs(y[1].as<double>()[0] - o * std::tanh(C)) < 1e-14);
        CHECK(std::abs(y[2].as<double>()[0] - C) < 1e-14);
    }
}

TEST_CASE("recurrent ops refuse what they do not implement, naming the node") {
    std::mt19937 rng(1);
    const rnn_case c{"GRU", 3};
    const params p = random_params(rng, c, 1);
    const vec X = random_vec(rng, c.S * c.N * c.I);
    auto error = [&](auto&& f) -> std::string {
        try {
            f();
        } catch (const std::exception& e) {
            return e.what();
        }
        return "";
    };
    CHECK(error([&] { run_cell(c, p, X, c.S, c.N, "forward", {}, {{"activations", "Relu"}}); }).find("'cell'") != std::string::npos);
    CHECK(error([&] { run_cell(c, p, X, c.S, c.N, "forward", {}, {{"activations", "Relu"}}); }).find("activations") != std::string::npos);
    CHECK(error([&] { run_cell(c, p, X, c.S, c.N, "forward", {6, 1, 1}); }).find("a sequence length of 6 is outside [0, 5]") != std::string::npos);
    CHECK(error([&] { run_cell(c, p, X, c.S, c.N, "sideways"); }).find("direction") != std::string::npos);
    CHECK(error([&] { run_cell(c, p, X, c.S, c.N, "forward", {}, {{"hidden_size", 4}}); }).find("hidden_size 4 disagrees with W [1, 9, 4]") !=
          std::string::npos);
}

namespace {

// A recurrent node on f32 values: X a graph input, the weights constants; returns the graph and
// the node.
struct f32_cell {
    graph g;
    node_id n;
};
f32_cell f32_node(const char* op, std::int64_t gates, std::int64_t dirs, std::int64_t I, std::int64_t H, const char* direction, bool bias,
                  bool states, bool peepholes, std::mt19937& rng, const std::vector<std::pair<std::string, attribute>>& extra = {}) {
    f32_cell c;
    graph& g = c.g;
    auto k = [&](const char* name, std::vector<std::int64_t> dims) {
        std::int64_t n = 1;
        for (auto d : dims) n *= d;
        const vec v = random_vec(rng, n);
        std::vector<float> f(v.begin(), v.end());
        for (auto& x : f) x /= std::sqrt(static_cast<float>(H));  // as PyTorch initialises: a tame (not chaotic) layer
        std::vector<unsigned char> b(f.size() * sizeof(float));
        std::memcpy(b.data(), f.data(), b.size());
        return input_ref(g.add_constant(name, std::move(dims), dtype::f32, std::move(b)));
    };
    const input_ref none(g.add_constant("none", {0}, dtype::f32, {}));
    std::vector<input_ref> in{input_ref(g.add_input("X")), k("W", {dirs, gates * H, I}), k("R", {dirs, gates * H, H}),
                              bias ? k("B", {dirs, 2 * gates * H}) : none, input_ref(g.add_input("lens"))};
    in.push_back(states ? input_ref(g.add_input("h0")) : none);
    if (gates == 4) {
        in.push_back(states ? input_ref(g.add_input("c0")) : none);
        in.push_back(peepholes ? k("P", {dirs, 3 * H}) : none);
    }
    const std::uint32_t outs = gates == 4 ? 3 : 2;
    c.n = g.add_op(op, "cell", in, {{"direction", direction}}, outs);
    for (const auto& [key, v] : extra) g.set_attr(c.n, key, v);
    for (std::uint32_t o = 0; o < outs; ++o) g.mark_output(input_ref(value_ref<node_id>{c.n, o}));
    return c;
}

}  // namespace

TEST_CASE("recurrent ops on oneDNN's primitives: every cell and direction, with and without biases, states and peepholes, as the reference kernel") {
    std::mt19937 rng(11);
    struct cell {
        const char* op;
        std::int64_t gates;
        std::int64_t lbr;
    };
    // Sizes past onednn_recurrent_min_work for every cell: smaller layers run on the reference kernel.
    const std::int64_t S = 8, N = 4, I = 24, H = 40;
    REQUIRE(S * N * 1 * 1 * H * (I + H) >= exec::typed::onednn_recurrent_min_work);
    for (const cell c : {cell{"RNN", 1, 0}, cell{"GRU", 3, 0}, cell{"GRU", 3, 1}, cell{"LSTM", 4, 0}})
        for (const char* direction : {"forward", "reverse", "bidirectional"})
            for (int form = 0; form < 4; ++form) {
                const bool bias = (form & 1) != 0, states = (form & 2) != 0;
                const std::int64_t dirs = std::string(direction) == "bidirectional" ? 2 : 1;
                CAPTURE(c.op);
                CAPTURE(c.lbr);
                CAPTURE(direction);
                CAPTURE(form);
                std::vector<std::pair<std::string, attribute>> extra;
                if (c.gates == 3) extra.emplace_back("linear_before_reset", attribute(c.lbr));
                f32_cell node = f32_node(c.op, c.gates, dirs, I, H, direction, bias, states, bias, rng, extra);
                // oneDNN takes this form: its kernel is made, not refused.
                const ops::op_attrs a(*ops::find_schema(c.op), ops::node_of<graph>(node.g, node.n));
                CHECK_NOTHROW((void)exec::typed::onednn_recurrent(a, ops::node_of<graph>(node.g, node.n)));
                auto floats = [&](std::vector<std::int64_t> dims) {
                    std::int64_t n = 1;
                    for (auto d : dims) n *= d;
                    const vec v = random_vec(rng, n);
                    return value::of<float>(std::move(dims), std::vector<float>(v.begin(), v.end()));
                };
                std::map<std::string, value> in{{"X", floats({S, N, I})}, {"lens", value::of<std::int32_t>({N}, std::vector<std::int32_t>(static_cast<std::size_t>(N), S))}};
                if (states) {
                    in.emplace("h0", floats({dirs, N, H}));
                    if (c.gates == 4) in.emplace("c0", floats({dirs, N, H}));
                }
                const auto want = exec::executor(node.g, exec::mode::reference).run(in);
                const auto got = exec::executor(node.g, exec::mode::onednn).run(in);
                REQUIRE(got.size() == want.size());
                for (std::size_t o = 0; o < want.size(); ++o) {
                    CAPTURE(o);
                    REQUIRE(got[o].dims() == want[o].dims());
                    double worst = 0;
                    for (std::int64_t i = 0; i < want[o].size(); ++i)
                        worst = std::max(worst, static_cast<double>(std::abs(got[o].as<float>()[i] - want[o].as<float>()[i])));
                    CHECK(worst < 1e-5);
                }
            }
}

TEST_CASE("recurrent ops on oneDNN: forms it has no primitive for run on the reference kernel, with the same results") {
    std::mt19937 rng(12);
    const std::int64_t S = 8, N = 4, I = 24, H = 40;
    // clip and input_forget: refused by the oneDNN kernel when it is made.
    for (const auto& extra : {std::vector<std::pair<std::string, attribute>>{{"clip", attribute(0.5)}},
                              std::vector<std::pair<std::string, attribute>>{{"input_forget", attribute(std::int64_t{1})}}}) {
        f32_cell node = f32_node("LSTM", 4, 1, I, H, "forward", true, false, false, rng, extra);
        const ops::op_attrs a(*ops::find_schema("LSTM"), ops::node_of<graph>(node.g, node.n));
        CHECK_THROWS_AS((void)exec::typed::onednn_recurrent(a, ops::node_of<graph>(node.g, node.n)), onednn::kernel_error);
    }
    // Sequence lengths shorter than the sequence: known at run time, run then on the reference
    // kernel (the whole-length run of the same node on oneDNN's).
    f32_cell node = f32_node("GRU", 3, 2, I, H, "bidirectional", true, false, false, rng);
    std::vector<float> x(static_cast<std::size_t>(S * N * I));
    for (std::size_t i = 0; i < x.size(); ++i) x[i] = std::sin(static_cast<float>(i));
    for (const std::vector<std::int32_t>& lens : {std::vector<std::int32_t>{S, 2, S, 5}, std::vector<std::int32_t>{S, S, S, S}}) {
        const std::map<std::string, value> in{{"X", value::of<float>({S, N, I}, x)}, {"lens", value::of<std::int32_t>({N}, lens)}};
        const auto want = exec::executor(node.g, exec::mode::reference).run(in);
        const auto got = exec::executor(node.g, exec::mode::onednn).run(in);
        for (std::size_t o = 0; o < want.size(); ++o)
            for (std::int64_t i = 0; i < want[o].size(); ++i) CHECK(std::abs(got[o].as<float>()[i] - want[o].as<float>()[i]) < 1e-5);
    }
}
