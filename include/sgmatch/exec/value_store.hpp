// sgmatch/exec/value_store.hpp - the values of one executor run, and the conversions between
// the forms kernels read them in.
//
// A value is held in the form its producer made: a oneDNN tensor in whatever layout (fused
// nodes, single-op primitives), an fp32 array (reference kernels), or a typed value (typed
// kernels, typed graph inputs). A consumer asks for the form it reads: plain_of (an array,
// reordered once and kept), tensor_of (a tensor; arrays and constants as views), value_of (a
// typed value; views where possible). Constants are read from the graph's own storage.
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "sgmatch/detail/config.hpp"
#include "sgmatch/exec/error.hpp"
#include "sgmatch/exec/run_stats.hpp"
#include "sgmatch/exec/value.hpp"
#include "sgmatch/graph/graph.hpp"
#include "sgmatch/onednn/tensor.hpp"
#include "sgmatch/reference/kernels.hpp"
#include "sgmatch/reference/onednn.hpp"

SGMATCH_BEGIN_NAMESPACE
namespace exec {
using reference::array;

namespace detail {

/// An optional T held on the heap: a run's slots stay small (most hold only a tensor), so that a
/// long graph's slots stay in cache.
template <class T>
class boxed {
public:
    boxed() = default;
    boxed(const boxed& o) : p_(o.p_ ? std::make_unique<T>(*o.p_) : nullptr) {}
    boxed(boxed&&) noexcept = default;
    boxed& operator=(const boxed& o) {
        p_ = o.p_ ? std::make_unique<T>(*o.p_) : nullptr;
        return *this;
    }
    boxed& operator=(boxed&&) noexcept = default;
    boxed& operator=(T v) {
        if (p_) *p_ = std::move(v);
        else p_ = std::make_unique<T>(std::move(v));
        return *this;
    }
    explicit operator bool() const { return p_ != nullptr; }
    T& operator*() const { return *p_; }
    T* operator->() const { return p_.get(); }

private:
    std::unique_ptr<T> p_;
};

/// One value of a run, in the forms made of it so far.
struct slot {
    boxed<array> plain;
    onednn::tensor t;
    boxed<value> typed;          // a typed kernel's output, or a typed graph input
    bool owned = false;          // t was made by this run (not a view of an input or a constant)

    // A value that only a typed kernel can read (not f32, a sequence, an empty optional).
    bool foreign() const { return typed && (typed->type() != dtype::f32 || typed->is_sequence() || typed->is_none()); }
};

inline onednn::tensor constant_view(const graph& g_, node_id c) {
    const auto k = g_.constant(c);
    if (!k || k->data == nullptr)
        throw exec_error("sgmatch::exec::executor: constant '" + std::string(g_.name(c)) + "' has no data");
    // A scalar as a one-element tensor. (A loop, not the range constructor: g++ 12 -O3 C++20
    // reports a false -Wfree-nonheap-object for that one here.)
    onednn::dims d(k->rank == 0 ? 1 : k->rank, 1);
    for (std::size_t i = 0; i < k->rank; ++i) d[i] = k->dims[i];
    if (k->type != dtype::f32) return onednn::tensor::from_values(*k->to_floats(), d);  // fp32 kernels: converted
    return onednn::tensor::view(static_cast<const float*>(k->data), d);
}

/// Where each node's slots start in a run's flat slot array (a node has at least one slot,
/// so that an input or a constant has its value's); made once per graph.
struct slot_layout {
    explicit slot_layout(const graph& g) : base(g.index_bound() + 1, 0) {
        for (std::size_t i = 0; i < g.index_bound(); ++i)
            base[i + 1] = base[i] + static_cast<std::uint32_t>(std::max<std::size_t>(g.output_count(node_id{static_cast<std::uint32_t>(i)}), 1));
    }
    std::size_t size() const { return base.back(); }
    std::vector<std::uint32_t> base;  // by node index; base[index_bound] is the slot count
};

/// The slots of one node: a view into the run's flat array.
template <class Slot>
class slot_span {
public:
    slot_span(Slot* p, std::size_t n) : p_(p), n_(n) {}
    std::size_t size() const { return n_; }
    Slot& operator[](std::size_t port) const { return p_[port]; }
    Slot& at(std::size_t port) const {
        if (port >= n_) throw exec_error("sgmatch::exec::executor: output " + std::to_string(port) + " of a node that has " + std::to_string(n_));
        return p_[port];
    }
    Slot* begin() const { return p_; }
    Slot* end() const { return p_ + n_; }

private:
    Slot* p_;
    std::size_t n_;
};

/// The slots of one run: one per output of every node (one for inputs and constants), in one
/// array laid out by a slot_layout.
class value_store {
public:
    value_store(const graph& g, const slot_layout& l) : g_(g), base_(l.base.data()), slots_(l.size()) {}

