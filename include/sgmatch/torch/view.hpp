// sgmatch/torch/view.hpp - sgmatch's view of a TorchScript block, read and rewritten in place.
//
//   sgmatch::torch::view v(graph->block());       // an index over the block; the graph is not copied
//   sgmatch::apply_backend(v, backend);           // matches through graph_traits<view>
//
// What sgmatch sees of a block:
// - Nodes. Each node of the block is one view node, named by its first output's debug name. Its
//   handle is a dense id (std::uint32_t) that stays the node's for the view's life: a rewrite
//   gives new nodes new ids and never renumbers the others. Graph inputs (the block's inputs, and
//   for a nested block the values it reads from the blocks around it) are input nodes; a
//   `prim::Constant` holding a tensor is a constant node whose data is read in place (the
//   at::Tensor is kept alive by the constant's owner, never copied). A number constant that an
//   arithmetic op reads as its operand (`x / 8.0`; translate.hpp) is a constant node too, holding
//   a 0-d float tensor the view makes (as is a 0-d constant tensor of another element type
//   there). Other non-tensor constants and `prim::ListConstruct` are not nodes: they are the
//   attributes and operand lists of the nodes that read them (the values they gather count as
//   inputs of those readers).
// - Ops. An aten op with a translation (translate.hpp) takes the vocabulary's name and
//   ONNX-style attributes from its positional scalar and list constants (`aten::conv2d`'s
//   stride, padding, dilation, groups -> Conv's strides, pads, dilations, group; a None bias is
//   absent). Any other node keeps its TorchScript kind as its op name (`aten::slice`,
//   `prim::If`), which no pattern names, so it is never fused; a translatable op whose form the
//   kernels do not implement is left so too, with its reason kept for the report (declined()).
// - Uses. A value read inside a `prim::If` or `prim::Loop` body counts as an input of that node
//   (the view lists every value from outside that its blocks read), so dataflow through control
//   flow is whole and no fusion crosses it.
// - Types. A complete TensorType gives the element type and dims (`value_type`); a bare `Tensor`
//   gives neither.
//
// The write (`replace`) turns a matched set into one `sgmatch::run(str spec, Tensor[] inputs) ->
// Tensor[]` node (the op torch/library.hpp registers) followed by a `prim::ListUnpack`: spec is
// the matched nodes as TorchScript IR (fused.hpp), so a module saved with torch.jit.save carries
// everything a new process needs to rebuild the kernel. The new node takes the last member's
// place: readers of the members' outputs that the block orders between the members move after
// it (a list construction read only by members goes with them); a reader with side effects or
// writes cannot move, and such a match is declined before the write (why_not, which the pass's
// properties check; a block that still writes a tensor in place is never rewritten, see
// torch/pass.hpp). The write checks everything before its first edit: it completes or leaves the
// block as it was.
#pragma once

#include <ATen/Functions.h>
#include <torch/csrc/jit/ir/ir.h>

#include <algorithm>
#include <cctype>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <unordered_set>
#include <utility>
#include <vector>

#include "sgmatch/detail/config.hpp"
#include "sgmatch/graph/adapter.hpp"
#include "sgmatch/graph/replacement.hpp"
#include "sgmatch/graph/types.hpp"
#include "sgmatch/torch/fused.hpp"
#include "sgmatch/torch/translate.hpp"

SGMATCH_BEGIN_NAMESPACE
namespace torch {

class view {
public:
    using node_type = std::uint32_t;

    /// A view of block b (a graph's top block or a nested one). `backend_name` is written into
    /// the spec of every node replace() makes (the backend the kernel applies inside it).
    explicit view(::torch::jit::Block* b, std::string backend_name = "onednn")
        : block_(b), backend_(std::move(backend_name)) {
        reindex();
    }

    ::torch::jit::Block* block() const { return block_; }

