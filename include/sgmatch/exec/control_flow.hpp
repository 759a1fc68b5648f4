// sgmatch/exec/control_flow.hpp - the kernels of If, Loop, Scan and SequenceMap
// (ops/control.hpp): each body runs on an executor of its own, made when the node's executor is
// built (so a body's unsupported op is refused then, naming it), in the same mode.
//
// A body reads its own inputs (Loop's iteration number, condition and carried values, Scan's
// states and slices, ...) and then the enclosing values the node takes as its last inputs
// (graph_body); what it computes is checked against what the op needs (one bool for a
// condition, equal lengths for scanned inputs, ...) and against the body's declared types by its
// own executor. Values carried from one iteration to the next are owned copies.
//
// Loop runs while the iteration number is below M and the condition holds (a model whose loop
// never ends does not end here either, ONNX's meaning, unless exec::limits::max_loop_iterations
// bounds it: past the bound the node is refused). Scan outputs and Loop's scan outputs are
// the iterations' values joined along a new axis; they must agree in type and shape.
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "sgmatch/detail/config.hpp"
#include "sgmatch/exec/error.hpp"
#include "sgmatch/exec/kernels/typed_support.hpp"
#include "sgmatch/exec/limits.hpp"
#include "sgmatch/exec/run_stats.hpp"
#include "sgmatch/exec/value.hpp"
#include "sgmatch/graph/graph.hpp"
#include "sgmatch/ops/attrs.hpp"
#include "sgmatch/ops/control.hpp"
#include "sgmatch/ops/shape_rules.hpp"

SGMATCH_BEGIN_NAMESPACE
namespace exec {
namespace control {

/// One body and its executor (Exec: exec::executor, complete where this is instantiated).
template <class Exec>
struct body_run {
    std::shared_ptr<const graph> g;
    std::shared_ptr<const Exec> exec;
    std::vector<std::string> inputs;  // the body's graph inputs' names, in order
    std::size_t own = 0;              // how many of them are the body's own
    std::size_t outputs = 0;

