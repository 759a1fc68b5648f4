// Control flow (exec/control_flow.hpp): Loop, If, Scan and SequenceMap on bodies that read
// values of the enclosing graph, each against the same computation written as a plain C++ loop
// over random data; misuse refused, naming the node, when the executor is built or when the
// node runs. Optionals (empty ones through Identity and If). The ONNX conformance cases
// (node/test_loop*, test_if*, test_scan9_sum, test_sequence_map_*, test_range_*_expanded,
// test_optional_*) check them too, and onnx::save writes them back (tests/onnx/save.cpp). Runs
// in every preset.
#include <doctest/doctest.h>

#include <cstdint>
#include <initializer_list>
#include <map>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include "sgmatch/exec/executor.hpp"
#include "sgmatch/ops/optional.hpp"

using namespace sgmatch;
using exec::value;

// Named: the unity build compiles this file with other tests; its helpers stay apart from theirs.
namespace control_tests {

value floats(std::vector<std::int64_t> dims, const std::vector<float>& v) { return value::of<float>(std::move(dims), v); }
value i64(std::int64_t v) { return value::of<std::int64_t>({}, {v}); }
value booleans(std::vector<std::int64_t> dims, std::initializer_list<bool> b) { return value::of<bool>(std::move(dims), std::vector<bool>(b)); }
value boolean(bool b) { return booleans({}, {b}); }

std::vector<float> random_floats(std::size_t n, std::mt19937& rng) {
    std::uniform_real_distribution<float> d(-2.0f, 2.0f);
    std::vector<float> v(n);
    for (auto& x : v) x = d(rng);
    return v;
}

std::vector<float> data_of(const value& v) { return std::vector<float>(v.as<float>(), v.as<float>() + v.size()); }

attribute body_attr(graph body, std::size_t own) { return attribute(graph_body{std::make_shared<const graph>(std::move(body)), own}); }

// Loop(M, cond, acc0) whose body reads the enclosing x [n] and k:
//   acc_out = acc + x * float(i); cond_out = i < k; scan: acc_out
graph accumulate_loop() {
    graph body;
    const node_id i = body.add_input("i"), c = body.add_input("cond_in"), acc = body.add_input("acc");
    const node_id x = body.add_input("x"), k = body.add_input("k");  // the enclosing values
    (void)c;
    const node_id fi = body.add_op("Cast", "fi", {i});
    body.set_attr(fi, "to", attribute(std::int64_t{1}));
    const node_id step = body.add_op("Mul", "step", {x, fi});
    const node_id next = body.add_op("Add", "next", {acc, step});
    const node_id go = body.add_op("Less", "go", {i, k});
    body.mark_output(go);
    body.mark_output(next);
    body.mark_output(next);

    graph g;
    const node_id m = g.add_input("M"), cond = g.add_input("cond"), acc0 = g.add_input("acc0");
    const node_id xs = g.add_input("x"), ks = g.add_input("k");
    const node_id loop = g.add_op("Loop", "loop", {m, cond, acc0, xs, ks}, {}, 2);
    g.set_attr(loop, "body", body_attr(std::move(body), 3));
    g.mark_output({loop, 0});
    g.mark_output({loop, 1});
    return g;
}

}  // namespace control_tests

using namespace control_tests;

