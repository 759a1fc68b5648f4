// sgmatch/ops/text.hpp - descriptions of the ops on token ids: TfIdfVectorizer.
#pragma once

#include <algorithm>
#include <cstdint>
#include <vector>

#include "sgmatch/detail/config.hpp"
#include "sgmatch/ops/schema.hpp"
#include "sgmatch/ops/shape_rules.hpp"
#include "sgmatch/pattern/vocabulary.hpp"

SGMATCH_BEGIN_NAMESPACE
namespace ops {
namespace rules {

/// TfIdfVectorizer: [max(ngram_indexes) + 1] for a row of tokens [C], [N, that] for rows [N, C].
inline std::vector<dims> tfidf(const shape_inputs& in, const op_attrs& a) {
    const dims& x = in.shapes.at(0);
    if (x.empty() || x.size() > 2) fail(a, "input " + to_string(x) + " is not [C] or [N, C]");
    const dims idx = a.ints("ngram_indexes");
    if (idx.empty()) fail(a, "ngram_indexes is empty");
    const std::int64_t width = *std::max_element(idx.begin(), idx.end()) + 1;
    if (*std::min_element(idx.begin(), idx.end()) < 0 || width > (std::int64_t{1} << 30)) fail(a, "ngram_indexes holds an index out of range");
    return {x.size() == 1 ? dims{width} : dims{x[0], width}};
}

}  // namespace rules

namespace schemas {

/// TfIdfVectorizer: per row of int32 or int64 tokens, how often each n-gram of pool_int64s
/// occurs (n from min_gram_length to max_gram_length, the n-gram's tokens 1 to max_skip_count + 1
/// apart; ngram_counts[k]: where the (k+1)-grams start in the pool), at its ngram_indexes
/// position; TF the count, IDF its weight where it occurs, TFIDF the count times the weight
/// (weights 1 when absent). f32. String pools are not implemented.
inline constexpr input_spec tfidf_inputs[] = {{"X"}};
inline constexpr attr_spec tfidf_attrs[] = {{"max_gram_length", attr_type::integer, def::required(), support::range(1, 64)},
                                            {"min_gram_length", attr_type::integer, def::required(), support::range(1, 64)},
                                            {"max_skip_count", attr_type::integer, def::required(), support::range(0, 1 << 20)},
                                            {"mode", attr_type::string, def::required(), support::one_of("TF|IDF|TFIDF")},
                                            {"ngram_counts", attr_type::integers, def::required(), support::at_least(0)},
                                            {"ngram_indexes", attr_type::integers, def::required(), support::at_least(0)},
                                            {"pool_int64s", attr_type::integers, def::absent(), support::any()},
                                            {"pool_strings", attr_type::string, def::absent(), support::none("string pools (sgmatch has no strings)")},
                                            {"weights", attr_type::reals, def::absent(), support::any()}};
inline constexpr op_schema tfidf_vectorizer =
    typed(describe<TfIdfVectorizer>(tfidf_inputs, tfidf_attrs, type_rule{type_rule::from::fixed, 0, dtype::f32, {}}),
          types::bit(dtype::i32) | types::bit(dtype::i64));

}  // namespace schemas

// The ops layer's facets of each op's entry (its vocabulary tag): the description and the shape rule.
template <> inline constexpr const op_schema* description<TfIdfVectorizer> = &schemas::tfidf_vectorizer;
template <> inline constexpr shape_rule shape_rule_for<TfIdfVectorizer> = rules::tfidf;

}  // namespace ops
SGMATCH_END_NAMESPACE
