// sgmatch/onnx/save.hpp - the built-in graph written back as an ONNX model: to look at a
// partition in Netron, or to keep a cleaned-up model.
//
//   sgmatch::onnx::save(m, "fused.onnx", {.fused = sgmatch::onednn::describe_fused});
//
// - Graph inputs become graph inputs, constants initializers (their element type and bytes), op
//   nodes nodes with their attributes; every value gets a unique name (a node's name for its
//   output 0, "name:k" for output k), and its element type and shape where the graph knows them.
// - A fused node (one with a payload) is a node of the domain `fused_domain` ("ai.sgmatch"),
//   its op type the property's name; with `fused` set, it carries the pattern (attribute
//   "pattern", sgmatch's notation) and its member ops (attribute "members").
// - The opset is the loaded model's (save(model, ...)) or options.opset; the nodes are written
//   with the attributes they hold, so an unpartitioned graph loads back to the same graph.
//   ConstantOfShape's value is written back as the tensor attribute ONNX has. A control-flow
//   node's bodies are graph attributes; the enclosing values a body reads (the node's last
//   inputs, graph_body) are written as ONNX's outer-scope names, not as inputs.
// libonnx's checker (onnx::checker::check_model) accepts what this writes (a test checks it).
#pragma once

#include <any>
#include <cstdint>
#include <cstring>
#include <fstream>
#include <functional>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include <onnx/onnx_pb.h>

#include "sgmatch/detail/config.hpp"
#include "sgmatch/graph/graph.hpp"
#include "sgmatch/onnx/load.hpp"
#include "sgmatch/onnx/tensor.hpp"
#include "sgmatch/partition/property.hpp"

SGMATCH_BEGIN_NAMESPACE
namespace onnx {

struct save_options {
    std::int64_t opset = 17;                 // of the default domain (save(model, ...) uses the model's)
    std::string producer = "sgmatch";
    std::string fused_domain = "ai.sgmatch";
    /// Describes a fused node's payload (onednn::describe_fused for the oneDNN backend's).
    std::function<std::optional<fused_description>(const std::any&)> fused;
};

/// The ONNX element type code of a dtype (UNDEFINED for unknown).
inline std::int32_t onnx_type_of(dtype t) {
    using T = ::onnx::TensorProto;
    switch (t) {
        case dtype::f32: return T::FLOAT;
        case dtype::f16: return T::FLOAT16;
        case dtype::bf16: return T::BFLOAT16;
        case dtype::f64: return T::DOUBLE;
        case dtype::i8: return T::INT8;
        case dtype::u8: return T::UINT8;
        case dtype::i32: return T::INT32;
        case dtype::i64: return T::INT64;
        case dtype::boolean: return T::BOOL;
        case dtype::i16: return T::INT16;
        case dtype::u16: return T::UINT16;
        case dtype::u32: return T::UINT32;
        case dtype::u64: return T::UINT64;
        case dtype::unknown: break;
    }
    return T::UNDEFINED;
}

namespace detail {

class writer {
public:
    writer(const graph& g, const save_options& o) : g_(g), o_(o) {}
    // A writer of a body of the graph another writer writes: names unique across both.
    writer(const graph& g, const save_options& o, std::set<std::string>* taken) : g_(g), o_(o), taken_(taken) {}

    ::onnx::ModelProto run() {
        ::onnx::ModelProto m;
        m.set_ir_version(8);
        m.set_producer_name(o_.producer);
        auto* op = m.add_opset_import();
        op->set_domain("");
        op->set_version(o_.opset);
        ::onnx::GraphProto& gp = *m.mutable_graph();
        gp.set_name("sgmatch");
        write(gp, {}, static_cast<std::size_t>(-1));
        if (fused_seen_) {
            auto* f = m.add_opset_import();
            f->set_domain(o_.fused_domain);
            f->set_version(1);
        }
        return m;
    }

private:
    // The graph into gp. Its graph inputs after the first `own` are values of the enclosing
    // graph (a body's, graph_body), named `enclosing` there: they keep those names and are not
    // inputs of gp (ONNX's outer-scope names).
    void write(::onnx::GraphProto& gp, const std::vector<std::string>& enclosing, std::size_t own) {
        names_.assign(g_.index_bound(), {});
        std::vector<bool> outer(g_.index_bound(), false);
        std::size_t input = 0;
        for (node_id n : g_.nodes()) {
            names_[n.value].resize(g_.output_count(n));
            if (g_.kind(n) == node_kind::input && input++ >= own) {
                outer[n.value] = true;
                names_[n.value][0] = enclosing.at(input - 1 - own);
                continue;
            }
            for (std::uint32_t p = 0; p < g_.output_count(n); ++p) {
                std::string base(g_.name(n));
                if (base.empty()) base = "v" + std::to_string(n.value);
                if (p > 0) base += ":" + std::to_string(p);
                names_[n.value][p] = unique(base);
            }
        }
        for (node_id n : g_.nodes()) {
            switch (g_.kind(n)) {
                case node_kind::input:
                    if (!outer[n.value]) value_info(gp.add_input(), {n, 0}, "graph input");
                    break;
                case node_kind::constant: initializer(gp, n); break;
                case node_kind::op: fused_seen_ = node(gp, n) || fused_seen_; break;
            }
        }
        for (std::size_t i = 0; i < g_.graph_output_count(); ++i) value_info(gp.add_output(), g_.graph_output(i), "graph output");
        for (node_id n : g_.nodes())
            if (g_.kind(n) == node_kind::op)
                for (std::uint32_t p = 0; p < g_.output_count(n); ++p)
                    if (!g_.is_graph_output(n, p) && g_.value_type(n, p) && type_of({n, p}) != dtype::unknown)
                        value_info(gp.add_value_info(), {n, p}, nullptr);
    }

