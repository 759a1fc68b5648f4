// sgmatch/detail/pod_array.hpp - a growable array of trivially copyable T kept in malloc'd memory.
//
// The built-in graph's hot arrays grow while a backend rewrites a large graph. std::vector grows
// by allocating anew and copying, which for a 1M-node graph means tens of megabytes copied and
// as many freshly faulted pages in the middle of a rewrite. This array grows with realloc, which
// glibc serves for large blocks with mremap: the pages move, nothing is copied. Elements are
// aligned to Align (a realloc'd block keeps malloc's alignment only, so the start is re-aligned
// inside the block when it moves).
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <new>
#include <type_traits>
#include <utility>

#include "sgmatch/detail/config.hpp"

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
    ~pod_array() { std::free(raw_); }

    void swap(pod_array& o) noexcept {
        std::swap(raw_, o.raw_);
        std::swap(data_, o.data_);
        std::swap(size_, o.size_);
        std::swap(cap_, o.cap_);
    }

    std::size_t size() const { return size_; }
    std::size_t capacity() const { return cap_; }
    bool empty() const { return size_ == 0; }
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
        if (n > (static_cast<std::size_t>(-1) - Align) / sizeof(T)) throw std::bad_alloc();
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
    void resize(std::size_t n, const T& v) {
        if (n > cap_) reserve(n);
        for (std::size_t i = size_; i < n; ++i) data_[i] = v;
        size_ = n;
    }
    void assign(std::size_t n, const T& v) {
        size_ = 0;
        resize(n, v);
    }
    void clear() { size_ = 0; }

private:
    char* raw_ = nullptr;
    T* data_ = nullptr;
    std::size_t size_ = 0, cap_ = 0;
};

}  // namespace detail
SGMATCH_END_NAMESPACE
