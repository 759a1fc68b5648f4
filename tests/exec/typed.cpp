// Typed values at run time (exec/value.hpp) and the typed kernels (exec/kernels/typed.hpp):
// shape subgraphs computing int64, masks computing bool, several outputs, parameters read at
// run time - each checked against brute force written here, not against the kernels.
#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <random>

#include "sgmatch/exec/executor.hpp"
#include "sgmatch/exec/subgraph.hpp"
#include "support/values.hpp"

using namespace sgmatch;
using exec::value;

namespace {

template <class T>
std::vector<unsigned char> bytes(const std::vector<T>& v) {
    std::vector<unsigned char> b(v.size() * sizeof(T));
    if (!v.empty()) std::memcpy(b.data(), v.data(), b.size());
    return b;
}
template <class T>
node_id constant(graph& g, const char* name, std::vector<std::int64_t> dims, const std::vector<T>& v) {
    return g.add_constant(name, std::move(dims), exec::dtype_of_v<T>, bytes(v));
}
using test::elements;
using test::run_error;
input_ref port(node_id n, std::uint32_t p) { return input_ref(value_ref<node_id>{n, p}); }

}  // namespace

TEST_CASE("value: owned, viewed, strided views read dense, views are read-only, types are checked") {
    const value a = value::of<std::int64_t>({2, 3}, {1, 2, 3, 4, 5, 6});
    CHECK(a.type() == dtype::i64);
    CHECK(a.size() == 6);
    CHECK(a.owned());
    CHECK(a.as<std::int64_t>()[4] == 5);
    CHECK_THROWS_WITH_AS(a.as<float>(), "sgmatch::exec::value: read as float, holds int64", exec::value_error);
    CHECK_THROWS_AS(value::of<float>({2, 2}, {1.f, 2.f, 3.f}), exec::value_error);
    CHECK_THROWS_AS(value::zeros(dtype::f32, {2, -1}), exec::value_error);

    // A transposed view of a 2x3 buffer: dims 3x2, strides 1, 3.
    const float buf[] = {0, 1, 2, 3, 4, 5};
    value t = value::view(buf, dtype::f32, {3, 2}, {1, 3});
    CHECK_FALSE(t.dense());
    CHECK_FALSE(t.owned());
    CHECK_THROWS_AS(t.as<float>(), exec::value_error);  // strided: read through dense_value()
    CHECK(elements<float>(t.dense_value()) == std::vector<float>{0, 3, 1, 4, 2, 5});
    CHECK_THROWS_WITH_AS(t.mutable_data(), "sgmatch::exec::value: a view of the caller's buffer is read-only", exec::value_error);
    // Dense strides given explicitly are a dense view.
    CHECK(value::view(buf, dtype::f32, {2, 3}, {3, 1}).dense());
    // A reshape shares the bytes; a clone does not.
    const value r = a.reshaped({3, 2});
    CHECK(r.data() == a.data());
    CHECK(a.clone().data() != a.data());
    CHECK_THROWS_AS(a.reshaped({4}), exec::value_error);
}

TEST_CASE("a flatten written as PyTorch exports it (Shape, Gather, Unsqueeze, Concat, Reshape) runs on int64 values") {
    graph g;
    auto x = g.add_input("x", tensor_type{dtype::f32, {-1, 3, 4}});
    auto shape = g.add_op("Shape", "shape", {x});
    auto n = g.add_op("Gather", "batch", {shape, constant<std::int64_t>(g, "zero", {}, {0})});
    auto n1 = g.add_op("Unsqueeze", "batch1", {n}, {{"axes", attribute::ints{0}}});
    auto target = g.add_op("Concat", "target", {n1, constant<std::int64_t>(g, "minus1", {1}, {-1})}, {{"axis", 0}});
    auto y = g.add_op("Reshape", "flat", {x, target});
    g.mark_output(y);
    g.mark_output(target);
    for (auto m : {exec::mode::reference, exec::mode::onednn}) {
        const exec::executor run(g, m);
        for (std::int64_t batch : {1, 5}) {
            std::vector<float> data(static_cast<std::size_t>(batch * 12));
            for (std::size_t i = 0; i < data.size(); ++i) data[i] = static_cast<float>(i) * 0.5f;
            exec::run_stats st;
            const auto out = run.run({{"x", value::of<float>({batch, 3, 4}, data)}}, &st);
            REQUIRE(out.size() == 2);
            CHECK(out[0].type() == dtype::f32);
            CHECK(out[0].dims() == exec::shape{batch, 12});
            CHECK(elements<float>(out[0]) == data);
            CHECK(out[1].type() == dtype::i64);
            CHECK(elements<std::int64_t>(out[1]) == std::vector<std::int64_t>{batch, -1});
            CHECK(st.typed_nodes == 5);  // every node: each reads an int64 value or has no fp32 kernel
        }
        // The f32 API cannot hand back an int64 output: a clear error, not a conversion.
        CHECK_THROWS_WITH_AS(run({{"x", xt::zeros<float>({1, 3, 4})}}),
                             doctest::Contains("the value of 'target' (output 0) is int64"), exec::exec_error);
    }
}

