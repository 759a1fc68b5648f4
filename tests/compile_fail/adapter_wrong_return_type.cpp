// expect: graph_traits<G> static input(g, n, i) must return sgmatch::value_ref<node_type>
#include <optional>
#include <string_view>
#include <vector>
#include "sgmatch/sgmatch.hpp"
struct my_graph {
    std::vector<int> order;
};
template <>
struct sgmatch::graph_traits<my_graph> {
    using node_type = int;
    static const std::vector<int>& nodes(const my_graph& g) { return g.order; }
    static std::size_t node_count(const my_graph& g) { return g.order.size(); }
    static std::size_t index_bound(const my_graph& g) { return g.order.size(); }
    static std::size_t index(const my_graph&, int n) { return static_cast<std::size_t>(n); }
    static std::string_view name(const my_graph&, int) { return "n"; }
    static node_kind kind(const my_graph&, int) { return node_kind::op; }
    static std::uint32_t op(const my_graph&, int) { return 0; }
    static std::size_t op_count(const my_graph&) { return 1; }
    static std::string_view op_name(const my_graph&, int) { return "Relu"; }
    static std::optional<std::uint32_t> find_op(const my_graph&, std::string_view) { return 0u; }
    static std::size_t input_count(const my_graph&, int) { return 0; }
    static int input(const my_graph&, int, std::size_t) { return 0; }  // the producer alone: its port is missing
    static std::size_t output_count(const my_graph&, int) { return 1; }
    static std::size_t user_count(const my_graph&, int) { return 0; }
    static use<int> user(const my_graph&, int, std::size_t) { return {}; }
    static std::size_t graph_output_count(const my_graph&) { return 0; }
    static value_ref<int> graph_output(const my_graph&, std::size_t) { return {}; }
    static bool needs_gradients(const my_graph&) { return false; }
    static std::optional<attribute> attr(const my_graph&, int, std::string_view) { return std::nullopt; }
};
int main() {
    my_graph g{{0}};
    return static_cast<bool>(sgmatch::match(g, 0, sgmatch::op<sgmatch::ops::Relu>()));
}
