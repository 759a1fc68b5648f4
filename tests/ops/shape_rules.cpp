// The descriptions' shape rules against the shapes the reference kernels actually produce
// (separate code: the kernels compute their output size from their own loops), over random
// attributes; and the rules' refusals.
#include <doctest/doctest.h>

#include <random>

#include "sgmatch/ops/shape_rule_table.hpp"
#include "sgmatch/ops/table.hpp"
#include "sgmatch/reference/kernels.hpp"
#include "support/numeric.hpp"

using namespace sgmatch;
using reference::array;

namespace {

using graph_attrs_t = std::vector<std::pair<std::string, attribute>>;

// Shapes compared as text, so that a failure shows both.
std::string shape(const array& a) { return ops::to_string(ops::dims(a.shape().begin(), a.shape().end())); }
std::string shape(const ops::dims& d) { return ops::to_string(d); }

std::string infer1(const ops::op_schema& s, graph_attrs_t attrs, std::vector<ops::dims> in,
                 std::vector<std::optional<std::vector<std::int64_t>>> values = {}) {
    values.resize(in.size());
    const ops::op_attrs a(s, std::move(attrs), "n");
    const auto out = ops::infer_shapes(a, ops::shape_inputs{std::move(in), std::move(values), {}});
    REQUIRE(!out.empty());  // output 0 (MaxPool's rule also gives its Indices)
    return ops::to_string(out[0]);
}

std::int64_t draw(std::mt19937& rng, std::int64_t lo, std::int64_t hi) {
    return std::uniform_int_distribution<std::int64_t>(lo, hi)(rng);
}

}  // namespace

TEST_CASE("Conv, ConvTranspose and pooling: the rule's shape is the reference kernel's, over random windows") {
    std::mt19937 rng(11);
    const array none = xt::zeros<float>({std::size_t(0)});
    for (int round = 0; round < 60; ++round) {
        CAPTURE(round);
        const std::size_t sp = static_cast<std::size_t>(draw(rng, 1, 3));
        const std::int64_t g = draw(rng, 1, 2), C = g * draw(rng, 1, 2), O = g * draw(rng, 1, 2);
        ops::dims x{draw(rng, 1, 2), C}, w{O, C / g}, k, s, d, p(2 * sp);
        for (std::size_t i = 0; i < sp; ++i) {
            k.push_back(draw(rng, 1, 3));
            s.push_back(draw(rng, 1, 3));
            d.push_back(draw(rng, 1, 2));
            p[i] = draw(rng, 0, 2);
            p[i + sp] = draw(rng, 0, 2);
            x.push_back(draw(rng, 1, 3) + (k.back() - 1) * d.back());
            w.push_back(k.back());
        }
        const array X = test::random_array(x, rng, 1.0f), W = test::random_array(w, rng, 1.0f);
        reference::conv_attrs ca;
        ca.strides = s;
        ca.dilations = d;
        ca.pads_begin.assign(p.begin(), p.begin() + static_cast<std::ptrdiff_t>(sp));
        ca.pads_end.assign(p.begin() + static_cast<std::ptrdiff_t>(sp), p.end());
        ca.groups = g;
        const graph_attrs_t conv_attrs{{"strides", s}, {"dilations", d}, {"pads", p}, {"group", g}};
        CHECK(infer1(ops::schemas::conv, conv_attrs, {x, w}) == shape(reference::conv(X, W, none, ca)));

        // ConvTranspose: weights [C, O/g, k...]; output_padding below the stride.
        ops::dims wt{C, O / g}, op;
        for (std::size_t i = 0; i < sp; ++i) {
            wt.push_back(k[i]);
            op.push_back(draw(rng, 0, std::max<std::int64_t>(0, std::min(s[i], d[i]) - 1)));
        }
        const array Wt = test::random_array(wt, rng, 1.0f);
        graph_attrs_t ct = conv_attrs;
        ct.emplace_back("output_padding", op);
        bool kernel_ok = true;
        array y;
        try {
            y = reference::conv_transpose(X, Wt, none, ca, op);
        } catch (const reference::kernel_error&) {
            kernel_ok = false;  // pads larger than the output: both must refuse
        }
        if (kernel_ok) CHECK(infer1(ops::schemas::conv_transpose, ct, {x, wt}) == shape(y));
        else CHECK_THROWS_AS(infer1(ops::schemas::conv_transpose, ct, {x, wt}), ops::op_error);

        // Pooling (no dilations in the kernels): window within the padded input.
        const ops::dims ones(sp, 1);
        const graph_attrs_t pool{{"kernel_shape", k}, {"strides", s}, {"pads", p}};
        bool fits = true;
        for (std::size_t i = 0; i < sp; ++i) fits = fits && x[i + 2] + p[i] + p[i + sp] >= k[i] && p[i] < k[i] && p[i + sp] < k[i];
        if (!fits) continue;
        const array mp = reference::pool(X, reference::pool_kind::max, k, s, ca.pads_begin, ca.pads_end);
        CHECK(infer1(ops::schemas::max_pool, pool, {x}) == shape(mp));
        CHECK(infer1(ops::schemas::average_pool, pool, {x}) == shape(mp));
    }
}

