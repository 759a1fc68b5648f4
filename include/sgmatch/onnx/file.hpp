// sgmatch/onnx/file.hpp - a model file's bytes, for the time the loader parses them.
//
//   sgmatch::onnx::detail::file_bytes f(path);   // load_error when it cannot be opened or read
//   parse(f.data(), f.size());
//
// On POSIX systems the file is mapped read-only with its pages populated from the page cache:
// a model of 100 MB is ready in a few ms, where reading it into a buffer of our own allocates,
// zeroes and copies 100 MB first (about 50 ms on a 2-vCPU server). The mapping lives as long as
// the object; the parser copies what it keeps. Elsewhere, or for what cannot be mapped (a pipe,
// an empty file), the file is read into memory.
//
// Known limitation: a mapped file that another process truncates while it is being parsed
// raises SIGBUS, as with any mapping; replace model files by renaming a new one into place.
#pragma once

#include <cstddef>
#include <fstream>
#include <istream>
#include <string>

#if defined(__unix__) || defined(__APPLE__)
#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>
#define SGMATCH_ONNX_MMAP 1
#endif

#include "sgmatch/detail/config.hpp"
#include "sgmatch/onnx/tensor.hpp"  // load_error

SGMATCH_BEGIN_NAMESPACE
namespace onnx {
namespace detail {

/// Everything `in` holds, read in blocks (a model of 100 MB in a few ms); `in` ends bad() when a
/// read failed.
inline std::string read_all(std::istream& in) {
    std::string bytes;
    char block[1 << 16];
    while (in.read(block, sizeof block) || in.gcount() > 0) bytes.append(block, static_cast<std::size_t>(in.gcount()));
    return bytes;
}

class file_bytes {
public:
    explicit file_bytes(const std::string& path) {
#ifdef SGMATCH_ONNX_MMAP
        const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
        if (fd < 0) throw load_error("sgmatch::onnx: cannot open '" + path + "'");
        struct stat st {};
        if (::fstat(fd, &st) == 0 && S_ISREG(st.st_mode) && st.st_size > 0) {
            int flags = MAP_PRIVATE;
#ifdef MAP_POPULATE
            flags |= MAP_POPULATE;  // the pages mapped now, not one fault at a time while parsing
#endif
            void* p = ::mmap(nullptr, static_cast<std::size_t>(st.st_size), PROT_READ, flags, fd, 0);
            if (p != MAP_FAILED) {
                map_ = p;
                size_ = static_cast<std::size_t>(st.st_size);
            }
        }
        ::close(fd);
        if (map_ != nullptr) return;
#endif
        std::ifstream in(path, std::ios::binary);
        if (!in) throw load_error("sgmatch::onnx: cannot open '" + path + "'");
        bytes_ = read_all(in);
        if (in.bad()) throw load_error("sgmatch::onnx: cannot read '" + path + "'");
        size_ = bytes_.size();
    }
    file_bytes(const file_bytes&) = delete;
    file_bytes& operator=(const file_bytes&) = delete;
    ~file_bytes() {
#ifdef SGMATCH_ONNX_MMAP
        if (map_ != nullptr) ::munmap(map_, size_);
#endif
    }

    const void* data() const { return map_ != nullptr ? map_ : static_cast<const void*>(bytes_.data()); }
    std::size_t size() const { return size_; }
    /// Whether the bytes are the file mapped (else read into memory).
    bool mapped() const { return map_ != nullptr; }

private:
    void* map_ = nullptr;
    std::size_t size_ = 0;
    std::string bytes_;
};

}  // namespace detail
}  // namespace onnx
SGMATCH_END_NAMESPACE
