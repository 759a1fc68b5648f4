// sgmatch/onednn/lowering.hpp - what each op tag becomes in a fused oneDNN kernel
// (lowering/roles.hpp), the table a pattern's tags make of it (lowering/table.hpp), and the
// lowering of a matched subgraph into a kernel spec (lowering/lower_match.hpp).
//
// A pattern with an op that cannot lower fails to compile (make_fused_property, property.hpp).
#pragma once

#include "sgmatch/onednn/lowering/chain_view.hpp"
#include "sgmatch/onednn/lowering/lower_match.hpp"
#include "sgmatch/onednn/lowering/roles.hpp"
#include "sgmatch/onednn/lowering/table.hpp"
