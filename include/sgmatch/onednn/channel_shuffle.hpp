// sgmatch/onednn/channel_shuffle.hpp - a channel shuffle written out the way exporters emit it
// (ShuffleNet's Reshape -> Transpose -> Reshape) recognised and run as one oneDNN reorder in the
// layout the source comes in.
//
//   auto prop = sgmatch::onednn::make_channel_shuffle_property<G>();   // in the ready-made backend
//
// The form, x of shape [.., C, ..] (C at `axis`):
//   Reshape(x, [.., G, C/G, ..]) -> Transpose(swapping those two) -> Reshape(., x's shape)
// Output channel j * G + g is input channel g * (C/G) + j. Run unfused, each of the three ops
// copies the tensor through the plain layout and the next convolution reorders it back to its
// own (channels last); fused, one reorder reads the source in its layout (plain or channels
// last; a blocked one is made channels last first) and writes the result in the same one, the
// channels permuted through strides. The property declines, with the reason, a form whose
// shapes are unknown or are not a split of one axis, the two parts swapped and joined back.
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include <oneapi/dnnl/dnnl.hpp>

#include "sgmatch/analysis/notation.hpp"
#include "sgmatch/detail/config.hpp"
#include "sgmatch/graph/adapter.hpp"
#include "sgmatch/onednn/compat.hpp"
#include "sgmatch/onednn/op_kernels/base.hpp"
#include "sgmatch/onednn/post_ops.hpp"
#include "sgmatch/onednn/property.hpp"
#include "sgmatch/onednn/tensor.hpp"
#include "sgmatch/partition/property.hpp"
#include "sgmatch/pattern/combinators.hpp"
#include "sgmatch/pattern/vocabulary.hpp"

SGMATCH_BEGIN_NAMESPACE
namespace onednn {

/// Reshape(x, s1) -> Transpose -> Reshape(., s2)
inline constexpr auto channel_shuffle_written_out =
    op<ops::Reshape>(any(), any()) >> op<ops::Transpose>() >> op<ops::Reshape>(any()).input<0>();

/// A channel shuffle of `groups` groups along `axis` as a fused kernel: src is x; the result in
/// x's layout (plain or channels last), or channels last where x is blocked.
class fused_channel_shuffle final : public fused_kernel {
public:
    fused_channel_shuffle(std::string name, std::int64_t axis, std::int64_t groups)
        : name_(std::move(name)), axis_(axis), groups_(groups) {}
    std::int64_t groups() const { return groups_; }
    const std::vector<post_op>& post_ops() const override { return none_; }
    bool writes_into() const override { return false; }
    dnnl::memory::desc dst_desc(const dims& src) const override { return plain_desc(src); }

    tensor run(const tensor& src, const std::vector<tensor>& = {}) const override {
        const auto p = cache_.get(detail::layout_key(src.desc()), [&] { return build(src.desc()); });
        dnnl::stream s(cpu_engine());
        const tensor x = src.in_layout(p->layout, s);
        tensor y = tensor::allocate(p->layout);
        dnnl::memory from(p->from, cpu_engine(), x.memory().get_data_handle()), to(p->to, cpu_engine(), y.memory().get_data_handle());
        p->prim.execute(s, {{DNNL_ARG_FROM, from}, {DNNL_ARG_TO, to}});
        s.wait();
        return y;
    }
    void run_into(const tensor& src, const std::vector<tensor>& extra, const tensor& y) const override {
        if (y.empty() || y.shape() != src.shape()) throw kernel_error(who() + ": the destination does not have the source's shape");
        run(src, extra).reorder_into(y, dnnl::stream(cpu_engine()));
    }

private:
    struct plan {
        dnnl::memory::desc layout;  // of the source as read and of the result
        dnnl::memory::desc from, to;  // both buffers seen with the axis split in two
        dnnl::reorder prim;
    };

    std::string who() const { return "sgmatch::onednn::fused_channel_shuffle('" + name_ + "')"; }

    std::shared_ptr<const plan> build(const dnnl::memory::desc& src) const {
        using tag = dnnl::memory::format_tag;
        const dims xs = compat::dims_of(src);
        const std::size_t r = xs.size();
        if (r < 2 || r > 5) throw kernel_error(who() + ": a source of rank " + std::to_string(r) + " (2 to 5 taken)");
        const std::int64_t a = axis_ < 0 ? axis_ + static_cast<std::int64_t>(r) : axis_;
        if (a < 0 || a >= static_cast<std::int64_t>(r) || groups_ < 1 || xs[static_cast<std::size_t>(a)] % groups_ != 0)
            throw kernel_error(who() + ": " + std::to_string(groups_) + " groups do not divide axis " + std::to_string(axis_) +
                               " of " + to_string(xs));
        // The layout: the source's when plain or channels last, else channels last.
        const dnnl::memory::desc plain = plain_desc(xs);
        const dnnl::memory::desc last =
            r < 3 ? plain : dnnl::memory::desc(xs, dnnl::memory::data_type::f32, r == 3 ? tag::acb : r == 4 ? tag::acdb : tag::acdeb);
        auto p = std::make_shared<plan>();
        p->layout = src == plain ? plain : last;
        // Dims from the outermost to the innermost in that layout, with their strides.
        std::vector<std::size_t> order(r);
        for (std::size_t i = 0; i < r; ++i) order[i] = i;
        if (p->layout != plain) std::rotate(order.begin() + 1, order.begin() + 2, order.end());  // N, spatial.., C
        dims stride(r);
        std::int64_t st = 1;
        for (std::size_t k = r; k-- > 0;) stride[order[k]] = st, st *= xs[order[k]];
        // Axis a split as [G, K]: the source reads channel g * K + j, the result writes j * G + g.
        const std::int64_t G = groups_, K = xs[static_cast<std::size_t>(a)] / groups_, sa = stride[static_cast<std::size_t>(a)];
        dims vd, vs, vt;
        for (std::size_t k = 0; k < r; ++k) {
            const std::size_t i = order[k];
            if (static_cast<std::int64_t>(i) == a) {
                vd.insert(vd.end(), {G, K});
                vs.insert(vs.end(), {K * sa, sa});
                vt.insert(vt.end(), {sa, G * sa});
            } else {
                vd.push_back(xs[i]);
                vs.push_back(stride[i]);
                vt.push_back(stride[i]);
            }
        }
        p->from = dnnl::memory::desc(vd, dnnl::memory::data_type::f32, vs);
        p->to = dnnl::memory::desc(vd, dnnl::memory::data_type::f32, vt);
        p->prim = guarded([&] { return dnnl::reorder(dnnl::reorder::primitive_desc(cpu_engine(), p->from, cpu_engine(), p->to)); });
        return p;
    }

