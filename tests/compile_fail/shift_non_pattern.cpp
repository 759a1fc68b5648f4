// expect: sgmatch: operator>>(a, b): both sides must be patterns
#include "sgmatch/sgmatch.hpp"
int main() {
    constexpr auto p = sgmatch::op<sgmatch::ops::Relu>() >> 5;
    (void)p;
}
