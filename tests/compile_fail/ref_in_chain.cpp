// expect: ref<Name>() can only be an operand
#include "sgmatch/graph/graph.hpp"
#include "sgmatch/sgmatch.hpp"
using namespace sgmatch;
struct x;
int main() {
    graph g;
    auto n = g.add_input("in");
    return static_cast<bool>(match(g, n, op<ops::Relu>().as<x>() >> ref<x>()));
}
