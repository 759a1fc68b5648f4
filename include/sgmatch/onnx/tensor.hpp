// sgmatch/onnx/tensor.hpp - ONNX TensorProto values: element types, checked decoding into
// typed bytes, and `.pb` tensor files (the ONNX test data's input_0.pb, output_0.pb).
//
//   onnx::tensor t = onnx::read_tensor_file("test_data_set_0/input_0.pb");
//   t.type;  t.dims;  t.bytes;  t.to_floats();
//
// Decoding checks before it allocates: dims must be non-negative and their product within
// `max_bytes`; the stored data (raw_data or the typed field) must hold exactly that many
// elements. External data is read relative to the model's directory and may not leave it.
// Every refusal is a load_error naming the tensor.
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

#include <onnx/onnx_pb.h>

#if defined(__unix__) || defined(__APPLE__)
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>
#endif

#include "sgmatch/detail/checked.hpp"
#include "sgmatch/detail/config.hpp"
#include "sgmatch/exec/value.hpp"
#include "sgmatch/graph/types.hpp"

SGMATCH_BEGIN_NAMESPACE
namespace onnx {

/// Raised when a model or a tensor file cannot be loaded: names the node, tensor or field.
class load_error : public std::runtime_error {
public:
    using std::runtime_error::runtime_error;
};

/// A decoded tensor: element type, shape and the elements in their native layout.
struct tensor {
    std::string name;
    dtype type = dtype::unknown;
    std::vector<std::int64_t> dims;
    std::vector<unsigned char> bytes;

