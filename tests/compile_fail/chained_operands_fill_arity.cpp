// expect: the op after >> reads a's value as one of its inputs
// Relu has one input: chained after Conv, that input is Conv's output; any() describes it again.
#include "sgmatch/sgmatch.hpp"
using namespace sgmatch;
int main() {
    constexpr auto p = op<ops::Conv>() >> op<ops::Relu>(any());
    (void)p;
}
