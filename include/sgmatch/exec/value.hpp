// sgmatch/exec/value.hpp - a value of the graph at run time: element type, dims, strides and
// data, owned by sgmatch or viewed in the caller's buffer.
//
//   exec::value x = exec::value::view(ptr, dtype::f32, {1, 3, 224, 224});   // no copy
//   exec::value s = exec::value::of<std::int64_t>({2}, {1, -1});             // owned
//   s.type(); s.dims(); s.as<std::int64_t>()[1];
//
// - Every element type sgmatch knows (graph/types.hpp: f32, f16, bf16, f64, i8, u8, i32, i64,
//   bool, i16, u16, u32, u64). Shape subgraphs compute int64 values, comparisons compute bool
//   masks; the executor checks each computed value's type against the one the graph declares.
// - A view keeps no ownership: the caller keeps the buffer alive while the run reads it. Strides
//   (in elements) describe a non-dense view; kernels read dense values, so a strided one is
//   copied once when read (dense()).
// - Copies are shallow: a value shares its data (a reshape is a new value over the same bytes).
// - A value may instead be a sequence of tensors (ONNX's sequence type: value::sequence), whose
//   type() is its tensors' type. It has no data of its own: read as a tensor, it is an error.
// - ONNX's optional type: an optional that holds a tensor or a sequence is that value; an empty
//   one is value::none (of a tensor or a sequence type), which holds nothing to read.
//
// Nothing here includes oneDNN or xtensor.
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <new>
#include <stdexcept>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#include <boost/hana/type.hpp>

#include "sgmatch/detail/config.hpp"
#include "sgmatch/detail/strides.hpp"
#include "sgmatch/graph/types.hpp"

SGMATCH_BEGIN_NAMESPACE
namespace exec {

/// The C++ type of an element type's values (bool for dtype::boolean; f16 and bf16 have none:
/// their 16 bits are read through the data pointer).
template <class T> inline constexpr dtype dtype_of_v = dtype::unknown;
template <> inline constexpr dtype dtype_of_v<float> = dtype::f32;
template <> inline constexpr dtype dtype_of_v<double> = dtype::f64;
template <> inline constexpr dtype dtype_of_v<std::int64_t> = dtype::i64;
template <> inline constexpr dtype dtype_of_v<std::int32_t> = dtype::i32;
template <> inline constexpr dtype dtype_of_v<std::int8_t> = dtype::i8;
template <> inline constexpr dtype dtype_of_v<std::uint8_t> = dtype::u8;
template <> inline constexpr dtype dtype_of_v<bool> = dtype::boolean;
template <> inline constexpr dtype dtype_of_v<std::int16_t> = dtype::i16;
template <> inline constexpr dtype dtype_of_v<std::uint16_t> = dtype::u16;
template <> inline constexpr dtype dtype_of_v<std::uint32_t> = dtype::u32;
template <> inline constexpr dtype dtype_of_v<std::uint64_t> = dtype::u64;
static_assert(sizeof(bool) == 1, "sgmatch: ONNX bool tensors are one byte per element");

/// Calls f(hana::type_c<T>) with the C++ type of `t`'s elements; false when `t` has none that
/// computes (unknown, f16, bf16: those only move and convert).
template <class F>
bool visit_type(dtype t, F&& f) {
    namespace hana = boost::hana;
    switch (t) {
        case dtype::f32: f(hana::type_c<float>); return true;
        case dtype::f64: f(hana::type_c<double>); return true;
        case dtype::i64: f(hana::type_c<std::int64_t>); return true;
        case dtype::i32: f(hana::type_c<std::int32_t>); return true;
        case dtype::i8: f(hana::type_c<std::int8_t>); return true;
        case dtype::u8: f(hana::type_c<std::uint8_t>); return true;
        case dtype::boolean: f(hana::type_c<bool>); return true;
        default: return false;
    }
}

/// visit_type's types and the 16-bit and unsigned 32- and 64-bit integers, which only a few
/// kernels take (Cast, the element-wise arithmetic and comparisons, Max, Min, Mod, BitShift):
/// instantiating every kernel for them would cost every user compile time for no use.
template <class F>
bool visit_any_type(dtype t, F&& f) {
    namespace hana = boost::hana;
    switch (t) {
        case dtype::i16: f(hana::type_c<std::int16_t>); return true;
        case dtype::u16: f(hana::type_c<std::uint16_t>); return true;
        case dtype::u32: f(hana::type_c<std::uint32_t>); return true;
        case dtype::u64: f(hana::type_c<std::uint64_t>); return true;
        default: return visit_type(t, std::forward<F>(f));
    }
}

using shape = std::vector<std::int64_t>;

/// Raised for a value that does not fit what is asked of it (a type, a size, a write to a view).
class value_error : public std::runtime_error {
public:
    using std::runtime_error::runtime_error;
};

inline std::string to_string(const shape& d) {
    std::string s = "[";
    for (std::size_t i = 0; i < d.size(); ++i) s += (i ? ", " : "") + std::to_string(d[i]);
    return s + "]";
}

/// Elements of a shape; a value_error for a negative dim, or a dim or a count over 2^40.
inline std::int64_t element_count(const shape& d) {
    constexpr std::int64_t cap = std::int64_t{1} << 40;
    std::int64_t n = 1, nonzero = 1;  // the product of the dims other than 0 is bounded too (strides)
    for (auto x : d) {
        if (x < 0) throw value_error("sgmatch::exec::value: a negative dim in " + to_string(d));
        if (x == 0) {
            n = 0;
            continue;
        }
        if (nonzero > cap / x) throw value_error("sgmatch::exec::value: " + to_string(d) + " has over 2^40 elements");
        nonzero *= x;
        n *= x;
    }
    return n;
}

class value {
public:
    value() = default;

