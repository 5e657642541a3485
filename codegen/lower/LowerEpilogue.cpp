// Elementwise IR ops lowered one element at a time outside a kernel's own lowering: the
// epilogues that the sm_90a forms apply to accumulator registers (codegen/hopper/HopperGemm.cpp). The
// ops go through the same hooks (ir/Ops.def's Lower column) as every tile element of the portable
// form, so an epilogue computes what the program says with the same code: activations, policies
// of conversions, integer semantics.
#include "codegen/lower/Lowering.h"

namespace tessera::codegen::detail {

bool Lowering::lowerElementwiseAt(llvm::IRBuilder<>& at, const KernelInterface& k,
                                  const std::vector<ir::Operation*>& ops,
                                  std::unordered_map<const ir::Value*, llvm::Value*>& env) {
  if (!hooks_) hooks_ = makeGpuHooks(shapeOf(k));
  fn_ = at.GetInsertBlock()->getParent();
  b_.SetInsertPoint(at.GetInsertBlock(), at.GetInsertPoint());
  vals_ = env;
  perElement_ = true;
  bool ok = true;
  for (ir::Operation* op : ops) {
    if (op->id == ir::OpId::TileBroadcast) {
      set(op->result(), get(op->operand(0)));
      continue;
    }
    if (!(ok = lowerThroughTable(*op))) break;
  }
  perElement_ = false;
  if (ok)
    for (ir::Operation* op : ops) env[op->result()] = get(op->result());
  at.SetInsertPoint(b_.GetInsertBlock(), b_.GetInsertPoint());
  return ok;
}

}  // namespace tessera::codegen::detail
