// sgmatch/detail/config.hpp - version and namespace macros (no promises).
#pragma once

#define SGMATCH_VERSION_MAJOR 0
#define SGMATCH_VERSION_MINOR 1
#define SGMATCH_VERSION_PATCH 0

// g++ 12 reports a false -Wrestrict inside std::string's operator+(const char*, string&&) at
// -O3 in C++20 mode (GCC bug 105329). sgmatch's headers build messages that way, so they turn
// that one warning off for their own code; the user's code keeps it.
#if defined(__GNUC__) && !defined(__clang__)
#define SGMATCH_DETAIL_WARNINGS_PUSH \
    _Pragma("GCC diagnostic push") _Pragma("GCC diagnostic ignored \"-Wrestrict\"")
#define SGMATCH_DETAIL_WARNINGS_POP _Pragma("GCC diagnostic pop")
#else
#define SGMATCH_DETAIL_WARNINGS_PUSH
#define SGMATCH_DETAIL_WARNINGS_POP
#endif

#define SGMATCH_BEGIN_NAMESPACE      \
    SGMATCH_DETAIL_WARNINGS_PUSH     \
    namespace sgmatch {              \
    inline namespace v0 {
#define SGMATCH_END_NAMESPACE \
    }                         \
    }                         \
    SGMATCH_DETAIL_WARNINGS_POP

// Keeps a function out of line. The engine's recursive dispatch functions use it: inlined into
// each other they cost compile time and buy no speed (docs/design.md, "Compile time").
#if defined(__GNUC__) || defined(__clang__)
#define SGMATCH_NOINLINE __attribute__((noinline))
#else
#define SGMATCH_NOINLINE
#endif

// Separate compilation (docs/design.md, "Compiled once"): with SGMATCH_SEPARATE_COMPILATION
// defined in every translation unit of a program, the headers that have an impl/*.ipp declare
// their functions only, and the program's one translation unit per part that includes the part's
// src.hpp defines them, not inline. Without it (the default) the header includes its .ipp and
// the functions are inline.
#if defined(SGMATCH_SEPARATE_COMPILATION)
#define SGMATCH_DECL
#else
#define SGMATCH_DECL inline
#endif
