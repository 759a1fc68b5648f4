// sgmatch/onnx/quantize.hpp - static post-training quantization of an f32 model into the QDQ
// form, from calibration inputs: the model quantization tools write, which sgmatch (its QDQ
// rewrite, passes/qdq.hpp) and ONNX Runtime both run in int8.
//
//   sgmatch::onnx::model m = sgmatch::onnx::load("resnet50.onnx");
//   auto q = sgmatch::quantize::quantize_static(m, calibration_inputs);   // {"x": value} each
//   sgmatch::onnx::save(q.model, "resnet50.int8.onnx");
//
// What it writes:
// - each Conv and MatMul whose weights are an f32 constant (a conv's bias too) is quantized:
//   its data input goes through QuantizeLinear -> DequantizeLinear, its weights become s8
//   symmetric constants, one scale per output channel (a matmul's per column), behind a
//   DequantizeLinear; a conv's bias becomes int32 in units of x_scale * w_scale[m] (zero point
//   0), behind its DequantizeLinear;
// - its output, after a Relu or a Clip of constant bounds that is its only reader (folded into
//   the range: [0, max] makes the zero point 0, and the activation is the saturation), goes
//   through QuantizeLinear -> DequantizeLinear, which every reader of it reads;
// - activations are u8, asymmetric, one scale and zero point per tensor, from the range the
//   calibration saw (MinMax: the least and greatest value; Percentile: the values at
//   percentile and 100 - percentile of the calibration's values), widened to hold 0;
// - a node whose output (or its Relu / Clip's) is a graph output stays f32, and with
//   keep_last_float so does the last quantizable node in the graph's order (a model's final
//   classifier, where int8 costs most accuracy for least time).
// The calibration runs the f32 graph once per input set (oneDNN mode, every calibrated value
// an extra output). The result's opset is at least 13 (per-axis DequantizeLinear).
#pragma once

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <limits>
#include <map>
#include <optional>
#include <string>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include "sgmatch/detail/config.hpp"
#include "sgmatch/exec/executor.hpp"
#include "sgmatch/exec/value.hpp"
#include "sgmatch/graph/graph.hpp"
#include "sgmatch/onnx/model.hpp"
#include "sgmatch/ops/fill_shapes.hpp"

