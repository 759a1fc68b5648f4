// One translation unit of sgmatch_add_compiled's library (cmake/sgmatch_compiled.cmake): the
// ready-made oneDNN backend and the lowering of fused properties, for the built-in graph.
#include "sgmatch/onednn/src.hpp"