    /// An owned value of zeros, its data aligned to 64 bytes (a oneDNN primitive may write it
    /// with non-temporal stores, which fault on less: resampling into a large output does).
    static value zeros(dtype t, shape dims) {
        if (size_of(t) == 0) throw value_error("sgmatch::exec::value: no element type");
        value v;
        v.type_ = t;
        v.dims_ = std::move(dims);
        const auto bytes = static_cast<std::size_t>(element_count(v.dims_)) * size_of(t);
        const std::size_t rounded = bytes == 0 ? 64 : (bytes + 63) / 64 * 64;  // aligned_alloc takes a multiple of 64
        void* p = std::aligned_alloc(64, rounded);
        if (p == nullptr) throw std::bad_alloc();
        std::shared_ptr<void> b(p, [](void* q) { std::free(q); });
        std::memset(p, 0, rounded);
        v.data_ = p;
        v.owner_ = std::move(b);
        return v;
    }
    /// An owned value holding `data` (row-major; its size must fit `dims`).
    template <class T>
    static value of(shape dims, const std::vector<T>& data) {
        static_assert(dtype_of_v<T> != dtype::unknown, "sgmatch::exec::value::of<T>: T must be an element type sgmatch has");
        value v = zeros(dtype_of_v<T>, std::move(dims));
        if (static_cast<std::size_t>(v.size()) != data.size())
            throw value_error("sgmatch::exec::value::of: " + std::to_string(data.size()) + " values for dims " + to_string(v.dims_));
        if constexpr (std::is_same_v<T, bool>) {  // std::vector<bool> packs its bits: one at a time
            bool* out = static_cast<bool*>(v.data_);
            for (std::size_t i = 0; i < data.size(); ++i) out[i] = data[i];
        } else if (!data.empty()) {
            std::memcpy(v.data_, static_cast<const void*>(data.data()), data.size() * sizeof(T));
        }
        return v;
    }
    /// A view of the caller's buffer (no copy; read-only). Strides in elements; empty: dense.
    /// A value of no elements may have no buffer (an empty array's data() is null).
    static value view(const void* data, dtype t, shape dims, shape strides = {}) {
        static const std::int64_t nothing = 0;
        if (data == nullptr && element_count(dims) == 0) data = &nothing;
        if (data == nullptr) throw value_error("sgmatch::exec::value::view: a null buffer for " + to_string(dims));
        if (!strides.empty() && strides.size() != dims.size())
            throw value_error("sgmatch::exec::value::view: " + std::to_string(strides.size()) + " strides for rank " +
                              std::to_string(dims.size()));
        value v;
        v.type_ = t;
        v.dims_ = std::move(dims);
        (void)element_count(v.dims_);
        v.data_ = const_cast<void*>(data);
        v.strides_ = std::move(strides);
        v.read_only_ = true;
        if (v.strides_ == dense_strides(v.dims_)) v.strides_.clear();
        return v;
    }

