// sgmatch/ops/fill_shapes.hpp - the shapes of a built-in graph's values, by the op descriptions'
// shape rules (ops/shape_rule_table.hpp): what the ONNX front end runs after its clean-up passes.
//
//   std::size_t filled = sgmatch::ops::fill_shapes(g);   // values given dims, in order
#pragma once

#include <cstddef>
#include <optional>
#include <vector>

#include "sgmatch/detail/config.hpp"
#include "sgmatch/graph/graph.hpp"
#include "sgmatch/ops/attrs.hpp"
#include "sgmatch/ops/shape_rule_table.hpp"
#include "sgmatch/ops/table.hpp"

SGMATCH_BEGIN_NAMESPACE
namespace ops {

/// What a shape rule reads of a node's inputs when every input's dims are known (constant
/// inputs of up to 64 values lend their values: a Reshape's shape); nullopt otherwise.
inline std::optional<shape_inputs> known_inputs(const graph& g, node_id id) {
    shape_inputs in;
    for (std::size_t i = 0; i < g.input_count(id); ++i) {
        const auto v = g.input(id, i);
        const auto t = g.value_type(v.node, v.port);
        const auto c = g.constant(v.node);
        if (!t || (!t->ranked() && !(c && c->rank == 0))) return std::nullopt;  // an unknown rank
        for (auto d : t->dims)
            if (d < 0) return std::nullopt;
        in.shapes.push_back(t->dims);
        const bool small = c && c->element_count() <= 64;
        in.values.push_back(small ? c->to_ints() : std::nullopt);
        in.reals.push_back(small ? c->to_reals() : std::nullopt);  // Resize's scales
    }
    return in;
}

/// Every op output of unknown shape given the shape its description's rule computes from known
/// input shapes, in order (after the clean-up passes: a Reshape whose shape was folded into a
/// constant, and everything after it); returns how many. A rule's refusal leaves the shape
/// unknown: the executor computes and checks it at run time.
inline std::size_t fill_shapes(graph& g) {
    std::size_t filled = 0;
    for (node_id id : g.nodes()) {
        if (g.kind(id) != node_kind::op) continue;
        bool missing = false;
        for (std::uint32_t p = 0; p < g.output_count(id); ++p) {
            const auto t = g.value_type(id, p);
            missing = missing || !t || !t->ranked();
        }
        const op_schema* s = find_schema(g.op_name(id));
        if (!missing || s == nullptr || shape_rule_of(*s) == nullptr) continue;
        const auto in = known_inputs(g, id);
        if (!in) continue;
        try {
            const op_attrs a(*s, node_of<graph>(g, id));
            const std::vector<dims> outs = infer_shapes(a, *in);
            for (std::uint32_t p = 0; p < g.output_count(id) && p < outs.size(); ++p) {
                auto t = g.value_type(id, p).value_or(tensor_type{});
                if (t.ranked()) continue;
                t.dims = outs[p];
                t.scalar = t.dims.empty();
                g.set_type({id, p}, t);
                ++filled;
            }
        } catch (const size_overflow&) {
            throw;  // no model computes that: refused with the node's name
        } catch (const op_error&) {
            // left unknown: the executor computes and checks it at run time
        }
    }
    return filled;
}

}  // namespace ops
SGMATCH_END_NAMESPACE