    /// Rebuilds the index from the block as it is now (ids of nodes already seen are kept).
    void reindex() {
        order_.clear();
        op_names_.clear();
        value_at_.clear();
        previous_.clear();
        previous_.swap(id_);  // ids of nodes seen before move back into id_ as they are met again
        for (auto& e : entries_) e.live = false;
        // Each op translated once; the scalar constants the translations read as operands.
        std::unordered_map<const ::torch::jit::Node*, translation> translations;
        scalars_.clear();
        for (::torch::jit::Node* n : block_->nodes()) {
            if (n->kind() == c10::prim::Constant || n->kind() == c10::prim::ListConstruct) continue;
            translation t = translate(n);
            if (t.translated())
                for (const ::torch::jit::Value* v : t.operands)
                    if (scalar_constant(v)) scalars_.insert(v);
            translations.emplace(n, std::move(t));
        }
        // Inputs: the block's own, then what its nodes (and their blocks) read from outside.
        for (::torch::jit::Value* v : block_->inputs()) add_value_entry(v, node_kind::input);
        std::unordered_set<const ::torch::jit::Value*> seen;
        for (::torch::jit::Node* n : block_->nodes()) collect_foreign(n, seen);
        for (::torch::jit::Value* v : block_->outputs())
            if (!inside(v->node()) && seen.insert(v).second) foreign_.push_back(v);
        for (const ::torch::jit::Value* v : foreign_) {
            auto* vv = const_cast<::torch::jit::Value*>(v);
            bool output = false;  // a constant from outside that the block returns is an input
            for (const ::torch::jit::Value* o : block_->outputs()) output = output || o == v;
            if (is_hidden(vv->node()) && !output) continue;  // an attribute from outside
            add_value_entry(vv, is_constant_node(vv->node()) ? node_kind::constant : node_kind::input);
        }
        foreign_.clear();
        // The block's nodes.
        for (::torch::jit::Node* n : block_->nodes()) {
            if (is_hidden(n) && !is_block_output(n)) continue;
            add_node_entry(n, is_constant_node(n) ? node_kind::constant : node_kind::op, translations);
        }
        // Inputs of every op, resolved through hidden nodes; users as their inverse.
        for (node_type id : order_) {
            entry& e = entries_[id];
            e.inputs.clear();
            e.users.clear();
            e.op = 0;
            if (e.kind != node_kind::op) continue;
            if (e.tr.translated()) {
                for (const ::torch::jit::Value* v : e.tr.operands) e.inputs.push_back(ref(v));
            } else {
                std::vector<value_ref<node_type>> in;
                for (const ::torch::jit::Value* v : e.node->inputs()) resolve(v, in);
                std::unordered_set<const ::torch::jit::Value*> outer;
                for (::torch::jit::Block* sub : e.node->blocks()) reads_from_outside(sub, e.node, outer, in);
                for (const auto& r : in)
                    if (std::find(e.inputs.begin(), e.inputs.end(), r) == e.inputs.end()) e.inputs.push_back(r);
            }
            const std::string_view name = e.tr.op;
            auto it = std::find(op_names_.begin(), op_names_.end(), name);
            if (it == op_names_.end()) it = op_names_.insert(op_names_.end(), std::string(name));
            e.op = static_cast<std::uint32_t>(it - op_names_.begin());
        }
        for (node_type id : order_) {
            const entry& e = entries_[id];
            for (std::uint32_t s = 0; s < e.inputs.size(); ++s)
                entries_[e.inputs[s].node].users.push_back({id, s, e.inputs[s].port});
        }
        outputs_.clear();
        for (const ::torch::jit::Value* v : block_->outputs()) outputs_.push_back(ref(v));
    }

