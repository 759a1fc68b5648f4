// sgmatch/sgmatch.hpp - the core: adapter contract, built-in graph, pattern DSL, matcher.
// Needs only Boost. The oneDNN and xtensor parts are separate, opt-in includes.
#pragma once

#include "sgmatch/analysis/anchors.hpp"
#include "sgmatch/analysis/captures.hpp"
#include "sgmatch/analysis/node_count.hpp"
#include "sgmatch/analysis/notation.hpp"
#include "sgmatch/graph/adapter.hpp"
#include "sgmatch/graph/graph.hpp"
#include "sgmatch/graph/types.hpp"
#include "sgmatch/match/match.hpp"
#include "sgmatch/match/node_view.hpp"
#include "sgmatch/match/scan.hpp"
#include "sgmatch/pattern/ast.hpp"
#include "sgmatch/pattern/combinators.hpp"
#include "sgmatch/pattern/predicates.hpp"
#include "sgmatch/pattern/tag.hpp"
#include "sgmatch/pattern/vocabulary.hpp"
