// sgmatch/onednn/post_op_plan.hpp - how a kernel runs its post-ops for one destination shape:
// the prefix oneDNN fuses, the rest as primitives after the main one; and the rule that a fusion is
// never slower than its members (build_or_unfuse), with the log of the kernels that run unfused.
#pragma once

#include <algorithm>
#include <atomic>
#include <cstdio>
#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>
#include <tuple>
#include <vector>

#include <oneapi/dnnl/dnnl.hpp>

#include "sgmatch/detail/config.hpp"
#include "sgmatch/onednn/compat.hpp"
#include "sgmatch/onednn/post_op.hpp"
#include "sgmatch/onednn/shape_cache.hpp"
#include "sgmatch/onednn/tensor.hpp"

SGMATCH_BEGIN_NAMESPACE
namespace onednn {
namespace detail {

/// How a kernel runs its post-ops for one destination shape: the prefix oneDNN fuses (as
/// dnnl::post_ops), constant operands as tensors, and the rest as in-place primitives after the
/// main one (compat::fusable_prefix: oneDNN 2.6.3 gets some chains wrong when fused).
struct post_op_plan {
    std::size_t fused = 0;
    dnnl::post_ops po;
    std::map<std::size_t, tensor> constants;  // by post-op index
    struct tail_op {
        std::size_t op;
        dnnl::primitive prim;
        dnnl::memory::desc operand;  // a binary's or sum's second operand, in the layout the primitive reads
    };
    std::vector<tail_op> tail;
    std::unordered_map<int, dnnl::memory> dw_args;  // a fused depthwise post-op's weights and bias
    dims dst_dims;
    std::size_t axis = 1;

    /// Before the main primitive is built. fuse = false: every post-op runs after the main
    /// primitive (the fallback when oneDNN rejects the fused one).
    post_op_plan(const std::vector<post_op>& ops, const dims& dst, std::size_t channel_axis, bool fuse = true)
        : dst_dims(dst), axis(channel_axis) {
        fused = !fuse ? 0 : compat::fusable_prefix(ops, [](const post_op& p) {
            const auto* e = p.as<post_op::eltwise_op>();
            return e != nullptr ? std::make_tuple(true, e->alg, e->alpha, e->beta)
                                : std::make_tuple(false, dnnl::algorithm::undef, 0.0f, 0.0f);
        });
        for (std::size_t i = 0; i < ops.size(); ++i) {
            const post_op& p = ops[i];
            if (i < fused) {
                if (auto* e = p.as<post_op::eltwise_op>()) compat::append_eltwise(po, e->alg, e->alpha, e->beta);
                else if (p.is<post_op::sum_op>()) po.append_sum(1.0f);
                else if (auto* b = p.as<post_op::binary_op>()) po.append_binary(b->alg, plain_desc(operand_dims(p, dst, axis)));
                else compat::append_depthwise(po, p.as<post_op::depthwise_op>()->stride);
            }
            if (auto* b = p.as<post_op::binary_op>(); b != nullptr && b->input < 0)
                constants.emplace(i, tensor::from_values(b->values, operand_dims(p, dst, axis)));
        }
    }

    /// Once the main primitive is known: a fused depthwise post-op's weights and bias in the
    /// layouts the primitive asks for (reordered once).
    template <class PD>
    void bind_depthwise(const std::vector<post_op>& ops, const PD& pd) {
        for (std::size_t i = 0; i < fused; ++i) {
            const auto* dw = ops[i].as<post_op::depthwise_op>();
            if (dw == nullptr) continue;
            const auto O = static_cast<std::int64_t>(dw->weights.size() / 9);
            dnnl::stream s(cpu_engine());
            const auto wmd = pd.query_md(dnnl::query::exec_arg_md, DNNL_ARG_ATTR_POST_OP_DW | DNNL_ARG_WEIGHTS);
            dnnl::memory w(wmd, cpu_engine());
            tensor::view(dw->weights.data(), {O, 1, 1, 3, 3}).reorder_into(tensor(w), s);
            dw_args[DNNL_ARG_ATTR_POST_OP_DW | DNNL_ARG_WEIGHTS] = w;
            const auto bmd = pd.query_md(dnnl::query::exec_arg_md, DNNL_ARG_ATTR_POST_OP_DW | DNNL_ARG_BIAS);
            dnnl::memory b(bmd, cpu_engine());
            std::vector<float> bias = dw->bias.empty() ? std::vector<float>(static_cast<std::size_t>(O), 0.0f) : dw->bias;
            tensor::view(bias.data(), {O}).reorder_into(tensor(b), s);
            dw_args[DNNL_ARG_ATTR_POST_OP_DW | DNNL_ARG_BIAS] = b;
            s.wait();
        }
    }

