// Reference kernels checked by hand-computed values (the oracle needs its own oracle).
#if defined(__GNUC__) && !defined(__clang__)
// g++ 12 -O3 in C++20 mode reports a false -Wrestrict inside std::string's operator+ (GCC bug
// 105329); sgmatch's headers silence it for their own code (detail/config.hpp), this file too.
#pragma GCC diagnostic ignored "-Wrestrict"
#endif
#include <doctest/doctest.h>

#include <cmath>

#include "sgmatch/reference/kernels.hpp"

using namespace sgmatch;
using reference::array;

TEST_CASE("softmax, global average pooling, conv and pooling on values worked out by hand") {
    const array x = {{1.0f, 2.0f, 3.0f}, {0.0f, 0.0f, 0.0f}};
    const array s = reference::softmax(x, -1);
    const double e = std::exp(1.0) + std::exp(2.0) + std::exp(3.0);
    CHECK(s(0, 2) == doctest::Approx(std::exp(3.0) / e));
    CHECK(s(1, 0) == doctest::Approx(1.0 / 3));
    const array s0 = reference::softmax(x, 0);
    CHECK(s0(0, 0) == doctest::Approx(std::exp(1.0) / (std::exp(1.0) + 1)));
    CHECK(s0(0, 0) + s0(1, 0) == doctest::Approx(1.0));

    array img = xt::zeros<float>({1, 2, 2, 2});
    for (std::size_t i = 0; i < 8; ++i) img.data()[i] = static_cast<float>(i);
    const array gp = reference::global_average_pool(img);
    REQUIRE(gp.shape() == std::vector<std::size_t>{1, 2, 1, 1});
    CHECK(gp(0, 0, 0, 0) == doctest::Approx(1.5));
    CHECK(gp(0, 1, 0, 0) == doctest::Approx(5.5));

    // 3x3 all-ones kernel, pad 1, on a 2x2 image of 1, 2, 3, 4: every output is the sum of all.
    array one = xt::ones<float>({1, 1, 3, 3});
    array im = {{{{1.0f, 2.0f}, {3.0f, 4.0f}}}};
    const array c = reference::conv(im, one, xt::zeros<float>({std::size_t(0)}), {{1, 1}, {1, 1}, {1, 1}, {1, 1}, 1});
    CHECK(c(0, 0, 0, 0) == 10.0f);
    CHECK(c(0, 0, 1, 1) == 10.0f);
    const array mp = reference::pool(im, reference::pool_kind::max, {2, 2}, {1, 1}, {0, 0}, {0, 0});
    CHECK(mp(0, 0, 0, 0) == 4.0f);
    const array ap = reference::pool(im, reference::pool_kind::average, {2, 2}, {1, 1}, {1, 1}, {0, 0});
    CHECK(ap(0, 0, 0, 0) == 1.0f);  // only the one real value in the window counts
    CHECK(ap(0, 0, 1, 1) == 2.5f);
}
