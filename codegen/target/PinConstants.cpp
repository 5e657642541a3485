// Constants in registers across hot loops (docs/codegen.md, "Constants in loops").
//
// An FFMA (or IMAD) with two constant operands has room for one immediate: ptxas puts the other
// in a register with a MOV. Inside a loop it re-issues that MOV every iteration rather than
// keeping the register live across the loop (it treats an immediate as free to rematerialise).
// In an issue-bound loop this is one wasted instruction per such operation: stdlib randn's
// Box-Muller loop issued 12 of its 189 instructions per iteration as MOVs of constants (H100).
// So, for each such operation inside a loop, the constant that needs the register is replaced
// by a value computed once in the entry block that ptxas cannot see as a constant: the
// constant's bits XOR an opaque zero, the launch's tile count (a kernel parameter, never
// negative) shifted right by 63 in inline PTX. It costs one LOP3 per constant per thread, before
// the loops, and a register each while the loops run. The values are exactly the constants, so
// results are the same bits.
#include "codegen/target/PinConstants.h"

#include <map>

#include "llvm/Analysis/LoopInfo.h"
#include "llvm/IR/Constants.h"
#include "llvm/IR/Dominators.h"
#include "llvm/IR/IRBuilder.h"
#include "llvm/IR/InlineAsm.h"
#include "llvm/IR/Instructions.h"
#include "llvm/IR/IntrinsicInst.h"
#include "llvm/IR/Module.h"

namespace tessera::codegen {

namespace {

// At most this many constants are pinned per kernel: each holds a register for the kernel's
// lifetime, and row kernels near their register budget would spill.
constexpr unsigned kMaxPinned = 16;

// The ABI's launch_tiles: the third parameter from the end of a kernel (docs/abi.md, section 4),
// never negative. Found by position, not by name alone: a user parameter of that name would take
// the name and the ABI's would become launch_tiles1.
llvm::Argument* launchTilesArg(llvm::Function& f) {
  if (f.arg_size() < 3) return nullptr;
  llvm::Argument* a = f.getArg(f.arg_size() - 3);
  bool abi = a->getName() == "launch_tiles" && a->getType()->isIntegerTy(64) &&
             f.getArg(f.arg_size() - 2)->getName() == "workspace_base" &&
             f.getArg(f.arg_size() - 1)->getName() == "workspace_group_bytes";
  return abi ? a : nullptr;
}

bool isConst(llvm::Value* v) { return llvm::isa<llvm::ConstantFP>(v) || llvm::isa<llvm::ConstantInt>(v); }

// The operand of `inst` that ptxas must put in a register, if any: for fma(a, b, c), a constant
// multiplicand when the addend is a constant too; for (x * C1) + C2 and (x * C1) | C2 (one IMAD),
// C1 of the multiplication.
struct Site {
  llvm::Use* use;  // the constant operand (LLVM IR: the Tile IR was lowered already)
};

std::optional<Site> pinSite(llvm::Instruction& inst) {
  if (auto* call = llvm::dyn_cast<llvm::IntrinsicInst>(&inst)) {
    if (call->getIntrinsicID() != llvm::Intrinsic::fma || !call->getType()->isFloatTy()) return std::nullopt;
    if (!isConst(call->getArgOperand(2))) return std::nullopt;
    for (unsigned i = 0; i < 2; ++i)
      if (isConst(call->getArgOperand(i)) && !isConst(call->getArgOperand(1 - i)))
        return Site{&call->getArgOperandUse(i)};
    return std::nullopt;
  }
  if ((inst.getOpcode() == llvm::Instruction::Add || inst.getOpcode() == llvm::Instruction::Or) &&
      inst.getType()->isIntegerTy(32) && llvm::isa<llvm::ConstantInt>(inst.getOperand(1))) {
    auto* mul = llvm::dyn_cast<llvm::BinaryOperator>(inst.getOperand(0));
    if (mul && mul->getOpcode() == llvm::Instruction::Mul && mul->hasOneUse() &&
        llvm::isa<llvm::ConstantInt>(mul->getOperand(1)) && !isConst(mul->getOperand(0)))
      return Site{&mul->getOperandUse(1)};
  }
  return std::nullopt;
}

bool pinFunction(llvm::Function& f) {
  llvm::Argument* tiles = f.isDeclaration() ? nullptr : launchTilesArg(f);
  if (!tiles) return false;
  llvm::DominatorTree dt(f);
  llvm::LoopInfo li(dt);
  std::vector<Site> sites;
  for (llvm::BasicBlock& bb : f) {
    if (!li.getLoopFor(&bb)) continue;
    for (llvm::Instruction& inst : bb)
      if (auto s = pinSite(inst)) sites.push_back(*s);
  }
  if (sites.empty()) return false;
  llvm::IRBuilder<> b(&*f.getEntryBlock().getFirstInsertionPt());
  auto* shr = llvm::InlineAsm::get(llvm::FunctionType::get(b.getInt64Ty(), {b.getInt64Ty()}, false),
                                   "shr.s64 $0, $1, 63;", "=l,l", /*hasSideEffects=*/false);
  llvm::Value* zero = b.CreateTrunc(b.CreateCall(shr, {tiles}, "opaque.zero"), b.getInt32Ty());
  std::map<std::pair<llvm::Type*, uint64_t>, llvm::Value*> pinned;
  for (const Site& s : sites) {
    llvm::Value* c = s.use->get();
    llvm::Type* t = c->getType();
    uint64_t bits = t->isFloatTy() ? llvm::cast<llvm::ConstantFP>(c)->getValueAPF().bitcastToAPInt().getZExtValue()
                                   : llvm::cast<llvm::ConstantInt>(c)->getZExtValue();
    auto key = std::make_pair(t, bits);
    auto it = pinned.find(key);
    if (it == pinned.end()) {
      if (pinned.size() >= kMaxPinned) continue;
      llvm::Value* v = b.CreateXor(b.getInt32(static_cast<uint32_t>(bits)), zero, "pinned");
      if (t->isFloatTy()) v = b.CreateBitCast(v, t);
      it = pinned.emplace(key, v).first;
    }
    s.use->set(it->second);
  }
  return true;
}

}  // namespace

bool pinLoopConstants(llvm::Module& module) {
  bool changed = false;
  for (llvm::Function& f : module) changed |= pinFunction(f);
  return changed;
}

}  // namespace tessera::codegen
