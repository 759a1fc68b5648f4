// sgmatch/onednn/layer_norm.hpp - a LayerNorm written out the way exporters emit it (PyTorch's
// ONNX export before opset 17) recognised and run as one oneDNN layer normalization.
//
//   auto prop = sgmatch::onednn::make_layer_norm_property<G>();   // in the ready-made backend
//
// The form, x the normalized value (outside the match):
//   ReduceMean(x) -> Sub(x, .) -> Pow(., 2) -> ReduceMean -> Add(., eps) -> Sqrt -> Div(d, .)
//   -> Mul(., gamma)? -> Add(., beta)?
// with d the Sub's result. The property declines, with the reason, what oneDNN's layer
// normalization does not compute: the two means over different axes, axes that are not the last
// ones, the reduced axes dropped (keepdims 0), an epsilon, gamma or beta that is not a constant,
// a gamma or beta that is not one value per normalized element (or a scalar).
//
// The fused node carries an onednn::fused_node (property.hpp) whose kernel is fused_layer_norm;
// where the kernel rejects an input at run time, the executor runs the matched ops unfused.
#pragma once

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "sgmatch/detail/config.hpp"
#include "sgmatch/onednn/op_kernels.hpp"
#include "sgmatch/onednn/property.hpp"
#include "sgmatch/partition/property.hpp"
#include "sgmatch/pattern/combinators.hpp"
#include "sgmatch/pattern/predicates.hpp"
#include "sgmatch/pattern/vocabulary.hpp"

