// sgmatch/onednn/attention.hpp - scaled dot-product attention, as exporters write it out,
// recognised and run as two oneDNN matmuls with the scale folded in.
//
//   auto prop = sgmatch::onednn::make_attention_property<G>();   // in the ready-made backend
//
// The form (each value a tensor of rank 2 to 5, the heads among the leading dims):
//   MatMul(Q', K') -> [Div | Mul](., scale)? -> Add(., mask)? -> Softmax(last axis) -> MatMul(., V')
//   -> Transpose?
// where Q' is Q, Transpose(Q), or either scaled by a constant (Div or Mul), K' is K^T or
// Transpose(K), V' is V or Transpose(V), and each transposed operand may be the Transpose of a
// Reshape to a constant shape (PyTorch's split into heads), read in place: the reshape of a
// plain source is the same buffer read with other dims. PyTorch's nn.MultiheadAttention ([L, B*H, D] sources,
// Q scaled before the product, K transposed by perm [1, 2, 0]) and the BERT form ([B, L, H, D]
// sources, perm [0, 2, 1, 3] / [0, 2, 3, 1], the scale and an additive mask on the scores) both
// have it.
//
// The kernel reads each transposed operand through strides (one reorder into the layout the
// matmul runs fastest on, none where the source has it already), multiplies the two scales into
// one eltwise post-op of the first matmul, adds the mask there (as a binary post-op where oneDNN
// takes its broadcast, else as a binary primitive in place), runs softmax in place and writes the
// second matmul's result through the output's transpose. The property declines, with the reason,
// what this does not compute: a scale that is not one constant value, a softmax over another
// axis, operands of another element type than f32, shapes that do not line up (V's last dim must
// be Q's: the output has the shape of Q' as seen through the output transpose; K' and V' have
// Q's batch dims, or 1 where they are shared, as in multi-query attention). Where the kernel
// rejects an input known only at run time it raises kernel_error, and the executor runs the
// matched ops unfused.
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <numeric>
#include <optional>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

#include <oneapi/dnnl/dnnl.hpp>

#include "sgmatch/analysis/notation.hpp"
#include "sgmatch/detail/config.hpp"
#include "sgmatch/graph/adapter.hpp"
#include "sgmatch/onednn/compat.hpp"
#include "sgmatch/onednn/op_kernels/tensor.hpp"
#include "sgmatch/onednn/post_ops.hpp"
#include "sgmatch/onednn/property.hpp"
#include "sgmatch/onednn/tensor.hpp"
#include "sgmatch/partition/property.hpp"
#include "sgmatch/pattern/combinators.hpp"
#include "sgmatch/pattern/vocabulary.hpp"

SGMATCH_BEGIN_NAMESPACE
namespace onednn {

namespace detail {
inline constexpr auto attention_split = op<ops::Transpose>(op<ops::Reshape>(any(), constant())) | op<ops::Transpose>(any());
inline constexpr auto attention_scale = op<ops::Div>(attention_split, constant()) | op<ops::Mul>(attention_split, constant()) |
                                        op<ops::Div>(any(), constant()) | op<ops::Mul>(any(), constant());
inline constexpr auto attention_heads = attention_split | any();
}  // namespace detail

/// MatMul(Q', K') -> scale? -> Add(mask)? -> Softmax -> MatMul(., V') -> Transpose?
inline constexpr auto attention_written_out =
    op<ops::MatMul>(detail::attention_scale | detail::attention_heads, detail::attention_heads) >>
    optional(op<ops::Div>(constant()).input<0>() | op<ops::Mul>(constant())) >> optional(op<ops::Add>(any())) >>
    op<ops::Softmax>() >> op<ops::MatMul>(detail::attention_heads).input<0>() >> optional(op<ops::Transpose>());

/// What an attention kernel computes. A perm is ONNX Transpose's (output dim i is input dim
/// perm[i]); empty: no transpose.
struct attention_spec {
    std::string name = "attention";
    std::vector<std::int64_t> q_perm, k_perm, v_perm, out_perm;  // k_perm gives K^T ([.., D, Lk])
    /// A Reshape before an operand's transpose: ONNX's target shape (0 copies the source's dim,
    /// one -1 is inferred); empty: none.
    std::vector<std::int64_t> q_shape, k_shape, v_shape;
    float scale = 1.0f;
    bool mask = false;          // an additive mask: extra input 2
    std::int64_t softmax_axis = -1;
};

/// softmax(scale * Q K^T + mask) V as a fused kernel: src is Q's source, extra = {K's source,
/// V's source, mask}; the result plain.
class fused_attention final : public fused_kernel {
public:
    explicit fused_attention(attention_spec s) : spec_(std::move(s)) {}
    const attention_spec& spec() const { return spec_; }
    const std::vector<post_op>& post_ops() const override { return none_; }

