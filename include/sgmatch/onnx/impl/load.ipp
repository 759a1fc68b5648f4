// sgmatch/onnx/impl/load.ipp - the ONNX front end's definitions (onnx/load.hpp): included by
// that header, or, in a program built with SGMATCH_SEPARATE_COMPILATION, compiled once by
// onnx/src.hpp.
#pragma once

#include <algorithm>
#include <cctype>
#include <cfloat>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <filesystem>
#include <istream>
#include <iterator>
#include <limits>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include <google/protobuf/io/coded_stream.h>
#include <onnx/onnx_pb.h>
// <sys/mman.h> (the built-in graph's storage) defines MAP_TYPE, a name ONNX's parser uses.
#pragma push_macro("MAP_TYPE")
#undef MAP_TYPE
#include <onnx/checker.h>
#include <onnx/shape_inference/implementation.h>
#pragma pop_macro("MAP_TYPE")

#include "sgmatch/detail/config.hpp"
#include "sgmatch/graph/graph.hpp"
#include "sgmatch/onnx/file.hpp"
#include "sgmatch/onnx/import_rules.hpp"
#include "sgmatch/onnx/load.hpp"
#include "sgmatch/onnx/model.hpp"
#include "sgmatch/onnx/opset.hpp"
#include "sgmatch/onnx/tensor.hpp"
#include "sgmatch/ops/attrs.hpp"
#include "sgmatch/ops/fill_shapes.hpp"
#include "sgmatch/ops/shape_rule_table.hpp"
#include "sgmatch/ops/table.hpp"
#include "sgmatch/passes/cleanup.hpp"

SGMATCH_BEGIN_NAMESPACE
namespace onnx {

namespace detail {

inline bool default_domain(const std::string& d) { return d.empty() || d == "ai.onnx"; }

// An AttributeProto as sgmatch's attribute (nullopt for kinds it has none of: graphs, tensors,
// strings lists, ...). Older files leave `type` unset: the field that is set decides.
inline std::optional<attribute> attribute_of(const ::onnx::AttributeProto& a) {
    using A = ::onnx::AttributeProto;
    auto t = a.type();
    if (t == A::UNDEFINED) {
        if (a.has_f()) t = A::FLOAT;
        else if (a.has_i()) t = A::INT;
        else if (a.has_s()) t = A::STRING;
        else if (a.floats_size()) t = A::FLOATS;
        else if (a.ints_size()) t = A::INTS;
    }
    switch (t) {
        case A::FLOAT: return attribute(static_cast<double>(a.f()));
        case A::INT: return attribute(a.i());
        case A::STRING: return attribute(a.s());
        case A::FLOATS: return attribute(attribute::reals(a.floats().begin(), a.floats().end()));
        case A::INTS: return attribute(attribute::ints(a.ints().begin(), a.ints().end()));
        case A::TYPE_PROTO: {  // in ONNX's notation (ops::type_notation), for the types sgmatch has
            tensor_type t;
            const ::onnx::TypeProto* p = &a.tp();
            if (p->has_optional_type() && p->optional_type().has_elem_type()) {
                t.optional = true;
                p = &p->optional_type().elem_type();
            }
            if (p->has_sequence_type() && p->sequence_type().has_elem_type()) {
                t.sequence = true;
                p = &p->sequence_type().elem_type();
            }
            if (!p->has_tensor_type()) return std::nullopt;
            t.type = dtype_of(p->tensor_type().elem_type());
            if (t.type == dtype::unknown) return std::nullopt;
            return attribute(ops::type_notation(t));
        }
        default: return std::nullopt;
    }
}

inline std::string kind_name(const ::onnx::AttributeProto& a) {
    const auto* v = ::onnx::AttributeProto::AttributeType_descriptor()->FindValueByNumber(a.type());
    return v ? v->name() : "UNDEFINED";
}

class converter {
public:
    converter(::onnx::ModelProto& m, const load_options& o, std::string base)
        : m_(m), o_(o), base_(std::move(base)), dims_(o.dims.begin(), o.dims.end()) {}
    // A converter for a body nested `depth` deep in the graph `parent` converts.
    converter(const converter& parent, int depth)
        : m_(parent.m_), o_(parent.o_), base_(parent.base_), opset_(parent.opset_), report_(parent.report_), dims_(parent.dims_), depth_(depth) {}

