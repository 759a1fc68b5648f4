// Reference kernels checked by hand-computed values (the oracle needs its own oracle).
#if defined(__GNUC__) && !defined(__clang__)
// g++ 12 -O3 in C++20 mode reports a false -Wrestrict inside std::string's operator+ (GCC bug
// 105329); sgmatch's headers silence it for their own code (detail/config.hpp), this file too.
#pragma GCC diagnostic ignored "-Wrestrict"
#endif
#include <doctest/doctest.h>

#include <cmath>
#include <cstdlib>
#include <fstream>
#include <sstream>

#include "sgmatch/reference/kernels.hpp"
#include "sgmatch/reference/npy.hpp"

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

TEST_CASE("conv_transpose on values worked out by hand") {
    // 1-D, x = [1, 2], w = [1, 10, 100], stride 2: each input spreads its taps from 2 i onward,
    // y[t] = sum over i of x[i] w[t - 2 i] = [1, 10, 100 + 2, 20, 200].
    const array x = {{{1.0f, 2.0f}}};
    const array w = {{{1.0f, 10.0f, 100.0f}}};
    const array y = reference::conv_transpose(x, w, xt::zeros<float>({std::size_t(0)}), {{2}, {0}, {0}, {1}, 1});
    REQUIRE(y.shape() == std::vector<std::size_t>{1, 1, 5});
    const float want[] = {1, 10, 102, 20, 200};
    for (std::size_t i = 0; i < 5; ++i) CHECK(y(0, 0, i) == want[i]);
    // pads 1 / 1 crop one value at each end; output_padding 1 adds one at the end (from pads_end);
    // a bias adds to all.
    const array yc = reference::conv_transpose(x, w, array{0.5f}, {{2}, {1}, {1}, {1}, 1}, {1});
    REQUIRE(yc.shape() == std::vector<std::size_t>{1, 1, 4});
    const float want_c[] = {10.5f, 102.5f, 20.5f, 200.5f};
    for (std::size_t i = 0; i < 4; ++i) CHECK(yc(0, 0, i) == want_c[i]);
    // Groups: two input channels, each with its own output channel; weights [C=2, O/G=1, k=1].
    const array x2 = {{{1.0f, 2.0f}, {3.0f, 4.0f}}};
    array w2 = xt::zeros<float>({2, 1, 1});
    w2(0, 0, 0) = 2.0f;
    w2(1, 0, 0) = -1.0f;
    const array yg = reference::conv_transpose(x2, w2, xt::zeros<float>({std::size_t(0)}), {{1}, {0}, {0}, {1}, 2});
    REQUIRE(yg.shape() == std::vector<std::size_t>{1, 2, 2});
    CHECK(yg(0, 0, 1) == 4.0f);
    CHECK(yg(0, 1, 0) == -3.0f);
}

TEST_CASE("LRN and Pad on values worked out by hand") {
    // LRN, size 3 over 3 channels of one pixel: x = 1, 2, 3; window sums of squares 5, 14, 13.
    array x = xt::zeros<float>({1, 3, 1, 1});
    x(0, 0, 0, 0) = 1, x(0, 1, 0, 0) = 2, x(0, 2, 0, 0) = 3;
    const array l = reference::lrn(x, 3, 0.3f, 0.75f, 2.0f);
    CHECK(l(0, 0, 0, 0) == doctest::Approx(1.0 / std::pow(2.0 + 0.1 * 5, 0.75)));
    CHECK(l(0, 1, 0, 0) == doctest::Approx(2.0 / std::pow(2.0 + 0.1 * 14, 0.75)));
    CHECK(l(0, 2, 0, 0) == doctest::Approx(3.0 / std::pow(2.0 + 0.1 * 13, 0.75)));
    // Size 2: the window is c .. c + 1 (floor((2 - 1) / 2) = 0 before, 1 after).
    const array l2 = reference::lrn(x, 2, 0.2f, 1.0f, 1.0f);
    CHECK(l2(0, 0, 0, 0) == doctest::Approx(1.0 / (1.0 + 0.1 * 5)));
    CHECK(l2(0, 2, 0, 0) == doctest::Approx(3.0 / (1.0 + 0.1 * 9)));

    const array row = {{1.0f, 2.0f, 3.0f}};
    const array c = reference::pad(row, {0, 2, 0, 1}, reference::pad_mode::constant, -1.0f);
    REQUIRE(c.shape() == std::vector<std::size_t>{1, 6});
    const float want_c[] = {-1, -1, 1, 2, 3, -1};
    for (std::size_t i = 0; i < 6; ++i) CHECK(c(0, i) == want_c[i]);
    const array r = reference::pad(row, {0, 2, 0, 2}, reference::pad_mode::reflect);
    const float want_r[] = {3, 2, 1, 2, 3, 2, 1};
    REQUIRE(r.shape() == std::vector<std::size_t>{1, 7});
    for (std::size_t i = 0; i < 7; ++i) CHECK(r(0, i) == want_r[i]);
    const array e = reference::pad(row, {1, 1, 0, 0}, reference::pad_mode::edge);
    REQUIRE(e.shape() == std::vector<std::size_t>{2, 4});
    CHECK(e(0, 0) == 1.0f);
    CHECK(e(1, 3) == 3.0f);
    const array crop = reference::pad(row, {0, -1, 0, -1});  // negative pads crop
    REQUIRE(crop.shape() == std::vector<std::size_t>{1, 1});
    CHECK(crop(0, 0) == 2.0f);
    CHECK_THROWS_AS(reference::pad(row, {0, 3, 0, 0}, reference::pad_mode::reflect), reference::kernel_error);
    CHECK_THROWS_AS(reference::pad(row, {0, 1}), reference::kernel_error);
}