    tensor run(const tensor& src, const std::vector<tensor>& extra) const override {
        tensor y = tensor::allocate(dst_desc(src.shape()));
        run_into(src, extra, y);
        return y;
    }
    dnnl::memory::desc dst_desc(const dims& src) const override { return plain_desc(output_dims(src)); }
    /// The result's shape: Q' (V's last dim is Q's) through the output transpose.
    dims output_dims(const dims& src) const {
        const dims q = reshaped(src, spec_.q_shape, "Q");
        check_perm(spec_.q_perm, q.size(), "Q");
        return permuted(spec_.out_perm, permuted(spec_.q_perm, q));
    }

    void run_into(const tensor& src, const std::vector<tensor>& extra, const tensor& y) const override {
        if (extra.size() < (spec_.mask ? 3u : 2u))
            throw kernel_error(who() + ": " + std::to_string(extra.size()) + " extra inputs given, " +
                               (spec_.mask ? "3" : "2") + " needed");
        std::vector<dims> sources{src.shape(), extra[0].shape(), extra[1].shape()};
        if (spec_.mask) sources.push_back(extra[2].shape());
        const std::vector<dims> key = operand_dims(sources);
        const auto e = cache_.get(key, [&] { return build(key); });
        if (y.empty() || y.desc() != plain_desc(e->out)) throw kernel_error(who() + ": the destination is not plain " + to_string(e->out));
        dnnl::stream s(cpu_engine());
        auto plain = [&](const tensor& t) { return t.in_layout(plain_desc(t.shape()), s); };
        // A Reshape before a transpose reads the plain source with the operand's dims: no copy.
        const tensor q = plain(src).reshaped(key[0]), k = plain(extra[0]).reshaped(key[1]), v = plain(extra[1]).reshaped(key[2]);
        // An operand read through its view: itself when the view is the matmul's layout, else a
        // reorder into a buffer of this call.
        auto operand = [&](const tensor& from, const dnnl::memory::desc& view, const dnnl::memory::desc& want,
                           const dnnl::reorder& into) {
            dnnl::memory m(view, cpu_engine(), from.memory().get_data_handle());
            if (view == want) return tensor(m);
            tensor t = tensor::allocate(want);
            into.execute(s, {{DNNL_ARG_FROM, m}, {DNNL_ARG_TO, t.memory()}});
            return t;
        };
        const tensor qd = operand(q, e->q_view, e->q_want, e->q_reorder);
        const tensor kd = operand(k, e->k_view, e->k_want, e->k_reorder);
        const tensor vd = operand(v, e->v_view, e->v_want, e->v_reorder);
        const tensor scores = tensor::allocate(e->s_desc);
        std::unordered_map<int, dnnl::memory> a1{{DNNL_ARG_SRC, qd.memory()}, {DNNL_ARG_WEIGHTS, kd.memory()}, {DNNL_ARG_DST, scores.memory()}};
        const tensor scratch1 = tensor::allocate(e->mm1_pd.scratchpad_desc());
        a1[DNNL_ARG_SCRATCHPAD] = scratch1.memory();
        tensor mask;
        if (spec_.mask) {
            mask = plain(extra[2]).reshaped(e->mask_dims);
            if (e->mask_fused) a1[DNNL_ARG_ATTR_MULTIPLE_POST_OP(e->mask_post_op) | DNNL_ARG_SRC_1] = mask.memory();
        }
        e->mm1.execute(s, a1);
        if (spec_.mask && !e->mask_fused) {
            const tensor scratch = tensor::allocate(e->mask_add_pd.scratchpad_desc());
            e->mask_add.execute(s, {{DNNL_ARG_SRC_0, scores.memory()}, {DNNL_ARG_SRC_1, mask.memory()}, {DNNL_ARG_DST, scores.memory()},
                                    {DNNL_ARG_SCRATCHPAD, scratch.memory()}});
        }
        const tensor scratch_sm = tensor::allocate(e->softmax_pd.scratchpad_desc());
        e->softmax.execute(s, {{DNNL_ARG_SRC, scores.memory()}, {DNNL_ARG_DST, scores.memory()}, {DNNL_ARG_SCRATCHPAD, scratch_sm.memory()}});
        const bool direct = e->o_view == e->o_desc;
        const tensor o = direct ? tensor(dnnl::memory(e->o_desc, cpu_engine(), y.memory().get_data_handle()))
                                : tensor::allocate(e->o_desc);
        const tensor scratch2 = tensor::allocate(e->mm2_pd.scratchpad_desc());
        e->mm2.execute(s, {{DNNL_ARG_SRC, scores.memory()}, {DNNL_ARG_WEIGHTS, vd.memory()}, {DNNL_ARG_DST, o.memory()},
                           {DNNL_ARG_SCRATCHPAD, scratch2.memory()}});
        if (!direct) {
            dnnl::memory out(e->o_view, cpu_engine(), y.memory().get_data_handle());
            e->o_reorder.execute(s, {{DNNL_ARG_FROM, o.memory()}, {DNNL_ARG_TO, out}});
        }
        s.wait();
    }

