// The debugging ops of Tile IR (the `Debug` hook of ir/Ops.def). tile.clock reads the device's
// cycle counter (DeviceHooks::clock). tile.print becomes one printf-style call per tile that
// reaches it (DeviceHooks::print: vprintf on the GPU, printf on the CPU executor), its values
// promoted as C varargs are: integers narrower than 32 bits to int, floats to double, i1 to the
// text True/False. Floats print with the significant digits that give them back (%.17g for f64,
// %.9g for f32, %.5g for f16, %.4g for bf16).
#include "codegen/lower/Lowering.h"
#include "ir/PrintFormat.h"

namespace tessera::codegen::detail {

namespace {

std::string escapePercent(const std::string& s) {
  std::string out;
  for (char ch : s) {
    out += ch;
    if (ch == '%') out += '%';
  }
  return out;
}

}  // namespace

bool Lowering::lowerPrint(ir::Operation& op) {
  std::vector<std::string> pieces;
  if (!ir::splitPrintFormat(op.strAttr(ir::AttrId::Format), pieces) || pieces.size() != op.numOperands() + 1)
    return fail(op, "a tile.print whose format does not match its operands");
  std::string format = escapePercent(pieces[0]);
  std::vector<llvm::Value*> args;
  for (unsigned i = 0; i < op.numOperands(); ++i) {
    ir::Type t = op.operand(i)->type;
    llvm::Value* v = get(op.operand(i));
    ir::ScalarKind k = ir::baseScalar(t);
    unsigned bits = ir::scalarBits(k);
    const char* conv = nullptr;
    switch (ir::scalarClass(k)) {
      case ir::ScalarClass::Bool:
        args.push_back(b_.CreateSelect(v, hooks_->cString(b_, "True"), hooks_->cString(b_, "False")));
        conv = "%s";
        break;
      case ir::ScalarClass::Int:
      case ir::ScalarClass::Index:
        args.push_back(bits < 32 ? b_.CreateSExt(v, b_.getInt32Ty()) : v);
        conv = bits <= 32 ? "%d" : "%lld";
        break;
      case ir::ScalarClass::UInt:
        args.push_back(bits < 32 ? b_.CreateZExt(v, b_.getInt32Ty()) : v);
        conv = bits <= 32 ? "%u" : "%llu";
        break;
      case ir::ScalarClass::Float:
        if (!v->getType()->isFloatingPointTy())
          return fail(op, "printing a value of type " + ir::printType(t) + " is not supported by code generation");
        args.push_back(v->getType()->isDoubleTy() ? v : b_.CreateFPExt(v, b_.getDoubleTy()));
        conv = v->getType()->isDoubleTy()  ? "%.17g"
               : v->getType()->isFloatTy() ? "%.9g"
               : v->getType()->isHalfTy()  ? "%.5g"
                                           : "%.4g";
        break;
    }
    if (!conv || !args.back() || args.back()->getType()->isVectorTy())
      return fail(op, "printing a value of type " + ir::printType(t) + " is not supported by code generation");
    format += conv + escapePercent(pieces[i + 1]);
  }
  hooks_->print(b_, hooks_->cString(b_, format), args);
  return true;
}

bool Lowering::lowerDebug(ir::Operation& op) {
  switch (op.id) {
    case ir::OpId::TileClock: set(op.result(), hooks_->clock(b_)); return true;
    case ir::OpId::TilePrint: return lowerPrint(op);
    default: break;
  }
  return fail(op, "unexpected op");
}

}  // namespace tessera::codegen::detail
