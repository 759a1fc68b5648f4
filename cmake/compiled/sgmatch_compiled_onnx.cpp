// One translation unit of sgmatch_add_compiled's library (cmake/sgmatch_compiled.cmake): the
// ONNX front end.
#include "sgmatch/onnx/src.hpp"
