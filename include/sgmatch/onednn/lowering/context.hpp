// sgmatch/onednn/lowering/context.hpp - what every step of lowering a match shares: the result it
// fills (match_lowering), the matched nodes read through the adapter, and the helpers each step
// reads constants and attributes with.
#pragma once

#include <cstddef>
#include <optional>
#include <string>
#include <variant>
#include <vector>

#include "sgmatch/detail/config.hpp"
#include "sgmatch/graph/adapter.hpp"
#include "sgmatch/graph/types.hpp"
#include "sgmatch/onednn/float_values.hpp"
#include "sgmatch/onednn/fused_conv.hpp"
#include "sgmatch/onednn/fused_matmul.hpp"
#include "sgmatch/onednn/lowering/chain_view.hpp"
#include "sgmatch/onednn/lowering/table.hpp"
#include "sgmatch/onednn/op_kernels.hpp"
#include "sgmatch/ops/attrs.hpp"

SGMATCH_BEGIN_NAMESPACE
namespace onednn {

/// The spec of the kernel a match lowers to: a (transposed) convolution, a matmul, or a
/// BatchNorm on its own. Weights and constants are filled only when asked.
using kernel_spec = std::variant<conv_spec, matmul_spec, batch_norm_spec>;

/// What lower_match produced: a kernel spec, or why the match cannot lower.
template <class N>
struct match_lowering {
    std::string decline;               // empty on success
    kernel_spec spec;                  // meaningful on success only
    value_ref<N> src{};                // the main op's data input
    std::vector<value_ref<N>> extra;   // runtime operands of sum / binary post-ops, by index
    value_ref<N> dst{};                // the value the kernel computes
};

namespace detail {

// The node's attributes, checked against its op's description (ops::op_attrs); an op with no
// description has none (its lowering reads the node).
template <class G>
ops::op_attrs attrs_of(const lowering_entry& e, const G& g, typename graph_traits<G>::node_type n) {
    return ops::op_attrs(e.schema != nullptr ? *e.schema : ops::undescribed(), ops::node_of<G>(g, n));
}

template <class G>
std::vector<float> constant_values(const const_tensor_view& c) {
    return c.to_floats().value_or(std::vector<float>{});  // callers took only f32 / f64 with data
}

/// A weight's values: shared with the constant where the adapter promises its data stays
/// unchanged (constant_owner; the built-in graph, for weights a model file's parser decoded),
/// else copied.
template <class G>
float_values weight_values(const G& g, typename graph_traits<G>::node_type n, const const_tensor_view& c) {
    if (c.type == dtype::f32)
        if (auto owner = adapter<G>::constant_owner(g, n))
            return float_values::shared(std::move(owner), static_cast<const float*>(c.data), static_cast<std::size_t>(c.element_count()));
    return constant_values<G>(c);
}

/// The match being lowered, read through the graph's adapter (the matched nodes as a
/// chain_view, which composite lowerings read too): what each step (the main op's lowering, the
/// chain after it) reads it with. `with_data` false: only the checks run, nothing is copied (what
/// a property's check does).
template <class G>
struct lowering_context : chain_view<G> {
    using traits = graph_traits<G>;
    using N = typename traits::node_type;
    bool with_data;
    const std::vector<lowering_entry>& table;
    const std::vector<recognize_fn<G>>& composites;

    /// "'name'", for messages.
    std::string name(N n) const { return "'" + std::string(traits::name(this->g, n)) + "'"; }
    /// The value's data when it is an f32 or f64 constant with data.
    std::optional<const_tensor_view> const_data(value_ref<N> v) const {
        auto c = adapter<G>::constant(this->g, v.node);
        if (!c || c->data == nullptr || (c->type != dtype::f32 && c->type != dtype::f64)) return std::nullopt;
        return c;
    }
    /// A result nothing reads (dead code the graph still holds): no fused node has nothing to
    /// give back, so the match is declined rather than rewritten into a node without outputs.
    bool unused(N last) const { return traits::user_count(this->g, last) == 0 && !adapter<G>::has_graph_output(this->g, last); }
    /// The values of a constant, or as many zeros when only the checks run.
    std::vector<float> values_or_zeros(const const_tensor_view& c) const {
        return with_data ? constant_values<G>(c) : std::vector<float>(static_cast<std::size_t>(c.element_count()));
    }

    /// The four parameters of a BatchNorm node (scale, B, mean, var): constants with data, all
    /// of `channels` values (any count when negative; the one found is written back), or why not.
    std::string batch_norm_parameters(N bn, std::int64_t& channels, std::vector<float> (&p)[4]) const {
        if (traits::input_count(this->g, bn) < 5) return "BatchNorm " + name(bn) + " has fewer than 5 inputs";
        const bool given = channels >= 0;
        for (std::size_t k = 0; k < 4; ++k) {
            const auto c = const_data(traits::input(this->g, bn, k + 1));
            if (!c) return "BatchNorm " + name(bn) + ": parameters are not constants with data";
            if (channels >= 0 && c->element_count() != channels)
                return "BatchNorm " + name(bn) + (given ? ": parameters do not have one value per channel" : ": parameters of different sizes");
            channels = c->element_count();
            p[k] = values_or_zeros(*c);
        }
        return "";
    }
};

}  // namespace detail
}  // namespace onednn
SGMATCH_END_NAMESPACE
