// sgmatch-run's command line: every option, its value checked whole (a number is all digits and
// in range), each error a usage_error naming the argument. Apart from the program so that the
// run_inputs fuzz target parses argument vectors exactly as the program does.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

namespace sgmatch_run {

/// A command line sgmatch-run cannot take: what() names the argument and what is wrong.
class usage_error : public std::runtime_error {
public:
    using std::runtime_error::runtime_error;
};

inline const char* usage_text() {
    return "usage: sgmatch-run model.onnx [options]\n"
           "  Load an ONNX model, partition it, run it fused and unfused, check it.\n"
           "options:\n"
           "  --backend NAME            onednn (default), onednn.regions or none\n"
           "  --batch N                 the value of a graph input's unknown first dim\n"
           "  --threads T               OpenMP threads for oneDNN (1 to 4096)\n"
           "  --input NAME=FILE         a graph input from a .npy (float32) or .pb (TensorProto) file;\n"
           "                            inputs not given are filled from their declared shape\n"
           "  --expect FILE             the first output's expected values (.npy or .pb): exit 1 when\n"
           "                            |diff| > 1e-4 + 1e-3 |expected| anywhere\n"
           "  --tolerance R             with --expect: exit 1 when |diff| > R max|expected| anywhere\n"
           "                            instead (0 < R <= 1; for int8 models, one step of the output)\n"
           "  --rounds K                timed rounds, fused and unfused interleaved (default 5, 1 to 1000000)\n"
           "  --max-memory BYTES        the most one value and all live values of a run may take\n"
           "                            (suffixes K, M, G, T: powers of 1024; default 8G)\n"
           "  --max-loop-iterations N   the most iterations a Loop may run (default 100000; 0: no limit)\n"
           "  --dot FILE                write the partitioned graph as Graphviz dot\n"
           "  --save FILE               write the partitioned graph as ONNX (fused nodes in domain ai.sgmatch)\n"
           "  --quantize int8           write the model quantized (QDQ: u8 activations, s8 weights per\n"
           "                            channel) to the --save file, calibrated, and exit\n"
           "  --calibrate N|DIR         calibration sets: N filled ones (default 8), or each .npy / .pb file\n"
           "                            of DIR as the first input\n"
           "  --calibration METHOD      minmax (default) or percentile (99.999)\n"
           "  --keep-last-float         leave the last quantizable node f32\n"
           "  --explain                 print why each declined candidate was declined\n"
           "  --profile                 time every node of the fused graph and print the slowest\n"
           "  --json                    print the results as one JSON object\n"
           "  -h, --help                print this text and exit\n"
           "exit status: 0 ok, 1 outputs differ from --expect, 2 a usage, load or run error\n";
}

struct options {
    std::string model, backend = "onednn", expect, dot, save;
    bool quantize = false, keep_last_float = false;
    int calibrate = 8;
    std::string calibrate_dir, calibration = "minmax";
    std::map<std::string, std::string> inputs;
    std::optional<std::int64_t> batch;
    int threads = 0, rounds = 5;
    std::uint64_t max_memory = std::uint64_t{8} << 30;
    std::int64_t max_loop_iterations = 100000;
    std::optional<double> tolerance;  // relative to the largest expected magnitude
    bool json = false, explain = false, profile = false, help = false;
};

/// `text` as a whole decimal number in [lo, hi]; a usage_error naming `option` otherwise.
inline std::int64_t whole_number(const std::string& option, const std::string& text, std::int64_t lo, std::int64_t hi) {
    const bool negative = !text.empty() && text[0] == '-';
    const std::size_t from = negative ? 1 : 0;
    bool digits = text.size() > from && text.size() - from <= 18;
    for (std::size_t i = from; i < text.size(); ++i) digits = digits && text[i] >= '0' && text[i] <= '9';
    if (!digits) throw usage_error(option + " takes a whole number, not '" + text + "'");
    const std::int64_t v = (negative ? -1 : 1) * std::stoll(text.substr(from));
    if (v < lo || v > hi)
        throw usage_error(option + " " + text + " is outside " + std::to_string(lo) + " to " + std::to_string(hi));
    return v;
}

/// `text` as a decimal fraction in (0, 1] ("0.05", "1e-3"); a usage_error naming `option` otherwise.
inline double fraction(const std::string& option, const std::string& text) {
    bool ok = !text.empty() && text.size() <= 32 && text.find_first_not_of("0123456789.eE-+") == std::string::npos;
    std::size_t used = 0;
    double v = 0;
    if (ok) try {
            v = std::stod(text, &used);
        } catch (const std::exception&) {
            ok = false;
        }
    if (!ok || used != text.size() || !(v > 0 && v <= 1)) throw usage_error(option + " takes a number in (0, 1], not '" + text + "'");
    return v;
}

/// A byte count: a whole number with an optional suffix K, M, G or T (powers of 1024).
inline std::uint64_t byte_count(const std::string& option, const std::string& text) {
    std::string digits = text;
    int shift = 0;
    if (!digits.empty()) {
        const char s = digits.back();
        shift = s == 'K' || s == 'k' ? 10 : s == 'M' || s == 'm' ? 20 : s == 'G' || s == 'g' ? 30 : s == 'T' || s == 't' ? 40 : 0;
        if (shift) digits.pop_back();
    }
    bool ok = !digits.empty() && digits.size() <= 15;
    for (char c : digits) ok = ok && c >= '0' && c <= '9';
    if (!ok) throw usage_error(option + " takes a byte count such as 8G, 512M or 1048576, not '" + text + "'");
    const std::uint64_t v = std::stoull(digits) << shift;
    if (v == 0 || (v >> shift) != std::stoull(digits) || v > (std::uint64_t{1} << 50))
        throw usage_error(option + " " + text + " is outside 1 byte to 1024T");
    return v;
}

/// The options of argv[1..] (args without the program name).
inline options parse(const std::vector<std::string>& args) {
    options o;
    for (std::size_t i = 0; i < args.size(); ++i) {
        const std::string& a = args[i];
        auto value = [&]() -> const std::string& {
            if (i + 1 >= args.size()) throw usage_error(a + " needs a value");
            return args[++i];
        };
        if (a == "-h" || a == "--help") o.help = true;
        else if (a == "--backend") o.backend = value();
        else if (a == "--batch") o.batch = whole_number(a, value(), 1, std::int64_t{1} << 40);
        else if (a == "--threads") o.threads = static_cast<int>(whole_number(a, value(), 1, 4096));
        else if (a == "--rounds") o.rounds = static_cast<int>(whole_number(a, value(), 1, 1000000));
        else if (a == "--max-memory") o.max_memory = byte_count(a, value());
        else if (a == "--max-loop-iterations") o.max_loop_iterations = whole_number(a, value(), 0, std::int64_t{1} << 60);
        else if (a == "--expect") o.expect = value();
        else if (a == "--tolerance") o.tolerance = fraction(a, value());
        else if (a == "--dot") o.dot = value();
        else if (a == "--save") o.save = value();
        else if (a == "--quantize") {
            if (value() != "int8") throw usage_error("--quantize takes int8, not '" + args[i] + "'");
            o.quantize = true;
        } else if (a == "--calibrate") {
            const std::string& v = value();
            const bool number = !v.empty() && v.find_first_not_of("0123456789") == std::string::npos;
            if (number) o.calibrate = static_cast<int>(whole_number(a, v, 1, 100000));
            else o.calibrate_dir = v;
        } else if (a == "--calibration") {
            o.calibration = value();
            if (o.calibration != "minmax" && o.calibration != "percentile")
                throw usage_error("--calibration takes minmax or percentile, not '" + o.calibration + "'");
        } else if (a == "--keep-last-float") o.keep_last_float = true;
        else if (a == "--json") o.json = true;
        else if (a == "--explain") o.explain = true;
        else if (a == "--profile") o.profile = true;
        else if (a == "--input") {
            const std::string& v = value();
            const auto eq = v.find('=');
            if (eq == std::string::npos || eq == 0 || eq + 1 == v.size())
                throw usage_error("--input takes name=file, not '" + v + "'");
            if (!o.inputs.emplace(v.substr(0, eq), v.substr(eq + 1)).second)
                throw usage_error("--input " + v.substr(0, eq) + " is given twice");
        } else if (!a.empty() && a[0] == '-') {
            throw usage_error("unknown option " + a);
        } else if (!o.model.empty()) {
            throw usage_error("one model at a time: '" + o.model + "' and '" + a + "'");
        } else {
            o.model = a;
        }
    }
    if (o.help) return o;
    if (o.model.empty()) throw usage_error("no model given");
    if (o.quantize && o.save.empty()) throw usage_error("--quantize needs --save FILE (where the quantized model goes)");
    if (o.tolerance && o.expect.empty()) throw usage_error("--tolerance needs --expect FILE (the values it compares with)");
    if (o.backend != "onednn" && o.backend != "onednn.regions" && o.backend != "none")
        throw usage_error("--backend " + o.backend + " is not onednn, onednn.regions or none");
    return o;
}

}  // namespace sgmatch_run