    model run() {
        model out;
        for (const auto& op : m_.opset_import())
            if (default_domain(op.domain())) out.opset = op.version();
        bool imported = false;
        for (const auto& op : m_.opset_import()) imported = imported || default_domain(op.domain());
        if (!imported) out.opset = 1;  // IR version 1 and 2: no imports, the first opset
        const std::int64_t newest = newest_opset();
        if (out.opset < 1 || out.opset > newest)
            throw load_error("sgmatch::onnx: opset " + std::to_string(out.opset) +
                             " for the default domain is outside the opsets this loader implements (1 to " + std::to_string(newest) + ")");
        opset_ = out.opset;
        out.report.ir_version = m_.ir_version();
        out.report.producer = m_.producer_name() + (m_.producer_version().empty() ? "" : " " + m_.producer_version());
        if (o_.onnx_shape_inference) {
            // ONNX's shape inference trusts each node's inputs and attributes to fit its schema (it
            // crashes on a Conv without inputs): it runs only when ONNX's checker accepts every
            // node that has a schema (nodes of other domains and unknown ops are left to it).
            try {
                ::onnx::checker::CheckerContext ctx;
                ctx.set_ir_version(static_cast<int>(m_.ir_version()));
                std::unordered_map<std::string, int> imports;
                for (const auto& op : m_.opset_import())
                    imports[default_domain(op.domain()) ? "" : op.domain()] = static_cast<int>(op.version());
                ctx.set_opset_imports(imports);
                // ... and every graph input that is not an initializer has a tensor type with a shape
                // (its Conv shape inference reads input types unchecked).
                std::unordered_map<std::string, bool> initializer;
                for (const auto& t : m_.graph().initializer()) initializer[t.name()] = true;
                for (const auto& in : m_.graph().input())
                    if (!initializer.count(in.name()) &&
                        (!in.type().has_tensor_type() || in.type().tensor_type().elem_type() == 0 ||
                         !in.type().tensor_type().has_shape()))
                        throw std::runtime_error("graph input '" + in.name() + "' has no tensor type with a shape");
                const ::onnx::checker::LexicalScopeContext scope;
                for (const auto& n : m_.graph().node())
                    if (default_domain(n.domain()) &&
                        ::onnx::OpSchemaRegistry::Schema(n.op_type(), static_cast<int>(out.opset), "") != nullptr)
                        ::onnx::checker::check_node(n, ctx, scope);
                ::onnx::shape_inference::InferShapes(m_);
            } catch (const std::exception& e) {
                out.report.notes.push_back(std::string("ONNX's shape inference did not run or failed, shapes are the "
                                                       "declared ones: ") + e.what());
            }
        }
        const ::onnx::GraphProto& gp = m_.graph();
        report_ = &out.report;
        graph& g = out.graph;
        collect_types(gp);

        // Initializers, then graph inputs that are not initializers.
        // Weights stored as raw_data stay in the strings the protobuf parsed them into: the
        // graph's constants hold those (add_constant with an owner), no copy is made.
        for (auto& t : *m_.mutable_graph()->mutable_initializer()) {
            check_initializer_as_input(t, gp);
            elem_[t.name()] = t.data_type();
            tensor v;
            const std::uint64_t count = detail::decode_header(t, v, o_.max_tensor_bytes), want = count * size_of(v.type);
            if (t.data_location() != ::onnx::TensorProto::EXTERNAL && t.has_raw_data() && want >= 4096 &&
                t.raw_data().size() == want) {
                auto held = std::make_shared<std::string>(std::move(*t.mutable_raw_data()));
                const void* data = held->data();
                define(t.name(), input_ref(g.add_constant(t.name(), v.dims, v.type, std::move(held), data, want)), "initializer");
            } else {
                detail::decode_data(t, v, count, base_);
                define(t.name(), input_ref(g.add_constant(t.name(), v.dims, v.type, std::move(v.bytes))), "initializer");
            }
            ++out.report.initializers;
        }
        std::unordered_map<std::string, int> seen_inputs;
        for (const auto& in : gp.input()) {
            if (seen_inputs[in.name()]++) throw load_error("sgmatch::onnx: graph input '" + in.name() + "' is listed twice");
            if (values_.count(in.name())) continue;  // an initializer listed as an input: the initializer (checked above)
            check_value_type(in, "graph input");
            const node_id n = g.add_input(in.name(), type_of(in.name()));
            define(in.name(), input_ref(n), "graph input");
            out.inputs.push_back(in.name());
        }
        for (const int i : topological_order(gp)) add_node(g, gp.node(i));
        out.report.nodes = static_cast<std::size_t>(gp.node_size());
        if (gp.output_size() == 0) throw load_error("sgmatch::onnx: the graph has no outputs");
        std::map<std::string, int> seen_outputs;
        for (const auto& o : gp.output()) {
            check_value_type(o, "graph output");
            const auto it = values_.find(o.name());
            if (it == values_.end()) throw load_error("sgmatch::onnx: graph output '" + o.name() + "' is not produced by any node");
            if (seen_outputs[o.name()]++) throw load_error("sgmatch::onnx: graph output '" + o.name() + "' is listed twice");
            g.mark_output(it->second);
            out.outputs.push_back(o.name());
        }
        // Before the clean-up: it would fold a DequantizeLinear of constant weights into f32 ones.
        if (o_.fold_qdq && out.report.unsupported.empty()) out.report.qdq = passes::fold_qdq(g);
        if (o_.cleanup && out.report.unsupported.empty()) {
            // Identity and Dropout gone, shape subgraphs and Transpose / Cast of weights folded:
            // shapes computed at run time before may be known now, and with them the next
            // shape subgraph (a channel shuffle's Reshape, then the Shape of its output): again,
            // until no shape becomes known.
            auto& total = out.report.cleanup;
            for (std::size_t round = 0; round <= g.node_count(); ++round) {
                passes::cleanup_report r = passes::cleanup(g, o_.cleanup_options);
                total.pass_through += r.pass_through;
                total.shapes += r.shapes;
                total.folded += r.folded;
                total.erased += r.erased;
                for (auto& n : r.notes)
                    if (std::find(total.notes.begin(), total.notes.end(), n) == total.notes.end()) total.notes.push_back(std::move(n));
                const bool changed = r.pass_through + r.shapes + r.folded + r.erased > 0;
                if (ops::fill_shapes(g) == 0 || (!changed && round > 0)) break;
            }
        }
        if (o_.check_support && !out.report.unsupported.empty()) {
            std::string m = "sgmatch::onnx: the model has " + std::to_string(out.report.unsupported.size()) +
                            " thing(s) the kernels cannot run:";
            for (const auto& u : out.report.unsupported) m += "\n  " + u;
            throw load_error(m);
        }
        return out;
    }

private:
    // The newest opset of the default domain that libonnx (and so this loader's conversions)
    // describes.
    static std::int64_t newest_opset() {
        const auto& m = ::onnx::OpSchemaRegistry::DomainToVersionRange::Instance().Map();
        const auto it = m.find(::onnx::ONNX_DOMAIN);
        return it == m.end() ? 1 : it->second.second;
    }

