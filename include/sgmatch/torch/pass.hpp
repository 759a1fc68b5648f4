// sgmatch/torch/pass.hpp - the TorchScript pass: sgmatch's oneDNN fusions on a PyTorch graph.
//
//   sgmatch::torch::report r = sgmatch::torch::optimize(module);   // a scripted module, in place
//   sgmatch::torch::report r = sgmatch::torch::optimize(graph);    // a std::shared_ptr<Graph>
//   std::cout << r.text();                                          // fused, declined and why
//
// The module form freezes a module that is not frozen yet (in place: weights become constants,
// which the fused kernels need) and refuses one in training mode. Then, for the graph and each
// block nested in it (the bodies of prim::If and prim::Loop), innermost first:
// - first, on the whole graph, FrozenLinearTranspose: a linear whose weight is a constant becomes
//   matmul(x, W^T) + b, with W^T a constant made once (W goes when nothing else reads it), which
//   the fusions take at any rank (a Gemm is 2-D only);
// - RemoveTensorMutation turns in-place ops into their pure forms where that is safe (relu_,
//   add_); a block where an op still writes a tensor in place is not rewritten (an aliasing
//   write could be reordered across a fused node), and the report says which op; a match whose
//   outputs a side-effecting node reads between its members is declined (view::why_not);
// - the view (view.hpp) reads the block; the backend is applied through it: "onednn" (the
//   ready-made fused properties, each match one node) or "onednn.regions" (each maximal region of
//   supported ops one node, the fusions applied inside: oneDNN's blocked layouts kept between
//   them);
// - every node made is a `sgmatch::run` call (run.hpp) whose spec holds its ops (fused.hpp);
//   dead code left behind is removed.
// A module must be optimized before its first run: TorchScript keeps the plan it made for a
// method at the first call.
#pragma once

#include <torch/csrc/jit/api/module.h>
#include <torch/csrc/jit/ir/ir.h>
#include <torch/csrc/jit/passes/dead_code_elimination.h>
#include <torch/csrc/jit/passes/freeze_module.h>
#include <torch/csrc/jit/passes/frozen_linear_transpose.h>
#include <torch/csrc/jit/passes/remove_mutation.h>
#include <torch/csrc/jit/passes/shape_analysis.h>

#include <map>
#include <optional>
#include <memory>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

#include "sgmatch/detail/config.hpp"
#include "sgmatch/exec/subgraph.hpp"
#include "sgmatch/onednn/backend.hpp"
#include "sgmatch/partition/partition.hpp"
#include "sgmatch/torch/view.hpp"

SGMATCH_BEGIN_NAMESPACE
namespace torch {

struct options {
    /// "onednn" (each match of a fused pattern one node) or "onednn.regions" (each region of
    /// supported ops one node, the fusions applied inside it).
    std::string backend = "onednn";
    /// The smallest region "onednn.regions" makes into a node.
    std::size_t min_region = 2;
    /// One tensor for each tensor input of the graph, in order (none: no shapes). Their types
    /// are propagated through the graph (PropagateInputShapes) for the rewrite, which then knows
    /// ranks (a linear on a 2-D input is a Gemm) and element types; the graph keeps no sizes
    /// afterwards, and the nodes made run on any sizes.
    std::vector<at::Tensor> example_inputs;
};

/// What optimize did.
struct report {
    std::size_t nodes_before = 0;  // nodes of the graph and its blocks, constants and list plumbing excluded
    std::size_t nodes_after = 0;
    std::size_t fused = 0;         // sgmatch::run nodes made
    std::map<std::string, std::size_t> fused_by;        // by property
    std::vector<std::pair<std::string, std::string>> declined;  // node, reason (the view's and the properties')
    std::vector<std::string> blocks_left;               // blocks not rewritten, with the reason

