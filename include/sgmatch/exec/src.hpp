// sgmatch/exec/src.hpp - the executor (exec/executor.hpp: every kernel it binds, the control-flow
// bodies) and the region backend's op list compiled in the one translation unit that includes
// this header, in a program built with SGMATCH_SEPARATE_COMPILATION (sgmatch/detail/config.hpp).
// Include it in exactly one .cpp of the program.
#pragma once

#if !defined(SGMATCH_SEPARATE_COMPILATION)
#error "sgmatch/exec/src.hpp is for programs built with SGMATCH_SEPARATE_COMPILATION (see sgmatch/exec/executor.hpp)"
#endif

#include "sgmatch/exec/impl/executor.ipp"
#include "sgmatch/exec/impl/subgraph.ipp"