    /// Once the main primitive's destination layout is known: the tail primitives.
    void build_tail(const std::vector<post_op>& ops, const dnnl::memory::desc& dst_md) {
        for (std::size_t i = fused; i < ops.size(); ++i) {
            const post_op& p = ops[i];
            if (p.is<post_op::depthwise_op>())
                throw kernel_error("a depthwise post-op runs only fused (oneDNN rejected the fused primitive or its "
                                   "post-op chain)");
            if (auto* e = p.as<post_op::eltwise_op>()) {
                tail.push_back({i, dnnl::eltwise_forward(compat::eltwise_pd(cpu_engine(), e->alg, dst_md, e->alpha, e->beta)), {}});
            } else {
                // A full-shape operand (a sum's residual) in the destination's layout: oneDNN's
                // binary of a blocked and a plain operand is many times slower than of two alike.
                const dims od = operand_dims(p, dst_dims, axis);
                auto* b = p.as<post_op::binary_op>();
                const auto a = b == nullptr ? dnnl::algorithm::binary_add : b->alg;  // a sum adds
                const dnnl::memory::desc operand = od == dst_dims ? dst_md : plain_desc(od);
                tail.push_back({i, dnnl::binary(compat::binary_pd(cpu_engine(), a, dst_md, operand, dst_md)), operand});
            }
        }
    }