    std::string name_;
    std::int64_t axis_, groups_;
    std::vector<post_op> none_;
    detail::shape_cache<std::string, plan> cache_;
};

namespace detail {

/// What a match of channel_shuffle_written_out computes, read from the graph, or why it is no
/// channel shuffle.
template <class N>
struct channel_shuffle_reading {
    std::string decline;
    value_ref<N> x{};
    std::int64_t axis = 1, groups = 1;
};

template <class G>
channel_shuffle_reading<typename graph_traits<G>::node_type> read_channel_shuffle(const G& g,
                                                                                 const typename graph_traits<G>::node_type* nodes,
                                                                                 std::size_t count) {
    using traits = graph_traits<G>;
    using N = typename traits::node_type;
    channel_shuffle_reading<N> r;
    auto no = [&](std::string why) {
        r.decline = "channel shuffle at '" + std::string(traits::name(g, nodes[0])) + "': " + std::move(why);
        return r;
    };
    if (count != 3 || traits::op_name(g, nodes[0]) != "Reshape" || traits::op_name(g, nodes[1]) != "Transpose" ||
        traits::op_name(g, nodes[2]) != "Reshape")
        return no("the match is not the written-out form");
    r.x = traits::input(g, nodes[0], 0);
    auto dims_of = [&](value_ref<N> v) -> std::optional<dims> {
        const auto t = adapter<G>::value_type(g, v.node, v.port);
        if (!t || t->dims.empty()) return std::nullopt;
        for (auto d : t->dims)
            if (d < 1) return std::nullopt;
        if (t->type != dtype::f32 && t->type != dtype::unknown) return std::nullopt;
        return t->dims;
    };
    const auto xs = dims_of(r.x), split = dims_of(value_ref<N>{nodes[0], 0}), back = dims_of(value_ref<N>{nodes[2], 0});
    if (!xs || !split || !back) return no("a shape is unknown, or the values are not f32");
    if (*back != *xs) return no("the result does not have the source's shape");
    const std::size_t rank = xs->size();
    if (rank < 2 || rank > 5 || split->size() != rank + 1) return no("the first Reshape does not split one axis in two");
    // The split axis: where the shapes first differ.
    std::size_t a = 0;
    while (a < rank && (*xs)[a] == (*split)[a]) ++a;
    if (a == rank || (*split)[a] * (*split)[a + 1] != (*xs)[a]) return no("the first Reshape does not split one axis in two");
    for (std::size_t i = a + 1; i < rank; ++i)
        if ((*split)[i + 1] != (*xs)[i]) return no("the first Reshape does not split one axis in two");
    const auto perm = traits::attr(g, nodes[1], "perm");
    if (!perm || !perm->as_ints()) return no("the Transpose has no perm");
    std::vector<std::int64_t> want(rank + 1);
    for (std::size_t i = 0; i <= rank; ++i) want[i] = static_cast<std::int64_t>(i);
    std::swap(want[a], want[a + 1]);
    if (*perm->as_ints() != want) return no("the Transpose does not swap the two parts of the split axis");
    r.axis = static_cast<std::int64_t>(a);
    r.groups = (*split)[a];
    return r;
}

}  // namespace detail

/// The property "onednn.channel_shuffle": the written-out form becomes one fused node running
/// fused_channel_shuffle.
template <class G>
property<G> make_channel_shuffle_property(std::string name = "onednn.channel_shuffle") {
    using N = typename graph_traits<G>::node_type;
    return make_reading_property<G>(
        std::move(name), channel_shuffle_written_out, "sgmatch::onednn::make_channel_shuffle_property",
        [](const G& g, const N* nodes, std::size_t count, bool) { return detail::read_channel_shuffle<G>(g, nodes, count); },
        [](const detail::channel_shuffle_reading<N>& r, const subgraph<G>& s, fused_node& node) {
            node.src = detail::slot_of(s.inputs, r.x, "shuffled value");
            node.kernel = std::make_shared<const fused_channel_shuffle>(std::string(graph_traits<G>::name(*s.graph, s.nodes[0])),
                                                                        r.axis, r.groups);
        });
}

}  // namespace onednn
SGMATCH_END_NAMESPACE
