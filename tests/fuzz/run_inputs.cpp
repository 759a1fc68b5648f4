// libFuzzer target: what sgmatch-run reads besides the model. The first byte picks the reader:
// 'A' the argument vector (NUL-separated arguments, sgmatch_run::parse), 'N' a .npy file
// (reference::read_npy), anything else a TensorProto .pb file (onnx::read_tensor_file's
// decoding). Every input either parses or is that reader's own error; anything else (a crash,
// another exception, a sanitizer report, an allocation past -rss_limit_mb) is a finding.
#include <cstddef>
#include <cstdint>
#include <sstream>
#include <string>
#include <vector>

#include "sgmatch/onnx/tensor.hpp"
#include "sgmatch/reference/npy.hpp"
#include "sgmatch_run_options.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    if (size == 0) return 0;
    const std::string bytes(reinterpret_cast<const char*>(data) + 1, size - 1);
    if (data[0] == 'A') {
        std::vector<std::string> args;
        std::string cur;
        for (char c : bytes) {
            if (c == '\0') {
                args.push_back(cur);
                cur.clear();
            } else {
                cur += c;
            }
        }
        if (!cur.empty()) args.push_back(cur);
        try {
            const sgmatch_run::options o = sgmatch_run::parse(args);
            if (!o.help && (o.model.empty() || o.rounds < 1 || o.max_memory == 0)) __builtin_trap();  // parse's own promises
        } catch (const sgmatch_run::usage_error&) {
        }
    } else if (data[0] == 'N') {
        std::istringstream in(bytes);
        try {
            (void)sgmatch::reference::read_npy(in, "fuzz.npy");
        } catch (const sgmatch::reference::npy_error&) {
        }
    } else {
        ::onnx::TensorProto t;
        if (bytes.size() > static_cast<std::size_t>(INT32_MAX) || !t.ParseFromArray(bytes.data(), static_cast<int>(bytes.size()))) return 0;
        try {
            (void)sgmatch::onnx::decode(t, {}, std::uint64_t{64} << 20);
        } catch (const sgmatch::onnx::load_error&) {
        }
    }
    return 0;
}