    // An initializer that is also a graph input (IR >= 4: the input's default value) is a
    // constant here: its value wins. A declared type of the input that disagrees with it is
    // refused, naming both.
    void check_initializer_as_input(const ::onnx::TensorProto& t, const ::onnx::GraphProto& gp) const {
        for (const auto& in : gp.input()) {
            if (in.name() != t.name() || !in.has_type() || !in.type().has_tensor_type()) continue;
            const auto& tt = in.type().tensor_type();
            auto text = [](auto begin, auto end) {
                std::string d;
                for (auto i = begin; i != end; ++i) d += (d.empty() ? "" : ", ") + std::to_string(*i);
                return "[" + d + "]";
            };
            const std::string init = text(t.dims().begin(), t.dims().end());
            if (tt.elem_type() != 0 && tt.elem_type() != t.data_type())
                throw load_error("sgmatch::onnx: graph input '" + in.name() + "' is declared " + onnx_type_name(tt.elem_type()) +
                                 "; its initializer is " + onnx_type_name(t.data_type()));
            if (!tt.has_shape()) continue;
            std::vector<std::int64_t> declared;
            bool same = tt.shape().dim_size() == t.dims_size();
            for (int i = 0; i < tt.shape().dim_size(); ++i) {
                const auto& d = tt.shape().dim(i);
                declared.push_back(d.has_dim_value() ? d.dim_value() : -1);
                same = same && (!d.has_dim_value() || d.dim_value() == t.dims(i));
            }
            if (!same)
                throw load_error("sgmatch::onnx: graph input '" + in.name() + "' is declared of shape " +
                                 text(declared.begin(), declared.end()) + "; its initializer has shape " + init +
                                 " (the initializer is the value used: a conflicting declaration is refused)");
        }
    }