    /// Bind the operands of the fused post-ops into args, run `main` into y, then the tail.
    /// extra[i] is the runtime operand of post-ops with input i. A sum whose residual is y itself
    /// accumulates in place.
    void run(const std::vector<post_op>& ops, const std::string& who, const dnnl::primitive& main,
             std::unordered_map<int, dnnl::memory> args, const std::vector<tensor>& extra, const tensor& y,
             dnnl::stream& s) const {
        auto check = [&](const tensor& t, const dims& want, const post_op& p) {
            if (t.shape() != want)
                throw kernel_error(who + ": the " + describe(p) + " operand has shape " + to_string(t.shape()) +
                                   ", the post-op needs " + to_string(want));
        };
        std::vector<tensor> keep;  // operands reordered for this call
        for (const auto& [k, m] : dw_args) args[k] = m;
        for (std::size_t i = 0; i < fused; ++i) {
            const post_op& p = ops[i];
            if (p.is<post_op::eltwise_op>() || p.is<post_op::depthwise_op>()) continue;
            if (p.is<post_op::sum_op>()) {
                const tensor& r = extra[static_cast<std::size_t>(p.input())];
                check(r, dst_dims, p);
                if (r.memory().get_data_handle() != y.memory().get_data_handle()) r.reorder_into(y, s);
                continue;
            }
            const int arg = DNNL_ARG_ATTR_MULTIPLE_POST_OP(static_cast<int>(i)) | DNNL_ARG_SRC_1;
            if (p.input() < 0) {
                args[arg] = constants.at(i).memory();
            } else {
                const dims want = operand_dims(p, dst_dims, axis);
                const tensor& t = extra[static_cast<std::size_t>(p.input())];
                check(t, want, p);
                keep.push_back(t.in_layout(plain_desc(want), s));
                args[arg] = keep.back().memory();
            }
        }
        // Every tail operand's shape, checked before y is written (y may be a residual the
        // caller still needs when this call fails: it then runs the ops unfused, executor.hpp).
        for (const auto& t : tail) {
            const post_op& p = ops[t.op];
            if (p.input() < 0) continue;  // an eltwise op or a constant operand
            check(extra[static_cast<std::size_t>(p.input())], operand_dims(p, dst_dims, axis), p);
        }
        // A tail operand that is the destination itself would be overwritten first: copy it now
        // (a buffer of its own, in the destination's layout).
        std::map<std::size_t, tensor> saved;
        for (const auto& t : tail) {
            const post_op& p = ops[t.op];
            if (p.input() < 0) continue;
            const tensor& r = extra[static_cast<std::size_t>(p.input())];
            if (r.memory().get_data_handle() == y.memory().get_data_handle()) {
                tensor copy = tensor::allocate(y.desc());
                r.reorder_into(copy, s);
                saved.emplace(t.op, std::move(copy));
            }
        }
        main.execute(s, args);
        for (const auto& t : tail) {
            const post_op& p = ops[t.op];
            if (p.is<post_op::eltwise_op>()) {
                t.prim.execute(s, {{DNNL_ARG_SRC, y.memory()}, {DNNL_ARG_DST, y.memory()}});
                continue;
            }
            dnnl::memory operand;
            if (p.input() < 0) {
                keep.push_back(constants.at(t.op).in_layout(t.operand, s));
                operand = keep.back().memory();
            } else {
                const dims want = operand_dims(p, dst_dims, axis);
                auto sv = saved.find(t.op);
                const tensor& x_op = sv != saved.end() ? sv->second : extra[static_cast<std::size_t>(p.input())];
                check(x_op, want, p);
                keep.push_back(x_op.in_layout(t.operand, s));
                operand = keep.back().memory();
            }
            t.prim.execute(s, {{DNNL_ARG_SRC_0, y.memory()}, {DNNL_ARG_SRC_1, operand}, {DNNL_ARG_DST, y.memory()}});
        }
        s.wait();
    }
};

/// How often a kernel fell back to running its post-ops unfused; the first time is logged.
class unfused_log {
public:
    void note(const std::string& who, const std::string& shape, const std::string& why) {
        {
            std::lock_guard<std::mutex> lock(m_);
            if (last_why_.empty()) last_why_ = why;
        }
        if (count_.fetch_add(1) == 0)
            std::fprintf(stderr, "sgmatch: %s: for %s, %s; its post-ops run unfused, as separate primitives after it (logged once per kernel)\n",
                         who.c_str(), shape.c_str(), why.c_str());
    }
    std::size_t count() const { return count_.load(); }
    /// Why the first shape runs unfused ("" while none does).
    std::string why() const {
        std::lock_guard<std::mutex> lock(m_);
        return last_why_;
    }

private:
    std::atomic<std::size_t> count_{0};
    mutable std::mutex m_;
    std::string last_why_;
};

/// Whether oneDNN's implementation name is one of its reference (unoptimized) implementations:
/// "ref:any", "ref_fused_convolution:any", "ref_int8:any".
inline bool reference_implementation(std::string_view impl) { return impl.substr(0, 3) == "ref"; }

/// A fusion is never slower than its members: `fused` (a primitive or its descriptor, with the
/// post-ops fused), unless oneDNN runs it on a reference implementation and alone() (the main op
/// with the post-ops after it) has an optimized one; impl(x) is x's implementation name. Where
/// alone() has no primitive, or a post-op runs only fused (a depthwise conv), `fused` it is.
template <class T, class Alone, class Impl>
T never_slower(T fused, Alone alone, Impl impl) {
    if (!reference_implementation(impl(fused))) return fused;
    try {
        T a = alone();
        if (!reference_implementation(impl(a))) return a;
    } catch (const dnnl::error&) {
    } catch (const kernel_error&) {
    }
    return fused;
}

/// Build a kernel's entry for one shape with its post-ops fused (make(true)); when oneDNN
/// rejects that, with every post-op run after the main primitive (make(false)), noted in log.
/// A fusion is never slower than its members: where oneDNN would run the fused primitive on a
/// reference implementation and the main op alone on an optimized one, the post-ops run after
/// it too (oneDNN 2.6 has only ref:any for a depthwise conv with a ReLU and a residual sum fused).
/// When oneDNN rejects the main op itself, a kernel_error names the kernel and the shape.
template <class Make>
auto build_or_unfuse(Make make, const std::string& who, const std::string& shape, unfused_log& log) {
    try {
        auto impl = [](const auto& e) { return std::string(compat::impl_name(e->pd)); };
        auto fused = make(true);
        auto chosen = never_slower(fused, [&] { return make(false); }, impl);
        if (chosen != fused)
            log.note(who, shape, "oneDNN runs the fused primitive on its reference implementation (" + impl(fused) +
                                     ") where the main op alone runs on " + impl(chosen));
        return chosen;
    } catch (const dnnl::error& fused_err) {
        try {
            auto e = make(false);
            log.note(who, shape, std::string("oneDNN rejected the fused primitive (") + fused_err.what() + ")");
            return e;
        } catch (const dnnl::error& err) {
            throw kernel_error(who + ": oneDNN has no primitive for " + shape + ", with or without its post-ops (" +
                               err.what() + ")");
        }
    }
}

/// What a fused kernel builds for one input shape: its primitive, its weights and bias in the
/// primitive's layouts (reordered once, from plain views of the spec's values), its post-op plan.
template <class Prim>
struct fused_entry {
    typename Prim::primitive_desc pd;
    Prim prim;
    dnnl::memory weights, bias;
    post_op_plan plan;

