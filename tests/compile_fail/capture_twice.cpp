// expect: a capture name is used twice in this pattern
#include "sgmatch/graph/graph.hpp"
#include "sgmatch/sgmatch.hpp"
using namespace sgmatch;
struct x;
int main() {
    graph g;
    auto n = g.add_input("in");
    constexpr auto p = op<ops::Conv>().as<x>() >> op<ops::Relu>().as<x>();
    return static_cast<bool>(match(g, n, p));
}
