// expect: graph_traits<G> is not specialized for this graph type
#include <vector>
#include "sgmatch/sgmatch.hpp"
struct other_graph {};
int main() {
    other_graph g;
    return static_cast<bool>(sgmatch::match(g, 0, sgmatch::op<sgmatch::ops::Relu>()));
}