    // ---- what graph_traits<view> reads ----
    const std::vector<node_type>& order() const { return order_; }
    std::size_t bound() const { return entries_.size(); }
    std::string_view name(node_type n) const { return entries_[n].name; }
    node_kind kind(node_type n) const { return entries_[n].kind; }
    std::uint32_t op(node_type n) const { return entries_[n].op; }
    const std::vector<std::string>& op_names() const { return op_names_; }
    std::string_view op_name(node_type n) const { return entries_[n].tr.op; }
    const std::vector<value_ref<node_type>>& inputs(node_type n) const { return entries_[n].inputs; }
    std::size_t output_count(node_type n) const {
        const entry& e = entries_[n];
        return e.node != nullptr && e.kind == node_kind::op ? std::max<std::size_t>(1, e.node->outputs().size()) : 1;
    }
    const std::vector<use<node_type>>& users(node_type n) const { return entries_[n].users; }
    const std::vector<value_ref<node_type>>& outputs() const { return outputs_; }
    const translation& translated(node_type n) const { return entries_[n].tr; }
    /// The TorchScript value of output `port` of n.
    ::torch::jit::Value* value_of(node_type n, std::uint32_t port) const {
        const entry& e = entries_[n];
        if (e.value != nullptr) return const_cast<::torch::jit::Value*>(e.value);
        return e.node->outputs().empty() ? nullptr : e.node->output(port);
    }
    /// The TorchScript node of n (null for an input).
    ::torch::jit::Node* node_of(node_type n) const { return entries_[n].node; }
    /// Every node the view left alone although a pattern could name its op, with the reason.
    std::vector<std::pair<std::string, std::string>> declined() const {
        std::vector<std::pair<std::string, std::string>> out;
        for (node_type id : order_)
            if (!entries_[id].tr.declined.empty()) out.emplace_back(entries_[id].name, entries_[id].tr.declined);
        return out;
    }
    std::optional<tensor_type> type(node_type n, std::uint32_t port) const {
        const entry& e = entries_[n];
        if (e.kind == node_kind::constant && e.data.defined()) {  // as the data the view holds
            tensor_type t;
            t.type = dtype_of(e.data.scalar_type());
            t.dims.assign(e.data.sizes().begin(), e.data.sizes().end());
            t.scalar = t.dims.empty();
            return t;
        }
        const ::torch::jit::Value* v = value_of(n, port);
        if (v == nullptr) return std::nullopt;
        return type_of(v);
    }
    std::optional<const_tensor_view> constant(node_type n) const {
        const entry& e = entries_[n];
        if (e.kind != node_kind::constant || !e.data.defined()) return std::nullopt;
        const auto t = dtype_of(e.data.scalar_type());
        if (t == dtype::unknown) return std::nullopt;
        return const_tensor_view{t, e.data.sizes().data(), static_cast<std::size_t>(e.data.dim()), e.data.data_ptr()};
    }
    std::shared_ptr<const void> constant_owner(node_type n) const {
        const entry& e = entries_[n];
        if (e.kind != node_kind::constant || !e.data.defined()) return nullptr;
        return std::make_shared<const at::Tensor>(e.data);
    }