    /// Whether the kernel takes inputs of these shapes (Q's, K's and V's sources, the mask's):
    /// kernel_error naming what does not line up. Builds nothing.
    void check(const std::vector<dims>& shapes) const { (void)shapes_of(operand_dims(shapes)); }

    /// The implementations oneDNN picked for the two matmuls at these input shapes.
    std::string implementation(const std::vector<dims>& shapes) const {
        const std::vector<dims> key = operand_dims(shapes);
        const auto e = cache_.get(key, [&] { return build(key); });
        return std::string(compat::impl_name(e->mm1_pd)) + " + " + compat::impl_name(e->mm2_pd);
    }

private:
    struct entry {
        dims out, mask_dims;
        dnnl::memory::desc q_view, q_want, k_view, k_want, v_view, v_want, s_desc, o_desc, o_view;
        dnnl::matmul::primitive_desc mm1_pd, mm2_pd;
        dnnl::binary::primitive_desc mask_add_pd;
        dnnl::softmax_forward::primitive_desc softmax_pd;
        dnnl::matmul mm1, mm2;
        dnnl::binary mask_add;
        dnnl::reorder q_reorder, k_reorder, v_reorder, o_reorder;  // where a view is not the layout wanted
        dnnl::softmax_forward softmax;
        bool mask_fused = false;
        int mask_post_op = 0;
    };

    std::string who() const { return "sgmatch::onednn::fused_attention('" + spec_.name + "')"; }
    // The matmuls, the mask's binary and the softmax take their scratchpad from the caller:
    // oneDNN's own one belongs to the thread that created the primitive, and runs come from any
    // thread. The reorders are cached like the single-op kernels' (op_kernels/tensor.hpp).
    static dnnl::primitive_attr user_scratchpad() {
        dnnl::primitive_attr a;
        a.set_scratchpad_mode(dnnl::scratchpad_mode::user);
        return a;
    }