    slot_span<slot> operator[](std::size_t node_index) { return {slots_.data() + base_[node_index], base_[node_index + 1] - base_[node_index]}; }
    slot_span<const slot> operator[](std::size_t node_index) const {
        return {slots_.data() + base_[node_index], base_[node_index + 1] - base_[node_index]};
    }

    const array& plain_of(value_ref<node_id> v, run_stats& st) {
        slot& s = (*this)[v.node.value].at(v.port);
        if (!s.plain && s.typed) {  // a typed value read by an fp32 kernel or as an f32 output
            if (s.foreign())
                throw exec_error("sgmatch::exec::executor: the value of '" + std::string(g_.name(v.node)) + "' (output " +
                                 std::to_string(v.port) + ") is " +
                                 (s.typed->is_sequence() ? "a sequence" : s.typed->is_none() ? "an empty optional" : std::string(name_of(s.typed->type()))) +
                                 ": an fp32 kernel cannot read it (and array outputs are f32: run() returns typed values)");
            const value d = s.typed->dense_value();
            array a = xt::zeros<float>(std::vector<std::size_t>(d.dims().begin(), d.dims().end()));
            if (d.size()) std::copy_n(d.as<float>(), static_cast<std::size_t>(d.size()), a.begin());
            s.plain = std::move(a);
            return *s.plain;
        }
        if (!s.plain && s.t.empty() && g_.kind(v.node) == node_kind::constant) {  // read as is (any rank)
            const auto k = g_.constant(v.node);
            if (!k || k->data == nullptr)
                throw exec_error("sgmatch::exec::executor: constant '" + std::string(g_.name(v.node)) + "' has no data");
            array a = xt::zeros<float>(std::vector<std::size_t>(k->dims, k->dims + k->rank));
            const std::vector<float> f = k->to_floats().value_or(std::vector<float>{});
            std::copy(f.begin(), f.end(), a.begin());
            s.plain = std::move(a);
            return *s.plain;
        }
        if (!s.plain) {
            if (s.t.empty())
                throw exec_error("sgmatch::exec::executor: value of '" + std::string(g_.name(v.node)) +
                                 "' has no data (a constant without values?)");
            s.plain = reference::to_array(s.t);
            ++st.reorders_to_plain;
        }
        return *s.plain;
    }
    onednn::tensor tensor_of(node_id n, std::size_t input_slot) {
        const auto v = g_.input(n, input_slot);
        slot& s = (*this)[v.node.value].at(v.port);
        if (!s.t.empty()) return s.t;
        if (s.typed && !s.plain && !s.foreign() && s.typed->packed() && s.typed->rank() >= 1 && s.typed->rank() <= 6 &&
            s.typed->size() > 0) {
            // An f32 value (a graph input, a typed kernel's output), dense or in a packed layout
            // (DequantizeLinear of a channels-last int8 conv's y), read in place: a view, the
            // value lives in the store for the run.
            const auto& d = s.typed->dims();
            const onednn::dims od(d.begin(), d.end());
            if (s.typed->dense()) return onednn::tensor::view(static_cast<const float*>(s.typed->data()), od);
            const dnnl::memory::desc md(od, dnnl::memory::data_type::f32, onednn::dims(s.typed->strides().begin(), s.typed->strides().end()));
            return onednn::tensor(dnnl::memory(md, onednn::cpu_engine(), const_cast<void*>(s.typed->data())));
        }
        if (s.typed && !s.plain) {
            run_stats ignored;
            (void)plain_of(v, ignored);  // f32 only, else a clear error
        }
        if (!s.plain && g_.kind(v.node) == node_kind::constant) return s.t = constant_view(g_, v.node);
        if (!s.plain)
            throw exec_error("sgmatch::exec::executor: input " + std::to_string(input_slot) + " of '" +
                             std::string(g_.name(n)) + "' has no data");
        return reference::to_tensor(*s.plain);  // a view: the array lives in the store for the run
    }

