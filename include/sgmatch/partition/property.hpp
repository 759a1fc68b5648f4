// sgmatch/partition/property.hpp - a subgraph property: a pattern plus a node factory.
//
//   auto prop = sgmatch::make_property<my_graph>("conv_bn", op<Conv>().as<conv>() >> op<BatchNorm>(),
//       [](const sgmatch::subgraph<my_graph>& s, const auto& m) -> std::any {
//           return my_fused_conv{m.template get<conv>(), s.inputs.size()};
//       });
//
// The factory sees the matched subgraph (nodes, ordered boundary inputs and outputs, a subgraph
// id) and the typed match (captures), and returns the payload the fused node carries in the
// user's graph. It runs before anything is written, so a factory that throws leaves the graph
// as it was.
#pragma once

#include <any>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <map>
#include <string>
#include <string_view>
#include <type_traits>
#include <utility>
#include <vector>

#include "sgmatch/detail/config.hpp"
#include "sgmatch/graph/adapter.hpp"
#include "sgmatch/graph/types.hpp"
#include "sgmatch/match/scan.hpp"

SGMATCH_BEGIN_NAMESPACE

/// What a fused node shows of itself to tools (a saved model, a report): the pattern in
/// sgmatch's notation and the matched ops, in order. A backend gives it for its payloads
/// (onednn::describe_fused).
struct fused_description {
    std::string pattern;
    std::vector<std::string> members;
};

/// A matched subgraph as a node factory sees it, read from the graph just before its rewrite.
template <class G>
struct subgraph {
    using node_type = typename graph_traits<G>::node_type;
    std::size_t id = 0;                      // 0, 1, ... within one apply call
    std::string_view property;               // the property that matched it
    std::vector<node_type> nodes;            // in pattern order (the anchor first)
    std::vector<value_ref<node_type>> inputs;   // values read from outside, in order of first use
    std::vector<value_ref<node_type>> outputs;  // values used outside or graph outputs, in node order
    const G* graph = nullptr;                // the graph, as it stands before this rewrite
};

/// What one property does: match, then build the fused node's payload. Attributes as in
/// MXNet's SubgraphProperty (name, disable, inference_only) plus size limits, escaping
/// intermediates, the fused op name and free-form user attributes.
template <class G>
class property {
public:
    using node_type = typename graph_traits<G>::node_type;
    /// A scan finds the matches of the property's pattern on the graph the index was built
    /// from, in topological order of the anchors, skipping taken nodes and keeping (and marking)
    /// those that `accept` takes; then, with the scan over, it calls the sink once per kept match
    /// with its nodes and a factory bound to its captures.
    using accept_fn = std::function<bool(const node_type* nodes, std::size_t count)>;
    using factory_fn = std::function<std::any(const subgraph<G>&)>;
    using sink = std::function<void(const node_type* nodes, std::size_t count, const factory_fn& factory)>;
    /// Arguments: index, taken, accept, sink, whether intermediates may escape, the maximum
    /// subgraph size (scanners that grow regions stop there).
    using scanner =
        std::function<void(const op_index<G>&, taken_mask&, const accept_fn&, const sink&, bool, std::size_t)>;

    property(std::string name, scanner scan) : name_(std::move(name)), scan_(std::move(scan)) {}

    const std::string& name() const { return name_; }

    // ----- attributes (MXNet's property attributes) -----
    /// Off: apply_backend skips it (SGMATCH_DISABLE=name does the same from the environment).
    property& disable(bool off = true) {
        disabled_ = off;
        return *this;
    }
    bool disabled() const { return disabled_; }
    /// Skipped when the graph needs gradients (training graphs).
    property& inference_only(bool on = true) {
        inference_only_ = on;
        return *this;
    }
    bool is_inference_only() const { return inference_only_; }
    /// Matches with fewer or more nodes are declined.
    property& min_size(std::size_t n) {
        min_size_ = n;
        return *this;
    }
    property& max_size(std::size_t n) {
        max_size_ = n;
        return *this;
    }
    std::size_t min_nodes() const { return min_size_; }
    std::size_t max_nodes() const { return max_size_; }
    /// Let every intermediate of a match have users outside it (MXNet's semantics): such values
    /// become extra outputs of the fused node. Matches that would then create a cycle are
    /// declined. Off by default: only edges a pattern marks .escaping() may leave.
    property& allow_escaping(bool on = true) {
        allow_escaping_ = on;
        return *this;
    }
    bool allows_escaping() const { return allow_escaping_; }
    /// The op name of the fused nodes (default "sgmatch.<property name>").
    property& fused_op(std::string op) {
        fused_op_ = std::move(op);
        return *this;
    }
    std::string fused_op_name() const { return fused_op_.empty() ? "sgmatch." + name_ : fused_op_; }
    /// User-defined attributes, free for the factory and the framework to read.
    property& set_attr(std::string key, std::string value) {
        attrs_[std::move(key)] = std::move(value);
        return *this;
    }
    const std::string* attr(const std::string& key) const {
        auto it = attrs_.find(key);
        return it == attrs_.end() ? nullptr : &it->second;
    }