    /// An owned dense value over `data`, a buffer of dims' size that `owner` keeps alive (and
    /// recycles when the last copy of the value goes away: sgmatch's buffer pool).
    static value adopt(std::shared_ptr<void> owner, void* data, dtype t, shape dims) {
        if (owner == nullptr || data == nullptr) throw value_error("sgmatch::exec::value::adopt: no buffer");
        value v;
        v.type_ = t;
        v.dims_ = std::move(dims);
        (void)element_count(v.dims_);
        v.data_ = data;
        v.owner_ = std::move(owner);
        return v;
    }

    /// An owned value over `data` laid out by `strides` (in elements), which must be packed (a
    /// permutation of the dims' dense layout: channels-last, say): a primitive's output kept in
    /// the layout it wrote.
    static value adopt(std::shared_ptr<void> owner, void* data, dtype t, shape dims, shape strides) {
        value v = adopt(std::move(owner), data, t, std::move(dims));
        v.set_packed_strides(std::move(strides), "adopt");
        return v;
    }
    /// An owned value of zeros laid out by packed `strides` (another value's layout).
    static value zeros_in_layout(dtype t, shape dims, shape strides) {
        value v = zeros(t, std::move(dims));
        v.set_packed_strides(std::move(strides), "zeros_in_layout");
        return v;
    }

    /// A sequence of tensors of type `t`, each kept as an owned dense copy unless it already is
    /// one (a view of a buffer that a later step reuses would change under the sequence).
    static value sequence(dtype t, std::vector<value> items) {
        for (value& x : items) {
            if (x.is_sequence()) throw value_error("sgmatch::exec::value::sequence: a sequence holds tensors, not sequences");
            if (x.type() != t)
                throw value_error("sgmatch::exec::value::sequence: a tensor of " + std::string(name_of(x.type())) + " in a sequence of " +
                                  std::string(name_of(t)));
            if (!x.owned() || !x.dense() || x.read_only_) x = x.clone();
        }
        value v;
        v.type_ = t;
        auto held = std::make_shared<std::vector<value>>(std::move(items));
        v.items_ = held.get();
        v.owner_ = std::move(held);
        return v;
    }

    /// An empty optional of tensors of type `t`, or (`sequence`) of sequences of them.
    static value none(dtype t, bool sequence = false) {
        value v;
        v.type_ = t;
        v.none_ = true;
        v.none_sequence_ = sequence;
        return v;
    }

    /// A dense view of the caller's buffer that sgmatch may write (where a framework wants an
    /// output: exec::node_call::run_into). The caller keeps it alive and does not read it meanwhile.
    static value output_view(void* data, dtype t, shape dims) {
        value v = view(data, t, std::move(dims));
        v.read_only_ = false;
        return v;
    }

