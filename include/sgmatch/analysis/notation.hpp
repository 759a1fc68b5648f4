// sgmatch/analysis/notation.hpp - a readable one-line notation of a pattern.
//
//   op<Conv>() >> optional(op<BatchNorm>()) >> repeat<0, 3>(op<Relu>() | op<Clip>())
//   prints as  Conv >> BatchNormalization? >> [Relu|Clip]{0,3}
//
// Operands print in parentheses (`Add(_, const)`), captures as `Conv:conv`, back-references as
// `&x`, predicates in braces after the node (`Conv{group==1}`), escaping values with a trailing
// `!`, pinned ports as `.in(1)` / `.out(1)`, named sub-patterns by their name.
#pragma once

#include <cstddef>
#include <string>
#include <tuple>
#include <type_traits>
#include <utility>

#include "sgmatch/detail/config.hpp"
#include "sgmatch/detail/type_name.hpp"
#include "sgmatch/pattern/ast.hpp"
#include "sgmatch/pattern/fold.hpp"
#include "sgmatch/pattern/tag.hpp"

SGMATCH_BEGIN_NAMESPACE
namespace detail {

template <class T, class = void>
struct has_describe : std::false_type {};
template <class T>
struct has_describe<T, std::void_t<decltype(std::declval<const T&>().describe())>>
    : std::true_type {};

template <class F>
std::string describe_pred(const F& f) {
    if constexpr (has_describe<F>::value)
        return f.describe();
    else
        return "where";
}

template <class... Ts>
std::string tag_names(pat::tags<Ts...>) {
    std::string s;
    ((s += (s.empty() ? "" : "|"), s += std::string(op_tag_traits<Ts>::name())), ...);
    return s;
}

// Whether a postfix operator needs brackets around p.
template <class P>
struct is_compound : std::false_type {};
template <class... Ps>
struct is_compound<pat::chain<Ps...>> : std::true_type {};
template <class... Ps>
struct is_compound<pat::alt<Ps...>> : std::true_type {};
template <class T1, class T2, class... Ts, class... Os>
struct is_compound<pat::op<pat::tags<T1, T2, Ts...>, Os...>> : std::bool_constant<sizeof...(Os) == 0> {};

template <class... Strings>
std::string join(const char* sep, const Strings&... parts) {
    std::string s;
    bool first = true;
    ((s += (first ? "" : sep), s += parts, first = false), ...);
    return s;
}

// Brackets around the notation s of a P, where a postfix operator needs them.
template <class P>
std::string bracket(const std::string& s) {
    if constexpr (is_compound<P>::value)
        return "[" + s + "]";
    else
        return s;
}

// The notation as a fold over the pattern (pattern/fold.hpp): each node's text from its
// children's.
struct notation_alg {
    std::string operator()(const pat::any&) const { return "_"; }
    std::string operator()(const pat::graph_input&) const { return "input"; }
    std::string operator()(const pat::constant&) const { return "const"; }
    std::string operator()(const pat::invalid&) const { return "<invalid>"; }
    template <class T>
    std::string operator()(const pat::ref<T>&) const {
        return "&" + type_name<T>();
    }
    template <class T, class... Os, class... Rs>
    std::string operator()(const pat::op<T, Os...>&, const Rs&... operands) const {
        if constexpr (sizeof...(Os) > 0)
            return tag_names(T{}) + "(" + join(", ", operands...) + ")";
        else
            return tag_names(T{});
    }
    template <class... Ps, class... Rs>
    std::string operator()(const pat::chain<Ps...>&, const Rs&... items) const {
        return join(" >> ", items...);
    }
    template <class... Ps, class... Rs>
    std::string operator()(const pat::alt<Ps...>&, const Rs&... items) const {
        return join("|", bracket<Ps>(items)...);
    }
    template <class P>
    std::string operator()(const pat::opt<P>&, const std::string& s) const {
        return bracket<P>(s) + "?";
    }
    template <std::size_t Lo, std::size_t Hi, class P>
    std::string operator()(const pat::rep<Lo, Hi, P>&, const std::string& s) const {
        return bracket<P>(s) + "{" + std::to_string(Lo) + "," + std::to_string(Hi) + "}";
    }
    template <class P, class F>
    std::string operator()(const pat::guarded<P, F>& p, const std::string& s) const {
        return bracket<P>(s) + "{" + describe_pred(p.pred) + "}";
    }
    template <class T, class P>
    std::string operator()(const pat::cap<T, P>&, const std::string& s) const {
        return bracket<P>(s) + ":" + type_name<T>();
    }
    template <class P>
    std::string operator()(const pat::esc<P>&, const std::string& s) const {
        return bracket<P>(s) + "!";
    }
    template <std::size_t I, class P>
    std::string operator()(const pat::in_port<I, P>&, const std::string& s) const {
        return bracket<P>(s) + ".in(" + std::to_string(I) + ")";
    }
    template <std::size_t I, class P>
    std::string operator()(const pat::out_port<I, P>&, const std::string& s) const {
        return bracket<P>(s) + ".out(" + std::to_string(I) + ")";
    }
    template <class T, class P>
    std::string operator()(const pat::named<T, P>&, const std::string&) const {
        return type_name<T>();
    }
};

}  // namespace detail

/// The readable notation of pattern p.
template <class P>
std::string notation(const P& p) {
    static_assert(is_pattern_v<P>, "sgmatch::notation(p): p must be a pattern");
    if constexpr (is_pattern_v<P>)
        return pat::fold(p, detail::notation_alg{});
    else
        return {};
}

SGMATCH_END_NAMESPACE