TEST_CASE("regions (onednn.regions) leave int64 shape computations outside, on the typed kernels") {
    // relu -> (Shape, Gather, Unsqueeze, Concat: int64) -> Reshape -> relu -> sigmoid: Concat and Reshape have
    // oneDNN kernels, but not on int64 values, and a region's inputs and outputs are f32.
    graph g;
    auto x = g.add_input("x", tensor_type{dtype::f32, {2, 3, 4}});
    auto r0 = g.add_op("Relu", "r0", {x});
    auto shape = g.add_op("Shape", "shape", {r0});
    auto n = g.add_op("Gather", "batch", {shape, constant<std::int64_t>(g, "zero", {}, {0})});
    auto n1 = g.add_op("Unsqueeze", "batch1", {n}, {{"axes", attribute::ints{0}}});
    auto target = g.add_op("Concat", "target", {n1, constant<std::int64_t>(g, "minus1", {1}, {-1})}, {{"axis", 0}});
    auto y = g.add_op("Reshape", "flat", {r0, target});
    auto z = g.add_op("Sigmoid", "s", {g.add_op("Relu", "r1", {y})});
    g.mark_output(z);
    g.set_type({r0, 0}, tensor_type{dtype::f32, {2, 3, 4}});
    g.set_type({shape, 0}, tensor_type{dtype::i64, {3}});
    g.set_type({n, 0}, tensor_type{dtype::i64, {}});
    g.set_type({n1, 0}, tensor_type{dtype::i64, {1}});
    g.set_type({target, 0}, tensor_type{dtype::i64, {2}});
    std::vector<float> data(24);
    for (std::size_t i = 0; i < data.size(); ++i) data[i] = static_cast<float>(i) - 11.5f;
    const std::map<std::string, value> in{{"x", value::of<float>({2, 3, 4}, data)}};
    const auto want = exec::executor(g).run(in).at(0);

    graph regions = g;
    exec::register_region_backend();
    (void)apply_backend(regions, "onednn.regions");
    bool concat_outside = false;
    for (node_id v : regions.nodes())
        if (regions.kind(v) == node_kind::op && regions.name(v) == "target") concat_outside = regions.op_name(v) == "Concat";
    CHECK(concat_outside);
    exec::run_stats st;
    const auto got = exec::executor(regions, exec::mode::onednn).run(in, &st).at(0);
    CHECK(got.dims() == exec::shape{2, 12});
    const auto a = elements<float>(got), b = elements<float>(want);
    REQUIRE(a.size() == b.size());
    for (std::size_t i = 0; i < a.size(); ++i) CHECK(a[i] == doctest::Approx(b[i]).epsilon(1e-6));  // oneDNN's sigmoid
    CHECK(st.typed_nodes >= 4);  // Shape, Gather, Unsqueeze, Concat
    CHECK(st.region_nodes == 1);  // r1 and s; r0 alone is too small a region
}

TEST_CASE("comparisons, logic and Where against brute force, with numpy broadcasting") {
    std::mt19937 rng(7);
    std::uniform_int_distribution<int> small(-3, 3);
    for (int round = 0; round < 20; ++round) {
        // a: [2, 1, 4], b: [3, 1] broadcast to [2, 3, 4]; integer-valued floats so ties happen.
        std::vector<float> av(8), bv(3), xv(24), yv(24);
        for (auto& v : av) v = static_cast<float>(small(rng));
        for (auto& v : bv) v = static_cast<float>(small(rng));
        for (auto& v : xv) v = static_cast<float>(small(rng));
        for (auto& v : yv) v = static_cast<float>(small(rng)) + 0.5f;
        graph g;
        auto a = g.add_input("a"), b = g.add_input("b"), x = g.add_input("x"), y = g.add_input("y");
        auto less = g.add_op("Less", "less", {a, b});
        auto eq = g.add_op("Equal", "eq", {a, b});
        auto either = g.add_op("Or", "either", {less, eq});
        auto not_ge = g.add_op("Not", "not_ge", {g.add_op("GreaterOrEqual", "ge", {a, b})});
        auto same = g.add_op("Xor", "differ", {not_ge, less});  // always false
        g.mark_output(either);
        g.mark_output(same);
        g.mark_output(g.add_op("Where", "where", {either, x, y}));
        const exec::executor run(g);
        const auto out = run.run({{"a", value::of<float>({2, 1, 4}, av)},
                                  {"b", value::of<float>({3, 1}, bv)},
                                  {"x", value::of<float>({2, 3, 4}, xv)},
                                  {"y", value::of<float>({2, 3, 4}, yv)}});
        REQUIRE(out.size() == 3);
        CHECK(out[0].type() == dtype::boolean);
        CHECK(out[0].dims() == exec::shape{2, 3, 4});
        const auto le = elements<bool>(out[0]);
        const auto zero = elements<bool>(out[1]);
        const auto w = elements<float>(out[2]);
        for (int i = 0; i < 2; ++i)
            for (int j = 0; j < 3; ++j)
                for (int k = 0; k < 4; ++k) {
                    const auto o = static_cast<std::size_t>((i * 3 + j) * 4 + k);
                    const bool want = av[static_cast<std::size_t>(i * 4 + k)] <= bv[static_cast<std::size_t>(j)];
                    CHECK(le[o] == want);
                    CHECK_FALSE(zero[o]);
                    CHECK(w[o] == (want ? xv[o] : yv[o]));
                }
    }
}