    dtype type() const { return type_; }
    const shape& dims() const { return dims_; }
    std::size_t rank() const { return dims_.size(); }
    /// Strides in elements: empty for a dense (row-major) value.
    const shape& strides() const { return strides_; }
    bool dense() const { return strides_.empty(); }
    /// Whether the elements fill size() consecutive slots in some order of the axes (dense, or
    /// a permuted layout such as channels-last): an element-wise kernel may then run over the
    /// buffer as it is, for operands of one layout.
    bool packed() const { return strides_.empty() || packed_strides(dims_, strides_); }
    /// The strides of the layout, dense ones for a dense value.
    shape layout() const { return strides_.empty() ? dense_strides(dims_) : strides_; }
    bool has_data() const { return data_ != nullptr; }
    /// Whether this is a sequence of tensors (value::sequence) rather than a tensor.
    bool is_sequence() const { return items_ != nullptr; }
    /// Whether this is an empty optional (value::none), and whether of a sequence.
    bool is_none() const { return none_; }
    bool none_of_sequence() const { return none_sequence_; }
    /// A sequence's tensors (a value_error for a tensor).
    const std::vector<value>& items() const {
        if (none_) throw value_error("sgmatch::exec::value: an empty optional read as a sequence");
        if (items_ == nullptr) throw value_error("sgmatch::exec::value: a tensor read as a sequence");
        return *items_;
    }
    /// Whether sgmatch owns the data (else it is a view of a buffer someone else keeps alive).
    bool owned() const { return owner_ != nullptr; }
    std::int64_t size() const { return items_ || none_ ? 0 : element_count(dims_); }
    std::size_t bytes() const { return static_cast<std::size_t>(size()) * size_of(type_); }

    const void* data() const { return data_; }
    /// Writable data: only a value sgmatch owns (a view of the caller's buffer is read-only).
    void* mutable_data() {
        if (none_) throw value_error("sgmatch::exec::value: an empty optional read as a tensor");
        if (items_) throw value_error("sgmatch::exec::value: a sequence read as a tensor");
        if (read_only_) throw value_error("sgmatch::exec::value: a view of the caller's buffer is read-only");
        return data_;
    }
    template <class T>
    const T* as() const {
        check<T>();
        return static_cast<const T*>(data_);
    }
    template <class T>
    T* as() {
        check<T>();
        return static_cast<T*>(mutable_data());
    }

    /// The same data under other dims (same element count; a dense value).
    value reshaped(shape to) const {
        if (none_) throw value_error("sgmatch::exec::value: an empty optional read as a tensor");
        if (items_) throw value_error("sgmatch::exec::value: a sequence read as a tensor");
        const value d = dense_value();
        if (element_count(to) != d.size())
            throw value_error("sgmatch::exec::value: cannot reshape " + to_string(dims_) + " to " + to_string(to));
        value v = d;
        v.dims_ = std::move(to);
        return v;
    }
    /// This value, dense: itself, or a copy of a strided one.
    value dense_value() const {
        if (dense()) return *this;
        value out = zeros(type_, dims_);
        copy_strided(out.data_, dense_strides(dims_), data_, strides_, dims_, size_of(type_));
        return out;
    }
    /// This value laid out by packed `strides`: itself when it already is, else a copy.
    value in_layout(const shape& strides) const {
        if (layout() == strides || size() == 0) return *this;
        value out = zeros_in_layout(type_, dims_, strides);
        copy_strided(out.data_, strides, data_, layout(), dims_, size_of(type_));
        return out;
    }
    /// A deep, owned, dense copy.
    value clone() const {
        if (none_) return *this;
        if (items_) return sequence(type_, *items_);  // its tensors are owned and never written: shared
        const value d = dense_value();
        value out = zeros(type_, dims_);
        if (d.bytes()) std::memcpy(out.data_, d.data_, d.bytes());
        return out;
    }

    /// Read as a constant view (dense values): element access, to_ints(), to_floats().
    const_tensor_view as_constant() const {
        const value& d = dense_or_throw();
        return const_tensor_view{d.type_, d.dims_.data(), d.dims_.size(), d.data_};
    }
    std::vector<std::int64_t> to_ints() const {
        auto v = as_constant().to_ints();
        if (!v) throw value_error("sgmatch::exec::value: " + std::string(name_of(type_)) + " values that no int64 holds");
        return *v;
    }
    std::vector<float> to_floats() const { return as_constant().to_floats().value_or(std::vector<float>{}); }