    // The lower-case ONNX name of an element type ("float", "int64"), as in type constraints.
    static std::string constraint_name(std::int32_t t);

    // Each input whose element type is known against the op's type constraints in libonnx's
    // schema (ONNX's checker's rule): inputs bound to one type parameter share one type, and
    // that type is one the parameter allows.
    void check_type_constraints(const ::onnx::NodeProto& n) const;

    // Shapes and types by value name: graph inputs, value_info (shape inference), outputs.
    void collect_types(const ::onnx::GraphProto& gp);
    // The element type of an optional type (`optional` set), or the type itself.
    static const ::onnx::TypeProto& unwrap_optional(const ::onnx::TypeProto& t, bool& optional);
    // The tensor type of a sequence of tensors; null for any other type.
    static const ::onnx::TypeProto::Tensor* sequence_of_tensors(const ::onnx::TypeProto& t);
    // A graph input or output must be a tensor, or a sequence of tensors, of an element type
    // sgmatch has, or an optional of one.
    void check_value_type(const ::onnx::ValueInfoProto& v, const char* what);
    tensor_type type_of(const std::string& name) const {
        const auto it = types_.find(name);
        return it == types_.end() ? tensor_type{} : it->second;
    }

    void define(const std::string& name, input_ref v, const char* what) {
        if (name.empty()) return;
        if (!values_.emplace(name, v).second)
            throw load_error(std::string("sgmatch::onnx: value '") + name + "' (" + what + ") is produced twice");
    }

    // Kahn's order over value names; every input must be produced somewhere.
    std::vector<int> topological_order(const ::onnx::GraphProto& gp) {
        std::unordered_map<std::string, int> producer;
        for (int i = 0; i < gp.node_size(); ++i) {
            if (first_output(gp.node(i)).empty())
                throw load_error("sgmatch::onnx: node " + std::to_string(i) + " '" + gp.node(i).name() + "' (" +
                                 gp.node(i).op_type() + ") has no output");
            for (const auto& o : gp.node(i).output()) {
                if (o.empty()) continue;
                if (values_.count(o) || !producer.emplace(o, i).second)
                    throw load_error("sgmatch::onnx: value '" + o + "' is produced twice (" + node_label(gp.node(i)) + ")");
            }
        }
        std::vector<int> pending(static_cast<std::size_t>(gp.node_size()), 0);
        std::vector<std::vector<int>> next(static_cast<std::size_t>(gp.node_size()));
        for (int i = 0; i < gp.node_size(); ++i) {
            const auto& n = gp.node(i);
            auto depend = [&](const std::string& in, const std::string& what) {
                if (in.empty() || values_.count(in)) return;
                const auto p = producer.find(in);
                if (p == producer.end())
                    throw load_error("sgmatch::onnx: " + node_label(n) + " " + what + " '" + in +
                                     "' is not produced by any node, graph input or initializer");
                ++pending[static_cast<std::size_t>(i)];
                next[static_cast<std::size_t>(p->second)].push_back(i);
            };
            for (int k = 0; k < n.input_size(); ++k) depend(n.input(k), "input " + std::to_string(k));
            for (const auto& name : body_reads(n, depth_)) depend(name, "body reads");  // a value its bodies read
        }
        std::vector<int> order;
        for (int i = 0; i < gp.node_size(); ++i)
            if (pending[static_cast<std::size_t>(i)] == 0) order.push_back(i);
        for (std::size_t h = 0; h < order.size(); ++h)
            for (const int j : next[static_cast<std::size_t>(order[h])])
                if (--pending[static_cast<std::size_t>(j)] == 0) order.push_back(j);
        if (order.size() != static_cast<std::size_t>(gp.node_size())) {
            for (int i = 0; i < gp.node_size(); ++i)
                if (pending[static_cast<std::size_t>(i)] != 0)
                    throw load_error("sgmatch::onnx: the graph has a cycle through " + node_label(gp.node(i)));
        }
        return order;
    }

