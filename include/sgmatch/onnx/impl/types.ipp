// sgmatch/onnx/impl/types.ipp - the ONNX front end's element types: the type constraints of a
// node's op (libonnx's schema), the types a graph declares for its values, and each node's types
// checked against what its op's kernels take and make, then its shapes propagated. The
// converter's members declared in impl/load.ipp, defined here; load.ipp includes this file.
#pragma once

#include "sgmatch/onnx/impl/load.ipp"

SGMATCH_BEGIN_NAMESPACE
namespace onnx {
namespace detail {

inline std::string converter::constraint_name(std::int32_t t) {
    std::string n = onnx_type_name(t);
    for (char& c : n) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    return n;
}

inline void converter::check_type_constraints(const ::onnx::NodeProto& n) const {
    const ::onnx::OpSchema* schema = ::onnx::OpSchemaRegistry::Schema(n.op_type(), static_cast<int>(opset_), "");
    if (schema == nullptr || schema->inputs().empty()) return;
    std::map<std::string, std::pair<int, std::int32_t>> bound;  // type parameter -> first input and its type
    for (int i = 0; i < n.input_size(); ++i) {
        if (n.input(i).empty()) continue;
        const auto e = elem_.find(n.input(i));
        if (e == elem_.end() || e->second == 0) continue;
        const auto k = static_cast<std::size_t>(std::min<int>(i, static_cast<int>(schema->inputs().size()) - 1));
        const auto& formal = schema->inputs()[k];
        if (k + 1 == schema->inputs().size() && i > static_cast<int>(k) && !formal.GetIsHomogeneous()) continue;
        const std::string& param = formal.GetTypeStr();
        const std::string type = constraint_name(e->second);
        for (const auto& c : schema->typeConstraintParams()) {
            if (c.type_param_str != param) continue;
            bool allowed = false, tensors = false;
            std::string list;
            for (const auto& a : c.allowed_type_strs) {
                allowed = allowed || a == "tensor(" + type + ")";
                tensors = tensors || a.rfind("tensor(", 0) == 0;
                if (a.rfind("tensor(", 0) == 0) list += (list.empty() ? "" : ", ") + a.substr(7, a.size() - 8);
            }
            if (tensors && !allowed)
                throw load_error("sgmatch::onnx: " + node_label(n) + ": input " + std::to_string(i) + " ('" + n.input(i) + "') is " + type +
                                 "; its type " + param + " allows " + list);
        }
        const auto it = bound.find(param);
        if (it == bound.end()) {
            bound.emplace(param, std::make_pair(i, e->second));
        } else if (it->second.second != e->second) {
            throw load_error("sgmatch::onnx: " + node_label(n) + ": inputs " + std::to_string(it->second.first) + " ('" +
                             n.input(it->second.first) + "', " + constraint_name(it->second.second) + ") and " + std::to_string(i) +
                             " ('" + n.input(i) + "', " + type + ") share the type " + param + " and must be of one element type");
        }
    }
}

inline void converter::collect_types(const ::onnx::GraphProto& gp) {
    auto take = [&](const ::onnx::ValueInfoProto& v, bool input) {
        if (!v.has_type()) return;
        bool optional = false;
        const ::onnx::TypeProto& ty = unwrap_optional(v.type(), optional);
        if (const auto* seq = sequence_of_tensors(ty)) {  // its tensors' type; no dims
            tensor_type t;
            t.type = dtype_of(seq->elem_type());
            t.sequence = true;
            t.optional = optional;
            elem_[v.name()] = seq->elem_type();
            types_[v.name()] = t;
            return;
        }
        if (!ty.has_tensor_type()) return;
        const auto& tt = ty.tensor_type();
        tensor_type t;
        t.type = dtype_of(tt.elem_type());
        t.optional = optional;
        if (tt.has_shape()) {
            for (int i = 0; i < tt.shape().dim_size(); ++i) {
                const auto& d = tt.shape().dim(i);
                std::int64_t x = -1;
                if (d.has_dim_value()) x = d.dim_value();
                else if (d.has_dim_param() && dims_.count(d.dim_param())) x = dims_.at(d.dim_param());
                else if (input && i == 0 && o_.batch && depth_ == 0) x = *o_.batch;
                t.dims.push_back(x);
            }
        }
        t.scalar = tt.has_shape() && tt.shape().dim_size() == 0;
        elem_[v.name()] = tt.elem_type();
        if (tt.has_shape()) rank_[v.name()] = static_cast<std::size_t>(tt.shape().dim_size());
        types_[v.name()] = t;
    };
    // A symbolic first dim of a graph input is the batch: bound by options.batch wherever it
    // appears (ONNX's inference carries the name through).
    if (o_.batch && depth_ == 0)
        for (const auto& v : gp.input())
            if (v.has_type() && v.type().has_tensor_type() && v.type().tensor_type().shape().dim_size() > 0) {
                const auto& d = v.type().tensor_type().shape().dim(0);
                if (d.has_dim_param() && !dims_.count(d.dim_param())) dims_[d.dim_param()] = *o_.batch;
            }
    for (const auto& v : gp.value_info()) take(v, false);
    for (const auto& v : gp.output()) take(v, false);
    for (const auto& v : gp.input()) take(v, true);
}

inline const ::onnx::TypeProto& converter::unwrap_optional(const ::onnx::TypeProto& t, bool& optional) {
    optional = t.has_optional_type() && t.optional_type().has_elem_type();
    return optional ? t.optional_type().elem_type() : t;
}

inline const ::onnx::TypeProto::Tensor* converter::sequence_of_tensors(const ::onnx::TypeProto& t) {
    if (!t.has_sequence_type() || !t.sequence_type().has_elem_type() || !t.sequence_type().elem_type().has_tensor_type()) return nullptr;
    return &t.sequence_type().elem_type().tensor_type();
}

inline void converter::check_value_type(const ::onnx::ValueInfoProto& v, const char* what) {
    if (!v.has_type() || v.type().value_case() == ::onnx::TypeProto::VALUE_NOT_SET) return;  // unknown
    bool optional = false;
    const auto& t = unwrap_optional(v.type(), optional);
    const auto* seq = sequence_of_tensors(t);
    if (!t.has_tensor_type() && seq == nullptr) {
        const char* kind = t.has_sequence_type()   ? "a sequence of non-tensors"
                           : t.has_optional_type() ? "an optional of neither a tensor nor a sequence"
                           : t.has_map_type()      ? "a map"
                                                   : "not a tensor";
        report_->unsupported.push_back(std::string(what) + " '" + v.name() + "' is " + kind +
                                       " (tensors, sequences of tensors and optionals of either only)");
        return;
    }
    const std::int32_t elem = seq ? seq->elem_type() : t.tensor_type().elem_type();
    if (dtype_of(elem) == dtype::unknown)
        report_->unsupported.push_back(std::string(what) + " '" + v.name() + "' has element type " + onnx_type_name(elem) +
                                       ", which sgmatch has not");
}

inline void converter::check_types(graph& g, const ::onnx::NodeProto& n, node_id id, const ops::op_attrs& a) {
    std::vector<dtype> in;
    bool input0_sequence = false, input0_optional = false;
    const ops::op_schema& s = a.schema();
    for (std::size_t i = 0; i < g.input_count(id); ++i) {
        const auto v = g.input(id, i);
        const auto c = g.constant(v.node);
        const auto t = g.value_type(v.node, v.port);
        in.push_back(c ? c->type : t ? t->type : dtype::unknown);
        if (i == 0) input0_sequence = !c && t && t->sequence;
        if (i == 0) input0_optional = !c && t && t->optional;
        const ops::input_spec* spec = s.input(i);
        if (!c && t && t->optional && spec != nullptr && !spec->any_kind())
            unsupported(n, "input " + std::to_string(i) + " is an optional; the op reads a " +
                               (spec->kind == ops::value_kind::sequence ? "sequence" : "tensor") + " there");
    }
    // Optional without an input: an empty optional of the type its attribute names.
    if (s.output_kind == ops::value_kind::optional && g.input_count(id) == 0 && a.has("type"))
        if (const auto t = ops::parse_type_notation(a.s("type"))) {
            input0_sequence = t->sequence;
            in.assign(1, t->type);
        }
    const std::size_t data = s.types.input;
    if (data < in.size() && in[data] != dtype::unknown && !ops::types::has(s.dtypes, in[data]))
        unsupported(n, "input " + std::to_string(data) + " is " + std::string(sgmatch::name_of(in[data])) + ": the kernels of " +
                           std::string(s.name()) + " do not take it");
    const dtype out = ops::output_type(a, in);
    if (s.types.how == ops::type_rule::from::attribute && !s.types.attr.empty() && out == dtype::unknown)
        unsupported(n, std::string(s.types.attr) + " = " + std::to_string(a.i(s.types.attr)) + ": the kernels do not make " +
                           (out == dtype::unknown ? onnx_type_name(static_cast<std::int32_t>(a.i(s.types.attr))) : std::string(sgmatch::name_of(out))));
    for (int p = 0; p < n.output_size(); ++p) {
        const std::string& o = n.output(p);
        if (o.empty()) continue;
        const auto e = elem_.find(o);
        const dtype port_type = ops::output_type(a, in, static_cast<std::size_t>(p));
        const bool sequence = (p == 0 || s.output_kind == ops::value_kind::sequence) && s.sequence_output(input0_sequence);
        const bool optional = p == 0 && s.optional_output(input0_optional);
        const bool body_kind = s.output_kind == ops::value_kind::body;  // what the body computes: checked when it runs
        if (const auto ty = types_.find(o); !body_kind && ty != types_.end() && ty->second.known() &&
                                            (ty->second.sequence != sequence || ty->second.optional != optional)) {
            auto kind = [](bool seq, bool opt) { return std::string(opt ? "an optional " : "a ") + (seq ? "sequence" : "tensor"); };
            unsupported(n, "output " + std::to_string(p) + " '" + o + "' is declared " + kind(ty->second.sequence, ty->second.optional) +
                               "; the op computes " + kind(sequence, optional));
        }
        if (e != elem_.end()) {
            const dtype declared = dtype_of(e->second);
            if (declared == dtype::unknown)
                unsupported(n, "output " + std::to_string(p) + " '" + o + "' is " + onnx_type_name(e->second) + ", which sgmatch has not");
            else if (port_type != dtype::unknown && declared != port_type)
                unsupported(n, "output " + std::to_string(p) + " '" + o + "' is declared " + onnx_type_name(e->second) + "; the op computes " +
                                   std::string(sgmatch::name_of(port_type)));
        }
        if (!body_kind && (port_type != dtype::unknown || sequence || optional)) {
            auto t = g.value_type(id, static_cast<std::uint32_t>(p)).value_or(tensor_type{});
            if (t.type == dtype::unknown || t.sequence != sequence || t.optional != optional) {
                if (t.type == dtype::unknown) t.type = port_type;
                t.sequence = sequence;
                t.optional = optional;
                g.set_type({id, static_cast<std::uint32_t>(p)}, t);
            }
        }
    }
}

inline void converter::propagate(graph& g, const ::onnx::NodeProto& n, node_id id, const ops::op_attrs& a) {
    if (ops::shape_rule_of(a.schema()) == nullptr) return;
    const auto in = ops::known_inputs(g, id);
    if (!in) return;
    std::vector<ops::dims> outs;
    try {
        outs = ops::infer_shapes(a, *in);
    } catch (const ops::unknown_value& e) {
        // A parameter computed at run time: fine where the kernels read it then (the output
        // shapes stay unknown until the op runs), refused otherwise.
        const ops::op_schema& s = a.schema();
        if (s.input_spec_count == 0 || !s.inputs[std::min(e.slot(), s.input_spec_count - 1)].run_time) throw;
        return;
    }
    for (std::size_t p = 0; p < outs.size() && p < static_cast<std::size_t>(n.output_size()); ++p) {
        const auto port = static_cast<std::uint32_t>(p);
        const auto declared = g.value_type(id, port);
        if (declared && declared->ranked()) {
            bool same = declared->dims.size() == outs[p].size();
            for (std::size_t k = 0; same && k < outs[p].size(); ++k) same = declared->dims[k] < 0 || declared->dims[k] == outs[p][k];
            if (!same) {
                unsupported(n, "output '" + n.output(static_cast<int>(p)) + "' has shape " + ops::to_string(outs[p]) +
                                   "; the model declares " + ops::to_string(declared->dims));
                continue;
            }
        }
        tensor_type t = tensor_type::of(declared ? declared->type : dtype::unknown, outs[p]);
        t.optional = declared && declared->optional;
        g.set_type({id, port}, t);
        rank_[n.output(static_cast<int>(p))] = outs[p].size();
    }
}

}  // namespace detail
}  // namespace onnx
SGMATCH_END_NAMESPACE
