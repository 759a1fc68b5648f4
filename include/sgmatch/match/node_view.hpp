// sgmatch/match/node_view.hpp - what a where() predicate sees of a node.
//
// Non-template member functions only, so a generic lambda can call them without `.template`:
//   op<Conv>().where([](const auto& n) { return n.attr_int("group") == 1; })
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string_view>
#include <vector>

#include "sgmatch/detail/config.hpp"
#include "sgmatch/graph/adapter.hpp"

SGMATCH_BEGIN_NAMESPACE

template <class G>
class node_view {
public:
    using traits = graph_traits<G>;
    using node_type = typename traits::node_type;

    node_view(const G& g, node_type n) : g_(&g), n_(n) {}

    node_type node() const { return n_; }
    const G& graph() const { return *g_; }
    std::string_view name() const { return traits::name(*g_, n_); }
    node_kind kind() const { return traits::kind(*g_, n_); }
    bool is_op() const { return kind() == node_kind::op; }
    bool is_input() const { return kind() == node_kind::input; }
    bool is_constant() const { return kind() == node_kind::constant; }
    std::string_view op_name() const { return traits::op_name(*g_, n_); }

    std::size_t input_count() const { return traits::input_count(*g_, n_); }
    std::size_t output_count() const { return traits::output_count(*g_, n_); }
    std::size_t user_count() const { return traits::user_count(*g_, n_); }
    /// The producer of input i.
    node_view input(std::size_t i) const { return node_view(*g_, traits::input(*g_, n_, i).node); }

    std::optional<attribute> attr(std::string_view key) const { return traits::attr(*g_, n_, key); }
    std::optional<std::int64_t> attr_int(std::string_view key) const {
        auto a = attr(key);
        return a ? a->as_int() : std::nullopt;
    }
    std::optional<double> attr_real(std::string_view key) const {
        auto a = attr(key);
        return a ? a->as_real() : std::nullopt;
    }
    std::optional<std::vector<std::int64_t>> attr_ints(std::string_view key) const {
        auto a = attr(key);
        if (!a || !a->as_ints()) return std::nullopt;
        return *a->as_ints();
    }

    /// Type of output `port`, when the adapter knows shapes.
    std::optional<tensor_type> type(std::uint32_t port = 0) const {
        return adapter<G>::value_type(*g_, n_, port);
    }
    /// Type of the value read on input `slot`.
    std::optional<tensor_type> input_type(std::size_t slot) const {
        auto v = traits::input(*g_, n_, slot);
        return adapter<G>::value_type(*g_, v.node, v.port);
    }
    std::optional<const_tensor_view> constant() const { return adapter<G>::constant(*g_, n_); }
    /// The value of a one-element constant.
    std::optional<double> scalar() const {
        auto c = constant();
        return c ? c->scalar() : std::nullopt;
    }

private:
    const G* g_;
    node_type n_;
};

SGMATCH_END_NAMESPACE
