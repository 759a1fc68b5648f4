// The ONNX backend test cases (Debian's libonnx-testdata) as the oracle: every case is loaded by
// the ONNX front end and run three ways, compared with the outputs ONNX ships:
//   reference  - the xtensor reference kernels
//   onednn     - one oneDNN primitive per op where there is one
//   fused      - after the ready-made fusion backend (apply_backend "onednn"), fused kernels
// A case the kernels cannot run is skipped with the reason (the op, attribute or element type);
// an unsupported op is a skip, never a pass. Tolerance as ONNX's own runner (rtol 1e-3, atol
// 1e-7) for the reference kernels; atol 2e-6 for the oneDNN ones (see compare()).
//
//   onnx_conformance <data-dir> [--expect <list>] [--case <substring>] [--verbose]
//
// With --expect, every case named in the list must pass and every passing case must be named in
// it: a regression fails, and so does a case that starts to pass until the list says so. In the
// two oneDNN runs every QLinearConv and ConvInteger of a form oneDNN's int8 convolution takes
// (int8 weights, no weight zero point) must run on it (run_stats::onednn_typed_nodes), or the
// run fails. Prints a table per op and the closing line "N passed, M failed, K skipped".
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include <onnx/onnx-data_pb.h>

#include "sgmatch/exec/executor.hpp"
#include "sgmatch/onednn/backend.hpp"
#include "sgmatch/onnx/file.hpp"
#include "sgmatch/onnx/load.hpp"
#include "sgmatch/partition/partition.hpp"

namespace fs = std::filesystem;
using namespace sgmatch;