    void unsupported(const ::onnx::NodeProto& n, const std::string& why) { detail::unsupported(*report_, n, why); }

    // A Constant node: a constant named by its output.
    bool add_constant_node(graph& g, const ::onnx::NodeProto& n) {
        const std::string name = first_output(n);
        for (const auto& a : n.attribute()) {
            tensor v;
            if (a.name() == "value" && a.has_t()) {
                v = decode(a.t(), base_, o_.max_tensor_bytes);
            } else if (a.name() == "value_float" || a.name() == "value_floats") {
                const std::vector<float> f = a.name() == "value_float" ? std::vector<float>{a.f()}
                                                                       : std::vector<float>(a.floats().begin(), a.floats().end());
                v.type = dtype::f32;
                if (a.name() == "value_floats") v.dims = {static_cast<std::int64_t>(f.size())};
                v.bytes.resize(f.size() * sizeof(float));
                if (!f.empty()) std::memcpy(v.bytes.data(), f.data(), v.bytes.size());
            } else if (a.name() == "value_int" || a.name() == "value_ints") {
                const std::vector<std::int64_t> i = a.name() == "value_int" ? std::vector<std::int64_t>{a.i()}
                                                                            : std::vector<std::int64_t>(a.ints().begin(), a.ints().end());
                v.type = dtype::i64;
                if (a.name() == "value_ints") v.dims = {static_cast<std::int64_t>(i.size())};
                v.bytes.resize(i.size() * sizeof(std::int64_t));
                if (!i.empty()) std::memcpy(v.bytes.data(), i.data(), v.bytes.size());
            } else {
                unsupported(n, "attribute " + a.name() + " (" + kind_name(a) + ") is not supported");
                return false;
            }
            define(name, input_ref(g.add_constant(name, v.dims, v.type, std::move(v.bytes))), "Constant");
            ++report_->constant_nodes;
            return true;
        }
        unsupported(n, "no value");
        return false;
    }

    std::optional<std::size_t> rank_of(const std::string& value) const {
        const auto it = rank_.find(value);
        if (it == rank_.end()) return std::nullopt;
        return it->second;
    }