TEST_CASE("Loop: carried values, stacked scan outputs and the condition, against a C++ loop") {
    std::mt19937 rng(7);
    const graph g = accumulate_loop();
    const exec::executor run(g);
    for (int trial = 0; trial < 12; ++trial) {
        const std::int64_t n = 1 + static_cast<std::int64_t>(rng() % 4), trips = static_cast<std::int64_t>(rng() % 6);
        const std::int64_t k = static_cast<std::int64_t>(rng() % 7) - 1;
        const bool start = rng() % 4 != 0;
        const std::vector<float> x = random_floats(static_cast<std::size_t>(n), rng), a0 = random_floats(static_cast<std::size_t>(n), rng);
        CAPTURE(trips);
        CAPTURE(k);
        CAPTURE(start);
        // The same by hand: the condition is read before each iteration.
        std::vector<float> acc = a0;
        std::vector<std::vector<float>> scans;
        bool go = start;
        for (std::int64_t i = 0; i < trips && go; ++i) {
            for (std::int64_t j = 0; j < n; ++j) acc[static_cast<std::size_t>(j)] += x[static_cast<std::size_t>(j)] * static_cast<float>(i);
            scans.push_back(acc);
            go = i < k;
        }
        const auto out = run.run({{"M", i64(trips)}, {"cond", boolean(start)}, {"acc0", floats({n}, a0)}, {"x", floats({n}, x)}, {"k", i64(k)}});
        REQUIRE(out.size() == 2);
        CHECK(data_of(out[0]) == acc);
        if (scans.empty()) {
            CHECK(out[1].dims() == exec::shape{0});
        } else {
            CHECK(out[1].dims() == exec::shape{static_cast<std::int64_t>(scans.size()), n});
            std::vector<float> flat;
            for (const auto& s : scans) flat.insert(flat.end(), s.begin(), s.end());
            CHECK(data_of(out[1]) == flat);
        }
    }
}

TEST_CASE("If: the branch the condition picks, each reading the enclosing values") {
    auto branch = [](const char* op) {
        graph b;
        const node_id a = b.add_input("a"), c = b.add_input("b");
        b.mark_output(b.add_op(op, std::string(op) + "_ab", {a, c}));
        return b;
    };
    graph g;
    const node_id cond = g.add_input("cond"), a = g.add_input("a"), b = g.add_input("b");
    const node_id pick = g.add_op("If", "pick", {cond, a, b});
    g.set_attr(pick, "then_branch", body_attr(branch("Add"), 0));
    g.set_attr(pick, "else_branch", body_attr(branch("Mul"), 0));
    g.mark_output(pick);
    const exec::executor run(g);
    std::mt19937 rng(3);
    for (const bool c : {true, false}) {
        const std::vector<float> x = random_floats(5, rng), y = random_floats(5, rng);
        const auto out = run.run({{"cond", boolean(c)}, {"a", floats({5}, x)}, {"b", floats({5}, y)}});
        std::vector<float> want(5);
        for (std::size_t i = 0; i < 5; ++i) want[i] = c ? x[i] + y[i] : x[i] * y[i];
        CHECK(data_of(out.at(0)) == want);
    }
    // A condition of two values is no condition.
    CHECK_THROWS_WITH_AS(run.run({{"cond", booleans({2}, {true, false})}, {"a", floats({1}, {1})}, {"b", floats({1}, {1})}}),
                         doctest::Contains("node 'pick' (If): cond holds 2 values"), exec::exec_error);
}

TEST_CASE("Scan: scan axes and directions, against a C++ loop") {
    // states: s [2]; scanned: X [2, T] along axis 1, backwards; output: s after each step,
    // stacked along axis 1 (a [2, T] result).
    graph body;
    const node_id s = body.add_input("s"), slice = body.add_input("slice");
    const node_id next = body.add_op("Add", "next", {s, slice});
    body.mark_output(next);
    body.mark_output(next);
    graph g;
    const node_id s0 = g.add_input("s0"), x = g.add_input("X");
    const node_id scan = g.add_op("Scan", "scan", {s0, x}, {}, 2);
    g.set_attr(scan, "body", body_attr(std::move(body), 2));
    g.set_attr(scan, "num_scan_inputs", attribute(std::int64_t{1}));
    g.set_attr(scan, "scan_input_axes", attribute(attribute::ints{1}));
    g.set_attr(scan, "scan_input_directions", attribute(attribute::ints{1}));
    g.set_attr(scan, "scan_output_axes", attribute(attribute::ints{-1}));
    g.mark_output({scan, 0});
    g.mark_output({scan, 1});
    const exec::executor run(g);
    std::mt19937 rng(11);
    for (const std::int64_t t : {1, 3, 6}) {
        const std::vector<float> init = random_floats(2, rng), xs = random_floats(static_cast<std::size_t>(2 * t), rng);
        std::vector<float> state = init, stacked(static_cast<std::size_t>(2 * t));
        for (std::int64_t step = 0; step < t; ++step) {
            const std::int64_t col = t - 1 - step;  // backwards
            for (std::int64_t r = 0; r < 2; ++r) {
                state[static_cast<std::size_t>(r)] += xs[static_cast<std::size_t>(r * t + col)];
                stacked[static_cast<std::size_t>(r * t + step)] = state[static_cast<std::size_t>(r)];
            }
        }
        const auto out = run.run({{"s0", floats({2}, init)}, {"X", floats({2, t}, xs)}});
        CHECK(data_of(out.at(0)) == state);
        CHECK(out.at(1).dims() == exec::shape{2, t});
        CHECK(data_of(out.at(1)) == stacked);
    }
}

