// sgmatch/exec/graph_executor.hpp - run a whole graph of any type that has an adapter.
//
//   sgmatch::exec::graph_executor<my_graph> run(g, sgmatch::exec::mode::onednn);
//   std::vector<exec::value> ys = run.run({x0, x1});            // graph inputs by position
//   auto named = run.run_by_name({{"data", x0}, {"label", x1}}); // or by name; outputs by name
//
// What it reads, all through graph_traits<G> (graph/adapter.hpp): the nodes in their topological
// order, kinds, op names, inputs, attributes (the adapter's for_each_attr, else every attribute
// name an op description knows), value types, constants with their element type and data, and,
// for nodes a partition made in place, their payload (the optional `payload(g, n) -> const
// std::any*`): an onednn::fused_node or an exec::subgraph_node, run by its kernel exactly as in a
// built-in graph. From these reads it builds its plan once, when it is constructed: a built-in
// graph of its own (the constants copied, so the user's graph may change or go away afterwards)
// and an executor over it. The built-in graph goes through the same path (its traits define
// payload()).
//
// Graph inputs by position are the input nodes in the order nodes(g) lists them (input_names());
// outputs are graph_output(g, 0..) in order, named after their producer ("name", or "name:port"
// for a port other than 0, and "name#i" for output i when an earlier output's producer has the
// same name: output_names()). A constant whose data the adapter does not give, two
// graph inputs of one name, or a payload of another kind is refused when the executor is built,
// naming the node; an op or attribute no kernel implements is refused by the executor as for any
// graph.
#pragma once

#include <any>
#include <cstddef>
#include <cstring>
#include <map>
#include <memory>
#include <string>
#include <type_traits>
#include <unordered_map>
#include <utility>
#include <vector>

#include "sgmatch/detail/config.hpp"
#include "sgmatch/exec/error.hpp"
#include "sgmatch/exec/executor.hpp"
#include "sgmatch/exec/value.hpp"
#include "sgmatch/graph/adapter.hpp"
#include "sgmatch/graph/graph.hpp"
#include "sgmatch/graph/replacement.hpp"
#include "sgmatch/ops/table.hpp"
#include "sgmatch/partition/copy.hpp"

SGMATCH_BEGIN_NAMESPACE
namespace exec {
namespace detail {

template <class Tr, class G, class = void>
struct adapter_has_payload : std::false_type {};
template <class Tr, class G>
struct adapter_has_payload<
    Tr, G, std::void_t<decltype(Tr::payload(std::declval<const G&>(), std::declval<typename Tr::node_type>()))>>
    : std::true_type {};

template <class G>
const std::any* payload_of(const G& g, typename graph_traits<G>::node_type n) {
    using traits = graph_traits<G>;
    if constexpr (adapter_has_payload<traits, G>::value) {
        const std::any* p = traits::payload(g, n);
        return p != nullptr && p->has_value() ? p : nullptr;
    } else {
        (void)g;
        (void)n;
        return nullptr;
    }
}

}  // namespace detail

template <class G>
class graph_executor {
public:
    explicit graph_executor(const G& g, mode m = mode::reference) : plan_(std::make_shared<graph>()) {
        read(g);
        exec_ = std::make_shared<executor>(*plan_, m);
    }

    /// The graph inputs, in the order run() takes them.
    const std::vector<std::string>& input_names() const { return input_names_; }
    /// The graph outputs, in the order run() returns them.
    const std::vector<std::string>& output_names() const { return output_names_; }

    /// Run with the graph inputs by position; returns the graph outputs in order.
    std::vector<value> run(const std::vector<value>& inputs, run_stats* stats = nullptr) const {
        if (inputs.size() != input_names_.size())
            throw exec_error("sgmatch::exec::graph_executor: the graph takes " + std::to_string(input_names_.size()) +
                             " inputs (" + listed(input_names_) + "), given " + std::to_string(inputs.size()));
        std::map<std::string, value> named;
        for (std::size_t i = 0; i < inputs.size(); ++i) named.emplace(input_names_[i], inputs[i]);
        return exec_->run(named, stats);
    }

    /// Run with the graph inputs by name (every one given, no other); the outputs by name.
    std::map<std::string, value> run_by_name(const std::map<std::string, value>& inputs, run_stats* stats = nullptr) const {
        for (const auto& [name, v] : inputs) {
            (void)v;
            if (position_.count(name) == 0)
                throw exec_error("sgmatch::exec::graph_executor: the graph has no input '" + name + "' (its inputs: " +
                                 listed(input_names_) + ")");
        }
        for (const std::string& name : input_names_)
            if (inputs.count(name) == 0) throw exec_error("sgmatch::exec::graph_executor: input '" + name + "' is not given");
        std::vector<value> ys = exec_->run(inputs, stats);
        std::map<std::string, value> out;
        for (std::size_t i = 0; i < ys.size(); ++i) out.emplace(output_names_[i], std::move(ys[i]));
        return out;
    }