    // A value's element type: declared, else what its op's description makes of its inputs'
    // types (a fused node computes f32); unknown when neither says.
    dtype type_of(graph::value v) {
        if (const auto t = g_.value_type(v.node, v.port); t && t->type != dtype::unknown) return t->type;
        auto& memo = types_[v.node.value];
        if (g_.kind(v.node) == node_kind::input && !memo.empty()) return memo[0];  // an enclosing value's (enclose)
        if (g_.kind(v.node) != node_kind::op) return dtype::unknown;
        if (memo.empty()) {
            memo.assign(g_.output_count(v.node), dtype::unknown);
            const ops::op_schema* s = ops::find_schema(g_.op_name(v.node));
            if (g_.payload(v.node).has_value()) {
                memo.assign(memo.size(), dtype::f32);
            } else if (s != nullptr && ops::has_body(*s)) {  // what its (first) body computes
                const graph_body* b = nullptr;
                g_.for_each_attr(v.node, [&](std::string_view, const attribute& x) {
                    if (b == nullptr && x.as_graph() && x.as_graph()->g) b = x.as_graph();
                });
                const std::size_t skip = g_.op_name(v.node) == "Loop" ? 1 : 0;  // the body's condition
                if (b != nullptr) {
                    writer w(*b->g, o_, taken_);
                    w.enclose(enclosing_types(v.node), b->own_inputs);
                    for (std::size_t p = 0; p < memo.size() && p + skip < b->g->graph_output_count(); ++p)
                        memo[p] = w.type_of(b->g->graph_output(p + skip));
                }
            } else if (s != nullptr) {
                std::vector<dtype> in;
                for (std::size_t i = 0; i < g_.input_count(v.node); ++i) in.push_back(type_of(g_.input(v.node, i)));
                try {
                    const ops::op_attrs a(*s, ops::node_of<graph>(g_, v.node));
                    for (std::size_t p = 0; p < memo.size(); ++p) memo[p] = ops::output_type(a, in, p);
                    if (in.empty() && s->output_kind == ops::value_kind::optional && a.has("type"))  // an empty Optional
                        if (const auto t = ops::parse_type_notation(a.s("type"))) memo[0] = t->type;
                } catch (const ops::op_error&) {
                    // a node its description refuses: its types stay unknown
                }
            }
        }
        return memo[v.port];
    }
    // The types of node n's last inputs that are enclosing values its bodies read.
    std::vector<dtype> enclosing_types(node_id n) {
        std::vector<dtype> t;
        const std::size_t c = enclosing_inputs(n);
        for (std::size_t k = g_.input_count(n) - c; k < g_.input_count(n); ++k) t.push_back(type_of(g_.input(n, k)));
        return t;
    }
    // As a body: its graph inputs after the first `own` are enclosing values of types `t`.
    void enclose(const std::vector<dtype>& t, std::size_t own) {
        std::size_t input = 0;
        for (node_id n : g_.nodes()) {
            if (g_.kind(n) != node_kind::input) continue;
            if (input >= own && input - own < t.size()) types_[n.value].assign(1, t[input - own]);
            ++input;
        }
    }

    std::string unique(std::string s) {
        if (taken_->insert(s).second) return s;
        for (int k = 1;; ++k)
            if (taken_->insert(s + "#" + std::to_string(k)).second) return s + "#" + std::to_string(k);
    }
    // How many of node n's last inputs are enclosing values its bodies read (graph_body).
    std::size_t enclosing_inputs(node_id n) const {
        std::size_t c = 0;
        g_.for_each_attr(n, [&](std::string_view, const attribute& v) {
            if (const graph_body* b = v.as_graph(); b && b->g) {
                std::size_t inputs = 0;
                for (node_id k : b->g->nodes()) inputs += b->g->kind(k) == node_kind::input ? 1 : 0;
                c = inputs - std::min(inputs, b->own_inputs);
            }
        });
        return std::min(c, g_.input_count(n));
    }
    const std::string& name(graph::value v) const { return names_[v.node.value].at(v.port); }

