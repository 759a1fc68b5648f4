// sgmatch/exec/executor.hpp - run a built-in graph: fused nodes on their oneDNN kernels, every
// other op on the xtensor reference kernels.
//
//   sgmatch::exec::executor run(g);                       // checks the graph, picks a kernel per node
//   auto outputs = run({{"data", x}});                    // graph outputs, in order, as arrays
//
// - Unfused graphs run entirely on the reference kernels (the oracle in tests). Partitioned
//   graphs run each fused node (payload onednn::fused_node) on its kernel.
// - Values between kernels keep their layout: a fused node's output stays a oneDNN tensor in the
//   layout its primitive chose and goes as is into the next fused node; it is reordered to a
//   plain array only when a reference kernel or a graph output reads it (once per value).
// - A node no kernel can run is an error when the executor is built, naming the node and op.
// - A kernel that rejects its input at run time (kernel_error: a shape oneDNN or the kernel
//   cannot take, known only then) is not the end of the run: a fused node runs its matched ops
//   unfused (fused_node::ops: one oneDNN primitive per op where one fits, else the reference
//   kernel), a single-op kernel its reference kernel. Logged once per node on stderr, counted in
//   run_stats::fallbacks; the kernel is not asked again for those shapes.
//
// - mode::onednn runs every other op it can on one oneDNN primitive (op_kernels.hpp): the best
//   unfused baseline; mode::onednn_plain forces plain NCHW layouts (a naive integration).
//
// Known limitations: runs the built-in graph (a region of an adapter graph is copied into one,
// subgraph.hpp); fp32 only; nodes run one after another (kernels use
// oneDNN's threads); buffers are recycled through a pool, not planned ahead.
#pragma once

#include <algorithm>
#include <any>
#include <atomic>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "sgmatch/detail/config.hpp"
#include "sgmatch/graph/graph.hpp"
#include "sgmatch/match/scan.hpp"
#include "sgmatch/onednn/op_kernels.hpp"
#include "sgmatch/onednn/property.hpp"
#include "sgmatch/pattern/vocabulary.hpp"
#include "sgmatch/reference/kernels.hpp"
#include "sgmatch/reference/onednn.hpp"

