// sgmatch/torch/run.hpp - the kernel of `sgmatch::run(str spec, Tensor[] inputs) -> Tensor[]`.
//
//   std::vector<at::Tensor> ys = sgmatch::torch::run(spec, xs);
//
// The first call with a spec and a set of constant tensors (the node's weights: the inputs its
// spec lists as constants, told apart by their data pointers) parses the spec (fused.hpp), makes
// those inputs constants of the parsed graph (held, never copied: the at::Tensor stays alive in
// the compiled kernel), reads it through the view, copies its ops into a region of sgmatch's
// graph with the spec's backend applied inside (exec::build_region: the oneDNN fused kernels) and
// keeps the result, an exec::node_call, in a process-wide cache. Every call then runs the node
// call on the inputs' memory: a contiguous float input is read in place, any other float input
// is made contiguous once per call (counted: run_counters).
// What sgmatch's kernels refuse runs on TorchScript's own kernels, from the same spec: a node
// none of whose ops has a kernel here, or an input signature (element types, sizes) the
// kernels reject at run time (a non-float input, a shape no kernel takes), and every call
// where autograd is on and an input requires grad (TorchScript's kernels record the ops); each refusal is
// logged once to stderr with its reason and counted (run_counters::refusals, native_runs). Primitives are created once per input shape inside the kernels; a shape
// a fused primitive rejects runs its ops unfused, as node_call does. Outputs are returned as
// tensors over the buffers sgmatch computed them in (no copy; each tensor keeps its buffer).
//
// Thread-safe: the cache is guarded, a compiled kernel is immutable.
#pragma once

#include <ATen/ATen.h>
#include <torch/csrc/jit/api/function_impl.h>
#include <torch/csrc/jit/ir/ir.h>

#include <atomic>
#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <set>
#include <unordered_map>
#include <cstdio>
#include <cstring>
#include <string>
#include <vector>

#include "sgmatch/detail/config.hpp"
#include "sgmatch/exec/call.hpp"
#include "sgmatch/exec/subgraph.hpp"
#include "sgmatch/onednn/backend.hpp"
#include "sgmatch/torch/fused.hpp"
#include "sgmatch/torch/view.hpp"

SGMATCH_BEGIN_NAMESPACE
namespace torch {

/// Process-wide counts of what the sgmatch::run kernels did.
struct run_counters {
    std::atomic<std::size_t> calls{0};          // kernel calls
    std::atomic<std::size_t> compiled{0};       // specs compiled (first call of each spec and weights)
    std::atomic<std::size_t> made_contiguous{0};  // inputs copied because they were not contiguous
    std::atomic<std::size_t> fused_kernels{0};  // fused oneDNN kernels run
    std::atomic<std::size_t> fallbacks{0};      // nodes whose ops ran unfused (a shape the fused kernel rejects)
    std::atomic<std::size_t> native_runs{0};    // calls run by TorchScript (what sgmatch's kernels refuse)
    std::atomic<std::size_t> refusals{0};       // nodes and input signatures refused (each logged once)

    static run_counters& instance() {
        static run_counters c;
        return c;
    }
};

namespace detail {

inline const backend<graph>& fusions() {
    static const backend<graph> b = onednn::make_backend<graph>();
    return b;
}

class compiled_run {
public:
    compiled_run(const std::string& spec, const std::vector<at::Tensor>& inputs) {
        namespace tj = ::torch::jit;
        region_spec r = parse_spec(spec);
        if (r.graph->inputs().size() != inputs.size())
            throw exec::exec_error("sgmatch::run: the spec reads " + std::to_string(r.graph->inputs().size()) + " inputs; " +
                                   std::to_string(inputs.size()) + " were given");
        if (r.backend != "onednn" && r.backend != "onednn.regions")
            throw exec::exec_error("sgmatch::run: unknown backend '" + r.backend + "' in the spec");
        // TorchScript's own run of the same ops: where sgmatch's kernels refuse the node or an
        // input (a copy: build() turns the weights of r.graph into constants).
        auto native = r.graph->copy();
        {
            std::vector<tj::Value*> outs(native->outputs().begin(), native->outputs().end());
            while (!native->outputs().empty()) native->eraseOutput(native->outputs().size() - 1);
            native->registerOutput(native->insertNode(native->createList(c10::TensorType::get(), outs))->output());
        }
        native_ = std::make_unique<tj::GraphFunction>("sgmatch_run_native", native, nullptr);
        try {
            build(r, inputs);
        } catch (const std::exception& e) {
            region_ = nullptr;
            refuse("", std::string("sgmatch's kernels refuse it: ") + e.what());
        }
    }