TEST_CASE("integer arithmetic: wraps around as two's complement, division truncates, division by zero is an error") {
    constexpr auto max = std::numeric_limits<std::int64_t>::max(), min = std::numeric_limits<std::int64_t>::min();
    graph g;
    auto a = g.add_input("a"), b = g.add_input("b");
    for (const char* op : {"Add", "Sub", "Mul", "Div"}) g.mark_output(g.add_op(op, op, {a, b}));
    g.mark_output(g.add_op("Neg", "neg", {a}));
    g.mark_output(g.add_op("Abs", "abs", {a}));
    const exec::executor run(g);
    const auto out = run.run({{"a", value::of<std::int64_t>({4}, {max, min, -7, 7})}, {"b", value::of<std::int64_t>({4}, {1, -1, 2, -2})}});
    CHECK(elements<std::int64_t>(out[0]) == std::vector<std::int64_t>{min, max, -5, 5});
    CHECK(elements<std::int64_t>(out[1]) == std::vector<std::int64_t>{max - 1, min + 1, -9, 9});
    CHECK(elements<std::int64_t>(out[2]) == std::vector<std::int64_t>{max, min, -14, -14});
    CHECK(elements<std::int64_t>(out[3]) == std::vector<std::int64_t>{max, min, -3, -3});  // min / -1 wraps
    CHECK(elements<std::int64_t>(out[4]) == std::vector<std::int64_t>{min + 1, min, 7, -7});
    CHECK(elements<std::int64_t>(out[5]) == std::vector<std::int64_t>{max, min, 7, 7});
    CHECK(run_error(run, {{"a", value::of<std::int32_t>({1}, {1})}, {"b", value::of<std::int32_t>({1}, {0})}}) ==
          "sgmatch::exec::executor: node 'Div' (Div): integer division by zero");
    CHECK(run_error(run, {{"a", value::of<std::int32_t>({1}, {1})}, {"b", value::of<std::int64_t>({1}, {1})}})
              .find("node 'Add' (Add): inputs of types int32 and int64 (the same type expected)") != std::string::npos);
    // Pow: the exponent of any numeric type, the result of the base's.
    graph p;
    p.mark_output(p.add_op("Pow", "pow", {p.add_input("a"), p.add_input("b")}));
    const auto pw = exec::executor(p).run({{"a", value::of<std::int64_t>({3}, {1, 2, 3})}, {"b", value::of<float>({3}, {4, 5, 6})}});
    CHECK(pw[0].type() == dtype::i64);
    CHECK(elements<std::int64_t>(pw[0]) == std::vector<std::int64_t>{1, 32, 729});
}

TEST_CASE("Cast: to every type, reals saturate into integers, NaN is 0, any nonzero is true") {
    const float nan = std::numeric_limits<float>::quiet_NaN();
    const std::vector<float> in{-1.5f, 0.0f, 2.7f, 1e10f, -1e10f, nan};
    auto cast = [&](dtype code_type, std::int64_t code) {
        graph g;
        g.mark_output(g.add_op("Cast", "cast", {g.add_input("x")}, {{"to", code}}));
        const auto out = exec::executor(g).run({{"x", value::of<float>({6}, in)}});
        CHECK(out[0].type() == code_type);
        return out[0];
    };
    CHECK(elements<std::int32_t>(cast(dtype::i32, 6)) ==
          std::vector<std::int32_t>{-1, 0, 2, std::numeric_limits<std::int32_t>::max(), std::numeric_limits<std::int32_t>::min(), 0});
    CHECK(elements<std::uint8_t>(cast(dtype::u8, 2)) == std::vector<std::uint8_t>{0, 0, 2, 255, 0, 0});
    CHECK(elements<bool>(cast(dtype::boolean, 9)) == std::vector<bool>{true, false, true, true, true, true});
    const auto d = elements<double>(cast(dtype::f64, 11));
    CHECK(d[2] == static_cast<double>(2.7f));
    CHECK(std::isnan(d[5]));
    CHECK(elements<std::uint32_t>(cast(dtype::u32, 12)) == std::vector<std::uint32_t>{0, 0, 2, 4294967295u, 0, 0});
    // A type sgmatch has not (complex64) is refused when the executor is built, naming the node.
    graph h;
    h.mark_output(h.add_op("Cast", "to_c64", {h.add_input("x")}, {{"to", 14}}));
    CHECK_THROWS_WITH_AS(exec::executor{h}, doctest::Contains("node 'to_c64' (Cast): Cast to element type code 14"), exec::exec_error);
}

