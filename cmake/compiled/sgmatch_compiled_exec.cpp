// One translation unit of sgmatch_add_compiled's library (cmake/sgmatch_compiled.cmake): the
// executor, every kernel it binds, and the region backend's op list.
#include "sgmatch/exec/src.hpp"
