// libFuzzer target: small graphs built from fuzzer bytes through the graph API - typed values
// (float, int64, int32, uint8, bool) through the ops that compute shapes, masks and data
// movement, with fuzzer-chosen shapes, attributes and constant parameters - cleaned up
// (passes/cleanup.hpp, folding runs the typed kernels) and run on the executor. Every input
// either runs or raises one of sgmatch's errors (graph_error, op_error, exec_error,
// value_error); a crash, another exception, a sanitizer report or a hang is a finding.
// Parameters are small (-8..8); values computed from them may not be: the executor's value
// limit (64 MiB here) refuses them before anything is allocated.
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <initializer_list>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include "sgmatch/exec/executor.hpp"
#include "sgmatch/passes/cleanup.hpp"

#include "fuzz_bytes.hpp"

using namespace sgmatch;

namespace {

using fuzz::bytes;

const dtype types[] = {dtype::f32, dtype::i64, dtype::i32, dtype::u8, dtype::boolean};

std::vector<unsigned char> data_for(dtype t, std::int64_t count, bytes& in) {
    std::vector<unsigned char> b(static_cast<std::size_t>(count) * size_of(t));
    for (std::size_t i = 0; i < b.size(); ++i) b[i] = in.next();
    if (t == dtype::boolean)
        for (auto& x : b) x &= 1;
    if (t == dtype::f32)  // keep the floats finite and small: bytes as a signed value / 16
        for (std::size_t i = 0; i < b.size(); i += 4) {
            const float f = static_cast<float>(static_cast<std::int8_t>(b[i])) / 16.0f;
            std::memcpy(&b[i], &f, 4);
        }
    return b;
}

std::vector<unsigned char> int64s(const std::vector<std::int64_t>& v) {
    std::vector<unsigned char> b(v.size() * 8);
    if (!v.empty()) std::memcpy(b.data(), v.data(), b.size());
    return b;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    bytes in{data, size};
    graph g;
    std::vector<graph::value> vals;
    std::map<std::string, exec::value> feeds;
    // Graph inputs: 1-2, each of a type and up to 4 dims of 0..4.
    const int n_inputs = 1 + in.next() % 2;
    for (int i = 0; i < n_inputs; ++i) {
        const dtype t = types[in.next() % 5];
        std::vector<std::int64_t> dims(in.next() % 5);
        std::int64_t count = 1;
        for (auto& d : dims) count *= (d = in.next() % 5);
        const std::string name = "x" + std::to_string(i);
        vals.push_back({g.add_input(name, tensor_type{t, dims}), 0});
        const auto b = data_for(t, count, in);
        exec::value v = exec::value::zeros(t, dims);
        if (!b.empty()) std::memcpy(v.mutable_data(), b.data(), b.size());
        feeds.emplace(name, v);
    }
    static const char* ops[] = {"Shape", "Size", "Gather", "Unsqueeze", "Squeeze", "Concat", "Reshape", "Slice",
                                "Expand", "Transpose", "Split", "Where", "Equal", "Less", "Not", "Cast",
                                "Add", "Sub", "Mul", "Div", "Neg", "Abs", "ConstantOfShape", "Identity",
                                "Dropout", "Flatten", "Relu", "ReduceSum", "And", "Pow", "LayerNorm", "Greater"};
    try {
        const int n_ops = 1 + in.next() % 12;
        for (int k = 0; k < n_ops && !in.empty(); ++k) {
            const std::string op = ops[in.next() % (sizeof ops / sizeof ops[0])];
            const std::string name = "n" + std::to_string(k);
            auto pick = [&] { return vals[in.next() % vals.size()]; };
            auto ints = [&](std::size_t count) {
                std::vector<std::int64_t> v(count);
                for (auto& x : v) x = in.small();
                return v;
            };
            auto param = [&](std::size_t count) {  // a constant int64 parameter, or a computed value
                if (in.next() % 4 == 0) return pick();
                const auto v = ints(count);
                return graph::value{g.add_constant(name + ":p" + std::to_string(vals.size()), {static_cast<std::int64_t>(count)},
                                                   dtype::i64, int64s(v)), 0};
            };
            std::vector<input_ref> ins{pick()};
            std::vector<std::pair<std::string, attribute>> attrs;
            std::uint32_t outputs = 1;
            if (op == "Gather" || op == "Reshape" || op == "Expand" || op == "Unsqueeze" || op == "Squeeze")
                ins.push_back(param(1 + in.next() % 3));
            else if (op == "Slice")
                for (int s = 0; s < 2 + in.next() % 3; ++s) ins.push_back(param(1));
            else if (op == "Concat" || op == "Equal" || op == "Less" || op == "Greater" || op == "Add" || op == "Sub" ||
                     op == "Mul" || op == "Div" || op == "And" || op == "Pow")
                ins.push_back(pick());
            else if (op == "Where" || op == "LayerNorm")
                ins.push_back(pick()), ins.push_back(pick());
            else if (op == "ReduceSum" && in.next() % 2)
                ins.push_back(param(1));
            if (op == "Gather" || op == "Concat" || op == "Split" || op == "Flatten" || op == "LayerNorm")
                attrs.emplace_back("axis", attribute(in.small() % 4));
            if (op == "Transpose" && in.next() % 2) attrs.emplace_back("perm", attribute(ints(in.next() % 5)));
            if (op == "Cast") attrs.emplace_back("to", attribute(std::int64_t{1} + in.next() % 11));
            if (op == "ConstantOfShape") attrs.emplace_back("dtype", attribute(std::int64_t{1} + in.next() % 11));
            if (op == "Shape" && in.next() % 2) attrs.emplace_back("start", attribute(in.small()));
            if (op == "Split" || op == "Dropout") outputs = 1 + in.next() % 3;
            const node_id n = g.add_op(op, name, ins, {}, outputs);
            for (auto& [k, v] : attrs) g.set_attr(n, k, v);
            for (std::uint32_t p = 0; p < outputs; ++p) vals.push_back({n, p});
        }
        g.mark_output(vals.back());
        const graph original = g;
        (void)passes::cleanup(g);
        for (const graph* x : std::initializer_list<const graph*>{&original, &g}) {
            exec::executor run(*x);
            sgmatch::exec::limits l;  // the executor refuses larger values before allocating
            l.max_allocation = l.max_live = std::uint64_t{64} << 20;
            l.max_loop_iterations = 10000;
            run.set_limits(l);
            (void)run.run(feeds);
        }
    } catch (const graph_error&) {
    } catch (const ops::op_error&) {
    } catch (const exec::exec_error&) {
    } catch (const exec::value_error&) {
    }
    return 0;
}