TEST_CASE("Cast to float16 and bfloat16 rounds to nearest even: every half value, each midpoint between neighbours and either side of it") {
    // Brute force over the IEEE definition: every finite float16 read back exactly, every
    // midpoint to the neighbour with the even bits, a nudge off the midpoint to the nearer one;
    // beyond the largest finite value plus half an ulp, infinity.
    std::vector<double> x;
    std::vector<std::uint16_t> want;
    for (std::uint32_t h = 0; h < 0x7c00u; ++h) {
        for (const std::uint32_t sign : {0u, 0x8000u}) {
            const double v = detail::half_to_float(static_cast<std::uint16_t>(h | sign));
            const double next = h + 1 < 0x7c00u ? detail::half_to_float(static_cast<std::uint16_t>((h + 1) | sign)) : (sign ? -65536.0 : 65536.0);
            const double mid = (v + next) / 2, nudge = (next - v) / 1024;
            const auto lo = static_cast<std::uint16_t>(h | sign), hi = static_cast<std::uint16_t>(h + 1 < 0x7c00u ? (h + 1) | sign : 0x7c00u | sign);
            x.insert(x.end(), {v, mid, mid - nudge, mid + nudge});
            want.insert(want.end(), {lo, (h & 1u) == 0 ? lo : hi, lo, hi});
        }
    }
    graph g;
    g.mark_output(g.add_op("Cast", "to_half", {g.add_input("x")}, {{"to", 10}}));
    g.mark_output(g.add_op("Cast", "to_bf16", {g.add_input("y")}, {{"to", 16}}));
    const std::vector<float> y{1.0f, 1.00390625f, 1.01171875f, 1.0f + 0x1p-8f + 0x1p-20f, -3.0e38f, std::numeric_limits<float>::infinity()};
    const auto out = exec::executor(g).run({{"x", value::of<double>({static_cast<std::int64_t>(x.size())}, x)}, {"y", value::of<float>({6}, y)}});
    REQUIRE(out[0].type() == dtype::f16);
    const auto* got = static_cast<const std::uint16_t*>(out[0].data());
    std::size_t wrong = 0;
    for (std::size_t i = 0; i < want.size(); ++i)
        if (got[i] != want[i] && wrong++ < 5) FAIL_CHECK("float16 of " << x[i] << ": bits " << got[i] << ", expected " << want[i]);
    CHECK(wrong == 0);
    REQUIRE(out[1].type() == dtype::bf16);
    const auto* b = static_cast<const std::uint16_t*>(out[1].data());
    // 1 + 2^-8 is the midpoint of 1 and 1 + 2^-7: to even (1); 1 + 3 * 2^-8: to even (1 + 2^-6);
    // above a midpoint: up; -3e38 stays finite (bfloat16 reaches 3.39e38); infinity stays.
    CHECK(std::vector<std::uint16_t>(b, b + 6) == std::vector<std::uint16_t>{0x3f80, 0x3f80, 0x3f82, 0x3f81, 0xff62, 0x7f80});
}

TEST_CASE("Pad on integers: constant with its value, edge, reflect longer than the axis (mirrored again and again), negative pads crop") {
    const std::vector<std::int32_t> x{1, 2, 3, 4, 5, 6};  // [2, 3]
    // Reflection by its definition: mirror about the first or the last element until inside.
    auto mirror = [](std::int64_t c, std::int64_t d) {
        while (c < 0 || c >= d) c = c < 0 ? -c : 2 * (d - 1) - c;
        return c;
    };
    for (const char* mode : {"constant", "edge", "reflect"}) {
        for (const std::vector<std::int64_t>& pads : {std::vector<std::int64_t>{1, 5, 0, 2}, std::vector<std::int64_t>{0, -1, 1, 4}}) {
            CAPTURE(mode);
            graph g;
            g.mark_output(g.add_op("Pad", "pad",
                                   {g.add_input("x"), constant<std::int64_t>(g, "pads", {4}, pads), constant<std::int32_t>(g, "v", {}, {-7})},
                                   {{"mode", std::string(mode)}}));
            const auto y = exec::executor(g).run({{"x", value::of<std::int32_t>({2, 3}, x)}})[0];
            const std::int64_t rows = 2 + pads[0] + pads[2], cols = 3 + pads[1] + pads[3];
            REQUIRE(y.type() == dtype::i32);
            REQUIRE(y.dims() == std::vector<std::int64_t>{rows, cols});
            for (std::int64_t i = 0; i < rows; ++i)
                for (std::int64_t j = 0; j < cols; ++j) {
                    std::int64_t r = i - pads[0], c = j - pads[1];
                    std::int32_t want = -7;
                    if (std::string(mode) == "edge") want = x[static_cast<std::size_t>(std::clamp<std::int64_t>(r, 0, 1) * 3 + std::clamp<std::int64_t>(c, 0, 2))];
                    else if (std::string(mode) == "reflect") want = x[static_cast<std::size_t>(mirror(r, 2) * 3 + mirror(c, 3))];
                    else if (r >= 0 && r < 2 && c >= 0 && c < 3) want = x[static_cast<std::size_t>(r * 3 + c)];
                    CHECK(y.as<std::int32_t>()[i * cols + j] == want);
                }
        }
    }
    graph g;
    g.mark_output(g.add_op("Pad", "pad", {g.add_input("x"), constant<std::int64_t>(g, "pads", {2}, {1, 1})}, {{"mode", std::string("edge")}}));
    CHECK(run_error(exec::executor(g), {{"x", value::of<std::int64_t>({0}, {})}}).find("node 'pad' (Pad): axis 0 is empty: nothing to repeat") !=
          std::string::npos);
}

