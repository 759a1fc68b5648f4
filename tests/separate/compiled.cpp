// The one translation unit of the separate-compilation test that compiles the ready-made
// backend (see register.cpp).
#include "sgmatch/onednn/src.hpp"
