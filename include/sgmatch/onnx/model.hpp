// sgmatch/onnx/model.hpp - what onnx::load takes and gives: its options, the loaded model and
// the load report.
#pragma once

#include <cstddef>
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "sgmatch/detail/config.hpp"
#include "sgmatch/graph/graph.hpp"
#include "sgmatch/passes/cleanup.hpp"
#include "sgmatch/passes/qdq.hpp"

SGMATCH_BEGIN_NAMESPACE
namespace onnx {

struct load_options {
    std::map<std::string, std::int64_t> dims;  // symbolic dim name -> its value
    std::optional<std::int64_t> batch;         // a graph input's unknown first dim
    bool onnx_shape_inference = false;         // run libonnx's shape inference first (trusted files only)
    bool check_support = true;                 // everything unsupported is one load_error
    bool fold_qdq = true;                      // QDQ groups made QLinearConv / QLinearMatMul (passes/qdq.hpp), first
    bool cleanup = true;                       // run the clean-up passes (passes/cleanup.hpp) after loading
    passes::cleanup_options cleanup_options;   // which ones
    std::uint64_t max_tensor_bytes = std::uint64_t{4} << 30;  // larger tensors are refused
};

struct load_report {
    std::int64_t ir_version = 0;
    std::string producer;
    std::size_t nodes = 0;            // ONNX nodes read
    std::size_t initializers = 0;     // initializers made constants
    std::size_t constant_nodes = 0;   // Constant nodes made constants
    std::vector<std::string> unsupported;  // every op, attribute or type the kernels cannot run
    std::vector<std::string> notes;        // what the loader wrote out (opset meanings), shape inference
    passes::qdq_report qdq;                // what the QDQ rewrite did, and the groups it left in float
    passes::cleanup_report cleanup;        // what the clean-up passes did
};

struct model {
    sgmatch::graph graph;
    std::vector<std::string> inputs;   // graph inputs (initializers excluded), in order
    std::vector<std::string> outputs;  // graph outputs, in order
    std::int64_t opset = 0;            // of the default domain
    load_report report;
};

}  // namespace onnx
SGMATCH_END_NAMESPACE