TEST_CASE("Clip on integers and doubles: either bound alone, bounds saturated into the type, NaN kept") {
    graph g;
    auto x = g.add_input("x");
    g.mark_output(g.add_op("Clip", "max_only", {x, constant<std::int8_t>(g, "none", {0}, {}), constant<std::int8_t>(g, "hi", {}, {5})}));
    g.mark_output(g.add_op("Clip", "min_only", {x, constant<std::int8_t>(g, "lo", {}, {-3})}));
    g.mark_output(g.add_op("Clip", "attrs", {x}, {{"min", -1000.0}, {"max", 2.5}}));  // before opset 11
    const auto out = exec::executor(g).run({{"x", value::of<std::int8_t>({5}, {-128, -4, 0, 6, 127})}});
    CHECK(elements<std::int8_t>(out[0]) == std::vector<std::int8_t>{-128, -4, 0, 5, 5});
    CHECK(elements<std::int8_t>(out[1]) == std::vector<std::int8_t>{-3, -3, 0, 6, 127});
    CHECK(elements<std::int8_t>(out[2]) == std::vector<std::int8_t>{-128, -4, 0, 2, 2});
    graph h;
    h.mark_output(h.add_op("Clip", "c", {h.add_input("x"), constant<double>(h, "lo", {}, {0.5})}));
    const auto d = elements<double>(exec::executor(h).run({{"x", value::of<double>({3}, {0.25, std::nan(""), 1e300})}})[0]);
    CHECK(d[0] == 0.5);
    CHECK(std::isnan(d[1]));
    CHECK(d[2] == 1e300);
    CHECK(run_error(exec::executor(h), {{"x", value::of<std::int64_t>({1}, {1})}}).find("node 'c' (Clip): the bound on input 1 is double [], not one int64 value") !=
          std::string::npos);
}

TEST_CASE("Max and Min of three integer or double inputs, broadcast, against brute force, and a NaN wins") {
    std::mt19937 rng(3);
    std::uniform_int_distribution<int> d(-50, 50);
    std::vector<std::int64_t> a(12), b(3), c(4);
    for (auto* v : {&a, &b, &c})
        for (auto& e : *v) e = d(rng);
    graph g;
    auto x = g.add_input("a"), y = g.add_input("b"), z = g.add_input("c");
    g.mark_output(g.add_op("Max", "max", {x, y, z}));
    g.mark_output(g.add_op("Min", "min", {x, y, z}));
    const auto out = exec::executor(g).run({{"a", value::of<std::int64_t>({4, 3}, a)}, {"b", value::of<std::int64_t>({3}, b)},
                                            {"c", value::of<std::int64_t>({4, 1}, c)}});
    for (std::size_t i = 0; i < 4; ++i)
        for (std::size_t j = 0; j < 3; ++j) {
            CHECK(out[0].as<std::int64_t>()[i * 3 + j] == std::max({a[i * 3 + j], b[j], c[i]}));
            CHECK(out[1].as<std::int64_t>()[i * 3 + j] == std::min({a[i * 3 + j], b[j], c[i]}));
        }
    graph h;
    h.mark_output(h.add_op("Max", "max", {h.add_input("a"), h.add_input("b")}));
    const auto m = elements<double>(exec::executor(h).run({{"a", value::of<double>({2}, {1.0, std::nan("")})}, {"b", value::of<double>({2}, {std::nan(""), 2.0})}})[0]);
    CHECK(std::isnan(m[0]));
    CHECK(std::isnan(m[1]));
}

TEST_CASE("several outputs: Split into equal pieces and by sizes, Dropout's mask") {
    graph g;
    auto x = g.add_input("x");
    auto halves = g.add_op("Split", "halves", {x}, {{"axis", 1}}, 2);
    auto parts = g.add_op("Split", "parts", {x, constant<std::int64_t>(g, "sizes", {3}, {1, 2, 1})}, {{"axis", 1}}, 3);
    auto drop = g.add_op("Dropout", "drop", {x}, {}, 2);
    for (std::uint32_t p = 0; p < 2; ++p) g.mark_output(port(halves, p));
    for (std::uint32_t p = 0; p < 3; ++p) g.mark_output(port(parts, p));
    g.mark_output(port(drop, 0));
    g.mark_output(port(drop, 1));
    std::vector<std::int32_t> v(8);
    for (std::size_t i = 0; i < v.size(); ++i) v[i] = static_cast<std::int32_t>(i);
    const auto out = exec::executor(g).run({{"x", value::of<std::int32_t>({2, 4}, v)}});
    REQUIRE(out.size() == 7);
    CHECK(elements<std::int32_t>(out[0]) == std::vector<std::int32_t>{0, 1, 4, 5});
    CHECK(elements<std::int32_t>(out[1]) == std::vector<std::int32_t>{2, 3, 6, 7});
    CHECK(elements<std::int32_t>(out[2]) == std::vector<std::int32_t>{0, 4});
    CHECK(elements<std::int32_t>(out[3]) == std::vector<std::int32_t>{1, 2, 5, 6});
    CHECK(out[3].dims() == exec::shape{2, 2});
    CHECK(elements<std::int32_t>(out[4]) == std::vector<std::int32_t>{3, 7});
    CHECK(elements<std::int32_t>(out[5]) == v);
    CHECK(out[6].type() == dtype::boolean);
    CHECK(elements<bool>(out[6]) == std::vector<bool>(8, true));
    // Three pieces of an axis of 4: an error naming the node.
    graph bad;
    bad.mark_output(bad.add_op("Split", "thirds", {bad.add_input("x")}, {{"axis", 1}}, 3));
    CHECK(run_error(exec::executor(bad), {{"x", value::of<std::int32_t>({2, 4}, v)}}).find("node 'thirds' (Split): axis 1 of [2, 4] does not split into 3 equal pieces") !=
          std::string::npos);
}

