// sgmatch/onednn/concat_norm.hpp - a channel Concat read by a BatchNorm (+ Relu) and nothing else
// (DenseNet's pre-activation: every dense layer normalizes the concat of all feature maps before
// it) run as one pass over the concatenated parts.
//
//   auto prop = sgmatch::onednn::make_concat_batch_norm_property<G>();   // in the ready-made backend
//
// Unfused, the concat copies every part into a new tensor and the BatchNorm reads that tensor
// and writes it again: two round trips through memory of a tensor that grows with the block's
// depth. Fused, each part is read once and its channels are written normalized (and rectified)
// at their place in the result, on the OpenMP team oneDNN's primitives use (threads.hpp). The
// result is in the first part's layout when that is plain, else channels last. A part in
// another layout is reordered first, except channels blocked by 8 or 16 (what Winograd's and
// other jit kernels write), which a channels-last result reads as they are: a feature map that
// every later layer of the block reads is never reordered again. BatchNorm's affine form is
// folded per channel: y = x * a + b, a = scale / sqrt(var + eps), b = shift - mean * a.
// The property declines, with the reason, a concat along another axis than the channels,
// unknown shapes, and what the BatchNorm lowering declines (parameters not constant, training
// mode, ...); a concat whose result is read elsewhere too is no match of the chain.
#pragma once

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#include <oneapi/dnnl/dnnl.hpp>

#include "sgmatch/analysis/notation.hpp"
#include "sgmatch/detail/config.hpp"
#include "sgmatch/graph/adapter.hpp"
#include "sgmatch/onednn/compat.hpp"
#include "sgmatch/onednn/lowering.hpp"
#include "sgmatch/onednn/post_ops.hpp"
#include "sgmatch/onednn/property.hpp"
#include "sgmatch/onednn/tensor.hpp"
#include "sgmatch/onednn/threads.hpp"
#include "sgmatch/partition/property.hpp"
#include "sgmatch/pattern/combinators.hpp"
#include "sgmatch/pattern/vocabulary.hpp"

SGMATCH_BEGIN_NAMESPACE
namespace onednn {

/// Concat -> BatchNorm -> Relu?
inline constexpr auto concat_batch_norm = op<ops::Concat>() >> op<ops::BatchNorm>() >> optional(op<ops::Relu>());

namespace detail {

/// The layout with the channels (axis 1) innermost, for dims of rank 2 to 5 (rank 2: plain).
inline dnnl::memory::desc channels_last_desc(const dims& d) {
    using tag = dnnl::memory::format_tag;
    const std::size_t r = d.size();
    if (r < 3) return plain_desc(d);
    return dnnl::memory::desc(d, dnnl::memory::data_type::f32, r == 3 ? tag::acb : r == 4 ? tag::acdb : tag::acdeb);
}

/// The channels blocked by `block` (8 or 16: aBcd16b, what jit kernels such as Winograd's
/// write), for dims of rank 3 to 5; a zero desc for another rank.
inline dnnl::memory::desc channel_blocked_desc(const dims& d, int block) {
    using tag = dnnl::memory::format_tag;
    const std::size_t r = d.size();
    if (r < 3 || r > 5) return dnnl::memory::desc();
    const tag t = block == 16 ? (r == 3 ? tag::aBc16b : r == 4 ? tag::aBcd16b : tag::aBcde16b)
                              : (r == 3 ? tag::aBc8b : r == 4 ? tag::aBcd8b : tag::aBcde8b);
    return dnnl::memory::desc(d, dnnl::memory::data_type::f32, t);
}

/// The channel block of a tensor read as it is into a channels-last result: 1 for channels
/// last, 8 or 16 for those blocked layouts, 0 for another layout (reordered first).
inline std::size_t channel_block_of(const dnnl::memory::desc& m) {
    const dims d = compat::dims_of(m);
    if (m == channels_last_desc(d)) return 1;
    for (int b : {16, 8})
        if (m == channel_blocked_desc(d, b)) return static_cast<std::size_t>(b);
    return 0;
}

/// y[i] = x[i] * a[i] + b[i], rectified when Relu. Blocks of 16 the compiler vectorizes at -O2.
template <bool Relu>
void scale_shift(const float* __restrict x, const float* __restrict a, const float* __restrict b, float* __restrict y,
                 std::size_t n) {
    std::size_t i = 0;
    for (; i + 16 <= n; i += 16)
        for (std::size_t k = 0; k < 16; ++k) {
            const float v = x[i + k] * a[i + k] + b[i + k];
            y[i + k] = Relu && v < 0.0f ? 0.0f : v;
        }
    for (; i < n; ++i) {
        const float v = x[i] * a[i] + b[i];
        y[i] = Relu && v < 0.0f ? 0.0f : v;
    }
}

/// y[i] = x[i] * a + b, rectified when Relu (one channel's plane of a plain tensor).
template <bool Relu>
void scale_shift_plane(const float* __restrict x, float a, float b, float* __restrict y, std::size_t n) {
    std::size_t i = 0;
    for (; i + 16 <= n; i += 16)
        for (std::size_t k = 0; k < 16; ++k) {
            const float v = x[i + k] * a + b;
            y[i + k] = Relu && v < 0.0f ? 0.0f : v;
        }
    for (; i < n; ++i) {
        const float v = x[i] * a + b;
        y[i] = Relu && v < 0.0f ? 0.0f : v;
    }
}

}  // namespace detail

/// Concat along the channels of src and extra..., then an inference BatchNorm with constant
/// parameters (relu fused when spec.relu), as one pass; thread-safe.
class fused_concat_batch_norm final : public fused_kernel {
public:
    explicit fused_concat_batch_norm(batch_norm_spec s) : spec_(std::move(s)) {
        const std::size_t C = spec_.scale.size();
        if (C == 0 || spec_.shift.size() != C || spec_.mean.size() != C || spec_.var.size() != C)
            throw kernel_error(who() + ": scale, shift, mean and var need one value per channel each");
        a_.resize(C);
        b_.resize(C);
        for (std::size_t c = 0; c < C; ++c) {
            const double k = static_cast<double>(spec_.scale[c]) / std::sqrt(static_cast<double>(spec_.var[c]) + spec_.eps);
            a_[c] = static_cast<float>(k);
            b_[c] = static_cast<float>(spec_.shift[c] - spec_.mean[c] * k);
        }
        if (spec_.relu) post_ops_.push_back(post_op::eltwise(dnnl::algorithm::eltwise_relu));
    }
    const batch_norm_spec& spec() const { return spec_; }

