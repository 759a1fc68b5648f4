// Test helpers for numeric kernels: seeded random data, arrays from values, the error measure
// the oneDNN tests use (max |got - expect| / max(1, |expect|)), and whether sanitizers are on.
#pragma once

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <random>
#include <vector>

#include "sgmatch/reference/xtensor.hpp"  // either header layout

namespace test {

inline constexpr bool sanitized() {
#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
    return true;
#elif defined(__has_feature)
#if __has_feature(address_sanitizer) || __has_feature(thread_sanitizer)
    return true;
#else
    return false;
#endif
#else
    return false;
#endif
}

inline std::vector<float> random_values(std::size_t n, std::mt19937& rng, float scale) {
    std::uniform_real_distribution<float> d(-scale, scale);
    std::vector<float> v(n);
    for (auto& x : v) x = d(rng);
    return v;
}

inline xt::xarray<float> make_array(const std::vector<float>& v, const std::vector<std::int64_t>& dims) {
    std::vector<std::size_t> shape(dims.begin(), dims.end());
    xt::xarray<float> a = xt::zeros<float>(shape);
    if (a.size() != v.size()) throw std::invalid_argument("make_array: value count does not match the shape");
    std::copy(v.begin(), v.end(), a.begin());
    return a;
}

inline xt::xarray<float> random_array(const std::vector<std::int64_t>& dims, std::mt19937& rng, float scale) {
    std::size_t n = 1;
    for (auto d : dims) n *= static_cast<std::size_t>(d);
    return make_array(random_values(n, rng, scale), dims);
}

inline std::vector<std::int64_t> dims_of(const xt::xarray<float>& a) {
    return std::vector<std::int64_t>(a.shape().begin(), a.shape().end());
}

/// max |got - expect| / max(1, |expect|); infinity when the shapes differ or a value is NaN.
inline double max_rel_error(const xt::xarray<float>& got, const xt::xarray<float>& expect) {
    if (got.shape() != expect.shape()) return std::numeric_limits<double>::infinity();
    double worst = 0;
    for (std::size_t i = 0; i < got.size(); ++i) {
        const double g = got.data()[i], e = expect.data()[i];
        if (std::isnan(g) != std::isnan(e)) return std::numeric_limits<double>::infinity();
        if (std::isnan(g)) continue;
        worst = std::max(worst, std::fabs(g - e) / std::max(1.0, std::fabs(e)));
    }
    return worst;
}

}  // namespace test
