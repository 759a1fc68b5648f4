// sgmatch-run: load an ONNX model, partition it, run it fused and unfused, check it.
//
//   sgmatch-run model.onnx [--backend onednn|onednn.regions|none] [--batch N] [--threads T]
//               [--input name=file.npy|file.pb ...] [--expect file.npy|file.pb] [--dot out.dot]
//               [--save out.onnx] [--rounds K] [--max-memory BYTES] [--max-loop-iterations N]
//               [--explain] [--profile] [--json]          (sgmatch-run --help: every option)
//
// The model and every file are untrusted input: each argument is checked whole
// (sgmatch_run_options.hpp), runs are bounded by --max-memory (8 GiB for one value and for the
// values live at once) and --max-loop-iterations (100,000), and every error is a message on
// stderr with exit status 2.
//
// Prints the load report, the partition per property (candidates, fused, declined with
// reasons), nodes before and after, load and first-run time, fused and unfused times
// (interleaved medians of K rounds), and the largest difference from --expect (exit 1 when it
// exceeds 1e-4 absolute + 1e-3 relative). --json prints the same as one JSON object.
// Inputs not given are filled with deterministic values in [-1, 1] of their declared shape.
// --save writes the partitioned graph as ONNX (fused nodes in the domain ai.sgmatch with their
// pattern and member ops: open it in Netron).
// --profile runs the fused graph K more times with every node timed (exec::run_stats::times) and
// prints the nodes by median time (the kernel that ran each: fused, onednn, reference, typed,
// region) and the time per op or per sequence of fused ops.
// Known limitations: the first graph output is the one compared; a region node is profiled as
// one node.
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <map>
#include <random>
#include <sstream>
#include <string>
#include <vector>

#include <sgmatch/exec/executor.hpp>
#include <sgmatch/exec/subgraph.hpp>
#include <sgmatch/onednn/backend.hpp>
#include <sgmatch/onnx/load.hpp>
#include <sgmatch/onnx/quantize.hpp>
#include <sgmatch/onnx/save.hpp>
#include <sgmatch/partition/dot.hpp>
#include <sgmatch/reference/npy.hpp>

#include "sgmatch_run_options.hpp"

using sgmatch::reference::array;
namespace sx = sgmatch::onnx;

namespace {

[[noreturn]] void die(const std::string& m) {
    std::string hint;  // the library names its limits; here they are options
    if (m.find("exec::limits::max_loop_iterations") != std::string::npos) hint = " (sgmatch-run --max-loop-iterations N)";
    if (m.find("exec::limits::max_") != std::string::npos && hint.empty()) hint = " (sgmatch-run --max-memory BYTES)";
    std::fprintf(stderr, "sgmatch-run: %s%s\n", m.c_str(), hint.c_str());
    std::exit(2);
}

std::string dims_text(const sgmatch::exec::shape& d) {
    std::string t;
    for (auto k : d) t += (t.empty() ? "" : ", ") + std::to_string(k);
    return "[" + t + "]";
}

using sgmatch::exec::value;

// A .npy file (float32) or an ONNX TensorProto .pb (any element type sgmatch has).
value read_tensor(const std::string& path) {
    if (path.size() > 4 && path.substr(path.size() - 4) == ".npy") {
        const array a = sgmatch::reference::read_npy(path);
        return value::of<float>(sgmatch::exec::shape(a.shape().begin(), a.shape().end()), std::vector<float>(a.begin(), a.end()));
    }
    return sx::read_tensor_file(path).to_value();
}

double ms_since(std::chrono::steady_clock::time_point t0) {
    return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
}

double median(std::vector<double> v) {
    std::sort(v.begin(), v.end());
    return v.empty() ? 0 : v[v.size() / 2];
}

std::string json_string(const std::string& s) {
    std::string o = "\"";
    for (char c : s) {
        if (c == '"' || c == '\\') o += '\\';
        if (c == '\n') {
            o += "\\n";
            continue;
        }
        o += c;
    }
    return o + "\"";
}

}  // namespace

