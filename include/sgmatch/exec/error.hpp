// sgmatch/exec/error.hpp - the error of running a graph.
#pragma once

#include <stdexcept>

#include "sgmatch/detail/config.hpp"

SGMATCH_BEGIN_NAMESPACE
namespace exec {

/// Raised when a graph cannot run: a node with no kernel, a missing input, a constant without
/// data, an attribute no kernel implements, a computed value whose shape or element type
/// disagrees with the declared one.
class exec_error : public std::runtime_error {
public:
    using std::runtime_error::runtime_error;
};

}  // namespace exec
SGMATCH_END_NAMESPACE
