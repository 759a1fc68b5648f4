// Built when SGMATCH_CHECK_DEPENDENCIES is on (a package build): the reference part's headers
// compile against the xtensor that was found (its header layout moved in 0.26).
#include <sgmatch/reference/kernels.hpp>

int main() {
    const sgmatch::reference::array x = {-1.0f, 2.0f};
    return sgmatch::reference::unary(x, sgmatch::reference::unary_kind::relu)(0) == 0.0f ? 0 : 1;
}
