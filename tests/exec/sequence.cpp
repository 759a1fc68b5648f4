// Sequences of tensors (exec/kernels/sequence.hpp): SplitToSequence and ConcatFromSequence
// against slices taken by brute force, SequenceInsert and SequenceErase against a std::vector
// replaying the same edits, and every misuse refused with the node named. The ONNX conformance
// cases (simple/test_sequence_model*, node/test_sequence_insert_*, node/test_identity_sequence)
// check them too. Runs in every preset.
#include <doctest/doctest.h>

#include <cstdint>
#include <map>
#include <random>
#include <string>
#include <vector>

#include "sgmatch/exec/executor.hpp"
#include "support/values.hpp"

using namespace sgmatch;
using exec::value;

// Named: the unity build compiles this file with other tests; its helpers stay apart from theirs.
namespace sequence_tests {

using test::elements;

value scalar(std::int64_t v) { return value::of<std::int64_t>({}, {v}); }

// x [a, b, c] sliced along axis 1 to [from, from + len).
std::vector<std::int64_t> slice_axis1(const std::vector<std::int64_t>& x, std::int64_t a, std::int64_t b, std::int64_t c,
                                      std::int64_t from, std::int64_t len) {
    std::vector<std::int64_t> out;
    for (std::int64_t i = 0; i < a; ++i)
        for (std::int64_t j = from; j < from + len; ++j)
            for (std::int64_t k = 0; k < c; ++k) out.push_back(x[static_cast<std::size_t>((i * b + j) * c + k)]);
    return out;
}

// SplitToSequence(x, split?) -> the sequence, its length, the tensor at `at` and the sequence
// joined again by ConcatFromSequence (`stack`: along a new axis 1).
std::vector<value> split_and_join(const value& x, const value* split, std::int64_t keepdims, std::int64_t stack, std::int64_t at) {
    graph g;
    std::vector<input_ref> ins{g.add_input("x")};
    if (split != nullptr) ins.push_back(g.add_input("split"));
    const node_id s = g.add_op("SplitToSequence", "split_to_seq", ins);
    g.set_attr(s, "axis", attribute(std::int64_t{1}));
    g.set_attr(s, "keepdims", attribute(keepdims));
    const node_id len = g.add_op("SequenceLength", "len", {s});
    const node_id one = g.add_op("SequenceAt", "at", {s, g.add_input("at")});
    const node_id back = g.add_op("ConcatFromSequence", "join", {s});
    g.set_attr(back, "axis", attribute(std::int64_t{1}));
    g.set_attr(back, "new_axis", attribute(stack));
    for (const node_id n : {s, len, one, back}) g.mark_output(n);
    std::map<std::string, value> in{{"x", x}, {"at", scalar(at)}};
    if (split != nullptr) in.emplace("split", *split);
    return exec::executor(g).run(in);
}

}  // namespace sequence_tests

using namespace sequence_tests;