SGMATCH_BEGIN_NAMESPACE
namespace quantize {

enum class calibration_method { minmax, percentile };

struct options {
    calibration_method method = calibration_method::minmax;
    double percentile = 99.999;   // with method percentile: the range [100 - p, p] of the values
    bool keep_last_float = false;  // the last quantizable node stays f32
};

struct report {
    std::size_t convs = 0, matmuls = 0;  // nodes quantized
    std::size_t activations = 0;         // Relu / Clip folded into their producer's output range
    std::size_t calibrated = 0;          // values whose range the calibration measured
    std::vector<std::string> kept_float; // quantizable-looking nodes left f32, with the reason
};

struct result {
    onnx::model model;
    report what;
};

class quantize_error : public std::runtime_error {
public:
    using std::runtime_error::runtime_error;
};

namespace detail {

using V = value_ref<node_id>;

struct value_hash {
    std::size_t operator()(V v) const { return std::hash<std::uint64_t>()((std::uint64_t{v.node.value} << 16) ^ v.port); }
};

// One quantized node: its weights' input, bias, and the value its output range is read from.
struct target {
    node_id node{};
    bool conv = true;
    V data{}, out{};  // data: the activation it reads; out: its output, or its Relu / Clip's
    bool activation = false;
};

inline std::optional<const_tensor_view> f32_constant(const graph& g, V v, std::size_t rank_lo, std::size_t rank_hi) {
    if (g.kind(v.node) != node_kind::constant) return std::nullopt;
    const auto c = g.constant(v.node);
    if (!c || !c->data || c->type != dtype::f32 || c->rank < rank_lo || c->rank > rank_hi) return std::nullopt;
    return c;
}

// The nodes to quantize, in the graph's order, and why others that look quantizable are not.
inline std::vector<target> targets_of(const graph& g, const options& o, report& r) {
    std::vector<target> out;
    for (node_id n : g.nodes()) {
        if (g.kind(n) != node_kind::op) continue;
        const std::string_view op = g.op_name(n);
        if (op != "Conv" && op != "MatMul") continue;
        const auto in = g.inputs(n);
        const std::string who = std::string(op) + " '" + std::string(g.name(n)) + "'";
        target t;
        t.node = n;
        t.conv = op == "Conv";
        if (in.size() < 2 || !f32_constant(g, in[1], t.conv ? 3 : 2, t.conv ? 5 : 2)) {
            r.kept_float.push_back(who + ": its weights are not an f32 constant" + (t.conv ? "" : " of rank 2"));
            continue;
        }
        if (t.conv && in.size() > 2 && !f32_constant(g, in[2], 1, 1)) {
            r.kept_float.push_back(who + ": its bias is not an f32 constant");
            continue;
        }
        if (g.kind(in[0].node) == node_kind::constant) continue;  // nothing to compute at run time
        t.data = in[0];
        t.out = V{n, 0};
        // A Relu, or a Clip of constant bounds, that is the only reader: folded into the range.
        const auto users = g.users(n);
        if (users.size() == 1 && !g.is_graph_output(n, 0)) {
            const node_id u = users[0].user;
            bool folds = g.op_name(u) == "Relu";
            if (g.op_name(u) == "Clip") {
                folds = true;
                const auto cin = g.inputs(u);
                for (std::size_t i = 1; i < cin.size(); ++i) {
                    const auto c = g.constant(cin[i].node);
                    folds = folds && c && c->scalar();
                }
            }
            if (folds) {
                t.out = V{u, 0};
                t.activation = true;
            }
        }
        if (g.is_graph_output(t.out.node, t.out.port)) {
            r.kept_float.push_back(who + ": its output is a graph output (kept f32, as the model gives it)");
            continue;
        }
        out.push_back(t);
    }
    if (o.keep_last_float && !out.empty()) {
        r.kept_float.push_back(std::string(g.op_name(out.back().node)) + " '" + std::string(g.name(out.back().node)) +
                               "': the last quantizable node, kept f32 (keep_last_float)");
        out.pop_back();
    }
    return out;
}

// The range of each calibrated value over every calibration input.
struct range {
    float lo = std::numeric_limits<float>::infinity(), hi = -std::numeric_limits<float>::infinity();
    std::vector<float> samples;  // percentile: a bounded sample of the values
};

inline std::unordered_map<V, range, value_hash> calibrate(const graph& f32, const std::vector<V>& values,
                                                          const std::vector<std::map<std::string, exec::value>>& inputs,
                                                          const options& o) {
    if (inputs.empty()) throw quantize_error("sgmatch::quantize: no calibration inputs");
    graph g = f32;
    std::vector<V> read;  // the values, in the order of g's outputs after the model's own
    for (const V v : values) {
        if (!g.is_graph_output(v.node, v.port)) g.mark_output(v);
        read.push_back(v);
    }
    // Output i of g for each calibrated value: the first graph output that is it.
    std::vector<std::size_t> at;
    for (const V v : read)
        for (std::size_t i = 0; i < g.graph_output_count(); ++i)
            if (g.graph_output(i) == v) {
                at.push_back(i);
                break;
            }
    std::unordered_map<V, range, value_hash> ranges;
    const exec::executor run(g, exec::mode::onednn);
    constexpr std::size_t max_samples = std::size_t{1} << 20;  // per value, over all inputs
    for (const auto& in : inputs) {
        const std::vector<exec::value> outs = run.run(in);
        for (std::size_t k = 0; k < read.size(); ++k) {
            const exec::value y = outs.at(at[k]).dense_value();
            if (y.type() != dtype::f32) continue;
            range& r = ranges[read[k]];
            const float* p = y.as<float>();
            const std::size_t n = static_cast<std::size_t>(y.size());
            for (std::size_t i = 0; i < n; ++i) {
                if (!std::isfinite(p[i])) continue;
                r.lo = std::min(r.lo, p[i]);
                r.hi = std::max(r.hi, p[i]);
            }
            if (o.method == calibration_method::percentile) {
                const std::size_t per_input = std::max<std::size_t>(1, max_samples / inputs.size());
                const std::size_t step = std::max<std::size_t>(1, n / per_input);
                for (std::size_t i = 0; i < n; i += step)
                    if (std::isfinite(p[i])) r.samples.push_back(p[i]);
            }
        }
    }
    if (o.method == calibration_method::percentile) {
        for (auto& entry : ranges) {  // not a structured binding: C++17 lambdas cannot capture one
            range& r = entry.second;
            if (r.samples.empty()) continue;
            auto nth = [&](double q) {
                const std::size_t k = std::min(r.samples.size() - 1, static_cast<std::size_t>(q / 100.0 * static_cast<double>(r.samples.size() - 1) + 0.5));
                std::nth_element(r.samples.begin(), r.samples.begin() + static_cast<std::ptrdiff_t>(k), r.samples.end());
                return r.samples[k];
            };
            r.hi = nth(o.percentile);
            r.lo = nth(100.0 - o.percentile);
            r.samples.clear();
            r.samples.shrink_to_fit();
        }
    }
    return ranges;
}

// u8 asymmetric parameters for [lo, hi] widened to hold 0.
inline std::pair<float, std::uint8_t> u8_params(range r) {
    float lo = std::min(r.lo, 0.0f), hi = std::max(r.hi, 0.0f);
    if (!(hi > lo)) hi = lo + 1.0f;  // a value that never moved: any scale is exact
    const float scale = (hi - lo) / 255.0f;
    const float z = std::nearbyint(-lo / scale);
    return {scale, static_cast<std::uint8_t>(std::clamp(z, 0.0f, 255.0f))};
}

template <class T>
std::vector<unsigned char> bytes_of(const std::vector<T>& v) {
    std::vector<unsigned char> b(v.size() * sizeof(T));
    if (!b.empty()) std::memcpy(b.data(), v.data(), b.size());
    return b;
}

class writer {
public:
    writer(const graph& g, const std::vector<target>& ts, const std::unordered_map<V, range, value_hash>& ranges, report& r)
        : g_(g), ranges_(ranges), r_(r) {
        for (const auto& t : ts) targets_[t.node.value] = &t;
        for (const auto& t : ts) quantized_.insert(t.data), quantized_.insert(t.out);
        for (node_id n : g_.nodes()) g_names_.insert(std::string(g_.name(n)));  // new names are fresh
    }

