// Uses the installed reference part: an xtensor reference kernel from sgmatch's headers.
#include <cstdio>

#include <sgmatch/reference/kernels.hpp>
#include <sgmatch/sgmatch.hpp>

int main() {
    const xt::xarray<float> a = {1.f, -2.f, 3.f};
    const xt::xarray<float> b = sgmatch::reference::unary(a, sgmatch::reference::unary_kind::relu);
    const bool ok = b(0) == 1.f && b(1) == 0.f && b(2) == 3.f && sgmatch::is_pattern_v<decltype(sgmatch::any())>;
    std::printf("consumer (reference): relu reference kernel %s\n", ok ? "ok" : "WRONG");
    return ok ? 0 : 1;
}
