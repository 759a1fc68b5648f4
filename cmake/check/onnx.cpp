// Built when SGMATCH_CHECK_DEPENDENCIES is on (a package build): the ONNX front end compiles and
// links against the libonnx and protobuf that were found.
#include <sgmatch/onnx/load.hpp>

int main() {
    try {
        (void)sgmatch::onnx::load_bytes("", 0);
    } catch (const sgmatch::onnx::load_error&) {
        return 0;
    }
    return 1;
}
