// sgmatch/onednn/op_kernels/tensor.hpp - data movement: Flatten, Reshape, Concat, Transpose, Slice, and
// the reductions.
#pragma once

#include <algorithm>
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
#include "sgmatch/onednn/op_kernels/base.hpp"
#include "sgmatch/onednn/op_kernels/nn.hpp"
#include "sgmatch/onednn/tensor.hpp"

SGMATCH_BEGIN_NAMESPACE
namespace onednn {

/// Flatten: to plain layout, then the same buffer read as [d0 * ... * d(axis-1), rest].
class flatten_kernel final : public op_kernel {
public:
    explicit flatten_kernel(std::int64_t axis) : axis_(axis) {}
    const char* kind() const override { return "flatten"; }
    tensor run(const std::vector<tensor>& in) const override {
        dnnl::stream s(cpu_engine());
        const dims d = in.at(0).shape();
        tensor p = tensor::allocate(plain_desc(d));  // a copy: the result must not alias the input
        in[0].reorder_into(p, s);
        s.wait();
        std::int64_t a = 1, b = 1;
        const std::int64_t axis = axis_ < 0 ? axis_ + static_cast<std::int64_t>(d.size()) : axis_;  // counted from the back
        for (std::size_t i = 0; i < d.size(); ++i) (static_cast<std::int64_t>(i) < axis ? a : b) *= d[i];
        return p.reshaped({a, b});
    }

private:
    std::int64_t axis_;
};

/// Reshape to a constant shape (ONNX: 0 copies the input's dim, -1 is inferred): the values
/// copied into a new plain tensor (a result never aliases its input).
class reshape_kernel final : public op_kernel {
public:
    explicit reshape_kernel(dims shape) : shape_(std::move(shape)) {}
    const char* kind() const override { return "reshape"; }
    tensor run(const std::vector<tensor>& in) const override {
        const dims xs = in.at(0).shape();
        const dims to = output_dims(xs, shape_);
        dnnl::stream s(cpu_engine());
        tensor y = tensor::allocate(plain_desc(xs));
        in[0].reorder_into(y, s);
        s.wait();
        return y.reshaped(to);
    }
    /// ONNX Reshape's result shape for input dims xs and the requested shape (0 copies the
    /// input's dim, one -1 is inferred), or a kernel_error.
    static dims output_dims(const dims& xs, const dims& shape) {
        std::int64_t count = 1, known = 1;
        for (auto d : xs) count *= d;
        dims to = shape;
        std::size_t infer = to.size();
        for (std::size_t i = 0; i < to.size(); ++i) {
            if (to[i] == 0 && i < xs.size()) to[i] = xs[i];
            if (to[i] == -1 && infer == to.size()) infer = i;
            else if (to[i] < 1) infer = to.size() + 1;  // invalid
            else known *= to[i];
        }
        const bool ok = infer == to.size() ? known == count
                                           : infer < to.size() && known != 0 && count % known == 0;
        if (!ok)
            throw kernel_error("sgmatch::onednn::reshape_kernel: cannot reshape " + to_string(xs) + " to " +
                               to_string(shape));
        if (infer < to.size()) to[infer] = count / known;
        return to;
    }

private:
    dims shape_;
};

/// Concat along `axis`: each part read in the layout it comes in, the result in oneDNN's choice.
class concat_kernel final : public op_kernel {
public:
    explicit concat_kernel(std::int64_t axis) : axis_(axis) {}
    const char* kind() const override { return "concat"; }
    bool reads_constants() const override { return true; }
    tensor run(const std::vector<tensor>& in) const override {
        if (in.empty()) throw kernel_error("sgmatch::onednn::concat_kernel: no inputs");
        const dims first = in[0].shape();
        const int axis = detail::axis_index(axis_, first.size(), "concat_kernel");
        dims out = first;
        out[static_cast<std::size_t>(axis)] = 0;
        std::string key;
        for (const auto& t : in) {
            dims d = t.shape();
            if (d.size() != first.size())
                throw kernel_error("sgmatch::onednn::concat_kernel: parts " + to_string(first) + " and " + to_string(d) +
                                   " differ in rank");
            out[static_cast<std::size_t>(axis)] += d[static_cast<std::size_t>(axis)];
            d[static_cast<std::size_t>(axis)] = first[static_cast<std::size_t>(axis)];
            if (d != first)
                throw kernel_error("sgmatch::onednn::concat_kernel: parts " + to_string(first) + " and " +
                                   to_string(t.shape()) + " differ outside axis " + std::to_string(axis));
            key += detail::layout_key(t.desc()) + "|";
        }
        // One layout for every part and the result: the one that holds most of the elements
        // (parts in layouts mixed are concatenated by oneDNN's reference code, and the result's
        // layout would be the first part's); the others are reordered into it.
        auto plan = cache_.get(key, [&] {
            // layout (as a key) -> elements held in it, and a part in it
            std::map<std::string, std::pair<std::size_t, std::size_t>> weight;
            for (std::size_t i = 0; i < in.size(); ++i) {
                const auto l = compat::same_layout(in[i].desc(), first);
                auto& w = weight[l ? detail::layout_key(*l) : "?" + std::to_string(i)];
                w.first += in[i].element_count();
                w.second = i;
            }
            std::size_t best = 0, most = 0;
            for (const auto& [k, w] : weight)
                if (w.first > most && compat::same_layout(in[w.second].desc(), first)) most = w.first, best = w.second;
            const auto dst = weight.size() > 1 ? compat::same_layout(in[best].desc(), out) : std::nullopt;
            auto p = std::make_shared<concat_plan>();
            for (const auto& t : in) p->srcs.push_back(dst ? compat::same_layout(in[best].desc(), t.shape()).value_or(t.desc()) : t.desc());
            p->pd = detail::with_primitive<dnnl::concat>(detail::make_pd<pd_t>(
                [&] {
                    return dst ? compat::concat_pd(cpu_engine(), *dst, axis, p->srcs, detail::user_scratchpad())
                               : compat::concat_pd(cpu_engine(), axis, p->srcs, detail::user_scratchpad());
                },
                [] { return std::string("sgmatch::onednn::concat_kernel: oneDNN has no concat for these parts"); }));
            return std::shared_ptr<const concat_plan>(std::move(p));
        });
        const auto* pd = plan->pd.get();
        tensor y = tensor::allocate(pd->dst_desc());
        std::unordered_map<int, dnnl::memory> args{{DNNL_ARG_DST, y.memory()}};
        std::vector<tensor> moved;  // parts reordered into the common layout, alive until the run ends
        for (std::size_t i = 0; i < in.size(); ++i) {
            if (in[i].desc() == plan->srcs[i]) {
                args[DNNL_ARG_MULTIPLE_SRC + static_cast<int>(i)] = in[i].memory();
                continue;
            }
            moved.push_back(in[i].in_layout(plan->srcs[i], dnnl::stream(cpu_engine())));
            args[DNNL_ARG_MULTIPLE_SRC + static_cast<int>(i)] = moved.back().memory();
        }
        detail::exec_with_scratch(pd->prim, pd->scratchpad_desc(), std::move(args));
        return y;
    }

private:
    using pd_t = dnnl::concat::primitive_desc;
    struct concat_plan {
        std::vector<dnnl::memory::desc> srcs;  // the layout each part is read in
        std::shared_ptr<const detail::built_primitive<pd_t, dnnl::concat>> pd;
    };
    std::int64_t axis_;
    detail::shape_cache<std::string, concat_plan> cache_;
};

/// Transpose (ONNX perm; empty: reversed axes) as one oneDNN reorder into a new plain tensor.
class transpose_kernel final : public op_kernel {
public:
    explicit transpose_kernel(dims perm) : perm_(std::move(perm)) {}
    const char* kind() const override { return "transpose"; }
    tensor run(const std::vector<tensor>& in) const override {
        const dims xs = in.at(0).shape();
        dims perm = perm_;
        if (perm.empty())
            for (std::size_t i = xs.size(); i-- > 0;) perm.push_back(static_cast<std::int64_t>(i));
        std::vector<bool> seen(xs.size(), false);
        bool ok = perm.size() == xs.size();
        for (std::size_t i = 0; ok && i < perm.size(); ++i) {
            ok = perm[i] >= 0 && perm[i] < static_cast<std::int64_t>(xs.size()) && !seen[static_cast<std::size_t>(perm[i])];
            if (ok) seen[static_cast<std::size_t>(perm[i])] = true;
        }
        if (!ok)
            throw kernel_error("sgmatch::onednn::transpose_kernel: perm " + to_string(perm) +
                               " is not a permutation of the axes of " + to_string(xs));
        // The output's axis i is the input's axis perm[i]: the output read with the input's axis
        // order has strides permuted back.
        dims ys(xs.size()), ystrides(xs.size()), xstrides(xs.size());
        for (std::size_t i = 0; i < xs.size(); ++i) ys[i] = xs[static_cast<std::size_t>(perm[i])];
        std::int64_t st = 1;
        for (std::size_t i = xs.size(); i-- > 0;) ystrides[i] = st, st *= ys[i];
        for (std::size_t i = 0; i < xs.size(); ++i) xstrides[static_cast<std::size_t>(perm[i])] = ystrides[i];
        // One reorder from the source in whatever layout it has (NHWC, blocked) into the result.
        dnnl::stream s(cpu_engine());
        tensor y = tensor::allocate(plain_desc(ys));
        const dnnl::memory as_x(dnnl::memory::desc(xs, dnnl::memory::data_type::f32, xstrides), cpu_engine(),
                                y.memory().get_data_handle());
        in[0].reorder_into(tensor(as_x), s);
        s.wait();
        return y;
    }

private:
    dims perm_;
};

/// Slice with unit steps (ONNX's clamping of starts and ends): one reorder from the part of the
/// source it keeps, read in the source's layout, into a result in that layout (plain where the
/// layout's blocks do not divide the part: the source is then made plain first).
class slice_kernel final : public op_kernel {
public:
    slice_kernel(dims starts, dims ends, dims axes) : starts_(std::move(starts)), ends_(std::move(ends)), axes_(std::move(axes)) {}
    const char* kind() const override { return "slice"; }
    tensor run(const std::vector<tensor>& in) const override {
        const tensor& x = in.at(0);
        const dims xs = x.shape();
        dims offsets(xs.size(), 0), out = xs;
        for (std::size_t k = 0; k < axes_.size(); ++k) {
            const int ax = detail::axis_index(axes_[k], xs.size(), "slice_kernel");
            const std::int64_t dim = xs[static_cast<std::size_t>(ax)];
            auto clamp = [dim](std::int64_t v) { return std::min(std::max(v < 0 ? v + dim : v, std::int64_t{0}), dim); };
            const std::int64_t b = clamp(starts_[k]), e = clamp(ends_[k]);
            offsets[static_cast<std::size_t>(ax)] = b;
            out[static_cast<std::size_t>(ax)] = std::max<std::int64_t>(e - b, 0);
        }
        auto p = cache_.get(detail::layout_key(x.desc()) + to_string(offsets) + to_string(out), [&] {
            auto r = std::make_shared<plan>();
            try {
                r->part = x.desc().submemory_desc(out, offsets);
                r->dst = compat::same_layout(x.desc(), out).value_or(plain_desc(out));
            } catch (const dnnl::error&) {  // blocks cut across: read it plain
                r->plain_first = true;
                r->part = plain_desc(xs).submemory_desc(out, offsets);
                r->dst = plain_desc(out);
            }
            r->prim = guarded([&] { return dnnl::reorder(dnnl::reorder::primitive_desc(cpu_engine(), r->part, cpu_engine(), r->dst)); });
            return std::shared_ptr<const plan>(std::move(r));
        });
        dnnl::stream s(cpu_engine());
        const tensor src = p->plain_first ? x.in_layout(plain_desc(xs), s) : x;
        tensor y = tensor::allocate(p->dst);
        dnnl::memory part(p->part, cpu_engine(), src.memory().get_data_handle());
        dnnl::memory dst = y.memory();
        p->prim.execute(s, part, dst);
        s.wait();
        return y;
    }

private:
    struct plan {
        bool plain_first = false;  // the source read plain
        dnnl::memory::desc part, dst;
        dnnl::reorder prim;
    };
    dims starts_, ends_, axes_;
    detail::shape_cache<std::string, plan> cache_;
};

/// A reduction over `axes` (all when empty) as a oneDNN reduction primitive, reading the source
/// in its layout; the result plain, the reduced axes kept as 1 or dropped (keepdims; not all of
/// them: a scalar is refused with a kernel_error). A mean or max over every axis after the
/// first two of a channels-last or blocked source is global pooling: oneDNN 2.6 reduces those
/// layouts on its reference code (4.4 ms where pooling takes 12 us, [8, 1024, 7, 7]).
class reduce_kernel final : public op_kernel {
public:
    reduce_kernel(dnnl::algorithm alg, float p, dims axes, bool keepdims)
        : alg_(alg), p_(p), axes_(std::move(axes)), keep_(keepdims),
          global_(alg == dnnl::algorithm::reduction_max, {}, {}, {}, {}) {}
    const char* kind() const override { return "reduce"; }
    tensor run(const std::vector<tensor>& in) const override {
        const tensor& x = in.at(0);
        const dims xs = x.shape();
        std::vector<bool> reduced(xs.size(), axes_.empty());
        for (auto a : axes_) reduced[static_cast<std::size_t>(detail::axis_index(a, xs.size(), "reduce_kernel"))] = true;
        dims kept = xs, out;
        for (std::size_t i = 0; i < xs.size(); ++i) {
            if (reduced[i]) kept[i] = 1;
            if (!reduced[i] || keep_) out.push_back(kept[i]);
        }
        if (out.empty()) throw kernel_error("sgmatch::onednn::reduce_kernel: every axis reduced and dropped: a scalar, which a oneDNN tensor cannot hold");
        bool spatial = xs.size() >= 3 && xs.size() <= 5 && !reduced[0] && !reduced[1] &&
                       (alg_ == dnnl::algorithm::reduction_mean || alg_ == dnnl::algorithm::reduction_max) &&
                       x.desc() != plain_desc(xs);
        for (std::size_t i = 2; i < xs.size(); ++i) spatial = spatial && reduced[i];
        if (spatial) {
            dnnl::stream s(cpu_engine());
            const tensor y = global_.run({x}).in_layout(plain_desc(kept), s);
            s.wait();
            return keep_ ? y : y.reshaped(out);
        }
        auto pd = cache_.get(detail::layout_key(x.desc()), [&] {
            return detail::with_primitive<dnnl::reduction>(detail::make_pd<pd_t>(
                [&] { return compat::reduction_pd(cpu_engine(), alg_, x.desc(), plain_desc(kept), p_, detail::user_scratchpad()); },
                [&] { return "sgmatch::onednn::reduce_kernel: oneDNN has no reduction of " + to_string(xs); }));
        });
        tensor y = tensor::allocate(pd->dst_desc());
        detail::exec_with_scratch(pd->prim, pd->scratchpad_desc(),
                                  {{DNNL_ARG_SRC, x.memory()}, {DNNL_ARG_DST, y.memory()}});
        return keep_ ? y : y.reshaped(out);
    }

private:
    using pd_t = dnnl::reduction::primitive_desc;
    dnnl::algorithm alg_;
    float p_;
    dims axes_;
    bool keep_;
    pool_kernel global_;  // used for a mean or max over the spatial axes of a channels-last or blocked source
    detail::shape_cache<std::string, detail::built_primitive<pd_t, dnnl::reduction>> cache_;
};

}  // namespace onednn
SGMATCH_END_NAMESPACE
