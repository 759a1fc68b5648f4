// expect: each operand must be a value pattern
#include "sgmatch/sgmatch.hpp"
using namespace sgmatch;
int main() {
    constexpr auto p = op<ops::Add>(optional(op<ops::Relu>()), any());
    (void)p;
}
