// sgmatch/torch/library.hpp - the `sgmatch` operator library for TorchScript.
//
//   // one .cpp of the program or plugin (sgmatch_add_torch_plugin makes such a plugin):
//   #include <sgmatch/torch/library.hpp>
//   SGMATCH_TORCH_LIBRARY()
//
// registers, once per process:
//   sgmatch::run(str spec, Tensor[] inputs) -> Tensor[]     the fused node's kernel (run.hpp)
//   sgmatch::optimize(Any module, str backend="onednn", Tensor[]? example_inputs=None) -> str
//                         freezes a scripted module if needed and rewrites its forward method in
//                         place (pass.hpp); returns the report's text. From Python:
//                         torch.ops.sgmatch.optimize(scripted_module) (an op cannot return the
//                         Python module object: the module passed in is the optimized one)
//   sgmatch::report(Any module) -> str
//                         the sgmatch::run nodes of an optimized module and the ops each holds
//   sgmatch::enable(str backend="onednn") -> ()
//                         registers the pass with TorchScript (a custom post pass): every graph
//                         TorchScript optimizes from then on is rewritten, with no call
//   sgmatch::counters() -> int[]
//                         kernel calls, specs compiled, inputs made contiguous, fused kernels run,
//                         fallbacks, calls run by TorchScript, refusals (run_counters)
#pragma once

#include <torch/csrc/jit/passes/pass_manager.h>
#include <torch/library.h>

#include <atomic>
#include <sstream>
#include <string>
#include <vector>

#include "sgmatch/detail/config.hpp"
#include "sgmatch/torch/pass.hpp"
#include "sgmatch/torch/run.hpp"

SGMATCH_BEGIN_NAMESPACE
namespace torch {

/// The sgmatch::run nodes of g (and of its blocks), each with the ops its spec holds:
/// "name: op, op, ..." a line.
inline std::string describe_fused(const ::torch::jit::Block* b) {
    std::ostringstream s;
    for (const ::torch::jit::Node* n : b->nodes()) {
        if (n->kind() == c10::Symbol::fromQualString("sgmatch::run")) {
            s << n->output()->debugName() << ":";
            const auto spec = ::torch::jit::toIValue(n->input(0));
            if (spec && spec->isString()) {
                const region_spec r = parse_spec(spec->toStringRef());
                const char* sep = " ";
                for (const ::torch::jit::Node* m : r.graph->nodes()) {
                    if (m->kind() == c10::prim::Constant || m->kind() == c10::prim::ListConstruct) continue;
                    s << sep << m->kind().toQualString();
                    sep = ", ";
                }
                s << " (" << r.backend << ")";
            }
            s << "\n";
        }
        for (const ::torch::jit::Block* sub : n->blocks()) s << describe_fused(sub);
    }
    return s.str();
}

namespace detail {

inline ::torch::jit::Module module_of(const c10::IValue& v, const char* call) {
    if (!v.isObject()) throw backend_error(std::string("sgmatch::") + call + ": the argument is not a scripted module");
    return ::torch::jit::Module(v.toObject());
}

inline bool enable_pass(const std::string& backend) {
    static std::mutex m;
    static bool registered = false;
    static options opt;
    std::lock_guard<std::mutex> lock(m);
    opt.backend = backend;
    if (!registered) {
        ::torch::jit::registerPostPass([](std::shared_ptr<::torch::jit::Graph>& g) {
            options o;
            {
                std::lock_guard<std::mutex> l(m);
                o = opt;
            }
            optimize(g, o);
        });
        registered = true;
    }
    return true;
}

}  // namespace detail

/// Defines the operators above in library m (the body of TORCH_LIBRARY(sgmatch, m)).
inline void define_library(::torch::Library& m) {
    m.def("run(str spec, Tensor[] inputs) -> Tensor[]", [](const std::string& spec, const std::vector<at::Tensor>& inputs) {
        return run(spec, inputs);
    });
    m.def("optimize(Any module, str backend=\"onednn\", Tensor[]? example_inputs=None) -> str",
          [](const c10::IValue& module, const std::string& backend, const c10::optional<std::vector<at::Tensor>>& examples) {
              ::torch::jit::Module mod = detail::module_of(module, "optimize");
              options o;
              o.backend = backend;
              if (examples) o.example_inputs = *examples;
              return optimize(mod, o).text();
          });
    m.def("report(Any module) -> str", [](const c10::IValue& module) {
        ::torch::jit::Module mod = detail::module_of(module, "report");
        return describe_fused(mod.get_method("forward").graph()->block());
    });
    m.def("enable(str backend=\"onednn\") -> ()", [](const std::string& backend) { detail::enable_pass(backend); });
    m.def("counters() -> int[]", []() {
        const run_counters& c = run_counters::instance();
        return std::vector<std::int64_t>{static_cast<std::int64_t>(c.calls.load()), static_cast<std::int64_t>(c.compiled.load()),
                                         static_cast<std::int64_t>(c.made_contiguous.load()),
                                         static_cast<std::int64_t>(c.fused_kernels.load()),
                                         static_cast<std::int64_t>(c.fallbacks.load()),
                                         static_cast<std::int64_t>(c.native_runs.load()),
                                         static_cast<std::int64_t>(c.refusals.load())};
    });
}

}  // namespace torch
SGMATCH_END_NAMESPACE

/// Registers the sgmatch operator library (see the top of this file); once per program.
#define SGMATCH_TORCH_LIBRARY() \
    TORCH_LIBRARY(sgmatch, m) { ::sgmatch::torch::define_library(m); }
