// Test helpers for typed values (exec::value) and the executor: a value's elements as a vector,
// the message of the exec_error a run raises ("" when it raises none), and random values of
// small integers (ties on purpose) of a given shape.
#pragma once

#include <cstdint>
#include <cstring>
#include <map>
#include <random>
#include <string>
#include <vector>

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

}  // namespace test
