// sgmatch/onednn/op_kernels/base.hpp - what every single-op kernel is (op_kernel) and the helpers
// they share: the per-layout primitive cache, the user scratchpad, primitive creation with a
// clear error.
#pragma once

#include <algorithm>
#include <initializer_list>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

#include <oneapi/dnnl/dnnl.hpp>

#include "sgmatch/detail/config.hpp"
#include "sgmatch/onednn/compat.hpp"
#include "sgmatch/onednn/post_ops.hpp"
#include "sgmatch/onednn/tensor.hpp"

SGMATCH_BEGIN_NAMESPACE
namespace onednn {

/// One op on oneDNN. run() takes the op's runtime inputs in order.
class op_kernel {
public:
    virtual ~op_kernel() = default;
    virtual tensor run(const std::vector<tensor>& inputs) const = 0;
    virtual const char* kind() const = 0;
    /// Whether run() takes the op's constant inputs too (a binary operand, a matmul's right
    /// operand, a concat's parts); otherwise the kernel holds its constants and run() gets only
    /// the inputs computed at run time.
    virtual bool reads_constants() const { return false; }
    /// Whether run_in_place() writes the result over inputs[0] (an element-wise op: the result
    /// has inputs[0]'s layout). The caller offers it only a buffer nothing else reads.
    virtual bool runs_in_place() const { return false; }
    /// The result written over inputs[0]'s buffer, returned as a tensor sharing it.
    virtual tensor run_in_place(const std::vector<tensor>& inputs) const { return run(inputs); }
};

namespace detail {

// A key for a memory layout: dims plus the bytes of its C description (layouts with equal dims differ).
inline std::string layout_key(const dnnl::memory::desc& d) {
#if DNNL_VERSION_MAJOR >= 3
    std::string k = to_string(compat::dims_of(d));
    for (auto s : d.get_strides()) k += "," + std::to_string(s);
    return k + "/" + std::to_string(d.get_size());
#else
    return std::string(reinterpret_cast<const char*>(&d.data), sizeof(d.data));
#endif
}

// p run on this thread's stream with (argument, memory) pairs: no std::unordered_map built for
// the call (the per-call cost that dominates small tensors).
inline void execute(const dnnl::primitive& p, std::initializer_list<dnnl_exec_arg_t> args) {
    dnnl::error::wrap_c_api(dnnl_primitive_execute(p.get(), cpu_stream().get(), static_cast<int>(args.size()), args.begin()),
                            "could not execute a primitive");
}

template <class Prim>
void exec_with_scratch(const Prim& p, const dnnl::memory::desc& scratch_md, std::unordered_map<int, dnnl::memory> args) {
    dnnl::stream s(cpu_engine());
    const tensor scratch = tensor::allocate(scratch_md);
    args[DNNL_ARG_SCRATCHPAD] = scratch.memory();
    p.execute(s, args);
    s.wait();
}

inline dnnl::primitive_attr user_scratchpad() {
    dnnl::primitive_attr a;
    a.set_scratchpad_mode(dnnl::scratchpad_mode::user);
    return a;
}

// make()'s primitive descriptor, or a kernel_error: no_primitive() (built only then) followed
// by oneDNN's reason.
template <class PD, class Make, class Message>
std::shared_ptr<const PD> make_pd(Make make, Message no_primitive) {
    try {
        return std::make_shared<const PD>(make());
    } catch (const dnnl::error& e) {
        throw kernel_error(no_primitive() + " (" + e.what() + ")");
    }
}

// A primitive descriptor for layout d, or, where oneDNN has none for it, for the plain layout of
// the same shape (the kernel then reads its input reordered to pd->src_desc()).
template <class PD, class Make>
std::shared_ptr<const PD> pd_in_layout_or_plain(const dnnl::memory::desc& d, const char* what, Make make) {
    try {
        return std::make_shared<const PD>(make(d));
    } catch (const dnnl::error&) {
    }
    const dims shape = compat::dims_of(d);
    return make_pd<PD>([&] { return make(plain_desc(shape)); }, [&] {
        return std::string("sgmatch::onednn::") + what + ": oneDNN has no primitive for input " + to_string(shape);
    });
}

// A primitive descriptor with its primitive, created once: what a kernel caches per input
// shape or layout (creating the primitive on every run would ask oneDNN's primitive cache each
// time).
template <class PD, class Prim>
struct built_primitive : PD {
    Prim prim;
    explicit built_primitive(const PD& pd) : PD(pd), prim(pd) {}
};
template <class Prim, class PD>
std::shared_ptr<const built_primitive<PD, Prim>> with_primitive(const std::shared_ptr<const PD>& pd) {
    return std::make_shared<const built_primitive<PD, Prim>>(*pd);
}

// A one-source, one-destination primitive run on x (reordered to the pd's source layout when it
// has another), into a new tensor in the pd's destination layout.
template <class PD, class Prim>
tensor run_src_dst(const built_primitive<PD, Prim>& pd, const tensor& x) {
    dnnl::stream s(cpu_engine());
    const tensor src = x.in_layout(pd.src_desc(), s);
    tensor y = tensor::allocate(pd.dst_desc());
    exec_with_scratch(pd.prim, pd.scratchpad_desc(), {{DNNL_ARG_SRC, src.memory()}, {DNNL_ARG_DST, y.memory()}});
    return y;
}

// axis in [-rank, rank) as an index, or a kernel_error naming the kernel.
inline int axis_index(std::int64_t axis, std::size_t rank, const char* what) {
    const auto r = static_cast<std::int64_t>(rank);
    if (axis < -r || axis >= r)
        throw kernel_error(std::string("sgmatch::onednn::") + what + ": axis " + std::to_string(axis) +
                           " is out of range for rank " + std::to_string(rank));
    return static_cast<int>(axis < 0 ? axis + r : axis);
}

// The dims of an operand that broadcasts one way to `to` (NumPy rules), with leading 1s up to its
// rank, or a kernel_error naming the kernel.
inline dims broadcast_operand(dims b, const dims& to, const char* what) {
    const dims given = b;
    bool ok = b.size() <= to.size();
    if (ok) b.insert(b.begin(), to.size() - b.size(), 1);
    for (std::size_t i = 0; ok && i < to.size(); ++i) ok = b[i] == to[i] || b[i] == 1;
    if (!ok)
        throw kernel_error(std::string("sgmatch::onednn::") + what + ": operand " + to_string(given) + " does not broadcast to " +
                           to_string(to) + " (only the second operand broadcasts)");
    return b;
}

}  // namespace detail

}  // namespace onednn
SGMATCH_END_NAMESPACE