    std::vector<at::Tensor> operator()(const std::vector<at::Tensor>& inputs) const {
        run_counters& counters = run_counters::instance();
        ++counters.calls;
        bool grad = false;  // autograd must see the ops: TorchScript's kernels record them
        if (at::GradMode::is_enabled())
            for (const at::Tensor& t : inputs) grad = grad || t.requires_grad();
        if (region_ != nullptr && !grad) {
            // The input signature is spelled out only once some signature has been refused.
            auto signature = [&] {
                std::string shapes;
                for (const at::Tensor& t : inputs) shapes += c10::str(t.scalar_type(), t.sizes(), t.is_contiguous(), ";");
                return shapes;
            };
            if (!any_refused_.load(std::memory_order_acquire) || !refused(signature())) {
                try {
                    return run_sgmatch(inputs);
                } catch (const std::exception& e) {
                    const std::string shapes = signature();
                    refuse(shapes, std::string("for inputs ") + shapes + " sgmatch's kernels refuse: " + e.what());
                }
            }
        }
        ++counters.native_runs;
        ::torch::jit::Stack stack(inputs.begin(), inputs.end());
        native_->run(stack);
        return stack.back().toTensorVector();
    }

    const std::string& name() const { return name_; }

private:
    void build(const region_spec& r, const std::vector<at::Tensor>& inputs) {
        namespace tj = ::torch::jit;
        graph_ = r.graph;
        // The spec's constants become constants of the graph, holding the tensors given.
        std::vector<std::size_t> op_input(inputs.size());
        for (std::size_t k = 0; k < inputs.size(); ++k) op_input[k] = k;
        if (graph_->block()->nodes().begin() != graph_->block()->nodes().end()) {
            tj::WithInsertPoint guard(graph_->block()->nodes().front());
            for (auto it = r.constants.rbegin(); it != r.constants.rend(); ++it) {
                at::Tensor t = inputs[*it];
                if (!t.is_contiguous()) t = t.contiguous();
                weights_.push_back(t);
                tj::Value* c = graph_->insertConstant(c10::IValue(t));
                c->setType(c10::TensorType::create(t));
                graph_->inputs()[*it]->replaceAllUsesWith(c);
                graph_->eraseInput(*it);
                op_input.erase(op_input.begin() + static_cast<std::ptrdiff_t>(*it));
            }
        }
        view v(graph_->block(), r.backend);
        subgraph<view> s;
        std::vector<std::uint32_t> ops;
        for (std::uint32_t n : v.order())
            if (v.kind(n) == node_kind::op) ops.push_back(n);
        if (ops.empty()) throw exec::exec_error("sgmatch::run: the spec holds no op");
        name_ = v.name(ops.back());
        for (std::uint32_t n : ops)
            if (!v.translated(n).translated())
                throw exec::exec_error("node '" + std::string(v.name(n)) + "' (" + std::string(v.op_name(n)) + ") has no sgmatch kernel" +
                                       (v.translated(n).declined.empty() ? "" : ": " + v.translated(n).declined));
        sgmatch::detail::boundary(s, v, ops.data(), ops.size());
        s.outputs = v.outputs();
        region_ = exec::build_region(s, fusions());
        call_ = std::make_unique<exec::node_call>(region_, name_);
        // Which op input feeds each boundary input the region reads at run time.
        feed_.assign(s.inputs.size(), static_cast<std::size_t>(-1));
        for (std::size_t idx : region_->runtime_inputs) {
            const tj::Value* val = v.value_of(s.inputs[idx].node, s.inputs[idx].port);
            std::size_t j = 0;
            while (j < graph_->inputs().size() && graph_->inputs()[j] != val) ++j;
            if (j == graph_->inputs().size())
                throw exec::exec_error("sgmatch::run: node '" + name_ + "' reads '" + val->debugName() + "', which is not an input");
            feed_[idx] = op_input[j];
        }
    }

