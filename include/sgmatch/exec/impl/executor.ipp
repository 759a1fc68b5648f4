// sgmatch/exec/impl/executor.ipp - the executor's definitions (exec/executor.hpp): included by
// that header, or, in a program built with SGMATCH_SEPARATE_COMPILATION, compiled once by
// exec/src.hpp.
#pragma once

#include <algorithm>
#include <any>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <tuple>
#include <vector>

#include "sgmatch/detail/checked.hpp"
#include "sgmatch/detail/config.hpp"
#include "sgmatch/exec/control_flow.hpp"
#include "sgmatch/exec/executor.hpp"
#include "sgmatch/exec/fused_plan.hpp"
#include "sgmatch/exec/fallback.hpp"
#include "sgmatch/exec/kernels.hpp"
#include "sgmatch/exec/kernels/typed_onednn.hpp"
#include "sgmatch/exec/kernels/typed.hpp"
#include "sgmatch/exec/value_store.hpp"
#include "sgmatch/exec/node_kernels.hpp"
#include "sgmatch/match/scan.hpp"
#include "sgmatch/onednn/op_kernels.hpp"
#include "sgmatch/onednn/property.hpp"
#include "sgmatch/onednn/threads.hpp"
#include "sgmatch/ops/attrs.hpp"
#include "sgmatch/ops/shape_rule_table.hpp"
#include "sgmatch/ops/table.hpp"
#include "sgmatch/reference/kernels.hpp"
#include "sgmatch/reference/onednn.hpp"

SGMATCH_BEGIN_NAMESPACE
namespace exec {
namespace detail {

// The executor's plan (a kernel per step) and its runs; executor holds it.
class executor_impl {
public:
    executor_impl(const graph& g, mode m, std::shared_ptr<limits> l) : g_(g), limits_(std::move(l)), layout_(g) {
        const op_index<graph> checked(g);  // raises graph_error for a malformed graph
        (void)checked;
        for (node_id n : g.nodes()) {
            if (g.kind(n) != node_kind::op) continue;
            step s{n};
            if (g.payload(n).has_value()) {
                const auto* p = std::any_cast<std::shared_ptr<const onednn::fused_node>>(&g.payload(n));
                const auto* r = std::any_cast<std::shared_ptr<const subgraph_node>>(&g.payload(n));
                if ((p == nullptr || !*p) && (r == nullptr || !*r || !(*r)->exec))
                    throw exec_error("sgmatch::exec::executor: fused node '" + std::string(g.name(n)) +
                                     "' carries neither an onednn::fused_node nor an exec::subgraph_node");
                if (p != nullptr) {
                    s.fused = p->get();
                    has_fused_ = true;
                    s.unfused = executor::member_ops(*s.fused);
                } else {
                    s.region = r->get();
                }
            } else {
                bind(s, m);
            }
            if (s.op || s.unfused) s.fallback = std::make_shared<detail::fallback_log>();
            steps_.push_back(std::move(s));
        }
        step_of_.assign(g.index_bound(), npos);
        for (std::size_t i = 0; i < steps_.size(); ++i) {
            step_of_[steps_[i].n.value] = i;
            step_nodes_.push_back(steps_[i].n);
            step_fused_.push_back(steps_[i].fused);
        }
        // What every run starts from: the edges that read each value, the types the graph declares.
        // The declared types are kept once each (a long graph declares few distinct ones).
        uses0_.assign(layout_.size(), 0);
        declared_at_.assign(layout_.size(), 0);
        std::map<std::tuple<dtype, std::vector<std::int64_t>, bool, bool, bool>, std::uint32_t> seen;
        for (node_id n : g.nodes()) {
            for (const auto& u : g.users(n)) ++uses0_[layout_.base[n.value] + u.port];
            for (std::uint32_t p = 0; p < g.output_count(n); ++p) {
                auto t = g.value_type(n, p);
                if (!t) continue;
                auto [it, fresh] = seen.emplace(std::make_tuple(t->type, t->dims, t->sequence, t->scalar, t->optional),
                                                static_cast<std::uint32_t>(declared_types_.size() + 1));
                if (fresh) declared_types_.push_back(std::move(*t));
                declared_at_[layout_.base[n.value] + p] = it->second;
            }
        }
    }