    // Opset < 7 broadcasting with an `axis`: B's dims line up with A's from that axis on. B is
    // given trailing axes of 1 (a Reshape whose 0s copy B's dims), after which numpy's suffix
    // alignment, what the kernels do, means the same; the attribute goes.
    bool align_legacy_broadcast(graph& g, const ::onnx::NodeProto& n, std::vector<input_ref>& ins,
                                std::vector<std::pair<std::string, attribute>>& attrs) {
        const auto axis_at = std::find_if(attrs.begin(), attrs.end(), [](const auto& a) { return a.first == "axis"; });
        const auto broadcast_at = std::find_if(attrs.begin(), attrs.end(), [](const auto& a) { return a.first == "broadcast"; });
        const auto* schema = ops::find_schema(n.op_type());
        if (opset_ >= 7 || axis_at == attrs.end() || ins.size() != 2 || schema == nullptr || schema->attr("broadcast") == nullptr) return true;
        if (broadcast_at == attrs.end() || broadcast_at->second.as_int().value_or(0) == 0) {  // no broadcasting: the axis says nothing
            attrs.erase(axis_at);
            return true;
        }
        const auto ra = rank_of(n.input(0)), rb = rank_of(n.input(1));
        std::int64_t axis = axis_at->second.as_int().value_or(0);
        if (!ra || !rb) {
            unsupported(n, "opset " + std::to_string(opset_) + " broadcasting at an axis needs both inputs' ranks");
            return false;
        }
        if (axis < 0) axis += static_cast<std::int64_t>(*ra);
        const std::int64_t trailing = static_cast<std::int64_t>(*ra) - axis - static_cast<std::int64_t>(*rb);
        if (axis < 0 || trailing < 0) {
            unsupported(n, "B of rank " + std::to_string(*rb) + " does not fit A of rank " + std::to_string(*ra) + " at axis " +
                               std::to_string(axis_at->second.as_int().value_or(0)));
            return false;
        }
        attrs.erase(axis_at);
        if (trailing == 0) return true;
        std::vector<std::int64_t> shape(*rb, 0);
        shape.resize(shape.size() + static_cast<std::size_t>(trailing), 1);
        std::vector<unsigned char> bytes(shape.size() * sizeof(std::int64_t));
        std::memcpy(bytes.data(), shape.data(), bytes.size());
        const node_id dims = g.add_constant(name_of(n) + ":aligned_shape", {static_cast<std::int64_t>(shape.size())}, dtype::i64, std::move(bytes));
        const node_id aligned = g.add_op("Reshape", name_of(n) + ":aligned", {ins[1], input_ref(dims)});
        ins[1] = input_ref(aligned);
        report_->notes.push_back(node_label(n) + ": opset " + std::to_string(opset_) + " broadcasting at axis " + std::to_string(axis) +
                                 " written as B reshaped with " + std::to_string(trailing) + " trailing axes of 1");
        return true;
    }

    void add_node(graph& g, const ::onnx::NodeProto& n) {
        if (!default_domain(n.domain())) {
            unsupported(n, "domain '" + n.domain() + "' is not supported");
            return add_opaque(g, n);
        }
        check_type_constraints(n);
        if (n.op_type() == "Constant" && n.output_size() == 1 && add_constant_node(g, n)) return;
        const import_rule* rule = import_rule_of(n.op_type());
        const std::string op = rule != nullptr && !rule->written_as.empty() ? std::string(rule->written_as) : n.op_type();
        const ops::op_schema* schema = ops::find_schema(op);
        if (schema == nullptr) {
            unsupported(n, "op " + n.op_type() + " is not supported");
            return add_opaque(g, n);
        }
        if (ops::has_body(*schema)) return add_control(g, n, *schema);
        const import_context ctx{g,
                                 n,
                                 opset_,
                                 *report_,
                                 [this](const std::string& v) { return rank_of(v); },
                                 [this](const std::string& v) {
                                     const auto e = elem_.find(v);
                                     return e == elem_.end() ? dtype::f32 : dtype_of(e->second);
                                 },
                                 [this](const ::onnx::TensorProto& t) { return decode(t, base_, o_.max_tensor_bytes); }};
        // Inputs: trailing absent ones dropped; an absent one before a present one is filled
        // where the op's rule has a meaning for it, else the node is unsupported.
        int last = n.input_size();
        while (last > 0 && n.input(last - 1).empty()) --last;
        std::vector<input_ref> ins;
        for (int k = 0; k < last; ++k) {
            if (!n.input(k).empty()) {
                ins.push_back(values_.at(n.input(k)));
                continue;
            }
            const auto filled = rule != nullptr && rule->absent_input != nullptr ? rule->absent_input(ctx, k) : std::nullopt;
            if (!filled) {
                unsupported(n, "input " + std::to_string(k) + " is absent while a later one is given");
                return add_opaque(g, n);
            }
            ins.push_back(*filled);
        }
        if (rule != nullptr && rule->inputs != nullptr) rule->inputs(ctx, ins);
        attr_list attrs;
        for (const auto& a : n.attribute()) {
            if (rule != nullptr && rule->attribute != nullptr && rule->attribute(ctx, a, attrs)) continue;
            auto v = attribute_of(a);
            if (!v) {
                unsupported(n, "attribute " + a.name() + " (" + kind_name(a) + ") is not supported");
                continue;
            }
            attrs.emplace_back(a.name(), std::move(*v));
        }
        write_opset_meaning(n, opset_, n.input_size() ? rank_of(n.input(0)) : std::nullopt, attrs, *report_);
        if (!write_pads(g, n, ins, attrs, *report_)) return add_opaque(g, n);
        if (!align_legacy_broadcast(g, n, ins, attrs)) return add_opaque(g, n);
        if (rule != nullptr && rule->rewrite != nullptr && !rule->rewrite(ctx, ins, attrs)) return add_opaque(g, n);
        const node_id id = g.add_op(op, name_of(n), ins, {}, static_cast<std::uint32_t>(std::max(1, n.output_size())));
        for (auto& [k, v] : attrs) g.set_attr(id, k, std::move(v));
        finish(g, n, id);
        // The op's description: attributes and input count, every problem at once; then its
        // output shapes from its shape rule.
        try {
            const ops::op_attrs a(*schema, ops::node_of<graph>(g, id));
            check_types(g, n, id, a);
            propagate(g, n, id, a);
        } catch (const ops::op_error& e) {
            const std::string m = e.what();
            const auto colon = m.find("): ");
            report_->unsupported.push_back(node_label(n) + m.substr(colon == std::string::npos ? 0 : colon + 1));
        }
    }