int main(int argc, char** argv) {
    sgmatch_run::options opts;
    try {
        opts = sgmatch_run::parse(std::vector<std::string>(argv + 1, argv + argc));
    } catch (const sgmatch_run::usage_error& e) {
        std::fprintf(stderr, "sgmatch-run: %s\n%s", e.what(), sgmatch_run::usage_text());
        return 2;
    }
    if (opts.help) {
        std::printf("%s", sgmatch_run::usage_text());
        return 0;
    }
    const std::string& model_path = opts.model;
    const std::string &backend = opts.backend, &expect_path = opts.expect, &dot_path = opts.dot, &save_path = opts.save;
    const std::map<std::string, std::string>& input_files = opts.inputs;
    const std::optional<std::int64_t> batch = opts.batch;
    const int threads = opts.threads, rounds = opts.rounds;
    const bool json = opts.json, explain = opts.explain, profile = opts.profile;
    sgmatch::exec::limits bounds;
    bounds.max_allocation = bounds.max_live = opts.max_memory;
    bounds.max_loop_iterations = opts.max_loop_iterations;
    // This program is the framework here: it decides the threads (OpenMP reads the variable when
    // oneDNN first runs in parallel, after this line).
    if (threads > 0) setenv("OMP_NUM_THREADS", std::to_string(threads).c_str(), 1);

    try {
        auto t0 = std::chrono::steady_clock::now();
        sx::load_options opt;
        // Quantizing keeps the unknown first dim unknown in the written model (the calibration
        // inputs take --batch for it).
        if (!opts.quantize) opt.batch = batch;
        sx::model m = sx::load(model_path, opt);
        const double load_ms = ms_since(t0);

        // Inputs: given, or deterministic values of the declared shape and type (reals in
        // [-1, 1); integers and bools zero, safe as indices).
        std::map<std::string, value> inputs;
        for (const auto& [name, file] : input_files)
            if (std::find(m.inputs.begin(), m.inputs.end(), name) == m.inputs.end()) {
                std::string known;
                for (const auto& i : m.inputs) known += (known.empty() ? "" : ", ") + ("'" + i + "'");
                die("--input " + name + "=" + file + ": the model has no input '" + name + "' (its inputs: " + known + ")");
            }
        // `given`: inputs already read (a calibration file), which also give an unknown first
        // dim of the others when --batch does not.
        auto fill_inputs = [&](std::mt19937& rng, std::map<std::string, value> given = {}) {
            std::map<std::string, value> filled = given;
            std::optional<std::int64_t> first_dim = batch;
            for (const auto& [name, v] : given)
                if (!first_dim && v.rank() > 0) first_dim = v.dims()[0];
            for (const auto& name : m.inputs) {
                if (filled.count(name) != 0) continue;
                std::optional<sgmatch::tensor_type> declared;
                for (auto n : m.graph.nodes())
                    if (m.graph.kind(n) == sgmatch::node_kind::input && m.graph.name(n) == name) declared = m.graph.value_type(n, 0);
                if (const auto f = input_files.find(name); f != input_files.end()) {
                    value v = read_tensor(f->second);
                    if (declared && declared->ranked()) {  // a given input of the declared shape (unknown dims: any)
                        bool same = v.rank() == declared->dims.size();
                        for (std::size_t i = 0; same && i < v.rank(); ++i) same = declared->dims[i] < 0 || declared->dims[i] == v.dims()[i];
                        if (!same)
                            die("--input " + name + "=" + f->second + ": input '" + name + "' is declared " +
                                dims_text(sgmatch::exec::shape(declared->dims.begin(), declared->dims.end())) + "; the file holds " + dims_text(v.dims()));
                    }
                    filled[name] = std::move(v);
                    continue;
                }
                sgmatch::exec::shape shape;
                sgmatch::dtype type = sgmatch::dtype::f32;
                if (declared) {
                    if (declared->type != sgmatch::dtype::unknown) type = declared->type;
                    for (auto d : declared->dims) {
                        if (d < 0 && shape.empty() && first_dim) d = *first_dim;
                        if (d < 0) die("input '" + name + "' has an unknown dim: give --batch or --input");
                        shape.push_back(d);
                    }
                }
                // Filled inputs come out of the same budget as the run's values.
                const auto count = sgmatch::detail::checked_product(shape);
                const auto bytes = count ? sgmatch::detail::checked_bytes(*count, static_cast<std::int64_t>(sgmatch::size_of(type))) : std::nullopt;
                if (!bytes || static_cast<std::uint64_t>(*bytes) > bounds.max_allocation)
                    die("input '" + name + "' of declared shape " + dims_text(shape) + " would take " +
                        (bytes ? std::to_string(*bytes) + " bytes" : std::string("more bytes than int64 counts")) +
                        ", over the memory budget of " + std::to_string(bounds.max_allocation) + " bytes (--max-memory; or give it with --input)");
                value v = value::zeros(type, shape);
                if (type == sgmatch::dtype::f32) {
                    std::uniform_real_distribution<float> u(-1.0f, 1.0f);
                    float* p = v.as<float>();
                    for (std::int64_t i = 0; i < v.size(); ++i) p[i] = u(rng);
                }
                filled[name] = std::move(v);
            }
            return filled;
        };
        std::mt19937 rng(1);

        if (opts.quantize) {
            // Calibration sets: the .npy files of a directory as the first input (the others
            // filled), or N sets of filled inputs.
            std::vector<std::map<std::string, value>> sets;
            if (!opts.calibrate_dir.empty()) {
                std::vector<std::string> files;
                for (const auto& e : std::filesystem::directory_iterator(opts.calibrate_dir))
                    if (e.path().extension() == ".npy" || e.path().extension() == ".pb") files.push_back(e.path().string());
                std::sort(files.begin(), files.end());
                if (files.empty()) die("--calibrate " + opts.calibrate_dir + ": no .npy or .pb files in it");
                for (const auto& f : files) sets.push_back(fill_inputs(rng, {{m.inputs.at(0), read_tensor(f)}}));
            } else {
                for (int k = 0; k < opts.calibrate; ++k) {
                    std::mt19937 r(static_cast<unsigned>(100 + k));
                    sets.push_back(fill_inputs(r));
                }
            }
            sgmatch::quantize::options qo;
            qo.method = opts.calibration == "percentile" ? sgmatch::quantize::calibration_method::percentile
                                                         : sgmatch::quantize::calibration_method::minmax;
            qo.keep_last_float = opts.keep_last_float;
            t0 = std::chrono::steady_clock::now();
            const sgmatch::quantize::result q = sgmatch::quantize::quantize_static(m, sets, qo);
            const double quantize_ms = ms_since(t0);
            sx::save_options so;
            so.opset = q.model.opset;
            sx::save(q.model.graph, save_path, so);
            std::printf("%s: quantized (int8, %s, %zu calibration sets) in %.1f ms: %zu convs, %zu matmuls, %zu activations folded, "
                        "%zu values calibrated; wrote %s\n",
                        model_path.c_str(), opts.calibration.c_str(), sets.size(), quantize_ms, q.what.convs, q.what.matmuls,
                        q.what.activations, q.what.calibrated, save_path.c_str());
            for (const auto& k : q.what.kept_float) std::printf("  kept f32: %s\n", k.c_str());
            return 0;
        }
        inputs = fill_inputs(rng);

        const std::size_t nodes_before = m.graph.node_count();
        sgmatch::graph fused = m.graph;
        std::vector<sgmatch::property_report> reports;
        sgmatch::onednn::register_backend<sgmatch::graph>();
        sgmatch::exec::register_region_backend();
        t0 = std::chrono::steady_clock::now();
        if (backend != "none") reports = sgmatch::apply_backend(fused, backend);
        const double partition_ms = ms_since(t0);
        if (!save_path.empty()) {
            sx::save_options so;
            so.opset = m.opset;
            so.fused = sgmatch::onednn::describe_fused;
            sx::save(fused, save_path, so);
        }
        if (!dot_path.empty()) {
            std::ofstream d(dot_path);
            if (!d) die("--dot " + dot_path + ": cannot open it for writing");
            sgmatch::write_dot(d, fused);
            d.close();
            if (!d) die("--dot " + dot_path + ": writing it failed");
        }

        t0 = std::chrono::steady_clock::now();
        sgmatch::exec::executor fused_run(fused, sgmatch::exec::mode::onednn);
        fused_run.set_limits(bounds);
        sgmatch::exec::run_stats st;
        const value first = fused_run.run(inputs, &st).at(0);
        const double first_ms = ms_since(t0) + partition_ms;
        sgmatch::exec::executor unfused_run(m.graph, sgmatch::exec::mode::onednn);
        unfused_run.set_limits(bounds);
        (void)unfused_run.run(inputs);  // primitives created before timing

        std::vector<double> fused_t, unfused_t;
        for (int r = 0; r < rounds; ++r) {  // interleaved
            t0 = std::chrono::steady_clock::now();
            (void)fused_run.run(inputs);
            fused_t.push_back(ms_since(t0));
            t0 = std::chrono::steady_clock::now();
            (void)unfused_run.run(inputs);
            unfused_t.push_back(ms_since(t0));
        }

        // --profile: each node's median over the rounds; what each op or fused pattern costs.
        struct profile_row {
            std::string node, what, kernel;
            double ms;
        };
        std::vector<profile_row> rows;
        std::map<std::string, double> by_what;
        double profiled_ms = 0;
        if (profile) {
            std::map<std::uint32_t, std::vector<double>> per_node;
            std::map<std::uint32_t, const char*> kernel_of;
            for (int r = 0; r < rounds; ++r) {
                std::vector<sgmatch::exec::node_time> times;
                sgmatch::exec::run_stats ps;
                ps.times = &times;
                (void)fused_run.run(inputs, &ps);
                for (const auto& t : times) {
                    per_node[t.node.value].push_back(t.ms);
                    kernel_of[t.node.value] = t.kernel;
                }
            }
            for (const auto& [id, ms] : per_node) {
                const sgmatch::node_id n{id};
                std::string what = std::string(fused.op_name(n));
                if (const auto d = sgmatch::onednn::describe_fused(fused.payload(n))) {  // its ops: "fused MatMul+Add+Relu"
                    what = "fused ";
                    for (std::size_t k = 0; k < d->members.size(); ++k) what += (k ? "+" : "") + d->members[k];
                }
                rows.push_back({std::string(fused.name(n)), what, kernel_of[id], median(ms)});
                by_what[what] += rows.back().ms;
                profiled_ms += rows.back().ms;
            }
            std::sort(rows.begin(), rows.end(), [](const profile_row& a, const profile_row& b) { return a.ms > b.ms; });
        }

        double max_abs = -1;
        bool ok = true;
        std::string mismatch;  // why the comparison could not be made
        if (!expect_path.empty()) {
            const value want = read_tensor(expect_path);
            if (want.dims() != first.dims() || want.type() != first.type()) {
                ok = false;
                max_abs = INFINITY;
                mismatch = "--expect " + expect_path + " holds " + std::string(sgmatch::name_of(want.type())) + " " + dims_text(want.dims()) +
                           "; the model's first output is " + std::string(sgmatch::name_of(first.type())) + " " + dims_text(first.dims());
            } else {
                max_abs = 0;
                const auto w = want.as_constant(), g = first.as_constant();
                double largest = 0;  // --tolerance: relative to the largest expected magnitude
                for (std::size_t i = 0; i < static_cast<std::size_t>(want.size()); ++i)
                    if (std::isfinite(w.at(i))) largest = std::max(largest, std::abs(w.at(i)));
                std::size_t nans = 0, got_nans = 0;
                for (std::size_t i = 0; i < static_cast<std::size_t>(want.size()); ++i) {
                    if (std::isnan(w.at(i))) {  // an expected NaN is matched by a NaN only
                        ++nans;
                        ok = ok && std::isnan(g.at(i));
                        continue;
                    }
                    const double d = std::abs(g.at(i) - w.at(i));
                    if (std::isnan(g.at(i))) ++got_nans;
                    else max_abs = std::max(max_abs, d);
                    ok = ok && d <= (opts.tolerance ? *opts.tolerance * largest : 1e-4 + 1e-3 * std::abs(w.at(i)));
                }
                if (nans > 0)
                    mismatch += "the expected values hold " + std::to_string(nans) + " NaN(s), each matched only by a NaN" +
                                std::string(ok ? "" : " (a NaN of --expect met a number, or a number a NaN)");
                if (got_nans > 0)
                    mismatch += std::string(mismatch.empty() ? "" : "; ") + "the output holds " + std::to_string(got_nans) +
                                " NaN(s) where --expect holds numbers";
            }
        }
        const double fused_ms = median(fused_t), unfused_ms = median(unfused_t);
        const auto reasons = fused_run.reference_reasons();

        if (json) {
            std::ostringstream o;
            o << "{\"model\": " << json_string(model_path) << ", \"opset\": " << m.opset << ", \"backend\": " << json_string(backend)
              << ", \"load_ms\": " << load_ms << ", \"first_run_ms\": " << first_ms << ", \"fused_ms\": " << fused_ms
              << ", \"unfused_ms\": " << unfused_ms << ", \"rounds\": " << rounds << ", \"nodes_before\": " << nodes_before
              << ", \"nodes_after\": " << fused.node_count() << ", \"fused_nodes\": " << st.fused_nodes
              << ", \"reference_nodes\": " << st.reference_nodes << ", \"typed_nodes\": " << st.typed_nodes
              << ", \"onednn_typed_nodes\": " << st.onednn_typed_nodes
              << ", \"onednn_nodes\": " << st.onednn_nodes
              << ", \"max_abs_diff\": ";
            if (max_abs < 0 || !std::isfinite(max_abs)) o << "null";
            else o << max_abs;
            o << ", \"properties\": [";
            for (std::size_t i = 0; i < reports.size(); ++i) {
                const auto& r = reports[i];
                o << (i ? ", " : "") << "{\"name\": " << json_string(r.property) << ", \"candidates\": " << r.candidates
                  << ", \"fused\": " << r.accepted << ", \"declined\": {";
                std::size_t k = 0;
                for (const auto& [why, n] : r.check_reasons) o << (k++ ? ", " : "") << json_string(why) << ": " << n;
                o << "}}";
            }
            o << "], \"reference_reasons\": [";
            for (std::size_t i = 0; i < reasons.size(); ++i)
                o << (i ? ", " : "") << "{\"node\": " << json_string(reasons[i].node) << ", \"op\": " << json_string(reasons[i].op)
                  << ", \"why\": " << json_string(reasons[i].why) << "}";
            o << "], \"notes\": [";
            for (std::size_t i = 0; i < m.report.notes.size(); ++i) o << (i ? ", " : "") << json_string(m.report.notes[i]);
            const auto& q = m.report.qdq;
            o << "], \"qdq\": {\"convs\": " << q.convs << ", \"matmuls\": " << q.matmuls << ", \"adds\": " << q.adds
              << ", \"activations\": " << q.activations << ", \"gelus\": " << q.gelus
              << ", \"left_float\": [";
            for (std::size_t i = 0; i < q.notes.size(); ++i) o << (i ? ", " : "") << json_string(q.notes[i]);
            o << "]}";
            if (profile) {
                o << ", \"profile\": {\"total_ms\": " << profiled_ms << ", \"nodes\": [";
                for (std::size_t i = 0; i < rows.size(); ++i)
                    o << (i ? ", " : "") << "{\"node\": " << json_string(rows[i].node) << ", \"op\": " << json_string(rows[i].what)
                      << ", \"kernel\": " << json_string(rows[i].kernel) << ", \"ms\": " << rows[i].ms << "}";
                o << "], \"by_op\": {";
                std::size_t k = 0;
                for (const auto& [what, ms] : by_what) o << (k++ ? ", " : "") << json_string(what) << ": " << ms;
                o << "}}";
            }
            if (!mismatch.empty()) o << ", \"mismatch\": " << json_string(mismatch);
            o << ", \"ok\": " << (ok ? "true" : "false") << "}";
            std::printf("%s\n", o.str().c_str());
        } else {
            std::printf("%s: opset %lld, %s, %zu nodes, %zu initializers, loaded in %.1f ms\n", model_path.c_str(),
                        static_cast<long long>(m.opset), m.report.producer.c_str(), m.report.nodes, m.report.initializers,
                        load_ms);
            for (const auto& n : m.report.notes) std::printf("  note: %s\n", n.c_str());
            const auto& q = m.report.qdq;
            if (q.convs + q.matmuls + q.adds + q.gelus + q.notes.size() > 0) {
                std::printf("int8: QDQ groups made %zu QLinearConv, %zu QLinearMatMul, %zu QLinearAdd (%zu activations folded), "
                            "%zu Gelu, %zu left in float\n",
                            q.convs, q.matmuls, q.adds, q.activations, q.gelus, q.notes.size());
                for (const auto& n : q.notes) std::printf("  %s\n", n.c_str());
            }
            std::printf("partition (%s): %zu nodes -> %zu\n", backend.c_str(), nodes_before, fused.node_count());
            for (const auto& r : reports) {
                std::printf("  %-28s %zu candidates, %zu fused\n", r.property.c_str(), r.candidates, r.accepted);
                if (explain)
                    for (const auto& [why, n] : r.check_reasons) std::printf("      declined %zux: %s\n", n, why.c_str());
            }
            std::printf("ran: %zu fused nodes, %zu single oneDNN primitives, %zu reference kernels, %zu typed kernels\n",
                        st.fused_nodes, st.onednn_nodes, st.reference_nodes, st.typed_nodes);
            // Why the reference kernels ran, by op and reason (each node with --explain).
            std::map<std::pair<std::string, std::string>, std::vector<std::string>> by_reason;
            for (const auto& r : reasons) by_reason[{r.op, r.why}].push_back(r.node);
            for (const auto& [key, nodes] : by_reason) {
                std::printf("  reference kernel: %zu %s (%s)", nodes.size(), key.first.c_str(), key.second.c_str());
                if (explain)
                    for (std::size_t i = 0; i < nodes.size(); ++i) std::printf("%s'%s'", i ? ", " : ": ", nodes[i].c_str());
                std::printf("\n");
            }
            std::printf("first run (partition + build + run) %.2f ms; median of %d: fused %.3f ms, unfused %.3f ms (%.2fx)\n",
                        first_ms, rounds, fused_ms, unfused_ms, fused_ms > 0 ? unfused_ms / fused_ms : 0.0);
            if (max_abs >= 0) {
                if (std::isfinite(max_abs)) std::printf("max |diff| vs %s: %.3g (%s)\n", expect_path.c_str(), max_abs, ok ? "ok" : "MISMATCH");
                else std::printf("vs %s: MISMATCH\n", expect_path.c_str());
                if (!mismatch.empty()) std::printf("  %s\n", mismatch.c_str());
            }
            if (profile) {
                std::printf("profile (median of %d, %zu nodes, %.3f ms in nodes):\n", rounds, rows.size(), profiled_ms);
                for (std::size_t i = 0; i < rows.size() && i < 20; ++i)
                    std::printf("  %8.3f ms %5.1f%%  %-9s %-24s %s\n", rows[i].ms, profiled_ms > 0 ? 100 * rows[i].ms / profiled_ms : 0.0,
                                rows[i].kernel.c_str(), rows[i].node.c_str(), rows[i].what.c_str());
                std::vector<std::pair<double, std::string>> ops;
                for (const auto& [what, ms] : by_what) ops.emplace_back(ms, what);
                std::sort(ops.rbegin(), ops.rend());
                std::printf("  by op or fused pattern:\n");
                for (const auto& [ms, what] : ops) std::printf("  %8.3f ms %5.1f%%  %s\n", ms, profiled_ms > 0 ? 100 * ms / profiled_ms : 0.0, what.c_str());
            }
        }
        return ok ? 0 : 1;
    } catch (const std::exception& e) {
        die(e.what());
    }
}
