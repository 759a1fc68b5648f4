// sgmatch/exec/kernels/text.hpp - TfIdfVectorizer (ops/text.hpp) on int32 or int64 tokens.
#pragma once

#include <cstddef>
#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "sgmatch/detail/config.hpp"
#include "sgmatch/exec/kernels/typed_support.hpp"
#include "sgmatch/exec/value.hpp"
#include "sgmatch/ops/text.hpp"

SGMATCH_BEGIN_NAMESPACE
namespace exec {
namespace typed {

/// TfIdfVectorizer: the pool read once into a map from n-gram to output position.
inline typed_fn tfidf_vectorizer(const ops::op_attrs& a0, const ops::node_source&) {
    const auto min_n = static_cast<std::size_t>(a0.i("min_gram_length")), max_n = static_cast<std::size_t>(a0.i("max_gram_length"));
    if (min_n > max_n) refuse(a0, "min_gram_length " + std::to_string(min_n) + " exceeds max_gram_length " + std::to_string(max_n));
    const ops::dims pool = a0.ints("pool_int64s"), counts = a0.ints("ngram_counts"), indexes = a0.ints("ngram_indexes");
    if (!a0.has("pool_int64s")) refuse(a0, "no pool_int64s (string pools are not implemented)");
    // counts[k]: where the (k+1)-grams start; they run to the next start (or the pool's end).
    std::map<std::vector<std::int64_t>, std::size_t> position;  // n-gram -> output index
    std::size_t ngram = 0;
    for (std::size_t k = 0; k < counts.size(); ++k) {
        const auto begin = static_cast<std::size_t>(counts[k]);
        const auto end = k + 1 < counts.size() ? static_cast<std::size_t>(counts[k + 1]) : pool.size();
        const std::size_t n = k + 1;
        if (begin > end || end > pool.size() || (end - begin) % n != 0)
            refuse(a0, "ngram_counts " + ops::to_string(counts) + " do not split the pool of " + std::to_string(pool.size()) + " into n-grams");
        for (std::size_t at = begin; at < end; at += n, ++ngram) {
            if (ngram >= indexes.size()) refuse(a0, "ngram_indexes has " + std::to_string(indexes.size()) + " positions for more n-grams");
            position.emplace(std::vector<std::int64_t>(pool.begin() + static_cast<std::ptrdiff_t>(at), pool.begin() + static_cast<std::ptrdiff_t>(at + n)),
                             static_cast<std::size_t>(indexes[ngram]));
        }
    }
    if (ngram != indexes.size()) refuse(a0, std::to_string(indexes.size()) + " ngram_indexes for " + std::to_string(ngram) + " n-grams");
    std::vector<double> weights = a0.reals("weights");
    if (!weights.empty() && weights.size() != indexes.size())
        refuse(a0, std::to_string(weights.size()) + " weights for " + std::to_string(indexes.size()) + " n-grams");
    const std::string_view mode = a0.s("mode");
    const int how = mode == "TF" ? 0 : mode == "IDF" ? 1 : 2;
    // The weight of an output position: that of the n-gram placed there.
    std::vector<double> weight_at;
    if (!weights.empty()) {
        const ops::dims& idx = indexes;
        std::size_t width = 0;
        for (auto i : idx) width = std::max(width, static_cast<std::size_t>(i) + 1);
        weight_at.assign(width, 1.0);
        for (std::size_t j = 0; j < idx.size(); ++j) weight_at[static_cast<std::size_t>(idx[j])] = weights[j];
    }
    const auto max_skip = static_cast<std::size_t>(a0.i("max_skip_count"));
    return [a = a0, position, weight_at, how, min_n, max_n, max_skip](const values& xs) {
        const value x = in(xs, 0, a).dense_value();
        if (x.type() != dtype::i32 && x.type() != dtype::i64) fail(a, "X is " + std::string(name_of(x.type())) + " (int32 or int64 taken)");
        const shape out_dims = rule(a, xs).at(0);
        const std::vector<std::int64_t> tokens = x.to_ints();
        const std::size_t rows = x.rank() == 2 ? static_cast<std::size_t>(x.dims()[0]) : 1;
        const std::size_t cols = static_cast<std::size_t>(x.dims().back()), width = static_cast<std::size_t>(out_dims.back());
        std::vector<double> count(rows * width, 0.0);
        std::vector<std::int64_t> gram;
        for (std::size_t r = 0; r < rows; ++r) {
            const std::int64_t* row = tokens.data() + r * cols;
            for (std::size_t n = min_n; n <= max_n; ++n)
                for (std::size_t skip = 0; skip <= (n == 1 ? 0 : max_skip); ++skip) {  // a 1-gram has no gaps: counted once
                    const std::size_t stride = skip + 1;
                    if ((n - 1) * stride >= cols) break;
                    for (std::size_t start = 0; start + (n - 1) * stride < cols; ++start) {
                        gram.assign(n, 0);
                        for (std::size_t k = 0; k < n; ++k) gram[k] = row[start + k * stride];
                        if (const auto it = position.find(gram); it != position.end()) count[r * width + it->second] += 1;
                    }
                }
        }
        value out = value::zeros(dtype::f32, out_dims);
        float* o = out.as<float>();
        for (std::size_t i = 0; i < count.size(); ++i) {
            const double w = weight_at.empty() ? 1.0 : weight_at[i % width];
            o[i] = static_cast<float>(how == 0 ? count[i] : how == 1 ? (count[i] > 0 ? w : 0.0) : count[i] * w);
        }
        return values{out};
    };
}

}  // namespace typed
namespace kernels {

// The typed_kernels<Tag> facets of this family's ops.
template <> inline constexpr typed_binding typed_kernels<ops::TfIdfVectorizer>{typed::tfidf_vectorizer};

}  // namespace kernels
}  // namespace exec
SGMATCH_END_NAMESPACE
