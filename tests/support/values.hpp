// Test helpers for typed values (exec::value) and the executor: a value's elements as a vector,
// the message of the exec_error a run raises ("" when it raises none), random values of small
// integers (ties on purpose) of a given shape, constants, one node run in a mode, and a node's
// integer results in the oneDNN mode against the reference mode.
#pragma once

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <map>
#include <optional>
#include <random>
#include <string>
#include <utility>
#include <vector>

#include <doctest/doctest.h>

#include "sgmatch/exec/executor.hpp"

namespace test {

template <class T>
std::vector<T> elements(const sgmatch::exec::value& v) {
    const T* p = v.as<T>();
    return std::vector<T>(p, p + v.size());
}

inline std::string run_error(const sgmatch::exec::executor& run, const std::map<std::string, sgmatch::exec::value>& in) {
    try {
        (void)run.run(in);
    } catch (const sgmatch::exec::exec_error& e) {
        return e.what();
    }
    return "";
}

/// The number of elements of dims d.
inline std::int64_t count(const std::vector<std::int64_t>& d) {
    std::int64_t n = 1;
    for (auto x : d) n *= x;
    return n;
}

/// A value of dims `dims` with elements drawn uniformly from the integers [lo, hi], as T.
template <class T>
sgmatch::exec::value random_value(std::mt19937& rng, const std::vector<std::int64_t>& dims, int lo, int hi) {
    std::uniform_int_distribution<int> d(lo, hi);
    std::vector<T> v(static_cast<std::size_t>(count(dims)));
    for (auto& x : v) x = static_cast<T>(d(rng));
    return sgmatch::exec::value::of<T>(dims, v);
}

/// A constant node of g holding v's elements (any element type).
inline sgmatch::node_id constant_of(sgmatch::graph& g, const std::string& name, const sgmatch::exec::value& v) {
    const sgmatch::exec::value d = v.dense_value();
    std::vector<unsigned char> bytes(static_cast<std::size_t>(d.size()) * sgmatch::size_of(d.type()));
    if (!bytes.empty()) std::memcpy(bytes.data(), d.data(), bytes.size());
    return g.add_constant(name, std::vector<std::int64_t>(d.dims().begin(), d.dims().end()), d.type(), std::move(bytes));
}

/// One node `op` over graph input "x" (its first input) and the values `rest` (its other inputs,
/// in order) as constants, but for slot `computed` of rest, which is graph input "w" instead;
/// `attrs` set on the node. Run in mode m: its one output and what the run did.
inline std::pair<sgmatch::exec::value, sgmatch::exec::run_stats> run_one(
    const std::string& op, const sgmatch::exec::value& x, const std::vector<sgmatch::exec::value>& rest,
    std::optional<std::size_t> computed, const std::vector<std::pair<std::string, sgmatch::attribute>>& attrs,
    sgmatch::exec::mode m) {
    sgmatch::graph g;
    std::vector<sgmatch::input_ref> ins{g.add_input("x")};
    for (std::size_t i = 0; i < rest.size(); ++i)
        ins.push_back(computed == i ? sgmatch::input_ref(g.add_input("w")) : sgmatch::input_ref(constant_of(g, "p" + std::to_string(i), rest[i])));
    const sgmatch::node_id n = g.add_op(op, "node", ins);
    for (const auto& [k, v] : attrs) g.set_attr(n, k, v);
    g.mark_output(n);
    sgmatch::exec::run_stats st;
    std::map<std::string, sgmatch::exec::value> in{{"x", x}};
    if (computed) in.emplace("w", rest.at(*computed));
    sgmatch::exec::value y = sgmatch::exec::executor(g, m).run(in, &st).at(0);
    return {std::move(y), st};
}

/// How two integer values differ: the elements compared, how many differ, by how much at most.
struct int_difference {
    std::size_t count = 0, differ = 0;
    std::int64_t worst = 0;
};
inline int_difference compare_ints(const sgmatch::exec::value& a, const sgmatch::exec::value& b) {
    const auto x = a.to_ints(), y = b.to_ints();
    int_difference d;
    d.count = x.size();
    for (std::size_t i = 0; i < x.size() && i < y.size(); ++i) {
        d.differ += x[i] != y[i];
        d.worst = std::max(d.worst, x[i] > y[i] ? x[i] - y[i] : y[i] - x[i]);
    }
    return d;
}

/// run_one in the reference mode and in the oneDNN mode, checking that one typed kernel ran and,
/// in the oneDNN mode only and exactly when `onednn_expected`, on a oneDNN primitive, and that
/// both results have one type and shape; how their integers differ.
inline int_difference onednn_against_reference(const std::string& op, const sgmatch::exec::value& x,
                                               const std::vector<sgmatch::exec::value>& rest, std::optional<std::size_t> computed,
                                               const std::vector<std::pair<std::string, sgmatch::attribute>>& attrs,
                                               bool onednn_expected) {
    const auto [want, ref_stats] = run_one(op, x, rest, computed, attrs, sgmatch::exec::mode::reference);
    const auto [got, st] = run_one(op, x, rest, computed, attrs, sgmatch::exec::mode::onednn);
    CHECK(ref_stats.onednn_typed_nodes == 0);
    CHECK(st.typed_nodes == 1);
    CHECK(st.onednn_typed_nodes == (onednn_expected ? 1 : 0));
    REQUIRE(got.type() == want.type());
    REQUIRE(got.dims() == want.dims());
    return compare_ints(got, want);
}

}  // namespace test