    // The element type of every input and output against what the op's kernels take and make:
    // the data input's type must be one the kernels take (op_schema::dtypes); the outputs get the
    // type the op's type rule gives, and a declared one must agree.
    void check_types(graph& g, const ::onnx::NodeProto& n, node_id id, const ops::op_attrs& a);

    // The node's output shapes by its description's shape rule, when every input's shape is
    // known (constant inputs of up to 64 values lend their values: a Reshape's shape). A shape
    // the model declares must agree; the rule's refusal (inputs that do not fit) is reported.
    void propagate(graph& g, const ::onnx::NodeProto& n, node_id id, const ops::op_attrs& a);

    // Outputs: named values with their declared types (checked against the op in check_types).
    void finish(graph& g, const ::onnx::NodeProto& n, node_id id) {
        for (int p = 0; p < n.output_size(); ++p) {
            const std::string& o = n.output(p);
            if (o.empty()) continue;
            define(o, input_ref(value_ref<node_id>{id, static_cast<std::uint32_t>(p)}), "node output");
            auto t = type_of(o);
            if (t.known()) g.set_type({id, static_cast<std::uint32_t>(p)}, t);
        }
    }

    // The values of enclosing graphs that graph `gp` reads (names it uses but does not define,
    // its nested bodies' included), in order of first use.
    static std::vector<std::string> free_names(const ::onnx::GraphProto& gp, int depth);

    // The values of the enclosing graph that node n's bodies read, in order of first use.
    static std::vector<std::string> body_reads(const ::onnx::NodeProto& n, int depth);

    // A control-flow node (ops/control.hpp): its bodies converted into graphs of their own, which
    // read the enclosing values they use as their last graph inputs; the node takes those
    // values as its last inputs (graph_body).
    void add_control(graph& g, const ::onnx::NodeProto& n, const ops::op_schema& schema);

    // Scan before opset 9: a batch axis first on every state and scanned input and on every
    // output, written as a Loop over the batch whose body takes one batch element of each
    // (Gather) and runs the opset-9 Scan on it; the Loop stacks the results along the batch.
    void add_batched_scan(graph& g, const ::onnx::NodeProto& n);

    // One body as a graph: its own inputs, then the enclosing values `reads` (typed as the
    // enclosing graph knows them), its initializers and nodes, its outputs.
    graph_body convert_body(const graph& outer, const ::onnx::NodeProto& n, const ::onnx::GraphProto& body,
                            const std::vector<std::string>& reads);

    // A node no description covers, kept in the graph (for partitioning and reports).
    void add_opaque(graph& g, const ::onnx::NodeProto& n) {
        std::vector<input_ref> ins;
        for (const auto& i : n.input())
            if (!i.empty()) ins.push_back(values_.at(i));
        const node_id id = g.add_op(n.op_type(), name_of(n), ins, {}, static_cast<std::uint32_t>(std::max(1, n.output_size())));
        for (const auto& a : n.attribute())
            if (auto v = attribute_of(a)) g.set_attr(id, a.name(), std::move(*v));
        for (int p = 0; p < n.output_size(); ++p) {
            if (n.output(p).empty()) continue;
            define(n.output(p), input_ref(value_ref<node_id>{id, static_cast<std::uint32_t>(p)}), "node output");
            auto t = type_of(n.output(p));
            if (t.known()) g.set_type({id, static_cast<std::uint32_t>(p)}, t);
        }
    }