TEST_CASE("SequenceMap: the body on each tensor, an extra tensor read whole") {
    graph body;
    const node_id item = body.add_input("item"), y = body.add_input("y");
    body.mark_output(body.add_op("Mul", "scaled", {item, y}));
    body.mark_output(body.add_op("Shape", "shape", {item}));
    graph g;
    const node_id seq = g.add_input("seq", tensor_type{dtype::f32, {}, true}), ys = g.add_input("y");
    const node_id map = g.add_op("SequenceMap", "map", {seq, ys}, {}, 2);
    g.set_attr(map, "body", body_attr(std::move(body), 2));
    g.mark_output({map, 0});
    g.mark_output({map, 1});
    std::mt19937 rng(5);
    std::vector<value> items;
    std::vector<std::vector<float>> raw;
    for (std::int64_t len : {3, 1, 4}) {
        raw.push_back(random_floats(static_cast<std::size_t>(len), rng));
        items.push_back(floats({len}, raw.back()));
    }
    const auto out = exec::executor(g).run({{"seq", value::sequence(dtype::f32, items)}, {"y", floats({}, {-1.5f})}});
    REQUIRE(out.size() == 2);
    REQUIRE(out[0].is_sequence());
    REQUIRE(out[0].items().size() == 3);
    for (std::size_t i = 0; i < 3; ++i) {
        std::vector<float> want = raw[i];
        for (auto& v : want) v *= -1.5f;
        CHECK(data_of(out[0].items()[i]) == want);
        CHECK(out[1].items()[i].to_ints() == std::vector<std::int64_t>{static_cast<std::int64_t>(raw[i].size())});
    }
}

TEST_CASE("control flow: misuse is refused, naming the node") {
    // A body with an op that has no kernel: refused when the executor is built.
    {
        graph body;
        const node_id i = body.add_input("i"), c = body.add_input("c"), v = body.add_input("v");
        (void)i;
        body.mark_output(c);
        body.mark_output(body.add_op("Frobnicate", "frob", {v}));
        graph g;
        const node_id loop = g.add_op("Loop", "outer_loop", {g.add_input("M"), g.add_input("cond"), g.add_input("v0")});
        g.set_attr(loop, "body", body_attr(std::move(body), 3));
        g.mark_output(loop);
        CHECK_THROWS_WITH_AS(exec::executor{g}, doctest::Contains("node 'outer_loop' (Loop): its body:"), exec::exec_error);
        CHECK_THROWS_WITH_AS(exec::executor{g}, doctest::Contains("Frobnicate"), exec::exec_error);
    }
    // A body that makes fewer outputs than the node needs.
    {
        graph body;
        const node_id i = body.add_input("i"), c = body.add_input("c"), v = body.add_input("v");
        (void)i;
        (void)v;
        body.mark_output(c);
        graph g;
        const node_id loop = g.add_op("Loop", "short_loop", {g.add_input("M"), g.add_input("cond"), g.add_input("v0")});
        g.set_attr(loop, "body", body_attr(std::move(body), 3));
        g.mark_output(loop);
        CHECK_THROWS_WITH_AS(exec::executor{g}, doctest::Contains("node 'short_loop' (Loop): the body computes 1 outputs"), exec::exec_error);
    }
    // A Loop without its body attribute.
    {
        graph g;
        const node_id loop = g.add_op("Loop", "bodiless", {g.add_input("M"), g.add_input("cond"), g.add_input("v0")});
        g.mark_output(loop);
        CHECK_THROWS_WITH_AS(exec::executor{g}, doctest::Contains("attribute body is required"), exec::exec_error);
    }
    // Scanned inputs of different lengths.
    {
        graph body;
        const node_id p = body.add_input("p"), q = body.add_input("q");
        body.mark_output(body.add_op("Add", "pq", {p, q}));
        graph g;
        const node_id scan = g.add_op("Scan", "pairs", {g.add_input("P"), g.add_input("Q")});
        g.set_attr(scan, "body", body_attr(std::move(body), 2));
        g.set_attr(scan, "num_scan_inputs", attribute(std::int64_t{2}));
        g.mark_output(scan);
        const exec::executor run(g);
        CHECK_THROWS_WITH_AS(run.run({{"P", floats({3, 2}, std::vector<float>(6, 1.0f))}, {"Q", floats({2, 2}, std::vector<float>(4, 1.0f))}}),
                             doctest::Contains("node 'pairs' (Scan): scan input 1 has 2 slices; the first one has 3"), exec::exec_error);
        const auto ok = run.run({{"P", floats({2, 2}, {1, 2, 3, 4})}, {"Q", floats({2, 2}, {10, 20, 30, 40})}});
        CHECK(data_of(ok.at(0)) == std::vector<float>{11, 22, 33, 44});
    }
}

