#include <cstdio>

#include <sgmatch/graph/graph.hpp>
#include <sgmatch/sgmatch.hpp>

int main() {
    using namespace sgmatch;
    graph g;
    auto x = g.add_input("x");
    g.mark_output(g.add_op("Relu", "relu", {g.add_op("Conv", "conv", {x})}));
    const auto n = find_all(g, op<ops::Conv>() >> op<ops::Relu>()).size();
    std::printf("sgmatch test_package: %zu match\n", n);
    return n == 1 ? 0 : 1;
}
