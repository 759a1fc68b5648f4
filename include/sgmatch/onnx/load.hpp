// sgmatch/onnx/load.hpp - the ONNX front end: a model file into sgmatch's built-in graph.
//
//   sgmatch::onnx::model m = sgmatch::onnx::load("resnet.onnx", {.batch = 1});
//   m.graph;            // graph inputs and outputs under the model's names, typed constants
//   m.inputs, m.outputs, m.opset, m.report
//
// - Initializers and Constant nodes become constants with their data and element type (f32,
//   f16, bf16, f64, int8, uint8, int32, int64, bool). An initializer that is also listed as a
//   graph input (IR < 4) is a constant.
// - Every value an op computes gets its shape from the op description's shape rule (the same
//   rule the executor's shapes agree with), from the graph inputs' declared shapes; a shape the
//   model declares must agree. A symbolic dim is bound by `options.dims` (by name) or, for a graph
//   input's first dim, `options.batch`, and is -1 (unknown) otherwise. libonnx's own shape
//   inference can run first (`onnx_shape_inference`): it trusts the file (it crashes on some
//   malformed models, found by fuzzing) and runs only when ONNX's checker accepts every node.
// - Opset-dependent meanings are written out in the terms of sgmatch's op descriptions
//   (ops/table.hpp): Softmax, LogSoftmax and Hardmax before opset 13 (an explicit axis, refused where
//   they flatten several axes), Concat before opset 4 (axis 1), Pad's opset-1 "paddings", PRelu's
//   per-channel slope before opset 7, Clip's bounds given as empty inputs.
// - Everything the kernels cannot run is found at once: every op without a description, every
//   attribute value no kernel implements, every element type other than f32 an op computes, with
//   node names. With options.check_support (the default) they are one load_error; otherwise
//   they are listed in report.unsupported and the graph is still built (to partition it).
// - Bad input is a load_error naming the node or field, never a crash: a truncated or corrupt
//   file, a dangling input name, a cycle, a value produced twice, an initializer whose data
//   disagrees with its dims, dims too large to hold (checked before anything is allocated),
//   external data outside the model's directory.
//
// sgmatch::onnx and libonnx's ::onnx are two namespaces: after `using namespace sgmatch`, write
// sgmatch::onnx::load (a bare onnx:: is ambiguous).
//
// Known limitations: a front end that converts (the design says why), so the model's protobuf
// is not kept; ops of non-default domains are reported unsupported. Sub-graphs (If, Loop, Scan,
// SequenceMap) are converted, each body a graph of its own held by its node's attribute.
//
// Compile cost: the converter is in onnx/impl/load.ipp, which this header includes; a program
// built with SGMATCH_SEPARATE_COMPILATION compiles it once, in the one translation unit that
// includes onnx/src.hpp.
#pragma once

#include <cstddef>
#include <istream>
#include <string>

#include "sgmatch/detail/config.hpp"
#include "sgmatch/onnx/model.hpp"
#include "sgmatch/onnx/tensor.hpp"

SGMATCH_BEGIN_NAMESPACE
namespace onnx {

/// A model from bytes in memory. `base_dir`: where external data lives (empty: none allowed).
SGMATCH_DECL model load_bytes(const void* data, std::size_t size, const load_options& o = {}, const std::string& base_dir = {});

/// A model from a stream (read in blocks: a model of 100 MB is read in a few ms).
SGMATCH_DECL model load(std::istream& in, const load_options& o = {}, const std::string& base_dir = {});

/// A model file; external data is read from beside it. The file is mapped, not copied, while it
/// is parsed (onnx/file.hpp).
SGMATCH_DECL model load(const std::string& path, const load_options& o = {});

}  // namespace onnx
SGMATCH_END_NAMESPACE

#if !defined(SGMATCH_SEPARATE_COMPILATION)
#include "sgmatch/onnx/impl/load.ipp"
#endif
