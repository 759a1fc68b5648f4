// The ops that work by element position (ops/positions.hpp, exec/kernels/positions.hpp), Mod
// and MaxPool's Indices, on random inputs, each against brute force written here from the ONNX definitions;
// their refusals name the node. (The ONNX conformance cases check them too.) Runs in every
// preset.
#include <doctest/doctest.h>

#include <cmath>
#include <limits>
#include <algorithm>
#include <map>
#include <random>

#include "sgmatch/exec/executor.hpp"
#include "support/values.hpp"

using namespace sgmatch;
using exec::value;

// Named: the unity build compiles this file with other tests; its helpers stay apart from theirs.
namespace position_tests {

using test::count;
using test::elements;
using test::random_value;
using test::run_error;

// A random shape of rank `rank`, dims in [lo, hi].
std::vector<std::int64_t> random_dims(std::mt19937& rng, std::size_t rank, int lo, int hi) {
    std::uniform_int_distribution<int> d(lo, hi);
    std::vector<std::int64_t> v(rank);
    for (auto& x : v) x = d(rng);
    return v;
}
// The row-major index of element i of dims d.
std::vector<std::int64_t> unravel(std::int64_t i, const std::vector<std::int64_t>& d) {
    std::vector<std::int64_t> idx(d.size());
    for (std::size_t k = d.size(); k-- > 0;) {
        idx[k] = i % d[k];
        i /= d[k];
    }
    return idx;
}
// A 1-D bool value of the flags given.
value bools(const std::vector<std::uint8_t>& flags) {
    value v = value::zeros(dtype::boolean, {static_cast<std::int64_t>(flags.size())});
    for (std::size_t i = 0; i < flags.size(); ++i) v.as<bool>()[i] = flags[i] != 0;
    return v;
}
std::int64_t ravel(const std::vector<std::int64_t>& idx, const std::vector<std::int64_t>& d) {
    std::int64_t i = 0;
    for (std::size_t k = 0; k < d.size(); ++k) i = i * d[k] + idx[k];
    return i;
}

TEST_CASE("Mod: fmod 0 takes the divisor's sign, fmod 1 the dividend's, and integer modulo by zero and fmod 0 on reals are refused") {
    constexpr auto min = std::numeric_limits<std::int64_t>::min();
    graph g;
    auto a = g.add_input("a"), b = g.add_input("b");
    g.mark_output(g.add_op("Mod", "mod", {a, b}));
    g.mark_output(g.add_op("Mod", "fmod", {a, b}, {{"fmod", 1}}));
    const exec::executor run(g);
    std::mt19937 rng(11);
    std::uniform_int_distribution<int> d(-50, 50);
    std::vector<std::int64_t> x(200), y(200);
    for (std::size_t i = 0; i < x.size(); ++i) {
        x[i] = d(rng);
        do y[i] = d(rng) / 5; while (y[i] == 0);
    }
    x[0] = min, y[0] = -1;  // the one quotient int64 does not hold
    const auto out = run.run({{"a", value::of<std::int64_t>({200}, x)}, {"b", value::of<std::int64_t>({200}, y)}});
    for (std::size_t i = 0; i < x.size(); ++i) {
        CAPTURE(x[i]);
        CAPTURE(y[i]);
        // Python's %: x - y * floor(x / y); C's fmod: x - y * trunc(x / y) (exact in long double here).
        const long double q = static_cast<long double>(x[i]) / static_cast<long double>(y[i]);
        const auto py = static_cast<std::int64_t>(static_cast<long double>(x[i]) - static_cast<long double>(y[i]) * std::floor(q));
        const auto c = static_cast<std::int64_t>(static_cast<long double>(x[i]) - static_cast<long double>(y[i]) * std::trunc(q));
        CHECK(out[0].as<std::int64_t>()[i] == py);
        CHECK(out[1].as<std::int64_t>()[i] == c);
    }
    // Broadcasting, int32.
    const auto b32 = run.run({{"a", value::of<std::int32_t>({2, 2}, {7, -7, 7, -7})}, {"b", value::of<std::int32_t>({2}, {3, -3})}});
    CHECK(elements<std::int32_t>(b32[0]) == std::vector<std::int32_t>{1, -1, 1, -1});
    CHECK(elements<std::int32_t>(b32[1]) == std::vector<std::int32_t>{1, -1, 1, -1});
    const auto b32b = run.run({{"a", value::of<std::int32_t>({2}, {7, -7})}, {"b", value::of<std::int32_t>({2}, {-3, 3})}});
    CHECK(elements<std::int32_t>(b32b[0]) == std::vector<std::int32_t>{-2, 2});
    CHECK(elements<std::int32_t>(b32b[1]) == std::vector<std::int32_t>{1, -1});
    CHECK(run_error(run, {{"a", value::of<std::int64_t>({1}, {5})}, {"b", value::of<std::int64_t>({1}, {0})}}) ==
          "sgmatch::exec::executor: node 'mod' (Mod): integer modulo by zero");
    // Reals: fmod 1 is C's fmod; fmod 0 is refused (ONNX leaves it undefined).
    graph r;
    r.mark_output(r.add_op("Mod", "fmod", {r.add_input("a"), r.add_input("b")}, {{"fmod", 1}}));
    const auto f = exec::executor(r).run({{"a", value::of<float>({4}, {5.5f, -5.5f, 5.5f, -5.5f})}, {"b", value::of<float>({4}, {2, 2, -2, -2})}});
    CHECK(elements<float>(f[0]) == std::vector<float>{1.5f, -1.5f, 1.5f, -1.5f});
    CHECK(run_error(run, {{"a", value::of<float>({1}, {5})}, {"b", value::of<float>({1}, {2})}}) ==
          "sgmatch::exec::executor: node 'mod' (Mod): fmod 0 on real values (ONNX defines Mod of reals with fmod 1)");
}

TEST_CASE("Tile: every output element is the input's at its index modulo the input's dims") {
    std::mt19937 rng(5);
    for (int trial = 0; trial < 40; ++trial) {
        const std::size_t rank = static_cast<std::size_t>(trial % 4 + 1);
        const auto dims = random_dims(rng, rank, 1, 3);
        auto reps = random_dims(rng, rank, 0, 3);
        if (trial % 5 != 0)
            for (auto& r : reps) r = std::max<std::int64_t>(r, 1);
        graph g;
        auto x = g.add_input("x");
        auto rp = g.add_input("repeats");  // computed at run time: read by the kernel
        g.mark_output(g.add_op("Tile", "tile", {x, rp}));
        const value in = random_value<std::int64_t>(rng, dims, -9, 9);
        const auto out = exec::executor(g).run({{"x", in}, {"repeats", value::of<std::int64_t>({static_cast<std::int64_t>(rank)}, reps)}})[0];
        std::vector<std::int64_t> want_dims(rank);
        for (std::size_t k = 0; k < rank; ++k) want_dims[k] = dims[k] * reps[k];
        REQUIRE(out.dims() == want_dims);
        for (std::int64_t i = 0; i < out.size(); ++i) {
            auto idx = unravel(i, want_dims);
            for (std::size_t k = 0; k < rank; ++k) idx[k] %= dims[k];
            REQUIRE(out.as<std::int64_t>()[i] == in.as<std::int64_t>()[ravel(idx, dims)]);
        }
    }
    graph g;
    g.mark_output(g.add_op("Tile", "tile", {g.add_input("x"), g.add_input("r")}));
    const exec::executor run(g);
    CHECK(run_error(run, {{"x", value::of<float>({2}, {1, 2})}, {"r", value::of<std::int64_t>({2}, {1, 1})}})
              .find("node 'tile' (Tile): repeats [1, 1] do not give one repeat for each of the 1 axes") != std::string::npos);
    CHECK(run_error(run, {{"x", value::of<float>({2}, {1, 2})}, {"r", value::of<std::int64_t>({1}, {-1})}})
              .find("node 'tile' (Tile): a negative repeat in [-1]") != std::string::npos);
    // Bytes of any type: uint8.
    const auto bytes = run.run({{"x", value::of<std::uint8_t>({2}, {200, 7})}, {"r", value::of<std::int64_t>({1}, {2})}})[0];
    CHECK(elements<std::uint8_t>(bytes) == std::vector<std::uint8_t>{200, 7, 200, 7});
}

TEST_CASE("Trilu: the upper or lower triangle from diagonal k of every matrix in a batch, k given or not") {
    std::mt19937 rng(7);
    for (int trial = 0; trial < 30; ++trial) {
        const auto dims = random_dims(rng, static_cast<std::size_t>(2 + trial % 3), 1, 5);
        const std::int64_t k = trial % 9 - 4;
        const bool upper = trial % 2 == 0, given = trial % 3 != 0;
        graph g;
        std::vector<input_ref> ins{g.add_input("x")};
        if (given) ins.push_back(g.add_input("k"));
        g.mark_output(g.add_op("Trilu", "tri", ins, {{"upper", upper ? 1 : 0}}));
        const value in = random_value<float>(rng, dims, 1, 9);
        std::map<std::string, value> feed{{"x", in}};
        if (given) feed.emplace("k", value::of<std::int64_t>({}, {k}));
        const auto out = exec::executor(g).run(feed)[0];
        const std::int64_t diag = given ? k : 0;
        REQUIRE(out.dims() == dims);
        for (std::int64_t e = 0; e < out.size(); ++e) {
            const auto idx = unravel(e, dims);
            const std::int64_t i = idx[idx.size() - 2], j = idx.back();
            const bool keep = upper ? j - i >= diag : j - i <= diag;
            REQUIRE(out.as<float>()[e] == (keep ? in.as<float>()[e] : 0.f));
        }
    }
    graph g;
    g.mark_output(g.add_op("Trilu", "tri", {g.add_input("x")}));
    CHECK(run_error(exec::executor(g), {{"x", value::of<float>({3}, {1, 2, 3})}}).find("node 'tri' (Trilu): the input has rank 1 (at least 2: matrices)") !=
          std::string::npos);
}

TEST_CASE("Range: ceil((limit - start) / delta) values, integers counted exactly to the ends of int64, reals without drift") {
    constexpr auto max = std::numeric_limits<std::int64_t>::max(), min = std::numeric_limits<std::int64_t>::min();
    graph g;
    g.mark_output(g.add_op("Range", "range", {g.add_input("s"), g.add_input("l"), g.add_input("d")}));
    const exec::executor run(g);
    auto ints = [&](std::int64_t s, std::int64_t l, std::int64_t d) {
        return elements<std::int64_t>(run.run({{"s", value::of<std::int64_t>({}, {s})}, {"l", value::of<std::int64_t>({}, {l})}, {"d", value::of<std::int64_t>({}, {d})}})[0]);
    };
    std::mt19937 rng(3);
    std::uniform_int_distribution<int> v(-20, 20);
    for (int trial = 0; trial < 200; ++trial) {
        const std::int64_t s = v(rng), l = v(rng);
        std::int64_t d = v(rng) / 4;
        if (d == 0) d = trial % 2 ? 1 : -1;
        std::vector<std::int64_t> want;  // brute force: step until the limit is reached or passed
        for (std::int64_t x = s; d > 0 ? x < l : x > l; x += d) want.push_back(x);
        CAPTURE(s);
        CAPTURE(l);
        CAPTURE(d);
        REQUIRE(ints(s, l, d) == want);
    }
    CHECK(ints(min, max, std::int64_t{1} << 62) == std::vector<std::int64_t>{min, min + (std::int64_t{1} << 62), 0, std::int64_t{1} << 62});
    CHECK(ints(max, min, min + 1) == std::vector<std::int64_t>{max, 0, min + 1});
    CHECK(run_error(run, {{"s", value::of<std::int64_t>({}, {0})}, {"l", value::of<std::int64_t>({}, {3})}, {"d", value::of<std::int64_t>({}, {0})}})
              .find("node 'range' (Range): delta is 0") != std::string::npos);
    CHECK(run_error(run, {{"s", value::of<std::int64_t>({}, {0})}, {"l", value::of<std::int32_t>({}, {3})}, {"d", value::of<std::int64_t>({}, {1})}})
              .find("node 'range' (Range): start is int64, input 1 is int32") != std::string::npos);
    // Reals: start + i * delta, each from start.
    const auto f = run.run({{"s", value::of<float>({}, {0.1f})}, {"l", value::of<float>({}, {100.f})}, {"d", value::of<float>({}, {0.1f})}})[0];
    REQUIRE(f.size() == static_cast<std::int64_t>(std::ceil((100.f - 0.1f) / 0.1f)));
    for (std::int64_t i = 0; i < f.size(); ++i) REQUIRE(f.as<float>()[i] == 0.1f + static_cast<float>(i) * 0.1f);
}

TEST_CASE("CumSum: inclusive, exclusive, forward and reverse sums along any axis against brute force") {
    std::mt19937 rng(9);
    for (int trial = 0; trial < 48; ++trial) {
        const std::size_t rank = static_cast<std::size_t>(1 + trial % 3);
        const auto dims = random_dims(rng, rank, 1, 4);
        const auto r = static_cast<std::int64_t>(rank);
        const std::int64_t ax = (trial / 3) % (2 * r) - r;  // -rank .. rank-1
        const bool exclusive = trial % 2 == 1, reverse = (trial / 2) % 2 == 1;
        graph g;
        g.mark_output(g.add_op("CumSum", "cs", {g.add_input("x"), g.add_input("axis")}, {{"exclusive", exclusive ? 1 : 0}, {"reverse", reverse ? 1 : 0}}));
        const value in = random_value<std::int32_t>(rng, dims, -9, 9);
        const auto out = exec::executor(g).run({{"x", in}, {"axis", value::of<std::int32_t>({}, {static_cast<std::int32_t>(ax)})}})[0];
        const auto a = static_cast<std::size_t>(ax < 0 ? ax + r : ax);
        for (std::int64_t e = 0; e < out.size(); ++e) {
            auto idx = unravel(e, dims);
            const std::int64_t at = idx[a];
            std::int32_t want = 0;
            for (std::int64_t j = 0; j < dims[a]; ++j) {
                const bool counted = reverse ? (exclusive ? j > at : j >= at) : (exclusive ? j < at : j <= at);
                idx[a] = j;
                if (counted) want += in.as<std::int32_t>()[ravel(idx, dims)];
            }
            REQUIRE(out.as<std::int32_t>()[e] == want);
        }
    }
    graph g;
    g.mark_output(g.add_op("CumSum", "cs", {g.add_input("x"), g.add_input("axis")}));
    CHECK(run_error(exec::executor(g), {{"x", value::of<float>({2}, {1, 2})}, {"axis", value::of<std::int64_t>({}, {1})}})
              .find("node 'cs' (CumSum): axis 1 is out of range for rank 1") != std::string::npos);
}

TEST_CASE("ArgMax and ArgMin: the first or the last index of the extreme, ties included, the axis kept or dropped") {
    std::mt19937 rng(13);
    for (int trial = 0; trial < 64; ++trial) {
        const std::size_t rank = static_cast<std::size_t>(1 + trial % 3);
        const auto dims = random_dims(rng, rank, 1, 4);
        const auto r = static_cast<std::int64_t>(rank);
        const std::int64_t ax = (trial / 3) % (2 * r) - r;
        const bool keep = trial % 2 == 0, last = (trial / 2) % 2 == 1, is_max = (trial / 4) % 2 == 0;
        graph g;
        g.mark_output(g.add_op(is_max ? "ArgMax" : "ArgMin", "arg", {g.add_input("x")},
                               {{"axis", ax}, {"keepdims", keep ? 1 : 0}, {"select_last_index", last ? 1 : 0}}));
        const value in = random_value<float>(rng, dims, 0, 2);  // few values: ties everywhere
        const auto out = exec::executor(g).run({{"x", in}})[0];
        const auto a = static_cast<std::size_t>(ax < 0 ? ax + r : ax);
        auto want_dims = dims;
        if (keep) want_dims[a] = 1;
        else want_dims.erase(want_dims.begin() + static_cast<std::ptrdiff_t>(a));
        REQUIRE(out.type() == dtype::i64);
        REQUIRE(out.dims() == want_dims);
        auto kept = dims;
        kept[a] = 1;
        for (std::int64_t e = 0; e < out.size(); ++e) {
            auto idx = unravel(e, kept);
            float best = is_max ? -1e9f : 1e9f;
            for (std::int64_t j = 0; j < dims[a]; ++j) {
                idx[a] = j;
                const float v = in.as<float>()[ravel(idx, dims)];
                best = is_max ? std::max(best, v) : std::min(best, v);
            }
            std::vector<std::int64_t> at;  // every index holding the extreme
            for (std::int64_t j = 0; j < dims[a]; ++j) {
                idx[a] = j;
                if (in.as<float>()[ravel(idx, dims)] == best) at.push_back(j);
            }
            REQUIRE(out.as<std::int64_t>()[e] == (last ? at.back() : at.front()));
        }
    }
    graph g;
    g.mark_output(g.add_op("ArgMax", "arg", {g.add_input("x")}, {{"axis", 1}}));
    CHECK(run_error(exec::executor(g), {{"x", value::zeros(dtype::f32, {2, 0})}}).find("node 'arg' (ArgMax): axis 1 is empty: no element to pick") !=
          std::string::npos);
}

TEST_CASE("Hardmax: 1 at the first maximum along the axis, ties included, and OneHot: rows of off with on at each index") {
    std::mt19937 rng(17);
    for (int trial = 0; trial < 48; ++trial) {
        const std::size_t rank = static_cast<std::size_t>(1 + trial % 3);
        const auto dims = random_dims(rng, rank, 1, 4);
        const auto r = static_cast<std::int64_t>(rank);
        const std::int64_t ax = (trial / 3) % (2 * r) - r;
        graph g;
        g.mark_output(g.add_op("Hardmax", "hm", {g.add_input("x")}, {{"axis", ax}}));
        const value in = random_value<float>(rng, dims, 0, 2);  // ties everywhere
        const auto out = exec::executor(g).run({{"x", in}})[0];
        REQUIRE(out.type() == dtype::f32);
        REQUIRE(out.dims() == dims);
        const auto a = static_cast<std::size_t>(ax < 0 ? ax + r : ax);
        for (std::int64_t e = 0; e < out.size(); ++e) {
            auto idx = unravel(e, dims);
            const std::int64_t mine = idx[a];
            std::int64_t first = 0;  // the first index of the maximum along the axis
            for (std::int64_t j = 0; j < dims[a]; ++j) {
                idx[a] = j;
                auto best = idx;
                best[a] = first;
                if (in.as<float>()[ravel(idx, dims)] > in.as<float>()[ravel(best, dims)]) first = j;
            }
            REQUIRE(out.as<float>()[e] == (mine == first ? 1.0f : 0.0f));
        }
    }
    for (int trial = 0; trial < 48; ++trial) {
        const std::size_t rank = static_cast<std::size_t>(trial % 3);  // scalar indices too
        const auto dims = random_dims(rng, rank, 1, 3);
        const auto r = static_cast<std::int64_t>(rank);
        const std::int64_t depth = 1 + trial % 5;
        const std::int64_t ax = (trial / 3) % (2 * r + 2) - r - 1;  // [-r - 1, r]
        graph g;
        g.mark_output(g.add_op("OneHot", "oh", {g.add_input("i"), g.add_input("d"), g.add_input("v")}, {{"axis", ax}}));
        const value ind = random_value<std::int64_t>(rng, dims, static_cast<int>(-depth - 1), static_cast<int>(depth));  // some out of range
        const value vals = value::of<std::int32_t>({2}, {-3, 7});
        const auto out = exec::executor(g).run({{"i", ind}, {"d", value::of<float>({}, {static_cast<float>(depth)})}, {"v", vals}})[0];
        const auto a = static_cast<std::size_t>(ax < 0 ? ax + r + 1 : ax);
        auto want_dims = dims;
        want_dims.insert(want_dims.begin() + static_cast<std::ptrdiff_t>(a), depth);
        REQUIRE(out.type() == dtype::i32);
        REQUIRE(out.dims() == want_dims);
        for (std::int64_t e = 0; e < out.size(); ++e) {
            auto idx = unravel(e, want_dims);
            const std::int64_t k = idx[a];
            idx.erase(idx.begin() + static_cast<std::ptrdiff_t>(a));
            std::int64_t i = ind.as<std::int64_t>()[ravel(idx, dims)];
            if (i < 0) i += depth;
            REQUIRE(out.as<std::int32_t>()[e] == (i == k ? 7 : -3));
        }
    }
    graph g;
    g.mark_output(g.add_op("OneHot", "oh", {g.add_input("i"), g.add_input("d"), g.add_input("v")}));
    CHECK(run_error(exec::executor(g), {{"i", value::of<std::int64_t>({1}, {0})}, {"d", value::of<std::int64_t>({1}, {0})},
                                        {"v", value::of<float>({2}, {0, 1})}})
              .find("node 'oh' (OneHot): depth 0") != std::string::npos);
    CHECK(run_error(exec::executor(g), {{"i", value::of<std::int64_t>({1}, {0})}, {"d", value::of<std::int64_t>({1}, {2})},
                                        {"v", value::of<float>({3}, {0, 1, 2})}})
              .find("values is [3], not [off, on]") != std::string::npos);
}

TEST_CASE("GatherElements and ScatterElements: each index replaces the axis coordinate of its own position, every reduction") {
    std::mt19937 rng(17);
    for (int trial = 0; trial < 40; ++trial) {
        const std::size_t rank = static_cast<std::size_t>(1 + trial % 3);
        const auto dims = random_dims(rng, rank, 1, 4);
        const auto r = static_cast<std::int64_t>(rank);
        const std::int64_t ax = (trial / 3) % (2 * r) - r;
        const auto a = static_cast<std::size_t>(ax < 0 ? ax + r : ax);
        auto idims = dims;  // indices: any extent along the axis, at most the data's elsewhere
        for (std::size_t k = 0; k < rank; ++k) idims[k] = k == a ? 1 + trial % 5 : 1 + static_cast<std::int64_t>(rng() % static_cast<unsigned>(dims[k]));
        std::vector<std::int64_t> idx(static_cast<std::size_t>(count(idims)));
        std::uniform_int_distribution<std::int64_t> pick(-dims[a], dims[a] - 1);  // negative counts from the end
        for (auto& i : idx) i = pick(rng);
        const value data = random_value<std::int64_t>(rng, dims, -50, 50), ind = value::of<std::int64_t>(idims, idx);
        const value upd = random_value<std::int64_t>(rng, idims, -5, 5);
        graph g;
        auto x = g.add_input("x"), i = g.add_input("i"), u = g.add_input("u");
        g.mark_output(g.add_op("GatherElements", "ge", {x, i}, {{"axis", ax}}));
        for (const char* red : {"none", "add", "mul", "max", "min"})
            g.mark_output(g.add_op("ScatterElements", std::string("se_") + red, {x, i, u}, {{"axis", ax}, {"reduction", std::string(red)}}));
        const auto out = exec::executor(g).run({{"x", data}, {"i", ind}, {"u", upd}});
        REQUIRE(out[0].dims() == idims);
        std::vector<std::vector<std::int64_t>> scattered(5, elements<std::int64_t>(data));
        for (std::int64_t e = 0; e < count(idims); ++e) {
            auto pos = unravel(e, idims);
            pos[a] = idx[static_cast<std::size_t>(e)] < 0 ? idx[static_cast<std::size_t>(e)] + dims[a] : idx[static_cast<std::size_t>(e)];
            const std::int64_t at = ravel(pos, dims);
            REQUIRE(out[0].as<std::int64_t>()[e] == data.as<std::int64_t>()[at]);
            const std::int64_t v = upd.as<std::int64_t>()[e];
            scattered[0][static_cast<std::size_t>(at)] = v;
            scattered[1][static_cast<std::size_t>(at)] += v;
            scattered[2][static_cast<std::size_t>(at)] *= v;
            scattered[3][static_cast<std::size_t>(at)] = std::max(scattered[3][static_cast<std::size_t>(at)], v);
            scattered[4][static_cast<std::size_t>(at)] = std::min(scattered[4][static_cast<std::size_t>(at)], v);
        }
        for (std::size_t k = 0; k < 5; ++k) REQUIRE(elements<std::int64_t>(out[1 + k]) == scattered[k]);
    }
    graph g;
    g.mark_output(g.add_op("GatherElements", "ge", {g.add_input("x"), g.add_input("i")}, {{"axis", 0}}));
    CHECK(run_error(exec::executor(g), {{"x", value::of<float>({2}, {1, 2})}, {"i", value::of<std::int64_t>({1}, {2})}})
              .find("node 'ge' (GatherElements): index 2 is out of range for an axis of 2") != std::string::npos);
}

TEST_CASE("GatherND and ScatterND: each index tuple names a slice within its batch, every reduction, against brute force") {
    std::mt19937 rng(19);
    for (int trial = 0; trial < 40; ++trial) {
        const std::size_t rank = static_cast<std::size_t>(1 + trial % 4);
        const auto dims = random_dims(rng, rank, 1, 4);
        const std::size_t b = static_cast<std::size_t>(trial / 4) % rank;  // batch dims (GatherND)
        const std::size_t k = 1 + static_cast<std::size_t>(rng() % (rank - b));
        // GatherND's indices: the batch dims, 1 or 2 dims of tuples, then the tuple.
        std::vector<std::int64_t> idims(dims.begin(), dims.begin() + static_cast<std::ptrdiff_t>(b));
        for (std::size_t j = 0; j < 1 + static_cast<std::size_t>(trial % 2); ++j) idims.push_back(1 + static_cast<std::int64_t>(rng() % 3));
        idims.push_back(static_cast<std::int64_t>(k));
        std::vector<std::int64_t> idx(static_cast<std::size_t>(count(idims)));
        for (std::size_t e = 0; e < idx.size(); ++e) {
            const std::int64_t extent = dims[b + e % k];
            idx[e] = static_cast<std::int64_t>(rng() % static_cast<unsigned>(2 * extent)) - extent;  // negative counts from the end
        }
        const value data = random_value<std::int64_t>(rng, dims, -50, 50), ind = value::of<std::int64_t>(idims, idx);
        graph g;
        g.mark_output(g.add_op("GatherND", "gn", {g.add_input("x"), g.add_input("i")}, {{"batch_dims", static_cast<std::int64_t>(b)}}));
        const value got = exec::executor(g).run({{"x", data}, {"i", ind}}).at(0);
        std::vector<std::int64_t> odims(idims.begin(), idims.end() - 1);
        odims.insert(odims.end(), dims.begin() + static_cast<std::ptrdiff_t>(b + k), dims.end());
        REQUIRE(got.dims() == odims);
        for (std::int64_t e = 0; e < count(odims); ++e) {
            const auto pos = unravel(e, odims);  // [batch.., tuple position.., slice..]
            const std::size_t tuple_dims = idims.size() - 1 - b;
            std::vector<std::int64_t> tpos(pos.begin(), pos.begin() + static_cast<std::ptrdiff_t>(b + tuple_dims));
            tpos.push_back(0);
            std::vector<std::int64_t> at(pos.begin(), pos.begin() + static_cast<std::ptrdiff_t>(b));
            for (std::size_t j = 0; j < k; ++j) {
                tpos.back() = static_cast<std::int64_t>(j);
                const std::int64_t i = idx[static_cast<std::size_t>(ravel(tpos, idims))];
                at.push_back(i < 0 ? i + dims[b + j] : i);
            }
            at.insert(at.end(), pos.begin() + static_cast<std::ptrdiff_t>(b + tuple_dims), pos.end());
            REQUIRE(got.as<std::int64_t>()[e] == data.as<std::int64_t>()[ravel(at, dims)]);
        }
        // ScatterND (no batch dims): the tuples index data from its first dim.
        std::vector<std::int64_t> sdims{1 + static_cast<std::int64_t>(trial % 5), static_cast<std::int64_t>(k)};
        std::vector<std::int64_t> sidx(static_cast<std::size_t>(count(sdims)));
        for (std::size_t e = 0; e < sidx.size(); ++e) sidx[e] = static_cast<std::int64_t>(rng() % static_cast<unsigned>(dims[e % k]));
        std::vector<std::int64_t> udims{sdims[0]};
        udims.insert(udims.end(), dims.begin() + static_cast<std::ptrdiff_t>(k), dims.end());
        const value upd = random_value<std::int64_t>(rng, udims, -5, 5);
        graph h;
        auto x = h.add_input("x"), i = h.add_input("i"), u = h.add_input("u");
        for (const char* red : {"add", "mul", "max", "min"})
            h.mark_output(h.add_op("ScatterND", std::string("sn_") + red, {x, i, u}, {{"reduction", std::string(red)}}));
        const auto out = exec::executor(h).run({{"x", data}, {"i", value::of<std::int64_t>(sdims, sidx)}, {"u", upd}});
        std::vector<std::vector<std::int64_t>> want(4, elements<std::int64_t>(data));
        const std::int64_t slice = count(std::vector<std::int64_t>(dims.begin() + static_cast<std::ptrdiff_t>(k), dims.end()));
        for (std::int64_t t = 0; t < sdims[0]; ++t)
            for (std::int64_t e = 0; e < slice; ++e) {
                std::vector<std::int64_t> pos(sidx.begin() + t * static_cast<std::int64_t>(k), sidx.begin() + (t + 1) * static_cast<std::int64_t>(k));
                const auto rest = unravel(e, std::vector<std::int64_t>(dims.begin() + static_cast<std::ptrdiff_t>(k), dims.end()));
                pos.insert(pos.end(), rest.begin(), rest.end());
                const auto at = static_cast<std::size_t>(ravel(pos, dims));
                const std::int64_t v = upd.as<std::int64_t>()[t * slice + e];
                want[0][at] += v;
                want[1][at] *= v;
                want[2][at] = std::max(want[2][at], v);
                want[3][at] = std::min(want[3][at], v);
            }
        for (std::size_t r = 0; r < 4; ++r) REQUIRE(elements<std::int64_t>(out[r]) == want[r]);
    }
    // An index past its dim, and updates of the wrong shape, are refused naming the node.
    graph g;
    g.mark_output(g.add_op("GatherND", "gn", {g.add_input("x"), g.add_input("i")}));
    CHECK(run_error(exec::executor(g), {{"x", value::of<float>({2, 2}, {1, 2, 3, 4})}, {"i", value::of<std::int64_t>({1, 2}, {1, 2})}})
              .find("node 'gn' (GatherND): index 2 is out of range for a dim of 2") != std::string::npos);
    graph h;
    h.mark_output(h.add_op("ScatterND", "sn", {h.add_input("x"), h.add_input("i"), h.add_input("u")}));
    CHECK(run_error(exec::executor(h), {{"x", value::of<float>({2, 2}, {1, 2, 3, 4})},
                                        {"i", value::of<std::int64_t>({1, 1}, {1})},
                                        {"u", value::of<float>({1, 3}, {1, 2, 3})}})
              .find("updates [1, 3] are not [1, 2]") != std::string::npos);
}

TEST_CASE("Unique: distinct values or slices, sorted or by first appearance, with first indices, inverse indices and counts, against maps") {
    std::mt19937 rng(23);
    for (int trial = 0; trial < 30; ++trial) {
        const auto dims = random_dims(rng, 1 + static_cast<std::size_t>(trial % 3), 1, 5);
        const value x = random_value<std::int64_t>(rng, dims, -3, 3);  // many repeats
        const bool sorted = trial % 2 == 0, by_axis = trial % 4 >= 2;
        const auto r = static_cast<std::int64_t>(dims.size());
        const std::int64_t ax = by_axis ? static_cast<std::int64_t>(rng() % static_cast<unsigned>(2 * r)) - r : 0;
        const auto a = static_cast<std::size_t>(ax < 0 ? ax + r : ax);
        graph g;
        const node_id n = by_axis ? g.add_op("Unique", "u", {g.add_input("x")}, {{"sorted", sorted ? 1 : 0}, {"axis", ax}}, 4)
                                  : g.add_op("Unique", "u", {g.add_input("x")}, {{"sorted", sorted ? 1 : 0}}, 4);
        for (std::uint32_t o = 0; o < 4; ++o) g.mark_output(input_ref(value_ref<node_id>{n, o}));
        const auto out = exec::executor(g).run({{"x", x}});
        // The slices (single elements without an axis), as vectors, in the order they appear.
        const std::vector<std::int64_t> d = by_axis ? dims : std::vector<std::int64_t>{count(dims)};
        std::vector<std::vector<std::int64_t>> slices(static_cast<std::size_t>(d[a]));
        for (std::int64_t e = 0; e < count(d); ++e) slices[static_cast<std::size_t>(unravel(e, d)[a])].push_back(x.as<std::int64_t>()[e]);
        std::map<std::vector<std::int64_t>, std::int64_t> seen_first, seen_count;
        std::vector<std::vector<std::int64_t>> appearance;
        for (std::size_t j = 0; j < slices.size(); ++j) {
            if (!seen_first.count(slices[j])) seen_first[slices[j]] = static_cast<std::int64_t>(j), appearance.push_back(slices[j]);
            ++seen_count[slices[j]];
        }
        std::vector<std::vector<std::int64_t>> want_order = appearance;
        if (sorted) std::sort(want_order.begin(), want_order.end());
        const auto first = elements<std::int64_t>(out[1]), inverse = elements<std::int64_t>(out[2]), counts = elements<std::int64_t>(out[3]);
        REQUIRE(first.size() == want_order.size());
        REQUIRE(inverse.size() == slices.size());
        for (std::size_t i = 0; i < want_order.size(); ++i) {
            CHECK(first[i] == seen_first[want_order[i]]);
            CHECK(counts[i] == seen_count[want_order[i]]);
        }
        for (std::size_t j = 0; j < slices.size(); ++j) CHECK(want_order[static_cast<std::size_t>(inverse[j])] == slices[j]);
        // Y: the distinct slices in that order, along the axis.
        auto yd = d;
        yd[a] = static_cast<std::int64_t>(want_order.size());
        REQUIRE(out[0].dims() == yd);
        std::vector<std::size_t> taken(want_order.size(), 0);
        for (std::int64_t e = 0; e < count(yd); ++e) {
            const auto i = static_cast<std::size_t>(unravel(e, yd)[a]);
            CHECK(out[0].as<std::int64_t>()[e] == want_order[i][taken[i]++]);
        }
    }
    graph g;
    g.mark_output(g.add_op("Unique", "u", {g.add_input("x")}));
    CHECK(run_error(exec::executor(g), {{"x", value::of<float>({2}, {1, std::nanf("")})}}).find("node 'u' (Unique): X holds a NaN") !=
          std::string::npos);
}

TEST_CASE("NonZero, Compress and EyeLike against brute force: coordinates in row-major order, kept slices, a diagonal") {
    std::mt19937 rng(29);
    for (int trial = 0; trial < 20; ++trial) {
        const auto dims = random_dims(rng, 1 + static_cast<std::size_t>(trial % 3), 1, 5);
        const value x = random_value<std::int32_t>(rng, dims, -1, 1);
        const auto r = static_cast<std::int64_t>(dims.size());
        const std::int64_t ax = static_cast<std::int64_t>(rng() % static_cast<unsigned>(2 * r)) - r;
        const auto a = static_cast<std::size_t>(ax < 0 ? ax + r : ax);
        std::vector<std::uint8_t> keep(static_cast<std::size_t>(1 + rng() % static_cast<unsigned>(dims[a])));  // may be shorter than the axis
        for (auto& k : keep) k = rng() % 2;
        graph g;
        auto in = g.add_input("x"), c = g.add_input("c");
        g.mark_output(g.add_op("NonZero", "nz", {in}));
        g.mark_output(g.add_op("Compress", "ca", {in, c}, {{"axis", ax}}));
        g.mark_output(g.add_op("Compress", "cf", {in, c}));
        const auto out = exec::executor(g).run({{"x", x}, {"c", bools(keep)}});
        // NonZero.
        std::vector<std::int64_t> hits;
        for (std::int64_t e = 0; e < count(dims); ++e)
            if (x.as<std::int32_t>()[e] != 0) hits.push_back(e);
        const auto n = static_cast<std::int64_t>(hits.size());
        REQUIRE(out[0].dims() == std::vector<std::int64_t>{r, n});
        for (std::int64_t j = 0; j < n; ++j)
            for (std::int64_t k = 0; k < r; ++k) CHECK(out[0].as<std::int64_t>()[k * n + j] == unravel(hits[static_cast<std::size_t>(j)], dims)[static_cast<std::size_t>(k)]);
        // Compress along the axis, and of the flattened input.
        std::vector<std::int32_t> along, flat;
        for (std::int64_t e = 0; e < count(dims); ++e) {
            const auto i = static_cast<std::size_t>(unravel(e, dims)[a]);
            if (i < keep.size() && keep[i]) along.push_back(x.as<std::int32_t>()[e]);
            if (static_cast<std::size_t>(e) < keep.size() && keep[static_cast<std::size_t>(e)]) flat.push_back(x.as<std::int32_t>()[e]);
        }
        CHECK(elements<std::int32_t>(out[1]) == along);
        CHECK(out[1].dims()[a] == std::count(keep.begin(), keep.end(), 1));
        CHECK(elements<std::int32_t>(out[2]) == flat);
    }
    graph g;
    g.mark_output(g.add_op("Compress", "c", {g.add_input("x"), g.add_input("c")}, {{"axis", 0}}));
    CHECK(run_error(exec::executor(g), {{"x", value::of<float>({2}, {1, 2})}, {"c", bools({1, 0, 1})}})
              .find("node 'c' (Compress): the condition has 3 values for an axis of 2") != std::string::npos);
    // EyeLike: ones where column - row == k, of the input's type or `dtype` (int64 here).
    for (const std::int64_t k : {-2, 0, 1, 4}) {
        graph h;
        auto in = h.add_input("x");
        h.mark_output(h.add_op("EyeLike", "e", {in}, {{"k", k}}));
        h.mark_output(h.add_op("EyeLike", "e64", {in}, {{"k", k}, {"dtype", 7}}));
        const auto out = exec::executor(h).run({{"x", value::zeros(dtype::f32, {3, 4})}});
        REQUIRE(out[0].type() == dtype::f32);
        REQUIRE(out[1].type() == dtype::i64);
        for (std::int64_t e = 0; e < 12; ++e) {
            CHECK(out[0].as<float>()[e] == (e % 4 - e / 4 == k ? 1.0f : 0.0f));
            CHECK(out[1].as<std::int64_t>()[e] == (e % 4 - e / 4 == k ? 1 : 0));
        }
    }
}

TEST_CASE("DepthToSpace (DCR and CRD) and SpaceToDepth against the ONNX index formulas, and back") {
    std::mt19937 rng(19);
    const std::int64_t n = 2, c = 8, h = 3, w = 2, b = 2, cb = c / (b * b);
    const value x = random_value<float>(rng, {n, c, h, w}, -9, 9);
    graph g;
    auto in = g.add_input("x");
    auto dcr = g.add_op("DepthToSpace", "dcr", {in}, {{"blocksize", b}});
    g.mark_output(dcr);
    g.mark_output(g.add_op("DepthToSpace", "crd", {in}, {{"blocksize", b}, {"mode", std::string("CRD")}}));
    g.mark_output(g.add_op("SpaceToDepth", "back", {dcr}, {{"blocksize", b}}));
    const auto out = exec::executor(g).run({{"x", x}});
    REQUIRE(out[0].dims() == std::vector<std::int64_t>{n, cb, h * b, w * b});
    for (std::int64_t i0 = 0; i0 < n; ++i0)
        for (std::int64_t k = 0; k < cb; ++k)
            for (std::int64_t y = 0; y < h * b; ++y)
                for (std::int64_t z = 0; z < w * b; ++z) {
                    const std::int64_t bi = y % b, bj = z % b, at = ravel({i0, k, y, z}, {n, cb, h * b, w * b});
                    REQUIRE(out[0].as<float>()[at] == x.as<float>()[ravel({i0, (bi * b + bj) * cb + k, y / b, z / b}, {n, c, h, w})]);
                    REQUIRE(out[1].as<float>()[at] == x.as<float>()[ravel({i0, k * b * b + bi * b + bj, y / b, z / b}, {n, c, h, w})]);
                }
    CHECK(elements<float>(out[2]) == elements<float>(x));  // SpaceToDepth undoes DCR
    graph bad;
    bad.mark_output(bad.add_op("SpaceToDepth", "s2d", {bad.add_input("x")}, {{"blocksize", 2}}));
    CHECK(run_error(exec::executor(bad), {{"x", value::zeros(dtype::f32, {1, 1, 3, 2})}})
              .find("node 's2d' (SpaceToDepth): height and width [1, 1, 3, 2] are not multiples of blocksize 2") != std::string::npos);
}

TEST_CASE("CastLike takes the element type of its second input, Shrink its two slopes") {
    graph g;
    auto x = g.add_input("x");
    g.mark_output(g.add_op("CastLike", "like", {x, g.add_input("t")}));
    g.mark_output(g.add_op("Shrink", "shrink", {x}, {{"lambd", 1.5}, {"bias", 0.5}}));
    const auto out = exec::executor(g).run({{"x", value::of<float>({5}, {-3.f, -1.5f, 0.f, 1.f, 2.5f})}, {"t", value::of<std::int32_t>({0}, {})}});
    CHECK(out[0].type() == dtype::i32);
    CHECK(elements<std::int32_t>(out[0]) == std::vector<std::int32_t>{-3, -1, 0, 1, 2});
    CHECK(elements<float>(out[1]) == std::vector<float>{-2.5f, 0.f, 0.f, 0.f, 2.f});
}

TEST_CASE("MaxPool's Indices, row- and column-major: each points at a value of its window equal to the maximum, the first such in row-major order") {
    std::mt19937 rng(21);
    const std::vector<std::int64_t> xd{2, 3, 8, 6};
    const std::vector<std::int64_t> kernel{3, 2}, strides{2, 1}, dil{1, 2}, pads{1, 0, 1, 1};
    for (const int order : {0, 1})
        for (const bool bytes : {false, true}) {
            CAPTURE(order);
            CAPTURE(bytes);
            // uint8 with few distinct values (ties on purpose), or f32.
            const value x = bytes ? random_value<std::uint8_t>(rng, xd, 0, 3) : random_value<float>(rng, xd, -50, 50);
            graph g;
            const node_id n = g.add_op("MaxPool", "pool", {g.add_input("x")},
                                       {{"kernel_shape", attribute::ints(kernel)}, {"strides", attribute::ints(strides)},
                                        {"dilations", attribute::ints(dil)}, {"pads", attribute::ints(pads)}, {"ceil_mode", 1},
                                        {"storage_order", order}},
                                       2);
            g.mark_output(input_ref(value_ref<node_id>{n, 0}));
            g.mark_output(input_ref(value_ref<node_id>{n, 1}));
            const auto out = exec::executor(g).run({{"x", x}});
            // Heights: ceil((8 + 2 - 3) / 2) + 1 (the last window reads one row and the padding);
            // widths: (6 + 1 - 3) / 1 + 1 (a dilated window 3 wide).
            const std::vector<std::int64_t> yd{2, 3, 5, 5};
            REQUIRE(out[0].dims() == yd);
            REQUIRE(out[1].type() == dtype::i64);
            const std::vector<double> xs = [&] {
                std::vector<double> v;
                for (std::int64_t i = 0; i < x.size(); ++i) v.push_back(x.as_constant().at(static_cast<std::size_t>(i)));
                return v;
            }();
            const auto idx = elements<std::int64_t>(out[1]);
            for (std::int64_t i = 0; i < count(yd); ++i) {
                const auto o = unravel(i, yd);
                // The window's positions that are inside the image, in row-major order.
                std::vector<std::int64_t> inside;
                for (std::int64_t a = 0; a < kernel[0]; ++a)
                    for (std::int64_t b = 0; b < kernel[1]; ++b) {
                        const std::int64_t h = o[2] * strides[0] - pads[0] + a * dil[0], w = o[3] * strides[1] - pads[1] + b * dil[1];
                        if (h >= 0 && h < xd[2] && w >= 0 && w < xd[3]) inside.push_back(ravel({o[0], o[1], h, w}, xd));
                    }
                REQUIRE_FALSE(inside.empty());
                std::int64_t first = inside[0];
                for (auto p : inside)
                    if (xs[static_cast<std::size_t>(p)] > xs[static_cast<std::size_t>(first)]) first = p;
                const auto f = unravel(first, xd);
                // Row-major: the flat index; column-major: the image's position counted down the columns.
                const std::int64_t want = order == 0 ? first : (o[0] * xd[1] + o[1]) * xd[2] * xd[3] + f[3] * xd[2] + f[2];
                CHECK(idx[static_cast<std::size_t>(i)] == want);
                CHECK(out[0].as_constant().at(static_cast<std::size_t>(i)) == xs[static_cast<std::size_t>(first)]);
            }
            if (!bytes) {  // the maxima are the fp32 kernel's (a node with one output)
                graph one;
                one.mark_output(one.add_op("MaxPool", "pool", {one.add_input("x")},
                                           {{"kernel_shape", attribute::ints(kernel)}, {"strides", attribute::ints(strides)},
                                            {"dilations", attribute::ints(dil)}, {"pads", attribute::ints(pads)}, {"ceil_mode", 1}}));
                CHECK(elements<float>(exec::executor(one, exec::mode::reference).run({{"x", x}})[0]) == elements<float>(out[0]));
            }
        }
}

}  // namespace position_tests