SGMATCH_BEGIN_NAMESPACE
namespace exec {

using reference::array;

/// Raised when a graph cannot run: a node with no kernel, a missing input, a constant without data.
class exec_error : public std::runtime_error {
public:
    using std::runtime_error::runtime_error;
};

namespace detail {

template <class Tag>
bool is(std::string_view op) {
    for (auto n : Tag::names)
        if (n == op) return true;
    return false;
}

inline float real_attr(const graph& g, node_id n, std::string_view k, float fallback) {
    auto a = g.attr(n, k);
    auto r = a ? a->as_real() : std::nullopt;
    return r ? static_cast<float>(*r) : fallback;
}
inline std::int64_t int_attr(const graph& g, node_id n, std::string_view k, std::int64_t fallback) {
    auto a = g.attr(n, k);
    auto r = a ? a->as_int() : std::nullopt;
    return r ? *r : fallback;
}
inline reference::dims ints_attr(const graph& g, node_id n, std::string_view k, reference::dims fallback) {
    auto a = g.attr(n, k);
    if (a && a->as_ints()) return reference::dims(a->as_ints()->begin(), a->as_ints()->end());
    return fallback;
}

enum class kind {
    fused, conv, conv_transpose, batch_norm, unary, binary, max_pool, avg_pool, global_avg_pool, gemm, matmul, softmax, concat,
    flatten, reshape, transpose, layer_norm, lrn, pad, constant
};

struct unary_info {
    reference::unary_kind k;
    float alpha, beta;
};

// The reference kernel for op node n, or nullopt.
inline std::optional<kind> kind_of(const graph& g, node_id n, unary_info& u, reference::binary_kind& b) {
    using namespace ops;
    using uk = reference::unary_kind;
    const std::string_view op = g.op_name(n);
    struct simple {
        bool (*test)(std::string_view);
        uk k;
    };
    static const simple simples[] = {
        {is<Relu>, uk::relu},       {is<Sigmoid>, uk::sigmoid}, {is<Tanh>, uk::tanh},  {is<HardSwish>, uk::hardswish},
        {is<Mish>, uk::mish},       {is<Softplus>, uk::softplus}, {is<Exp>, uk::exp},  {is<Log>, uk::log},
        {is<Sqrt>, uk::sqrt},       {is<Square>, uk::square},   {is<Abs>, uk::abs},    {is<Round>, uk::round},
        {is<Erf>, uk::erf},         {is<Identity>, uk::identity}};
    for (const auto& s : simples)
        if (s.test(op)) {
            u = {s.k, 0, 0};
            return kind::unary;
        }
    if (is<LeakyRelu>(op)) return u = {uk::leaky_relu, real_attr(g, n, "alpha", 0.01f), 0}, kind::unary;
    if (is<Elu>(op)) return u = {uk::elu, real_attr(g, n, "alpha", 1.0f), 0}, kind::unary;
    if (is<Swish>(op)) return u = {uk::swish, real_attr(g, n, "alpha", 1.0f), 0}, kind::unary;
    if (is<HardSigmoid>(op))
        return u = {uk::hardsigmoid, real_attr(g, n, "alpha", 0.2f), real_attr(g, n, "beta", 0.5f)}, kind::unary;
    if (is<Gelu>(op)) {
        auto a = g.attr(n, "approximate");
        const bool t = a && a->as_string() && *a->as_string() == "tanh";
        return u = {t ? uk::gelu_tanh : uk::gelu_erf, 0, 0}, kind::unary;
    }
    if (is<Clip>(op)) {
        u = {uk::clip, real_attr(g, n, "min", -3.4028235e38f), real_attr(g, n, "max", 3.4028235e38f)};
        for (std::size_t slot = 1; slot < g.input_count(n) && slot < 3; ++slot) {
            auto c = g.constant(g.input(n, slot).node);
            auto v = c ? c->scalar() : std::nullopt;
            if (!v) return std::nullopt;
            (slot == 1 ? u.alpha : u.beta) = static_cast<float>(*v);
        }
        return kind::unary;
    }
    using bk = reference::binary_kind;
    if (is<Add>(op)) return b = bk::add, kind::binary;
    if (is<Sub>(op)) return b = bk::sub, kind::binary;
    if (is<Mul>(op)) return b = bk::mul, kind::binary;
    if (is<Div>(op)) return b = bk::div, kind::binary;
    if (is<Max>(op)) return b = bk::max, kind::binary;
    if (is<Min>(op)) return b = bk::min, kind::binary;
    if (is<Pow>(op)) return b = bk::pow, kind::binary;
    if (is<Conv>(op)) return kind::conv;
    if (is<ConvTranspose>(op)) return kind::conv_transpose;
    if (is<BatchNorm>(op)) return kind::batch_norm;
    if (is<MaxPool>(op)) return kind::max_pool;
    if (is<AveragePool>(op)) return kind::avg_pool;
    if (is<GlobalAveragePool>(op)) return kind::global_avg_pool;
    if (is<Gemm>(op)) return kind::gemm;
    if (is<MatMul>(op)) return kind::matmul;
    if (is<Softmax>(op)) return kind::softmax;
    if (is<Concat>(op)) return kind::concat;
    if (is<Flatten>(op)) return kind::flatten;
    if (is<LRN>(op)) return kind::lrn;
    if (is<Pad>(op)) return kind::pad;
    if (is<Reshape>(op)) return kind::reshape;
    if (is<Transpose>(op)) return kind::transpose;
    if (is<LayerNorm>(op)) return kind::layer_norm;
    if (is<Constant>(op)) return kind::constant;
    return std::nullopt;
}

}  // namespace detail

/// How the nodes that are not fused run.
enum class mode {
    reference,     // on the xtensor reference kernels (the oracle)
    onednn,        // one oneDNN primitive per op where there is one (format any: the best unfused run),
                   // else the reference kernel
    onednn_plain,  // the same, with convs and pooling in plain NCHW layouts (a naive integration)
};

/// What one run did.
struct run_stats {
    std::size_t fused_nodes = 0;      // fused nodes, run on their oneDNN kernels
    std::size_t onednn_nodes = 0;     // single ops run on oneDNN primitives
    std::size_t reference_nodes = 0;  // run on reference kernels
    std::size_t reorders_to_plain = 0;  // kernel outputs converted for a reference kernel or an output
    std::size_t in_place_sums = 0;      // residuals accumulated into in place (no copy)
    std::size_t region_nodes = 0;       // region nodes (subgraph.hpp); what ran inside is counted above
    std::size_t fallbacks = 0;  // fused nodes and single-op kernels whose kernel rejected the input: they ran
                                // their ops unfused (counted above) or their reference kernel instead