    graph run() {
        for (node_id n : g_.nodes()) {
            switch (g_.kind(n)) {
                case node_kind::input: {
                    const auto t = g_.value_type(n, 0);
                    map(V{n, 0}, V{out_.add_input(g_.name(n), t ? *t : tensor_type{}), 0});
                    break;
                }
                case node_kind::constant: map(V{n, 0}, V{copy_constant(n), 0}); break;
                default: copy_op(n); break;
            }
        }
        for (std::size_t i = 0; i < g_.graph_output_count(); ++i) out_.mark_output(mapped(g_.graph_output(i)));
        // The f32 weights and biases the quantized ones replaced: read by nothing now.
        const std::vector<node_id> order(out_.nodes().begin(), out_.nodes().end());
        for (node_id n : order)
            if (out_.kind(n) == node_kind::constant && out_.user_count(n) == 0 && !out_.has_graph_output(n)) out_.erase(n);
        return std::move(out_);
    }

private:
    node_id copy_constant(node_id n) {
        const auto c = g_.constant(n);
        const std::vector<std::int64_t> dims(c->dims, c->dims + c->rank);
        if (!c->data) return out_.add_constant(g_.name(n), dims, c->type, std::vector<unsigned char>{});
        const std::size_t bytes = static_cast<std::size_t>(c->element_count()) * size_of(c->type);
        if (auto owner = g_.constant_owner(n)) return out_.add_constant(g_.name(n), dims, c->type, std::move(owner), c->data, bytes);
        std::vector<unsigned char> b(bytes);
        if (bytes != 0) std::memcpy(b.data(), c->data, bytes);
        return out_.add_constant(g_.name(n), dims, c->type, std::move(b));
    }

    void map(V from, V to) { values_[from] = to; }
    V mapped(V v) const {
        const auto it = values_.find(v);
        if (it == values_.end()) throw quantize_error("sgmatch::quantize: value of '" + std::string(g_.name(v.node)) + "' read before it is made");
        return it->second;
    }

