// expect: each T must be an op tag declaring
#include "sgmatch/sgmatch.hpp"
struct NotATag {};
int main() {
    constexpr auto p = sgmatch::op<NotATag>();
    (void)p;
}
