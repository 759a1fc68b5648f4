// expect: graph_traits<G> must define static user_count(g, n)
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
    static value_ref<int> input(const my_graph&, int, std::size_t) { return {}; }
    static std::size_t output_count(const my_graph&, int) { return 1; }
    // user_count and user are missing
};
int main() {
    my_graph g{{0}};
    return static_cast<bool>(sgmatch::match(g, 0, sgmatch::op<sgmatch::ops::Relu>()));
}
