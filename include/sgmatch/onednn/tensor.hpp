// sgmatch/onednn/tensor.hpp - layout-carrying tensors exchanged by sgmatch's oneDNN kernels.
//
// A tensor is a oneDNN memory with its descriptor: fused kernels hand their output on in the
// layout their primitive chose (NHWC or blocked), and the next kernel reorders only when it
// needs another one. Callers wrap their own memory with tensor::view (plain row-major layout, no
// copy) and read results back with to_plain() / copy_to().
#pragma once

#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <mutex>
#include <new>
#include <unordered_map>
#include <stdexcept>
#include <string>
#include <vector>

#include <oneapi/dnnl/dnnl.hpp>

#include "sgmatch/detail/config.hpp"
#include "sgmatch/onednn/compat.hpp"

SGMATCH_BEGIN_NAMESPACE
namespace onednn {

using dims = dnnl::memory::dims;

/// Raised when a oneDNN kernel cannot be built or run for the shapes or attributes it was
/// given; the message names the kernel and the shapes.
class kernel_error : public std::runtime_error {
public:
    using std::runtime_error::runtime_error;
};

/// Runs f; a dnnl::error it raises (a shape or layout oneDNN refuses) becomes a kernel_error.
template <class F>
decltype(auto) guarded(F&& f) {
    try {
        return f();
    } catch (const dnnl::error& e) {
        throw kernel_error(std::string("sgmatch::onednn: oneDNN refused: ") + e.what());
    }
}

/// The CPU engine all sgmatch kernels use.
inline const dnnl::engine& cpu_engine() {
    static const dnnl::engine e(dnnl::engine::kind::cpu, 0);
    return e;
}

/// This thread's stream on the CPU engine, made once per thread (a stream costs allocations;
/// a CPU stream runs a primitive to completion on the calling thread).
inline dnnl::stream& cpu_stream() {
    thread_local dnnl::stream s(cpu_engine());
    return s;
}

inline std::string to_string(const dims& d) {
    std::string s = "[";
    for (std::size_t i = 0; i < d.size(); ++i) s += (i ? "," : "") + std::to_string(d[i]);
    return s + "]";
}

/// The plain row-major layout tag for a rank (a, ab, abc, ...).
inline dnnl::memory::format_tag plain_tag(std::size_t rank) {
    using t = dnnl::memory::format_tag;
    switch (rank) {
        case 1: return t::a;
        case 2: return t::ab;
        case 3: return t::abc;
        case 4: return t::abcd;
        case 5: return t::abcde;
        case 6: return t::abcdef;
        default: throw kernel_error("sgmatch::onednn: tensors of rank " + std::to_string(rank) + " are not supported");
    }
}

/// The channel-blocked layout tag for a rank of 3 to 5 (nCw16c, nChw16c, nCdhw16c on AVX-512;
/// blocks of 8 below it): what oneDNN's jit convolutions read and write fastest.
inline dnnl::memory::format_tag blocked_tag(std::size_t rank) {
    using t = dnnl::memory::format_tag;
    static const bool sixteen = [] {
        const auto isa = static_cast<unsigned>(dnnl::get_effective_cpu_isa());
        const auto avx512 = static_cast<unsigned>(dnnl::cpu_isa::avx512_core);
        return (isa & avx512) == avx512;
    }();
    switch (rank) {
        case 3: return sixteen ? t::aBc16b : t::aBc8b;
        case 4: return sixteen ? t::aBcd16b : t::aBcd8b;
        case 5: return sixteen ? t::aBcde16b : t::aBcde8b;
        default: throw kernel_error("sgmatch::onednn: no channel-blocked layout for rank " + std::to_string(rank));
    }
}

namespace detail {

/// Buffers recycled by size: a kernel run allocates its destination and scratchpad, and fresh
/// pages cost a page fault each (measured: a fused 1x1 conv at 56x56 ran 2-2.4x slower with a
/// fresh destination every call). Buffers come back here when their last tensor goes away and
/// serve the next request of the same size. Thread-safe; keeps at most `cap` bytes idle.
class buffer_pool {
public:
    static buffer_pool& instance() {
        static buffer_pool p;
        return p;
    }
    std::shared_ptr<void> get(std::size_t bytes) {
        bytes = round_up(bytes);
        {
            std::lock_guard<std::mutex> lock(mu_);
            auto it = free_.find(bytes);
            if (it != free_.end() && !it->second.empty()) {
                void* p = it->second.back();
                it->second.pop_back();
                idle_ -= bytes;
                return wrap(p, bytes);
            }
        }
        void* p = std::aligned_alloc(64, bytes);
        if (p == nullptr) throw std::bad_alloc();
        return wrap(p, bytes);
    }
    std::size_t idle_bytes() const {
        std::lock_guard<std::mutex> lock(mu_);
        return idle_;
    }
    ~buffer_pool() {
        for (auto& [n, list] : free_)
            for (void* p : list) std::free(p);
    }

private:
    static constexpr std::size_t cap = std::size_t(1) << 30;
    static std::size_t round_up(std::size_t b) { return b == 0 ? 64 : (b + 63) / 64 * 64; }
    std::shared_ptr<void> wrap(void* p, std::size_t bytes) {
        return std::shared_ptr<void>(p, [this, bytes](void* q) { put(q, bytes); });
    }
    void put(void* p, std::size_t bytes) noexcept {
        try {
            std::lock_guard<std::mutex> lock(mu_);
            if (idle_ + bytes <= cap) {
                free_[bytes].push_back(p);
                idle_ += bytes;
                return;
            }
        } catch (...) {
        }
        std::free(p);
    }
    mutable std::mutex mu_;
    std::unordered_map<std::size_t, std::vector<void*>> free_;
    std::size_t idle_ = 0;
};

}  // namespace detail

inline dnnl::memory::desc plain_desc(const dims& d) {
    return dnnl::memory::desc(d, dnnl::memory::data_type::f32, plain_tag(d.size()));
}

class tensor {
public:
    tensor() = default;
    explicit tensor(dnnl::memory m) : mem_(std::move(m)) {}