TEST_CASE("optionals: Optional, OptionalHasElement and OptionalGetElement, an empty one through Identity and If") {
    // x: an optional tensor; h = OptionalHasElement(x); e = OptionalGetElement(Identity(x)).
    graph g;
    tensor_type opt = tensor_type::of(dtype::f32, {3});
    opt.optional = true;
    const node_id x = g.add_input("x", opt);
    const node_id id = g.add_op("Identity", "id", {x});
    g.set_type({id, 0}, opt);
    const node_id has = g.add_op("OptionalHasElement", "has", {x});
    g.mark_output(has);
    g.mark_output(id);
    g.mark_output(g.add_op("OptionalGetElement", "get", {id}));
    const exec::executor run(g);
    const auto held = run.run({{"x", floats({3}, {1, 2, 3})}});
    REQUIRE(held.size() == 3);
    CHECK(held[0].as<bool>()[0]);
    CHECK(data_of(held[2]) == std::vector<float>{1, 2, 3});
    const value none = value::none(dtype::f32);
    CHECK_THROWS_WITH_AS(run.run({{"x", none}}), doctest::Contains("node 'get' (OptionalGetElement): the optional is empty"), exec::exec_error);
    graph probe;  // an empty optional through Identity, and asked whether it holds a value
    const node_id px = probe.add_input("x", opt);
    probe.mark_output(probe.add_op("OptionalHasElement", "has", {px}));
    probe.mark_output(probe.add_op("Identity", "id", {px}));
    const auto empty = exec::executor(probe).run({{"x", none}});
    CHECK_FALSE(empty.at(0).as<bool>()[0]);
    CHECK(empty.at(1).is_none());
    CHECK(empty.at(1).size() == 0);  // nothing to read, as a tensor or as a sequence
    CHECK_THROWS_AS((void)empty.at(1).as_constant(), exec::value_error);
    CHECK_THROWS_AS((void)empty.at(1).items(), exec::value_error);

    // If: an empty optional of sequences of int64 (Optional's type attribute) or one holding the
    // sequence the other branch makes.
    graph nothing;
    const node_id o = nothing.add_op("Optional", "nothing", {});
    nothing.set_attr(o, "type", attribute(std::string("seq(tensor(int64))")));
    nothing.mark_output(o);
    graph something;
    const node_id a = something.add_input("a");
    const node_id s = something.add_op("SequenceConstruct", "seq", {a, a});
    something.mark_output(something.add_op("Optional", "wrap", {s}));
    graph pick;
    const node_id cond = pick.add_input("cond"), pa = pick.add_input("a");
    const node_id branch = pick.add_op("If", "pick", {cond, pa});
    pick.set_attr(branch, "then_branch", body_attr(std::move(nothing), 0));
    pick.set_attr(branch, "else_branch", body_attr(std::move(something), 0));
    tensor_type opt_seq;
    opt_seq.type = dtype::i64;
    opt_seq.sequence = opt_seq.optional = true;
    pick.set_type({branch, 0}, opt_seq);
    pick.mark_output(branch);
    pick.mark_output(pick.add_op("OptionalHasElement", "has", {branch}));
    const exec::executor run_pick(pick);
    const auto none_out = run_pick.run({{"cond", boolean(true)}, {"a", value::of<std::int64_t>({2}, {4, 5})}});
    CHECK(none_out.at(0).is_none());
    CHECK(none_out.at(0).none_of_sequence());
    CHECK(none_out.at(0).type() == dtype::i64);
    CHECK_FALSE(none_out.at(1).as<bool>()[0]);
    const auto seq_out = run_pick.run({{"cond", boolean(false)}, {"a", value::of<std::int64_t>({2}, {4, 5})}});
    REQUIRE(seq_out.at(0).is_sequence());
    CHECK(seq_out.at(0).items().size() == 2);
    CHECK(seq_out.at(1).as<bool>()[0]);
}