TEST_CASE("SplitToSequence cuts along the axis as ONNX says: lengths, one length, pieces of 1. ConcatFromSequence joins them back") {
    std::mt19937 rng(7);
    const value x = test::random_value<std::int64_t>(rng, {2, 7, 3}, -50, 50);
    const std::vector<std::int64_t> xs = elements<std::int64_t>(x);

    SUBCASE("a list of lengths, a zero among them") {
        const value split = value::of<std::int64_t>({3}, {2, 0, 5});
        const auto out = split_and_join(x, &split, 1, 0, -1);
        REQUIRE(out[0].is_sequence());
        REQUIRE(out[0].items().size() == 3);
        CHECK(out[0].items()[1].dims() == exec::shape{2, 0, 3});
        CHECK(elements<std::int64_t>(out[1]) == std::vector<std::int64_t>{3});
        CHECK(out[2].dims() == exec::shape{2, 5, 3});
        CHECK(elements<std::int64_t>(out[2]) == slice_axis1(xs, 2, 7, 3, 2, 5));
        CHECK(elements<std::int64_t>(out[0].items()[0]) == slice_axis1(xs, 2, 7, 3, 0, 2));
        CHECK(out[3].dims() == x.dims());
        CHECK(elements<std::int64_t>(out[3]) == xs);
    }
    SUBCASE("one length: pieces of 3, the last one shorter") {
        const value split = value::of<std::int32_t>({}, {3});
        const auto out = split_and_join(x, &split, 1, 0, 2);
        REQUIRE(out[0].items().size() == 3);
        CHECK(out[2].dims() == exec::shape{2, 1, 3});
        CHECK(elements<std::int64_t>(out[2]) == slice_axis1(xs, 2, 7, 3, 6, 1));
        CHECK(elements<std::int64_t>(out[3]) == xs);
    }
    SUBCASE("no split, keepdims 0: pieces of 1 without the axis, stacked back along a new axis") {
        const auto out = split_and_join(x, nullptr, 0, 1, -3);
        REQUIRE(out[0].items().size() == 7);
        CHECK(out[2].dims() == exec::shape{2, 3});
        CHECK(elements<std::int64_t>(out[2]) == slice_axis1(xs, 2, 7, 3, 4, 1));
        CHECK(out[3].dims() == x.dims());
        CHECK(elements<std::int64_t>(out[3]) == xs);
    }
    SUBCASE("no split, keepdims 1: pieces of 1 keep the axis") {
        const auto out = split_and_join(x, nullptr, 1, 0, 0);
        CHECK(out[2].dims() == exec::shape{2, 1, 3});
        CHECK(elements<std::int64_t>(out[3]) == xs);
    }
}

TEST_CASE("SequenceInsert and SequenceErase at random positions, negative ones too, agree with a std::vector doing the same") {
    std::mt19937 rng(11);
    for (int trial = 0; trial < 20; ++trial) {
        graph g;
        const node_id empty = g.add_op("SequenceEmpty", "empty", {});
        g.set_attr(empty, "dtype", attribute(std::int64_t{7}));  // int64
        input_ref s = empty;
        std::vector<std::int64_t> model;  // each tensor is the scalar of its step
        std::map<std::string, value> in;
        for (int step = 0; step < 12; ++step) {
            const std::string k = std::to_string(step);
            const auto n = static_cast<std::int64_t>(model.size());
            const bool erase = n > 0 && rng() % 3 == 0;
            const bool given = rng() % 4 != 0;  // else the default position: the end / the last
            node_id op;
            if (erase) {
                const std::int64_t p = std::uniform_int_distribution<std::int64_t>(-n, n - 1)(rng);
                std::vector<input_ref> ins{s};
                if (given) {
                    ins.push_back(g.add_input("p" + k));
                    in.emplace("p" + k, value::of<std::int64_t>({}, {p}));
                }
                op = g.add_op("SequenceErase", "erase" + k, ins);
                model.erase(model.begin() + (given ? (p < 0 ? p + n : p) : n - 1));
            } else {
                const std::int64_t p = std::uniform_int_distribution<std::int64_t>(-n, n)(rng);
                std::vector<input_ref> ins{s, g.add_input("t" + k)};
                in.emplace("t" + k, scalar(100 + step));
                if (given) {
                    ins.push_back(g.add_input("p" + k));
                    in.emplace("p" + k, value::of<std::int32_t>({}, {static_cast<std::int32_t>(p)}));
                }
                op = g.add_op("SequenceInsert", "insert" + k, ins);
                model.insert(model.begin() + (given ? (p < 0 ? p + n : p) : n), 100 + step);
            }
            s = op;
        }
        g.mark_output(s);
        const value out = exec::executor(g).run(in).at(0);
        REQUIRE(out.is_sequence());
        std::vector<std::int64_t> got;
        for (const value& t : out.items()) got.push_back(elements<std::int64_t>(t).at(0));
        CHECK(got == model);
    }
}