    /// Add what a nested run did (a region's executor, a fused node's ops run unfused).
    run_stats& operator+=(const run_stats& o) {
        fused_nodes += o.fused_nodes;
        onednn_nodes += o.onednn_nodes;
        reference_nodes += o.reference_nodes;
        reorders_to_plain += o.reorders_to_plain;
        in_place_sums += o.in_place_sums;
        region_nodes += o.region_nodes;
        fallbacks += o.fallbacks;
        return *this;
    }
};

namespace detail {

// The input shapes a node's oneDNN kernel rejected (kernel_error at run time): for those the
// node runs unfused, without asking the kernel again. The first one is logged on stderr.
class fallback_log {
public:
    using shapes = std::vector<onednn::dims>;
    /// Whether any shape was rejected (no lock: the common case costs one load).
    bool any() const { return any_.load(std::memory_order_acquire); }
    bool rejected(const shapes& s) const {
        if (!any()) return false;
        std::lock_guard<std::mutex> lock(m_);
        return std::find(rejected_.begin(), rejected_.end(), s) != rejected_.end();
    }
    void reject(shapes s, std::string_view node, const char* instead, const char* why) {
        std::lock_guard<std::mutex> lock(m_);
        if (std::find(rejected_.begin(), rejected_.end(), s) == rejected_.end()) rejected_.push_back(std::move(s));
        any_.store(true, std::memory_order_release);
        if (logged_) return;
        logged_ = true;
        std::fprintf(stderr, "sgmatch: node '%.*s': %s; %s (logged once per node)\n", static_cast<int>(node.size()),
                     node.data(), why, instead);
    }

private:
    mutable std::mutex m_;
    std::vector<shapes> rejected_;
    std::atomic<bool> any_{false};
    bool logged_ = false;
};

inline fallback_log::shapes shapes_of(const onednn::tensor& first, const std::vector<onednn::tensor>& rest) {
    fallback_log::shapes s;
    if (!first.empty()) s.push_back(first.shape());
    for (const auto& t : rest) s.push_back(t.shape());
    return s;
}

}  // namespace detail

class executor;

/// The payload of a region node (subgraph.hpp): the region as a graph of its own with its own
/// executor (fused nodes inside), and which of the node's inputs it reads at run time (the
/// others are constants copied into the region), in the order of the region's graph inputs
/// "0", "1", ...; the region's graph outputs are the node's outputs, in order.
struct subgraph_node {
    std::shared_ptr<const graph> region;
    std::shared_ptr<const executor> exec;
    std::vector<std::size_t> runtime_inputs;
};

class executor {
public:
    explicit executor(const graph& g, mode m = mode::reference) : g_(g) {
        const op_index<graph> checked(g);  // raises graph_error for a malformed graph
        (void)checked;
        for (node_id n : g.nodes()) {
            step s{n, detail::kind::fused, {}, {}, nullptr, nullptr, nullptr, nullptr, nullptr};
            if (g.kind(n) != node_kind::op) continue;
            if (g.payload(n).has_value()) {
                const auto* p = std::any_cast<std::shared_ptr<const onednn::fused_node>>(&g.payload(n));
                const auto* r = std::any_cast<std::shared_ptr<const subgraph_node>>(&g.payload(n));
                if ((p == nullptr || !*p) && (r == nullptr || !*r || !(*r)->exec))
                    throw exec_error("sgmatch::exec::executor: fused node '" + std::string(g.name(n)) +
                                     "' carries neither an onednn::fused_node nor an exec::subgraph_node");
                if (p != nullptr) {
                    s.fused = p->get();
                    // Its ops, for when the kernel rejects an input; a node whose ops the executor
                    // cannot run one by one keeps only its kernel (its errors are then raised).
                    if (s.fused->ops) {
                        try {
                            s.unfused = std::make_shared<const executor>(*s.fused->ops, mode::onednn);
                        } catch (const exec_error&) {
                            s.unfused = nullptr;
                        }
                    }
                } else {
                    s.region = r->get();
                }
            } else {
                auto k = detail::kind_of(g, n, s.unary, s.binary);
                if (!k)
                    throw exec_error("sgmatch::exec::executor: no kernel for op '" + std::string(g.op_name(n)) +
                                     "' (node '" + std::string(g.name(n)) + "')");
                s.k = *k;
                if (m != mode::reference) s.op = onednn_kernel(n, *k, m == mode::onednn_plain);
            }
            if (s.op || s.unfused) s.fallback = std::make_shared<detail::fallback_log>();
            steps_.push_back(s);
        }
    }

    /// Run with the given graph inputs (by name); returns the graph outputs in order.
    std::vector<array> operator()(const std::map<std::string, array>& inputs, run_stats* stats = nullptr) const {
        run_stats local;
        run_stats& st = stats ? *stats : local;
        store values(g_.index_bound());
        bind_inputs(values, inputs, [](slot& s, const array& a) { s.plain = a; });
        run_steps(values, st);
        std::vector<array> out;
        for (std::size_t i = 0; i < g_.graph_output_count(); ++i) out.push_back(plain_of(values, g_.graph_output(i), st));
        return out;
    }

    /// The same on oneDNN tensors, in whatever layout they come (what a region node gets from
    /// the kernels before it); the graph outputs stay in the layouts their kernels produced.
    std::vector<onednn::tensor> run_tensors(const std::map<std::string, onednn::tensor>& inputs,
                                            run_stats* stats = nullptr) const {
        run_stats local;
        run_stats& st = stats ? *stats : local;
        store values(g_.index_bound());
        bind_inputs(values, inputs, [](slot& s, const onednn::tensor& t) { s.t = t; });
        run_steps(values, st);
        std::vector<onednn::tensor> out;
        for (std::size_t i = 0; i < g_.graph_output_count(); ++i) {
            const auto v = g_.graph_output(i);
            slot& s = values[v.node.value].at(v.port);
            if (s.t.empty() && g_.kind(v.node) == node_kind::constant) s.t = constant_view(v.node);
            if (s.t.empty() && s.plain) {  // a reference kernel's result: a tensor of its own
                const array& a = *s.plain;
                s.t = onednn::tensor::from_values(std::vector<float>(a.begin(), a.end()),
                                                  onednn::dims(a.shape().begin(), a.shape().end()));
            }
            out.push_back(s.t);
        }
        return out;
    }

private:
    struct slot {
        std::optional<array> plain;
        onednn::tensor t;
        bool owned = false;  // t was made by this run (not a view of an input or a constant)
    };
    using store = std::vector<std::vector<slot>>;

