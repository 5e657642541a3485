// product-steps: records on each whole-tensor program with products the steps that sm_90a code
// generation compiles (ir/passes/ProductPlan.h): `product_steps = [steps, scratch matrices]`,
// or `product_steps_missed` with the reason the program keeps its portable form
// (-Rpass-missed=tensor-cores). It changes no IR but these attributes; code generation plans
// again from the IR it is given, which is this pass's.
#include "ir/Pass.h"
#include "ir/passes/ProductPlan.h"

namespace tessera::ir {

bool runProductSteps(Module& m, DiagnosticEngine&) {
  for (Operation* f : m.funcs()) {
    if (!f->hasAttr(AttrId::Kernel) || f->regions.empty()) continue;
    f->removeAttr(AttrId::ProductSteps);
    f->removeAttr(AttrId::ProductStepsMissed);
    if (f->hasAttr(AttrId::MmaForm) || f->hasAttr(AttrId::AttentionForm) || f->hasAttr(AttrId::AttentionBwdForm))
      continue;
    std::string why;
    if (auto plan = planProducts(*f, why))
      f->setAttr(AttrId::ProductSteps, Attribute::ints({static_cast<int64_t>(plan->steps.size()),
                                                        static_cast<int64_t>(plan->scratch.size())}));
    else if (!why.empty())
      f->setAttr(AttrId::ProductStepsMissed, Attribute::string(why));
  }
  return true;
}

}  // namespace tessera::ir