namespace {

struct outcome {
    enum { pass, fail, skip } result = skip;
    std::string why;
    bool fused = false;  // at least one fused node ran
    int int8_convs = 0;          // QLinearConv / ConvInteger nodes oneDNN's int8 convolution takes (int8 weights, no weight zero point)
    bool int8_reference = false; // ... and a oneDNN run ran one of them on its reference kernel
};

// The QLinearConv and ConvInteger nodes of g whose form oneDNN's int8 convolution takes
// (exec/kernels/qconv_onednn.hpp: int8 weights, every weight zero point 0), their weights and
// zero points read from the constants or the run's inputs.
int int8_convs_taken(const graph& g, const std::map<std::string, exec::value>& in) {
    auto value_at = [&](value_ref<node_id> r) -> std::optional<exec::value> {
        if (g.kind(r.node) == node_kind::constant) {
            const auto c = g.constant(r.node);
            if (!c || c->data == nullptr) return std::nullopt;
            return exec::value::view(c->data, c->type, exec::shape(c->dims, c->dims + c->rank));
        }
        const auto it = in.find(std::string(g.name(r.node)));
        return it == in.end() ? std::nullopt : std::optional<exec::value>(it->second);
    };
    int n = 0;
    for (node_id x : g.nodes()) {
        if (g.kind(x) != node_kind::op) continue;
        const std::string op(g.op_name(x));
        const std::size_t w_slot = op == "QLinearConv" ? 3 : op == "ConvInteger" ? 1 : 0, wz_slot = w_slot + 2;
        if (w_slot == 0 || g.input_count(x) <= w_slot) continue;
        const auto w = value_at(g.input(x, w_slot));
        if (!w || w->type() != dtype::i8) continue;
        bool zero = true;
        if (g.input_count(x) > wz_slot) {
            const auto wz = value_at(g.input(x, wz_slot));
            zero = wz.has_value();
            if (wz)
                for (const auto z : wz->to_ints()) zero = zero && z == 0;
        }
        n += zero ? 1 : 0;
    }
    return n;
}

// The first line of a message, without the "sgmatch::...: " prefixes, for the skip table.
std::string reason(std::string m) {
    if (const auto nl = m.find("\n  "); nl != std::string::npos) m = m.substr(nl + 3);  // the first unsupported thing
    if (const auto nl = m.find('\n'); nl != std::string::npos) m = m.substr(0, nl);
    for (const char* p : {"sgmatch::exec::executor: ", "sgmatch::onnx: ", "sgmatch: "})
        if (m.rfind(p, 0) == 0) m = m.substr(std::string(p).size());
    return m;
}

// Compares within rtol 1e-3 and atol: 1e-7 (ONNX's own runner) for the reference kernels, 2e-6
// for oneDNN's, whose eltwise log is 1.43e-6 off at log(1) = 0 (node/test_log_example), where
// no relative tolerance helps. Integers and bools compare exactly; the element types must be
// the same. Empty when equal, else what differs.
std::string compare(const exec::value& got, const exec::value& want, double atol) {
    if (got.is_none() != want.is_none()) return got.is_none() ? "an empty optional, expected a value" : "a value, expected an empty optional";
    if (want.is_none()) return got.none_of_sequence() == want.none_of_sequence() && got.type() == want.type() ? "" : "an empty optional of another type";
    if (got.is_sequence() != want.is_sequence()) return got.is_sequence() ? "a sequence, expected a tensor" : "a tensor, expected a sequence";
    if (want.is_sequence()) {
        if (got.items().size() != want.items().size())
            return "a sequence of " + std::to_string(got.items().size()) + " tensors, expected " + std::to_string(want.items().size());
        for (std::size_t i = 0; i < want.items().size(); ++i)
            if (auto d = compare(got.items()[i], want.items()[i], atol); !d.empty()) return "tensor " + std::to_string(i) + " of the sequence: " + d;
        if (got.type() != want.type())
            return "a sequence of " + std::string(name_of(got.type())) + ", expected " + std::string(name_of(want.type()));
        return {};
    }
    if (got.type() != want.type())
        return "element type " + std::string(name_of(got.type())) + ", expected " + std::string(name_of(want.type()));
    if (got.dims() != want.dims()) return "shape " + exec::to_string(got.dims()) + " expected " + exec::to_string(want.dims());
    const bool real = want.type() == dtype::f32 || want.type() == dtype::f64 || want.type() == dtype::f16 || want.type() == dtype::bf16;
    const const_tensor_view g = got.as_constant(), w = want.as_constant();
    for (std::size_t i = 0; i < static_cast<std::size_t>(want.size()); ++i) {
        if (!real) {
            if (std::memcmp(static_cast<const char*>(got.data()) + i * size_of(got.type()),
                            static_cast<const char*>(want.data()) + i * size_of(want.type()), size_of(want.type())) == 0)
                continue;
        } else {
            const double a = g.at(i), b = w.at(i);
            if (a == b || (std::isnan(b) && std::isnan(a))) continue;  // equal infinities too
            if (std::abs(a - b) <= atol + 1e-3 * std::abs(b)) continue;
        }
        char m[96];
        std::snprintf(m, sizeof m, "element %zu: %.9g expected %.9g", i, g.at(i), w.at(i));
        return m;
    }
    return {};
}

outcome run_case_checked(const fs::path& dir);

// A test-data tensor file. ONNX writes bfloat16 test data as UINT16 tensors holding the bits:
// read as bfloat16 where the model declares that value bfloat16.
sgmatch::onnx::tensor read_test_tensor(const fs::path& path, std::optional<tensor_type> declared) {
    const sgmatch::onnx::detail::file_bytes bytes(path.string());
    ::onnx::TensorProto t;
    if (bytes.size() > static_cast<std::size_t>(INT32_MAX) || !t.ParseFromArray(bytes.data(), static_cast<int>(bytes.size())))
        return sgmatch::onnx::read_tensor_file(path.string());  // its own error
    if (t.data_type() == ::onnx::TensorProto::UINT16 && declared && declared->type == dtype::bf16)
        t.set_data_type(::onnx::TensorProto::BFLOAT16);
    return sgmatch::onnx::decode(t, path.parent_path().string());
}
exec::value sequence_value(const ::onnx::SequenceProto& sp, const fs::path& path, dtype type) {
    if (sp.elem_type() != ::onnx::SequenceProto::TENSOR) throw sgmatch::onnx::load_error("test data " + path.string() + " is not a sequence of tensors");
    std::vector<exec::value> items;
    for (const auto& t : sp.tensor_values()) items.push_back(sgmatch::onnx::decode(t, path.parent_path().string()).to_value());
    return exec::value::sequence(type, std::move(items));
}
// A test-data file for a value of type `declared`: a TensorProto, a SequenceProto of tensors
// where the model declares a sequence, an OptionalProto where it declares an optional (empty:
// exec::value::none).
exec::value read_test_value(const fs::path& path, std::optional<tensor_type> declared) {
    if (!declared || (!declared->sequence && !declared->optional)) return read_test_tensor(path, declared).to_value();
    const sgmatch::onnx::detail::file_bytes bytes(path.string());
    const int size = bytes.size() > static_cast<std::size_t>(INT32_MAX) ? -1 : static_cast<int>(bytes.size());
    if (declared->optional) {
        ::onnx::OptionalProto op;
        if (size < 0 || !op.ParseFromArray(bytes.data(), size)) throw sgmatch::onnx::load_error("test data " + path.string() + " is not an optional");
        if (op.has_tensor_value()) return sgmatch::onnx::decode(op.tensor_value(), path.parent_path().string()).to_value();
        if (op.has_sequence_value()) return sequence_value(op.sequence_value(), path, declared->type);
        return exec::value::none(declared->type, declared->sequence);
    }
    ::onnx::SequenceProto sp;
    if (size < 0 || !sp.ParseFromArray(bytes.data(), size)) throw sgmatch::onnx::load_error("test data " + path.string() + " is not a sequence");
    return sequence_value(sp, path, declared->type);
}
std::optional<tensor_type> input_type(const graph& g, const std::string& name) {
    for (node_id n : g.nodes())
        if (g.kind(n) == node_kind::input && g.name(n) == name) return g.value_type(n, 0);
    return std::nullopt;
}

// A case; a load_error from its test data is a failure of the case, not of the run.
outcome run_case(const fs::path& dir) {
    try {
        return run_case_checked(dir);
    } catch (const std::exception& e) {
        outcome r;
        r.result = outcome::fail;
        r.why = reason(e.what());
        return r;
    }
}

// Cases whose shipped outputs follow a definition sgmatch does not: a skip, with the reason.
const char* data_disagreement(const std::string& name) {
    // ONNX 1.12's reference cut float to bfloat16 (truncation); sgmatch rounds to nearest even,
    // as ONNX's later reference, ONNX Runtime and PyTorch do.
    if (name.find("FLOAT_to_BFLOAT16") != std::string::npos)
        return "the test data truncates float to bfloat16; sgmatch rounds to nearest even";
    return nullptr;
}

outcome run_case_checked(const fs::path& dir) {
    outcome r;
    if (const char* why = data_disagreement(dir.filename().string())) {
        r.why = why;
        return r;
    }
    sgmatch::onnx::model m;
    try {
        m = sgmatch::onnx::load((dir / "model.onnx").string());
    } catch (const sgmatch::onnx::load_error& e) {
        const std::string w = e.what();
        if (w.find("thing(s) the kernels cannot run") != std::string::npos || w.find("is not supported") != std::string::npos) {
            r.why = reason(w);
            return r;
        }
        r.result = outcome::fail;
        r.why = "load: " + reason(w);
        return r;
    }
    std::vector<fs::path> sets;
    for (const auto& e : fs::directory_iterator(dir))
        if (e.is_directory() && e.path().filename().string().rfind("test_data_set_", 0) == 0) sets.push_back(e.path());
    std::sort(sets.begin(), sets.end());
    if (sets.empty()) {
        r.why = "no test data";
        return r;
    }
    // The three executors, built once per case.
    graph fused = m.graph;
    std::vector<std::unique_ptr<exec::executor>> runs;
    try {
        (void)apply_backend(fused, "onednn");
        runs.push_back(std::make_unique<exec::executor>(m.graph, exec::mode::reference));
        runs.push_back(std::make_unique<exec::executor>(m.graph, exec::mode::onednn));
        runs.push_back(std::make_unique<exec::executor>(fused, exec::mode::onednn));
    } catch (const exec::exec_error& e) {
        r.why = reason(e.what());
        return r;
    }
    static const char* names[] = {"reference", "onednn", "fused"};
    for (const auto& set : sets) {
        std::map<std::string, exec::value> in;
        std::vector<exec::value> want;
        for (std::size_t i = 0;; ++i) {
            const fs::path p = set / ("input_" + std::to_string(i) + ".pb");
            if (!fs::exists(p)) break;
            exec::value t;
            try {
                t = read_test_value(p, i < m.inputs.size() ? input_type(m.graph, m.inputs[i]) : std::nullopt);
            } catch (const sgmatch::onnx::load_error& e) {  // an element type sgmatch has not: a skip
                if (std::string(e.what()).find("is not supported") == std::string::npos) throw;
                r.why = "test data: " + reason(e.what());
                return r;
            }
            if (i >= m.inputs.size()) {
                r.result = outcome::fail;
                r.why = "more input files than graph inputs";
                return r;
            }
            in.emplace(m.inputs[i], t);
        }
        for (std::size_t i = 0;; ++i) {
            const fs::path p = set / ("output_" + std::to_string(i) + ".pb");
            if (!fs::exists(p)) break;
            const auto declared = i < m.graph.graph_output_count() ? m.graph.value_type(m.graph.graph_output(i).node, m.graph.graph_output(i).port)
                                                                    : std::nullopt;
            want.push_back(read_test_value(p, declared));
        }
        const int int8_convs = int8_convs_taken(m.graph, in);  // this set's inputs decide the forms
        r.int8_convs = std::max(r.int8_convs, int8_convs);
        for (std::size_t k = 0; k < runs.size(); ++k) {
            try {
                exec::run_stats st;
                const auto got = runs[k]->run(in, &st);
                r.fused = r.fused || st.fused_nodes > 0;
                // In the oneDNN modes every int8 convolution of a form oneDNN takes ran on it.
                if (k > 0 && st.onednn_typed_nodes < static_cast<std::size_t>(int8_convs)) r.int8_reference = true;
                if (got.size() != want.size()) {
                    r.result = outcome::fail;
                    r.why = std::string(names[k]) + ": " + std::to_string(got.size()) + " outputs, expected " + std::to_string(want.size());
                    return r;
                }
                for (std::size_t o = 0; o < want.size(); ++o)
                    if (auto d = compare(got[o], want[o], k == 0 ? 1e-7 : 2e-6); !d.empty()) {
                        r.result = outcome::fail;
                        r.why = std::string(names[k]) + ": output " + std::to_string(o) + " " + d;
                        return r;
                    }
            } catch (const std::exception& e) {
                r.result = outcome::fail;
                r.why = std::string(names[k]) + ": " + reason(e.what());
                return r;
            }
        }
    }
    r.result = outcome::pass;
    return r;
}

// The op a case tests: the directory name without "test_" and the variant (node cases), or the
// model's first op type for the other suites.
std::string op_of(const fs::path& dir) {
    std::string n = dir.filename().string();
    if (n.rfind("test_", 0) == 0) n = n.substr(5);
    const auto us = n.find('_');
    return us == std::string::npos ? n : n.substr(0, us);
}

}  // namespace

