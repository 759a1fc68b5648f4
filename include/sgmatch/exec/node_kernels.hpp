// sgmatch/exec/node_kernels.hpp - what the executor runs for one op node: its reference kernel
// and, where oneDNN has a primitive for it, a single-op oneDNN kernel.
//
// Each op's binding is a facet of its entry (its vocabulary tag): kernels::f32_kernels<Tag>,
// specialized in the family's header under exec/kernels/, makes both from the node's checked
// attributes (ops::op_attrs) when the executor is built; the executor looks bindings up by the
// op's description through find_kernels (exec/kernels.hpp), a table derived from the
// specializations. What adding an op takes, in every layer: CONTRIBUTING.md, "Add an ONNX op".
#pragma once

#include <cmath>
#include <cstddef>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#include "sgmatch/detail/config.hpp"
#include "sgmatch/exec/error.hpp"
#include "sgmatch/graph/graph.hpp"
#include "sgmatch/onednn/op_kernels.hpp"
#include "sgmatch/ops/attrs.hpp"
#include "sgmatch/ops/schema.hpp"
#include "sgmatch/reference/kernels.hpp"

SGMATCH_BEGIN_NAMESPACE
namespace exec {

using reference::array;

/// A node's reference kernel: its inputs (plain arrays, in order) to its output.
using reference_fn = std::function<array(const std::vector<const array*>&)>;

/// The node a binding makes kernels for, with its checked attributes.
struct node_context {
    const graph& g;
    node_id n;
    const ops::op_attrs& a;

    std::size_t input_count() const { return g.input_count(n); }
    /// The type the graph declares for input `slot`'s value; none where it declares none.
    std::optional<tensor_type> input_type(std::size_t slot) const {
        const auto in = g.input(n, slot);
        return g.value_type(in.node, in.port);
    }
    bool input_is_constant(std::size_t slot) const {
        return slot < input_count() && g.kind(g.input(n, slot).node) == node_kind::constant;
    }
    /// Input `slot`'s values when it is a constant with data (f32, f64 or integers, as floats);
    /// empty otherwise.
    std::vector<float> constant_input(std::size_t slot) const {
        if (!input_is_constant(slot)) return {};
        const auto c = g.constant(g.input(n, slot).node);
        return c ? c->to_floats().value_or(std::vector<float>{}) : std::vector<float>{};
    }
    std::optional<const_tensor_view> constant_view(std::size_t slot) const {
        if (!input_is_constant(slot)) return std::nullopt;
        return g.constant(g.input(n, slot).node);
    }
    /// A list parameter: constant input `slot` (newer opsets) or attribute `attr` (older); a
    /// computed input is refused (its values are unknown until the run).
    std::optional<std::vector<std::int64_t>> ints_param(std::size_t slot, const char* attr) const {
        if (slot >= input_count() && !a.has(attr)) return std::nullopt;
        auto v = known_ints_param(slot, attr);
        if (!v) refuse(std::string(attr) + " (input " + std::to_string(slot) + ") is computed at run time or not integers: not supported");
        return v;
    }
    /// The same list (empty when neither is given), or nullopt when the input is computed: for a
    /// kernel that declines such a node rather than refusing it.
    std::optional<std::vector<std::int64_t>> known_ints_param(std::size_t slot, const char* attr) const {
        if (slot < input_count()) {
            const auto v = constant_view(slot);
            if (!v || v->data == nullptr) return std::nullopt;
            return v->to_ints();
        }
        return a.has(attr) ? a.ints(attr) : std::vector<std::int64_t>{};
    }
    [[noreturn]] void refuse(const std::string& why) const {
        throw exec_error("sgmatch::exec::executor: " + a.where() + ": " + why);
    }
};

/// What a oneDNN factory gives for a node: its kernel, or why the node runs on its reference
/// kernel instead (a parameter it needs is computed at run time, a form oneDNN has no primitive
/// for). A factory cannot answer a bare null: it declines with its reason, decline("...").
class onednn_choice {
public:
    template <class K, class = std::enable_if_t<std::is_base_of_v<onednn::op_kernel, K>>>
    onednn_choice(std::shared_ptr<K> k) : kernel_(std::move(k)) {}  // NOLINT: a factory returns its kernel
    onednn_choice(std::nullptr_t) = delete;                          // a factory that declines says why
    static onednn_choice declined(std::string why) {
        onednn_choice c;
        c.why_ = std::move(why);
        return c;
    }
    const std::shared_ptr<const onednn::op_kernel>& kernel() const { return kernel_; }
    const std::string& why() const { return why_; }

private:
    onednn_choice() = default;
    std::shared_ptr<const onednn::op_kernel> kernel_;
    std::string why_;
};

/// How one op runs on f32 arrays: the facet f32_kernels<Tag> of the op's entry.
///
/// Minimal complete definition: `reference`, which makes the node's reference kernel from its
/// checked attributes and constant inputs (refusing a node it cannot run through
/// node_context::refuse, naming it). Optional: `onednn`, which makes its single-op oneDNN
/// kernel or declines the node with the reason (null: oneDNN has no kernel for the op).
/// Laws (tests/onednn/registry.cpp, and each kernel's tests): a binding with a oneDNN kernel has a
/// reference kernel to check it against; both compute the op's description on every node they
/// accept; a oneDNN kernel that rejects an input at run time throws onednn::kernel_error (the
/// executor then runs the reference kernel for those shapes).
struct kernel_binding {
    reference_fn (*reference)(const node_context&) = nullptr;
    onednn_choice (*onednn)(const node_context&, bool plain_layouts) = nullptr;
};

namespace kernels {

/// A oneDNN factory's answer for a node it does not take: the reference kernel runs it, and
/// `why` reaches executor::reference_reasons() and sgmatch-run's report.
inline onednn_choice decline(std::string why) { return onednn_choice::declined(std::move(why)); }

/// The exec layer's facet of an op's entry (ops/schema.hpp): its kernels on f32 arrays,
/// specialized in the op family's header under exec/kernels/ (not specialized: no kernel).
template <class Tag>
inline constexpr ops::no_facet f32_kernels{};

/// For reference kernels: input `i`, with a clear error when the node has fewer.
inline const array& in(const std::vector<const array*>& xs, std::size_t i, const ops::op_attrs& a) {
    if (i >= xs.size())
        throw exec_error("sgmatch::exec::executor: " + a.where() + " needs " + std::to_string(i + 1) + " inputs");
    return *xs[i];
}

/// A parameter read at run time (axes, pads) as integers: each value must be a whole number
/// (an int64 parameter arrives as exact floats); anything else is an error naming the node.
inline ops::dims int_values(const array& x, const ops::op_attrs& a, const char* what) {
    ops::dims v;
    v.reserve(x.size());
    for (const float f : x) {
        if (!(std::abs(f) <= 9.0e15f) || f != std::trunc(f))
            throw exec_error("sgmatch::exec::executor: " + a.where() + ": " + what + " holds " + std::to_string(f) + ", not an integer");
        v.push_back(static_cast<std::int64_t>(f));
    }
    return v;
}

/// The number of spatial axes of an NC... input.
inline std::size_t spatial(const array& x) { return x.dimension() > 2 ? x.dimension() - 2 : 0; }

/// Splits ONNX pads (begins, then ends) into the two halves.
inline void split_pads(const ops::dims& p, reference::dims& b, reference::dims& e) {
    const auto h = static_cast<std::ptrdiff_t>(p.size() / 2);
    b.assign(p.begin(), p.begin() + h);
    e.assign(p.begin() + h, p.end());
}

}  // namespace kernels
}  // namespace exec
SGMATCH_END_NAMESPACE