    std::string fresh(const std::string& base) {
        std::string name = base;
        for (int k = 1; g_names_.count(name) != 0; ++k) name = base + "_" + std::to_string(k);
        g_names_.insert(name);
        return name;
    }

    // What a reader of v reads: DQ(Q(v)) for a quantized value (made at its first reader).
    V read(V v) {
        if (quantized_.count(v) == 0) return mapped(v);
        const auto known = dq_.find(v);
        if (known != dq_.end()) return known->second;
        const auto rg = ranges_.find(v);
        if (rg == ranges_.end()) return mapped(v);  // never calibrated (not f32): read as it is
        const auto [scale, zero] = u8_params(rg->second);
        const std::string base = std::string(g_.name(v.node)) + (v.port ? "_" + std::to_string(v.port) : "");
        const node_id s = out_.add_constant(fresh(base + "_scale"), {}, dtype::f32, bytes_of(std::vector<float>{scale}));
        const node_id z = out_.add_constant(fresh(base + "_zero_point"), {}, dtype::u8, std::vector<unsigned char>{zero});
        const node_id q = out_.add_op("QuantizeLinear", fresh(base + "_quantized"), {mapped(v), s, z});
        const node_id d = out_.add_op("DequantizeLinear", fresh(base + "_dequantized"), {q, s, z});
        if (auto t = g_.value_type(v.node, v.port)) {  // v's dims (or unknown rank), another element type
            t->type = dtype::u8;
            out_.set_type(V{q, 0}, *t);
            t->type = dtype::f32;
            out_.set_type(V{d, 0}, *t);
        }
        scales_[v] = scale;
        dq_[v] = V{d, 0};
        return V{d, 0};
    }

    void copy_op(node_id n) {
        const auto in = g_.inputs(n);
        std::vector<input_ref> ins;
        const auto t = targets_.find(n.value);
        if (t != targets_.end() && ranges_.count(t->second->data) != 0) {
            const target& k = *t->second;
            const V x = read(k.data);
            const float x_scale = scales_.at(k.data);
            ins.push_back(x);
            std::vector<float> w_scales;
            ins.push_back(weights(n, in[1], k.conv, w_scales));
            if (k.conv && in.size() > 2) ins.push_back(bias(n, in[2], x_scale, w_scales));
            ++(k.conv ? r_.convs : r_.matmuls);
            r_.activations += k.activation ? 1 : 0;
        } else {
            for (const V v : in) ins.push_back(read(v));
        }
        const node_id m = out_.add_op(g_.op_name(n), g_.name(n), ins, {}, g_.output_count(n));
        g_.for_each_attr(n, [&](std::string_view key, const attribute& a) { out_.set_attr(m, key, a); });
        for (std::uint32_t p = 0; p < g_.output_count(n); ++p) {
            if (const auto ty = g_.value_type(n, p)) out_.set_type(V{m, p}, *ty);
            map(V{n, p}, V{m, p});
        }
    }

    // s8 symmetric weights, one scale per output channel (a conv's dim 0, a matmul's last dim),
    // behind a DequantizeLinear.
    V weights(node_id n, V w, bool conv, std::vector<float>& scales) {
        const auto c = g_.constant(w.node);
        const std::vector<std::int64_t> dims(c->dims, c->dims + c->rank);
        const float* p = static_cast<const float*>(c->data);
        const std::size_t count = static_cast<std::size_t>(c->element_count());
        const std::size_t channels = static_cast<std::size_t>(conv ? dims[0] : dims.back());
        auto channel = [&](std::size_t i) { return conv ? i / (count / channels) : i % channels; };
        scales.assign(channels, 0.0f);
        for (std::size_t i = 0; i < count; ++i) scales[channel(i)] = std::max(scales[channel(i)], std::abs(p[i]));
        for (auto& s : scales) s = s > 0 ? s / 127.0f : 1.0f;
        std::vector<std::int8_t> q(count);
        for (std::size_t i = 0; i < count; ++i)
            q[i] = static_cast<std::int8_t>(std::clamp(std::nearbyint(p[i] / scales[channel(i)]), -127.0f, 127.0f));
        const std::string base(g_.name(n));
        const node_id wq = out_.add_constant(fresh(base + "_weights_quantized"), dims, dtype::i8, bytes_of(q));
        const node_id ws = out_.add_constant(fresh(base + "_weights_scale"), {static_cast<std::int64_t>(channels)}, dtype::f32, bytes_of(scales));
        const node_id wz = out_.add_constant(fresh(base + "_weights_zero_point"), {static_cast<std::int64_t>(channels)}, dtype::i8,
                                             std::vector<unsigned char>(channels, 0));
        const node_id d = out_.add_op("DequantizeLinear", fresh(base + "_weights"), {wq, ws, wz},
                                      {{"axis", std::int64_t{conv ? 0 : static_cast<std::int64_t>(dims.size()) - 1}}});
        out_.set_type(V{d, 0}, tensor_type::of(dtype::f32, dims));
        return V{d, 0};
    }

