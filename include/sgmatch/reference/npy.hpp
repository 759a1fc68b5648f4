// sgmatch/reference/npy.hpp - NumPy .npy files in and out of xtensor arrays (what PyTorch and
// NumPy scripts hand over: inputs, expected outputs).
//
//   xt::xarray<float> a = sgmatch::reference::read_npy("input.npy");
//   sgmatch::reference::write_npy("out.npy", a);
//
// Reads format 1.0 to 3.0, little-endian float32, float64, int32 or int64 (converted to float),
// C order; anything else, a truncated file or a header that does not parse is an npy_error
// naming the file. Writes float32, format 1.0.
#pragma once

#include <algorithm>
#include <cctype>
#include <cstdint>
#include <cstring>
#include <fstream>
#include <stdexcept>
#include <string>
#include <vector>

#include "sgmatch/reference/xtensor.hpp"

#include "sgmatch/detail/config.hpp"
#include "sgmatch/reference/kernels.hpp"

SGMATCH_BEGIN_NAMESPACE
namespace reference {

class npy_error : public std::runtime_error {
public:
    using std::runtime_error::runtime_error;
};

inline array read_npy(const std::string& path) {
    auto fail = [&](const std::string& why) -> array { throw npy_error("sgmatch::reference::read_npy: " + path + ": " + why); };
    std::ifstream in(path, std::ios::binary);
    if (!in) return fail("cannot open");
    char magic[8];
    in.read(magic, 8);
    if (!in || std::memcmp(magic, "\x93NUMPY", 6) != 0) return fail("not a .npy file");
    std::uint32_t header_len = 0;
    unsigned char b[4] = {0, 0, 0, 0};
    in.read(reinterpret_cast<char*>(b), magic[6] == 1 ? 2 : 4);
    header_len = b[0] | (b[1] << 8u) | (b[2] << 16u) | (static_cast<std::uint32_t>(b[3]) << 24u);
    if (!in || header_len > 65536) return fail("a header that does not parse");
    std::string h(header_len, '\0');
    in.read(h.data(), header_len);
    auto field = [&](const char* key) -> std::string {
        const auto k = h.find(std::string("'") + key + "'");
        const auto colon = k == std::string::npos ? std::string::npos : h.find(':', k);
        if (colon == std::string::npos) fail(std::string("no ") + key + " in the header");
        return h.substr(colon + 1);
    };
    const std::string descr = field("descr");
    const auto q = descr.find('\'');
    if (q == std::string::npos || q + 4 > descr.size()) return fail("a descr that does not parse");
    const std::string type = descr.substr(q + 1, 3);
    const std::string order = field("fortran_order");
    if (order.find("True") < order.find(',')) return fail("Fortran order is not supported");
    const std::string shape_text = field("shape");
    std::vector<std::size_t> shape;
    const auto open = shape_text.find('(');
    if (open == std::string::npos) return fail("a shape that does not parse");
    for (std::size_t i = open + 1; i < shape_text.size() && shape_text[i] != ')';) {
        if (std::isdigit(static_cast<unsigned char>(shape_text[i]))) {
            std::size_t used = 0;
            shape.push_back(std::stoull(shape_text.substr(i), &used));
            i += used;
        } else {
            ++i;
        }
    }
    std::size_t count = 1;
    for (auto d : shape) {
        if (d != 0 && count > (std::size_t{1} << 40) / d) return fail("a shape too large");
        count *= d;
    }
    array a = xt::zeros<float>(shape);
    auto read_as = [&](auto tag) {
        using T = decltype(tag);
        std::vector<T> v(a.size());
        in.read(reinterpret_cast<char*>(v.data()), static_cast<std::streamsize>(v.size() * sizeof(T)));
        if (!in) fail("fewer values than its shape");
        std::transform(v.begin(), v.end(), a.begin(), [](T x) { return static_cast<float>(x); });
    };
    if (type == "<f4") read_as(float{});
    else if (type == "<f8") read_as(double{});
    else if (type == "<i4") read_as(std::int32_t{});
    else if (type == "<i8") read_as(std::int64_t{});
    else return fail("element type " + type + " is not supported");
    return a;
}

inline void write_npy(const std::string& path, const array& a) {
    std::string h = "{'descr': '<f4', 'fortran_order': False, 'shape': (";
    for (std::size_t i = 0; i < a.dimension(); ++i) h += std::to_string(a.shape()[i]) + (a.dimension() == 1 ? "," : i + 1 < a.dimension() ? ", " : "");
    h += "), }";
    while ((10 + h.size() + 1) % 64 != 0) h += ' ';
    h += '\n';
    std::ofstream out(path, std::ios::binary);
    if (!out) throw npy_error("sgmatch::reference::write_npy: cannot write " + path);
    out.write("\x93NUMPY\x01\x00", 8);
    const unsigned char len[2] = {static_cast<unsigned char>(h.size() & 0xff), static_cast<unsigned char>(h.size() >> 8)};
    out.write(reinterpret_cast<const char*>(len), 2);
    out << h;
    out.write(reinterpret_cast<const char*>(a.data()), static_cast<std::streamsize>(a.size() * sizeof(float)));
}

}  // namespace reference
SGMATCH_END_NAMESPACE