    std::size_t element_count() const {
        std::size_t n = 1;
        for (auto d : dims) n *= static_cast<std::size_t>(d);
        return n;
    }
    const_tensor_view view() const {
        return const_tensor_view{type, dims.data(), dims.size(), bytes.empty() ? nullptr : bytes.data()};
    }
    std::vector<float> to_floats() const { return bytes.empty() ? std::vector<float>{} : *view().to_floats(); }
    /// The tensor as a run-time value (a copy of its elements).
    exec::value to_value() const {
        exec::value v = exec::value::zeros(type, dims);
        if (!bytes.empty()) std::memcpy(v.mutable_data(), bytes.data(), std::min(bytes.size(), v.bytes()));
        return v;
    }
};

/// sgmatch's element type of an ONNX TensorProto data type; unknown for those it has none of
/// (strings, complex, 16-bit and unsigned 32/64-bit integers).
inline dtype dtype_of(std::int32_t t) {
    using T = ::onnx::TensorProto;
    switch (t) {
        case T::FLOAT: return dtype::f32;
        case T::FLOAT16: return dtype::f16;
        case T::BFLOAT16: return dtype::bf16;
        case T::DOUBLE: return dtype::f64;
        case T::INT8: return dtype::i8;
        case T::UINT8: return dtype::u8;
        case T::INT32: return dtype::i32;
        case T::INT64: return dtype::i64;
        case T::BOOL: return dtype::boolean;
        case T::INT16: return dtype::i16;
        case T::UINT16: return dtype::u16;
        case T::UINT32: return dtype::u32;
        case T::UINT64: return dtype::u64;
        default: return dtype::unknown;
    }
}

/// The ONNX name of a TensorProto data type, for messages.
inline std::string onnx_type_name(std::int32_t t) {
    const auto* d = ::onnx::TensorProto::DataType_descriptor();
    const auto* v = d->FindValueByNumber(t);
    return v ? v->name() : "type " + std::to_string(t);
}

namespace detail {

// A whole unsigned decimal number (every character a digit, no sign, no overflow); nullopt
// otherwise: "12abc", "-1" and "" are not numbers.
inline std::optional<std::uint64_t> whole_number(const std::string& s) {
    if (s.empty() || s.size() > 20) return std::nullopt;
    std::uint64_t v = 0;
    for (const char c : s) {
        if (c < '0' || c > '9') return std::nullopt;
        const auto d = static_cast<std::uint64_t>(c - '0');
        if (v > (UINT64_MAX - d) / 10) return std::nullopt;
        v = v * 10 + d;
    }
    return v;
}

// `want` bytes at `offset` of `file`, which must be a regular file: a FIFO, a device or a
// directory is refused before anything is read (opened without blocking, checked on the open
// descriptor). `what` names the tensor and `shown` the file in messages.
inline std::vector<unsigned char> regular_file_bytes(const std::filesystem::path& file, std::uint64_t offset, std::uint64_t want,
                                                     const std::string& what, const std::string& shown) {
#if defined(__unix__) || defined(__APPLE__)
    const int fd = ::open(file.c_str(), O_RDONLY | O_NONBLOCK | O_CLOEXEC);
    if (fd < 0) throw load_error(what + ": cannot open external data '" + shown + "'");
    struct stat st {};
    if (::fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
        ::close(fd);
        throw load_error(what + ": external data '" + shown + "' is not a regular file (refused)");
    }
    const auto size = static_cast<std::uint64_t>(st.st_size);
    if (offset > size || size - offset < want) {
        ::close(fd);
        throw load_error(what + ": external data '" + shown + "' is shorter than its dims need");
    }
    std::vector<unsigned char> out(static_cast<std::size_t>(want));
    std::uint64_t done = 0;
    while (done < want) {
        const ssize_t r = ::pread(fd, out.data() + done, static_cast<std::size_t>(want - done), static_cast<off_t>(offset + done));
        if (r <= 0) {
            ::close(fd);
            throw load_error(what + ": reading external data '" + shown + "' failed");
        }
        done += static_cast<std::uint64_t>(r);
    }
    ::close(fd);
    return out;
#else
    if (!std::filesystem::is_regular_file(file)) throw load_error(what + ": external data '" + shown + "' is not a regular file (refused)");
    std::ifstream in(file, std::ios::binary);
    if (!in) throw load_error(what + ": cannot open external data '" + shown + "'");
    in.seekg(0, std::ios::end);
    const auto size = static_cast<std::uint64_t>(in.tellg());
    if (offset > size || size - offset < want) throw load_error(what + ": external data '" + shown + "' is shorter than its dims need");
    std::vector<unsigned char> out(static_cast<std::size_t>(want));
    in.seekg(static_cast<std::streamoff>(offset));
    in.read(reinterpret_cast<char*>(out.data()), static_cast<std::streamsize>(want));
    if (!in) throw load_error(what + ": reading external data '" + shown + "' failed");
    return out;
#endif
}

// Reads `length` bytes at `offset` of a file beside the model; the path may not leave `base`.
inline std::vector<unsigned char> external_bytes(const ::onnx::TensorProto& t, const std::string& base, std::uint64_t want) {
    namespace fs = std::filesystem;
    std::string location;
    std::uint64_t offset = 0, length = want;
    for (const auto& kv : t.external_data()) {
        if (kv.key() == "location") {
            location = kv.value();
        } else if (kv.key() == "offset" || kv.key() == "length") {
            const auto v = whole_number(kv.value());
            if (!v)
                throw load_error("sgmatch::onnx: tensor '" + t.name() + "': external data " + kv.key() + " '" + kv.value() +
                                 "' is not a whole non-negative number");
            (kv.key() == "offset" ? offset : length) = *v;
        }
    }
    if (location.empty()) throw load_error("sgmatch::onnx: tensor '" + t.name() + "': external data without a location");
    if (base.empty())
        throw load_error("sgmatch::onnx: tensor '" + t.name() + "': external data needs the model's directory (load from a path)");
    const fs::path dir = fs::weakly_canonical(fs::path(base));
    const fs::path file = fs::weakly_canonical(dir / fs::path(location));
    const auto rel = file.lexically_relative(dir);
    if (fs::path(location).is_absolute() || rel.empty() || *rel.begin() == "..")
        throw load_error("sgmatch::onnx: tensor '" + t.name() + "': external data '" + location +
                         "' is outside the model's directory (refused)");
    if (length != want)
        throw load_error("sgmatch::onnx: tensor '" + t.name() + "': external data length " + std::to_string(length) +
                         " disagrees with its dims (" + std::to_string(want) + " bytes)");
    return regular_file_bytes(file, offset, want, "sgmatch::onnx: tensor '" + t.name() + "'", location);
}

template <class To, class Field>
void narrow_into(std::vector<unsigned char>& out, const Field& f) {
    for (std::size_t i = 0; i < static_cast<std::size_t>(f.size()); ++i) {
        const To v = static_cast<To>(f.Get(static_cast<int>(i)));
        std::memcpy(out.data() + i * sizeof(To), &v, sizeof(To));
    }
}

// A TensorProto's name, element type and dims into `out`, checked; returns how many elements
// they hold (their bytes at most `max_bytes`).
inline std::uint64_t decode_header(const ::onnx::TensorProto& t, tensor& out, std::uint64_t max_bytes) {
    out.name = t.name();
    const std::string what = "sgmatch::onnx: tensor '" + t.name() + "'";
    out.type = dtype_of(t.data_type());
    if (out.type == dtype::unknown)
        throw load_error(what + ": element type " + onnx_type_name(t.data_type()) + " is not supported");
    std::uint64_t count = 1;
    for (const auto d : t.dims()) {
        if (d < 0) throw load_error(what + ": negative dim " + std::to_string(d));
        if (d > 0 && count > max_bytes / static_cast<std::uint64_t>(d))
            throw load_error(what + ": dims hold more than " + std::to_string(max_bytes) + " bytes (refused)");
        count *= static_cast<std::uint64_t>(d);
        out.dims.push_back(d);
    }
    if (count * size_of(out.type) > max_bytes)
        throw load_error(what + ": dims hold more than " + std::to_string(max_bytes) + " bytes (refused)");
    if (!sgmatch::detail::checked_product(out.dims))
        throw load_error(what + ": dims whose non-zero product overflows int64 (an empty tensor's strides would; refused)");
    return count;
}

// The elements of `t` into out.bytes, once decode_header has read its type and dims (`count`
// elements): the stored data must hold exactly that many.
inline void decode_data(const ::onnx::TensorProto& t, tensor& out, std::uint64_t count, const std::string& base) {
    const std::uint64_t want = count * size_of(out.type);
    const std::string what = "sgmatch::onnx: tensor '" + t.name() + "'";
    if (t.data_location() == ::onnx::TensorProto::EXTERNAL) {
        out.bytes = detail::external_bytes(t, base, want);
        return;
    }
    auto expect = [&](std::uint64_t got, const char* field) {
        if (got != count)
            throw load_error(what + ": " + field + " holds " + std::to_string(got) + " values for dims of " + std::to_string(count));
    };
    if (t.has_raw_data()) {
        if (t.raw_data().size() != want)
            throw load_error(what + ": raw_data holds " + std::to_string(t.raw_data().size()) + " bytes for dims of " +
                             std::to_string(want));
        out.bytes.assign(t.raw_data().begin(), t.raw_data().end());
        return;
    }
    // The typed field must hold `count` values before anything is allocated: dims that claim
    // gigabytes with no data behind them are refused at the cost of reading them.
    const std::uint64_t held = [&]() -> std::uint64_t {
        switch (out.type) {
            case dtype::f32: return static_cast<std::uint64_t>(t.float_data_size());
            case dtype::f64: return static_cast<std::uint64_t>(t.double_data_size());
            case dtype::i64: return static_cast<std::uint64_t>(t.int64_data_size());
            case dtype::u32:
            case dtype::u64: return static_cast<std::uint64_t>(t.uint64_data_size());
            default: return static_cast<std::uint64_t>(t.int32_data_size());
        }
    }();
    if (held != count) {
        const char* field = out.type == dtype::f32 ? "float_data" : out.type == dtype::f64 ? "double_data" : out.type == dtype::i64 ? "int64_data"
                          : out.type == dtype::u32 || out.type == dtype::u64 ? "uint64_data" : "int32_data";
        expect(held, field);
    }
    out.bytes.resize(static_cast<std::size_t>(want));
    switch (out.type) {
        case dtype::f32:
            expect(static_cast<std::uint64_t>(t.float_data_size()), "float_data");
            if (count) std::memcpy(out.bytes.data(), t.float_data().data(), want);
            break;
        case dtype::f64:
            expect(static_cast<std::uint64_t>(t.double_data_size()), "double_data");
            if (count) std::memcpy(out.bytes.data(), t.double_data().data(), want);
            break;
        case dtype::i64:
            expect(static_cast<std::uint64_t>(t.int64_data_size()), "int64_data");
            if (count) std::memcpy(out.bytes.data(), t.int64_data().data(), want);
            break;
        case dtype::i32:
            expect(static_cast<std::uint64_t>(t.int32_data_size()), "int32_data");
            if (count) std::memcpy(out.bytes.data(), t.int32_data().data(), want);
            break;
        case dtype::i8: expect(static_cast<std::uint64_t>(t.int32_data_size()), "int32_data"); detail::narrow_into<std::int8_t>(out.bytes, t.int32_data()); break;
        case dtype::u8:
        case dtype::boolean: expect(static_cast<std::uint64_t>(t.int32_data_size()), "int32_data"); detail::narrow_into<std::uint8_t>(out.bytes, t.int32_data()); break;
        case dtype::f16:
        case dtype::bf16:
        case dtype::u16: expect(static_cast<std::uint64_t>(t.int32_data_size()), "int32_data"); detail::narrow_into<std::uint16_t>(out.bytes, t.int32_data()); break;
        case dtype::i16: expect(static_cast<std::uint64_t>(t.int32_data_size()), "int32_data"); detail::narrow_into<std::int16_t>(out.bytes, t.int32_data()); break;
        case dtype::u32: expect(static_cast<std::uint64_t>(t.uint64_data_size()), "uint64_data"); detail::narrow_into<std::uint32_t>(out.bytes, t.uint64_data()); break;
        case dtype::u64:
            expect(static_cast<std::uint64_t>(t.uint64_data_size()), "uint64_data");
            if (count) std::memcpy(out.bytes.data(), t.uint64_data().data(), want);
            break;
        case dtype::unknown: break;
    }
}

}  // namespace detail

/// Decodes a TensorProto, checking it first. `base`: the model's directory (external data).
inline tensor decode(const ::onnx::TensorProto& t, const std::string& base = {},
                     std::uint64_t max_bytes = std::uint64_t{4} << 30) {
    tensor out;
    const std::uint64_t count = detail::decode_header(t, out, max_bytes);
    detail::decode_data(t, out, count, base);
    return out;
}

/// A TensorProto file (the ONNX test data's `input_0.pb`), decoded.
inline tensor read_tensor_file(const std::string& path) {
    if (!std::filesystem::is_regular_file(path)) throw load_error("sgmatch::onnx: tensor file '" + path + "' is not a regular file");
    std::ifstream in(path, std::ios::binary);
    if (!in) throw load_error("sgmatch::onnx: cannot open tensor file '" + path + "'");
    const std::string bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    ::onnx::TensorProto t;
    if (bytes.size() > static_cast<std::size_t>(INT32_MAX) || !t.ParseFromArray(bytes.data(), static_cast<int>(bytes.size())))
        throw load_error("sgmatch::onnx: '" + path + "' is not a TensorProto");
    return decode(t, std::filesystem::path(path).parent_path().string());
}

}  // namespace onnx
SGMATCH_END_NAMESPACE