    tensor run(const tensor& src, const std::vector<tensor>& extra) const override {
        tensor y = tensor::allocate(dst_desc_for(src));
        run_into(src, extra, y);
        return y;
    }
    /// y: of the concatenated dims, plain or channels last (another layout: computed in the
    /// layout dst_desc_for gives, then reordered into y).
    void run_into(const tensor& src, const std::vector<tensor>& extra, const tensor& y) const override {
        std::vector<const tensor*> parts{&src};
        for (const auto& e : extra) parts.push_back(&e);
        const dims out = output_dims(parts);
        if (y.empty() || y.shape() != out)
            throw kernel_error(who() + ": the destination is not of dims " + to_string(out));
        dnnl::stream s(cpu_engine());
        const bool plain = y.desc() == plain_desc(out);
        if (!plain && y.desc() != detail::channels_last_desc(out)) {
            tensor t = run(src, extra);
            t.reorder_into(y, s);
            s.wait();
            return;
        }
        std::vector<tensor> in;  // each part in the result's layout (channels last: or blocked, read as it is)
        for (const tensor* p : parts) {
            const dims d = p->shape();
            if (!plain && detail::channel_block_of(p->desc()) != 0) in.push_back(*p);
            else in.push_back(p->in_layout(plain ? plain_desc(d) : detail::channels_last_desc(d), s));
        }
        s.wait();
        compute(in, out, plain, static_cast<float*>(y.memory().get_data_handle()));
    }
    /// The concatenated dims: src's with the BatchNorm's channel count.
    dnnl::memory::desc dst_desc(const dims& src) const override { return plain_desc(with_channels(src)); }
    /// Plain for a plain first part, else channels last.
    dnnl::memory::desc dst_desc_for(const tensor& src) const override {
        const dims d = with_channels(src.shape());
        return src.desc() == plain_desc(src.shape()) ? plain_desc(d) : detail::channels_last_desc(d);
    }
    const std::vector<post_op>& post_ops() const override { return post_ops_; }

private:
    std::string who() const { return "sgmatch::onednn::fused_concat_batch_norm('" + spec_.name + "')"; }

