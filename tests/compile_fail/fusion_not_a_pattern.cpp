// expect: sgmatch::onednn::fusion(name, p): p must be a pattern
#include "sgmatch/onednn/property.hpp"
int main() {
    auto f = sgmatch::onednn::fusion("f", 42);
    (void)f;
}