    // The graph inputs' values, by name (a missing one is an error naming it).
    template <class V, class Set>
    void bind_inputs(store& values, const std::map<std::string, V>& inputs, Set set) const {
        for (node_id n : g_.nodes()) {
            if (g_.kind(n) != node_kind::input) continue;
            auto it = inputs.find(std::string(g_.name(n)));
            if (it == inputs.end())
                throw exec_error("sgmatch::exec::executor: no value for graph input '" + std::string(g_.name(n)) + "'");
            values[n.value].resize(1);
            set(values[n.value][0], it->second);
        }
    }

    // Every step in order over `values` (graph inputs already set).
    void run_steps(store& values, run_stats& st) const {
        // Edges still to read each value: a value is dropped (its buffer back to the pool) after
        // its last read, and a residual read last by a fused conv is accumulated into in place.
        std::vector<std::vector<std::uint32_t>> uses(g_.index_bound());
        for (node_id n : g_.nodes()) {
            uses[n.value].assign(g_.output_count(n), 0);
            for (const auto& u : g_.users(n)) ++uses[n.value][u.port];
            // Constants are read on demand: a view for kernels, a copy for reference kernels.
            if (g_.kind(n) == node_kind::constant) values[n.value].resize(1);
        }
        for (const step& s : steps_) {
            const node_id n = s.n;
            values[n.value].resize(g_.output_count(n));
            if (s.region) {
                std::map<std::string, onednn::tensor> ins;
                for (std::size_t i = 0; i < s.region->runtime_inputs.size(); ++i)
                    ins.emplace(std::to_string(i), tensor_of(values, n, s.region->runtime_inputs[i]));
                run_stats inner;
                auto outs = s.region->exec->run_tensors(ins, &inner);
                for (std::size_t k = 0; k < outs.size() && k < values[n.value].size(); ++k) {
                    values[n.value][k].t = std::move(outs[k]);
                    values[n.value][k].owned = false;  // may be a view of an input: never written in place
                }
                ++st.region_nodes;
                st += inner;
            } else if (s.op) {
                run_op(s, values, st);
            } else if (s.fused) {
                run_fused(s, values, uses, st);
            } else {
                values[n.value][0].plain = run_reference(s, values, st);
                ++st.reference_nodes;
            }
            for (std::size_t i = 0; i < g_.input_count(n); ++i) {
                const auto v = g_.input(n, i);
                if (--uses[v.node.value][v.port] == 0 && !g_.is_graph_output(v.node, v.port) &&
                    g_.kind(v.node) == node_kind::op)
                    values[v.node.value][v.port] = slot{};
            }
        }
    }

    struct step {
        node_id n;
        detail::kind k;
        detail::unary_info unary;
        reference::binary_kind binary;
        const onednn::fused_node* fused;
        std::shared_ptr<const onednn::op_kernel> op = nullptr;  // mode onednn: the op on a oneDNN primitive
        const subgraph_node* region = nullptr;                   // a region node: its own executor
        std::shared_ptr<const executor> unfused = nullptr;       // a fused node's ops, one kernel each
        std::shared_ptr<detail::fallback_log> fallback = nullptr;  // shapes the kernel (op or fused) rejected
    };

    using use_counts = std::vector<std::vector<std::uint32_t>>;

    // A single op on its oneDNN kernel; its reference kernel when the kernel rejects the input.
    void run_op(const step& s, store& vs, run_stats& st) const {
        const node_id n = s.n;
        slot& out = vs[n.value][0];
        std::vector<onednn::tensor> ins;
        try {
            for (std::size_t i = 0; i < g_.input_count(n); ++i)
                if (g_.kind(g_.input(n, i).node) != node_kind::constant || s.op->reads_constants())
                    ins.push_back(tensor_of(vs, n, i));
            if (!s.fallback->any() || !s.fallback->rejected(detail::shapes_of({}, ins))) {
                out.t = s.op->run(ins);
                out.owned = true;
                ++st.onednn_nodes;
                return;
            }
        } catch (const onednn::kernel_error& e) {
            out.plain = fall_back(s, vs, st, e.what());
            s.fallback->reject(detail::shapes_of({}, ins), g_.name(n), "it runs on its reference kernel", e.what());
            return;
        }
        out.plain = fall_back(s, vs, st, nullptr);
    }

    // A fused node on its kernel; its ops unfused when the kernel rejects the input.
    void run_fused(const step& s, store& vs, const use_counts& uses, run_stats& st) const {
        const node_id n = s.n;
        const auto& fc = *s.fused;
        slot& out = vs[n.value][0];
        onednn::tensor src;
        std::vector<onednn::tensor> extra;
        try {
            for (std::size_t k : fc.extra) extra.push_back(tensor_of(vs, n, k));
            src = tensor_of(vs, n, fc.src);
            if (!s.unfused || !s.fallback->any() || !s.fallback->rejected(detail::shapes_of(src, extra))) {
                // The residual of a sum post-op, read here for the last time, in the destination's
                // layout and owned by the run: the kernel accumulates into it (no copy). The kernel
                // checks every operand before it writes, so a rejection leaves the residual intact.
                onednn::tensor in_place;
                for (const auto& p : fc.kernel->post_ops()) {
                    if (p.k != onednn::post_op::kind::sum) continue;
                    const auto v = g_.input(n, fc.extra[static_cast<std::size_t>(p.input)]);
                    slot& r = vs[v.node.value][v.port];
                    if (uses[v.node.value][v.port] == 1 && !g_.is_graph_output(v.node, v.port) && r.owned &&
                        !r.t.empty() && r.t.desc() == fc.kernel->dst_desc(src.shape()))
                        in_place = r.t;
                }
                if (!in_place.empty()) {
                    fc.kernel->run_into(src, extra, in_place);
                    out.t = in_place;
                    ++st.in_place_sums;
                } else {
                    out.t = fc.kernel->run(src, extra);
                }
                out.owned = true;
                ++st.fused_nodes;
                return;
            }
        } catch (const onednn::kernel_error& e) {
            if (!s.unfused) throw;
            out.plain = fall_back(s, vs, st, e.what());
            s.fallback->reject(detail::shapes_of(src, extra), g_.name(n), "its ops run unfused", e.what());
            return;
        }
        out.plain = fall_back(s, vs, st, nullptr);
    }