    // A value as a typed kernel reads it: a typed value as is, an f32 array or tensor as a view
    // (reordered to plain first), a constant as a view of the graph's storage.
    value value_of(value_ref<node_id> v, run_stats& st) {
        slot& s = (*this)[v.node.value].at(v.port);
        if (s.typed) return *s.typed;
        if (!s.plain && s.t.empty() && g_.kind(v.node) == node_kind::constant) {
            const auto k = g_.constant(v.node);
            if (!k || k->data == nullptr)
                throw exec_error("sgmatch::exec::executor: constant '" + std::string(g_.name(v.node)) + "' has no data");
            return value::view(k->data, k->type, shape(k->dims, k->dims + k->rank));
        }
        if (!s.plain && !s.t.empty() && s.t.shape().size() > 0) {
            // A kernel's f32 tensor in a permuted layout (plain, channels-last): a view of it as
            // it is (QuantizeLinear keeps the layout); a blocked one is reordered to plain below.
            const auto strides = onednn::compat::permuted_strides(s.t.desc());
            if (!strides.empty()) {
                const onednn::dims d = s.t.shape();
                return value::view(s.t.memory().get_data_handle(), dtype::f32, shape(d.begin(), d.end()), shape(strides.begin(), strides.end()));
            }
        }
        const array& a = plain_of(v, st);
        return value::view(a.data(), dtype::f32, shape(a.shape().begin(), a.shape().end()));
    }

    // A graph output as the caller gets it: an owned value, never a view of the graph's constants,
    // of an input or of a buffer the next run reuses. An f32 tensor is reordered once into a
    // plain buffer of its own from the recycling pool (which it returns to when the caller drops
    // it, so that repeated runs fault no fresh pages in).
    value output_of(value_ref<node_id> v, run_stats& st) {
        slot& s = (*this)[v.node.value].at(v.port);
        if (!s.typed && !s.plain && !s.t.empty()) {
            const onednn::dims d = s.t.shape();
            const onednn::tensor out = onednn::tensor::allocate(onednn::plain_desc(d));
            dnnl::stream strm(onednn::cpu_engine());
            s.t.reorder_into(out, strm);
            strm.wait();
            ++st.reorders_to_plain;
            return value::adopt(out.owner(), out.memory().get_data_handle(), dtype::f32, shape(d.begin(), d.end()));
        }
        value x = value_of(v, st);
        if (!x.dense()) return dense_output(x);
        return x.owned() ? x : x.clone();
    }

private:
    // A value in a kernel's packed layout (channels-last int8) as a dense output: reordered by
    // oneDNN for the types it has (a transpose; dense_value's strided copy is slow at many
    // channels), copied otherwise.
    static value dense_output(const value& x) {
        using dt = dnnl::memory::data_type;
        const dt t = x.type() == dtype::u8 ? dt::u8 : x.type() == dtype::i8 ? dt::s8 : x.type() == dtype::i32 ? dt::s32
                     : x.type() == dtype::f32 ? dt::f32 : dt::undef;
        if (t == dt::undef || !x.packed() || x.rank() < 1 || x.rank() > 6 || x.size() == 0) return x.dense_value();
        const onednn::dims d(x.dims().begin(), x.dims().end());
        value out = value::zeros(x.type(), x.dims());
        dnnl::memory from(dnnl::memory::desc(d, t, onednn::dims(x.strides().begin(), x.strides().end())), onednn::cpu_engine(),
                                const_cast<void*>(x.data()));
        dnnl::memory to(dnnl::memory::desc(d, t, onednn::plain_tag(d.size())), onednn::cpu_engine(), out.mutable_data());
        dnnl::stream s(onednn::cpu_engine());
        dnnl::reorder(from, to).execute(s, from, to);
        s.wait();
        return out;
    }

    const graph& g_;
    const std::uint32_t* base_;
    std::vector<slot> slots_;
};

}  // namespace detail
}  // namespace exec
SGMATCH_END_NAMESPACE
