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
    static std::string constraint_name(std::int32_t t) {
        std::string n = onnx_type_name(t);
        for (char& c : n) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
        return n;
    }

    // Each input whose element type is known against the op's type constraints in libonnx's
    // schema (ONNX's checker's rule): inputs bound to one type parameter share one type, and
    // that type is one the parameter allows.
    void check_type_constraints(const ::onnx::NodeProto& n) const {
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

    // Shapes and types by value name: graph inputs, value_info (shape inference), outputs.
    void collect_types(const ::onnx::GraphProto& gp) {
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
    // The element type of an optional type (`optional` set), or the type itself.
    static const ::onnx::TypeProto& unwrap_optional(const ::onnx::TypeProto& t, bool& optional) {
        optional = t.has_optional_type() && t.optional_type().has_elem_type();
        return optional ? t.optional_type().elem_type() : t;
    }
    // The tensor type of a sequence of tensors; null for any other type.
    static const ::onnx::TypeProto::Tensor* sequence_of_tensors(const ::onnx::TypeProto& t) {
        if (!t.has_sequence_type() || !t.sequence_type().has_elem_type() || !t.sequence_type().elem_type().has_tensor_type()) return nullptr;
        return &t.sequence_type().elem_type().tensor_type();
    }
    // A graph input or output must be a tensor, or a sequence of tensors, of an element type
    // sgmatch has, or an optional of one.
    void check_value_type(const ::onnx::ValueInfoProto& v, const char* what) {
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

    // Whether a recurrent node's `activations` are the defaults, for each direction: Tanh (RNN);
    // Sigmoid, Tanh (GRU); Sigmoid, Tanh, Tanh (LSTM).
    static bool default_activations(const ::onnx::NodeProto& n, const ::onnx::AttributeProto& a) {
        const std::vector<std::string> one = n.op_type() == "RNN"   ? std::vector<std::string>{"Tanh"}
                                             : n.op_type() == "GRU" ? std::vector<std::string>{"Sigmoid", "Tanh"}
                                                                    : std::vector<std::string>{"Sigmoid", "Tanh", "Tanh"};
        if (a.strings_size() == 0 || a.strings_size() % static_cast<int>(one.size()) != 0) return false;
        for (int i = 0; i < a.strings_size(); ++i)
            if (a.strings(i) != one[static_cast<std::size_t>(i) % one.size()]) return false;
        return true;
    }

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

    // A constant scalar standing for Clip's absent bound: the lowest or the highest value of the
    // data's element type (f32's where the model does not declare the type).
    input_ref bound_filler(graph& g, const std::string& name, const std::string& data, bool low) {
        const auto e = elem_.find(data);
        const dtype t = e == elem_.end() ? dtype::f32 : dtype_of(e->second);
        std::vector<unsigned char> b;
        auto put = [&](auto lo, auto hi) {
            const auto v = low ? lo : hi;
            b.resize(sizeof v);
            std::memcpy(b.data(), &v, sizeof v);
        };
        switch (t) {
            case dtype::f64: put(std::numeric_limits<double>::lowest(), std::numeric_limits<double>::max()); break;
            case dtype::i64: put(std::numeric_limits<std::int64_t>::min(), std::numeric_limits<std::int64_t>::max()); break;
            case dtype::i32: put(std::numeric_limits<std::int32_t>::min(), std::numeric_limits<std::int32_t>::max()); break;
            case dtype::i8: put(std::numeric_limits<std::int8_t>::min(), std::numeric_limits<std::int8_t>::max()); break;
            case dtype::u8: put(std::numeric_limits<std::uint8_t>::min(), std::numeric_limits<std::uint8_t>::max()); break;
            default: put(-FLT_MAX, FLT_MAX); break;
        }
        const bool typed = t == dtype::f64 || t == dtype::i64 || t == dtype::i32 || t == dtype::i8 || t == dtype::u8;
        return input_ref(g.add_constant(name, {}, typed ? t : dtype::f32, std::move(b)));
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
        // Upsample is written as Resize (write_upsample).
        const std::string op = n.op_type() == "Upsample" ? std::string("Resize") : n.op_type();
        const ops::op_schema* schema = ops::find_schema(op);
        if (schema == nullptr) {
            unsupported(n, "op " + n.op_type() + " is not supported");
            return add_opaque(g, n);
        }
        if (ops::has_body(*schema)) return add_control(g, n, *schema);
        // Inputs: trailing absent ones dropped; an absent one before a present one is filled
        // where the op has a meaning for it, else the node is unsupported.
        int last = n.input_size();
        while (last > 0 && n.input(last - 1).empty()) --last;
        std::vector<input_ref> ins;
        for (int k = 0; k < last; ++k) {
            if (!n.input(k).empty()) {
                ins.push_back(values_.at(n.input(k)));
            } else if (n.op_type() == "Clip" && (k == 1 || k == 2)) {
                ins.push_back(bound_filler(g, name_of(n) + (k == 1 ? ":min" : ":max"), n.input(0), k == 1));
            } else if (op == "Resize" && (k == 1 || k == 2)) {  // no roi; no scales, sizes given
                ins.push_back(input_ref(g.add_constant(name_of(n) + (k == 1 ? ":roi" : ":scales"), {0}, dtype::f32, {})));
            } else if (((op == "RNN" || op == "GRU" || op == "LSTM") && k >= 3) || (op == "STFT" && k == 2)) {  // an optional input of zero elements is absent
                ins.push_back(input_ref(g.add_constant(name_of(n) + ":absent" + std::to_string(k), {0}, dtype::f32, {})));
            } else {
                unsupported(n, "input " + std::to_string(k) + " is absent while a later one is given");
                return add_opaque(g, n);
            }
        }
        // PRelu before opset 7: a slope of one value per channel lies along axis 1.
        if (n.op_type() == "PRelu" && opset_ < 7 && ins.size() == 2) {
            const std::size_t x_rank = rank_of(n.input(0)).value_or(0);
            const auto slope = g.constant(ins[1].v.node);
            if (slope && slope->rank == 1 && x_rank > 2 && slope->dims[0] > 1) {
                std::vector<std::int64_t> dims(1, slope->dims[0]);
                dims.resize(x_rank - 1, 1);
                const auto* b = static_cast<const unsigned char*>(slope->data);
                std::vector<unsigned char> bytes;
                if (b) bytes.assign(b, b + static_cast<std::size_t>(slope->element_count()) * size_of(slope->type));
                ins[1] = input_ref(g.add_constant(n.input(1) + ":per_channel", dims, slope->type, std::move(bytes)));
                report_->notes.push_back(node_label(n) + ": opset " + std::to_string(opset_) + " PRelu slope laid along axis 1");
            }
        }
        std::vector<std::pair<std::string, attribute>> attrs;
        for (const auto& a : n.attribute()) {
            if (n.op_type() == "ConstantOfShape" && a.name() == "value" && a.has_t()) {
                // One number and its element type (the description's two attributes).
                const tensor t = decode(a.t(), base_, o_.max_tensor_bytes);
                const auto v = t.to_floats();
                if (v.size() != 1) {
                    unsupported(n, "value has " + std::to_string(v.size()) + " elements, not 1");
                    continue;
                }
                attrs.emplace_back("value", attribute(attribute::reals{t.view().at(0)}));
                attrs.emplace_back("dtype", attribute(static_cast<std::int64_t>(a.t().data_type())));
                continue;
            }
            if (a.name() == "activations" && (op == "RNN" || op == "GRU" || op == "LSTM")) {
                // A list of names: the defaults (what exporters write out) need no attribute.
                if (!default_activations(n, a)) {
                    std::string names;
                    for (const auto& f : a.strings()) names += (names.empty() ? "" : ", ") + f;
                    unsupported(n, "activations [" + names + "]: only the defaults are implemented");
                }
                continue;
            }
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
        if (op == "Resize" && (n.op_type() == "Upsample" || opset_ < 11) && !write_upsample(g, n, opset_, ins, attrs, *report_))
            return add_opaque(g, n);
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
    void check_types(graph& g, const ::onnx::NodeProto& n, node_id id, const ops::op_attrs& a) {
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

    // The node's output shapes by its description's shape rule, when every input's shape is
    // known (constant inputs of up to 64 values lend their values: a Reshape's shape). A shape
    // the model declares must agree; the rule's refusal (inputs that do not fit) is reported.
    void propagate(graph& g, const ::onnx::NodeProto& n, node_id id, const ops::op_attrs& a) {
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
    static std::vector<std::string> free_names(const ::onnx::GraphProto& gp, int depth) {
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
    // The values of the enclosing graph that node n's bodies read, in order of first use.
    static std::vector<std::string> body_reads(const ::onnx::NodeProto& n, int depth) {
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

    // A control-flow node (ops/control.hpp): its bodies converted into graphs of their own, which
    // read the enclosing values they use as their last graph inputs; the node takes those
    // values as its last inputs (graph_body).
    void add_control(graph& g, const ::onnx::NodeProto& n, const ops::op_schema& schema) {
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

    // Scan before opset 9: a batch axis first on every state and scanned input and on every
    // output, written as a Loop over the batch whose body takes one batch element of each
    // (Gather) and runs the opset-9 Scan on it; the Loop stacks the results along the batch.
    void add_batched_scan(graph& g, const ::onnx::NodeProto& n) {
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

    // One body as a graph: its own inputs, then the enclosing values `reads` (typed as the
    // enclosing graph knows them), its initializers and nodes, its outputs.
    graph_body convert_body(const graph& outer, const ::onnx::NodeProto& n, const ::onnx::GraphProto& body,
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