    /// Runs the body on its own inputs and the node's enclosing values.
    values operator()(const ops::op_attrs& a, const values& own_values, const values& captured) const {
        if (own_values.size() != own)
            typed::fail(a, "the body reads " + std::to_string(own) + " inputs of its own; it was given " + std::to_string(own_values.size()));
        std::map<std::string, value> in;
        for (std::size_t i = 0; i < own; ++i) in.emplace(inputs[i], own_values[i]);
        for (std::size_t k = 0; k < captured.size() && own + k < inputs.size(); ++k) in.emplace(inputs[own + k], captured[k]);
        return exec->run(in);
    }
};

/// The body in attribute `key`, on an executor of its own; the node's last `captured` inputs
/// are the enclosing values it reads.
template <class Exec>
body_run<Exec> make_body(const ops::op_attrs& a, std::string_view key, mode m, std::size_t node_inputs, const std::shared_ptr<limits>& l) {
    const graph_body* b = a.body(key);
    if (b == nullptr || !b->g) typed::refuse(a, "attribute " + std::string(key) + " holds no graph");
    body_run<Exec> r;
    r.g = b->g;
    r.own = b->own_inputs;
    for (node_id n : b->g->nodes())
        if (b->g->kind(n) == node_kind::input) r.inputs.emplace_back(b->g->name(n));
    if (r.inputs.size() < r.own)
        typed::refuse(a, std::string(key) + " has " + std::to_string(r.inputs.size()) + " graph inputs, fewer than its own " +
                             std::to_string(r.own));
    if (r.inputs.size() - r.own > node_inputs)
        typed::refuse(a, std::string(key) + " reads " + std::to_string(r.inputs.size() - r.own) + " enclosing values; the node has " +
                             std::to_string(node_inputs) + " inputs");
    r.outputs = b->g->graph_output_count();
    try {
        r.exec = std::make_shared<const Exec>(*b->g, m, l);
    } catch (const exec_error& e) {
        typed::refuse(a, "its " + std::string(key) + ": " + e.what());
    }
    return r;
}

namespace detail {

/// One bool as a condition (ONNX's type B: a condition of another element type is refused).
inline bool condition(const ops::op_attrs& a, const value& c, const char* what) {
    if (c.is_sequence() || c.size() != 1)
        typed::fail(a, std::string(what) + " holds " + (c.is_sequence() ? std::string("a sequence") : std::to_string(c.size()) + " values") +
                           " (one bool expected)");
    if (c.type() != dtype::boolean)
        typed::fail(a, std::string(what) + " is " + std::string(name_of(c.type())) + " (a condition is one bool)");
    return c.dense_value().as_constant().at(0) != 0;
}

/// The iterations' values `xs` joined along a new axis `axis` (0 to their rank); an empty list
/// as a tensor of dims [0] of type `t`.
inline value stack(const ops::op_attrs& a, const values& xs, std::size_t axis, dtype t, const char* what) {
    if (xs.empty()) return value::zeros(t == dtype::unknown ? dtype::f32 : t, {0});
    const value& first = xs.front();
    for (const value& x : xs) {
        if (x.is_sequence()) typed::fail(a, std::string(what) + ": a sequence cannot be stacked");
        if (x.type() != first.type() || x.dims() != first.dims())
            typed::fail(a, std::string(what) + ": the iterations computed " + std::string(name_of(first.type())) + " " + to_string(first.dims()) +
                               " and " + std::string(name_of(x.type())) + " " + to_string(x.dims()) + ", which do not stack");
    }
    if (axis > first.rank()) typed::fail(a, std::string(what) + ": axis " + std::to_string(axis) + " is beyond rank " + std::to_string(first.rank() + 1));
    shape one = first.dims();
    one.insert(one.begin() + static_cast<std::ptrdiff_t>(axis), 1);
    values parts;
    parts.reserve(xs.size());
    for (const value& x : xs) parts.push_back(x.reshaped(one));
    shape out = one;
    out[axis] = static_cast<std::int64_t>(xs.size());
    return typed::join(parts, axis, out);
}

/// The slices of `x` along `axis`, that axis dropped.
inline values unstack(const value& x, std::size_t axis) {
    const shape d = x.dims();
    shape piece = d;
    piece[axis] = 1;
    values parts = typed::cut(x, axis, std::vector<ops::dims>(static_cast<std::size_t>(d[axis]), ops::dims(piece.begin(), piece.end())));
    shape dropped = d;
    dropped.erase(dropped.begin() + static_cast<std::ptrdiff_t>(axis));
    for (value& p : parts) p = p.reshaped(dropped);
    return parts;
}

inline value owned(const value& v) { return v.owned() ? v : v.clone(); }

/// An axis in [-rank, rank) as one from the front (the shape rules' reading, refused as the
/// executor's error).
inline std::size_t axis_of(const ops::op_attrs& a, std::int64_t axis, std::size_t rank, const char* what) {
    return typed::as_executor_error([&] { return ops::rules::axis(a, axis, rank, what); });
}

}  // namespace detail

/// If: then_branch's outputs when the condition holds, else else_branch's.
template <class Exec>
typed_fn make_if(const ops::op_attrs& a0, std::size_t node_inputs, std::size_t node_outputs, mode m, const std::shared_ptr<limits>& l) {
    const auto then_b = std::make_shared<const body_run<Exec>>(make_body<Exec>(a0, "then_branch", m, node_inputs - 1, l));
    const auto else_b = std::make_shared<const body_run<Exec>>(make_body<Exec>(a0, "else_branch", m, node_inputs - 1, l));
    for (const auto* b : {then_b.get(), else_b.get()}) {
        if (b->own != 0) typed::refuse(a0, "a branch reads " + std::to_string(b->own) + " inputs of its own (none expected)");
        if (b->outputs != node_outputs)
            typed::refuse(a0, "a branch computes " + std::to_string(b->outputs) + " outputs; the node has " + std::to_string(node_outputs));
    }
    return [a = a0, then_b, else_b](const values& xs) {
        const bool c = detail::condition(a, typed::in(xs, 0, a), "cond");
        return (c ? *then_b : *else_b)(a, {}, values(xs.begin() + 1, xs.end()));
    };
}

/// Loop: the body while the iteration number is below M and the condition holds.
template <class Exec>
typed_fn make_loop(const ops::op_attrs& a0, std::size_t node_inputs, std::size_t node_outputs, std::vector<dtype> declared, mode m,
                   const std::shared_ptr<limits>& l) {
    const auto body = std::make_shared<const body_run<Exec>>(make_body<Exec>(a0, "body", m, node_inputs - 2, l));
    if (body->own < 2) typed::refuse(a0, "the body reads " + std::to_string(body->own) + " inputs of its own (the iteration number, the condition, the carried values)");
    const std::size_t carried = body->own - 2;
    const std::size_t captured = body->inputs.size() - body->own;
    if (node_inputs != 2 + carried + captured)
        typed::refuse(a0, std::to_string(node_inputs - 2 - captured) + " carried values; the body carries " + std::to_string(carried));
    if (body->outputs != 1 + node_outputs || node_outputs < carried)
        typed::refuse(a0, "the body computes " + std::to_string(body->outputs) + " outputs; the node's " + std::to_string(node_outputs) +
                              " outputs and " + std::to_string(carried) + " carried values need the condition, the carried values and the scan outputs");
    const std::size_t scans = node_outputs - carried;
    if (body->g->graph_output_count() > 0) {
        const auto c = body->g->graph_output(0);
        if (const auto t = body->g->value_type(c.node, c.port); t && t->type != dtype::unknown && t->type != dtype::boolean)
            typed::refuse(a0, "the body's condition (its first output) is declared " + std::string(name_of(t->type)) + " (a condition is one bool)");
    }
    const std::shared_ptr<const limits> bound = l;
    return [a = a0, body, carried, scans, declared, bound](const values& xs) {
        const value& m_in = typed::in(xs, 0, a);
        if (m_in.is_sequence() || m_in.size() != 1) typed::fail(a, "M holds " + std::to_string(m_in.size()) + " values (one integer expected)");
        const std::int64_t trips = m_in.dense_value().to_ints().at(0);
        bool go = detail::condition(a, typed::in(xs, 1, a), "cond");
        values state;
        for (std::size_t k = 0; k < carried; ++k) state.push_back(detail::owned(typed::in(xs, 2 + k, a)));
        const values enclosing(xs.begin() + static_cast<std::ptrdiff_t>(2 + carried), xs.end());
        std::vector<values> scanned(scans);
        const std::int64_t most = bound ? bound->max_loop_iterations : 0;
        for (std::int64_t i = 0; i < trips && go; ++i) {
            if (most > 0 && i >= most)
                typed::fail(a, "ran " + std::to_string(most) + " iterations, the bound (exec::limits::max_loop_iterations), and its condition still holds");
            values own{value::of<std::int64_t>({}, {i}), value::of<bool>({}, {go})};
            own.insert(own.end(), state.begin(), state.end());
            values out = (*body)(a, own, enclosing);
            go = detail::condition(a, out.at(0), "the body's condition");
            for (std::size_t k = 0; k < carried; ++k) state[k] = detail::owned(out.at(1 + k));
            for (std::size_t k = 0; k < scans; ++k) scanned[k].push_back(detail::owned(out.at(1 + carried + k)));
        }
        values result = std::move(state);
        for (std::size_t k = 0; k < scans; ++k)
            result.push_back(detail::stack(a, scanned[k], 0, carried + k < declared.size() ? declared[carried + k] : dtype::unknown,
                                           "a scan output"));
        return result;
    };
}

/// Scan (opset 9 and later): the body once per slice of the scanned inputs.
template <class Exec>
typed_fn make_scan(const ops::op_attrs& a0, std::size_t node_inputs, std::size_t node_outputs, mode m, const std::shared_ptr<limits>& l) {
    const auto body = std::make_shared<const body_run<Exec>>(make_body<Exec>(a0, "body", m, node_inputs, l));
    const auto scan_in = static_cast<std::size_t>(a0.i("num_scan_inputs"));
    const std::size_t captured = body->inputs.size() - body->own;
    if (scan_in > body->own) typed::refuse(a0, "num_scan_inputs = " + std::to_string(scan_in) + " exceeds the body's " + std::to_string(body->own) + " inputs");
    const std::size_t states = body->own - scan_in;
    if (node_inputs != body->own + captured)
        typed::refuse(a0, std::to_string(node_inputs - captured) + " inputs; the body reads " + std::to_string(body->own));
    if (body->outputs != node_outputs || node_outputs < states)
        typed::refuse(a0, "the body computes " + std::to_string(body->outputs) + " outputs; the node has " + std::to_string(node_outputs) +
                              " (" + std::to_string(states) + " states, then the scan outputs)");
    const std::size_t scan_out = node_outputs - states;
    auto list = [&](const char* key, std::size_t n) {
        ops::dims v = a0.ints(key);
        if (v.empty()) v.assign(n, 0);
        if (v.size() != n) typed::refuse(a0, std::string(key) + " has " + std::to_string(v.size()) + " values for " + std::to_string(n));
        return v;
    };
    const ops::dims in_axes = list("scan_input_axes", scan_in), in_dirs = list("scan_input_directions", scan_in);
    const ops::dims out_axes = list("scan_output_axes", scan_out), out_dirs = list("scan_output_directions", scan_out);
    return [a = a0, body, states, scan_in, scan_out, in_axes, in_dirs, out_axes, out_dirs](const values& xs) {
        values state;
        for (std::size_t k = 0; k < states; ++k) state.push_back(detail::owned(typed::in(xs, k, a)));
        std::vector<values> slices(scan_in);
        std::int64_t length = -1;
        for (std::size_t k = 0; k < scan_in; ++k) {
            const value& x = typed::in(xs, states + k, a);
            if (x.is_sequence()) typed::fail(a, "scan input " + std::to_string(k) + " is a sequence");
            const std::size_t axis = detail::axis_of(a, in_axes[k], x.rank(), "scan_input_axes");
            const std::int64_t len = x.dims()[axis];
            if (length >= 0 && len != length)
                typed::fail(a, "scan input " + std::to_string(k) + " has " + std::to_string(len) + " slices; the first one has " + std::to_string(length));
            length = len;
            slices[k] = detail::unstack(x, axis);
            if (in_dirs[k] == 1) std::reverse(slices[k].begin(), slices[k].end());
        }
        const values enclosing(xs.begin() + static_cast<std::ptrdiff_t>(states + scan_in), xs.end());
        std::vector<values> outs(scan_out);
        for (std::int64_t t = 0; t < std::max<std::int64_t>(length, 0); ++t) {
            values own = state;
            for (std::size_t k = 0; k < scan_in; ++k) own.push_back(slices[k][static_cast<std::size_t>(t)]);
            values out = (*body)(a, own, enclosing);
            for (std::size_t k = 0; k < states; ++k) state[k] = detail::owned(out.at(k));
            for (std::size_t k = 0; k < scan_out; ++k) outs[k].push_back(detail::owned(out.at(states + k)));
        }
        values result = std::move(state);
        for (std::size_t k = 0; k < scan_out; ++k) {
            if (out_dirs[k] == 1) std::reverse(outs[k].begin(), outs[k].end());
            const std::size_t rank = outs[k].empty() ? 0 : outs[k].front().rank();
            const std::size_t axis = detail::axis_of(a, out_axes[k], rank + 1, "scan_output_axes");
            result.push_back(detail::stack(a, outs[k], axis, dtype::unknown, "a scan output"));
        }
        return result;
    };
}

/// SequenceMap: the body on each tensor of the input sequence; each output a sequence.
template <class Exec>
typed_fn make_sequence_map(const ops::op_attrs& a0, std::size_t node_inputs, std::size_t node_outputs, std::vector<dtype> declared, mode m,
                           const std::shared_ptr<limits>& l) {
    const auto body = std::make_shared<const body_run<Exec>>(make_body<Exec>(a0, "body", m, node_inputs, l));
    const std::size_t captured = body->inputs.size() - body->own;
    if (body->own < 1 || node_inputs != body->own + captured)
        typed::refuse(a0, std::to_string(node_inputs - captured) + " inputs; the body reads " + std::to_string(body->own));
    if (body->outputs != node_outputs)
        typed::refuse(a0, "the body computes " + std::to_string(body->outputs) + " outputs; the node has " + std::to_string(node_outputs));
    const std::size_t own = body->own;
    return [a = a0, body, own, node_outputs, declared](const values& xs) {
        const std::size_t length = typed::in(xs, 0, a).items().size();
        for (std::size_t k = 1; k < own; ++k)
            if (xs.at(k).is_sequence() && xs[k].items().size() != length)
                typed::fail(a, "input " + std::to_string(k) + " holds " + std::to_string(xs[k].items().size()) + " tensors; input 0 holds " +
                                   std::to_string(length));
        const values enclosing(xs.begin() + static_cast<std::ptrdiff_t>(own), xs.end());
        std::vector<values> outs(node_outputs);
        for (std::size_t i = 0; i < length; ++i) {
            values in;
            for (std::size_t k = 0; k < own; ++k) in.push_back(xs[k].is_sequence() ? xs[k].items()[i] : xs[k]);
            values out = (*body)(a, in, enclosing);
            for (std::size_t k = 0; k < node_outputs; ++k) {
                if (out.at(k).is_sequence()) typed::fail(a, "the body's output " + std::to_string(k) + " is a sequence (a tensor expected)");
                outs[k].push_back(std::move(out[k]));
            }
        }
        values result;
        for (std::size_t k = 0; k < node_outputs; ++k) {
            const dtype t = !outs[k].empty() ? outs[k].front().type() : k < declared.size() && declared[k] != dtype::unknown ? declared[k] : dtype::f32;
            try {
                result.push_back(value::sequence(t, std::move(outs[k])));
            } catch (const value_error& e) {
                typed::fail(a, "output " + std::to_string(k) + ": " + e.what());
            }
        }
        return result;
    };
}

/// The kernel of control-flow node n of g (its attributes a), its bodies on executors of type
/// Exec in mode m.
template <class Exec>
typed_fn make(const ops::op_attrs& a, const graph& g, node_id n, mode m, const std::shared_ptr<limits>& l) {
    const std::size_t ins = g.input_count(n), outs = g.output_count(n);
    std::vector<dtype> declared;
    for (std::uint32_t p = 0; p < outs; ++p) declared.push_back(g.value_type(n, p).value_or(tensor_type{}).type);
    const std::string_view op = a.schema().name();
    if (op == "If") return make_if<Exec>(a, ins, outs, m, l);
    if (op == "Loop") return make_loop<Exec>(a, ins, outs, std::move(declared), m, l);
    if (op == "Scan") return make_scan<Exec>(a, ins, outs, m, l);
    if (op == "SequenceMap") return make_sequence_map<Exec>(a, ins, outs, std::move(declared), m, l);
    typed::refuse(a, "no control-flow kernel");
}

}  // namespace control
}  // namespace exec
SGMATCH_END_NAMESPACE
