// Uniformity analysis: which values may differ between the tiles of a group (divergent), and
// which group-collective ops (barriers, async copies, tile ops) sit under divergent control
// flow. Sources of divergence are ops with T_Divergent (tile ids, lane ids, shuffles); they
// propagate through data (operands), through loop-carried values, and through control (the
// results of an scf.if with a divergent condition, of a loop with divergent bounds).
#pragma once

#include <unordered_set>
#include <vector>

#include "ir/IR.h"

namespace tessera::ir {

struct UniformityResult {
  std::unordered_set<const Value*> divergent;
  struct Violation {
    Operation* op;       // the collective
    const Value* cause;  // the divergent condition or bound it depends on
  };
  std::vector<Violation> violations;
  bool isDivergent(const Value* v) const { return divergent.count(v) != 0; }
};

UniformityResult analyzeUniformity(Module& m, Operation* func);

}  // namespace tessera::ir