    /// A readable summary, one fact a line.
    std::string text() const {
        std::ostringstream s;
        s << "sgmatch: " << fused << " fused node" << (fused == 1 ? "" : "s") << ", nodes " << nodes_before << " -> "
          << nodes_after << "\n";
        for (const auto& [p, n] : fused_by) s << "  " << p << ": " << n << "\n";
        for (const auto& [n, why] : declined) s << "  declined " << n << ": " << why << "\n";
        for (const auto& b : blocks_left) s << "  not rewritten: " << b << "\n";
        return s.str();
    }
};

namespace detail {

inline std::size_t count_nodes(const ::torch::jit::Block* b) {
    std::size_t n = 0;
    for (const ::torch::jit::Node* x : b->nodes()) {
        const auto k = x->kind();
        if (k != c10::prim::Constant && k != c10::prim::ListConstruct && k != c10::prim::ListUnpack) ++n;
        for (const ::torch::jit::Block* sub : x->blocks()) n += count_nodes(sub);
    }
    return n;
}

// The first node of b (not of its nested blocks) that writes a tensor in place (a list's
// append does not: lists are never fused, and a cat reads only a list nothing else touches).
inline const ::torch::jit::Node* first_mutation(const ::torch::jit::Block* b) {
    for (const ::torch::jit::Node* n : b->nodes()) {
        const c10::FunctionSchema* s = n->maybeSchema();
        if (s == nullptr || !s->is_mutable()) continue;
        for (const c10::Argument& a : s->arguments())
            if (a.alias_info() != nullptr && a.alias_info()->isWrite() && a.type()->cast<c10::TensorType>() != nullptr) return n;
    }
    return nullptr;
}

// b's properties, each checking first that its match can become one node in place (view::why_not).
inline backend<view> checked(const backend<view>& b) {
    backend<view> out(b.name());
    for (const property<view>& p : b.properties()) {
        property<view> q = p;
        q.check([own = p.checker()](const view& g, const std::uint32_t* nodes, std::size_t count) {
            std::string why = g.why_not(nodes, count);
            if (why.empty() && own) why = own(g, nodes, count);
            return why;
        });
        out.add(std::move(q));
    }
    return out;
}

inline const backend<view>& fused_backend() {
    static const backend<view> b = checked(onednn::make_backend<view>());
    return b;
}
inline const backend<view>& region_backend(std::size_t min_size) {
    static std::mutex m;
    static std::map<std::size_t, std::shared_ptr<const backend<view>>> made;
    std::lock_guard<std::mutex> lock(m);
    auto& b = made[min_size];
    if (b == nullptr) {
        backend<view> r("onednn.regions");
        r.add(exec::make_region_property<view>("onednn.regions", min_size));
        b = std::make_shared<const backend<view>>(checked(r));
    }
    return *b;
}

inline void optimize_block(::torch::jit::Block* b, const options& opt, report& rep) {
    for (::torch::jit::Node* n : b->nodes())
        for (::torch::jit::Block* sub : n->blocks()) optimize_block(sub, opt, rep);
    if (const ::torch::jit::Node* m = first_mutation(b)) {
        rep.blocks_left.push_back(std::string(m->kind().toQualString()) + " writes in place ('" +
                                  (m->outputs().empty() ? std::string("?") : m->output(0)->debugName()) + "')");
        return;
    }
    std::optional<view> built;
    try {
        built.emplace(b, opt.backend);
    } catch (const graph_error& e) {  // a form the view cannot read: the block stays as it is
        rep.blocks_left.push_back(e.what());
        return;
    }
    view& v = *built;
    for (const auto& d : v.declined()) rep.declined.push_back(d);
    const backend<view>& be = opt.backend == "onednn.regions" ? region_backend(opt.min_region) : fused_backend();
    apply_options ao;
    static const environment quiet{};  // the caller's options, not the process's SGMATCH_* variables
    ao.env = &quiet;
    for (const property_report& p : apply_backend(v, be, ao)) {
        if (p.accepted > 0) rep.fused_by[p.property] += p.accepted;
        rep.fused += p.accepted;
        for (const auto& [why, count] : p.check_reasons)
            rep.declined.emplace_back(p.property + " (" + std::to_string(count) + "x)", why);
    }
}

}  // namespace detail

/// Rewrites g in place (see the top of this file).
inline report optimize(const std::shared_ptr<::torch::jit::Graph>& g, const options& opt = {}) {
    if (opt.backend != "onednn" && opt.backend != "onednn.regions")
        throw backend_error("sgmatch::torch::optimize: backend '" + opt.backend + "' (known: onednn, onednn.regions)");
    report rep;
    rep.nodes_before = detail::count_nodes(g->block());
    std::shared_ptr<::torch::jit::Graph> graph = g;
    ::torch::jit::FrozenLinearTranspose(graph);
    ::torch::jit::RemoveTensorMutation(graph);
    std::vector<c10::TypePtr> declared;
    if (!opt.example_inputs.empty()) {
        std::size_t k = 0;
        for (::torch::jit::Value* v : g->inputs()) {
            declared.push_back(v->type());
            if (v->type()->cast<c10::TensorType>() == nullptr) continue;
            if (k == opt.example_inputs.size())
                throw backend_error("sgmatch::torch::optimize: " + std::to_string(opt.example_inputs.size()) +
                                    " example inputs for a graph with more tensor inputs");
            v->setType(c10::TensorType::create(opt.example_inputs[k++]));
        }
        if (k != opt.example_inputs.size())
            throw backend_error("sgmatch::torch::optimize: " + std::to_string(opt.example_inputs.size()) +
                                " example inputs for a graph with " + std::to_string(k) + " tensor inputs");
        ::torch::jit::PropagateInputShapes(g);
    }
    detail::optimize_block(g->block(), opt, rep);
    if (!declared.empty()) {
        ::torch::jit::EraseShapeInformation(g);
        for (std::size_t i = 0; i < declared.size(); ++i) g->inputs()[i]->setType(declared[i]);
    }
    ::torch::jit::EliminateDeadCode(g);
    rep.nodes_after = detail::count_nodes(g->block());
    return rep;
}

/// Freezes m if it is not frozen yet (in place), then rewrites its forward method's graph.
inline report optimize(::torch::jit::Module& m, const options& opt = {}) {
    if (m.hasattr("training") && m.attr("training").isBool() && m.attr("training").toBool())
        throw backend_error("sgmatch::torch::optimize: the module is in training mode; call eval() first");
    bool frozen = true;
    const auto g = m.get_method("forward").graph();
    for (const ::torch::jit::Node* n : g->nodes()) frozen = frozen && n->kind() != c10::prim::GetAttr;
    if (!frozen) {
        ::torch::jit::freeze_module_inplace(&m);
    }
    return optimize(m.get_method("forward").graph(), opt);
}

}  // namespace torch
SGMATCH_END_NAMESPACE
