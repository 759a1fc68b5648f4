// libFuzzer target: graphs from fuzzer bytes, two ways (the first byte picks).
//
// - Through the adapter contract (tests/support/tiny_graph.hpp, which trusts whatever it is
//   given): dangling inputs, ports out of range, leaves with inputs, op ids out of range, nodes
//   listed twice or out of topological order. op_index must accept exactly the graphs the
//   contract's rules (written out below) call well formed, raise graph_error for the others, and
//   never crash; a scan then runs over every accepted graph.
// - Through the built-in graph's API (well formed by construction): partitioned by two
//   properties in turn, each compared with the partition rules written out by brute force
//   (tests/support/partition_oracle.hpp).
// A disagreement traps, so libFuzzer records the input.
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "sgmatch/graph/graph.hpp"
#include "sgmatch/match/scan.hpp"
#include "sgmatch/sgmatch.hpp"
#include "support/partition_oracle.hpp"
#include "support/tiny_graph.hpp"

#include "fuzz_bytes.hpp"

using namespace sgmatch;

namespace {

using fuzz::bytes;

const char* const op_names[] = {"Conv", "BatchNormalization", "Relu", "Add"};

// The contract's rules for what op_index accepts (graph/adapter.hpp, match/scan.hpp).
bool well_formed(const sgtest::tiny_graph& g) {
    std::vector<bool> placed(g.nodes.size(), false);
    for (int i : g.order) {
        if (i < 0 || static_cast<std::size_t>(i) >= g.nodes.size() || placed[static_cast<std::size_t>(i)]) return false;
        const auto& n = g.nodes[static_cast<std::size_t>(i)];
        if (n.kind != node_kind::op && !n.inputs.empty()) return false;
        for (const auto& v : n.inputs) {
            if (v.node < 0 || static_cast<std::size_t>(v.node) >= g.nodes.size() || !placed[static_cast<std::size_t>(v.node)])
                return false;
            if (v.port >= g.nodes[static_cast<std::size_t>(v.node)].outputs) return false;
        }
        if (n.kind == node_kind::op && n.op >= g.ops.size()) return false;
        placed[static_cast<std::size_t>(i)] = true;
    }
    return true;
}

void through_the_adapter(bytes& in) {
    sgtest::tiny_graph g;
    const int n = 1 + in.next() % 12;
    for (int i = 0; i < n; ++i) {
        const std::uint8_t k = in.next();
        const node_kind kind = k % 4 == 0 ? node_kind::input : k % 4 == 1 ? node_kind::constant : node_kind::op;
        std::vector<value_ref<int>> ins;
        const int arity = kind == node_kind::op || in.next() % 8 == 0 ? in.next() % 4 : 0;
        for (int a = 0; a < arity; ++a) {
            const int from = in.next() % (n + 1);  // n: no such node
            ins.push_back({from, static_cast<std::uint32_t>(in.next() % 8 == 0 ? 1 + in.next() % 2 : 0)});
        }
        const int id = g.add("n" + std::to_string(i), kind, op_names[k / 4 % 4], ins, 1 + in.next() % 2);
        if (kind == node_kind::op && in.next() % 16 == 0) g.nodes[static_cast<std::size_t>(id)].op = 7;  // no such op
    }
    // The order the adapter claims: as added, with some nodes moved, dropped or repeated.
    for (int swaps = in.next() % 4; swaps > 0; --swaps) {
        const std::size_t a = in.next() % g.order.size(), b = in.next() % g.order.size();
        std::swap(g.order[a], g.order[b]);
    }
    if (in.next() % 8 == 0) g.order.push_back(g.order[in.next() % g.order.size()]);
    if (in.next() % 8 == 0 && g.order.size() > 1) g.order.erase(g.order.begin() + in.next() % g.order.size());
    g.outputs.push_back({g.order.back(), 0});

    const bool expect = well_formed(g);
    bool accepted = false;
    try {
        const op_index<sgtest::tiny_graph> index(g);
        accepted = true;
        // An accepted graph can be scanned.
        std::size_t found = 0;
        const auto p = op<ops::Conv>() >> optional(op<ops::BatchNorm>()) >> optional(op<ops::Relu>());
        for_each_match(index, p, [&](const auto&) { ++found; });
        if (found > g.order.size()) __builtin_trap();
    } catch (const graph_error&) {
        accepted = false;
    }
    if (accepted != expect) __builtin_trap();
}

void through_the_graph_api(bytes& in) {
    graph g;
    std::vector<node_id> all{g.add_input("in0")};
    if (in.next() % 2) all.push_back(g.add_input("in1"));
    const int n = 2 + in.next() % 14;
    for (int i = 0; i < n; ++i) {
        const char* op = op_names[in.next() % 4];
        const int arity = 1 + in.next() % 3;
        std::vector<input_ref> ins;
        for (int a = 0; a < arity; ++a) {
            // Mostly the last few values, sometimes any earlier one.
            const std::uint8_t b = in.next();
            const std::size_t have = all.size();
            const std::size_t j = b % 8 == 0 ? b / 8 % have : have - 1 - std::min<std::size_t>(b % 4, have - 1);
            ins.push_back(all[j]);
        }
        all.push_back(g.add_op(op, "v" + std::to_string(i), ins));
        if (in.next() % 6 == 0) g.mark_output(all.back());
    }
    g.mark_output(all.back());
    if (!sgtest::partition_against_oracle(g).mismatch.empty()) __builtin_trap();
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    bytes in{data, size};
    if (in.next() % 2 == 0)
        through_the_adapter(in);
    else
        through_the_graph_api(in);
    return 0;
}
