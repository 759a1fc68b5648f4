// sgmatch/exec/call.hpp - a fused node or a region node, run by a framework's own executor.
//
//   const auto call = sgmatch::exec::node_call::of(payload);   // the node's payload (std::any)
//   std::vector<exec::value> ys = call(xs);      // xs: the node's inputs in order, typically views
//                                                // of the framework's buffers (exec::value::view)
//   call.run_into(xs, ys);                       // or: written into the framework's buffers
//
// A framework that partitioned its own graph through its adapter (make_fused_property,
// make_region_property) gets nodes whose payload is an onednn::fused_node or an
// exec::subgraph_node. node_call runs one such node by itself: positional inputs (the node's
// inputs as the replacement gave them, weights included), positional outputs, element types
// checked, no xtensor and no sgmatch graph in sight. Inputs are read in place (a dense f32 view
// goes to oneDNN as it is; a strided one is copied dense once). Where the fused kernel rejects a
// shape (known only at run time), the call runs the node's member ops one oneDNN primitive each
// (the reference kernel where none fits) and remembers the shape, logged once: the framework
// never sees the difference. run_into writes each output into the caller's dense buffer, directly
// where the kernel's layout is plain, else through one reorder.
//
// A node_call is immutable and thread-safe: build it once per node (a framework's "create
// state"), call it from any thread. Its kernels create their primitives on the first call of each
// input shape, under the calling thread's thread setting (onednn/threads.hpp).
#pragma once

#include <any>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "sgmatch/detail/config.hpp"
#include "sgmatch/exec/executor.hpp"
#include "sgmatch/exec/fallback.hpp"
#include "sgmatch/exec/value.hpp"
#include "sgmatch/onednn/property.hpp"
#include "sgmatch/onednn/tensor.hpp"

SGMATCH_BEGIN_NAMESPACE
namespace exec {

class node_call {
public:
    /// The call for a node whose payload is a shared_ptr<const onednn::fused_node> or a
    /// shared_ptr<const exec::subgraph_node>; exec_error for any other payload.
    static node_call of(const std::any& payload, std::string name = "fused node") {
        if (const auto* f = std::any_cast<std::shared_ptr<const onednn::fused_node>>(&payload); f && *f)
            return node_call(*f, std::move(name));
        if (const auto* r = std::any_cast<std::shared_ptr<const subgraph_node>>(&payload); r && *r)
            return node_call(*r, std::move(name));
        throw exec_error("sgmatch::exec::node_call: node '" + name +
                         "' carries neither an onednn::fused_node nor an exec::subgraph_node");
    }

    node_call(std::shared_ptr<const onednn::fused_node> f, std::string name)
        : name_(std::move(name)), fused_(std::move(f)), unfused_(executor::member_ops(*fused_)),
          log_(std::make_shared<detail::fallback_log>()) {}
    node_call(std::shared_ptr<const subgraph_node> r, std::string name) : name_(std::move(name)), region_(std::move(r)) {
        if (!region_->exec) throw exec_error("sgmatch::exec::node_call: region node '" + name_ + "' has no executor");
    }

    /// The node's outputs, computed from its inputs (in the node's input order).
    std::vector<value> operator()(const std::vector<value>& inputs, run_stats* stats = nullptr) const {
        run_stats local;
        run_stats& st = stats ? *stats : local;
        if (region_) return run_region(inputs, st);
        const operands o = operands_of(inputs);
        const onednn::tensor& src = o.src;
        const std::vector<onednn::tensor>& extra = o.extra;
        const auto shapes = detail::shapes_of(src, extra);
        if (unfused_ == nullptr || !log_->rejected(shapes)) {
            try {
                const onednn::tensor y = onednn::guarded([&] { return fused_->kernel->run(src, extra); });
                ++st.fused_nodes;
                value out = value::zeros(dtype::f32, y.shape());
                y.copy_to(static_cast<float*>(out.mutable_data()));
                return {out};
            } catch (const onednn::kernel_error& e) {
                if (unfused_ == nullptr) throw exec_error("sgmatch::exec::node_call: node '" + name_ + "': " + e.what());
                log_->reject(shapes, name_, "its ops run unfused", e.what());
            }
        }
        return run_unfused(inputs, st);
    }

    /// The same, each output written into outputs[i]: a dense f32 value with the output's dims
    /// and writable data (a view of the framework's buffer, or owned).
    void run_into(const std::vector<value>& inputs, std::vector<value>& outputs, run_stats* stats = nullptr) const {
        run_stats local;
        run_stats& st = stats ? *stats : local;
        if (fused_ && (unfused_ == nullptr || !log_->any()) && outputs.size() == 1) {
            // Straight into the caller's buffer where the kernel writes a plain layout.
            const operands o = operands_of(inputs);
            const onednn::tensor& src = o.src;
            const std::vector<onednn::tensor>& extra = o.extra;
            check_output(outputs[0], 0);
            try {
                const auto d = fused_->kernel->dst_desc_for(src);
                if (d == onednn::plain_desc(outputs[0].dims()) && !reads(outputs[0], inputs)) {
                    const auto dst = onednn::tensor::view(static_cast<float*>(outputs[0].mutable_data()), outputs[0].dims());
                    onednn::guarded([&] { fused_->kernel->run_into(src, extra, dst); });
                    ++st.fused_nodes;
                    return;
                }
            } catch (const onednn::kernel_error&) {
                // Below: the call itself decides (and logs) what runs instead.
            }
        }
        const std::vector<value> ys = (*this)(inputs, &st);
        if (ys.size() != outputs.size())
            throw exec_error("sgmatch::exec::node_call: node '" + name_ + "' computes " + std::to_string(ys.size()) +
                             " outputs; " + std::to_string(outputs.size()) + " were given");
        for (std::size_t i = 0; i < ys.size(); ++i) {
            check_output(outputs[i], i);
            if (ys[i].type() != outputs[i].type() || ys[i].dims() != outputs[i].dims())
                throw exec_error("sgmatch::exec::node_call: node '" + name_ + "' output " + std::to_string(i) + " is " +
                                 std::string(name_of(ys[i].type())) + " " + dims_text(ys[i].dims()) + "; the buffer given is " +
                                 std::string(name_of(outputs[i].type())) + " " + dims_text(outputs[i].dims()));
            const value d = ys[i].dense_value();
            std::memcpy(outputs[i].mutable_data(), d.data(), d.bytes());
        }
    }

