// The activation functions of Tile IR (math.gelu, math.sigmoid, math.silu; math.relu is one
// intrinsic in lowerMath): one hook each, named by the op's row of ir/Ops.def. They compute one
// element, in f32 for 16-bit floats with one rounding back, as lowerMath does.
#include "codegen/lower/Lowering.h"

namespace tessera::codegen::detail {

bool Lowering::lowerUnaryFloat(ir::Operation& op, const std::function<llvm::Value*(llvm::Value*)>& f) {
  llvm::Value* a = get(op.operand(0));
  llvm::Type* lt = a->getType();
  if (!lt->isFloatingPointTy())
    return fail(op, "'" + std::string(op.name()) + "' of " + ir::printType(typeOf(op.operand(0))) +
                        " is not supported by code generation");
  bool widen = lt->isHalfTy() || lt->isBFloatTy();
  llvm::Value* r = f(widen ? b_.CreateFPExt(a, b_.getFloatTy()) : a);
  set(op.result(), widen ? b_.CreateFPTrunc(r, lt) : r);
  return true;
}

llvm::Value* Lowering::callMath(const char* name, llvm::Value* x) {
  return b_.CreateCall(hooks_->mathFunction(out_, name, x->getType(), 1), {x});
}

// 1 / (1 + exp(-x))
bool Lowering::lowerSigmoid(ir::Operation& op) {
  return lowerUnaryFloat(op, [&](llvm::Value* x) {
    llvm::Value* one = llvm::ConstantFP::get(x->getType(), 1.0);
    return b_.CreateFDiv(one, b_.CreateFAdd(one, callMath("exp", b_.CreateFNeg(x))));
  });
}

// x / (1 + exp(-x)), which is x * sigmoid(x) with one rounding fewer (PyTorch's silu).
bool Lowering::lowerSilu(ir::Operation& op) {
  return lowerUnaryFloat(op, [&](llvm::Value* x) {
    llvm::Value* one = llvm::ConstantFP::get(x->getType(), 1.0);
    return b_.CreateFDiv(x, b_.CreateFAdd(one, callMath("exp", b_.CreateFNeg(x))));
  });
}

// 0.5 x (1 + tanh(sqrt(2/pi) (x + 0.044715 x^3))), the tanh approximation (PyTorch's
// approximate="tanh").
bool Lowering::lowerGelu(ir::Operation& op) {
  return lowerUnaryFloat(op, [&](llvm::Value* x) {
    auto c = [&](double v) { return llvm::ConstantFP::get(x->getType(), v); };
    llvm::Value* x3 = b_.CreateFMul(b_.CreateFMul(x, x), x);
    llvm::Value* inner = b_.CreateFAdd(x, b_.CreateFMul(c(0.044715), x3));
    llvm::Value* th = callMath("tanh", b_.CreateFMul(c(0.7978845608028654), inner));
    return b_.CreateFMul(b_.CreateFMul(c(0.5), x), b_.CreateFAdd(c(1.0), th));
  });
}

}  // namespace tessera::codegen::detail