TEST_CASE(".npy files: written and read back, NumPy's own bytes read, bad files are errors") {
    const std::string dir = std::string(std::getenv("TMPDIR") ? std::getenv("TMPDIR") : "/tmp");
    const array a = {{1.5f, -2.0f, 3.25f}, {0.0f, 4.0f, -1.0f}};
    reference::write_npy(dir + "/sgmatch_npy_test.npy", a);
    const array b = reference::read_npy(dir + "/sgmatch_npy_test.npy");
    CHECK(b.shape() == a.shape());
    CHECK(b == a);
    // The bytes numpy.save writes for np.array([[1, 2], [3, 4]], dtype=np.int64), by hand.
    std::string h = "{'descr': '<i8', 'fortran_order': False, 'shape': (2, 2), }";
    while ((10 + h.size() + 1) % 64 != 0) h += ' ';
    h += '\n';
    {
        std::ofstream f(dir + "/sgmatch_npy_i8.npy", std::ios::binary);
        f.write("\x93NUMPY\x01\x00", 8);
        f.put(static_cast<char>(h.size()));
        f.put(0);
        f << h;
        for (std::int64_t v : {1, 2, 3, 4}) f.write(reinterpret_cast<const char*>(&v), 8);
    }
    const array c = reference::read_npy(dir + "/sgmatch_npy_i8.npy");
    CHECK(c == array{{1.0f, 2.0f}, {3.0f, 4.0f}});
    {
        std::ofstream f(dir + "/sgmatch_npy_bad.npy", std::ios::binary);
        f << "not numpy";
    }
    CHECK_THROWS_WITH_AS(reference::read_npy(dir + "/sgmatch_npy_bad.npy"), doctest::Contains("not a .npy file"), reference::npy_error);
    {  // truncated: the header says 2x2, four bytes of data follow
        std::ofstream f(dir + "/sgmatch_npy_short.npy", std::ios::binary);
        f.write("\x93NUMPY\x01\x00", 8);
        f.put(static_cast<char>(h.size()));
        f.put(0);
        f << h << "abcd";
    }
    CHECK_THROWS_WITH_AS(reference::read_npy(dir + "/sgmatch_npy_short.npy"), doctest::Contains("the data is shorter than its shape needs"),
                         reference::npy_error);
    // No elements, yet the strides of (0, 8e8, 1e10, 4) overflow int64: refused before any array is made.
    auto header_only = [](const std::string& shape) {
        const std::string d = "{'descr': '<f4', 'fortran_order': False, 'shape': " + shape + ", }";
        std::string bytes("\x93NUMPY\x01\x00", 8);
        bytes += static_cast<char>(d.size());
        bytes += '\0';
        return std::istringstream(bytes + d);
    };
    auto empty_huge = header_only("(0, 800000000, 9999999999, 4)");
    CHECK_THROWS_WITH_AS(reference::read_npy(empty_huge, "e.npy"), doctest::Contains("a shape too large"), reference::npy_error);
    auto empty_fine = header_only("(0, 3, 4)");
    CHECK(reference::read_npy(empty_fine, "f.npy").shape() == std::vector<std::size_t>{0, 3, 4});
}

TEST_CASE("NaN through the activations as ONNX (numpy) computes it: Relu, LeakyRelu, Clip, Elu, HardSigmoid keep it") {
    const float nan = std::nanf("");
    using reference::unary_kind;
    for (unary_kind k : {unary_kind::relu, unary_kind::leaky_relu, unary_kind::clip, unary_kind::elu, unary_kind::hardsigmoid}) {
        CAPTURE(static_cast<int>(k));
        CHECK(std::isnan(reference::unary_value(k, nan, 0.1f, 1.0f)));
    }
    CHECK(reference::unary_value(unary_kind::relu, -0.5f) == 0.0f);
    CHECK(reference::unary_value(unary_kind::relu, 0.5f) == 0.5f);
    CHECK(reference::unary_value(unary_kind::thresholded_relu, nan, 1.0f) == 0.0f);  // numpy where(x > alpha, x, 0)
}
