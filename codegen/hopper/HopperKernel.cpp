#include "codegen/hopper/HopperKernel.h"

#include "codegen/lower/Lowering.h"

namespace tessera::codegen {

bool forEachKernel(ir::Module& m, size_t count, const std::function<bool(ir::Operation*, size_t)>& visit) {
  size_t i = 0;
  for (ir::Operation* f : m.funcs()) {
    if (!f->hasAttr(ir::AttrId::Kernel)) continue;
    if (i >= count) break;
    if (!visit(f, i++)) return false;
  }
  return true;
}

void HopperKernelBuilder::forLoop(llvm::Value* start, llvm::Value* end, llvm::Value* step, const char* name,
                                  const std::function<void(llvm::Value*)>& body, bool rolled) {
  llvm::BasicBlock* pre = b_.GetInsertBlock();
  auto* head = block(name);
  auto* bodyBB = block("loop.body");
  auto* exit = block("loop.exit");
  b_.CreateBr(head);
  b_.SetInsertPoint(head);
  llvm::PHINode* i = b_.CreatePHI(b_.getInt32Ty(), 2, "i");
  i->addIncoming(start, pre);
  b_.CreateCondBr(b_.CreateICmpSLT(i, end), bodyBB, exit);
  b_.SetInsertPoint(bodyBB);
  body(i);
  i->addIncoming(b_.CreateAdd(i, step), b_.GetInsertBlock());
  llvm::BranchInst* latch = b_.CreateBr(head);
  if (rolled) {
    llvm::MDNode* off = llvm::MDNode::get(c_, {llvm::MDString::get(c_, "llvm.loop.unroll.disable")});
    llvm::MDNode* loop = llvm::MDNode::getDistinct(c_, {nullptr, off});
    loop->replaceOperandWith(0, loop);
    latch->setMetadata(llvm::LLVMContext::MD_loop, loop);
  }
  b_.SetInsertPoint(exit);
}

void HopperKernelBuilder::ifThen(llvm::Value* cond, const std::function<void()>& body) {
  auto* then = block("then");
  auto* join = block("join");
  b_.CreateCondBr(cond, then, join);
  b_.SetInsertPoint(then);
  body();
  b_.CreateBr(join);
  b_.SetInsertPoint(join);
}

llvm::Value* HopperKernelBuilder::tensorField(unsigned param, unsigned field, unsigned index) {
  auto* kt = detail::kernelTensorType(c_);
  llvm::Value* p = field == 0 ? b_.CreateStructGEP(kt, fn_->getArg(param), 0)
                              : b_.CreateGEP(kt, fn_->getArg(param), {i32(0), i32(field), i32(index)});
  return b_.CreateLoad(field == 0 ? static_cast<llvm::Type*>(b_.getPtrTy()) : b_.getInt64Ty(), p);
}

// The scalar parameter types of the portable entry (Lowering::scalarType), so that both entries
// take the same argument list.
llvm::Type* HopperKernelBuilder::paramType(ir::Type t) {
  using S = ir::ScalarKind;
  switch (ir::baseScalar(t)) {
    case S::I1: return b_.getInt1Ty();
    case S::I4:
    case S::I8:
    case S::U8:
    case S::F8E4M3:
    case S::F8E5M2: return b_.getInt8Ty();
    case S::I16:
    case S::U16: return b_.getInt16Ty();
    case S::I32:
    case S::U32: return b_.getInt32Ty();
    case S::F16: return b_.getHalfTy();
    case S::BF16: return b_.getBFloatTy();
    case S::F32: return b_.getFloatTy();
    case S::F64: return b_.getDoubleTy();
    default: return b_.getInt64Ty();
  }
}

void HopperKernelBuilder::declare(const std::string& name, unsigned maps, unsigned threads) {
  auto* kt = detail::kernelTensorType(c_);
  auto* mapTy = llvm::ArrayType::get(b_.getInt8Ty(), 128);  // CUtensorMap
  std::vector<llvm::Type*> params;
  ir::Block& body = func_.body();
  numParams_ = body.numArgs();
  for (auto& arg : body.args)
    params.push_back(arg->type->kind == ir::TypeKind::Tensor ? static_cast<llvm::Type*>(b_.getPtrTy())
                                                             : paramType(arg->type));
  params.push_back(b_.getInt64Ty());  // launch_tiles (unused: the forms walk their work themselves)
  params.push_back(b_.getPtrTy());    // workspace (unused)
  params.push_back(b_.getInt64Ty());  // workspace_group_bytes (unused)
  for (unsigned m = 0; m < maps; ++m) params.push_back(b_.getPtrTy());
  fn_ = llvm::Function::Create(llvm::FunctionType::get(b_.getVoidTy(), params, false),
                               llvm::GlobalValue::ExternalLinkage, name, out_);
  fn_->setCallingConv(llvm::CallingConv::PTX_Kernel);
  for (unsigned i = 0; i < numParams_; ++i)
    if (body.arg(i)->type->kind == ir::TypeKind::Tensor) {
      fn_->addParamAttr(i, llvm::Attribute::getWithByValType(c_, kt));
      fn_->addParamAttr(i, llvm::Attribute::getWithAlignment(c_, llvm::Align(8)));
    }
  for (unsigned i = numParams_ + 3; i < numParams_ + 3 + maps; ++i) {
    fn_->addParamAttr(i, llvm::Attribute::getWithByValType(c_, mapTy));
    fn_->addParamAttr(i, llvm::Attribute::getWithAlignment(c_, llvm::Align(64)));
  }
  auto* md = out_.getOrInsertNamedMetadata("nvvm.annotations");
  auto annotate = [&](const char* key, llvm::Metadata* v) {
    md->addOperand(llvm::MDNode::get(c_, {llvm::ValueAsMetadata::get(fn_), llvm::MDString::get(c_, key), v}));
  };
  auto num = [&](unsigned v) { return llvm::ValueAsMetadata::get(b_.getInt32(v)); };
  annotate("kernel", num(1));
  // A register cap at entry (threads per CTA, 1 CTA per SM) is what setmaxnreg redistributes.
  annotate("maxntidx", num(threads));
  annotate("minctasm", num(1));
  // The tensor maps stay in the parameter space: TMA reads them through their generic address
  // (grid_constant counts parameters from 1).
  std::vector<llvm::Metadata*> constants;
  for (unsigned m = 0; m < maps; ++m) constants.push_back(num(numParams_ + 4 + m));
  annotate("grid_constant", llvm::MDNode::get(c_, constants));
}

void HopperKernelBuilder::roles(llvm::Value* wg, const std::function<void()>& producer,
                                const std::function<void(llvm::Value*)>& consumer) {
  auto* prod = block("producer");
  auto* cons = block("consumer");
  auto* exit = block("exit");
  b_.CreateCondBr(b_.CreateICmpEQ(wg, i32(0)), prod, cons);
  b_.SetInsertPoint(prod);
  producer();
  b_.CreateBr(exit);
  b_.SetInsertPoint(cons);
  consumer(wg);
  b_.CreateBr(exit);
  b_.SetInsertPoint(exit);
  b_.CreateRetVoid();
}

llvm::Value* HopperKernelBuilder::tensorMap(unsigned m) {
  return b_.CreatePtrToInt(fn_->getArg(numParams_ + 3 + m), b_.getInt64Ty());
}

llvm::Value* HopperKernelBuilder::sharedBase() {
  auto* smemTy = llvm::ArrayType::get(b_.getInt8Ty(), 0);
  auto* gv = out_.getNamedGlobal("__tessera_hopper_smem");
  if (!gv) {
    gv = new llvm::GlobalVariable(out_, smemTy, false, llvm::GlobalValue::ExternalLinkage, nullptr,
                                  "__tessera_hopper_smem", nullptr, llvm::GlobalValue::NotThreadLocal, 3);
    gv->setAlignment(llvm::Align(16));
  }
  llvm::Value* base = b_.CreateTrunc(b_.CreatePtrToInt(gv, b_.getInt64Ty()), b_.getInt32Ty());
  return b_.CreateAnd(b_.CreateAdd(base, i32(1023)), i32(~1023u));
}

}  // namespace tessera::codegen