TEST_CASE("optionals: misuse is refused, naming the node") {
    auto lone = [](const char* type) {  // Optional without an input
        graph g;
        const node_id o = g.add_op("Optional", "opt", {});
        if (type) g.set_attr(o, "type", attribute(std::string(type)));
        g.mark_output(o);
        return g;
    };
    auto build_error = [](const graph& g) -> std::string {
        try {
            exec::executor run(g);
        } catch (const exec::exec_error& e) {
            return e.what();
        }
        return "";
    };
    CHECK(build_error(lone(nullptr)).find("node 'opt' (Optional): without an input, the type attribute must say") != std::string::npos);
    CHECK(build_error(lone("tensor(complex64)")).find("node 'opt' (Optional): type 'tensor(complex64)' is not a tensor") != std::string::npos);
    CHECK(build_error(lone("map(int64, tensor(float))")).find("node 'opt' (Optional): type 'map(int64, tensor(float))'") != std::string::npos);
    // An empty optional where the graph declares a tensor, and read by an op that reads values.
    graph declared;
    const node_id d = declared.add_op("Optional", "opt", {});
    declared.set_attr(d, "type", attribute(std::string("tensor(float)")));
    declared.set_type({d, 0}, tensor_type::of(dtype::f32, {2}));
    declared.mark_output(d);
    CHECK_THROWS_WITH_AS(exec::executor(declared).run(std::map<std::string, value>{}),
                         doctest::Contains("node 'opt' (Optional) computed an empty optional of float on output 0; the graph declares tensor(float)"),
                         exec::exec_error);
    graph read;
    const node_id o = read.add_op("Optional", "opt", {});
    read.set_attr(o, "type", attribute(std::string("tensor(float)")));
    read.mark_output(read.add_op("Abs", "abs", {o}));
    CHECK_THROWS_WITH_AS(exec::executor(read).run(std::map<std::string, value>{}), doctest::Contains("empty optional"), exec::exec_error);
}

TEST_CASE("optionals: ONNX's type notation, both ways") {
    for (dtype d : {dtype::f32, dtype::f16, dtype::bf16, dtype::f64, dtype::i8, dtype::u8, dtype::i32, dtype::i64, dtype::boolean})
        for (int kind = 0; kind < 4; ++kind) {
            tensor_type t;
            t.type = d;
            t.sequence = (kind & 1) != 0;
            t.optional = (kind & 2) != 0;
            const std::string s = ops::type_notation(t);
            CAPTURE(s);
            const auto back = ops::parse_type_notation(s);
            REQUIRE(back);
            CHECK(back->type == d);
            CHECK(back->sequence == t.sequence);
            CHECK(back->optional == t.optional);
        }
    CHECK(ops::type_notation(*ops::parse_type_notation("optional(seq(tensor(int64)))")) == "optional(seq(tensor(int64)))");
    for (const char* bad : {"", "tensor", "tensor()", "tensor(float", "seq(float)", "tensor(string)", "seq(seq(tensor(float)))",
                            "optional(optional(tensor(float)))", "map(int64,tensor(float))", " tensor(float)"})
        CHECK_FALSE(ops::parse_type_notation(bad));
}