    /// Cap the threads of each run (executor::set_threads); before the first run.
    void set_threads(int n) { exec_->set_threads(n); }

    /// The plan: the graph as it was read, and its executor.
    const graph& plan() const { return *plan_; }
    const executor& plan_executor() const { return *exec_; }

private:
    using traits = graph_traits<G>;
    using N = typename traits::node_type;

    static std::string listed(const std::vector<std::string>& names) {
        std::string s;
        for (const auto& n : names) s += (s.empty() ? "'" : ", '") + n + "'";
        return s.empty() ? "none" : s;
    }

    void read(const G& g) {
        const op_index<G> checked(g);  // raises graph_error for a malformed graph (a cycle, a dangling input)
        (void)checked;
        graph& plan = *plan_;
        std::unordered_map<std::size_t, node_id> at;  // index(g, n) -> its node in the plan
        auto value_in_plan = [&](value_ref<N> v) { return value_ref<node_id>{at.at(traits::index(g, v.node)), v.port}; };
        for (const N n : traits::nodes(g)) {
            const std::string name(traits::name(g, n));
            const std::size_t key = traits::index(g, n);
            switch (traits::kind(g, n)) {
                case node_kind::input: {
                    if (!position_.emplace(name, input_names_.size()).second)
                        throw exec_error("sgmatch::exec::graph_executor: two graph inputs are called '" + name + "'");
                    const auto t = adapter<G>::value_type(g, n, 0);
                    at.emplace(key, plan.add_input(name, t ? *t : tensor_type{}));
                    input_names_.push_back(name);
                    break;
                }
                case node_kind::constant: {
                    const auto copied = sgmatch::detail::copy_constant(plan, g, n, name);
                    if (!copied)
                        throw exec_error("sgmatch::exec::graph_executor: constant '" + name +
                                         "' has no data the adapter gives (constant(g, n)): give its data, or make it "
                                         "a graph input");
                    at.emplace(key, *copied);
                    break;
                }
                case node_kind::op: {
                    std::vector<input_ref> ins;
                    std::vector<value_ref<node_id>> in_values;
                    for (std::size_t i = 0; i < traits::input_count(g, n); ++i) {
                        in_values.push_back(value_in_plan(traits::input(g, n, i)));
                        ins.push_back(in_values.back());
                    }
                    const auto outs = static_cast<std::uint32_t>(traits::output_count(g, n));
                    const std::string op(traits::op_name(g, n));
                    const std::any* payload = detail::payload_of(g, n);
                    if constexpr (!detail::adapter_has_payload<traits, G>::value)
                        if (ops::find_schema(op) == nullptr)
                            throw exec_error("sgmatch::exec::graph_executor: node '" + name + "' (op '" + op +
                                             "') is no op sgmatch knows, and graph_traits<G> defines no payload(g, n): a node "
                                             "a partition made in place runs through its payload (the one replace() was "
                                             "given; sgmatch/graph/adapter.hpp), so the adapter needs payload to run it");
                    node_id r = sgmatch::detail::copy_op(plan, g, n, ins, /*attrs=*/payload == nullptr);
                    if (payload != nullptr) {
                        // A node a partition made: the same node, carrying its payload (the built-in
                        // graph takes payloads through its replace).
                        replacement<node_id> fused;
                        fused.nodes = {r};
                        fused.inputs = in_values;
                        for (std::uint32_t p = 0; p < outs; ++p) fused.outputs.push_back({r, p});
                        fused.name = name;
                        fused.op_name = op;
                        fused.payload = *payload;
                        r = plan.replace(std::move(fused));
                        for (std::uint32_t p = 0; p < outs; ++p)
                            if (const auto t = adapter<G>::value_type(g, n, p)) plan.set_type({r, p}, *t);
                    }
                    at.emplace(key, r);
                    break;
                }
            }
        }
        std::map<std::string, value_ref<node_id>> named;  // output names given so far, and their values
        for (std::size_t i = 0; i < traits::graph_output_count(g); ++i) {
            const auto v = traits::graph_output(g, i);
            const auto pv = value_in_plan(v);
            plan.mark_output(input_ref(pv));
            std::string name(traits::name(g, v.node));
            if (v.port != 0) name += ":" + std::to_string(v.port);
            // Two producers of one name: the later output gets its position too, so that
            // run_by_name never returns one under the other's name. (One value listed twice keeps its name.)
            const auto [it, fresh] = named.emplace(name, pv);
            if (!fresh && (it->second.node != pv.node || it->second.port != pv.port)) name += "#" + std::to_string(i);
            output_names_.push_back(std::move(name));
        }
    }

    std::shared_ptr<graph> plan_;
    std::shared_ptr<executor> exec_;
    std::vector<std::string> input_names_, output_names_;
    std::map<std::string, std::size_t> position_;
};

}  // namespace exec
SGMATCH_END_NAMESPACE