    /// A check of the property's own, run on each complete match after the size check and
    /// before the convexity check: returns an empty string to accept the match, or the reason
    /// to decline it (counted per reason in the property_report and shown by SGMATCH_VERBOSE).
    /// A declined match gives way to the next-longest one at the same anchor, as for the other
    /// checks. Lowerings use it for what a pattern's type cannot know: whether parameters are
    /// constants, whether a backend takes the shapes.
    using check_fn = std::function<std::string(const G&, const node_type* nodes, std::size_t count)>;
    property& check(check_fn f) {
        check_ = std::move(f);
        return *this;
    }
    const check_fn& checker() const { return check_; }

    /// For scanners whose sets are convex together by construction (capability regions: the
    /// graph with all of them contracted is acyclic, so any subset can be contracted too):
    /// apply_property then skips its own convexity check, which would only repeat that work.
    property& convex_by_construction(bool on = true) {
        convex_by_construction_ = on;
        return *this;
    }
    bool is_convex_by_construction() const { return convex_by_construction_; }

    void scan(const op_index<G>& index, taken_mask& taken, const accept_fn& accept, const sink& s) const {
        scan_(index, taken, accept, s, allow_escaping_, max_size_);
    }

private:
    std::string name_;
    scanner scan_;
    bool disabled_ = false;
    bool inference_only_ = false;
    bool allow_escaping_ = false;
    bool convex_by_construction_ = false;
    std::size_t min_size_ = 1;
    std::size_t max_size_ = static_cast<std::size_t>(-1);
    std::string fused_op_;
    std::map<std::string, std::string> attrs_;
    check_fn check_;
};

namespace detail {

// Hand each kept node set to the sink, with factory(subgraph) as its node factory: for
// properties whose factories see only the subgraph (selectors, capability regions).
template <class G, class Sets, class F>
void sink_sets(const Sets& sets, const F& factory, const typename property<G>::sink& out) {
    const typename property<G>::factory_fn make = [&](const subgraph<G>& s) -> std::any {
        return std::any(factory(s));
    };
    for (const auto& nodes : sets) out(nodes.data(), nodes.size(), make);
}

}  // namespace detail

/// A property from a pattern and a factory. The factory is called as factory(subgraph, match)
/// when it accepts both (the match is the typed match_result, for captures), else as
/// factory(subgraph); it returns the fused node's payload (anything std::any can hold).
template <class G, class P, class F>
property<G> make_property(std::string name, const P& p, F factory) {
    static_assert(is_pattern_v<P>, "sgmatch::make_property(name, p, factory): p must be a pattern");
    using result_t = match_result<G, P>;
    static_assert(std::is_invocable_v<const F&, const subgraph<G>&, const result_t&> ||
                      std::is_invocable_v<const F&, const subgraph<G>&>,
                  "sgmatch::make_property(name, p, factory): factory must be callable as "
                  "factory(const subgraph<G>&, const match_result<G, P>&) or factory(const subgraph<G>&)");
    auto scan = [p, factory](const op_index<G>& index, taken_mask& taken, const typename property<G>::accept_fn& accept,
                             const typename property<G>::sink& out, bool escape_all, std::size_t /*max_nodes*/) {
        const auto list = find_all(index, p, taken, accept, escape_all);
        for (std::size_t i = 0; i < list.size(); ++i) {
            const result_t m = list[i];
            const typename property<G>::factory_fn make = [&](const subgraph<G>& s) -> std::any {
                if constexpr (std::is_invocable_v<const F&, const subgraph<G>&, const result_t&>)
                    return std::any(factory(s, m));
                else
                    return std::any(factory(s));
            };
            out(m.begin(), m.size(), make);
        }
    };
    return property<G>(std::move(name), std::move(scan));
}

SGMATCH_END_NAMESPACE