TEST_CASE("parameters computed at run time: Slice, Gather, Expand, ConstantOfShape against brute force") {
    std::mt19937 rng(11);
    graph g;
    auto x = g.add_input("x"), starts = g.add_input("starts"), ends = g.add_input("ends"), steps = g.add_input("steps");
    auto axes = constant<std::int64_t>(g, "axes", {2}, {0, 1});
    g.mark_output(g.add_op("Slice", "slice", {x, starts, ends, axes, steps}));
    g.mark_output(g.add_op("Gather", "gather", {x, g.add_input("indices")}, {{"axis", 1}}));
    g.mark_output(g.add_op("Expand", "expand", {g.add_op("Shape", "s", {x}, {{"start", -1}}), g.add_input("to")}));
    g.mark_output(g.add_op("ConstantOfShape", "fill", {g.add_input("dims")}, {{"value", attribute::reals{2.5}}, {"dtype", 11}}));
    const exec::executor run(g);
    std::uniform_int_distribution<std::int64_t> pos(-8, 8), step(1, 3);
    for (int round = 0; round < 50; ++round) {
        std::vector<std::int64_t> xv(5 * 6);
        for (std::size_t i = 0; i < xv.size(); ++i) xv[i] = static_cast<std::int64_t>(i);
        const std::int64_t s0 = pos(rng), s1 = pos(rng), e0 = pos(rng), e1 = pos(rng);
        const std::int64_t k0 = step(rng) * (rng() % 2 ? 1 : -1), k1 = step(rng);
        const std::int64_t i0 = pos(rng) % 6, i1 = pos(rng) % 6;
        const auto out = run.run({{"x", value::of<std::int64_t>({5, 6}, xv)},
                                  {"starts", value::of<std::int64_t>({2}, {s0, s1})},
                                  {"ends", value::of<std::int64_t>({2}, {e0, e1})},
                                  {"steps", value::of<std::int64_t>({2}, {k0, k1})},
                                  {"indices", value::of<std::int64_t>({2}, {i0, i1})},
                                  {"to", value::of<std::int64_t>({2}, {3, 1})},
                                  {"dims", value::of<std::int64_t>({2}, {2, 2})}});
        // Slice by brute force, as ONNX's specification words it: a negative index counts from
        // the end; starts clamp into [0, dim] for positive steps and [0, dim - 1] for negative
        // ones, ends into [0, dim] and [-1, dim - 1].
        auto taken = [](std::int64_t dim, std::int64_t s, std::int64_t e, std::int64_t k) {
            std::vector<std::int64_t> r;
            auto norm = [dim](std::int64_t v, std::int64_t lo, std::int64_t hi) {
                if (v < 0) v += dim;
                return std::min(std::max(v, lo), hi);
            };
            if (k > 0) {
                for (std::int64_t i = norm(s, 0, dim); i < norm(e, 0, dim); i += k) r.push_back(i);
            } else {
                for (std::int64_t i = norm(s, 0, dim - 1); i > norm(e, -1, dim - 1); i += k) r.push_back(i);
            }
            return r;
        };
        const auto rows = taken(5, s0, e0, k0), cols = taken(6, s1, e1, k1);
        std::vector<std::int64_t> want;
        for (auto r : rows)
            for (auto c : cols) want.push_back(xv[static_cast<std::size_t>(r * 6 + c)]);
        CAPTURE(s0);
        CAPTURE(e0);
        CAPTURE(k0);
        CAPTURE(s1);
        CAPTURE(e1);
        CAPTURE(k1);
        CHECK(out[0].dims() == exec::shape{static_cast<std::int64_t>(rows.size()), static_cast<std::int64_t>(cols.size())});
        CHECK(elements<std::int64_t>(out[0]) == want);
        // Gather along axis 1 with negative indices.
        std::vector<std::int64_t> g1;
        for (std::int64_t r = 0; r < 5; ++r)
            for (auto i : {i0, i1}) g1.push_back(xv[static_cast<std::size_t>(r * 6 + (i < 0 ? i + 6 : i))]);
        CHECK(elements<std::int64_t>(out[1]) == g1);
        CHECK(out[2].dims() == exec::shape{3, 1});
        CHECK(elements<std::int64_t>(out[2]) == std::vector<std::int64_t>{6, 6, 6});
        CHECK(out[3].type() == dtype::f64);
        CHECK(elements<double>(out[3]) == std::vector<double>(4, 2.5));
    }
    // An index out of range is an error naming the node, never a read outside the data.
    CHECK(run_error(run, {{"x", value::of<std::int64_t>({1, 2}, {1, 2})},
                          {"starts", value::of<std::int64_t>({2}, {0, 0})},
                          {"ends", value::of<std::int64_t>({2}, {1, 1})},
                          {"steps", value::of<std::int64_t>({2}, {1, 1})},
                          {"indices", value::of<std::int64_t>({1}, {2})},
                          {"to", value::of<std::int64_t>({1}, {1})},
                          {"dims", value::of<std::int64_t>({1}, {1})}})
              .find("node 'gather' (Gather): index 2 is out of range for axis 1 of size 2") != std::string::npos);
}

