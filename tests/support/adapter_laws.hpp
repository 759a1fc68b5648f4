// tests/support/adapter_laws.hpp - the laws every graph adapter must satisfy, as a doctest check:
// sgmatch::testing::check_adapter (sgmatch/testing/check_adapter.hpp, what users run on their own
// adapters) against each adapter here (the built-in graph, the nnvm-style example, ...).
#pragma once

#include <doctest/doctest.h>

#include "sgmatch/testing/check_adapter.hpp"

namespace sgtest {

template <class G>
void check_adapter_laws(const G& g) {
    const auto r = sgmatch::testing::check_adapter(g);
    INFO(r.str());
    CHECK(r.ok());
    CHECK(r.nodes == sgmatch::graph_traits<G>::node_count(g));
}

}  // namespace sgtest