    // A value's name and type; `what` names a graph input or output, whose element type must be
    // known (declared or derived: type_of).
    void value_info(::onnx::ValueInfoProto* vi, graph::value v, const char* what) {
        vi->set_name(name(v));
        const auto t = g_.value_type(v.node, v.port);
        auto* tt = type_proto(vi->mutable_type(), t.value_or(tensor_type{}));
        const dtype type = type_of(v);
        if (type == dtype::unknown && what != nullptr)
            throw load_error(std::string("sgmatch::onnx::save: the element type of ") + what + " '" + name(v) +
                             "' is neither declared nor derived from its op's description");
        tt->set_elem_type(onnx_type_of(type));
        if (t && (t->ranked() || g_.kind(v.node) == node_kind::constant)) {
            auto* s = tt->mutable_shape();
            for (auto d : t->dims) {
                auto* dim = s->add_dim();
                if (d >= 0) dim->set_dim_value(d);
            }
        }
    }

    // The type's kind written to `tp` (an optional, a sequence, a tensor), its tensor type
    // returned with the element type set.
    static ::onnx::TypeProto::Tensor* type_proto(::onnx::TypeProto* tp, const tensor_type& t) {
        if (t.optional) tp = tp->mutable_optional_type()->mutable_elem_type();
        if (t.sequence) tp = tp->mutable_sequence_type()->mutable_elem_type();
        ::onnx::TypeProto::Tensor* tt = tp->mutable_tensor_type();
        tt->set_elem_type(onnx_type_of(t.type));
        return tt;
    }

    void initializer(::onnx::GraphProto& gp, node_id n) {
        const auto c = g_.constant(n);
        if (!c || c->data == nullptr)
            throw load_error("sgmatch::onnx::save: constant '" + std::string(g_.name(n)) + "' has no data");
        ::onnx::TensorProto& t = *gp.add_initializer();
        t.set_name(name({n, 0}));
        t.set_data_type(onnx_type_of(c->type));
        for (std::size_t i = 0; i < c->rank; ++i) t.add_dims(c->dims[i]);
        t.set_raw_data(std::string(static_cast<const char*>(c->data),
                                   static_cast<std::size_t>(c->element_count()) * size_of(c->type)));
    }

    // Returns whether the node is a fused one.
    bool node(::onnx::GraphProto& gp, node_id n) {
        ::onnx::NodeProto& p = *gp.add_node();
        p.set_name(std::string(g_.name(n)));
        p.set_op_type(std::string(g_.op_name(n)));
        const std::size_t enclosing = enclosing_inputs(n);
        for (std::size_t i = 0; i + enclosing < g_.input_count(n); ++i) p.add_input(name(g_.input(n, i)));
        for (std::uint32_t k = 0; k < g_.output_count(n); ++k) p.add_output(name({n, k}));
        const bool fused = g_.payload(n).has_value();
        if (fused) {
            p.set_domain(o_.fused_domain);
            if (o_.fused)
                if (const auto f = o_.fused(g_.payload(n))) {
                    auto* a = p.add_attribute();
                    a->set_name("pattern");
                    a->set_type(::onnx::AttributeProto::STRING);
                    a->set_s(f->pattern);
                    auto* m = p.add_attribute();
                    m->set_name("members");
                    m->set_type(::onnx::AttributeProto::STRINGS);
                    for (const auto& s : f->members) m->add_strings(s);
                }
        }
        const bool constant_of_shape = g_.op_name(n) == "ConstantOfShape";
        const ops::op_schema* schema = ops::find_schema(g_.op_name(n));
        g_.for_each_attr(n, [&](std::string_view key, const attribute& v) {
            if (constant_of_shape && (key == "value" || key == "dtype")) return;  // written below as ONNX has it
            if (const graph_body* b = v.as_graph()) return body(p.add_attribute(), key, n, *b, enclosing);
            const ops::attr_spec* spec = schema != nullptr ? schema->attr(key) : nullptr;
            if (spec != nullptr && spec->type == ops::attr_type::type && v.as_string()) {  // a TypeProto, in ONNX's notation here
                const auto t = ops::parse_type_notation(*v.as_string());
                if (!t)
                    throw load_error("sgmatch::onnx::save: node '" + std::string(g_.name(n)) + "': attribute " + std::string(key) + " = '" +
                                     std::string(*v.as_string()) + "' is not a type sgmatch has");
                auto* a = p.add_attribute();
                a->set_name(std::string(key));
                a->set_type(::onnx::AttributeProto::TYPE_PROTO);
                type_proto(a->mutable_tp(), *t);
                return;
            }
            attribute_of(p.add_attribute(), key, v);
        });
        if (constant_of_shape) {
            const auto code = g_.attr(n, "dtype").value_or(attribute(std::int64_t{1})).as_int().value_or(1);
            const auto value = g_.attr(n, "value");
            const double x = value && value->as_reals() && !value->as_reals()->empty() ? value->as_reals()->front()
                             : value && value->as_ints() && !value->as_ints()->empty() ? static_cast<double>(value->as_ints()->front())
                                                                                      : 0.0;
            const dtype t = dtype_of(static_cast<std::int32_t>(code));
            auto* a = p.add_attribute();
            a->set_name("value");
            a->set_type(::onnx::AttributeProto::TENSOR);
            ::onnx::TensorProto& tp = *a->mutable_t();
            tp.set_data_type(static_cast<std::int32_t>(code));
            tp.add_dims(1);
            exec::value one = exec::value::zeros(t == dtype::unknown ? dtype::f32 : t, {1});
            exec::visit_type(one.type(), [&](auto k) {
                using T = typename decltype(k)::type;
                one.as<T>()[0] = static_cast<T>(x);
            });
            tp.set_raw_data(std::string(static_cast<const char*>(one.data()), one.bytes()));
        }
        return fused;
    }