TEST_CASE("MatMul, Gemm, binary broadcasting, Concat, Transpose, Reshape, Flatten, Pad: rule == kernel") {
    std::mt19937 rng(12);
    // MatMul with batch broadcasting and 1-D operands.
    const std::vector<std::pair<ops::dims, ops::dims>> mm = {
        {{3, 4}, {4, 5}}, {{2, 3, 4}, {4, 5}}, {{2, 1, 3, 4}, {5, 4, 6}}, {{1, 3, 4}, {7, 4, 2}}};
    for (const auto& [a, b] : mm) {
        const std::string a_text = ops::to_string(a);
        CAPTURE(a_text);
        const array y = reference::matmul(test::random_array(a, rng, 1.0f), test::random_array(b, rng, 1.0f));
        CHECK(infer1(ops::schemas::matmul, {}, {a, b}) == shape(y));
    }
    // 1-D operands (numpy's rule; the reference kernel takes 2-D and up).
    CHECK(infer1(ops::schemas::matmul, {}, {{4}, {2, 4, 5}}) == shape(ops::dims{2, 5}));
    CHECK(infer1(ops::schemas::matmul, {}, {{2, 3, 4}, {4}}) == shape(ops::dims{2, 3}));
    CHECK_THROWS_WITH_AS(infer1(ops::schemas::matmul, {}, {{3, 4}, {5, 6}}), doctest::Contains("do not agree on K"), ops::op_error);
    for (int ta = 0; ta < 2; ++ta)
        for (int tb = 0; tb < 2; ++tb) {
            const ops::dims A = ta ? ops::dims{4, 3} : ops::dims{3, 4}, B = tb ? ops::dims{5, 4} : ops::dims{4, 5};
            const array y = reference::gemm(test::random_array(A, rng, 1.0f), test::random_array(B, rng, 1.0f),
                                            test::random_array({5}, rng, 1.0f), ta, tb);
            CHECK(infer1(ops::schemas::gemm, {{"transA", ta}, {"transB", tb}}, {A, B, {5}}) == shape(y));
        }
    const std::vector<std::pair<ops::dims, ops::dims>> bc = {{{2, 3, 4}, {4}}, {{2, 1, 4}, {3, 1}}, {{1}, {2, 2}}, {{5, 1, 1}, {1, 6, 7}}};
    for (const auto& [a, b] : bc) {
        const array y = reference::binary(test::random_array(a, rng, 1.0f), test::random_array(b, rng, 1.0f),
                                          reference::binary_kind::add);
        CHECK(infer1(ops::schemas::add, {}, {a, b}) == shape(y));
    }
    CHECK_THROWS_WITH_AS(infer1(ops::schemas::mul, {}, {{2, 3}, {4, 3}}), doctest::Contains("do not broadcast"), ops::op_error);

    const array c = reference::concat({test::random_array({2, 3, 4}, rng, 1.0f), test::random_array({2, 5, 4}, rng, 1.0f)}, 1);
    CHECK(infer1(ops::schemas::concat, {{"axis", 1}}, {{2, 3, 4}, {2, 5, 4}}) == shape(c));
    CHECK(infer1(ops::schemas::concat, {{"axis", -2}}, {{2, 3, 4}, {2, 5, 4}}) == shape(c));
    CHECK_THROWS_WITH_AS(infer1(ops::schemas::concat, {{"axis", 1}}, {{2, 3, 4}, {2, 5, 5}}), doctest::Contains("does not fit"),
                         ops::op_error);

    CHECK(infer1(ops::schemas::transpose, {{"perm", attribute::ints{0, 2, 3, 1}}}, {{1, 2, 3, 4}}) == shape(ops::dims{1, 3, 4, 2}));
    CHECK(infer1(ops::schemas::transpose, {}, {{1, 2, 3}}) == shape(ops::dims{3, 2, 1}));
    CHECK_THROWS_WITH_AS(infer1(ops::schemas::transpose, {{"perm", attribute::ints{0, 0, 1}}}, {{1, 2, 3}}),
                         doctest::Contains("is not a permutation"), ops::op_error);

    CHECK(infer1(ops::schemas::reshape, {}, {{2, 3, 4}, {3}}, {std::nullopt, std::vector<std::int64_t>{0, -1, 2}}) == shape(ops::dims{2, 6, 2}));
    CHECK(infer1(ops::schemas::reshape, {{"shape", attribute::ints{-1}}}, {{2, 3, 4}}) == shape(ops::dims{24}));
    CHECK_THROWS_WITH_AS(infer1(ops::schemas::reshape, {}, {{2, 3}, {1}}), doctest::Contains("the shape (input 1) is computed"),
                         ops::unknown_value);
    try {  // which input: the front end leaves the shape unknown where the kernels read it at run time
        (void)infer1(ops::schemas::reshape, {}, {{2, 3}, {1}});
    } catch (const ops::unknown_value& e) {
        CHECK(e.slot() == 1);
        CHECK(ops::schemas::reshape.inputs[e.slot()].run_time);
    }
    CHECK_THROWS_WITH_AS(infer1(ops::schemas::reshape, {{"shape", attribute::ints{5, -1}}}, {{2, 3}}), doctest::Contains("cannot reshape"),
                         ops::op_error);

    const array f = reference::flatten(test::random_array({2, 3, 4, 5}, rng, 1.0f), 2);
    CHECK(infer1(ops::schemas::flatten, {{"axis", 2}}, {{2, 3, 4, 5}}) == shape(f));
    CHECK(infer1(ops::schemas::flatten, {{"axis", 0}}, {{2, 3}}) == shape(ops::dims{1, 6}));

    const array pd = reference::pad(test::random_array({1, 2, 3}, rng, 1.0f), {0, 1, 2, 0, 0, 1});
    CHECK(infer1(ops::schemas::pad, {{"pads", attribute::ints{0, 1, 2, 0, 0, 1}}}, {{1, 2, 3}}) == shape(pd));
    CHECK(infer1(ops::schemas::pad, {}, {{1, 2, 3}, {6}}, {std::nullopt, std::vector<std::int64_t>{0, 1, 2, 0, 0, 1}}) == shape(pd));

    CHECK(infer1(ops::schemas::constant, {{"value", attribute::reals{1, 2, 3, 4, 5, 6}}, {"shape", attribute::ints{2, 3}}}, {}) ==
          shape(ops::dims{2, 3}));
    CHECK(infer1(ops::schemas::constant, {{"value_float", 1.5}}, {}) == shape(ops::dims{}));
    CHECK(infer1(ops::schemas::global_average_pool, {}, {{2, 3, 5, 7}}) == shape(ops::dims{2, 3, 1, 1}));
    CHECK(infer1(ops::schemas::softmax, {{"axis", 1}}, {{2, 3}}) == shape(ops::dims{2, 3}));
    CHECK_THROWS_WITH_AS(infer1(ops::schemas::softmax, {{"axis", 2}}, {{2, 3}}), doctest::Contains("axis 2 is out of range for rank 2"),
                         ops::op_error);
    CHECK_THROWS_WITH_AS(infer1(ops::schemas::batch_norm, {}, {{2, 3, 4}, {3}, {3}, {4}, {3}}),
                         doctest::Contains("input 3 [4] is not one value per channel"), ops::op_error);
}