TEST_CASE("computed element types are checked against the declared ones") {
    graph g;
    auto x = g.add_input("x");
    auto s = g.add_op("Shape", "shape", {x});
    g.set_type({s, 0}, tensor_type{dtype::f32, {2}});  // wrong: Shape computes int64
    g.mark_output(s);
    CHECK(run_error(exec::executor(g), {{"x", value::of<float>({1, 2}, {1, 2})}}) ==
          "sgmatch::exec::executor: node 'shape' (Shape) computed int64 values on output 0; the graph declares float");
    // An fp32-only op reading an int64 value is an error naming it, never a silent conversion.
    graph r;
    r.mark_output(r.add_op("Relu", "relu", {r.add_op("Shape", "s", {r.add_input("x")})}));
    CHECK(run_error(exec::executor(r), {{"x", value::of<float>({1, 2}, {1, 2})}}).find("the value of 's' (output 0) is int64: an fp32 kernel cannot read it") !=
          std::string::npos);
}

TEST_CASE("the ten reductions on doubles against the fp32 kernels on the same data, and LogSumExp of large values") {
    // The oracle: the same graph on f32 data, run by the fp32 (reference) kernels, another
    // implementation; the double results agree to float precision.
    std::mt19937 rng(8);
    std::uniform_real_distribution<double> d(0.1, 2.0);  // positive: Log and Prod stay finite
    std::vector<double> xd(2 * 3 * 4);
    for (auto& e : xd) e = d(rng);
    const std::vector<float> xf(xd.begin(), xd.end());
    const char* ops[] = {"ReduceSum", "ReduceMean", "ReduceMax", "ReduceMin", "ReduceProd",
                         "ReduceSumSquare", "ReduceL1", "ReduceL2", "ReduceLogSum", "ReduceLogSumExp"};
    struct form {
        attribute::ints axes;
        std::int64_t keepdims;
    };
    const form forms[] = {{{1}, 1}, {{0, 2}, 0}, {{-1}, 1}, {{}, 0}};
    graph g;
    const node_id x = g.add_input("x");
    for (const char* op : ops)
        for (const form& f : forms) {
            const std::string name = std::string(op) + "_" + std::to_string(&f - forms);
            const node_id n = g.add_op(op, name, {x}, {{"keepdims", f.keepdims}});
            if (!f.axes.empty()) g.set_attr(n, "axes", f.axes);  // none: every axis
            g.mark_output(n);
        }
    const exec::executor run(g);
    const auto got = run.run({{"x", value::of<double>({2, 3, 4}, xd)}});
    const auto want = run.run({{"x", value::of<float>({2, 3, 4}, xf)}});
    REQUIRE(got.size() == want.size());
    for (std::size_t i = 0; i < got.size(); ++i) {
        INFO(g.name(g.graph_output(i).node));
        CHECK(got[i].type() == dtype::f64);
        REQUIRE(got[i].dims() == want[i].dims());
        const auto a = elements<double>(got[i]);
        const auto b = elements<float>(want[i]);
        for (std::size_t k = 0; k < a.size(); ++k) CHECK(std::abs(a[k] - b[k]) <= 1e-5 * std::max(1.0, std::abs(a[k])));
    }
    // log(sum(exp(x))) of [1000, 1000, 1000] is 1000 + log(3): no overflow on the way.
    graph h;
    h.mark_output(h.add_op("ReduceLogSumExp", "lse", {h.add_input("x")}, {{"keepdims", std::int64_t{0}}}));
    const auto lse = elements<double>(exec::executor(h).run({{"x", value::of<double>({3}, {1000.0, 1000.0, 1000.0})}})[0]);
    REQUIRE(lse.size() == 1);
    CHECK(std::abs(lse[0] - (1000.0 + std::log(3.0))) <= 1e-12);
}

TEST_CASE("Max, Min and Mod on float16 and bfloat16: exact, as on the same values in f32") {
    // Values exactly representable in both half formats (multiples of 1/8 below 32: 8 significant
    // bits, what bfloat16 has): the results are such values too, so the f32 results are the
    // oracle, with no rounding between them.
    std::mt19937 rng(16);
    std::uniform_int_distribution<int> d(-255, 255);
    std::vector<float> a(24), b(24);
    for (auto* v : {&a, &b})
        for (auto& e : *v) e = static_cast<float>(d(rng)) / 8.0f;
    for (auto& e : b)
        if (e == 0.0f) e = 1.0f;  // no division by zero in Mod
    for (const std::int64_t half : {std::int64_t{10}, std::int64_t{16}}) {  // ONNX codes: float16, bfloat16
        graph g;
        auto x = g.add_op("Cast", "x", {g.add_input("a")}, {{"to", half}});
        auto y = g.add_op("Cast", "y", {g.add_input("b")}, {{"to", half}});
        for (const char* op : {"Max", "Min", "Mod"}) {
            const node_id n = g.add_op(op, op, {x, y});
            if (std::string(op) == "Mod") g.set_attr(n, "fmod", std::int64_t{1});
            g.mark_output(g.add_op("Cast", std::string(op) + ".f32", {n}, {{"to", std::int64_t{1}}}));
        }
        const auto out = exec::executor(g).run({{"a", value::of<float>({24}, a)}, {"b", value::of<float>({24}, b)}});
        const auto mx = elements<float>(out[0]), mn = elements<float>(out[1]), md = elements<float>(out[2]);
        for (std::size_t i = 0; i < a.size(); ++i) {
            CHECK(mx[i] == std::max(a[i], b[i]));
            CHECK(mn[i] == std::min(a[i], b[i]));
            CHECK(md[i] == std::fmod(a[i], b[i]));
        }
    }
}

