// libFuzzer target: the ONNX front end on raw bytes. Every input either loads or is a
// sgmatch::onnx::load_error; anything else (a crash, another exception, a sanitizer report, a
// hang or an allocation past libFuzzer's -rss_limit_mb) is a finding.
#include <cstddef>
#include <cstdint>

#include "sgmatch/onnx/load.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    sgmatch::onnx::load_options o;
    o.check_support = false;                // build the graph even when the kernels cannot run it
    o.max_tensor_bytes = std::uint64_t{64} << 20;
    try {
        const sgmatch::onnx::model m = sgmatch::onnx::load_bytes(data, size, o);
        (void)m;
    } catch (const sgmatch::onnx::load_error&) {
    }
    return 0;
}
