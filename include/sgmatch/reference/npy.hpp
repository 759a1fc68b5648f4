// sgmatch/reference/npy.hpp - NumPy .npy files in and out of xtensor arrays (what PyTorch and
// NumPy scripts hand over: inputs, expected outputs).
//
//   xt::xarray<float> a = sgmatch::reference::read_npy("input.npy");
//   sgmatch::reference::write_npy("out.npy", a);
//
// Reads format 1.0 to 3.0, little-endian float32, float64, int32 or int64 (converted to float),
// C order; anything else, a file shorter than its shape or a header that does not parse
// strictly (a dim that is not a whole number) is an npy_error naming the file, raised before
// the array is allocated. Writes float32, format 1.0.
#pragma once

#include <algorithm>
#include <cctype>
#include <cstdint>
#include <cstring>
#include <fstream>
#include <functional>
#include <istream>
#include <stdexcept>
#include <string>
#include <vector>

#include "sgmatch/reference/xtensor.hpp"

#include "sgmatch/detail/checked.hpp"
#include "sgmatch/detail/config.hpp"
#include "sgmatch/reference/kernels.hpp"

SGMATCH_BEGIN_NAMESPACE
namespace reference {

class npy_error : public std::runtime_error {
public:
    using std::runtime_error::runtime_error;
};

namespace detail {

// The header of a .npy file: a Python dict literal {'descr': '<f4', 'fortran_order': False,
// 'shape': (1, 3, 8, 8), } read strictly (each key once, dims whole non-negative numbers).
struct npy_header {
    std::string descr;
    bool fortran = false;
    std::vector<std::size_t> shape;
};

inline npy_header parse_npy_header(const std::string& h, const std::function<void(const std::string&)>& fail) {
    npy_header out;
    std::size_t i = 0;
    auto space = [&] {
        while (i < h.size() && (h[i] == ' ' || h[i] == '\n' || h[i] == '\t')) ++i;
    };
    auto expect = [&](char c, const char* where) {
        space();
        if (i >= h.size() || h[i] != c) fail(std::string("a header that does not parse: '") + c + "' expected " + where);
        ++i;
    };
    auto quoted = [&] {
        space();
        if (i >= h.size() || (h[i] != '\'' && h[i] != '"')) fail("a header that does not parse: a quoted string expected");
        const char q = h[i++];
        const auto close = h.find(q, i);
        if (close == std::string::npos) fail("a header that does not parse: an unterminated string");
        std::string v = h.substr(i, close - i);
        i = close + 1;
        return v;
    };
    bool seen_descr = false, seen_order = false, seen_shape = false;
    expect('{', "at the start");
    for (;;) {
        space();
        if (i < h.size() && h[i] == '}') break;
        const std::string key = quoted();
        expect(':', "after a key");
        space();
        if (key == "descr" && !seen_descr) {
            out.descr = quoted();
            seen_descr = true;
        } else if (key == "fortran_order" && !seen_order) {
            if (h.compare(i, 4, "True") == 0) out.fortran = true, i += 4;
            else if (h.compare(i, 5, "False") == 0) i += 5;
            else fail("a fortran_order that is neither True nor False");
            seen_order = true;
        } else if (key == "shape" && !seen_shape) {
            expect('(', "to open the shape");
            for (;;) {
                space();
                if (i < h.size() && h[i] == ')') break;
                const std::size_t from = i;
                while (i < h.size() && h[i] != ',' && h[i] != ')' && h[i] != ' ') ++i;
                const std::string dim = h.substr(from, i - from);
                bool digits = !dim.empty() && dim.size() <= 18;
                for (char c : dim) digits = digits && c >= '0' && c <= '9';
                if (!digits) fail("dim '" + dim + "' of the shape is not a whole non-negative number under 10^18");
                out.shape.push_back(static_cast<std::size_t>(std::stoull(dim)));
                space();
                if (i < h.size() && h[i] == ',') ++i;
                else if (i >= h.size() || h[i] != ')') fail("a shape that does not parse");
            }
            ++i;
            seen_shape = true;
        } else {
            fail("an unexpected or repeated key '" + key + "' in the header");
        }
        space();
        if (i < h.size() && h[i] == ',') ++i;
        else if (i >= h.size() || h[i] != '}') fail("a header that does not parse: ',' or '}' expected");
    }
    ++i;
    space();
    if (i != h.size()) fail("a header that does not parse: text after its closing '}'");
    if (!seen_descr || !seen_order || !seen_shape) fail("a header without descr, fortran_order and shape");
    return out;
}

}  // namespace detail

/// A .npy file's values read from `in` (`name` in messages), as float32. The header is read
/// strictly and the data's length checked against the shape before anything is allocated.
inline array read_npy(std::istream& in, const std::string& name) {
    auto fail = [&](const std::string& why) -> array { throw npy_error("sgmatch::reference::read_npy: " + name + ": " + why); };
    char magic[8];
    in.read(magic, 8);
    if (!in || std::memcmp(magic, "\x93NUMPY", 6) != 0) return fail("not a .npy file");
    if (magic[6] < 1 || magic[6] > 3) return fail("format version " + std::to_string(static_cast<int>(magic[6])) + " is not 1, 2 or 3");
    std::uint32_t header_len = 0;
    unsigned char b[4] = {0, 0, 0, 0};
    in.read(reinterpret_cast<char*>(b), magic[6] == 1 ? 2 : 4);
    header_len = b[0] | (b[1] << 8u) | (b[2] << 16u) | (static_cast<std::uint32_t>(b[3]) << 24u);
    if (!in || header_len > 65536) return fail("a header that does not parse");
    std::string h(header_len, '\0');
    in.read(h.data(), header_len);
    if (!in) return fail("a header shorter than its length");
    const detail::npy_header head = detail::parse_npy_header(h, [&](const std::string& why) { fail(why); });
    if (head.fortran) return fail("Fortran order is not supported");
    std::size_t size = 0;
    if (head.descr == "<f4") size = 4;
    else if (head.descr == "<f8") size = 8;
    else if (head.descr == "<i4") size = 4;
    else if (head.descr == "<i8") size = 8;
    else return fail("element type " + head.descr + " is not supported (little-endian f4, f8, i4, i8)");
    const auto count = sgmatch::detail::checked_product(head.shape);
    if (!count || *count > (std::int64_t{1} << 40)) return fail("a shape too large");
    // The data must be there before the array is made.
    const auto here = in.tellg();
    in.seekg(0, std::ios::end);
    const auto end = in.tellg();
    in.seekg(here);
    if (here < 0 || end < here || static_cast<std::uint64_t>(end - here) < static_cast<std::uint64_t>(*count) * size)
        return fail("the data is shorter than its shape needs (" + std::to_string(static_cast<std::uint64_t>(*count) * size) + " bytes)");
    array a = xt::zeros<float>(head.shape);
    auto read_as = [&](auto tag) {
        using T = decltype(tag);
        std::vector<T> v(a.size());
        in.read(reinterpret_cast<char*>(v.data()), static_cast<std::streamsize>(v.size() * sizeof(T)));
        if (!in) fail("fewer values than its shape");
        std::transform(v.begin(), v.end(), a.begin(), [](T x) { return static_cast<float>(x); });
    };
    if (head.descr == "<f4") read_as(float{});
    else if (head.descr == "<f8") read_as(double{});
    else if (head.descr == "<i4") read_as(std::int32_t{});
    else read_as(std::int64_t{});
    return a;
}

inline array read_npy(const std::string& path) {
    std::ifstream in(path, std::ios::binary);
    if (!in) throw npy_error("sgmatch::reference::read_npy: " + path + ": cannot open");
    return read_npy(in, path);
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