    /// A source's dims after the Reshape before its transpose (`target` empty: none).
    dims reshaped(const dims& d, const std::vector<std::int64_t>& target, const char* what) const {
        if (target.empty()) return d;
        try {
            return reshape_kernel::output_dims(d, target);
        } catch (const kernel_error&) {
            throw kernel_error(who() + ": " + what + "'s source " + to_string(d) + " does not reshape to " + to_string(target));
        }
    }
    /// The sources' dims (Q, K, V, the mask) as the operands' (each reshaped where the spec says).
    std::vector<dims> operand_dims(std::vector<dims> sources) const {
        if (sources.size() < 3) throw kernel_error(who() + ": " + std::to_string(sources.size()) + " input shapes, 3 or 4 needed");
        sources[0] = reshaped(sources[0], spec_.q_shape, "Q");
        sources[1] = reshaped(sources[1], spec_.k_shape, "K");
        sources[2] = reshaped(sources[2], spec_.v_shape, "V");
        return sources;
    }

    void check_perm(const std::vector<std::int64_t>& p, std::size_t rank, const char* what) const {
        if (p.empty()) return;
        std::vector<bool> seen(rank, false);
        bool ok = p.size() == rank;
        for (auto i : p) {
            ok = ok && i >= 0 && static_cast<std::size_t>(i) < rank && !seen[static_cast<std::size_t>(i)];
            if (ok) seen[static_cast<std::size_t>(i)] = true;
        }
        if (!ok) throw kernel_error(who() + ": the transpose of " + what + " is not a permutation of its " + std::to_string(rank) + " dims");
    }
    static dims permuted(const std::vector<std::int64_t>& p, const dims& d) {
        if (p.empty()) return d;
        dims out(d.size());
        for (std::size_t i = 0; i < d.size(); ++i) out[i] = d[static_cast<std::size_t>(p[i])];
        return out;
    }
    static dims dense_strides(const dims& d) {
        dims st(d.size(), 1);
        for (std::size_t i = d.size(); i-- > 1;) st[i - 1] = st[i] * d[i];
        return st;
    }
    /// A plain source of shape d read through perm p: the view's dims and strides.
    static dnnl::memory::desc view_of(const std::vector<std::int64_t>& p, const dims& d) {
        const dims st = dense_strides(d);
        return dnnl::memory::desc(permuted(p, d), dnnl::memory::data_type::f32, permuted(p, st));
    }

    /// The operands' shapes as the matmuls see them, checked (kernel_error when they do not line up).
    struct layout {
        dims q, kt, v, scores, out, mask;  // mask: aligned to the scores' rank
    };
    layout shapes_of(const std::vector<dims>& key) const {
        const dims &qs = key[0], &ks = key[1], &vs = key[2];
        check_perm(spec_.q_perm, qs.size(), "Q");
        check_perm(spec_.k_perm, ks.size(), "K");
        check_perm(spec_.v_perm, vs.size(), "V");
        layout l{permuted(spec_.q_perm, qs), permuted(spec_.k_perm, ks), permuted(spec_.v_perm, vs), {}, {}, {}};
        const std::size_t r = l.q.size();
        const std::string shapes = "Q " + to_string(l.q) + ", K^T " + to_string(l.kt) + ", V " + to_string(l.v);
        auto fail = [&](const std::string& why) { return kernel_error(who() + ": " + shapes + ": " + why); };
        if (r < 2 || r > 5 || l.kt.size() != r || l.v.size() != r) throw fail("Q, K^T and V must have one rank, 2 to 5");
        // K and V may be shared along a batch dim (1 there: one set of keys for every head, as in
        // multi-query attention); the matmuls broadcast them.
        for (std::size_t i = 0; i + 2 < r; ++i)
            if ((l.kt[i] != l.q[i] && l.kt[i] != 1) || (l.v[i] != l.q[i] && l.v[i] != 1))
                throw fail("the batch dims of K and V are neither Q's nor 1");
        const std::int64_t D = l.q[r - 1], Lk = l.kt[r - 1];
        if (l.kt[r - 2] != D || l.v[r - 2] != Lk || l.v[r - 1] != D)
            throw fail("the dims do not line up as [.., L, D] x [.., D, Lk] and [.., Lk, D]");
        const std::int64_t axis = spec_.softmax_axis < 0 ? spec_.softmax_axis + static_cast<std::int64_t>(r) : spec_.softmax_axis;
        if (axis != static_cast<std::int64_t>(r) - 1) throw fail("the softmax is not over the last axis");
        l.scores = l.q;
        l.scores[r - 1] = Lk;
        check_perm(spec_.out_perm, r, "the output");
        l.out = permuted(spec_.out_perm, l.q);
        if (spec_.mask) {
            if (key.size() < 4) throw fail("no mask shape");
            const dims& m = key[3];
            if (m.size() > r) throw fail("the mask " + to_string(m) + " has a higher rank than the scores");
            l.mask = dims(r - m.size(), 1);
            l.mask.insert(l.mask.end(), m.begin(), m.end());
            for (std::size_t i = 0; i < r; ++i)
                if (l.mask[i] != 1 && l.mask[i] != l.scores[i])
                    throw fail("the mask " + to_string(m) + " does not broadcast to the scores " + to_string(l.scores));
        }
        return l;
    }

