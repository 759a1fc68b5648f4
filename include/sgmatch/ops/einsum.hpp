// sgmatch/ops/einsum.hpp - Einsum's description, and its equation read against the input
// shapes into one loop plan that the shape rule and the kernel (exec/kernels/einsum.hpp) share.
//
//   "bij,bjk->bik"  batched matmul        "ii->i"  a diagonal        "i,i"  an inner product
//   "...ij->...ji"  a transpose of the last two axes, any leading ones
//
// - Labels are letters (a-z, A-Z); "..." stands for the same run of leading-or-middle axes in
//   each term that has it, broadcast against each other as numpy broadcasts (right-aligned,
//   extents equal or 1).
// - A label repeated within one term reads that term's diagonal (its extents must agree).
//   Across terms, one label's extents must agree or be 1 (broadcast, as numpy.einsum does).
// - Without "->" the output is "..." (when a term has it) followed by the labels that occur
//   exactly once in the whole equation, in ASCII order (upper case first), as numpy and the ONNX
//   specification define it: "bij,bjk" sums over b and j, "ii" is the trace. With "->", each
//   output label occurs in some input and only once in the output; inputs with "..." need it in
//   the output.
// - Every label not in the output is summed over.
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "sgmatch/detail/config.hpp"
#include "sgmatch/ops/schema.hpp"
#include "sgmatch/ops/shape_rules.hpp"
#include "sgmatch/pattern/vocabulary.hpp"