TEST_CASE("Sequences: a tensor a graph input lent stays the caller's, a sequence output outlives the run") {
    graph g;
    const node_id c = g.add_op("SequenceConstruct", "construct", {g.add_input("a"), g.add_input("b")});
    g.mark_output(c);
    std::vector<float> a{1, 2, 3}, b{4, 5};
    const exec::executor run(g);
    const value s = run.run({{"a", value::view(a.data(), dtype::f32, {3})}, {"b", value::view(b.data(), dtype::f32, {2})}}).at(0);
    a[0] = -1;  // the sequence holds copies
    REQUIRE(s.items().size() == 2);
    CHECK(elements<float>(s.items()[0]) == std::vector<float>{1, 2, 3});
    CHECK(elements<float>(s.items()[1]) == std::vector<float>{4, 5});
    CHECK(s.type() == dtype::f32);
}

TEST_CASE("Sequences: every misuse is an error naming the node") {
    const value x = value::of<float>({2, 2}, {1, 2, 3, 4});
    SUBCASE("a position out of range") {
        graph g;
        const node_id c = g.add_op("SequenceConstruct", "construct", {g.add_input("x"), g.add_input("x2")});
        const node_id at = g.add_op("SequenceAt", "pick", {c, g.add_input("p")});
        g.mark_output(at);
        const exec::executor run(g);
        CHECK(elements<float>(run.run({{"x", x}, {"x2", x}, {"p", scalar(-2)}}).at(0)) == elements<float>(x));
        const std::string e = test::run_error(run, {{"x", x}, {"x2", x}, {"p", scalar(2)}});
        CHECK(e.find("'pick'") != std::string::npos);
        CHECK(e.find("position 2 is out of range for a sequence of 2 tensors") != std::string::npos);
        const std::string f = test::run_error(run, {{"x", x}, {"x2", x}, {"p", value::of<float>({}, {0})}});
        CHECK(f.find("an int32 or int64 scalar expected") != std::string::npos);
    }
    SUBCASE("a sequence where a tensor belongs, and a tensor where a sequence belongs") {
        graph g;
        const node_id c = g.add_op("SequenceConstruct", "construct", {g.add_input("x")});
        const node_id add = g.add_op("Add", "add", {c, g.add_input("y")});
        g.mark_output(add);
        const std::string e = test::run_error(exec::executor(g), {{"x", x}, {"y", x}});
        CHECK(e.find("'add'") != std::string::npos);
        CHECK(e.find("is a sequence") != std::string::npos);

        graph h;
        const node_id len = h.add_op("SequenceLength", "len", {h.add_input("x")});
        h.mark_output(len);
        const std::string f = test::run_error(exec::executor(h), {{"x", x}});
        CHECK(f.find("'len'") != std::string::npos);
        CHECK(f.find("input 0 is a tensor; the op reads a sequence there") != std::string::npos);
    }
    SUBCASE("tensors of two types in one sequence; an empty sequence joined; lengths that miss the axis") {
        graph g;
        const node_id c = g.add_op("SequenceConstruct", "mixed", {g.add_input("x"), g.add_input("i")});
        g.mark_output(c);
        const std::string e = test::run_error(exec::executor(g), {{"x", x}, {"i", scalar(1)}});
        CHECK(e.find("'mixed'") != std::string::npos);
        CHECK(e.find("a tensor of int64 in a sequence of float") != std::string::npos);

        graph h;
        const node_id join = h.add_op("ConcatFromSequence", "join", {h.add_op("SequenceEmpty", "empty", {})});
        h.set_attr(join, "axis", attribute(std::int64_t{0}));
        h.mark_output(join);
        const std::string f = test::run_error(exec::executor(h), {});
        CHECK(f.find("'join'") != std::string::npos);
        CHECK(f.find("the sequence is empty") != std::string::npos);

        graph k;
        const node_id s = k.add_op("SplitToSequence", "cut", {k.add_input("x"), k.add_input("split")});
        k.mark_output(s);
        const std::string m = test::run_error(exec::executor(k), {{"x", x}, {"split", value::of<std::int64_t>({2}, {1, 2})}});
        CHECK(m.find("'cut'") != std::string::npos);
        CHECK(m.find("adds up to 3, not to axis 0's 2") != std::string::npos);
    }
}
