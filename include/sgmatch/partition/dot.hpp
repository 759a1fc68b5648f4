// sgmatch/partition/dot.hpp - Graphviz DOT export, with subgraphs drawn as clusters, and a
// text summary of a partition pass.
//
//   std::vector<std::vector<node_id>> groups;   // e.g. collected from subgraph.nodes in a factory
//   sgmatch::write_dot(std::cout, g, groups);   // before: the matched sets as clusters
//   sgmatch::write_dot(std::cout, g_after);     // after: fused nodes drawn as boxes
#pragma once

#include <cstddef>
#include <ostream>
#include <string>
#include <string_view>
#include <vector>

#include "sgmatch/detail/config.hpp"
#include "sgmatch/graph/adapter.hpp"
#include "sgmatch/partition/partition.hpp"

SGMATCH_BEGIN_NAMESPACE
namespace detail {

inline std::string dot_escape(std::string_view s) {
    std::string out;
    out.reserve(s.size());
    for (char c : s) {
        if (c == '"' || c == '\\') out += '\\';
        out += c;
    }
    return out;
}

}  // namespace detail

/// Write g in Graphviz DOT. Each set in `clusters` is drawn as a cluster labelled by its index;
/// op nodes show name and op, graph inputs are ellipses, constants notes, graph outputs bold;
/// an edge from output port p > 0 is labelled with p.
template <class G>
void write_dot(std::ostream& os, const G& g,
               const std::vector<std::vector<typename graph_traits<G>::node_type>>& clusters = {},
               std::string_view title = "sgmatch") {
    using traits = graph_traits<G>;
    using N = typename traits::node_type;
    std::vector<int> cluster_of(traits::index_bound(g), -1);
    for (std::size_t c = 0; c < clusters.size(); ++c)
        for (const N& n : clusters[c]) cluster_of[traits::index(g, n)] = static_cast<int>(c);
    auto id = [&](const N& n) { return "n" + std::to_string(traits::index(g, n)); };
    auto node_line = [&](const N& n) {
        const node_kind k = traits::kind(g, n);
        std::string label = detail::dot_escape(traits::name(g, n));
        if (k == node_kind::op) label += "\\n" + detail::dot_escape(traits::op_name(g, n));
        os << "    " << id(n) << " [label=\"" << label << "\"";
        if (k == node_kind::input) os << ", shape=ellipse";
        if (k == node_kind::constant) os << ", shape=note, fontsize=9";
        if (k == node_kind::op) os << ", shape=box";
        if (adapter<G>::has_graph_output(g, n)) os << ", style=bold";
        os << "];\n";
    };
    os << "digraph \"" << detail::dot_escape(title) << "\" {\n  rankdir=TB;\n";
    for (std::size_t c = 0; c < clusters.size(); ++c) {
        os << "  subgraph cluster_" << c << " {\n    label=\"" << c << "\";\n    style=filled;\n"
           << "    color=lightblue;\n";
        for (const N& n : clusters[c]) node_line(n);
        os << "  }\n";
    }
    for (const N& n : traits::nodes(g))
        if (cluster_of[traits::index(g, n)] < 0) node_line(n);
    for (const N& n : traits::nodes(g)) {
        const std::size_t ic = traits::input_count(g, n);
        for (std::size_t i = 0; i < ic; ++i) {
            const auto v = traits::input(g, n, i);
            os << "  " << id(v.node) << " -> " << id(n);
            if (v.port > 0) os << " [label=\"" << v.port << "\"]";
            os << ";\n";
        }
    }
    os << "}\n";
}

/// One line per property: candidates, fused, and rejections by reason (or why it was skipped).
inline std::string summary(const std::vector<property_report>& reports) {
    std::string s;
    for (const property_report& r : reports) {
        s += r.property + ": ";
        if (r.skipped) {
            s += "skipped (" + r.skip_reason + ")\n";
            continue;
        }
        s += std::to_string(r.candidates) + " candidates, " + std::to_string(r.accepted) + " fused";
        std::vector<std::string> parts;
        if (r.rejected_size) parts.push_back(std::to_string(r.rejected_size) + " outside the size limits");
        if (r.rejected_cycle) parts.push_back(std::to_string(r.rejected_cycle) + " would make a cycle");
        for (const auto& [why, n] : r.check_reasons) parts.push_back(std::to_string(n) + " declined: " + why);
        for (std::size_t i = 0; i < parts.size(); ++i) s += (i ? ", " : "; rejected: ") + parts[i];
        s += "\n";
    }
    return s;
}

SGMATCH_END_NAMESPACE
