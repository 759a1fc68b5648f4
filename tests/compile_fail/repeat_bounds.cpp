// expect: sgmatch::repeat<Min, Max>(p): requires Min <= Max and Max > 0
#include "sgmatch/sgmatch.hpp"
int main() {
    constexpr auto p = sgmatch::repeat<3, 1>(sgmatch::op<sgmatch::ops::Relu>());
    (void)p;
}
