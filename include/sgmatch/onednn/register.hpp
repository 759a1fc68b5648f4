// sgmatch/onednn/register.hpp - register the ready-made "onednn" backend from a translation unit
// that need not compile it.
//
//   #include <sgmatch/onednn/register.hpp>
//   static const bool on = sgmatch::onednn::register_backend<sgmatch::graph>();
//
// By default this header includes the backend's definition (onednn/backend.hpp), and whatever
// translation unit registers it compiles the fused kernels, the lowering and the matchers
// (benchmarks/RESULTS.md, "The ready-made oneDNN backend's compile cost"). With
// SGMATCH_SEPARATE_COMPILATION defined in every translation unit of the program
// (target_compile_definitions), it only declares it, and one translation unit of the program
// compiles it, once (as Boost.Asio's separate compilation does):
//
//   // sgmatch_onednn.cpp: the one translation unit that compiles the backend
//   #include <sgmatch/onednn/src.hpp>
//
// src.hpp compiles it for the built-in graph, which also serves the region backend
// (exec/subgraph.hpp: its regions are built-in graphs whatever the graph type). For a graph type
// of your own, declare it in a header that every user of the backend includes,
// SGMATCH_ONEDNN_EXTERN_BACKEND(my_graph), and compile it in that one .cpp after src.hpp:
// SGMATCH_ONEDNN_INSTANTIATE_BACKEND(my_graph).
#pragma once

#include <string>

#include "sgmatch/detail/config.hpp"
#include "sgmatch/partition/partition.hpp"

SGMATCH_BEGIN_NAMESPACE

class graph;

namespace onednn {

/// The ready-made backend as an object (its properties in order: onednn/backend.hpp), to apply as
/// it is (apply_backend(g, b)) or to register.
template <class G>
backend<G> make_backend(const std::string& name = "onednn");

/// Register the "onednn" backend for graphs of type G (idempotent, and safe to call from
/// several threads at once: the backend is registered whole, once). Returns true, so that a .cpp
/// can call it at static-initialization time.
template <class G>
bool register_backend(const std::string& name = "onednn") {
    if (backend_registry<G>::instance().find(name) == nullptr) backend_registry<G>::instance().insert(make_backend<G>(name));
    return true;
}

}  // namespace onednn

SGMATCH_END_NAMESPACE

/// The ready-made backend for graphs of type G is compiled in another translation unit.
#define SGMATCH_ONEDNN_EXTERN_BACKEND(G) \
    extern template ::sgmatch::backend<G> sgmatch::onednn::make_backend<G>(const std::string&)

/// Compile the ready-made backend for graphs of type G here (after including onednn/src.hpp).
#define SGMATCH_ONEDNN_INSTANTIATE_BACKEND(G) \
    template ::sgmatch::backend<G> sgmatch::onednn::make_backend<G>(const std::string&)

#if defined(SGMATCH_SEPARATE_COMPILATION)
SGMATCH_ONEDNN_EXTERN_BACKEND(::sgmatch::graph);
#else
#include "sgmatch/onednn/backend.hpp"
#endif
