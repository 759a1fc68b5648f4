// sgmatch/detail/pod_array.hpp - a growable array of trivially copyable T kept in malloc'd memory.
//
// The built-in graph's hot arrays grow while a backend rewrites a large graph. std::vector grows
// by allocating anew and copying, which for a 1M-node graph means tens of megabytes copied and
// as many freshly faulted pages in the middle of a rewrite. On Linux, an array of 1 MiB or more
// lives in its own mapping and grows with mremap: the pages move, nothing is copied. (realloc
// does that only for blocks glibc chose to mmap, and its threshold rises as large blocks are
// freed, so in a process that copies graphs it stops doing so.) Smaller arrays, and every array
// elsewhere, grow with realloc. Elements are aligned to Align (a realloc'd block keeps malloc's
// alignment only, so the start is re-aligned inside the block when it moves).
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <new>
#include <type_traits>
#include <utility>

#include "sgmatch/detail/config.hpp"

#if defined(__linux__)
#include <sys/mman.h>
#endif
#if defined(__linux__) && defined(MREMAP_MAYMOVE)
#define SGMATCH_POD_ARRAY_MREMAP 1
#else
#define SGMATCH_POD_ARRAY_MREMAP 0
#endif

// Tests of the strong guarantee define this to an allocator that fails on demand (in an
// executable of their own: every TU that includes this header must see the same definition).
#ifndef SGMATCH_POD_ARRAY_REALLOC
#define SGMATCH_POD_ARRAY_REALLOC std::realloc
#endif

SGMATCH_BEGIN_NAMESPACE
namespace detail {

template <class T, std::size_t Align = alignof(T)>
class pod_array {
    static_assert(std::is_trivially_copyable_v<T> && std::is_trivially_destructible_v<T>,
                  "sgmatch::detail::pod_array<T>: T must be trivially copyable and destructible");
    static_assert((Align & (Align - 1)) == 0 && Align >= alignof(T), "pod_array: bad alignment");

public:
    pod_array() = default;
    pod_array(const pod_array& o) {
        if (o.size_ == 0) return;
        reserve(o.size_);
        std::memcpy(static_cast<void*>(data_), o.data_, o.size_ * sizeof(T));
        size_ = o.size_;
    }
    pod_array(pod_array&& o) noexcept { swap(o); }
    pod_array& operator=(const pod_array& o) {
        if (this != &o) {
            pod_array t(o);
            swap(t);
        }
        return *this;
    }
    pod_array& operator=(pod_array&& o) noexcept {
        pod_array t(std::move(o));
        swap(t);
        return *this;
    }
    ~pod_array() { release(); }

    void swap(pod_array& o) noexcept {
        std::swap(raw_, o.raw_);
        std::swap(data_, o.data_);
        std::swap(size_, o.size_);
        std::swap(cap_, o.cap_);
        std::swap(mapped_, o.mapped_);
    }

    std::size_t size() const { return size_; }
    std::size_t capacity() const { return cap_; }
    T* data() { return data_; }
    const T* data() const { return data_; }
    T& operator[](std::size_t i) { return data_[i]; }
    const T& operator[](std::size_t i) const { return data_[i]; }
    T* begin() { return data_; }
    T* end() { return data_ + size_; }
    const T* begin() const { return data_; }
    const T* end() const { return data_ + size_; }
    T& back() { return data_[size_ - 1]; }

    /// Capacity for n elements; throws std::bad_alloc (and changes nothing) when out of memory.
    void reserve(std::size_t n) {
        if (n <= cap_) return;
        if (n > (static_cast<std::size_t>(-1) - Align) / sizeof(T) / 2) throw std::bad_alloc();
#if SGMATCH_POD_ARRAY_MREMAP
        if (n * sizeof(T) >= map_threshold) {
            reserve_mapped(n);
            return;
        }
#endif
        const std::size_t old_off = raw_ ? static_cast<std::size_t>(reinterpret_cast<char*>(data_) - raw_) : 0;
        void* p = SGMATCH_POD_ARRAY_REALLOC(raw_, n * sizeof(T) + Align - 1);
        if (p == nullptr) throw std::bad_alloc();
        raw_ = static_cast<char*>(p);
        const auto addr = reinterpret_cast<std::uintptr_t>(raw_);
        const std::size_t off = static_cast<std::size_t>((Align - addr % Align) % Align);
        if (off != old_off && size_ != 0) std::memmove(raw_ + off, raw_ + old_off, size_ * sizeof(T));
        data_ = reinterpret_cast<T*>(raw_ + off);
        cap_ = n;
    }
    /// Capacity is reserved by the caller for the no-throw uses (the graph's commit phase);
    /// otherwise these grow geometrically.
    void push_back(const T& v) {
        if (size_ == cap_) reserve(cap_ < 8 ? 8 : 2 * cap_);
        data_[size_++] = v;
    }
    /// New elements are value-initialized.
    void resize(std::size_t n) {
        if (n > cap_) reserve(n);
        for (std::size_t i = size_; i < n; ++i) new (static_cast<void*>(data_ + i)) T();
        size_ = n;
    }

private:
    static constexpr std::size_t map_threshold = std::size_t(1) << 20;

    void release() noexcept {
#if SGMATCH_POD_ARRAY_MREMAP
        if (mapped_) {
            ::munmap(raw_, mapped_);
            return;
        }
#endif
        std::free(raw_);
    }

#if SGMATCH_POD_ARRAY_MREMAP
    // A mapping of its own (page-aligned, so every Align up to a page holds), grown in place or
    // moved by the kernel.
    void reserve_mapped(std::size_t n) {
        static_assert(Align <= 4096, "pod_array: alignment above a page");
        const std::size_t page = 4096;
        const std::size_t bytes = (n * sizeof(T) + page - 1) / page * page;
        void* p;
        if (mapped_) {
            p = ::mremap(raw_, mapped_, bytes, MREMAP_MAYMOVE);
            if (p == MAP_FAILED) throw std::bad_alloc();
        } else {
            p = ::mmap(nullptr, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
            if (p == MAP_FAILED) throw std::bad_alloc();
            if (size_ != 0) std::memcpy(p, static_cast<const void*>(data_), size_ * sizeof(T));
            std::free(raw_);
        }
        raw_ = static_cast<char*>(p);
        data_ = reinterpret_cast<T*>(raw_);
        mapped_ = bytes;
        cap_ = bytes / sizeof(T);
    }
#endif

    char* raw_ = nullptr;
    T* data_ = nullptr;
    std::size_t size_ = 0, cap_ = 0;
    std::size_t mapped_ = 0;  // bytes of raw_'s mapping, 0 when raw_ is malloc's
};

}  // namespace detail
SGMATCH_END_NAMESPACE
