// sgmatch/onednn/tensor.hpp - layout-carrying tensors exchanged by sgmatch's oneDNN kernels.
//
// A tensor is a oneDNN memory with its descriptor: fused kernels hand their output on in the
// layout their primitive chose (NHWC or blocked), and the next kernel reorders only when it
// needs another one. Callers wrap their own memory with tensor::view (plain row-major layout, no
// copy) and read results back with to_plain() / copy_to().
#pragma once

#include <cstdint>
#include <cstring>
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

/// The CPU engine all sgmatch kernels use.
inline const dnnl::engine& cpu_engine() {
    static const dnnl::engine e(dnnl::engine::kind::cpu, 0);
    return e;
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
    /// A new tensor with layout d (library-owned memory, uninitialized).
    static tensor allocate(const dnnl::memory::desc& d) { return tensor(dnnl::memory(d, cpu_engine())); }
    /// A new plain tensor holding a copy of values.
    static tensor from_values(const std::vector<float>& values, const dims& shape) {
        tensor t = allocate(plain_desc(shape));
        if (values.size() != t.element_count())
            throw kernel_error("sgmatch::onednn::tensor: " + std::to_string(values.size()) + " values for shape " +
                               onednn::to_string(shape));
        std::memcpy(t.mem_.get_data_handle(), values.data(), values.size() * sizeof(float));
        return t;
    }

    bool empty() const { return !mem_; }
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
};

}  // namespace onednn
SGMATCH_END_NAMESPACE