SGMATCH_BEGIN_NAMESPACE
namespace ops {

/// An equation applied to input shapes. The loop runs over `extents`: the broadcast ellipsis
/// axes first, then each label in the order it first occurs. `inputs[k][j]` is the loop axis
/// input k's axis j walks; `output[j]` the loop axis of output axis j; loop axes in no output
/// axis are summed over.
struct einsum_plan {
    dims extents;
    std::vector<std::vector<std::size_t>> inputs;
    std::vector<std::size_t> output;
    dims out_dims;
};

namespace rules {

// One term: its labels in order, with '.' for the place of the ellipsis (at most one).
inline std::string einsum_term(const op_attrs& a, std::string_view eq, std::string_view t) {
    std::string out;
    bool ellipsis = false;
    for (std::size_t i = 0; i < t.size(); ++i) {
        const char c = t[i];
        if ((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z')) {
            out += c;
        } else if (c == '.' && t.substr(i, 3) == "..." && !ellipsis) {
            ellipsis = true;
            out += '.';
            i += 2;
        } else {
            rules::fail(a, "equation '" + std::string(eq) + "': term '" + std::string(t) +
                        "' holds something other than letters and one '...'");
        }
    }
    return out;
}

}  // namespace rules

/// The plan of `equation` over input shapes `shapes`; fail() names the node and what is wrong.
inline einsum_plan plan_einsum(const op_attrs& a, std::string_view equation, const std::vector<dims>& shapes) {
    std::string eq;
    for (const char c : equation)
        if (c != ' ') eq += c;
    const std::size_t arrow = eq.find("->");
    const std::string lhs = eq.substr(0, arrow);
    std::vector<std::string> terms;
    for (std::size_t from = 0;;) {
        const std::size_t comma = lhs.find(',', from);
        terms.push_back(rules::einsum_term(a, equation, std::string_view(lhs).substr(from, comma == std::string::npos ? std::string::npos : comma - from)));
        if (comma == std::string::npos) break;
        from = comma + 1;
    }
    if (terms.size() != shapes.size())
        rules::fail(a, "equation '" + std::string(equation) + "' has " + std::to_string(terms.size()) + " input terms for " +
                    std::to_string(shapes.size()) + " inputs");
    // The ellipsis axes of every term, broadcast together (right-aligned).
    dims ell;
    std::vector<std::size_t> ell_rank(terms.size(), 0);
    bool any_ellipsis = false;
    for (std::size_t k = 0; k < terms.size(); ++k) {
        const bool has = terms[k].find('.') != std::string::npos;
        const std::size_t labels = terms[k].size() - (has ? 1 : 0);
        if (shapes[k].size() < labels || (!has && shapes[k].size() != labels))
            rules::fail(a, "equation '" + std::string(equation) + "': input " + std::to_string(k) + " has rank " +
                        std::to_string(shapes[k].size()) + ", its term '" + terms[k] + "' names " + std::to_string(labels) + " axes");
        if (!has) continue;
        any_ellipsis = true;
        ell_rank[k] = shapes[k].size() - labels;
        const std::size_t at = terms[k].find('.');
        const dims part(shapes[k].begin() + static_cast<std::ptrdiff_t>(at),
                        shapes[k].begin() + static_cast<std::ptrdiff_t>(at + ell_rank[k]));
        if (part.size() > ell.size()) ell.insert(ell.begin(), part.size() - ell.size(), 1);
        for (std::size_t i = 0; i < part.size(); ++i) {
            std::int64_t& e = ell[ell.size() - part.size() + i];
            if (e != part[i] && e != 1 && part[i] != 1)
                rules::fail(a, "equation '" + std::string(equation) + "': the '...' axes of input " + std::to_string(k) + " " +
                            to_string(part) + " do not broadcast with " + to_string(ell));
            if (e == 1) e = part[i];
        }
    }
    einsum_plan p;
    p.extents = ell;
    std::string labels;  // loop axis ell.size() + i is labels[i]
    std::vector<int> occurs(128, 0);
    p.inputs.resize(terms.size());
    for (std::size_t k = 0; k < terms.size(); ++k) {
        std::size_t axis = 0;
        std::string seen;
        for (const char c : terms[k]) {
            if (c == '.') {
                for (std::size_t i = 0; i < ell_rank[k]; ++i, ++axis) p.inputs[k].push_back(ell.size() - ell_rank[k] + i);
                continue;
            }
            const std::int64_t d = shapes[k][axis];
            std::size_t at = labels.find(c);
            if (at == std::string::npos) {
                at = labels.size();
                labels += c;
                p.extents.push_back(d);
            } else {
                std::int64_t& e = p.extents[ell.size() + at];
                const bool repeated = seen.find(c) != std::string::npos;
                if (e != d && (repeated || (e != 1 && d != 1)))
                    rules::fail(a, "equation '" + std::string(equation) + "': label '" + std::string(1, c) + "' has extent " +
                                std::to_string(d) + " in input " + std::to_string(k) + " and " + std::to_string(e) + " elsewhere");
                if (e == 1) e = d;
            }
            ++occurs[static_cast<unsigned char>(c)];  // every occurrence: "ii" is a trace
            seen += c;
            p.inputs[k].push_back(ell.size() + at);
            ++axis;
        }
    }
    // The output's axes.
    std::string rhs;
    if (arrow != std::string::npos) {
        rhs = rules::einsum_term(a, equation, std::string_view(eq).substr(arrow + 2));
        if (any_ellipsis && rhs.find('.') == std::string::npos && !ell.empty())
            rules::fail(a, "equation '" + std::string(equation) + "': the inputs have '...' axes the output does not keep");
    } else {
        if (any_ellipsis) rhs = ".";
        std::string once;
        for (const char c : labels)
            if (occurs[static_cast<unsigned char>(c)] == 1) once += c;
        std::sort(once.begin(), once.end());
        rhs += once;
    }
    std::string used;
    for (const char c : rhs) {
        if (c == '.') {
            for (std::size_t i = 0; i < ell.size(); ++i) p.output.push_back(i);
            continue;
        }
        const std::size_t at = labels.find(c);
        if (at == std::string::npos || used.find(c) != std::string::npos)
            rules::fail(a, "equation '" + std::string(equation) + "': output label '" + std::string(1, c) +
                        (at == std::string::npos ? "' is in no input" : "' occurs twice"));
        used += c;
        p.output.push_back(ell.size() + at);
    }
    for (const std::size_t l : p.output) p.out_dims.push_back(p.extents[l]);
    return p;
}

namespace rules {

/// Einsum: the output's axes by the equation.
inline std::vector<dims> einsum(const shape_inputs& in, const op_attrs& a) {
    return {plan_einsum(a, a.s("equation"), in.shapes).out_dims};
}

}  // namespace rules

namespace schemas {

inline constexpr input_spec einsum_inputs[] = {{"Inputs", input_spec::presence::variadic}};
inline constexpr attr_spec einsum_attrs[] = {{"equation", attr_type::string, def::required(), support::any()}};
/// Einsum on the numeric types (sums in double, or wrapping in the integer type).
inline constexpr op_schema einsum = typed(describe<Einsum>(einsum_inputs, einsum_attrs), types::numeric);

}  // namespace schemas

// The ops layer's facets of each op's entry (its vocabulary tag): the description and the shape rule.
template <> inline constexpr const op_schema* description<Einsum> = &schemas::einsum;
template <> inline constexpr shape_rule shape_rule_for<Einsum> = rules::einsum;

}  // namespace ops
SGMATCH_END_NAMESPACE