    dims with_channels(dims d) const {
        if (d.size() < 2 || d.size() > 5) throw kernel_error(who() + ": a part of rank " + std::to_string(d.size()) + " (2 to 5 taken)");
        d[1] = static_cast<std::int64_t>(a_.size());
        return d;
    }

    // The parts' dims checked (the same but the channels, which add up to the BatchNorm's).
    dims output_dims(const std::vector<const tensor*>& parts) const {
        const dims first = parts[0]->shape();
        const dims out = with_channels(first);
        std::int64_t channels = 0;
        for (const tensor* p : parts) {
            const dims d = p->shape();
            bool same = d.size() == first.size();
            for (std::size_t i = 0; same && i < d.size(); ++i) same = i == 1 || d[i] == first[i];
            if (!same) throw kernel_error(who() + ": parts " + to_string(first) + " and " + to_string(d) + " differ outside the channels");
            if (compat::data_type_of(p->desc()) != dnnl::memory::data_type::f32) throw kernel_error(who() + ": a part is not f32");
            channels += d[1];
        }
        if (channels != out[1])
            throw kernel_error(who() + ": the parts have " + std::to_string(channels) + " channels, the BatchNorm " +
                               std::to_string(out[1]));
        return out;
    }

    void compute(const std::vector<tensor>& in, const dims& out, bool plain, float* y) const {
        const auto C = static_cast<std::size_t>(out[1]), N = static_cast<std::size_t>(out[0]);
        std::size_t S = 1;
        for (std::size_t i = 2; i < out.size(); ++i) S *= static_cast<std::size_t>(out[i]);
        if (N * S == 0) return;  // nothing to write
        struct part {
            const float* x;
            std::size_t channels, offset;
            std::size_t block;  // channels last: 1; blocked by 8 or 16 channels: 8 or 16
        };
        std::vector<part> ps;
        std::size_t off = 0;
        for (const tensor& t : in) {
            const auto c = static_cast<std::size_t>(t.shape()[1]);
            ps.push_back({static_cast<const float*>(t.memory().get_data_handle()), c, off, plain ? 1 : detail::channel_block_of(t.desc())});
            off += c;
        }
        const float* a = a_.data();
        const float* b = b_.data();
        const bool relu = spec_.relu;
        if (!plain) {  // channels last: pixel by pixel, each part's channels in a row
            parallel_ranges(N * S, std::max<std::size_t>(1, 16384 / C), [&](std::size_t p0, std::size_t p1) {
                auto run = [&](const float* x, std::size_t at, std::size_t n, float* o) {
                    if (relu) detail::scale_shift<true>(x, a + at, b + at, o, n);
                    else detail::scale_shift<false>(x, a + at, b + at, o, n);
                };
                for (std::size_t p = p0; p < p1; ++p)
                    for (const part& q : ps) {
                        float* o = y + p * C + q.offset;
                        if (q.block == 1) {
                            run(q.x + p * q.channels, q.offset, q.channels, o);
                            continue;
                        }
                        // Blocked: image n's block k of pixel s at ((n * blocks + k) * S + s) * block.
                        const std::size_t n = p / S, sp = p % S, B = q.block, blocks = (q.channels + B - 1) / B;
                        for (std::size_t k = 0; k < blocks; ++k)
                            run(q.x + ((n * blocks + k) * S + sp) * B, q.offset + k * B, std::min(B, q.channels - k * B), o + k * B);
                    }
            });
            return;
        }
        std::vector<std::uint32_t> owner(C);  // plain: one plane per image and channel
        for (std::size_t k = 0; k < ps.size(); ++k)
            for (std::size_t c = 0; c < ps[k].channels; ++c) owner[ps[k].offset + c] = static_cast<std::uint32_t>(k);
        parallel_ranges(N * C, std::max<std::size_t>(1, 16384 / S), [&](std::size_t u0, std::size_t u1) {
            for (std::size_t u = u0; u < u1; ++u) {
                const std::size_t n = u / C, c = u % C;
                const part& q = ps[owner[c]];
                const float* x = q.x + (n * q.channels + (c - q.offset)) * S;
                if (relu) detail::scale_shift_plane<true>(x, a[c], b[c], y + u * S, S);
                else detail::scale_shift_plane<false>(x, a[c], b[c], y + u * S, S);
            }
        });
    }