    /// A plain-layout view over caller-owned f32 memory (no copy; the caller keeps it alive).
    static tensor view(const float* data, const dims& shape) {
        return tensor(dnnl::memory(plain_desc(shape), cpu_engine(), const_cast<float*>(data)));
    }
    /// A new tensor with layout d (library-owned memory from a recycling pool, uninitialized).
    static tensor allocate(const dnnl::memory::desc& d) {
        tensor t;
        t.owner_ = detail::buffer_pool::instance().get(d.get_size());
        t.mem_ = dnnl::memory(d, cpu_engine(), t.owner_.get());
        return t;
    }
    /// A tensor with layout d at `offset` bytes into `block` (a planned arena), which it keeps alive.
    static tensor within(std::shared_ptr<void> block, std::size_t offset, const dnnl::memory::desc& d) {
        tensor t;
        t.mem_ = dnnl::memory(d, cpu_engine(), static_cast<char*>(block.get()) + offset);
        t.owner_ = std::move(block);
        return t;
    }
    /// A new plain tensor holding a copy of values.
    static tensor from_values(const std::vector<float>& values, const dims& shape) {
        tensor t = allocate(plain_desc(shape));
        if (values.size() != t.element_count())
            throw kernel_error("sgmatch::onednn::tensor: " + std::to_string(values.size()) + " values for shape " +
                               onednn::to_string(shape));
        if (!values.empty()) std::memcpy(t.mem_.get_data_handle(), values.data(), values.size() * sizeof(float));
        return t;
    }

    bool empty() const { return !mem_; }
    /// What keeps the buffer alive, when the tensor allocated it (null for a view).
    const std::shared_ptr<void>& owner() const { return owner_; }
    const dnnl::memory& memory() const { return mem_; }
    dnnl::memory::desc desc() const { return mem_.get_desc(); }
    dims shape() const { return compat::dims_of(desc()); }
    std::size_t element_count() const {
        std::size_t n = 1;
        for (auto d : shape()) n *= static_cast<std::size_t>(d);
        return n;
    }
    bool is_plain() const { return desc() == plain_desc(shape()); }

    /// This tensor in layout d: itself when it has it already, else a reordered copy.
    tensor in_layout(const dnnl::memory::desc& d, const dnnl::stream& s) const {
        if (desc() == d) return *this;
        tensor out = allocate(d);
        dnnl::reorder(mem_, out.mem_).execute(s, const_cast<dnnl::memory&>(mem_), out.mem_);
        return out;
    }
    /// Copy into d's layout in `dst` (which must have d as its desc).
    void reorder_into(const tensor& dst, const dnnl::stream& s) const {
        dnnl::reorder(mem_, dst.mem_).execute(s, const_cast<dnnl::memory&>(mem_), const_cast<dnnl::memory&>(dst.mem_));
    }
    /// The same plain buffer read with another shape of as many elements (no copy).
    tensor reshaped(const dims& shape) const {
        std::size_t n = 1;
        for (auto d : shape) n *= static_cast<std::size_t>(d);
        if (!is_plain() || n != element_count())
            throw kernel_error("sgmatch::onednn::tensor::reshaped: " + onednn::to_string(this->shape()) + " -> " +
                               onednn::to_string(shape) + " needs a plain tensor of the same element count");
        tensor t;
        t.owner_ = owner_;
        t.mem_ = dnnl::memory(plain_desc(shape), cpu_engine(), mem_.get_data_handle());
        return t;
    }
    /// The values in plain row-major order.
    std::vector<float> to_plain() const {
        std::vector<float> out(element_count());
        copy_to(out.data());
        return out;
    }
    /// Write the values, plain row-major, to out (element_count() floats).
    void copy_to(float* out) const {
        dnnl::stream s(cpu_engine());
        tensor dst = view(out, shape());
        reorder_into(dst, s);
        s.wait();
    }

private:
    dnnl::memory mem_;
    std::shared_ptr<void> owner_;  // the buffer, when the tensor allocated it
};

}  // namespace onednn
SGMATCH_END_NAMESPACE
