// What the sm_90a forms (codegen/hopper/HopperForms.h) share when they build an entry with LLVM's
// IRBuilder: the entry's declaration (the portable entry's parameters, then one CUtensorMap grid
// constant per tensor map), the 1 KiB-aligned dynamic shared window, structured loops and
// conditionals, and reads of tensor descriptors.
#pragma once

#include <functional>
#include <string>

#include "ir/IR.h"
#include "llvm/IR/IRBuilder.h"
#include "llvm/IR/Module.h"

namespace tessera::codegen {

// Visits the kernels of `m` in module order with their index in lowerKernels' list (the first
// `count`), until `visit` returns false; returns whether every visit returned true. Each form
// plans and emits its variants kernel by kernel through it.
bool forEachKernel(ir::Module& m, size_t count, const std::function<bool(ir::Operation*, size_t)>& visit);

class HopperKernelBuilder {
 public:
  HopperKernelBuilder(llvm::Module& out, ir::Operation& func) : out_(out), c_(out.getContext()), b_(c_), func_(func) {}

 protected:
  llvm::BasicBlock* block(const char* name) { return llvm::BasicBlock::Create(c_, name, fn_); }
  llvm::Value* i32(int64_t v) { return b_.getInt32(static_cast<uint32_t>(v)); }
  // `rolled`: keep the loop a loop (code size and compile time; cold paths).
  void forLoop(llvm::Value* start, llvm::Value* end, llvm::Value* step, const char* name,
               const std::function<void(llvm::Value*)>& body, bool rolled = false);
  void ifThen(llvm::Value* cond, const std::function<void()>& body);
  // Field `field` (0 data, 1 shape, 2 strides) [index] of tensor parameter `param`.
  llvm::Value* tensorField(unsigned param, unsigned field, unsigned index);
  // The LLVM type of a scalar parameter or element as the portable entry has it.
  llvm::Type* paramType(ir::Type t);
  // Declares entry `name` taking the IR function's parameters, launch_tiles, the workspace and
  // its size per group (unused by these forms), then `maps` tensor maps; annotated as a kernel
  // of `threads` threads, one CTA per SM (the register cap setmaxnreg redistributes).
  void declare(const std::string& name, unsigned maps, unsigned threads);
  // Warpgroup `wg` 0 runs `producer`, the others `consumer(wg)`, each role one branch of a single
  // if/else (what setmaxnreg needs); then the entry returns.
  void roles(llvm::Value* wg, const std::function<void()>& producer, const std::function<void(llvm::Value*)>& consumer);
  // Tensor map m's generic address (i64), for cp.async.bulk.tensor.
  llvm::Value* tensorMap(unsigned m);
  // The dynamic shared window's start, rounded up to 1 KiB (the 128-byte swizzle's period), as a
  // 32-bit shared address.
  llvm::Value* sharedBase();
  llvm::Value* toShared(llvm::Value* addr) {
    return b_.CreateIntToPtr(b_.CreateZExt(addr, b_.getInt64Ty()), llvm::PointerType::get(c_, 3));
  }

  llvm::Module& out_;
  llvm::LLVMContext& c_;
  llvm::IRBuilder<> b_;
  ir::Operation& func_;
  llvm::Function* fn_ = nullptr;
  unsigned numParams_ = 0;  // IR parameters (the tensor maps follow the trailing three)
};

}  // namespace tessera::codegen
