// expect: p is not a pattern
#include "sgmatch/graph/graph.hpp"
#include "sgmatch/sgmatch.hpp"
int main() {
    sgmatch::graph g;
    auto x = g.add_input("x");
    return static_cast<bool>(sgmatch::match(g, x, 42));
}
