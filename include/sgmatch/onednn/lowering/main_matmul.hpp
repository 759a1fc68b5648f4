// sgmatch/onednn/lowering/main_matmul.hpp - the lowering of a match whose main op is a MatMul or a
// Gemm with constant weights (x [.., M, K] times W [K, N]): a matmul_spec, then the chain after
// it (chain.hpp).
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "sgmatch/detail/config.hpp"
#include "sgmatch/graph/adapter.hpp"
#include "sgmatch/onednn/fused_matmul.hpp"
#include "sgmatch/onednn/lowering/chain.hpp"
#include "sgmatch/onednn/lowering/context.hpp"
#include "sgmatch/ops/attrs.hpp"

SGMATCH_BEGIN_NAMESPACE
namespace onednn {
namespace detail {

/// A MatMul or Gemm and its chain as one matmul_spec: "" on success, else why not.
template <class G>
std::string lower_matmul_main(const lowering_context<G>& c, typename graph_traits<G>::node_type main, const ops::op_attrs& head,
                              match_lowering<typename graph_traits<G>::node_type>& out) {
    using traits = graph_traits<G>;
    const G& g = c.g;
    matmul_spec& m = out.spec.template emplace<matmul_spec>();
    m.name = std::string(traits::name(g, main));
    const std::string what = std::string(traits::op_name(g, main)) + " " + c.name(main);
    const std::size_t ins = traits::input_count(g, main);
    if (ins < 2) return what + " has fewer than 2 inputs";
    out.src = traits::input(g, main, 0);
    const auto w = c.const_data(traits::input(g, main, 1));
    if (!w || w->rank != 2) return what + ": the right operand is not a 2-D constant with data";
    const bool gemm = head.schema().attr("transB") != nullptr;  // Gemm; MatMul has no attributes
    if (gemm && head.i("transA") != 0) return what + ": transA is not supported";
    const bool tb = gemm && head.i("transB") != 0;
    const float alpha = gemm ? static_cast<float>(head.f("alpha")) : 1.0f;
    const float beta = gemm ? static_cast<float>(head.f("beta")) : 1.0f;
    m.K = tb ? w->dims[1] : w->dims[0];
    m.N = tb ? w->dims[0] : w->dims[1];
    if (!c.with_data) {
        m.weights.assign(static_cast<std::size_t>(m.K * m.N), 0.0f);
    } else if (!tb && alpha == 1.0f) {
        m.weights = weight_values(g, traits::input(g, main, 1).node, *w);  // [K, N] as stored
    } else {
        const auto v = constant_values<G>(*w);
        std::vector<float> kn(static_cast<std::size_t>(m.K * m.N));
        for (std::int64_t k = 0; k < m.K; ++k)
            for (std::int64_t n = 0; n < m.N; ++n)
                kn[static_cast<std::size_t>(k * m.N + n)] = alpha * v[static_cast<std::size_t>(tb ? n * m.K + k : k * m.N + n)];
        m.weights = std::move(kn);
    }
    if (ins >= 3) {
        const auto b = c.const_data(traits::input(g, main, 2));
        if (!b || b->element_count() != m.N || (b->rank == 2 && b->dims[0] != 1) || b->rank > 2)
            return what + ": C is not a constant of shape [N] or [1, N]";
        m.bias = c.values_or_zeros(*b);
        for (auto& x : m.bias) x *= beta;
    }
    std::optional<dims> out_dims;  // the matmul's output shape, when the adapter knows it
    if (auto t = adapter<G>::value_type(g, main, 0); t && !t->dims.empty()) out_dims = t->dims;
    // BatchNormalization normalizes axis 1: the matmul's N only when its output is 2-D.
    auto batch_norm_declined = [&](const std::string& bn) -> std::string {
        std::optional<std::size_t> rank;
        if (out_dims) rank = out_dims->size();
        else if (auto t = adapter<G>::value_type(g, out.src.node, out.src.port); t && !t->dims.empty()) rank = t->dims.size();
        if (!rank) return "BatchNorm " + bn + " after a matmul of unknown rank";
        if (*rank != 2)
            return "BatchNorm " + bn + " after a " + std::to_string(*rank) + "-D matmul normalizes another axis than the matmul's columns";
        return "";
    };
    chain_target t{m.post_ops,
                   m.bias,
                   m.N,
                   1,
                   out_dims,
                   batch_norm_declined,
                   [&m](std::vector<float> (&p)[4], float eps) { m.fold_batch_norm(p[0], p[1], p[2], p[3], eps); },
                   false};
    if (std::string why = lower_chain(c, main, t, out); !why.empty()) return why;
    if (auto ty = adapter<G>::value_type(g, out.src.node, out.src.port); ty && !ty->dims.empty()) {
        try {
            (void)m.output_dims(ty->dims);
        } catch (const kernel_error& e) {
            return e.what();
        }
    }
    return "";
}

}  // namespace detail
}  // namespace onednn
SGMATCH_END_NAMESPACE