    /// The write: see the top of this file.
    node_type replace(const replacement<node_type>& r) {
        namespace tj = ::torch::jit;
        auto where = [&] { return "sgmatch::torch::view::replace('" + r.name + "'): "; };
        if (r.nodes.empty()) throw graph_error(where() + "no nodes");
        std::vector<tj::Node*> set;
        for (node_type n : r.nodes) {
            if (n >= entries_.size() || !entries_[n].live || entries_[n].kind != node_kind::op)
                throw graph_error(where() + "a node is not an op of the block");
            set.push_back(entries_[n].node);
        }
        std::sort(set.begin(), set.end(), [](tj::Node* a, tj::Node* b) { return a->isBefore(b); });
        std::vector<tj::Value*> ins, outs;
        for (const auto& v : r.inputs) {
            if (v.node >= entries_.size() || !entries_[v.node].live) throw graph_error(where() + "an input is not in the block");
            tj::Value* in = value_of(v.node, v.port);
            if (is_tensor_value(in)) ins.push_back(in);  // a number constant is copied into the spec
        }
        for (const auto& v : r.outputs) outs.push_back(value_of(v.node, v.port));
        tj::Node* last = set.back();
        const move_plan plan = plan_move(set);
        if (!plan.refusal.empty()) throw graph_error(where() + plan.refusal);
        std::unordered_set<const tj::Node*> members(set.begin(), set.end());
        members.insert(plan.absorbed.begin(), plan.absorbed.end());
        for (tj::Node* n : set)
            for (tj::Value* o : n->outputs())
                if (std::find(outs.begin(), outs.end(), o) == outs.end())
                    for (const tj::Use& u : o->uses())
                        if (!members.count(u.user) && !inside_any(u.user, members))
                            throw graph_error(where() + "'" + o->debugName() + "' is read outside the set but is not an output");
        const std::string spec = describe_region(set, ins, outs, backend_);  // may throw: nothing changed yet
        // ---- commit ----
        tj::Graph* g = block_->owningGraph();
        tj::WithInsertPoint guard(last);
        tj::Value* spec_value = g->insertConstant(c10::IValue(spec));
        tj::Node* list = g->createList(c10::TensorType::get(), ins)->insertBefore(last);
        tj::Node* run = g->create(c10::Symbol::fromQualString("sgmatch::run"), {spec_value, list->output()}, 1)->insertBefore(last);
        run->output()->setType(c10::ListType::ofTensors());
        run->output()->setDebugName(sanitized(r.name));
        tj::Node* unpack = g->createListUnpack(run->output(), outs.size())->insertBefore(last);
        for (std::size_t i = 0; i < outs.size(); ++i) {
            unpack->output(i)->setType(outs[i]->type());
            unpack->output(i)->copyMetadata(outs[i]);
            outs[i]->replaceAllUsesWith(unpack->output(i));
        }
        tj::Node* after = unpack;
        for (tj::Node* m : plan.movers) {
            m->moveAfter(after);
            after = m;
        }
        std::vector<tj::Node*> doomed(set.begin(), set.end());
        doomed.insert(doomed.end(), plan.absorbed.begin(), plan.absorbed.end());
        std::sort(doomed.begin(), doomed.end(), [](tj::Node* a, tj::Node* b) { return a->isBefore(b); });
        for (auto it = doomed.rbegin(); it != doomed.rend(); ++it)
            (*it)->destroy();  // its outputs' readers were doomed too, destroyed before it
        reindex();
        return id_of(unpack);
    }

    /// Why the nodes cannot become one node in place ("" if they can): a node the block orders
    /// between them reads their outputs and writes in place or has side effects, so it cannot
    /// move after the new node. A property's check (torch/pass.hpp) asks before the write.
    std::string why_not(const node_type* nodes, std::size_t count) const {
        std::vector<::torch::jit::Node*> set;
        for (std::size_t i = 0; i < count; ++i) {
            if (nodes[i] >= entries_.size() || entries_[nodes[i]].node == nullptr) return "";
            set.push_back(entries_[nodes[i]].node);
        }
        if (set.empty()) return "";
        std::sort(set.begin(), set.end(), [](::torch::jit::Node* a, ::torch::jit::Node* b) { return a->isBefore(b); });
        return plan_move(set).refusal;
    }

private:
    // What a write of `set` (in block order) does to the nodes between its first and last
    // member that read the members' outputs: a list construction read only by members is
    // absorbed (copied into the spec, destroyed with them); any other reader moves after the new
    // node, which only a node without side effects or writes may.
    struct move_plan {
        std::vector<::torch::jit::Node*> movers, absorbed;
        std::string refusal;
    };
    static move_plan plan_move(const std::vector<::torch::jit::Node*>& set) {
        namespace tj = ::torch::jit;
        move_plan plan;
        tj::Node* last = set.back();
        std::unordered_set<const tj::Node*> members(set.begin(), set.end());
        std::unordered_set<const tj::Value*> tainted;
        for (tj::Node* n : set)
            for (tj::Value* o : n->outputs()) tainted.insert(o);
        for (tj::Node* n = set.front(); n != last; n = n->next()) {
            if (members.count(n)) continue;
            bool reads = false;
            for (tj::Value* v : n->inputs()) reads = reads || tainted.count(v);
            for (tj::Block* b : n->blocks()) reads = reads || block_reads(b, tainted);
            if (!reads) continue;
            if (n->kind() == c10::prim::ListConstruct) {
                bool only_members = true;
                for (const tj::Use& u : n->output()->uses()) only_members = only_members && members.count(u.user);
                if (only_members) {
                    plan.absorbed.push_back(n);
                    continue;
                }
            }
            if (n->hasSideEffects() || (n->maybeSchema() != nullptr && n->maybeSchema()->is_mutable())) {
                plan.refusal = "node '" + node_name(n) + "' (" + n->kind().toQualString() +
                               ") reads the fused ops' outputs between them and writes in place or has side effects";
                return plan;
            }
            plan.movers.push_back(n);
            for (tj::Value* o : n->outputs()) tainted.insert(o);
        }
        return plan;
    }