    std::vector<at::Tensor> run_sgmatch(const std::vector<at::Tensor>& inputs) const {
        run_counters& counters = run_counters::instance();
        std::vector<exec::value> xs(feed_.size());
        std::vector<at::Tensor> keep;
        for (std::size_t i = 0; i < feed_.size(); ++i) {
            if (feed_[i] == static_cast<std::size_t>(-1)) continue;
            at::Tensor t = inputs.at(feed_[i]);
            if (t.scalar_type() != at::kFloat)
                throw exec::exec_error("input " + std::to_string(feed_[i]) + " is " + std::string(c10::toString(t.scalar_type())) +
                                       "; its kernels read float");
            if (t.device().type() != c10::DeviceType::CPU)
                throw exec::exec_error("input " + std::to_string(feed_[i]) + " is not on the CPU");
            if (!t.is_contiguous()) {
                t = t.contiguous();
                ++counters.made_contiguous;
            }
            keep.push_back(t);
            xs[i] = exec::value::view(t.data_ptr(), dtype::f32, exec::shape(t.sizes().begin(), t.sizes().end()));
        }
        exec::run_stats st;
        std::vector<exec::value> ys = (*call_)(xs, &st);
        counters.fused_kernels += st.fused_nodes;
        counters.fallbacks += st.fallbacks;
        std::vector<at::Tensor> out;
        out.reserve(ys.size());
        for (exec::value& y : ys) {
            if (y.type() != dtype::f32) throw exec::exec_error("a " + std::string(name_of(y.type())) + " output");
            const std::vector<std::int64_t> dims(y.dims().begin(), y.dims().end());
            if (y.owned() && y.dense()) {
                auto held = std::make_shared<exec::value>(std::move(y));
                void* data = const_cast<void*>(held->data());
                out.push_back(at::from_blob(data, dims, [held](void*) {}, at::TensorOptions().dtype(at::kFloat)));
            } else {
                const exec::value d = y.dense_value();
                at::Tensor t = at::empty(dims, at::TensorOptions().dtype(at::kFloat));
                std::memcpy(t.data_ptr(), d.data(), d.bytes());
                out.push_back(std::move(t));
            }
        }
        return out;
    }

    // Input signatures ("" for every input) that run on TorchScript, each logged once.
    bool refused(const std::string& shapes) const {
        std::lock_guard<std::mutex> lock(m_);
        return refused_.count(shapes) > 0;
    }
    void refuse(const std::string& shapes, const std::string& why) const {
        std::lock_guard<std::mutex> lock(m_);
        any_refused_.store(true, std::memory_order_release);
        if (refused_.insert(shapes).second) {
            ++run_counters::instance().refusals;
            std::fprintf(stderr, "sgmatch::run: node '%s' runs on TorchScript (%s)\n", name_.c_str(), why.c_str());
        }
    }

    std::shared_ptr<::torch::jit::Graph> graph_;
    std::vector<at::Tensor> weights_;
    std::string name_ = "sgmatch::run";
    std::shared_ptr<const exec::subgraph_node> region_;
    std::unique_ptr<exec::node_call> call_;
    std::vector<std::size_t> feed_;  // boundary input -> op input (-1: a constant)
    std::unique_ptr<::torch::jit::GraphFunction> native_;
    mutable std::mutex m_;
    mutable std::set<std::string> refused_;
    mutable std::atomic<bool> any_refused_{false};
};

// The compiled kernels, by spec, then by the data pointers of the spec's constant inputs: they
// tell two nodes of one spec apart (two blocks with the same shapes and different weights), and
// a compiled kernel holds its weights, so an address it keys on is never reused for other data
// while the entry lives. A spec's header is read once, on its first call.
class run_cache {
public:
    static run_cache& instance() {
        static run_cache c;
        return c;
    }
    std::shared_ptr<const compiled_run> get(const std::string& spec, const std::vector<at::Tensor>& inputs) {
        std::vector<const void*> weights;
        {
            std::lock_guard<std::mutex> lock(m_);
            auto it = specs_.find(spec);
            if (it == specs_.end()) it = specs_.emplace(spec, per_spec{parse_header(spec).constants, {}}).first;
            for (std::size_t k : it->second.constants)
                if (k < inputs.size()) weights.push_back(inputs[k].data_ptr());  // else: compiled_run refuses
            auto found = it->second.by_weights.find(weights);
            if (found != it->second.by_weights.end()) return found->second;
        }
        auto made = std::make_shared<const compiled_run>(spec, inputs);  // outside the lock: slow
        std::lock_guard<std::mutex> lock(m_);
        auto [it, inserted] = specs_.at(spec).by_weights.emplace(std::move(weights), made);
        if (inserted) ++run_counters::instance().compiled;
        return it->second;
    }

private:
    struct per_spec {
        std::vector<std::size_t> constants;
        std::map<std::vector<const void*>, std::shared_ptr<const compiled_run>> by_weights;
    };
    std::mutex m_;
    std::unordered_map<std::string, per_spec> specs_;
};

}  // namespace detail

/// The kernel of sgmatch::run (see the top of this file).
inline std::vector<at::Tensor> run(const std::string& spec, const std::vector<at::Tensor>& inputs) {
    return (*detail::run_cache::instance().get(spec, inputs))(inputs);
}

}  // namespace torch
SGMATCH_END_NAMESPACE
