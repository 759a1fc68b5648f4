// sgmatch/detail/type_name.hpp - readable name of a type, for messages (no promises).
#pragma once

#include <string>
#include <string_view>

#include "sgmatch/detail/config.hpp"

SGMATCH_BEGIN_NAMESPACE
namespace detail {

template <class T>
std::string_view raw_type_signature() {
#if defined(__clang__) || defined(__GNUC__)
    return __PRETTY_FUNCTION__;
#else
    return __FUNCSIG__;
#endif
}

// "conv" for `struct conv;` in any namespace (the last component of the name).
template <class T>
std::string type_name() {
    std::string_view s = raw_type_signature<T>();
    auto at = s.find("T = ");
    if (at == std::string_view::npos) return std::string(s);
    s.remove_prefix(at + 4);
    auto end = s.find_first_of(";]");
    s = s.substr(0, end);
    for (std::string_view prefix : {"struct ", "class "})
        if (s.substr(0, prefix.size()) == prefix) s.remove_prefix(prefix.size());
    if (s.find('<') == std::string_view::npos) {
        auto colons = s.rfind("::");
        if (colons != std::string_view::npos) s.remove_prefix(colons + 2);
    }
    return std::string(s);
}

}  // namespace detail
SGMATCH_END_NAMESPACE
