// sgmatch/testing/check_adapter.hpp - test your own graph adapter against the laws sgmatch
// relies on, without a test framework (core only).
//
//   const auto r = sgmatch::testing::check_adapter(my_graph);
//   if (!r.ok()) std::fputs(r.str().c_str(), stderr);     // each broken law, naming the node
//   r.can_match, r.can_partition, r.can_execute           // what the adapter's functions allow
//
// The laws (graph/adapter.hpp): nodes(g) lists each node once, in a topological order, with
// distinct indices below index_bound(g), and node_count(g) of them; leaves (inputs, constants)
// have no inputs; an op node's op id is below op_count(g) and find_op(op_name) gives it back;
// every node has an output; each input names a node listed earlier and a port it has; users are
// exactly the inverse of inputs (every use once, user(g, n, i) reads back through input()); graph
// outputs name listed nodes and ports, and is_graph_output agrees with them; names are not empty;
// op_index<G> accepts the graph. A law broken is reported, never undefined behaviour: indices are
// checked before they are used, and checking stops after `max_violations`.
//
// Which optional functions the adapter defines decides what it can be used for: matching needs
// the minimal definition; partitioning (apply_property, apply_backend) needs replace();
// clean-up passes need redirect, erase and add_constant; sgmatch's executor over the graph
// (exec::graph_executor) needs value_type() for its inputs' shapes, constant() for weights, and
// payload() to run the fused nodes a partition made in place.
#pragma once

#include <cstddef>
#include <cstdint>
#include <map>
#include <set>
#include <sstream>
#include <string>
#include <tuple>
#include <type_traits>
#include <utility>
#include <vector>

#include "sgmatch/detail/config.hpp"
#include "sgmatch/graph/adapter.hpp"
#include "sgmatch/match/scan.hpp"

SGMATCH_BEGIN_NAMESPACE
namespace testing {

/// What check_adapter found.
struct adapter_report {
    std::vector<std::string> violations;  // each broken law, naming the node; empty: all hold
    bool truncated = false;               // more were broken than were reported
    std::size_t nodes = 0, edges = 0;     // what was checked
    bool can_match = false;               // the minimal definition: find_all, match, explain
    bool can_partition = false;           // + replace: apply_property, apply_backend
    bool can_clean_up = false;            // + redirect, erase, add_constant: the clean-up passes
    bool can_execute = false;             // + value_type, constant: exec::graph_executor
    bool runs_fused_nodes = false;        // + payload: the executor runs the nodes a partition made
    std::vector<std::string> missing;     // the optional functions not defined, and what each gives

