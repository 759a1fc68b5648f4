// sgmatch/exec/impl/run_node.ipp - how the executor runs one node: its kernel (a fused node's,
// a single oneDNN primitive, the reference or the typed kernel), the fallback when a kernel
// rejects its input, the memory budget before it allocates and the check of what it computed
// against the declared type. executor_impl's members declared in impl/executor.ipp, defined
// here; executor.ipp includes this file.
#pragma once

#include "sgmatch/exec/impl/executor.ipp"

SGMATCH_BEGIN_NAMESPACE
namespace exec {
namespace detail {

inline void executor_impl::check_value(node_id n, std::uint32_t port, const slot& s) const {
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

inline ops::shape_inputs executor_impl::shapes_now(node_id n, const store& vs) const {
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

inline std::uint64_t executor_impl::output_bytes(const step& s, const store& vs) const {
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

inline std::optional<std::int64_t> executor_impl::element_count_now(value_ref<node_id> v, const store& vs) const {
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

inline std::vector<ops::dims> executor_impl::fused_output_shapes(const onednn::fused_node& f, node_id n, const store& vs) const {
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

inline bool executor_impl::last_read_of_own(value_ref<node_id> v, const slot& x, const use_counts& uses) const {
    return uses[layout_.base[v.node.value] + v.port] == 1 && !g_.is_graph_output(v.node, v.port) && x.owned && !x.t.empty();
}

inline void executor_impl::run_op(const step& s, store& vs, const use_counts& uses, run_stats& st) const {
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

inline void executor_impl::run_fused(const step& s, store& vs, const use_counts& uses, run_stats& st, const placement& where) const {
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

inline array executor_impl::fall_back(const step& s, store& vs, run_stats& st, const char* why) const {
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

inline bool executor_impl::scalars_only(const step& s, const store& vs) const {
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

inline bool executor_impl::reads_foreign(const step& s, const store& vs) const {
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

inline void executor_impl::run_typed(const step& s, store& vs, run_stats& st) const {
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
    const std::size_t onednn_runs = onednn_typed_runs(), reorders = onednn_typed_reorders();
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
    st.typed_reorders += onednn_typed_reorders() - reorders;
}

inline void executor_impl::check_sequences(node_id n, const ops::op_schema& schema, const values& in) const {
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

inline array executor_impl::run_reference(const step& s, store& vs, run_stats& st) const {
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

inline exec_error executor_impl::kernel_failed(node_id n, const std::exception& e) const {
    return exec_error("sgmatch::exec::executor: node '" + std::string(g_.name(n)) + "' (" + std::string(g_.op_name(n)) +
                      "): " + e.what());
}

}  // namespace detail
}  // namespace exec
SGMATCH_END_NAMESPACE