SGMATCH_BEGIN_NAMESPACE
namespace onednn {

/// The captures of the written-out form: the normalized value, and x - mean.
struct layer_norm_x;
struct layer_norm_centered;

/// ReduceMean(x) -> Sub(x, .) -> Pow(., 2) -> ReduceMean -> Add(., eps) -> Sqrt -> Div(d, .) ->
/// Mul(., gamma)? -> Add(., beta)?
inline constexpr auto layer_norm_written_out =
    op<ops::ReduceMean>(any().as<layer_norm_x>()) >> op<ops::Sub>(ref<layer_norm_x>()).input<1>().as<layer_norm_centered>() >>
    op<ops::Pow>(constant(2.0, 1e-6)).input<0>() >> op<ops::ReduceMean>() >> op<ops::Add>(constant()) >> op<ops::Sqrt>() >>
    op<ops::Div>(ref<layer_norm_centered>()).input<1>() >> optional(op<ops::Mul>(constant())) >>
    optional(op<ops::Add>(constant()));

/// A LayerNorm over the last axes from `axis` on, as a fused kernel: the source read plain,
/// the result plain.
class fused_layer_norm final : public fused_kernel {
public:
    fused_layer_norm(std::vector<float> scale, std::vector<float> shift, std::int64_t axis, float eps)
        : k_(std::move(scale), std::move(shift), axis, eps) {}
    tensor run(const tensor& src, const std::vector<tensor>& = {}) const override { return k_.run({src}); }
    void run_into(const tensor& src, const std::vector<tensor>& extra, const tensor& y) const override {
        run(src, extra).reorder_into(y, dnnl::stream(cpu_engine()));
    }
    dnnl::memory::desc dst_desc(const dims& src) const override { return plain_desc(src); }
    const std::vector<post_op>& post_ops() const override { return none_; }
    bool writes_into() const override { return false; }

private:
    layer_norm_kernel k_;
    std::vector<post_op> none_;
};

namespace detail {

/// What a match of layer_norm_written_out computes, read from the graph, or why oneDNN's layer
/// normalization does not compute it.
template <class N>
struct layer_norm_reading {
    std::string decline;
    value_ref<N> x{};
    std::int64_t axis = -1;
    float eps = 0;
    std::vector<float> scale, shift;  // one per normalized element
};

template <class G>
layer_norm_reading<typename graph_traits<G>::node_type> read_layer_norm(const G& g, const typename graph_traits<G>::node_type* nodes,
                                                                         std::size_t count, bool with_data) {
    using traits = graph_traits<G>;
    using N = typename traits::node_type;
    layer_norm_reading<N> r;
    auto no = [&](std::string why) {
        r.decline = "LayerNorm written out at '" + std::string(traits::name(g, nodes[0])) + "': " + std::move(why);
        return r;
    };
    if (count < 7) return no("the match is not the written-out form");
    r.x = traits::input(g, nodes[0], 0);
    const auto t = adapter<G>::value_type(g, r.x.node, r.x.port);
    if (!t || t->dims.empty()) return no("the normalized value's shape is unknown");
    const auto rank = static_cast<std::int64_t>(t->dims.size());
    for (auto d : t->dims)
        if (d < 1) return no("the normalized value's shape is unknown");
    // Both means over the same last axes, kept as 1.
    auto axes_of = [&](N mean) -> std::optional<std::vector<std::int64_t>> {
        const auto keep = traits::attr(g, mean, "keepdims");
        if (keep && keep->as_int() && *keep->as_int() == 0) return std::nullopt;
        const auto a = traits::attr(g, mean, "axes");
        if (!a || !a->as_ints()) return std::nullopt;
        std::vector<std::int64_t> v = *a->as_ints();
        for (auto& x : v) x = x < 0 ? x + rank : x;
        std::sort(v.begin(), v.end());
        return v;
    };
    const auto a0 = axes_of(nodes[0]), a1 = axes_of(nodes[3]);
    if (!a0 || !a1 || *a0 != *a1 || a0->empty()) return no("the means are not over the same given axes, kept as 1");
    for (std::size_t i = 0; i < a0->size(); ++i)
        if ((*a0)[i] != rank - static_cast<std::int64_t>(a0->size()) + static_cast<std::int64_t>(i))
            return no("the normalized axes are not the last ones");
    r.axis = (*a0)[0];
    std::int64_t inner = 1;
    for (std::int64_t i = r.axis; i < rank; ++i) inner *= t->dims[static_cast<std::size_t>(i)];
    // eps: the Add's constant operand.
    auto constant_operand = [&](N n) -> std::optional<const_tensor_view> {
        for (std::size_t i = 0; i < traits::input_count(g, n); ++i) {
            const auto v = traits::input(g, n, i);
            if (traits::kind(g, v.node) == node_kind::constant) return adapter<G>::constant(g, v.node);
        }
        return std::nullopt;
    };
    const auto e = constant_operand(nodes[4]);
    const auto eps = e ? e->scalar() : std::nullopt;
    if (!eps || !(*eps >= 0)) return no("epsilon is not a constant scalar");
    r.eps = static_cast<float>(*eps);
    // gamma and beta: one value per normalized element, or a scalar.
    auto per_element = [&](N n, std::vector<float>& out) -> bool {
        const auto c = constant_operand(n);
        if (!c) return false;
        std::int64_t cn = 1;
        for (std::size_t i = 0; i < c->rank; ++i) cn *= c->dims[i];
        if (cn != 1 && cn != inner) return false;
        if (!with_data) return true;
        const auto v = c->to_floats();
        if (!v) return false;
        out = cn == 1 ? std::vector<float>(static_cast<std::size_t>(inner), (*v)[0]) : *v;
        return true;
    };
    std::size_t i = 7;
    if (i < count && traits::op_name(g, nodes[i]) == "Mul") {
        if (!per_element(nodes[i], r.scale)) return no("gamma is not a constant of one value per normalized element");
        ++i;
    } else if (with_data) {
        r.scale.assign(static_cast<std::size_t>(inner), 1.0f);
    }
    if (i < count) {
        if (!per_element(nodes[i], r.shift)) return no("beta is not a constant of one value per normalized element");
        ++i;
    }
    if (i != count) return no("the match is not the written-out form");
    return r;
}

}  // namespace detail

/// The property "onednn.layer_norm": the written-out form becomes one fused node running oneDNN's
/// layer normalization.
template <class G>
property<G> make_layer_norm_property(std::string name = "onednn.layer_norm") {
    using N = typename graph_traits<G>::node_type;
    return make_reading_property<G>(
        std::move(name), layer_norm_written_out, "sgmatch::onednn::make_layer_norm_property", detail::read_layer_norm<G>,
        [](const detail::layer_norm_reading<N>& r, const subgraph<G>& s, fused_node& node) {
            node.src = detail::slot_of(s.inputs, r.x, "normalized value");
            node.kernel = std::make_shared<const fused_layer_norm>(r.scale, r.shift, r.axis, r.eps);
        });
}

}  // namespace onednn
SGMATCH_END_NAMESPACE
