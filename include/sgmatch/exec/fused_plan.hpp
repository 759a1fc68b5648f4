// sgmatch/exec/fused_plan.hpp - where a run's fused outputs lie: the executor's buffer plan
// (buffer_plan.hpp places; this decides what is placed). Internal to the executor.
//
// Per input-shape signature, the bytes of each fused node's output (its kernel's destination
// layout) and which fused nodes accumulate into another's output in place (a residual sum,
// decided as the executor's run_fused decides it): before the first run from the graph's
// declared shapes (plan_ahead), or from what the first run recorded (make_plan).
#pragma once

#include <algorithm>
#include <cstddef>
#include <memory>
#include <vector>

#include "sgmatch/detail/config.hpp"
#include "sgmatch/exec/buffer_plan.hpp"
#include "sgmatch/graph/graph.hpp"
#include "sgmatch/onednn/property.hpp"

SGMATCH_BEGIN_NAMESPACE
namespace exec {
namespace detail {

inline constexpr std::size_t no_step = static_cast<std::size_t>(-1);

/// Where the fused nodes' outputs lie in a run's arena, per step.
struct run_plan {
    std::vector<std::size_t> offset;  // no_step: not placed (allocated from the pool)
    std::vector<std::size_t> bytes;   // the bytes placed at offset
    std::vector<std::size_t> into;    // the step whose output it accumulates into (no_step: none); a
                                      // planned run accumulates in place there and nowhere else
    std::size_t arena = 0;            // bytes
    std::size_t pooled = 0;           // what the same-size pool holds for the same outputs
};

/// What a run without a plan records to make one from.
struct plan_recording {
    explicit plan_recording(std::size_t steps) : bytes(steps, 0), into(steps, no_step) {}
    std::vector<std::size_t> bytes;  // per step: the bytes of the fused output it allocated (0: none)
    std::vector<std::size_t> into;   // per step: the step whose output it accumulated into in place
};

/// The executor's steps as the plan reads them.
struct plan_steps {
    const graph& g;
    const std::vector<node_id>& nodes;                  // per step: its node
    const std::vector<const onednn::fused_node*>& fused;  // per step: its fused node, or null
    const std::vector<std::size_t>& step_of;            // per node index: its step (no_step: none)
};

/// f(v) for the residual v of each sum post-op of fused node n that the kernel could accumulate
/// into in place: not when the kernel also reads v through another input (x + conv(x): the
/// residual is the conv's own source, which the sum would overwrite).
template <class F>
void for_each_sum_residual(const graph& g, node_id n, const onednn::fused_node& f, F&& fn) {
    for (const auto& p : f.kernel->post_ops()) {
        if (!p.is<onednn::post_op::sum_op>()) continue;
        const std::size_t slot = f.extra[static_cast<std::size_t>(p.input())];
        const auto v = g.input(n, slot);
        bool read_elsewhere = g.input(n, f.src) == v;
        for (std::size_t e : f.extra) read_elsewhere = read_elsewhere || (e != slot && g.input(n, e) == v);
        if (!read_elsewhere) fn(v);
    }
}

// The plan from a recording: a buffer is a fused output with the outputs accumulated into it
// in place after it, alive from its writing to its last reading; one a graph output lives in
// outlives the run and is not placed.
inline std::shared_ptr<const run_plan> make_plan(const plan_steps& ps, const plan_recording& rec) {
    auto p = std::make_shared<run_plan>();
    p->offset.assign(ps.nodes.size(), no_step);
    p->bytes = rec.bytes;
    p->into = rec.into;
    std::vector<std::size_t> buffer(ps.nodes.size(), no_step), first_step;
    std::vector<buffer_need> needs;
    std::vector<bool> placed;
    for (std::size_t i = 0; i < ps.nodes.size(); ++i) {
        std::size_t b = no_step;
        if (rec.bytes[i] > 0) {
            b = needs.size();
            needs.push_back({rec.bytes[i], i, i});
            first_step.push_back(i);
            placed.push_back(true);
        } else if (rec.into[i] != no_step) {
            b = buffer[rec.into[i]];
        }
        if (b == no_step) continue;
        buffer[i] = b;
        const node_id n = ps.nodes[i];
        if (ps.g.is_graph_output(n, 0)) placed[b] = false;
        for (const auto& u : ps.g.users(n))
            if (u.port == 0) needs[b].last = std::max(needs[b].last, ps.step_of[u.user.value]);
    }
    std::vector<buffer_need> kept;
    std::vector<std::size_t> kept_first;
    for (std::size_t b = 0; b < needs.size(); ++b)
        if (placed[b]) {
            kept.push_back(needs[b]);
            kept_first.push_back(first_step[b]);
        }
    const buffer_plan bp = plan_buffers(kept);
    for (std::size_t k = 0; k < kept.size(); ++k) p->offset[kept_first[k]] = bp.offsets[k];
    p->arena = bp.arena;
    p->pooled = pooled_bytes(kept);
    return p;
}

// The plan before any run, from the graph's declared shapes (the ONNX front end and the
// builders declare them): the fused outputs' layouts from their kernels, and the residual
// sums the run will accumulate in place, decided as run_fused decides (for_each_sum_residual,
// then the same conditions on what the run will hold). Null when a graph
// input's declared shape is not the run's or a fused node's input shape is not declared: the
// first run then records what the plan is made from.
inline std::shared_ptr<const run_plan> plan_ahead(const plan_steps& ps, const std::vector<onednn::dims>& sig) {
    std::size_t k = 0;
    for (node_id n : ps.g.nodes()) {
        if (ps.g.kind(n) != node_kind::input) continue;
        const auto t = ps.g.value_type(n, 0);
        if (!t || k >= sig.size() || t->dims != sig[k++]) return nullptr;
    }
    plan_recording rec(ps.nodes.size());
    std::vector<dnnl::memory::desc> desc(ps.nodes.size());
    for (std::size_t i = 0; i < ps.nodes.size(); ++i) {
        const onednn::fused_node* f = ps.fused[i];
        if (f == nullptr) continue;
        const auto src = ps.g.input(ps.nodes[i], f->src);
        const auto t = ps.g.value_type(src.node, src.port);
        if (!t || t->dims.empty()) return nullptr;
        for (auto d : t->dims)
            if (d < 1) return nullptr;
        if (!f->kernel->writes_into()) continue;
        try {
            desc[i] = f->kernel->dst_desc(t->dims);
        } catch (const onednn::kernel_error&) {
            continue;  // it will fall back at run time: not placed
        }
        for_each_sum_residual(ps.g, ps.nodes[i], *f, [&](value_ref<node_id> v) {
            const std::size_t j = ps.g.kind(v.node) == node_kind::op ? ps.step_of[v.node.value] : no_step;
            std::size_t later_reads = 0;  // what run_fused finds in its use count
            for (const auto& u : ps.g.users(v.node))
                if (u.port == v.port && ps.step_of[u.user.value] >= i) ++later_reads;
            if (j != no_step && ps.fused[j] && v.port == 0 && later_reads == 1 && !ps.g.is_graph_output(v.node, v.port) &&
                desc[j] == desc[i])
                rec.into[i] = j;
        });
        if (rec.into[i] == no_step) rec.bytes[i] = desc[i].get_size();
    }
    return make_plan(ps, rec);
}

}  // namespace detail
}  // namespace exec
SGMATCH_END_NAMESPACE
