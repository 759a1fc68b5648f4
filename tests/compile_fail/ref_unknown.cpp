// expect: ref<Name>() names a capture that this pattern never makes
#include "sgmatch/graph/graph.hpp"
#include "sgmatch/sgmatch.hpp"
using namespace sgmatch;
struct x;
int main() {
    graph g;
    auto n = g.add_input("in");
    return static_cast<bool>(match(g, n, op<ops::Mul>(ref<x>(), any())));
}