    // What runs when the node's kernel rejects its input (why: the kernel's error, or nullptr
    // when the shapes were rejected before): a fused node's ops, unfused, or an op's reference
    // kernel. When that fails too, an exec_error carries both reasons.
    array fall_back(const step& s, store& vs, run_stats& st, const char* why) const {
        const node_id n = s.n;
        try {
            ++st.fallbacks;
            if (s.unfused) {
                std::map<std::string, array> ins;
                const auto& slots = s.fused->ops_inputs;
                for (std::size_t k = 0; k < slots.size(); ++k)
                    ins.emplace(std::to_string(k), plain_of(vs, g_.input(n, slots[k]), st));
                run_stats inner;
                auto outs = (*s.unfused)(ins, &inner);
                st += inner;
                return std::move(outs.at(0));
            }
            ++st.reference_nodes;
            return run_reference(s, vs, st);
        } catch (const std::exception& e) {
            throw exec_error("sgmatch::exec::executor: node '" + std::string(g_.name(n)) + "' (" +
                             std::string(g_.op_name(n)) + "): its oneDNN kernel rejected the input (" +
                             (why ? why : "earlier") + ") and running it " +
                             (s.unfused ? "unfused" : "on its reference kernel") + " failed too: " + e.what());
        }
    }

    // The conv as a kernel with no post-ops.
    struct conv_op final : onednn::op_kernel {
        onednn::fused_conv k;
        explicit conv_op(onednn::conv_spec s) : k(std::move(s)) {}
        onednn::tensor run(const std::vector<onednn::tensor>& in) const override { return k.run(in.at(0)); }
        const char* kind() const override { return "conv"; }
    };

    // A constant's values as a tensor over the graph's own storage (no copy).
    onednn::tensor constant_view(node_id c) const {
        const auto k = g_.constant(c);
        if (!k || k->data == nullptr)
            throw exec_error("sgmatch::exec::executor: constant '" + std::string(g_.name(c)) + "' has no data");
        // A scalar as a one-element tensor. (A loop, not the range constructor: g++ 12 -O3 C++20
        // reports a false -Wfree-nonheap-object for that one here.)
        onednn::dims d(k->rank == 0 ? 1 : k->rank, 1);
        for (std::size_t i = 0; i < k->rank; ++i) d[i] = k->dims[i];
        return onednn::tensor::view(static_cast<const float*>(k->data), d);
    }

    std::vector<float> constant_input(node_id n, std::size_t slot) const {
        if (slot >= g_.input_count(n)) return {};
        const auto c = g_.constant(g_.input(n, slot).node);
        if (!c || c->data == nullptr) return {};
        const auto* p = static_cast<const float*>(c->data);
        return std::vector<float>(p, p + c->element_count());
    }