    std::shared_ptr<const entry> build(const std::vector<dims>& key) const {
        using md = dnnl::memory::desc;
        using dt = dnnl::memory::data_type;
        const layout l = shapes_of(key);
        const std::size_t r = l.q.size();
        auto e = std::make_shared<entry>();
        e->out = l.out;
        e->mask_dims = l.mask;
        e->q_view = view_of(spec_.q_perm, key[0]);
        e->q_want = plain_desc(l.q);
        e->k_view = view_of(spec_.k_perm, key[1]);
        dims k_dense = l.kt;  // K dense as [.., Lk, D], read as K^T [.., D, Lk]
        std::swap(k_dense[r - 2], k_dense[r - 1]);
        dims kst = dense_strides(k_dense);
        std::swap(kst[r - 2], kst[r - 1]);
        e->k_want = md(l.kt, dt::f32, kst);
        e->v_view = view_of(spec_.v_perm, key[2]);
        e->v_want = plain_desc(l.v);
        e->s_desc = plain_desc(l.scores);
        e->o_desc = plain_desc(l.q);
        // The output y (plain, Q' through out_perm) seen with the matmul's dims.
        if (spec_.out_perm.empty()) {
            e->o_view = e->o_desc;
        } else {
            const dims yst = dense_strides(l.out);
            dims ost(r);
            for (std::size_t i = 0; i < r; ++i) ost[static_cast<std::size_t>(spec_.out_perm[i])] = yst[i];
            e->o_view = md(l.q, dt::f32, ost);
        }
        auto fail = [&](const std::string& why) {
            return kernel_error(who() + ": Q " + to_string(l.q) + ", K^T " + to_string(l.kt) + ", V " + to_string(l.v) + ": " + why);
        };
        auto mm1 = [&](bool fuse_mask) {
            dnnl::post_ops po;
            if (spec_.scale != 1.0f) compat::append_eltwise(po, dnnl::algorithm::eltwise_linear, spec_.scale, 0.0f);
            if (fuse_mask) po.append_binary(dnnl::algorithm::binary_add, plain_desc(e->mask_dims));
            dnnl::primitive_attr attr = user_scratchpad();
            attr.set_post_ops(po);
            return compat::matmul_pd(cpu_engine(), e->q_want, e->k_want, md(), e->s_desc, attr);
        };
        try {
            if (spec_.mask) {
                try {
                    e->mm1_pd = mm1(true);
                    e->mask_fused = true;
                    e->mask_post_op = spec_.scale != 1.0f ? 1 : 0;
                } catch (const dnnl::error&) {
                    e->mm1_pd = mm1(false);
                    e->mask_add_pd = compat::binary_pd(cpu_engine(), dnnl::algorithm::binary_add, e->s_desc,
                                                       plain_desc(e->mask_dims), e->s_desc, user_scratchpad());
                    e->mask_add = dnnl::binary(e->mask_add_pd);
                }
            } else {
                e->mm1_pd = mm1(false);
            }
            e->mm1 = dnnl::matmul(e->mm1_pd);
            e->softmax_pd = compat::softmax_pd(cpu_engine(), e->s_desc, static_cast<int>(r - 1), user_scratchpad());
            e->softmax = dnnl::softmax_forward(e->softmax_pd);
            e->mm2_pd = compat::matmul_pd(cpu_engine(), e->s_desc, e->v_want, md(), e->o_desc, user_scratchpad());
            e->mm2 = dnnl::matmul(e->mm2_pd);
            auto reorder = [](const dnnl::memory::desc& from, const dnnl::memory::desc& to) {
                return from == to ? dnnl::reorder()
                                  : dnnl::reorder(dnnl::reorder::primitive_desc(cpu_engine(), from, cpu_engine(), to));
            };
            e->q_reorder = reorder(e->q_view, e->q_want);
            e->k_reorder = reorder(e->k_view, e->k_want);
            e->v_reorder = reorder(e->v_view, e->v_want);
            e->o_reorder = reorder(e->o_desc, e->o_view);
        } catch (const dnnl::error& err) {
            throw fail(std::string("oneDNN has no primitive for it (") + err.what() + ")");
        }
        return e;
    }

