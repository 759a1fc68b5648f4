// sgmatch/torch/fused.hpp - the spec of a `sgmatch::run` node: its ops as TorchScript IR.
//
//   std::string spec = describe_region(nodes, inputs, outputs, "onednn");
//   region_spec r = parse_spec(spec);    // r.graph: the ops again; r.constants: which inputs
//
// A fused node must survive torch.jit.save and torch.jit.load, which keep a node's constant
// arguments but nothing on the side: its spec is a string constant holding the matched nodes as
// a graph of their own, printed as TorchScript IR (what `graph.str()` shows), after a header:
//
//   sgmatch.run 1
//   backend onednn
//   constants 1 2
//   graph(%x : Float(1, 3, 8, 8, ...), %w : Float(...), %b : Float(...)):
//     ... the matched nodes, with their scalar and list constants ...
//     return (%y)
//
// Tensor types keep their element type and rank, not their sizes: the node runs on any sizes.
// The graph's inputs are the node's inputs in order; `constants` lists those that are tensor
// constants where the node was made (weights): the kernel treats them as constants (its
// primitives reorder them once), keyed by their data pointers. The IR is the matched nodes
// themselves, so the kernel reads it through the same view and translation as the pass did.
#pragma once

#include <torch/csrc/jit/ir/ir.h>
#include <torch/csrc/jit/ir/irparser.h>

#include <functional>
#include <memory>
#include <sstream>
#include <string>
#include <unordered_map>
#include <vector>

#include "sgmatch/detail/config.hpp"
#include "sgmatch/graph/types.hpp"
#include "sgmatch/torch/translate.hpp"