    struct entry {
        ::torch::jit::Node* node = nullptr;         // ops and constants
        const ::torch::jit::Value* value = nullptr;  // inputs (and constants read from outside)
        node_kind kind = node_kind::op;
        bool live = false;
        std::string name;
        translation tr;
        at::Tensor data;  // a constant's tensor
        std::uint32_t op = 0;
        std::vector<value_ref<node_type>> inputs;
        std::vector<use<node_type>> users;
    };

    static std::string node_name(const ::torch::jit::Node* n) {
        if (!n->outputs().empty()) return n->output(0)->debugName();
        return std::string(n->kind().toQualString());
    }
    static std::string sanitized(const std::string& s) {
        std::string out;
        for (char c : s) out += (std::isalnum(static_cast<unsigned char>(c)) || c == '_') ? c : '_';
        if (out.empty() || std::isdigit(static_cast<unsigned char>(out[0]))) out = "f_" + out;
        return out;
    }
    static bool is_tensor_constant(const ::torch::jit::Node* n) {
        return n->kind() == c10::prim::Constant && n->outputs().size() == 1 && is_tensor_value(n->output());
    }
    bool is_constant_node(const ::torch::jit::Node* n) const {
        return is_tensor_constant(n) || (n->kind() == c10::prim::Constant && n->outputs().size() == 1 && scalars_.count(n->output()));
    }
    // Attribute sources: non-tensor constants (but the scalar operands) and list constructions.
    bool is_hidden(const ::torch::jit::Node* n) const {
        if (n->kind() == c10::prim::Constant) return !is_constant_node(n);
        return n->kind() == c10::prim::ListConstruct;
    }
    bool is_block_output(const ::torch::jit::Node* n) const {
        for (const ::torch::jit::Value* v : block_->outputs())
            if (v->node() == n) return true;
        return false;
    }
    bool inside(const ::torch::jit::Node* n) const {
        for (const ::torch::jit::Block* b = n->owningBlock(); b != nullptr;) {
            if (b == block_) return true;
            const ::torch::jit::Node* owner = b->owningNode();
            b = owner != nullptr ? owner->owningBlock() : nullptr;
        }
        return false;
    }
    // Values from outside the block that node n (and the blocks in it) read, in order.
    void collect_foreign(const ::torch::jit::Node* n, std::unordered_set<const ::torch::jit::Value*>& seen) {
        for (const ::torch::jit::Value* v : n->inputs())
            if (!inside(v->node()) && seen.insert(v).second) foreign_.push_back(v);
        for (const ::torch::jit::Block* b : n->blocks()) {
            for (const ::torch::jit::Node* m : b->nodes()) collect_foreign(m, seen);
            for (const ::torch::jit::Value* v : b->outputs())
                if (!inside(v->node()) && seen.insert(v).second) foreign_.push_back(v);
        }
    }
    void add_value_entry(::torch::jit::Value* v, node_kind k) {
        const node_type id = id_of(v);
        entry& e = entries_[id];
        e.node = k == node_kind::constant ? v->node() : nullptr;
        e.value = v;
        e.kind = k;
        e.live = true;
        e.name = v->debugName();
        e.tr = translation{};
        e.tr.op = k == node_kind::constant ? "Constant" : "Input";
        if (k == node_kind::constant) e.data = constant_tensor(v);
        value_at_[v] = {id, 0};
        order_.push_back(id);
    }
    void add_node_entry(::torch::jit::Node* n, node_kind k,
                        std::unordered_map<const ::torch::jit::Node*, translation>& translations) {
        const node_type id = id_of(n);
        entry& e = entries_[id];
        e.node = n;
        e.value = nullptr;
        e.kind = k;
        e.live = true;
        e.name = node_name(n);
        if (k == node_kind::constant) {
            e.tr = translation{};
            e.tr.op = "Constant";
            e.data = constant_tensor(n->output());
            value_at_[n->output()] = {id, 0};
        } else {
            auto it = translations.find(n);
            e.tr = it != translations.end() ? std::move(it->second) : translate(n);
            for (std::uint32_t p = 0; p < n->outputs().size(); ++p) value_at_[n->output(p)] = {id, p};
        }
        order_.push_back(id);
    }
    at::Tensor constant_tensor(const ::torch::jit::Value* v) const {
        if (scalars_.count(v)) return at::scalar_tensor(*scalar_constant(v), at::TensorOptions().dtype(at::kFloat));
        const auto iv = ::torch::jit::toIValue(v);
        if (!iv || !iv->isTensor()) return {};
        at::Tensor t = iv->toTensor();
        if (t.device().type() != c10::DeviceType::CPU || !t.is_contiguous() || t.is_quantized()) return {};
        return t;
    }
    node_type id_of(const void* key) {
        auto it = previous_.find(key);
        if (it != previous_.end() && !entries_[it->second].live) {
            id_[key] = it->second;
            return it->second;
        }
        const node_type id = static_cast<node_type>(entries_.size());
        entries_.emplace_back();
        id_[key] = id;
        return id;
    }
    value_ref<node_type> ref(const ::torch::jit::Value* v) const {
        auto it = value_at_.find(v);
        if (it == value_at_.end() || !entries_[it->second.node].live)
            throw graph_error("sgmatch::torch::view: value '" + v->debugName() + "' (from " +
                              std::string(v->node()->kind().toQualString()) + (inside(v->node()) ? ", in the block" : ", outside the block") +
                              ") is not in the view");
        return it->second;
    }
    // v as the view's values: itself, or what a hidden node gathers.
    void resolve(const ::torch::jit::Value* v, std::vector<value_ref<node_type>>& out) const {
        auto it = value_at_.find(v);
        if (it != value_at_.end() && entries_[it->second.node].live) {
            out.push_back(it->second);
            return;
        }
        const ::torch::jit::Node* p = v->node();
        if (is_hidden(p))
            for (const ::torch::jit::Value* w : p->inputs()) resolve(w, out);
        // else: a non-tensor constant from outside, an attribute
    }
    // Values defined outside `owner` that block b (and its nested blocks) reads.
    void reads_from_outside(const ::torch::jit::Block* b, const ::torch::jit::Node* owner,
                            std::unordered_set<const ::torch::jit::Value*>& seen,
                            std::vector<value_ref<node_type>>& out) const {
        auto outside_owner = [&](const ::torch::jit::Value* v) {
            for (const ::torch::jit::Block* ob = v->node()->owningBlock(); ob != nullptr;) {
                const ::torch::jit::Node* on = ob->owningNode();
                if (on == owner) return false;
                ob = on != nullptr ? on->owningBlock() : nullptr;
            }
            return true;
        };
        for (const ::torch::jit::Node* m : b->nodes()) {
            for (const ::torch::jit::Value* v : m->inputs())
                if (outside_owner(v) && seen.insert(v).second) resolve(v, out);
            for (const ::torch::jit::Block* sub : m->blocks()) reads_from_outside(sub, owner, seen, out);
        }
        for (const ::torch::jit::Value* v : b->outputs())
            if (outside_owner(v) && seen.insert(v).second) resolve(v, out);
    }
    // Whether n is nested in a block of one of the nodes in set.
    static bool inside_any(const ::torch::jit::Node* n, const std::unordered_set<const ::torch::jit::Node*>& set) {
        for (const ::torch::jit::Block* b = n->owningBlock(); b != nullptr && b->owningNode() != nullptr;) {
            if (set.count(b->owningNode())) return true;
            b = b->owningNode()->owningBlock();
        }
        return false;
    }
    static bool block_reads(const ::torch::jit::Block* b, const std::unordered_set<const ::torch::jit::Value*>& vs) {
        for (const ::torch::jit::Node* m : b->nodes()) {
            for (const ::torch::jit::Value* v : m->inputs())
                if (vs.count(v)) return true;
            for (const ::torch::jit::Block* sub : m->blocks())
                if (block_reads(sub, vs)) return true;
        }
        for (const ::torch::jit::Value* v : b->outputs())
            if (vs.count(v)) return true;
        return false;
    }

