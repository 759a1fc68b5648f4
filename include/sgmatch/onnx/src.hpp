// sgmatch/onnx/src.hpp - the ONNX front end (onnx/load.hpp's converter) compiled in the one
// translation unit that includes this header, in a program built with
// SGMATCH_SEPARATE_COMPILATION (sgmatch/detail/config.hpp). Include it in exactly one .cpp.
#pragma once

#if !defined(SGMATCH_SEPARATE_COMPILATION)
#error "sgmatch/onnx/src.hpp is for programs built with SGMATCH_SEPARATE_COMPILATION (see sgmatch/onnx/load.hpp)"
#endif

#include "sgmatch/onnx/impl/load.ipp"
