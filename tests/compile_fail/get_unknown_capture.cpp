// expect: sgmatch::match_result::get<Name>(): Name is not a capture of this pattern
#include "sgmatch/graph/graph.hpp"
#include "sgmatch/sgmatch.hpp"
using namespace sgmatch;
struct conv;
struct bn;
int main() {
    graph g;
    auto n = g.add_input("in");
    auto m = match(g, n, op<ops::Conv>().as<conv>() >> op<ops::Relu>());
    auto b = m.get<bn>();
    (void)b;
}
