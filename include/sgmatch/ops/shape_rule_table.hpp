// sgmatch/ops/shape_rule_table.hpp - every op description's shape rule, looked up by the
// description.
//
//   const std::vector<ops::dims> outs = ops::infer_shapes(attrs, inputs);
//
// Each rule is attached to its op's entry as shape_rule_for<Tag>, beside the description in the
// op's family header. The table of their addresses is made here, apart from the descriptions'
// (ops/table.hpp), because only what computes shapes needs it (the executor's typed kernels, the
// ONNX front end, the graph generators): a translation unit that only lowers or checks
// attributes (the one registering the oneDNN backend) does not compile a hundred shape rules it
// never calls.
#pragma once

#include <string>
#include <unordered_map>
#include <vector>

#include "sgmatch/detail/checked.hpp"
#include "sgmatch/detail/config.hpp"
#include "sgmatch/ops/table.hpp"

SGMATCH_BEGIN_NAMESPACE
namespace ops {

/// The shape rule of description `s` (null: its shape is not known before the op runs).
inline shape_rule shape_rule_of(const op_schema& s) {
    static const auto rules_by_schema = facet_table<shape_rule>([](auto tag) -> shape_rule {
        if constexpr (has_facet_v<decltype(shape_rule_for<decltype(tag)>)>) {
            const shape_rule r = shape_rule_for<decltype(tag)>;
            return r == rules::known_when_run ? nullptr : r;
        } else {
            return nullptr;
        }
    });
    const auto it = rules_by_schema.find(&s);
    return it == rules_by_schema.end() ? nullptr : it->second;
}

/// The output shapes of a node of description `a.schema()` from its inputs' shapes (and the
/// values of its small constant inputs); the op's own check of its attributes comes first.
inline std::vector<dims> infer_shapes(const op_attrs& a, const shape_inputs& in) {
    const shape_rule rule = shape_rule_of(a.schema());
    if (rule == nullptr) throw op_error("sgmatch: " + a.where() + ": no shape rule");
    std::vector<dims> out = rule(in, a);
    for (std::size_t p = 0; p < out.size(); ++p)
        if (!sgmatch::detail::checked_product(out[p])) {
            std::string d;
            for (auto k : out[p]) d += (d.empty() ? "" : ", ") + std::to_string(k);
            throw size_overflow("sgmatch: " + a.where() + ": output " + std::to_string(p) + " of shape [" + d +
                                "] holds more elements than int64 counts (overflow)");
        }
    return out;
}

}  // namespace ops
SGMATCH_END_NAMESPACE
