// sgmatch/onnx/impl/control.ipp - the ONNX front end's control-flow nodes (If, Loop, Scan,
// SequenceMap, and Scan before opset 9): each body converted into a graph of its own. The
// converter's members declared in impl/load.ipp, defined here; load.ipp includes this file.
#pragma once

#include "sgmatch/onnx/impl/load.ipp"

SGMATCH_BEGIN_NAMESPACE
namespace onnx {
namespace detail {

inline std::vector<std::string> converter::free_names(const ::onnx::GraphProto& gp, int depth) {
    if (depth > max_body_depth) throw load_error("sgmatch::onnx: bodies nested over " + std::to_string(max_body_depth) + " deep");
    std::unordered_set<std::string> defined, seen;
    for (const auto& i : gp.input()) defined.insert(i.name());
    for (const auto& t : gp.initializer()) defined.insert(t.name());
    for (const auto& n : gp.node())
        for (const auto& o : n.output()) defined.insert(o);
    std::vector<std::string> out;
    auto use = [&](const std::string& v) {
        if (!v.empty() && !defined.count(v) && seen.insert(v).second) out.push_back(v);
    };
    for (const auto& n : gp.node()) {
        for (const auto& i : n.input()) use(i);
        for (const auto& v : body_reads(n, depth)) use(v);
    }
    for (const auto& o : gp.output()) use(o.name());
    return out;
}

inline std::vector<std::string> converter::body_reads(const ::onnx::NodeProto& n, int depth) {
    std::vector<std::string> out;
    for (const auto& a : n.attribute()) {
        std::vector<const ::onnx::GraphProto*> bodies;
        if (a.has_g()) bodies.push_back(&a.g());
        for (const auto& b : a.graphs()) bodies.push_back(&b);
        for (const auto* b : bodies)
            for (auto& v : free_names(*b, depth + 1))
                if (std::find(out.begin(), out.end(), v) == out.end()) out.push_back(std::move(v));
    }
    return out;
}

inline void converter::add_control(graph& g, const ::onnx::NodeProto& n, const ops::op_schema& schema) {
    if (n.op_type() == "Scan" && opset_ < 9) return add_batched_scan(g, n);
    std::vector<input_ref> ins;
    const bool loop = n.op_type() == "Loop";
    const int given = std::max(n.input_size(), loop ? 2 : 0);
    for (int k = 0; k < given; ++k) {
        const std::string in = k < n.input_size() ? n.input(k) : std::string();
        if (!in.empty()) {
            ins.push_back(values_.at(in));
        } else if (loop && k == 0) {  // no trip count: as many as int64 counts
            const std::int64_t big = std::numeric_limits<std::int64_t>::max();
            std::vector<unsigned char> b(sizeof big);
            std::memcpy(b.data(), &big, sizeof big);
            ins.push_back(input_ref(g.add_constant(name_of(n) + ":M", {}, dtype::i64, std::move(b))));
        } else if (loop && k == 1) {  // no condition: true
            ins.push_back(input_ref(g.add_constant(name_of(n) + ":cond", {}, dtype::boolean, std::vector<unsigned char>{1})));
        } else {
            unsupported(n, "input " + std::to_string(k) + " is absent");
            return add_opaque(g, n);
        }
    }
    const std::vector<std::string> reads = body_reads(n, depth_);
    for (const auto& v : reads) {
        const auto it = values_.find(v);
        if (it == values_.end())
            throw load_error("sgmatch::onnx: " + node_label(n) + ": its body reads '" + v +
                             "', which no node, graph input or initializer of an enclosing graph produces");
        ins.push_back(it->second);
    }
    std::vector<std::pair<std::string, attribute>> attrs;
    for (const auto& a : n.attribute()) {
        if (a.has_g() || a.type() == ::onnx::AttributeProto::GRAPH) {
            attrs.emplace_back(a.name(), attribute(convert_body(g, n, a.g(), reads)));
        } else if (auto v = attribute_of(a)) {
            attrs.emplace_back(a.name(), std::move(*v));
        } else {
            unsupported(n, "attribute " + a.name() + " (" + kind_name(a) + ") is not supported");
        }
    }
    const node_id id = g.add_op(n.op_type(), name_of(n), ins, {}, static_cast<std::uint32_t>(std::max(1, n.output_size())));
    for (auto& [k, v] : attrs) g.set_attr(id, k, std::move(v));
    finish(g, n, id);
    try {
        const ops::op_attrs a(schema, ops::node_of<graph>(g, id));
        check_types(g, n, id, a);
    } catch (const ops::op_error& e) {
        const std::string m = e.what();
        const auto colon = m.find("): ");
        report_->unsupported.push_back(node_label(n) + m.substr(colon == std::string::npos ? 0 : colon + 1));
    }
}

inline void converter::add_batched_scan(graph& g, const ::onnx::NodeProto& n) {
    if (n.input_size() > 0 && !n.input(0).empty()) {
        unsupported(n, "sequence_lens (a scan length per batch element) is not implemented");
        return add_opaque(g, n);
    }
    const ::onnx::GraphProto* body = nullptr;
    std::vector<std::pair<std::string, attribute>> scan_attrs;
    for (const auto& a : n.attribute()) {
        if (a.name() == "body" && a.has_g()) body = &a.g();
        else if (a.name() == "num_scan_inputs" && a.has_i()) scan_attrs.emplace_back("num_scan_inputs", attribute(a.i()));
        else if (a.name() == "directions") scan_attrs.emplace_back("scan_input_directions", attribute(attribute::ints(a.ints().begin(), a.ints().end())));
        else unsupported(n, "attribute " + a.name() + " (" + kind_name(a) + ") is not supported");
    }
    std::vector<input_ref> data;
    for (int k = 1; k < n.input_size(); ++k) {
        if (n.input(k).empty()) {
            unsupported(n, "input " + std::to_string(k) + " is absent");
            return add_opaque(g, n);
        }
        data.push_back(values_.at(n.input(k)));
    }
    if (body == nullptr || data.empty()) {
        unsupported(n, body == nullptr ? "no body" : "no states or scanned inputs");
        return add_opaque(g, n);
    }
    const std::string name = name_of(n);
    const std::vector<std::string> reads = body_reads(n, depth_);
    graph_body inner = convert_body(g, n, *body, reads);
    // The Loop's body: (i, cond), then the batched values and the enclosing ones it reads.
    auto lb = std::make_shared<graph>();
    const node_id i = lb->add_input("i", tensor_type::of(dtype::i64, {}));
    const node_id c = lb->add_input("cond", tensor_type::of(dtype::boolean, {}));
    std::vector<input_ref> scan_ins, loop_ins;
    for (std::size_t k = 0; k < data.size(); ++k) {
        const node_id batched = lb->add_input("batched:" + std::to_string(k));
        const node_id one = lb->add_op("Gather", name + ":element" + std::to_string(k), {batched, i});
        lb->set_attr(one, "axis", attribute(std::int64_t{0}));
        scan_ins.push_back(one);
        loop_ins.push_back(data[k]);
    }
    for (std::size_t k = 0; k < reads.size(); ++k) {
        scan_ins.push_back(lb->add_input("read:" + std::to_string(k)));
        loop_ins.push_back(values_.at(reads[k]));
    }
    const auto outputs = static_cast<std::uint32_t>(std::max(1, n.output_size()));
    const node_id scan = lb->add_op("Scan", name + ":element_scan", scan_ins, {}, outputs);
    lb->set_attr(scan, "body", attribute(std::move(inner)));
    for (auto& [k, v] : scan_attrs) lb->set_attr(scan, k, v);
    lb->mark_output(lb->add_op("Identity", name + ":go_on", {c}));
    for (std::uint32_t p = 0; p < outputs; ++p) lb->mark_output(value_ref<node_id>{scan, p});
    // The Loop over the batch: M is the first batched value's first dim.
    std::vector<unsigned char> zero(sizeof(std::int64_t), 0);
    const node_id shape = g.add_op("Shape", name + ":batched_shape", {data[0]});
    const node_id batch = g.add_op("Gather", name + ":batch", {shape, input_ref(g.add_constant(name + ":zero", {}, dtype::i64, std::move(zero)))});
    g.set_attr(batch, "axis", attribute(std::int64_t{0}));
    std::vector<input_ref> ins{batch, input_ref(g.add_constant(name + ":cond", {}, dtype::boolean, std::vector<unsigned char>{1}))};
    ins.insert(ins.end(), loop_ins.begin(), loop_ins.end());
    const node_id id = g.add_op("Loop", name, ins, {}, outputs);
    g.set_attr(id, "body", attribute(graph_body{std::move(lb), 2}));
    finish(g, n, id);
    report_->notes.push_back(node_label(n) + ": opset " + std::to_string(opset_) + " Scan written as a Loop over the batch of opset-9 Scans");
}

inline graph_body converter::convert_body(const graph& outer, const ::onnx::NodeProto& n, const ::onnx::GraphProto& body,
                            const std::vector<std::string>& reads) {
    converter c(*this, depth_ + 1);
    auto bg = std::make_shared<graph>();
    c.collect_types(body);
    for (const auto& t : body.initializer()) {
        tensor v;
        const std::uint64_t count = detail::decode_header(t, v, o_.max_tensor_bytes);
        detail::decode_data(t, v, count, base_);
        c.define(t.name(), input_ref(bg->add_constant(t.name(), v.dims, v.type, std::move(v.bytes))), "initializer");
    }
    std::size_t own = 0;
    for (const auto& in : body.input()) {
        if (c.values_.count(in.name())) continue;  // an initializer listed as an input
        c.check_value_type(in, "body input");
        c.define(in.name(), input_ref(bg->add_input(in.name(), c.type_of(in.name()))), "body input");
        ++own;
    }
    for (const auto& v : reads) {
        tensor_type t = type_of(v);
        const input_ref r = values_.at(v);
        if (!t.known()) {
            if (const auto k = outer.constant(r.v.node)) t = tensor_type::of(k->type, std::vector<std::int64_t>(k->dims, k->dims + k->rank));
            else t = outer.value_type(r.v.node, r.v.port).value_or(tensor_type{});
        }
        if (const auto e = elem_.find(v); e != elem_.end()) c.elem_[v] = e->second;
        if (!t.sequence && t.ranked()) c.rank_[v] = t.dims.size();
        c.types_[v] = t;
        c.define(v, input_ref(bg->add_input(v, t)), "enclosing value");
    }
    for (const int i : c.topological_order(body)) c.add_node(*bg, body.node(i));
    for (const auto& o : body.output()) {
        c.check_value_type(o, "body output");
        const auto it = c.values_.find(o.name());
        if (it == c.values_.end())
            throw load_error("sgmatch::onnx: " + node_label(n) + ": body output '" + o.name() + "' is not produced by any node");
        bg->mark_output(it->second);
    }
    return graph_body{std::move(bg), own};
}

}  // namespace detail
}  // namespace onnx
SGMATCH_END_NAMESPACE