int main(int argc, char** argv) {
    if (argc < 2) {
        std::fprintf(stderr, "usage: %s <data-dir>... [--expect list] [--case substring] [--verbose]\n", argv[0]);
        return 2;
    }
    std::vector<fs::path> roots;
    std::string expect_file, only;
    bool verbose = false;
    for (int i = 1; i < argc; ++i) {
        const std::string a = argv[i];
        if (a == "--expect" && i + 1 < argc) expect_file = argv[++i];
        else if (a == "--case" && i + 1 < argc) only = argv[++i];
        else if (a == "--verbose") verbose = true;
        else roots.emplace_back(a);
    }
    onednn::register_backend<graph>();
    std::vector<std::pair<std::string, fs::path>> cases;  // "suite/name"
    for (const auto& root : roots) {
        if (!fs::is_directory(root)) {
            std::fprintf(stderr, "no such directory: %s (install libonnx-testdata)\n", root.c_str());
            return 2;
        }
        for (const auto& e : fs::directory_iterator(root))
            if (e.is_directory() && fs::exists(e.path() / "model.onnx")) {
                const std::string id = root.filename().string() + "/" + e.path().filename().string();
                if (only.empty() || id.find(only) != std::string::npos) cases.emplace_back(id, e.path());
            }
    }
    std::sort(cases.begin(), cases.end());
    std::set<std::string> expected;
    if (!expect_file.empty()) {
        std::ifstream in(expect_file);
        if (!in) {
            std::fprintf(stderr, "cannot read %s\n", expect_file.c_str());
            return 2;
        }
        for (std::string line; std::getline(in, line);)
            if (!line.empty() && line[0] != '#') expected.insert(line);
    }
    struct tally {
        int pass = 0, fail = 0, skip = 0;
    };
    std::map<std::string, tally> per_op;
    std::map<std::string, int> skip_reasons;
    int passed = 0, failed = 0, skipped = 0, with_fused = 0, regressions = 0, unlisted = 0, int8_cases = 0, int8_reference = 0;
    for (const auto& [id, dir] : cases) {
        const outcome r = run_case(dir);
        tally& t = per_op[op_of(dir)];
        if (r.result == outcome::pass) {
            ++passed, ++t.pass;
            with_fused += r.fused ? 1 : 0;
            int8_cases += r.int8_convs > 0 ? 1 : 0;
            if (r.int8_reference) {
                ++int8_reference;
                std::printf("INT8 ON THE REFERENCE KERNEL %s: a QLinearConv / ConvInteger oneDNN takes did not run on it\n", id.c_str());
            }
            if (!expect_file.empty() && !expected.count(id)) {
                ++unlisted;
                std::printf("PASSES, NOT LISTED %s\n", id.c_str());
            }
        } else {
            if (r.result == outcome::fail) {
                ++failed, ++t.fail;
                std::printf("FAIL %s: %s\n", id.c_str(), r.why.c_str());
            } else {
                ++skipped, ++t.skip;
                ++skip_reasons[r.why];
                if (verbose) std::printf("skip %s: %s\n", id.c_str(), r.why.c_str());
            }
            if (expected.count(id)) {
                ++regressions;
                std::printf("REGRESSION %s (listed as passing): %s\n", id.c_str(), r.why.c_str());
            }
        }
    }
    std::printf("\n%-28s %6s %6s %6s\n", "op", "pass", "fail", "skip");
    for (const auto& [op, t] : per_op)
        if (t.pass || t.fail) std::printf("%-28s %6d %6d %6d\n", op.c_str(), t.pass, t.fail, t.skip);
    int skip_only = 0;
    for (const auto& [op, t] : per_op) skip_only += (t.pass || t.fail) ? 0 : 1;
    std::printf("(%d more ops: every case skipped)\n", skip_only);
    if (verbose) {
        std::printf("\nskip reasons:\n");
        for (const auto& [why, n] : skip_reasons) std::printf("%5d  %s\n", n, why.c_str());
    }
    std::printf("\n%d cases ran with at least one fused node\n", with_fused);
    std::printf("%d passing cases hold int8 convolutions oneDNN takes; %d of them ran one on the reference kernel\n", int8_cases,
                int8_reference);
    if (!expect_file.empty())
        std::printf("%d listed cases regressed, %d passing cases not listed (%s)\n", regressions, unlisted, expect_file.c_str());
    std::printf("%d passed, %d failed, %d skipped\n", passed, failed, skipped);
    return failed == 0 && regressions == 0 && unlisted == 0 && int8_reference == 0 ? 0 : 1;
}