    attention_spec spec_;
    std::vector<post_op> none_;
    detail::shape_cache<std::vector<dims>, entry> cache_;
};

namespace detail {

/// What a match of attention_written_out computes, read from the graph, or why the fused kernel
/// does not compute it.
template <class N>
struct attention_reading {
    std::string decline;
    attention_spec spec;
    value_ref<N> q{}, k{}, v{}, mask{};
    value_ref<N> dst{};
};

template <class G>
attention_reading<typename graph_traits<G>::node_type> read_attention(const G& g, const typename graph_traits<G>::node_type* nodes,
                                                                       std::size_t count) {
    using traits = graph_traits<G>;
    using N = typename traits::node_type;
    attention_reading<N> r;
    auto no = [&](std::string why) {
        r.decline = "attention at '" + std::string(traits::name(g, nodes[0])) + "': " + std::move(why);
        return r;
    };
    auto member = [&](N n) {
        for (std::size_t i = 0; i < count; ++i)
            if (nodes[i] == n) return true;
        return false;
    };
    auto is = [&](N n, const char* op) { return member(n) && traits::kind(g, n) == node_kind::op && traits::op_name(g, n) == op; };
    std::size_t seen = 0;
    auto perm_of = [&](N t) -> std::optional<std::vector<std::int64_t>> {
        ++seen;
        const auto a = traits::attr(g, t, "perm");
        if (a && a->as_ints()) return *a->as_ints();
        const auto in = traits::input(g, t, 0);
        const auto ty = adapter<G>::value_type(g, in.node, in.port);
        if (!ty || ty->dims.empty()) return std::nullopt;  // the default perm reverses: the rank is needed
        std::vector<std::int64_t> p(ty->dims.size());
        std::iota(p.rbegin(), p.rend(), std::int64_t{0});
        return p;
    };
    // Where v is a member Transpose's output: its perm into `perm`, and v becomes its input;
    // then, where that is a member Reshape's output, its constant target shape into `shape`,
    // and v becomes the Reshape's input (an empty string: fine; else why not).
    auto through_transpose = [&](value_ref<N>& v, std::vector<std::int64_t>& perm, std::vector<std::int64_t>& shape,
                                 const char* what) -> std::string {
        if (!is(v.node, "Transpose")) return {};
        const auto p = perm_of(v.node);
        if (!p) return std::string("the rank of ") + what + " is unknown";
        perm = *p;
        v = traits::input(g, v.node, 0);
        if (!is(v.node, "Reshape")) return {};
        ++seen;
        const auto t = adapter<G>::constant(g, traits::input(g, v.node, 1).node);
        if (!t || t->rank != 1 || t->type != dtype::i64) return std::string("the Reshape of ") + what + " has no constant int64 shape";
        shape.assign(static_cast<std::size_t>(t->element_count()), 0);
        for (std::size_t i = 0; i < shape.size(); ++i) shape[i] = static_cast<std::int64_t>(t->at(i));
        if (shape.empty()) return std::string("the Reshape of ") + what + " makes a scalar";
        const auto az = traits::attr(g, v.node, "allowzero");
        if (az && az->as_int() && *az->as_int() != 0 && std::find(shape.begin(), shape.end(), 0) != shape.end())
            return std::string("the Reshape of ") + what + " asks for a dim of 0 (allowzero)";
        v = traits::input(g, v.node, 0);
        return {};
    };
    // A scale: Div(x, c) or Mul(x, c) / Mul(c, x), c one constant value; returns x.
    auto scale_of = [&](N n) -> std::optional<value_ref<N>> {
        ++seen;
        const bool div = traits::op_name(g, n) == "Div";
        for (std::size_t slot = 0; slot < 2; ++slot) {
            const auto c = traits::input(g, n, slot);
            if (traits::kind(g, c.node) != node_kind::constant || (div && slot != 1)) continue;
            const auto cv = adapter<G>::constant(g, c.node);
            const auto x = cv ? cv->scalar() : std::nullopt;
            if (!x || *x == 0) return std::nullopt;
            r.spec.scale *= static_cast<float>(div ? 1.0 / *x : *x);
            return traits::input(g, n, 1 - slot);
        }
        return std::nullopt;
    };
    N softmax{};
    std::size_t softmaxes = 0;
    for (std::size_t i = 0; i < count; ++i)
        if (is(nodes[i], "Softmax")) softmax = nodes[i], ++softmaxes;
    if (softmaxes != 1) return no("the match is not the written-out form");
    ++seen;
    if (const auto a = traits::attr(g, softmax, "axis"); a && a->as_int()) r.spec.softmax_axis = *a->as_int();
    // Back from the softmax: mask, scale, the first matmul.
    value_ref<N> cur = traits::input(g, softmax, 0);
    if (is(cur.node, "Add")) {
        ++seen;
        const auto a = traits::input(g, cur.node, 0), b = traits::input(g, cur.node, 1);
        const bool left = member(a.node);
        r.mask = left ? b : a;
        r.spec.mask = true;
        cur = left ? a : b;
    }
    if (is(cur.node, "Div") || is(cur.node, "Mul")) {
        const auto x = scale_of(cur.node);
        if (!x) return no("the scale of the scores is not one nonzero constant value");
        cur = *x;
    }
    if (!is(cur.node, "MatMul")) return no("the match is not the written-out form");
    const N mm1 = cur.node;
    ++seen;
    r.spec.name = std::string(traits::name(g, mm1));
    r.q = traits::input(g, mm1, 0);
    if (is(r.q.node, "Div") || is(r.q.node, "Mul")) {
        const auto x = scale_of(r.q.node);
        if (!x) return no("the scale of Q is not one nonzero constant value");
        r.q = *x;
    }
    if (auto why = through_transpose(r.q, r.spec.q_perm, r.spec.q_shape, "Q"); !why.empty()) return no(std::move(why));
    r.k = traits::input(g, mm1, 1);
    if (auto why = through_transpose(r.k, r.spec.k_perm, r.spec.k_shape, "K"); !why.empty()) return no(std::move(why));
    // Forward from the softmax: the second matmul, the output transpose.
    N mm2{};
    bool found = false;
    for (std::size_t i = 0; i < traits::user_count(g, softmax); ++i) {
        const auto u = traits::user(g, softmax, i);
        if (is(u.user, "MatMul") && u.port == 0) mm2 = u.user, found = true;
    }
    if (!found) return no("the match is not the written-out form");
    ++seen;
    r.v = traits::input(g, mm2, 1);
    if (auto why = through_transpose(r.v, r.spec.v_perm, r.spec.v_shape, "V"); !why.empty()) return no(std::move(why));
    r.dst = value_ref<N>{mm2, 0};
    for (std::size_t i = 0; i < traits::user_count(g, mm2); ++i) {
        const auto u = traits::user(g, mm2, i);
        if (is(u.user, "Transpose")) {
            const auto p = perm_of(u.user);
            if (!p) return no("the rank of the output is unknown");
            r.spec.out_perm = *p;
            r.dst = value_ref<N>{u.user, 0};
        }
    }
    std::size_t ops = 0;
    for (std::size_t i = 0; i < count; ++i) ops += traits::kind(g, nodes[i]) == node_kind::op ? 1 : 0;
    if (seen != ops) return no("the match is not the written-out form");
    for (const auto& x : {r.q, r.k, r.v})
        if (member(x.node)) return no("the match is not the written-out form");
    // A softmax axis counted from the front needs the rank: from a transpose, or a known shape.
    if (r.spec.softmax_axis >= 0) {
        std::size_t rank = 0;
        for (const auto* p : {&r.spec.q_perm, &r.spec.k_perm, &r.spec.v_perm, &r.spec.out_perm})
            if (!p->empty()) rank = p->size();
        for (const auto& x : {r.q, r.k, r.v, value_ref<N>{softmax, 0}})
            if (const auto t = adapter<G>::value_type(g, x.node, x.port); rank == 0 && t && !t->dims.empty()) rank = t->dims.size();
        if (rank == 0) return no("the softmax axis is counted from the front and the rank is unknown");
        if (r.spec.softmax_axis != static_cast<std::int64_t>(rank) - 1) return no("the softmax is not over the last axis");
        r.spec.softmax_axis = -1;
    }
    // Element types and shapes, where the adapter knows them.
    std::vector<value_ref<N>> operands{r.q, r.k, r.v};
    if (r.spec.mask) operands.push_back(r.mask);
    std::vector<dims> shapes;
    for (const auto& x : operands) {
        const auto t = adapter<G>::value_type(g, x.node, x.port);
        if (t && t->type != dtype::f32 && t->type != dtype::unknown)
            return no("an operand is " + std::string(name_of(t->type)) + ", the fused kernel computes f32");
        bool known = t && !t->dims.empty();
        if (known)
            for (auto d : t->dims) known = known && d > 0;
        if (known) shapes.push_back(t->dims);
    }
    if (shapes.size() == operands.size()) {
        try {
            fused_attention(r.spec).check(shapes);
        } catch (const kernel_error& e) {
            return no(e.what());
        }
    }
    return r;
}

}  // namespace detail

/// The property "onednn.attention": the written-out form becomes one fused node running
/// fused_attention.
template <class G>
property<G> make_attention_property(std::string name = "onednn.attention") {
    using N = typename graph_traits<G>::node_type;
    return make_reading_property<G>(
        std::move(name), attention_written_out, "sgmatch::onednn::make_attention_property",
        [](const G& g, const N* nodes, std::size_t count, bool) { return detail::read_attention<G>(g, nodes, count); },
        [](const detail::attention_reading<N>& r, const subgraph<G>& s, fused_node& node) {
            if (!(s.outputs[0] == r.dst))
                throw lowering_error("sgmatch::onednn::make_attention_property: the fused node must have exactly the "
                                     "attention's result as its output");
            node.src = detail::slot_of(s.inputs, r.q, "query");
            node.extra = {detail::slot_of(s.inputs, r.k, "key"), detail::slot_of(s.inputs, r.v, "value")};
            if (r.spec.mask) node.extra.push_back(detail::slot_of(s.inputs, r.mask, "mask"));
            node.kernel = std::make_shared<const fused_attention>(r.spec);
        });
}

}  // namespace onednn
SGMATCH_END_NAMESPACE
