// expect: more operands than the tag's arity
#include "sgmatch/sgmatch.hpp"
using namespace sgmatch;
int main() {
    constexpr auto p = op<ops::Relu>(any(), any());
    (void)p;
}