    /// plain_w / plain_b: the spec's weights and bias as plain views (plain_b empty: no bias).
    fused_entry(const typename Prim::primitive_desc& p, post_op_plan&& pl, const tensor& plain_w, const tensor& plain_b)
        : pd(p), prim(p), plan(std::move(pl)) {
        dnnl::stream s(cpu_engine());
        weights = dnnl::memory(pd.weights_desc(), cpu_engine());
        plain_w.reorder_into(tensor(weights), s);
        if (!plain_b.empty()) {
            bias = dnnl::memory(pd.bias_desc(), cpu_engine());
            plain_b.reorder_into(tensor(bias), s);
        }
        s.wait();
    }
};

/// The common body of a fused kernel's run_into (Entry: a fused_entry): check
/// the operands and the destination, bring the source into the primitive's layout, bind weights,
/// bias and a per-call scratchpad, and run the post-op plan.
template <class Entry>
void run_fused(const Entry& e, const std::string& who, const std::vector<post_op>& ops, const tensor& src,
               const std::vector<tensor>& extra, const tensor& y) {
    if (extra.size() < extra_inputs(ops))
        throw kernel_error(who + ": " + std::to_string(extra.size()) + " extra inputs given, " +
                           std::to_string(extra_inputs(ops)) + " needed");
    if (y.empty() || y.desc() != e.pd.dst_desc())
        throw kernel_error(who + ": the destination does not have the primitive's layout (use dst_desc(src_shape))");
    dnnl::stream s(cpu_engine());
    const tensor x = src.in_layout(e.pd.src_desc(), s);
    std::unordered_map<int, dnnl::memory> args{
        {DNNL_ARG_SRC, x.memory()}, {DNNL_ARG_WEIGHTS, e.weights}, {DNNL_ARG_DST, y.memory()}};
    if (e.bias) args[DNNL_ARG_BIAS] = e.bias;
    const tensor scratch = tensor::allocate(e.pd.scratchpad_desc());  // per call: runs may overlap
    args[DNNL_ARG_SCRATCHPAD] = scratch.memory();
    e.plan.run(ops, who, e.prim, std::move(args), extra, y, s);
}

}  // namespace detail
}  // namespace onednn
SGMATCH_END_NAMESPACE