    // Each run is bounded by the calling handle's limits (a region node's executor runs under
    // its outer executor's).
    std::vector<array> call(const std::map<std::string, array>& inputs, run_stats* stats, int threads, const limits& lim) const {
        run_stats local;
        run_stats& st = stats ? *stats : local;
        const onednn::thread_cap cap(threads);
        st.threads = onednn::max_threads();
        store values(g_, layout_);
        bind_inputs(values, inputs, [](slot& s, const array& a) { s.plain = a; });
        run_steps(values, st, lim);
        std::vector<array> out;
        for (std::size_t i = 0; i < g_.graph_output_count(); ++i) out.push_back(values.plain_of(g_.graph_output(i), st));
        return out;
    }

    std::vector<value> run(const std::map<std::string, value>& inputs, run_stats* stats, int threads, const limits& lim) const {
        run_stats local;
        run_stats& st = stats ? *stats : local;
        const onednn::thread_cap cap(threads);
        st.threads = onednn::max_threads();
        store values(g_, layout_);
        bind_inputs(values, inputs, [](slot& s, const value& v) { s.typed = v; });
        run_steps(values, st, lim);
        std::vector<value> out;
        for (std::size_t i = 0; i < g_.graph_output_count(); ++i) out.push_back(values.output_of(g_.graph_output(i), st));
        return out;
    }

