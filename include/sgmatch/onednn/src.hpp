// sgmatch/onednn/src.hpp - the ready-made backend and the lowering every fused property shares
// (onednn/property.hpp) compiled, for the built-in graph, in the one translation unit that
// includes this header, when the program is built with SGMATCH_SEPARATE_COMPILATION
// (onednn/register.hpp). Include it in exactly one .cpp.
#pragma once

#if !defined(SGMATCH_SEPARATE_COMPILATION)
#error "sgmatch/onednn/src.hpp is for programs built with SGMATCH_SEPARATE_COMPILATION (see sgmatch/onednn/register.hpp)"
#endif

#include "sgmatch/graph/graph.hpp"
#include "sgmatch/onednn/backend.hpp"
#include "sgmatch/onednn/property.hpp"
#include "sgmatch/onednn/register.hpp"

SGMATCH_ONEDNN_INSTANTIATE_BACKEND(::sgmatch::graph);
SGMATCH_ONEDNN_INSTANTIATE_LOWERING(::sgmatch::graph);