TEST_CASE("int16, uint16, uint32 and uint64: arithmetic wraps in the type, casts saturate, shifts past the width give 0") {
    auto binary = [](const char* op, const value& a, const value& b, std::initializer_list<std::pair<std::string_view, attribute>> at = {}) {
        graph g;
        g.mark_output(g.add_op(op, "op", {g.add_input("a"), g.add_input("b")}, at));
        return exec::executor(g).run({{"a", a}, {"b", b}}).at(0);
    };
    // Products past the type's range wrap: 300 * 300 = 90000 is 24464 in int16; 65535^2 is 1 in
    // uint16 (in int, as C++ would promote them, it overflows: UBSan's preset checks that).
    CHECK(elements<std::int16_t>(binary("Mul", value::of<std::int16_t>({2}, {300, -300}), value::of<std::int16_t>({2}, {300, 300}))) ==
          std::vector<std::int16_t>{24464, -24464});
    CHECK(elements<std::uint16_t>(binary("Mul", value::of<std::uint16_t>({1}, {65535}), value::of<std::uint16_t>({1}, {65535}))) ==
          std::vector<std::uint16_t>{1});
    const std::uint64_t big = std::numeric_limits<std::uint64_t>::max();
    CHECK(elements<std::uint64_t>(binary("Add", value::of<std::uint64_t>({2}, {big, 7}), value::of<std::uint64_t>({1}, {1}))) ==
          std::vector<std::uint64_t>{0, 8});
    CHECK(elements<std::uint32_t>(binary("Sub", value::of<std::uint32_t>({1}, {0}), value::of<std::uint32_t>({1}, {1}))) ==
          std::vector<std::uint32_t>{4294967295u});
    // Mod of unsigned values; Max and Min beyond int64's range; comparisons.
    CHECK(elements<std::uint32_t>(binary("Mod", value::of<std::uint32_t>({3}, {7, 4000000000u, 5}), value::of<std::uint32_t>({3}, {3, 7, 5}))) ==
          std::vector<std::uint32_t>{1, 4000000000u % 7, 0});
    CHECK(elements<std::int16_t>(binary("Mod", value::of<std::int16_t>({2}, {-7, 7}), value::of<std::int16_t>({2}, {3, -3}))) ==
          std::vector<std::int16_t>{2, -2});  // the divisor's sign, as Python's %
    CHECK(elements<std::uint64_t>(binary("Max", value::of<std::uint64_t>({2}, {big, 1}), value::of<std::uint64_t>({2}, {2, big - 1}))) ==
          std::vector<std::uint64_t>{big, big - 1});
    CHECK(elements<bool>(binary("Less", value::of<std::uint64_t>({2}, {big - 1, big}), value::of<std::uint64_t>({1}, {big}))) ==
          std::vector<bool>{true, false});
    // BitShift on every unsigned width: by the width or more gives 0.
    CHECK(elements<std::uint32_t>(binary("BitShift", value::of<std::uint32_t>({3}, {1, 1, 0x80000000u}), value::of<std::uint32_t>({3}, {31, 32, 31}),
                                         {{"direction", attribute(std::string("LEFT"))}})) == std::vector<std::uint32_t>{0x80000000u, 0, 0});
    CHECK(elements<std::uint16_t>(binary("BitShift", value::of<std::uint16_t>({2}, {0x8000, 0x8000}), value::of<std::uint16_t>({2}, {15, 16}),
                                         {{"direction", attribute(std::string("RIGHT"))}})) == std::vector<std::uint16_t>{1, 0});
    CHECK(elements<std::uint64_t>(binary("BitShift", value::of<std::uint64_t>({1}, {1}), value::of<std::uint64_t>({1}, {63}),
                                         {{"direction", attribute(std::string("LEFT"))}})) == std::vector<std::uint64_t>{std::uint64_t{1} << 63});
    // Cast: reals saturate at the type's range (NaN to 0); integers wrap, as C++ converts them.
    graph cast;
    const node_id c = cast.add_op("Cast", "c", {cast.add_input("x")});
    cast.set_attr(c, "to", attribute(std::int64_t{4}));  // UINT16
    cast.mark_output(c);
    CHECK(elements<std::uint16_t>(exec::executor(cast).run({{"x", value::of<float>({4}, {-5.0f, 70000.0f, 12.7f, std::nanf("")})}})[0]) ==
          std::vector<std::uint16_t>{0, 65535, 12, 0});
    CHECK(elements<std::uint16_t>(exec::executor(cast).run({{"x", value::of<std::int32_t>({2}, {-1, 65537})}})[0]) ==
          std::vector<std::uint16_t>{65535, 1});
    // An op whose kernels do not take these types refuses them by name, never computes zeros.
    graph t;
    t.mark_output(t.add_op("Transpose", "tr", {t.add_input("x")}));
    CHECK(run_error(exec::executor(t), {{"x", value::of<std::uint16_t>({2, 2}, {1, 2, 3, 4})}})
              .find("node 'tr' (Transpose): no kernel for element type uint16 (input 0)") != std::string::npos);
    CHECK_THROWS_WITH_AS(binary("Mod", value::of<std::uint16_t>({1}, {1}), value::of<std::uint16_t>({1}, {0})),
                         doctest::Contains("node 'op' (Mod): integer modulo by zero"), exec::exec_error);
}