    /// Whether the node is a region (else a fused node).
    bool is_region() const { return region_ != nullptr; }

private:
    static std::string dims_text(const shape& d) {
        std::string s = "[";
        for (std::size_t i = 0; i < d.size(); ++i) s += (i ? ", " : "") + std::to_string(d[i]);
        return s + "]";
    }
    // Whether out's buffer is one an input reads (then the kernel may not write it as it reads).
    static bool reads(const value& out, const std::vector<value>& inputs) {
        const auto* o = static_cast<const unsigned char*>(out.data());
        for (const value& v : inputs) {
            const auto* p = static_cast<const unsigned char*>(v.data());
            if (p != nullptr && o != nullptr && p < o + out.bytes() && o < p + v.bytes()) return true;
        }
        return false;
    }
    void check_output(const value& out, std::size_t i) const {
        if (out.type() != dtype::f32 && fused_)
            throw exec_error("sgmatch::exec::node_call: node '" + name_ + "' output " + std::to_string(i) + ": a " +
                             std::string(name_of(out.type())) + " buffer for a float output");
        if (!out.dense() || (out.size() > 0 && !out.has_data()))
            throw exec_error("sgmatch::exec::node_call: node '" + name_ + "' output " + std::to_string(i) +
                             ": the buffer must be dense, with data");
    }
    onednn::tensor tensor_of(const std::vector<value>& inputs, std::size_t k, std::vector<value>& keep) const {
        if (k >= inputs.size())
            throw exec_error("sgmatch::exec::node_call: node '" + name_ + "' reads input " + std::to_string(k) + "; " +
                             std::to_string(inputs.size()) + " were given");
        const value& v = inputs[k];
        if (v.type() != dtype::f32)
            throw exec_error("sgmatch::exec::node_call: node '" + name_ + "' input " + std::to_string(k) + " is " +
                             std::string(name_of(v.type())) + "; its kernel reads float");
        if (!v.has_data() && v.size() > 0)
            throw exec_error("sgmatch::exec::node_call: node '" + name_ + "' input " + std::to_string(k) + " has no data");
        if (v.dense()) return onednn::tensor::view(v.as<float>(), v.dims());
        keep.push_back(v.dense_value());
        return onednn::tensor::view(keep.back().as<float>(), keep.back().dims());
    }
    // The fused kernel's source and extra operands as oneDNN tensors over the inputs (keep owns
    // the dense copies of strided ones, whose buffers the tensors view).
    struct operands {
        std::vector<value> keep;
        onednn::tensor src;
        std::vector<onednn::tensor> extra;
    };
    operands operands_of(const std::vector<value>& inputs) const {
        operands o;
        o.src = tensor_of(inputs, fused_->src, o.keep);
        for (std::size_t k : fused_->extra) o.extra.push_back(tensor_of(inputs, k, o.keep));
        return o;
    }
    // The graph inputs "0", "1", ... of an inner executor: inputs[at[0]], inputs[at[1]], ...
    std::map<std::string, value> feeds(const std::vector<value>& inputs, const std::vector<std::size_t>& at,
                                       const char* what) const {
        std::map<std::string, value> in;
        for (std::size_t k = 0; k < at.size(); ++k) {
            if (at[k] >= inputs.size())
                throw exec_error("sgmatch::exec::node_call: " + std::string(what) + " '" + name_ + "' reads input " +
                                 std::to_string(at[k]) + "; " + std::to_string(inputs.size()) + " were given");
            in.emplace(std::to_string(k), inputs[at[k]]);
        }
        return in;
    }
    std::vector<value> run_unfused(const std::vector<value>& inputs, run_stats& st) const {
        const auto in = feeds(inputs, fused_->ops_inputs, "node");
        ++st.fallbacks;
        return unfused_->run(in, &st);
    }
    std::vector<value> run_region(const std::vector<value>& inputs, run_stats& st) const {
        const auto in = feeds(inputs, region_->runtime_inputs, "region node");
        ++st.region_nodes;
        return region_->exec->run(in, &st);
    }

    std::string name_;
    std::shared_ptr<const onednn::fused_node> fused_;
    std::shared_ptr<const executor> unfused_;
    std::shared_ptr<detail::fallback_log> log_;
    std::shared_ptr<const subgraph_node> region_;
};

}  // namespace exec
SGMATCH_END_NAMESPACE
