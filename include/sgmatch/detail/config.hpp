// sgmatch/detail/config.hpp - version and namespace macros (no promises).
#pragma once

#define SGMATCH_VERSION_MAJOR 0
#define SGMATCH_VERSION_MINOR 1
#define SGMATCH_VERSION_PATCH 0

#define SGMATCH_BEGIN_NAMESPACE \
    namespace sgmatch {         \
    inline namespace v0 {
#define SGMATCH_END_NAMESPACE \
    }                         \
    }