    bool ok() const { return violations.empty(); }
    /// Every violation on a line of its own, then what the adapter can be used for.
    std::string str() const {
        std::ostringstream o;
        for (const auto& v : violations) o << "adapter law broken: " << v << "\n";
        if (truncated) o << "(more laws broken; the first " << violations.size() << " are listed)\n";
        o << nodes << " nodes, " << edges << " edges checked; " << (ok() ? "every law holds" : "laws broken") << "\n";
        for (const auto& m : missing) o << "not defined: " << m << "\n";
        return o.str();
    }
};

namespace detail {

template <class Tr, class G, class = void>
struct defines_payload : std::false_type {};
template <class Tr, class G>
struct defines_payload<Tr, G, std::void_t<decltype(Tr::payload(std::declval<const G&>(), std::declval<typename Tr::node_type>()))>>
    : std::true_type {};

}  // namespace detail

/// Check g against the adapter laws (see the top of this file); at most max_violations are listed.
template <class G>
adapter_report check_adapter(const G& g, std::size_t max_violations = 20) {
    adapter_report r;
    if constexpr (!sgmatch::detail::check_graph<G>()) {  // one static_assert names what is missing
        return r;
    } else {
        using T = graph_traits<G>;
        r.can_match = true;
        r.can_partition = is_writable_graph_v<G>;
        r.can_clean_up = is_rewritable_graph_v<G>;
        constexpr bool types = sgmatch::detail::has_value_type<T, G>::value;
        constexpr bool constants = sgmatch::detail::has_constant<T, G>::value;
        r.can_execute = types && constants;
        r.runs_fused_nodes = detail::defines_payload<T, G>::value;
        if (!r.can_partition) r.missing.push_back("replace(G&, replacement): no partitioning (apply_property, apply_backend)");
        if (!r.can_clean_up) r.missing.push_back("redirect / erase / add_constant: no clean-up passes");
        if (!types) r.missing.push_back("value_type(g, n, port): no shapes (shape predicates, the executor's input shapes)");
        if (!constants) r.missing.push_back("constant(g, n): no weights' data (lowering, the executor)");
        if (!r.runs_fused_nodes) r.missing.push_back("payload(g, n): the executor cannot run the nodes a partition made in place");

        auto fail = [&](std::string what) {
            if (r.violations.size() < max_violations) r.violations.push_back(std::move(what));
            else r.truncated = true;
        };
        auto named = [&](const auto& n) { return "'" + std::string(T::name(g, n)) + "'"; };
        const std::size_t bound = T::index_bound(g);
        std::vector<long> pos(bound, -1);  // position in nodes(g), by index
        auto listed = [&](std::size_t i) { return i < bound && pos[i] >= 0; };

        // nodes(): each once, distinct indices below index_bound.
        std::size_t count = 0;
        for (const auto& n : T::nodes(g)) {
            const std::size_t i = T::index(g, n);
            if (i >= bound) {
                fail("node " + named(n) + " has index " + std::to_string(i) + ", not below index_bound(g) = " + std::to_string(bound));
            } else if (pos[i] != -1) {
                fail("node " + named(n) + ": index " + std::to_string(i) + " shared with another node, or the node listed twice by nodes(g)");
            } else {
                pos[i] = static_cast<long>(count);
            }
            ++count;
        }
        r.nodes = count;
        if (count != T::node_count(g))
            fail("node_count(g) is " + std::to_string(T::node_count(g)) + ", nodes(g) lists " + std::to_string(count));
        if (!r.violations.empty()) return r;  // the checks below index by index(g, n)

        // Inputs: leaves have none; op ids agree; producers come first; ports in range.
        std::map<std::tuple<std::size_t, std::size_t, std::uint32_t, std::uint32_t>, int> edges;
        for (const auto& n : T::nodes(g)) {
            const std::size_t i = T::index(g, n);
            if (std::string(T::name(g, n)).empty()) fail("node at index " + std::to_string(i) + " has an empty name");
            if (T::kind(g, n) != node_kind::op) {
                if (T::input_count(g, n) != 0)
                    fail("leaf " + named(n) + " (an input or constant) has " + std::to_string(T::input_count(g, n)) + " input(s)");
            } else {
                const auto o = T::op(g, n);
                const auto found = T::find_op(g, T::op_name(g, n));
                if (o >= T::op_count(g))
                    fail("op node " + named(n) + " has op id " + std::to_string(o) + ", not below op_count(g) = " + std::to_string(T::op_count(g)));
                else if (!found || *found != o)
                    fail("op node " + named(n) + ": find_op(\"" + std::string(T::op_name(g, n)) + "\") does not give its op id " + std::to_string(o));
            }
            if (T::output_count(g, n) < 1) fail("node " + named(n) + " has no output");
            for (std::size_t s = 0; s < T::input_count(g, n); ++s) {
                const auto v = T::input(g, n, s);
                const std::size_t j = T::index(g, v.node);
                if (!listed(j)) {
                    fail("node " + named(n) + " input " + std::to_string(s) + " names a node nodes(g) does not list");
                    continue;
                }
                if (pos[j] >= pos[i])
                    fail("node " + named(n) + " input " + std::to_string(s) + " reads " + named(v.node) +
                         ", which nodes(g) lists after it (not a topological order)");
                if (v.port >= T::output_count(g, v.node))
                    fail("node " + named(n) + " input " + std::to_string(s) + " reads port " + std::to_string(v.port) + " of " +
                         named(v.node) + ", which has " + std::to_string(T::output_count(g, v.node)) + " output(s)");
                ++edges[{j, i, static_cast<std::uint32_t>(s), v.port}];
            }
        }
        r.edges = edges.size();

        // Users: exactly the inverse of inputs.
        for (const auto& n : T::nodes(g)) {
            const std::size_t j = T::index(g, n);
            for (std::size_t u = 0; u < T::user_count(g, n); ++u) {
                const auto use = T::user(g, n, u);
                const std::size_t k = T::index(g, use.user);
                const auto it = listed(k) ? edges.find({j, k, use.slot, use.port}) : edges.end();
                if (it == edges.end()) {
                    fail("user " + std::to_string(u) + " of " + named(n) + " (slot " + std::to_string(use.slot) + ", port " +
                         std::to_string(use.port) + ") is not an input slot that reads it");
                    continue;
                }
                if (++it->second != 2)
                    fail("user " + std::to_string(u) + " of " + named(n) + " lists " + named(use.user) + " slot " +
                         std::to_string(use.slot) + " more than once");
            }
        }
        for (const auto& [e, seen] : edges)
            if (seen == 1)
                fail("node at index " + std::to_string(std::get<1>(e)) + " reads the node at index " + std::to_string(std::get<0>(e)) +
                     " on slot " + std::to_string(std::get<2>(e)) + ", but user(g, n, i) of the producer does not list it");

        // Graph outputs.
        std::set<std::pair<std::size_t, std::uint32_t>> outs;
        for (std::size_t i = 0; i < T::graph_output_count(g); ++i) {
            const auto v = T::graph_output(g, i);
            const std::size_t j = T::index(g, v.node);
            if (!listed(j)) {
                fail("graph output " + std::to_string(i) + " names a node nodes(g) does not list");
                continue;
            }
            if (v.port >= T::output_count(g, v.node))
                fail("graph output " + std::to_string(i) + " is port " + std::to_string(v.port) + " of " + named(v.node) + ", which has " +
                     std::to_string(T::output_count(g, v.node)) + " output(s)");
            outs.insert({j, v.port});
        }
        for (const auto& n : T::nodes(g))
            for (std::uint32_t p = 0; p < T::output_count(g, n); ++p)
                if (adapter<G>::is_graph_output(g, n, p) != (outs.count({T::index(g, n), p}) == 1))
                    fail("is_graph_output(" + named(n) + ", " + std::to_string(p) + ") disagrees with graph_output(g, i)");

        // And the index sgmatch builds accepts it.
        if (r.violations.empty()) {
            try {
                const op_index<G> checked(g);
                (void)checked;
            } catch (const graph_error& e) {
                fail(std::string("op_index<G> refuses the graph: ") + e.what());
            }
        }
        return r;
    }
}

}  // namespace testing
SGMATCH_END_NAMESPACE
