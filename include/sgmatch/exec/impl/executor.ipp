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
    void check_value(node_id n, std::uint32_t port, const slot& s) const {
        const std::uint32_t at = declared_at_[layout_.base[n.value] + port];
        if (at == 0) return;
        const tensor_type* t = &declared_types_[at - 1];
        const dtype type = s.typed ? s.typed->type() : dtype::f32;
        if (s.typed && s.typed->is_none()) {  // an empty optional: of the declared kind and type
            const bool seq = s.typed->none_of_sequence();
            if (!t->optional || t->sequence != seq || (t->type != dtype::unknown && t->type != type))
                throw exec_error("sgmatch::exec::executor: node '" + std::string(g_.name(n)) + "' (" + std::string(g_.op_name(n)) +
                                 ") computed an empty optional of " + (seq ? "sequences of " : "") + std::string(name_of(type)) +
                                 " on output " + std::to_string(port) + "; the graph declares " + ops::type_notation(*t));
            return;
        }
        const bool sequence = s.typed && s.typed->is_sequence();
        if (t->sequence != sequence && (t->sequence || s.typed || s.plain || !s.t.empty()))
            throw exec_error("sgmatch::exec::executor: node '" + std::string(g_.name(n)) + "' (" + std::string(g_.op_name(n)) +
                             ") computed a " + (sequence ? "sequence" : "tensor") + " on output " + std::to_string(port) +
                             "; the graph declares a " + (t->sequence ? "sequence" : "tensor"));
        if (t->type != dtype::unknown && (s.typed || s.plain || !s.t.empty()) && t->type != type)
            throw exec_error("sgmatch::exec::executor: node '" + std::string(g_.name(n)) + "' (" + std::string(g_.op_name(n)) +
                             ") computed " + std::string(name_of(type)) + " values on output " + std::to_string(port) +
                             "; the graph declares " + std::string(name_of(t->type)));
        if (!t->ranked()) return;
        auto same_as_declared = [&](auto first, auto last) {
            if (static_cast<std::size_t>(std::distance(first, last)) != t->dims.size()) return false;
            for (std::size_t i = 0; first != last; ++first, ++i)
                if (t->dims[i] >= 0 && t->dims[i] != static_cast<std::int64_t>(*first)) return false;
            return true;
        };
        onednn::dims got;
        if (s.typed) {
            if (same_as_declared(s.typed->dims().begin(), s.typed->dims().end())) return;
            got.assign(s.typed->dims().begin(), s.typed->dims().end());
        } else if (s.plain) {
            if (same_as_declared(s.plain->shape().begin(), s.plain->shape().end())) return;
            got.assign(s.plain->shape().begin(), s.plain->shape().end());
        } else if (!s.t.empty()) {
            const bool same = onednn::compat::with_dims(s.t.memory(), [&](const std::int64_t* d, int rank) {
                return same_as_declared(d, d + rank);
            });
            if (same) return;
            got = s.t.shape();
        } else {
            return;
        }
        throw exec_error("sgmatch::exec::executor: node '" + std::string(g_.name(n)) + "' (" + std::string(g_.op_name(n)) +
                         ") computed shape " + onednn::to_string(got) + " on output " + std::to_string(port) +
                         "; the graph declares " + onednn::to_string(onednn::dims(t->dims.begin(), t->dims.end())));
    }

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
    ops::shape_inputs shapes_now(node_id n, const store& vs) const {
        ops::shape_inputs in;
        for (std::size_t i = 0; i < g_.input_count(n); ++i) {
            const auto v = g_.input(n, i);
            std::optional<std::vector<std::int64_t>> ints;
            std::optional<std::vector<double>> reals;
            if (g_.kind(v.node) == node_kind::constant) {
                const auto c = g_.constant(v.node);
                if (!c) return {};
                in.shapes.emplace_back(c->dims, c->dims + c->rank);
                if (c->element_count() <= 64) {
                    ints = c->to_ints();
                    reals = c->to_reals();
                }
            } else {
                const slot& x = vs[v.node.value].at(v.port);
                if (x.typed) {
                    if (x.typed->is_sequence() || x.typed->is_none()) return {};
                    in.shapes.emplace_back(x.typed->dims().begin(), x.typed->dims().end());
                    const value& t = *x.typed;
                    if ((t.has_data() || t.size() == 0) && t.size() <= 64 && (t.type() == dtype::i64 || t.type() == dtype::i32))
                        ints = t.dense_value().to_ints();
                    if ((t.has_data() || t.size() == 0) && t.size() <= 64 && (t.type() == dtype::f32 || t.type() == dtype::f64))
                        reals = t.dense_value().as_constant().to_reals();
                } else if (x.plain) {
                    in.shapes.emplace_back(x.plain->shape().begin(), x.plain->shape().end());
                    if (x.plain->size() <= 64) reals = std::vector<double>(x.plain->begin(), x.plain->end());
                } else if (!x.t.empty()) {
                    in.shapes.push_back(x.t.shape());
                } else {
                    return {};
                }
            }
            in.values.push_back(std::move(ints));
            in.reals.push_back(std::move(reals));
        }
        return in;
    }

    // The bytes step s's outputs will take, by its op's shape rule (a fused node: its ops'
    // rules in order) on the inputs it has now, 8 bytes an element for typed kernels and 4 for
    // the f32 ones; 0 where no rule answers (the kernel then computes what it computes, and
    // the declared shape is checked after).
    std::uint64_t output_bytes(const step& s, const store& vs) const {
        const std::uint64_t element = s.typed && (s.typed_only || reads_foreign(s, vs)) ? 8 : 4;
        if (s.rule == &ops::rules::same_as_input0 && !s.fused && g_.output_count(s.n) == 1 && g_.input_count(s.n) >= 1) {
            // An element-wise op: its input's element count, read without building shapes.
            const auto count = element_count_now(g_.input(s.n, 0), vs);
            if (count) {
                const auto b = sgmatch::detail::checked_bytes(*count, static_cast<std::int64_t>(element));
                return b ? static_cast<std::uint64_t>(*b) : UINT64_MAX;
            }
        }
        std::vector<ops::dims> outs;
        try {
            if (s.fused) {
                outs = fused_output_shapes(*s.fused, s.n, vs);
            } else if (s.rule != nullptr) {
                const ops::shape_inputs in = shapes_now(s.n, vs);
                if (in.shapes.size() != g_.input_count(s.n)) return 0;
                outs = ops::infer_shapes(*s.attrs, in);
            }
        } catch (const ops::size_overflow& e) {
            std::string_view m = e.what();
            if (m.substr(0, 9) == "sgmatch: ") m.remove_prefix(9);
            throw exec_error("sgmatch::exec::executor: " + std::string(m));
        } catch (const ops::op_error&) {
            return 0;  // the kernel says what is wrong
        }
        std::uint64_t bytes = 0;
        for (const auto& d : outs) {
            const auto count = sgmatch::detail::checked_product(d);
            const auto b = count ? sgmatch::detail::checked_bytes(*count, static_cast<std::int64_t>(element)) : std::nullopt;
            if (!b || bytes > UINT64_MAX - static_cast<std::uint64_t>(*b)) return UINT64_MAX;
            bytes += static_cast<std::uint64_t>(*b);
        }
        return bytes;
    }

    // The element count of a tensor value as it is now (none: a sequence, an empty optional, no value yet).
    std::optional<std::int64_t> element_count_now(value_ref<node_id> v, const store& vs) const {
        if (g_.kind(v.node) == node_kind::constant) {
            const auto c = g_.constant(v.node);
            if (!c) return std::nullopt;
            return static_cast<std::int64_t>(c->element_count());
        }
        const slot& x = vs[v.node.value].at(v.port);
        if (x.typed) {
            if (x.typed->is_sequence() || x.typed->is_none()) return std::nullopt;
            return x.typed->size();
        }
        if (x.plain) return static_cast<std::int64_t>(x.plain->size());
        if (!x.t.empty()) return onednn::compat::element_count(x.t.memory().get_desc());
        return std::nullopt;
    }

    // A fused node's output shape: its ops' shape rules, in order, over the member graph whose
    // input "k" is the node's input ops_inputs[k].
    std::vector<ops::dims> fused_output_shapes(const onednn::fused_node& f, node_id n, const store& vs) const {
        if (!f.ops) return {};
        const graph& m = *f.ops;
        const ops::shape_inputs outer = shapes_now(n, vs);
        if (outer.shapes.size() != g_.input_count(n)) return {};
        std::vector<std::vector<ops::dims>> shape_of(m.index_bound());
        for (node_id x : m.nodes()) {
            if (m.kind(x) == node_kind::input) {
                std::size_t k = 0;
                const std::string_view name = m.name(x);
                for (char c : name) k = k * 10 + static_cast<std::size_t>(c - '0');
                if (k >= f.ops_inputs.size() || f.ops_inputs[k] >= outer.shapes.size()) return {};
                shape_of[x.value] = {outer.shapes[f.ops_inputs[k]]};
            } else if (m.kind(x) == node_kind::constant) {
                const auto c = m.constant(x);
                if (!c) return {};
                shape_of[x.value] = {ops::dims(c->dims, c->dims + c->rank)};
            } else if (m.kind(x) == node_kind::op) {
                const ops::op_schema* schema = ops::find_schema(m.op_name(x));
                if (schema == nullptr || ops::shape_rule_of(*schema) == nullptr) return {};
                ops::shape_inputs in;
                for (std::size_t i = 0; i < m.input_count(x); ++i) {
                    const auto v = m.input(x, i);
                    if (shape_of[v.node.value].size() <= v.port) return {};
                    in.shapes.push_back(shape_of[v.node.value][v.port]);
                    const auto c = m.constant(v.node);
                    const bool small = c && c->element_count() <= 64;
                    in.values.push_back(small ? c->to_ints() : std::nullopt);
                    in.reals.push_back(small ? c->to_reals() : std::nullopt);
                }
                const ops::op_attrs a(*schema, ops::node_of<graph>(m, x));
                shape_of[x.value] = ops::infer_shapes(a, in);
            }
        }
        if (m.graph_output_count() == 0) return {};
        const auto o = m.graph_output(0);
        return shape_of[o.node.value].size() > o.port ? std::vector<ops::dims>{shape_of[o.node.value][o.port]} : std::vector<ops::dims>{};
    }

    // Whether this read of v is its last and v's tensor was computed by the run (owned: by a
    // oneDNN kernel, so not a graph input's or a constant's view) and is no graph output: a
    // kernel may write over it.
    bool last_read_of_own(value_ref<node_id> v, const slot& x, const use_counts& uses) const {
        return uses[layout_.base[v.node.value] + v.port] == 1 && !g_.is_graph_output(v.node, v.port) && x.owned && !x.t.empty();
    }

    // A single op on its oneDNN kernel; its reference kernel when the kernel rejects the input.
    void run_op(const step& s, store& vs, const use_counts& uses, run_stats& st) const {
        const node_id n = s.n;
        if (scalars_only(s, vs)) {  // a oneDNN tensor has no rank 0: the reference kernel keeps it
            vs[n.value][0].plain = run_reference(s, vs, st);
            ++st.reference_nodes;
            return;
        }
        slot& out = vs[n.value][0];
        std::vector<onednn::tensor> ins;
        try {
            // An element-wise kernel writes over its input when this node is the input's last
            // reader and the buffer is the run's own, held by nothing else (not a view of a graph
            // input or a constant, not a planned arena's part).
            bool in_place = false;
            if (s.op->runs_in_place() && g_.input_count(n) >= 1) {
                const auto v = g_.input(n, 0);
                const slot& x = vs[v.node.value][v.port];
                in_place = last_read_of_own(v, x, uses) && x.t.owner() && x.t.owner().use_count() == 1;
            }
            ins.reserve(g_.input_count(n));
            for (std::size_t i = 0; i < g_.input_count(n); ++i)
                if (g_.kind(g_.input(n, i).node) != node_kind::constant || s.op->reads_constants())
                    ins.push_back(vs.tensor_of(n, i));
            if (!s.fallback->any() || !s.fallback->rejected(detail::shapes_of({}, ins))) {
                out.t = onednn::guarded([&] { return in_place ? s.op->run_in_place(ins) : s.op->run(ins); });
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
    void run_fused(const step& s, store& vs, const use_counts& uses, run_stats& st, const placement& where) const {
        const node_id n = s.n;
        const std::size_t i = static_cast<std::size_t>(&s - steps_.data());
        const auto& fc = *s.fused;
        slot& out = vs[n.value][0];
        onednn::tensor src;
        std::vector<onednn::tensor> extra;
        try {
            for (std::size_t k : fc.extra) extra.push_back(vs.tensor_of(n, k));
            src = vs.tensor_of(n, fc.src);
            if (!s.unfused || !s.fallback->any() || !s.fallback->rejected(detail::shapes_of(src, extra))) {
                // The residual of a sum post-op, read here for the last time, in the destination's
                // layout and owned by the run: the kernel accumulates into it (no copy). The kernel
                // checks every operand before it writes, so a rejection leaves the residual intact.
                onednn::tensor in_place;
                std::size_t in_place_from = npos;  // the step that wrote the residual
                detail::for_each_sum_residual(g_, n, fc, [&](value_ref<node_id> v) {
                    slot& r = vs[v.node.value][v.port];
                    if (last_read_of_own(v, r, uses) && r.t.desc() == fc.kernel->dst_desc_for(src)) {
                        in_place = r.t;
                        in_place_from = step_of_[v.node.value];
                    }
                });
                // A planned run accumulates in place exactly where its plan does (elsewhere the
                // residual's buffer may be planned for another value once it is read).
                if (where.plan && where.plan->into[i] != in_place_from) in_place = onednn::tensor();
                const std::size_t at = where.plan && fc.kernel->writes_into() ? where.plan->offset[i] : npos;
                const dnnl::memory::desc d = at != npos ? fc.kernel->dst_desc_for(src) : dnnl::memory::desc();
                if (!in_place.empty()) {
                    onednn::guarded([&] { fc.kernel->run_into(src, extra, in_place); });
                    out.t = in_place;
                    ++st.in_place_sums;
                    if (where.rec) where.rec->into[i] = in_place_from;
                } else if (at != npos && d.get_size() == where.plan->bytes[i]) {  // the planned place
                    onednn::tensor y = onednn::tensor::within(where.arena, at, d);
                    onednn::guarded([&] { fc.kernel->run_into(src, extra, y); });
                    out.t = std::move(y);
                } else {
                    out.t = onednn::guarded([&] { return fc.kernel->run(src, extra); });
                    if (where.rec && fc.kernel->writes_into()) where.rec->bytes[i] = out.t.desc().get_size();
                }
                out.owned = true;
                ++st.fused_nodes;
                if (fc.kernel->unfused_shapes() != 0) ++st.unfused_post_ops;
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
                    ins.emplace(std::to_string(k), vs.plain_of(g_.input(n, slots[k]), st));
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

    // Whether every input of a node is a scalar (rank 0), so that its result is one too.
    bool scalars_only(const step& s, const store& vs) const {
        for (std::size_t i = 0; i < g_.input_count(s.n); ++i) {
            const auto v = g_.input(s.n, i);
            if (g_.kind(v.node) == node_kind::constant) {
                const auto c = g_.constant(v.node);
                if (!c || c->rank != 0) return false;
                continue;
            }
            const slot& x = vs[v.node.value].at(v.port);
            if (!x.t.empty() || !((x.plain && x.plain->dimension() == 0) || (x.typed && x.typed->rank() == 0))) return false;
        }
        return g_.input_count(s.n) > 0;
    }

    // Whether a node reads a value only a typed kernel can: its data input is not f32, or an
    // input computed at run time is not (an int64 shape, a bool mask).
    bool reads_foreign(const step& s, const store& vs) const {
        for (std::size_t i = 0; i < g_.input_count(s.n); ++i) {
            const auto v = g_.input(s.n, i);
            if (g_.kind(v.node) == node_kind::constant) {
                if (i != s.data_input) continue;
                const auto c = g_.constant(v.node);
                if (c && c->type != dtype::f32) return true;
            } else if (vs[v.node.value].size() > v.port && vs[v.node.value][v.port].foreign()) {
                return true;
            }
        }
        return false;
    }

    void run_typed(const step& s, store& vs, run_stats& st) const {
        const node_id n = s.n;
        values in;
        for (std::size_t i = 0; i < g_.input_count(n); ++i) in.push_back(vs.value_of(g_.input(n, i), st));
        if (s.attrs) {
            check_sequences(n, s.attrs->schema(), in);
            // The 16-bit and unsigned 32/64-bit integers reach only the kernels whose description
            // takes them (the others dispatch with visit_type, which has no case for them; the
            // front end refuses them at load, a graph built in code meets this here).
            const ops::op_schema& schema = s.attrs->schema();
            const std::size_t d = schema.types.input;
            if (d < in.size() && ops::types::has(ops::types::more_integers, in[d].type()) && !ops::types::has(schema.dtypes, in[d].type()))
                throw exec_error("sgmatch::exec::executor: node '" + std::string(g_.name(n)) + "' (" + std::string(g_.op_name(n)) +
                                 "): no kernel for element type " + std::string(name_of(in[d].type())) + " (input " + std::to_string(d) + ")");
        }
        values out;
        const std::size_t onednn_runs = onednn_typed_runs();
        try {
            out = s.typed(in);
        } catch (const value_error& e) {
            throw exec_error("sgmatch::exec::executor: node '" + std::string(g_.name(n)) + "' (" + std::string(g_.op_name(n)) +
                             "): " + e.what());
        }
        for (std::size_t p = 0; p < vs[n.value].size(); ++p) {
            if (p >= out.size())
                throw exec_error("sgmatch::exec::executor: node '" + std::string(g_.name(n)) + "' (" + std::string(g_.op_name(n)) +
                                 ") has " + std::to_string(vs[n.value].size()) + " outputs; its kernel computed " + std::to_string(out.size()));
            // A view (of an input array or a constant) outlives what it views only as a copy.
            vs[n.value][p].typed = out[p].owned() ? std::move(out[p]) : out[p].clone();
        }
        ++st.typed_nodes;
        if (s.onednn_typed && onednn_typed_runs() != onednn_runs) ++st.onednn_typed_nodes;
    }

    // A sequence where the op reads a tensor, or the reverse: an error naming the node (a model
    // whose types ONNX's checker would refuse).
    void check_sequences(node_id n, const ops::op_schema& schema, const values& in) const {
        for (std::size_t i = 0; i < in.size(); ++i) {
            const ops::input_spec* spec = schema.input(i);
            if (spec != nullptr && spec->any_kind()) continue;
            if (in[i].is_none())
                throw exec_error("sgmatch::exec::executor: node '" + std::string(g_.name(n)) + "' (" + std::string(g_.op_name(n)) +
                                 ") input " + std::to_string(i) + " is an empty optional; the op reads a value there");
            const bool wanted = spec != nullptr && spec->kind == ops::value_kind::sequence;
            if (in[i].is_sequence() != wanted)
                throw exec_error("sgmatch::exec::executor: node '" + std::string(g_.name(n)) + "' (" + std::string(g_.op_name(n)) +
                                 ") input " + std::to_string(i) + " is a " + (wanted ? "tensor" : "sequence") + "; the op reads a " +
                                 (wanted ? "sequence" : "tensor") + " there");
        }
    }

    array run_reference(const step& s, store& vs, run_stats& st) const {
        std::vector<const array*> in;
        std::vector<array> params;  // integer parameters computed at run time (Pad's pads), as numbers
        params.reserve(g_.input_count(s.n));
        for (std::size_t i = 0; i < g_.input_count(s.n); ++i) {
            const auto v = g_.input(s.n, i);
            const slot& x = vs[v.node.value].at(v.port);
            if (i != s.data_input && x.foreign() && !x.typed->is_sequence() && (x.typed->type() == dtype::i64 || x.typed->type() == dtype::i32)) {
                const std::vector<std::int64_t> ints = x.typed->to_ints();
                array a = xt::zeros<float>(std::vector<std::size_t>(x.typed->dims().begin(), x.typed->dims().end()));
                for (std::size_t k = 0; k < ints.size(); ++k) {
                    if (ints[k] > (1 << 24) || ints[k] < -(1 << 24))
                        throw exec_error("sgmatch::exec::executor: node '" + std::string(g_.name(s.n)) + "': input " +
                                         std::to_string(i) + " holds " + std::to_string(ints[k]) + ", beyond what its fp32 kernel reads exactly");
                    a.data()[k] = static_cast<float>(ints[k]);
                }
                params.push_back(std::move(a));
                in.push_back(&params.back());
            } else {
                in.push_back(&vs.plain_of(v, st));
            }
        }
        try {
            return s.ref(in);
        } catch (const ops::op_error& e) {  // a shape rule refusing the inputs (it names the node)
            std::string_view m = e.what();
            if (m.substr(0, 9) == "sgmatch: ") m.remove_prefix(9);
            throw exec_error("sgmatch::exec::executor: " + std::string(m));
        } catch (const exec_error&) {
            throw;
        } catch (const std::logic_error& e) {  // reference::kernel_error, xtensor's checks: inputs the kernel
            throw kernel_failed(s.n, e);       // cannot take, known only now
        } catch (const std::runtime_error& e) {
            throw kernel_failed(s.n, e);
        }
    }
    exec_error kernel_failed(node_id n, const std::exception& e) const {
        return exec_error("sgmatch::exec::executor: node '" + std::string(g_.name(n)) + "' (" + std::string(g_.op_name(n)) +
                          "): " + e.what());
    }

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