    // An int32 bias in units of x_scale * w_scale[m], behind a DequantizeLinear.
    V bias(node_id n, V b, float x_scale, const std::vector<float>& w_scales) {
        const auto c = g_.constant(b.node);
        const float* p = static_cast<const float*>(c->data);
        const std::size_t count = static_cast<std::size_t>(c->element_count());
        if (count != w_scales.size())
            throw quantize_error("sgmatch::quantize: Conv '" + std::string(g_.name(n)) + "': the bias does not hold one value per output channel");
        std::vector<std::int32_t> q(count);
        std::vector<float> scales(count);
        for (std::size_t m = 0; m < count; ++m) {
            scales[m] = x_scale * w_scales[m];
            const double v = std::nearbyint(static_cast<double>(p[m]) / scales[m]);
            q[m] = static_cast<std::int32_t>(std::clamp(v, -2147483647.0, 2147483647.0));
        }
        const std::string base(g_.name(n));
        const auto m = static_cast<std::int64_t>(count);
        const node_id bq = out_.add_constant(fresh(base + "_bias_quantized"), {m}, dtype::i32, bytes_of(q));
        const node_id bs = out_.add_constant(fresh(base + "_bias_scale"), {m}, dtype::f32, bytes_of(scales));
        const node_id d = out_.add_op("DequantizeLinear", fresh(base + "_bias"), {bq, bs}, {{"axis", std::int64_t{0}}});
        out_.set_type(V{d, 0}, tensor_type::of(dtype::f32, {m}));
        return V{d, 0};
    }

    const graph& g_;
    const std::unordered_map<V, range, value_hash>& ranges_;
    report& r_;
    graph out_;
    std::unordered_map<std::uint32_t, const target*> targets_;
    std::unordered_set<V, value_hash> quantized_;
    std::unordered_map<V, V, value_hash> values_, dq_;
    std::unordered_map<V, float, value_hash> scales_;
    std::unordered_set<std::string> g_names_;  // the model's names and the new ones
};

}  // namespace detail

/// The QDQ model of `m` (see the top of this file), calibrated on `calibration` (each a map
/// from graph input name to its value).
inline result quantize_static(const onnx::model& m, const std::vector<std::map<std::string, exec::value>>& calibration,
                              const options& o = {}) {
    result out;
    const std::vector<detail::target> ts = detail::targets_of(m.graph, o, out.what);
    std::vector<detail::V> values;
    for (const auto& t : ts) values.push_back(t.data), values.push_back(t.out);
    std::sort(values.begin(), values.end(), [](detail::V a, detail::V b) { return a.node.value != b.node.value ? a.node.value < b.node.value : a.port < b.port; });
    values.erase(std::unique(values.begin(), values.end()), values.end());
    const auto ranges = detail::calibrate(m.graph, values, calibration, o);
    out.what.calibrated = ranges.size();
    detail::writer w(m.graph, ts, ranges, out.what);
    out.model.graph = w.run();
    (void)ops::fill_shapes(out.model.graph);  // every value's type where its op's rule knows it
    out.model.inputs = m.inputs;
    out.model.outputs = m.outputs;
    out.model.opset = std::max<std::int64_t>(m.opset, 13);
    return out;
}

}  // namespace quantize
SGMATCH_END_NAMESPACE
