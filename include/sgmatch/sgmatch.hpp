// sgmatch/sgmatch.hpp - the core: adapter contract, pattern DSL, analyses, matcher.
// The built-in graph is sgmatch/graph/graph.hpp (builders: sgmatch/graph/builders.hpp); a user
// with their own graph type does not pay for it. The oneDNN, xtensor, executor, ONNX and torch
// parts are opt-in includes of their own (sgmatch/onednn/, sgmatch/reference/, ...); this header
// includes none of them.
#pragma once

#include "sgmatch/analysis/anchors.hpp"
#include "sgmatch/analysis/captures.hpp"
#include "sgmatch/analysis/node_count.hpp"
#include "sgmatch/analysis/notation.hpp"
#include "sgmatch/graph/adapter.hpp"
#include "sgmatch/graph/types.hpp"
#include "sgmatch/match/match.hpp"
#include "sgmatch/match/node_view.hpp"
#include "sgmatch/match/scan.hpp"
#include "sgmatch/pattern/ast.hpp"
#include "sgmatch/pattern/combinators.hpp"
#include "sgmatch/pattern/predicates.hpp"
#include "sgmatch/pattern/tag.hpp"
#include "sgmatch/pattern/vocabulary.hpp"