    static shape dense_strides(const shape& d) {
        shape s(d.size(), 1);
        for (std::size_t k = d.size(); k-- > 1;) s[k - 1] = s[k] * d[k];
        return s;
    }
    /// Whether `strides` lay out `dims` packed (detail/strides.hpp).
    static bool packed_strides(const shape& dims, const shape& strides) { return sgmatch::detail::packed_strides(dims, strides); }

private:
    void set_packed_strides(shape strides, const char* what) {
        if (!packed_strides(dims_, strides))
            throw value_error(std::string("sgmatch::exec::value::") + what + ": strides " + to_string(strides) + " do not lay out " +
                              to_string(dims_) + " packed");
        strides_ = std::move(strides);
        if (strides_ == dense_strides(dims_)) strides_.clear();
    }
    // Copies the elements of `dims` from src (laid out by `from`) to dst (by `to`), element size
    // `es`: the innermost dim of dst as a loop of one element type.
    static void copy_strided(void* dst, const shape& to, const void* src, const shape& from, const shape& dims, std::size_t es) {
        if (element_count(dims) == 0) return;
        if (dims.empty()) {
            std::memcpy(dst, src, es);
            return;
        }
        const std::size_t r = dims.size(), last = r - 1;
        auto run = [&](auto tag) {
            using E = decltype(tag);
            E* d = static_cast<E*>(dst);
            const E* s = static_cast<const E*>(src);
            const std::int64_t n = dims[last], ds = to[last], ss = from[last];
            shape idx(r, 0);
            for (;;) {
                std::int64_t od = 0, os = 0;
                for (std::size_t k = 0; k < last; ++k) od += idx[k] * to[k], os += idx[k] * from[k];
                E* dp = d + od;
                const E* sp = s + os;
                if (ds == 1 && ss == 1) std::memcpy(dp, sp, static_cast<std::size_t>(n) * sizeof(E));
                else
                    for (std::int64_t i = 0; i < n; ++i) dp[i * ds] = sp[i * ss];
                std::size_t k = last;
                for (; k-- > 0;) {
                    if (++idx[k] < dims[k]) break;
                    idx[k] = 0;
                }
                if (k == static_cast<std::size_t>(-1)) return;
            }
        };
        switch (es) {
            case 1: run(std::uint8_t{}); break;
            case 2: run(std::uint16_t{}); break;
            case 4: run(std::uint32_t{}); break;
            case 8: run(std::uint64_t{}); break;
            default: throw value_error("sgmatch::exec::value: no element of " + std::to_string(es) + " bytes");
        }
    }
    template <class T>
    void check() const {
        static_assert(dtype_of_v<T> != dtype::unknown, "sgmatch::exec::value::as<T>: T must be an element type sgmatch has");
        if (dtype_of_v<T> != type_)
            throw value_error("sgmatch::exec::value: read as " + std::string(name_of(dtype_of_v<T>)) + ", holds " +
                              std::string(name_of(type_)));
        if (!dense()) throw value_error("sgmatch::exec::value: a strided view read as dense (call dense_value())");
        if (items_) throw value_error("sgmatch::exec::value: a sequence read as a tensor");
        if (none_) throw value_error("sgmatch::exec::value: an empty optional read as a tensor");
    }
    const value& dense_or_throw() const {
        if (none_) throw value_error("sgmatch::exec::value: an empty optional read as a tensor");
        if (items_) throw value_error("sgmatch::exec::value: a sequence read as a tensor");
        if (!dense()) throw value_error("sgmatch::exec::value: a strided view read as dense (call dense_value())");
        return *this;
    }

    dtype type_ = dtype::unknown;
    shape dims_;
    shape strides_;
    void* data_ = nullptr;
    std::shared_ptr<void> owner_;
    const std::vector<value>* items_ = nullptr;  // a sequence's tensors (owner_ keeps them)
    bool read_only_ = false;
    bool none_ = false;           // an empty optional (value::none)
    bool none_sequence_ = false;  // ... of a sequence
};

}  // namespace exec
SGMATCH_END_NAMESPACE