    ::torch::jit::Block* block_;
    std::string backend_;
    std::vector<entry> entries_;
    std::unordered_map<const void*, node_type> id_, previous_;
    std::unordered_map<const ::torch::jit::Value*, value_ref<node_type>> value_at_;
    std::vector<node_type> order_;
    std::vector<std::string> op_names_;
    std::vector<value_ref<node_type>> outputs_;
    std::vector<const ::torch::jit::Value*> foreign_;
    std::unordered_set<const ::torch::jit::Value*> scalars_;  // number constants read as operands
};

}  // namespace torch

template <>
struct graph_traits<torch::view> {
    using G = torch::view;
    using node_type = std::uint32_t;
    static const std::vector<node_type>& nodes(const G& g) { return g.order(); }
    static std::size_t node_count(const G& g) { return g.order().size(); }
    static std::size_t index_bound(const G& g) { return g.bound(); }
    static std::size_t index(const G&, node_type n) { return n; }
    static std::string_view name(const G& g, node_type n) { return g.name(n); }
    static node_kind kind(const G& g, node_type n) { return g.kind(n); }
    static std::uint32_t op(const G& g, node_type n) { return g.op(n); }
    static std::size_t op_count(const G& g) { return g.op_names().size(); }
    static std::string_view op_name(const G& g, node_type n) { return g.op_name(n); }
    static std::optional<std::uint32_t> find_op(const G& g, std::string_view s) {
        const auto& names = g.op_names();
        for (std::size_t i = 0; i < names.size(); ++i)
            if (names[i] == s) return static_cast<std::uint32_t>(i);
        return std::nullopt;
    }
    static std::size_t input_count(const G& g, node_type n) { return g.inputs(n).size(); }
    static value_ref<node_type> input(const G& g, node_type n, std::size_t i) { return g.inputs(n)[i]; }
    static std::size_t output_count(const G& g, node_type n) { return g.output_count(n); }
    static std::size_t user_count(const G& g, node_type n) { return g.users(n).size(); }
    static use<node_type> user(const G& g, node_type n, std::size_t i) { return g.users(n)[i]; }
    static std::size_t graph_output_count(const G& g) { return g.outputs().size(); }
    static value_ref<node_type> graph_output(const G& g, std::size_t i) { return g.outputs()[i]; }
    static bool needs_gradients(const G&) { return false; }
    static std::optional<attribute> attr(const G& g, node_type n, std::string_view key) {
        for (const auto& [k, v] : g.translated(n).attrs)
            if (k == key) return v;
        return std::nullopt;
    }
    template <class F>
    static void for_each_attr(const G& g, node_type n, F&& f) {
        for (const auto& [k, v] : g.translated(n).attrs) f(k, v);
    }
    static std::optional<tensor_type> value_type(const G& g, node_type n, std::uint32_t port) { return g.type(n, port); }
    static std::optional<const_tensor_view> constant(const G& g, node_type n) { return g.constant(n); }
    static std::shared_ptr<const void> constant_owner(const G& g, node_type n) { return g.constant_owner(n); }
    static node_type replace(G& g, const replacement<node_type>& r) { return g.replace(r); }
};

SGMATCH_END_NAMESPACE