    batch_norm_spec spec_;
    std::vector<float> a_, b_;  // per channel: y = x * a + b
    std::vector<post_op> post_ops_;
};

namespace detail {

/// What a match of concat_batch_norm computes, read from the graph, or why it is declined.
template <class N>
struct concat_batch_norm_reading {
    std::string decline;
    std::vector<value_ref<N>> parts;
    batch_norm_spec spec;
};

template <class G>
concat_batch_norm_reading<typename graph_traits<G>::node_type> read_concat_batch_norm(const G& g,
                                                                                      const typename graph_traits<G>::node_type* nodes,
                                                                                      std::size_t count, bool with_data) {
    using traits = graph_traits<G>;
    using N = typename traits::node_type;
    using norm = std::decay_t<decltype(op<ops::BatchNorm>() >> optional(op<ops::Relu>()))>;
    concat_batch_norm_reading<N> r;
    auto no = [&](std::string why) {
        r.decline = "concat + BatchNorm at '" + std::string(traits::name(g, nodes[0])) + "': " + std::move(why);
        return r;
    };
    if (count < 2 || traits::op_name(g, nodes[0]) != "Concat" || traits::op_name(g, nodes[1]) != "BatchNormalization")
        return no("the match is not a Concat read by a BatchNorm");
    const N cat = nodes[0];
    auto l = lower_match<G, norm>(g, nodes + 1, count - 1, with_data);
    if (!l.decline.empty()) return no(l.decline);
    r.spec = std::get<batch_norm_spec>(std::move(l.spec));
    const auto axis = traits::attr(g, cat, "axis");
    const std::size_t n = traits::input_count(g, cat);
    std::optional<tensor_type> first;
    std::int64_t channels = 0;
    for (std::size_t i = 0; i < n; ++i) {
        const auto v = traits::input(g, cat, i);
        const auto t = adapter<G>::value_type(g, v.node, v.port);
        if (!t || t->dims.empty()) return no("the shape of part " + std::to_string(i) + " is unknown");
        if (t->type != dtype::f32 && t->type != dtype::unknown) return no("part " + std::to_string(i) + " is not f32");
        for (auto d : t->dims)
            if (d < 1) return no("part " + std::to_string(i) + " has a dimension unknown or empty");
        if (t->dims.size() < 2 || t->dims.size() > 5) return no("parts of rank " + std::to_string(t->dims.size()) + " (2 to 5 taken)");
        if (!first) first = t;
        bool same = t->dims.size() == first->dims.size();
        for (std::size_t k = 0; same && k < t->dims.size(); ++k) same = k == 1 || t->dims[k] == first->dims[k];
        if (!same) return no("the parts differ outside the channels");
        channels += t->dims[1];
        r.parts.push_back(v);
    }
    if (n == 0) return no("the concat has no input");
    const auto rank = static_cast<std::int64_t>(first->dims.size());
    const std::optional<std::int64_t> a = axis ? axis->as_int() : std::nullopt;
    if (!a || (*a != 1 && *a != 1 - rank)) return no("the concat is not along the channels (axis 1)");
    if (channels != static_cast<std::int64_t>(r.spec.mean.size()))
        return no("the parts have " + std::to_string(channels) + " channels, the BatchNorm " + std::to_string(r.spec.mean.size()));
    return r;
}

}  // namespace detail

/// The property "onednn.concat_batch_norm": a channel Concat read only by a BatchNorm (+ Relu)
/// becomes one fused node running fused_concat_batch_norm; src is the first part, extra the
/// others in order.
template <class G>
property<G> make_concat_batch_norm_property(std::string name = "onednn.concat_batch_norm") {
    using N = typename graph_traits<G>::node_type;
    return make_reading_property<G>(
        std::move(name), concat_batch_norm, "sgmatch::onednn::make_concat_batch_norm_property", detail::read_concat_batch_norm<G>,
        [](detail::concat_batch_norm_reading<N> r, const subgraph<G>& s, fused_node& node) {
            node.src = detail::slot_of(s.inputs, r.parts[0], "concat's first part");
            for (std::size_t i = 1; i < r.parts.size(); ++i) node.extra.push_back(detail::slot_of(s.inputs, r.parts[i], "concat's part"));
            node.kernel = std::make_shared<const fused_concat_batch_norm>(std::move(r.spec));
        });
}

}  // namespace onednn
SGMATCH_END_NAMESPACE