    std::vector<onednn::tensor> run_tensors(const std::map<std::string, onednn::tensor>& inputs, run_stats* stats,
                                            int threads, const limits& lim) const {
        run_stats local;
        run_stats& st = stats ? *stats : local;
        const onednn::thread_cap cap(threads);
        st.threads = onednn::max_threads();
        store values(g_, layout_);
        bind_inputs(values, inputs, [](slot& s, const onednn::tensor& t) { s.t = t; });
        run_steps(values, st, lim);
        std::vector<onednn::tensor> out;
        for (std::size_t i = 0; i < g_.graph_output_count(); ++i) {
            const auto v = g_.graph_output(i);
            slot& s = values[v.node.value].at(v.port);
            if (s.t.empty() && g_.kind(v.node) == node_kind::constant) s.t = detail::constant_view(g_, v.node);
            if (s.t.empty() && s.typed && !s.plain) (void)values.plain_of(v, st);  // f32 only, else a clear error
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
    using slot = detail::slot;
    using store = detail::value_store;

    // The graph inputs' values, by name (a missing one is an error naming it).
    template <class V, class Set>
    void bind_inputs(store& values, const std::map<std::string, V>& inputs, Set set) const {
        for (node_id n : g_.nodes()) {
            if (g_.kind(n) != node_kind::input) continue;
            auto it = inputs.find(std::string(g_.name(n)));
            if (it == inputs.end())
                throw exec_error("sgmatch::exec::executor: no value for graph input '" + std::string(g_.name(n)) + "'");
            set(values[n.value][0], it->second);
        }
    }

    // Every step in order over `values` (graph inputs already set).
    void run_steps(store& values, run_stats& st, const limits& lim) const {
        // Edges still to read each value: a value is dropped (its buffer back to the pool) after
        // its last read, and a residual read last by a fused conv is accumulated into in place.
        // (Constants are read on demand: a view for kernels, a copy for reference kernels.)
        use_counts uses = uses0_;
        // The plan of this input-shape signature, or a record of this run to make it from.
        std::shared_ptr<const run_plan> plan;
        std::optional<recording> rec;
        std::shared_ptr<void> arena;
        std::vector<onednn::dims> sig;
        if (has_fused_) {
            sig = signature(values);
            {
                std::lock_guard<std::mutex> lock(plans_->mu);
                const auto it = plans_->plans.find(sig);
                if (it != plans_->plans.end()) plan = it->second;
            }
            if (!plan) {  // planned ahead from the declared shapes, when they are the run's
                plan = detail::plan_ahead(plan_view(), sig);
                if (plan) {
                    std::lock_guard<std::mutex> lock(plans_->mu);
                    plan = plans_->plans.emplace(sig, plan).first->second;  // or another thread's, made meanwhile
                }
            }
            if (plan) {
                if (plan->arena > 0) arena = onednn::detail::buffer_pool::instance().get(plan->arena);
                st.planned_bytes += plan->arena;
                st.pooled_bytes += plan->pooled;
            } else {
                rec.emplace(steps_.size());
            }
        }
        const placement where{plan.get(), arena, rec ? &*rec : nullptr};
        // The memory budget: each node's outputs, by its shape rule on the inputs it has now,
        // checked before it allocates; the bytes held until their values are dropped.
        budget held(g_.index_bound());
        for (const step& s : steps_) {
            const node_id n = s.n;
            if (!s.region) held.take(g_, n, output_bytes(s, values), lim);
            const auto t0 = st.times ? std::chrono::steady_clock::now() : std::chrono::steady_clock::time_point{};
            const char* kernel = "reference";
            if (s.region) {
                kernel = "region";
                std::map<std::string, onednn::tensor> ins;
                for (std::size_t i = 0; i < s.region->runtime_inputs.size(); ++i)
                    ins.emplace(std::to_string(i), values.tensor_of(n, s.region->runtime_inputs[i]));
                run_stats inner;
                auto outs = executor::run_region(*s.region->exec, ins, &inner, lim);
                for (std::size_t k = 0; k < outs.size() && k < values[n.value].size(); ++k) {
                    values[n.value][k].t = std::move(outs[k]);
                    values[n.value][k].owned = false;  // may be a view of an input: never written in place
                }
                ++st.region_nodes;
                st += inner;
            } else if (s.typed && (s.typed_only || reads_foreign(s, values))) {
                kernel = "typed";
                run_typed(s, values, st);
            } else if (s.op) {
                kernel = "onednn";
                run_op(s, values, uses, st);
            } else if (s.fused) {
                kernel = "fused";
                run_fused(s, values, uses, st, where);
            } else {
                values[n.value][0].plain = run_reference(s, values, st);
                ++st.reference_nodes;
            }
            if (st.times)
                st.times->push_back({n, kernel, std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count()});
            for (std::uint32_t p = 0; p < g_.output_count(n); ++p) check_value(n, p, values[n.value][p]);
            for (std::size_t i = 0; i < g_.input_count(n); ++i) {
                const auto v = g_.input(n, i);
                if (--uses[layout_.base[v.node.value] + v.port] == 0 && !g_.is_graph_output(v.node, v.port) &&
                    g_.kind(v.node) == node_kind::op) {
                    values[v.node.value][v.port] = slot{};
                    held.drop_if_unread(g_, v.node, uses.data() + layout_.base[v.node.value]);
                }
            }
        }
        if (rec) {
            auto made = detail::make_plan(plan_view(), *rec);
            std::lock_guard<std::mutex> lock(plans_->mu);
            plans_->plans.emplace(std::move(sig), std::move(made));
        }
    }

    // The buffer plans (fused_plan.hpp), per input-shape signature; a copy of the executor shares them.
    using run_plan = detail::run_plan;
    using recording = detail::plan_recording;
    static constexpr std::size_t npos = detail::no_step;
    struct plan_cache {
        std::mutex mu;
        std::map<std::vector<onednn::dims>, std::shared_ptr<const run_plan>> plans;
    };
    struct placement {
        const run_plan* plan;
        std::shared_ptr<void> arena;
        recording* rec;
    };
    detail::plan_steps plan_view() const { return {g_, step_nodes_, step_fused_, step_of_}; }

    std::vector<onednn::dims> signature(const store& values) const {
        std::vector<onednn::dims> sig;
        for (node_id n : g_.nodes()) {
            if (g_.kind(n) != node_kind::input) continue;
            const slot& s = values[n.value][0];
            if (!s.t.empty()) sig.push_back(s.t.shape());
            else if (s.plain) sig.emplace_back(s.plain->shape().begin(), s.plain->shape().end());
            else if (s.typed) sig.emplace_back(s.typed->dims().begin(), s.typed->dims().end());
            else sig.emplace_back();
        }
        return sig;
    }

    struct step {
        // What every run reads first (one cache line), then the kernels themselves.
        node_id n;
        bool typed_only = false;                                  // no fp32 kernel for this node
        bool onednn_typed = false;                                // its typed kernel may run a oneDNN primitive
        const onednn::fused_node* fused = nullptr;
        const subgraph_node* region = nullptr;                    // a region node: its own executor
        std::shared_ptr<const onednn::op_kernel> op = nullptr;    // mode onednn: the op on a oneDNN primitive
        std::shared_ptr<detail::fallback_log> fallback = nullptr; // shapes the kernel (op or fused) rejected
        ops::shape_rule rule = nullptr;                           // the op's shape rule, if it has one
        std::size_t data_input = 0;                               // the input whose type picks the kernel
        typed_fn typed = nullptr;                                 // the op's typed kernel (kernels/typed.hpp)
        reference_fn ref = nullptr;                               // an op node's reference kernel
        std::shared_ptr<const executor> unfused = nullptr;        // a fused node's ops, one kernel each
        std::shared_ptr<const ops::op_attrs> attrs = nullptr;     // with a typed kernel: for its size check
    };

    // An op node's kernels, from its description's binding; every attribute checked here.
    void bind(step& s, mode m) {
        const node_id n = s.n;
        const ops::op_schema* schema = ops::find_schema(g_.op_name(n));
        if (schema != nullptr && ops::has_body(*schema)) return bind_control(s, *schema, m);
        const kernel_binding* k = schema ? find_kernels(schema) : nullptr;
        const typed_binding* tk = schema ? find_typed_kernel(schema) : nullptr;
        if (k == nullptr && tk == nullptr)
            throw exec_error("sgmatch::exec::executor: no kernel for op '" + std::string(g_.op_name(n)) + "' (node '" +
                             std::string(g_.name(n)) + "')");
        try {
            const ops::op_attrs a(*schema, ops::node_of<graph>(g_, n));
            const node_context c{g_, n, a};
            if (g_.output_count(n) > schema->outputs)
                c.refuse(std::to_string(g_.output_count(n)) + " outputs; the kernels compute " + std::to_string(schema->outputs));
            s.data_input = schema->types.input;
            if (tk == nullptr)
                for (std::uint32_t p = 0; p < g_.output_count(n); ++p)
                    if (const auto t = g_.value_type(n, p); t && t->type != dtype::unknown && t->type != dtype::f32)
                        c.refuse("output " + std::to_string(p) + " is declared " + std::string(name_of(t->type)) +
                                 " (the kernels of " + std::string(schema->name()) + " compute float)");
            if (k != nullptr && g_.output_count(n) <= 1) {
                try {
                    s.ref = k->reference(c);
                    if (m != mode::reference && k->onednn != nullptr) {
                        try {
                            const onednn_choice choice = k->onednn(c, m == mode::onednn_plain);
                            s.op = choice.kernel();
                            if (!s.op) note_reference(n, choice.why());
                        } catch (const onednn::kernel_error& e) {
                            s.op = nullptr;  // no primitive takes this node's form: its reference kernel runs
                            note_reference(n, e.what());
                        }
                    } else if (m != mode::reference) {
                        note_reference(n, "oneDNN has no kernel for " + std::string(schema->name()));
                    }
                } catch (const exec_error&) {
                    if (tk == nullptr) throw;  // a parameter only known at run time: the typed kernel reads it then
                    s.ref = nullptr;
                    s.op = nullptr;
                }
                // A kernel that holds its constants reads only computed inputs: a constant data input
                // (a Transpose of a weight) runs on the reference kernel.
                if (s.op && !s.op->reads_constants() && g_.input_count(n) > 0 && c.input_is_constant(0)) {
                    s.op = nullptr;
                    note_reference(n, "input 0 is a constant: the reference kernel computes it (the clean-up passes fold it)");
                }
            }
            if (tk != nullptr) {
                s.typed = tk->make(a, ops::node_of<graph>(g_, n));
                s.attrs = std::make_shared<const ops::op_attrs>(a);
                // In the oneDNN modes, oneDNN's kernel where it has one for this form (recurrent
                // layers, Resize, comparisons: kernels/typed_onednn.hpp).
                if (const typed_binding* ok = m != mode::reference ? typed::find_onednn_typed_kernel(schema) : nullptr) {
                    try {
                        s.typed = ok->make(a, ops::node_of<graph>(g_, n));
                        s.onednn_typed = true;
                    } catch (const onednn::kernel_error&) {
                        // the reference kernel made above runs it
                    }
                }
            }
            s.typed_only = s.ref == nullptr;
            if (!s.attrs) s.attrs = std::make_shared<const ops::op_attrs>(a);
            s.rule = ops::shape_rule_of(*schema);
        } catch (const ops::op_error& e) {
            std::string_view m = e.what();
            if (m.substr(0, 9) == "sgmatch: ") m.remove_prefix(9);
            throw exec_error("sgmatch::exec::executor: " + std::string(m));
        }
    }

    // A control-flow node (If, Loop, Scan, SequenceMap): its bodies on executors of their own.
    void bind_control(step& s, const ops::op_schema& schema, mode m) const {
        try {
            const ops::op_attrs a(schema, ops::node_of<graph>(g_, s.n));
            s.typed = control::make<executor>(a, g_, s.n, m, limits_);
            s.attrs = std::make_shared<const ops::op_attrs>(a);
            s.rule = ops::shape_rule_of(schema);
            s.typed_only = true;
        } catch (const ops::op_error& e) {
            std::string_view msg = e.what();
            if (msg.substr(0, 9) == "sgmatch: ") msg.remove_prefix(9);
            throw exec_error("sgmatch::exec::executor: " + std::string(msg));
        }
    }

    // The shape and element type of a computed value against the ones the graph declares (dims
    // of -1, an undeclared rank and an unknown type are not checked).
    void check_value(node_id n, std::uint32_t port, const slot& s) const;

    using use_counts = std::vector<std::uint32_t>;  // by slot (slot_layout): edges still to read the value

    // The bytes a run holds in computed values, against the limits.
    class budget {
    public:
        explicit budget(std::size_t nodes) : bytes_(nodes, 0) {}
        // Node n is about to compute `bytes` (0: not known before it runs).
        void take(const graph& g, node_id n, std::uint64_t bytes, const limits& l) {
            auto refuse = [&](const std::string& why) {
                throw exec_error("sgmatch::exec::executor: node '" + std::string(g.name(n)) + "' (" + std::string(g.op_name(n)) + ") " + why);
            };
            if (bytes > l.max_allocation)
                refuse("would compute " + std::to_string(bytes) + " bytes, over the memory budget of " + std::to_string(l.max_allocation) +
                       " bytes for one value (exec::limits::max_allocation)");
            if (bytes > l.max_live || live_ > l.max_live - bytes)
                refuse("would compute " + std::to_string(bytes) + " bytes while the run holds " + std::to_string(live_) +
                       ", over the memory budget of " + std::to_string(l.max_live) + " bytes live at once (exec::limits::max_live)");
            bytes_[n.value] = bytes;
            live_ += bytes;
        }
        // Node n's values are all read and none is a graph output: its bytes are free again.
        void drop_if_unread(const graph& g, node_id n, const std::uint32_t* uses) {
            for (std::uint32_t p = 0; p < g.output_count(n); ++p)
                if (uses[p] != 0 || g.is_graph_output(n, p)) return;
            live_ -= bytes_[n.value];
            bytes_[n.value] = 0;
        }

    private:
        std::vector<std::uint64_t> bytes_;
        std::uint64_t live_ = 0;
    };

    // What a shape rule reads of node n's inputs as they are now: dims, and the values of small
    // integer and real inputs (a Reshape's shape, Resize's scales).
    ops::shape_inputs shapes_now(node_id n, const store& vs) const;

    // The bytes step s's outputs will take, by its op's shape rule (a fused node: its ops'
    // rules in order) on the inputs it has now, 8 bytes an element for typed kernels and 4 for
    // the f32 ones; 0 where no rule answers (the kernel then computes what it computes, and
    // the declared shape is checked after).
    std::uint64_t output_bytes(const step& s, const store& vs) const;

    // The element count of a tensor value as it is now (none: a sequence, an empty optional, no value yet).
    std::optional<std::int64_t> element_count_now(value_ref<node_id> v, const store& vs) const;

    // A fused node's output shape: its ops' shape rules, in order, over the member graph whose
    // input "k" is the node's input ops_inputs[k].
    std::vector<ops::dims> fused_output_shapes(const onednn::fused_node& f, node_id n, const store& vs) const;

    // Whether this read of v is its last and v's tensor was computed by the run (owned: by a
    // oneDNN kernel, so not a graph input's or a constant's view) and is no graph output: a
    // kernel may write over it.
    bool last_read_of_own(value_ref<node_id> v, const slot& x, const use_counts& uses) const;

    // A single op on its oneDNN kernel; its reference kernel when the kernel rejects the input.
    void run_op(const step& s, store& vs, const use_counts& uses, run_stats& st) const;

    // A fused node on its kernel; its ops unfused when the kernel rejects the input.
    void run_fused(const step& s, store& vs, const use_counts& uses, run_stats& st, const placement& where) const;

    // What runs when the node's kernel rejects its input (why: the kernel's error, or nullptr
    // when the shapes were rejected before): a fused node's ops, unfused, or an op's reference
    // kernel. When that fails too, an exec_error carries both reasons.
    array fall_back(const step& s, store& vs, run_stats& st, const char* why) const;

    // Whether every input of a node is a scalar (rank 0), so that its result is one too.
    bool scalars_only(const step& s, const store& vs) const;

    // Whether a node reads a value only a typed kernel can: its data input is not f32, or an
    // input computed at run time is not (an int64 shape, a bool mask).
    bool reads_foreign(const step& s, const store& vs) const;

    void run_typed(const step& s, store& vs, run_stats& st) const;

    // A sequence where the op reads a tensor, or the reverse: an error naming the node (a model
    // whose types ONNX's checker would refuse).
    void check_sequences(node_id n, const ops::op_schema& schema, const values& in) const;

    array run_reference(const step& s, store& vs, run_stats& st) const;
    exec_error kernel_failed(node_id n, const std::exception& e) const;

    // Why node n, in a oneDNN mode, runs on its reference kernel.
    void note_reference(node_id n, std::string why) {
        reasons_.push_back({std::string(g_.name(n)), std::string(g_.op_name(n)), std::move(why)});
    }

public:
    std::vector<executor::reference_reason> reference_reasons() const {
        std::vector<executor::reference_reason> out = reasons_;
        for (const step& s : steps_)
            if (s.region != nullptr)
                for (executor::reference_reason r : s.region->exec->reference_reasons()) {
                    r.node = std::string(g_.name(s.n)) + "/" + r.node;
                    out.push_back(std::move(r));
                }
        return out;
    }

private:
    const graph& g_;
    std::shared_ptr<limits> limits_;
    detail::slot_layout layout_;
    std::vector<std::uint32_t> uses0_;                    // by slot: the edges that read it
    std::vector<std::uint32_t> declared_at_;              // by slot: 1 + its declared type's index, 0: none
    std::vector<tensor_type> declared_types_;             // each declared type once
    std::vector<step> steps_;
    std::vector<std::size_t> step_of_;  // by node index: its step (npos: not an op)
    std::vector<node_id> step_nodes_;   // by step: its node, and its fused node (or null)
    std::vector<const onednn::fused_node*> step_fused_;
    bool has_fused_ = false;
    std::vector<executor::reference_reason> reasons_;  // by node, in order: why its reference kernel runs
    std::shared_ptr<plan_cache> plans_ = std::make_shared<plan_cache>();
};

}  // namespace detail

SGMATCH_DECL executor::executor(const graph& g, mode m) : executor(g, m, nullptr) {}

SGMATCH_DECL executor::executor(const graph& g, mode m, std::shared_ptr<limits> l)
    : limits_(l ? std::move(l) : std::make_shared<limits>()),
      impl_(std::make_shared<const detail::executor_impl>(g, m, limits_)) {}

SGMATCH_DECL std::vector<array> executor::operator()(const std::map<std::string, array>& inputs, run_stats* stats) const {
    return impl_->call(inputs, stats, threads_, *limits_);
}

SGMATCH_DECL std::vector<value> executor::run(const std::map<std::string, value>& inputs, run_stats* stats) const {
    return impl_->run(inputs, stats, threads_, *limits_);
}

SGMATCH_DECL std::vector<onednn::tensor> executor::run_tensors(const std::map<std::string, onednn::tensor>& inputs,
                                                             run_stats* stats) const {
    return impl_->run_tensors(inputs, stats, threads_, *limits_);
}

SGMATCH_DECL std::vector<onednn::tensor> executor::run_region(const executor& region, const std::map<std::string, onednn::tensor>& inputs,
                                                            run_stats* stats, const limits& outer) {
    return region.impl_->run_tensors(inputs, stats, region.threads_, outer);
}

SGMATCH_DECL std::shared_ptr<const executor> executor::member_ops(const onednn::fused_node& f) {
    if (!f.ops) return nullptr;
    try {
        return std::make_shared<const executor>(*f.ops, mode::onednn);
    } catch (const exec_error&) {
        return nullptr;
    }
}

SGMATCH_DECL std::vector<executor::reference_reason> executor::reference_reasons() const { return impl_->reference_reasons(); }

SGMATCH_DECL void executor::set_threads(int n) {
    if (n > 0) { const onednn::thread_cap check(n); }
    threads_ = n;
}

}  // namespace exec
SGMATCH_END_NAMESPACE

#include "sgmatch/exec/impl/run_node.ipp"