    // A body: a graph attribute, its enclosing values named as node n's last inputs are here.
    void body(::onnx::AttributeProto* a, std::string_view key, node_id n, const graph_body& b, std::size_t enclosing) {
        a->set_name(std::string(key));
        a->set_type(::onnx::AttributeProto::GRAPH);
        std::vector<std::string> names;
        for (std::size_t k = g_.input_count(n) - enclosing; k < g_.input_count(n); ++k) names.push_back(name(g_.input(n, k)));
        writer w(*b.g, o_, taken_);
        w.enclose(enclosing_types(n), b.own_inputs);
        ::onnx::GraphProto& gp = *a->mutable_g();
        gp.set_name(std::string(g_.name(n)) + ":" + std::string(key));
        w.write(gp, names, b.own_inputs);
        fused_seen_ = fused_seen_ || w.fused_seen_;
    }

    static void attribute_of(::onnx::AttributeProto* a, std::string_view key, const attribute& v) {
        using A = ::onnx::AttributeProto;
        a->set_name(std::string(key));
        switch (v.kind()) {
            case attribute::type::integer:
                a->set_type(A::INT);
                a->set_i(*v.as_int());
                break;
            case attribute::type::real:
                a->set_type(A::FLOAT);
                a->set_f(static_cast<float>(*v.as_real()));
                break;
            case attribute::type::string:
                a->set_type(A::STRING);
                a->set_s(std::string(*v.as_string()));
                break;
            case attribute::type::integers:
                a->set_type(A::INTS);
                for (auto x : *v.as_ints()) a->add_ints(x);
                break;
            case attribute::type::reals:
                a->set_type(A::FLOATS);
                for (auto x : *v.as_reals()) a->add_floats(static_cast<float>(x));
                break;
            case attribute::type::graph: break;  // written by body()
        }
    }

    const graph& g_;
    const save_options& o_;
    std::vector<std::vector<std::string>> names_;
    std::vector<std::vector<dtype>> types_ = std::vector<std::vector<dtype>>(g_.index_bound());  // type_of's, by node
    std::set<std::string> own_taken_;
    std::set<std::string>* taken_ = &own_taken_;  // names used in this graph and the graphs around it
    bool fused_seen_ = false;
};

}  // namespace detail

/// The graph as an ONNX ModelProto (see the header comment).
inline ::onnx::ModelProto to_proto(const graph& g, const save_options& o = {}) { return detail::writer(g, o).run(); }

/// The graph as the bytes of an ONNX file.
inline std::string save_bytes(const graph& g, const save_options& o = {}) {
    std::string out;
    if (!to_proto(g, o).SerializeToString(&out)) throw load_error("sgmatch::onnx::save: the model does not serialize");
    return out;
}

/// The graph written to `path`.
inline void save(const graph& g, const std::string& path, const save_options& o = {}) {
    const std::string bytes = save_bytes(g, o);
    std::ofstream f(path, std::ios::binary);
    if (!f || !f.write(bytes.data(), static_cast<std::streamsize>(bytes.size())))
        throw load_error("sgmatch::onnx::save: cannot write '" + path + "'");
}

/// A loaded model written back at its own opset.
inline void save(const model& m, const std::string& path, save_options o = {}) {
    o.opset = m.opset;
    save(m.graph, path, o);
}

}  // namespace onnx
SGMATCH_END_NAMESPACE
