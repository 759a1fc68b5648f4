// expect: at most 16 operands
#include "sgmatch/sgmatch.hpp"
using namespace sgmatch;
int main() {
    constexpr auto a = any();
    constexpr auto p = op<ops::Concat>(a, a, a, a, a, a, a, a, a, a, a, a, a, a, a, a, a);
    (void)p;
}