    // A oneDNN primitive for op node n when one fits (constant parameters where it needs them),
    // else nullptr (the reference kernel runs).
    std::shared_ptr<const onednn::op_kernel> onednn_kernel(node_id n, detail::kind k, bool plain) const {
        using detail::kind;
        const std::string_view op_name = g_.op_name(n);
        switch (k) {
            case kind::conv: {
                auto l = onednn::lower_conv<graph, pat::op<pat::tags<ops::Conv>>>(g_, &n, 1, true);
                if (!l.decline.empty()) return nullptr;
                if (plain) l.spec.layout = onednn::conv_spec::layout_choice::plain;
                return std::make_shared<conv_op>(std::move(l.spec));
            }
            case kind::conv_transpose: {
                auto l = onednn::lower_match<graph, pat::op<pat::tags<ops::ConvTranspose>>>(g_, &n, 1, true);
                if (!l.decline.empty()) return nullptr;
                return std::make_shared<conv_op>(std::move(l.spec));
            }
            case kind::batch_norm: {
                std::vector<float> p[4];
                for (std::size_t i = 0; i < 4; ++i) {
                    p[i] = constant_input(n, i + 1);
                    if (p[i].empty()) return nullptr;
                }
                return std::make_shared<onednn::batch_norm_kernel>(p[0], p[1], p[2], p[3],
                                                                   detail::real_attr(g_, n, "epsilon", 1e-5f));
            }
            case kind::unary: {
                using namespace ops;
                using table = onednn::detail::entries<sgmatch::detail::tlist<
                    Relu, LeakyRelu, Clip, Sigmoid, Tanh, Elu, Gelu, Swish, HardSwish, HardSigmoid, Mish, Softplus, Exp,
                    Log, Sqrt, Square, Abs, Round>>;
                const auto* e = onednn::detail::find_entry(table::get(), op_name);
                if (e == nullptr) return nullptr;
                try {
                    return std::make_shared<onednn::eltwise_kernel>(e->eltwise(onednn::detail::graph_node_reader<graph>(g_, n)));
                } catch (const onednn::lowering_error&) {
                    return nullptr;
                }
            }
            case kind::binary: {
                using namespace ops;
                if (g_.kind(g_.input(n, 0).node) == node_kind::constant) return nullptr;  // only b broadcasts
                if (detail::is<Pow>(op_name)) {  // x^c for a scalar constant c: eltwise pow (alpha * x^beta)
                    const auto c = g_.constant(g_.input(n, 1).node);
                    const auto e = c ? c->scalar() : std::nullopt;
                    if (!e) return nullptr;
                    return std::make_shared<onednn::eltwise_kernel>(std::vector<onednn::post_op>{
                        onednn::post_op::eltwise(dnnl::algorithm::eltwise_pow, 1.0f, static_cast<float>(*e))});
                }
                using table = onednn::detail::entries<sgmatch::detail::tlist<Add, Sub, Mul, Div, Max, Min>>;
                const auto* e = onednn::detail::find_entry(table::get(), op_name);
                return e ? std::make_shared<onednn::binary_kernel>(e->binary_alg) : nullptr;
            }
            case kind::max_pool:
            case kind::avg_pool: {
                const auto ks = detail::ints_attr(g_, n, "kernel_shape", {});
                const auto pads = detail::ints_attr(g_, n, "pads", reference::dims(2 * ks.size(), 0));
                if (ks.empty() || pads.size() != 2 * ks.size()) return nullptr;
                return std::make_shared<onednn::pool_kernel>(
                    k == kind::max_pool, ks, detail::ints_attr(g_, n, "strides", reference::dims(ks.size(), 1)),
                    reference::dims(pads.begin(), pads.begin() + static_cast<std::ptrdiff_t>(ks.size())),
                    reference::dims(pads.begin() + static_cast<std::ptrdiff_t>(ks.size()), pads.end()),
                    detail::int_attr(g_, n, "count_include_pad", 0) != 0, plain);
            }
            case kind::global_avg_pool:
                return std::make_shared<onednn::pool_kernel>(false, onednn::dims{}, onednn::dims{}, onednn::dims{},
                                                             onednn::dims{}, false, plain);
            case kind::gemm: {
                const auto b = g_.input_count(n) > 1 ? g_.constant(g_.input(n, 1).node) : std::nullopt;
                if (!b || b->data == nullptr || b->rank != 2) return nullptr;
                std::vector<float> c;
                if (g_.input_count(n) > 2) {
                    c = constant_input(n, 2);
                    if (c.empty()) return nullptr;
                }
                return std::make_shared<onednn::gemm_kernel>(
                    onednn::dims(b->dims, b->dims + 2), constant_input(n, 1), detail::int_attr(g_, n, "transB", 0) != 0,
                    std::move(c), detail::int_attr(g_, n, "transA", 0) != 0, detail::real_attr(g_, n, "alpha", 1.0f),
                    detail::real_attr(g_, n, "beta", 1.0f));
            }
            case kind::flatten: return std::make_shared<onednn::flatten_kernel>(detail::int_attr(g_, n, "axis", 1));
            case kind::matmul: return std::make_shared<onednn::matmul_kernel>();
            case kind::softmax: return std::make_shared<onednn::softmax_kernel>(detail::int_attr(g_, n, "axis", -1));
            case kind::concat: return std::make_shared<onednn::concat_kernel>(detail::int_attr(g_, n, "axis", 1));
            case kind::lrn: {
                const std::int64_t size = detail::int_attr(g_, n, "size", 1);
                if (size < 1 || size % 2 == 0) return nullptr;  // oneDNN's window is centred: the reference runs
                return std::make_shared<onednn::lrn_kernel>(size, detail::real_attr(g_, n, "alpha", 1e-4f),
                                                            detail::real_attr(g_, n, "beta", 0.75f),
                                                            detail::real_attr(g_, n, "bias", 1.0f));
            }
            case kind::layer_norm: {
                std::vector<float> scale = constant_input(n, 1), bias;
                if (scale.empty()) return nullptr;
                if (g_.input_count(n) > 2) {
                    bias = constant_input(n, 2);
                    if (bias.empty()) return nullptr;
                }
                return std::make_shared<onednn::layer_norm_kernel>(std::move(scale), std::move(bias),
                                                                   detail::int_attr(g_, n, "axis", -1),
                                                                   detail::real_attr(g_, n, "epsilon", 1e-5f));
            }
            case kind::transpose: return std::make_shared<onednn::transpose_kernel>(detail::ints_attr(g_, n, "perm", {}));
            case kind::reshape: {
                if (g_.input_count(n) > 1) {  // opset >= 5: the shape is input 1, a constant here
                    const std::vector<float> v = constant_input(n, 1);
                    if (v.empty()) return nullptr;
                    return std::make_shared<onednn::reshape_kernel>(onednn::dims(v.begin(), v.end()));
                }
                return std::make_shared<onednn::reshape_kernel>(detail::ints_attr(g_, n, "shape", {}));
            }
            default: return nullptr;
        }
    }
    const array& plain_of(store& vs, value_ref<node_id> v, run_stats& st) const {
        slot& s = vs[v.node.value].at(v.port);
        if (!s.plain && s.t.empty() && g_.kind(v.node) == node_kind::constant) {
            s.t = constant_view(v.node);
            s.plain = reference::to_array(s.t);
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
    onednn::tensor tensor_of(store& vs, node_id n, std::size_t input_slot) const {
        const auto v = g_.input(n, input_slot);
        slot& s = vs[v.node.value].at(v.port);
        if (!s.t.empty()) return s.t;
        if (!s.plain && g_.kind(v.node) == node_kind::constant) return s.t = constant_view(v.node);
        if (!s.plain)
            throw exec_error("sgmatch::exec::executor: input " + std::to_string(input_slot) + " of '" +
                             std::string(g_.name(n)) + "' has no data");
        return reference::to_tensor(*s.plain);  // a view: the array lives in the store for the run
    }

    // An ONNX Constant op: value_float / value_int (a scalar), value_floats / value_ints (1-D);
    // or `value` as a real or reals with an optional `shape` (ints), for adapters that hand a
    // tensor attribute over flattened.
    array constant_op(node_id n) const {
        auto fail = [&](const std::string& why) -> array {
            throw exec_error("sgmatch::exec::executor: Constant '" + std::string(g_.name(n)) + "': " + why);
        };
        std::vector<float> v;
        reference::dims shape;
        bool found = false, scalar = false;
        for (const char* k : {"value_float", "value_int", "value_floats", "value_ints", "value"}) {
            const auto a = g_.attr(n, k);
            if (!a) continue;
            found = true;
            if (const auto r = a->as_real()) {
                v.assign(1, static_cast<float>(*r));
                scalar = true;
            } else if (const auto* rs = a->as_reals()) {
                v.assign(rs->begin(), rs->end());
            } else if (const auto* is = a->as_ints()) {
                for (auto x : *is) v.push_back(static_cast<float>(x));
            } else {
                return fail(std::string("attribute ") + k + " is not a number or a list of numbers");
            }
            if (const auto sh = std::string_view(k) == "value" ? g_.attr(n, "shape") : std::nullopt) {
                if (!sh->as_ints()) return fail("attribute shape is not a list of integers");
                shape = *sh->as_ints();
                scalar = false;
            }
            break;
        }
        if (!found) return fail("no value_float, value_int, value_floats, value_ints or value attribute");
        if (shape.empty() && !scalar) shape.push_back(static_cast<std::int64_t>(v.size()));
        std::size_t count = 1;
        for (auto d : shape) {
            if (d < 0) return fail("a negative dimension in shape");
            count *= static_cast<std::size_t>(d);
        }
        if (count != v.size())
            return fail(std::to_string(v.size()) + " values for shape " + onednn::to_string(onednn::dims(shape.begin(), shape.end())));
        array a = xt::zeros<float>(std::vector<std::size_t>(shape.begin(), shape.end()));
        std::copy(v.begin(), v.end(), a.begin());
        return a;
    }

    array run_reference(const step& s, store& vs, run_stats& st) const {
        using detail::kind;
        const node_id n = s.n;
        if (s.k == kind::constant) return constant_op(n);
        std::vector<const array*> in;
        for (std::size_t i = 0; i < g_.input_count(n); ++i) in.push_back(&plain_of(vs, g_.input(n, i), st));
        auto need = [&](std::size_t k) {
            if (in.size() < k)
                throw exec_error("sgmatch::exec::executor: node '" + std::string(g_.name(n)) + "' (" +
                                 std::string(g_.op_name(n)) + ") needs " + std::to_string(k) + " inputs");
        };
        need(1);
        const array empty = xt::zeros<float>({std::size_t(0)});
        const std::size_t sp = in[0]->dimension() > 2 ? in[0]->dimension() - 2 : 0;
        auto pads = [&](reference::dims& b, reference::dims& e) {
            const auto p = detail::ints_attr(g_, n, "pads", reference::dims(2 * sp, 0));
            b.assign(p.begin(), p.begin() + static_cast<std::ptrdiff_t>(sp));
            e.assign(p.begin() + static_cast<std::ptrdiff_t>(sp), p.end());
        };
        auto attrs_of_conv = [&] {  // Conv and ConvTranspose read the same attributes
            reference::conv_attrs a;
            a.strides = detail::ints_attr(g_, n, "strides", reference::dims(sp, 1));
            a.dilations = detail::ints_attr(g_, n, "dilations", reference::dims(sp, 1));
            pads(a.pads_begin, a.pads_end);
            a.groups = detail::int_attr(g_, n, "group", 1);
            return a;
        };
        switch (s.k) {
            case kind::unary: return reference::unary(*in[0], s.unary.k, s.unary.alpha, s.unary.beta);
            case kind::binary: need(2); return reference::binary(*in[0], *in[1], s.binary);
            case kind::conv:
                need(2);
                return reference::conv(*in[0], *in[1], in.size() > 2 ? *in[2] : empty, attrs_of_conv());
            case kind::conv_transpose: {
                need(2);
                const reference::conv_attrs a = attrs_of_conv();
                const auto ap = g_.attr(n, "auto_pad");
                if (g_.attr(n, "output_shape") || (ap && ap->as_string() && *ap->as_string() != "NOTSET"))
                    throw exec_error("sgmatch::exec::executor: ConvTranspose '" + std::string(g_.name(n)) +
                                     "': output_shape and auto_pad are not supported (give pads)");
                return reference::conv_transpose(*in[0], *in[1], in.size() > 2 ? *in[2] : empty, a,
                                                 detail::ints_attr(g_, n, "output_padding", reference::dims(sp, 0)));
            }
            case kind::batch_norm:
                need(5);
                return reference::batch_norm(*in[0], *in[1], *in[2], *in[3], *in[4],
                                             detail::real_attr(g_, n, "epsilon", 1e-5f));
            case kind::max_pool:
            case kind::avg_pool: {
                reference::dims b, e;
                pads(b, e);
                return reference::pool(*in[0], s.k == kind::max_pool ? reference::pool_kind::max : reference::pool_kind::average,
                                       detail::ints_attr(g_, n, "kernel_shape", {}),
                                       detail::ints_attr(g_, n, "strides", reference::dims(sp, 1)), b, e,
                                       detail::int_attr(g_, n, "count_include_pad", 0) != 0);
            }
            case kind::global_avg_pool: return reference::global_average_pool(*in[0]);
            case kind::gemm:
                need(2);
                return reference::gemm(*in[0], *in[1], in.size() > 2 ? *in[2] : empty,
                                       detail::int_attr(g_, n, "transA", 0) != 0, detail::int_attr(g_, n, "transB", 0) != 0,
                                       detail::real_attr(g_, n, "alpha", 1.0f), detail::real_attr(g_, n, "beta", 1.0f));
            case kind::matmul: need(2); return reference::matmul(*in[0], *in[1]);
            case kind::softmax: return reference::softmax(*in[0], detail::int_attr(g_, n, "axis", -1));
            case kind::concat: {
                std::vector<array> xs;
                for (auto* p : in) xs.push_back(*p);
                return reference::concat(xs, detail::int_attr(g_, n, "axis", 1));
            }
            case kind::flatten: return reference::flatten(*in[0], detail::int_attr(g_, n, "axis", 1));
            case kind::lrn:
                return reference::lrn(*in[0], detail::int_attr(g_, n, "size", 1), detail::real_attr(g_, n, "alpha", 1e-4f),
                                      detail::real_attr(g_, n, "beta", 0.75f), detail::real_attr(g_, n, "bias", 1.0f));
            case kind::pad: {
                // opset >= 11: pads (and the constant value) as inputs; older: attributes.
                reference::dims pads = detail::ints_attr(g_, n, "pads", {});
                if (in.size() > 1) pads.assign(in[1]->begin(), in[1]->end());
                float value = detail::real_attr(g_, n, "value", 0.0f);
                if (in.size() > 2 && in[2]->size() == 1) value = in[2]->data()[0];
                const auto m = g_.attr(n, "mode");
                const std::string mode = m && m->as_string() ? std::string(*m->as_string()) : "constant";
                if (mode != "constant" && mode != "reflect" && mode != "edge")
                    throw exec_error("sgmatch::exec::executor: Pad '" + std::string(g_.name(n)) + "': mode " + mode +
                                     " is not supported (constant, reflect, edge)");
                return reference::pad(*in[0], pads,
                                      mode == "reflect" ? reference::pad_mode::reflect
                                      : mode == "edge"  ? reference::pad_mode::edge
                                                        : reference::pad_mode::constant,
                                      value);
            }
            case kind::reshape: {
                reference::dims shape = detail::ints_attr(g_, n, "shape", {});
                if (in.size() > 1) shape.assign(in[1]->begin(), in[1]->end());
                const onednn::dims to = onednn::reshape_kernel::output_dims(
                    onednn::dims(in[0]->shape().begin(), in[0]->shape().end()), shape);
                array y = *in[0];
                y.reshape(std::vector<std::size_t>(to.begin(), to.end()));
                return y;
            }
            case kind::transpose: {
                auto perm = detail::ints_attr(g_, n, "perm", {});
                if (perm.empty())
                    for (std::size_t i = in[0]->dimension(); i-- > 0;) perm.push_back(static_cast<std::int64_t>(i));
                return xt::transpose(*in[0], std::vector<std::size_t>(perm.begin(), perm.end()));
            }
            case kind::layer_norm:
                need(2);
                return reference::layer_norm(*in[0], *in[1], in.size() > 2 ? *in[2] : empty,
                                             detail::int_attr(g_, n, "axis", -1), detail::real_attr(g_, n, "epsilon", 1e-5f));
            case kind::fused:
            case kind::constant: break;
        }
        throw exec_error("sgmatch::exec::executor: unreachable");
    }

    const graph& g_;
    std::vector<step> steps_;
};

}  // namespace exec
SGMATCH_END_NAMESPACE
