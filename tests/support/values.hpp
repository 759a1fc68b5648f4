// Test helpers for typed values (exec::value) and the executor: a value's elements as a vector,
// and the message of the exec_error a run raises ("" when it raises none).
#pragma once

#include <map>
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

}  // namespace test