    ::onnx::ModelProto& m_;
    const load_options& o_;
    std::string base_;
    std::int64_t opset_ = 0;
    load_report* report_ = nullptr;
    std::unordered_map<std::string, input_ref> values_;
    std::unordered_map<std::string, tensor_type> types_;
    std::unordered_map<std::string, std::int32_t> elem_;
    std::unordered_map<std::string, std::size_t> rank_;  // values whose rank is known
    std::unordered_map<std::string, std::int64_t> dims_;  // symbolic dims bound
    int depth_ = 0;  // 0: the model's graph; k: a body nested k deep
public:
    static constexpr int max_body_depth = 64;
};

// Parses `m` from `size` bytes with messages nested at most `depth` deep.
inline bool parse_model(::onnx::ModelProto& m, const void* data, std::size_t size, int depth) {
    google::protobuf::io::CodedInputStream in(static_cast<const std::uint8_t*>(data), static_cast<int>(size));
    in.SetRecursionLimit(depth);
    return m.ParseFromCodedStream(&in) && in.ConsumedEntireMessage();
}

inline model load_proto(::onnx::ModelProto& m, const load_options& o, const std::string& base) {
    try {
        return converter(m, o, base).run();
    } catch (const graph_error& e) {
        throw load_error(std::string("sgmatch::onnx: ") + e.what());
    } catch (const ops::size_overflow& e) {  // a shape rule's element count past int64
        std::string_view m = e.what();
        if (m.substr(0, 9) == "sgmatch: ") m.remove_prefix(9);
        throw load_error("sgmatch::onnx: " + std::string(m));
    }
}

}  // namespace detail

SGMATCH_DECL model load_bytes(const void* data, std::size_t size, const load_options& o, const std::string& base_dir) {
    ::onnx::ModelProto m;
    if (size > static_cast<std::size_t>(INT32_MAX)) throw load_error("sgmatch::onnx: a model of over 2 GiB in one protobuf");
    // Each body nests three messages (node, attribute, graph): protobuf's default limit of 100
    // would stop at 32 bodies. The limit here admits the bodies the converter takes; a model
    // that parses only past it is refused as nested too deep (a limit kept finite: the parser
    // recurses on the stack).
    const int limit = 3 * detail::converter::max_body_depth + 16;
    if (!detail::parse_model(m, data, size, limit)) {
        ::onnx::ModelProto deeper;
        if (detail::parse_model(deeper, data, size, 4 * limit))
            throw load_error("sgmatch::onnx: the model's graphs are nested deeper than " +
                             std::to_string(detail::converter::max_body_depth) + " levels (refused)");
        throw load_error("sgmatch::onnx: not an ONNX model (the protobuf does not parse: truncated or corrupt)");
    }
    if (!m.has_graph()) throw load_error("sgmatch::onnx: the model has no graph");
    return detail::load_proto(m, o, base_dir);
}

SGMATCH_DECL model load(std::istream& in, const load_options& o, const std::string& base_dir) {
    const std::string bytes = detail::read_all(in);
    return load_bytes(bytes.data(), bytes.size(), o, base_dir);
}

SGMATCH_DECL model load(const std::string& path, const load_options& o) {
    const detail::file_bytes bytes(path);
    // A bare file name ("model.onnx") lives in the working directory: its external data too.
    const std::filesystem::path dir = std::filesystem::path(path).parent_path();
    return load_bytes(bytes.data(), bytes.size(), o, dir.empty() ? std::string(".") : dir.string());
}

}  // namespace onnx
SGMATCH_END_NAMESPACE

#include "sgmatch/onnx/impl/control.ipp"
#include "sgmatch/onnx/impl/types.ipp"
