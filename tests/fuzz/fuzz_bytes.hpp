// tests/fuzz/fuzz_bytes.hpp - a fuzz target's input read a byte at a time (zeros past the end).
#pragma once

#include <cstddef>
#include <cstdint>

namespace fuzz {

struct bytes {
    const std::uint8_t* p;
    std::size_t n;
    std::uint8_t next() {
        if (n == 0) return 0;
        --n;
        return *p++;
    }
    std::int64_t small() { return static_cast<std::int64_t>(next() % 17) - 8; }  // -8..8
    bool empty() const { return n == 0; }
};

}  // namespace fuzz
