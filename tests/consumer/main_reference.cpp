// Uses the installed reference part's dependencies: sgmatch's core plus xtensor.
#include <cstdio>

#include <sgmatch/sgmatch.hpp>
#include <xtensor/xarray.hpp>

int main() {
    const xt::xarray<float> a = {1.f, -2.f, 3.f};
    const xt::xarray<float> b = a * a;
    const bool ok = b(1) == 4.f && sgmatch::is_pattern_v<decltype(sgmatch::any())>;
    std::printf("consumer (reference): xtensor %s\n", ok ? "ok" : "WRONG");
    return ok ? 0 : 1;
}