SGMATCH_BEGIN_NAMESPACE
namespace torch {

/// A parsed spec.
struct region_spec {
    std::string backend;
    std::vector<std::size_t> constants;  // inputs that were tensor constants, ascending
    std::shared_ptr<::torch::jit::Graph> graph;
};

/// The spec of the nodes `set` (in block order) reading `inputs` and producing `outputs`.
inline std::string describe_region(const std::vector<::torch::jit::Node*>& set, const std::vector<::torch::jit::Value*>& inputs,
                                   const std::vector<::torch::jit::Value*>& outputs, const std::string& backend) {
    namespace tj = ::torch::jit;
    auto g = std::make_shared<tj::Graph>();
    std::unordered_map<const tj::Value*, tj::Value*> map;
    std::vector<std::size_t> constants;
    for (std::size_t k = 0; k < inputs.size(); ++k) {
        tj::Value* v = inputs[k];
        if (map.count(v)) throw graph_error("sgmatch::torch::describe_region: input '" + v->debugName() + "' listed twice");
        // A constant typed Tensor? (a bias folded by freezing) holds a tensor: an input of type Tensor.
        const bool optional_tensor = v->type()->cast<c10::TensorType>() == nullptr && is_tensor_value(v);
        tj::Value* in = g->addInput()->setType(optional_tensor ? c10::TensorType::create(::torch::jit::toIValue(v)->toTensor())
                                                                : v->type());
        map[v] = in;
        if (v->node()->kind() == c10::prim::Constant) constants.push_back(k);
    }
    // A value the copied nodes read: an input, a copied node's output, or a non-tensor
    // constant or list construction outside the set, copied in with its own operands.
    std::function<tj::Value*(tj::Value*)> env = [&](tj::Value* v) -> tj::Value* {
        auto it = map.find(v);
        if (it != map.end()) return it->second;
        tj::Node* p = v->node();
        const bool tensor_constant = p->kind() == c10::prim::Constant && is_tensor_value(v);
        if ((p->kind() == c10::prim::Constant && !tensor_constant) || p->kind() == c10::prim::ListConstruct) {
            tj::Node* c = g->insertNode(g->createClone(p, env));
            for (std::size_t i = 0; i < p->outputs().size(); ++i) map[p->output(i)] = c->output(i);
            return map.at(v);
        }
        throw graph_error("sgmatch::torch::describe_region: '" + v->debugName() +
                          "' is read by the fused ops but is neither an input nor computed by them");
    };
    for (tj::Node* n : set) {
        tj::Node* c = g->insertNode(g->createClone(n, env));
        for (std::size_t i = 0; i < n->outputs().size(); ++i) map[n->output(i)] = c->output(i);
    }
    // Without the trace's scopes and source ranges: the IR parser reads neither back.
    for (tj::Node* n : g->nodes()) {
        n->setScope(g->current_scope());
        n->setSourceRange(tj::SourceRange());
    }
    for (tj::Value* v : outputs) {
        auto it = map.find(v);
        if (it == map.end()) throw graph_error("sgmatch::torch::describe_region: output '" + v->debugName() + "' is not computed by the fused ops");
        g->registerOutput(it->second);
    }
    // Element types and ranks only (the ranks the original graph knows or implies: rank_of):
    // the node runs on whatever sizes it is given.
    std::unordered_map<const tj::Value*, const tj::Value*> original;
    for (const auto& [from, to] : map) original[to] = from;
    auto general = [&](tj::Value* v) {
        const auto tt = v->type()->cast<c10::TensorType>();
        if (tt == nullptr) return;
        auto t = tt->dimensionedOnly();
        if (!t->dim()) {
            auto it = original.find(v);
            if (it != original.end())
                if (const auto r = rank_of(it->second)) t = t->withDim(*r);
        }
        // The IR text has no rank without an element type: float, which the kernel checks on
        // every call (another type runs on TorchScript).
        if (t->dim() && !t->scalarType()) t = t->withScalarType(c10::ScalarType::Float);
        v->setType(t);
    };
    for (tj::Value* v : g->inputs()) general(v);
    for (tj::Node* n : g->nodes())
        for (tj::Value* v : n->outputs()) general(v);
    std::ostringstream s;
    s << "sgmatch.run 1\nbackend " << backend << "\nconstants";
    for (std::size_t k : constants) s << ' ' << k;
    s << '\n';
    g->print(s, false);
    return s.str();
}

/// A spec's header: its backend and which inputs were constants.
struct spec_header {
    std::string backend;
    std::vector<std::size_t> constants;  // ascending
};

namespace detail {
inline graph_error malformed_spec(const std::string& what) {
    return graph_error("sgmatch::torch: a malformed sgmatch::run spec: " + what);
}
// Reads the three header lines from `in`, leaving it at the graph.
inline spec_header read_header(std::istream& in) {
    std::string line;
    if (!std::getline(in, line) || line != "sgmatch.run 1") throw malformed_spec("the first line is not 'sgmatch.run 1'");
    spec_header h;
    if (!std::getline(in, line) || line.rfind("backend ", 0) != 0) throw malformed_spec("no 'backend' line");
    h.backend = line.substr(8);
    if (!std::getline(in, line) || line.rfind("constants", 0) != 0) throw malformed_spec("no 'constants' line");
    std::istringstream ks(line.substr(9));
    for (long long k; ks >> k;) {
        if (k < 0 || (!h.constants.empty() && static_cast<std::size_t>(k) <= h.constants.back()))
            throw malformed_spec("constants out of order");
        h.constants.push_back(static_cast<std::size_t>(k));
    }
    if (!ks.eof()) throw malformed_spec("the constants are not numbers");
    return h;
}
}  // namespace detail

/// The header of a spec (its graph not parsed); graph_error for a malformed one.
inline spec_header parse_header(const std::string& spec) {
    std::istringstream in(spec);
    return detail::read_header(in);
}

/// The spec parsed back; graph_error naming what is wrong with a malformed one.
inline region_spec parse_spec(const std::string& spec) {
    std::istringstream in(spec);
    spec_header h = detail::read_header(in);
    region_spec r;
    r.backend = std::move(h.backend);
    r.constants = std::move(h.constants);
    std::string ir((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    r.graph = std::make_shared<::torch::jit::Graph>();
    try {
        ::torch::jit::parseIR(ir, r.graph.get());
    } catch (const std::exception& e) {
        throw detail::malformed_spec(std::string("its graph does not parse: ") + e.what());
    }
    if (!r.constants.empty() && r.constants.back() >= r.graph->inputs().size())
        throw detail::malformed_spec("a constant index past the inputs");
    return r;
}

}  // namespace torch
SGMATCH_END_NAMESPACE
