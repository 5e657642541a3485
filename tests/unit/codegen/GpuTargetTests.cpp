// The NVPTX end of code generation on a hand-built LLVM module: PTX from LLVM's back end for
// each architecture, cubins from ptxas, and a fatbin holding them.
#include <cstring>
#include <doctest/doctest.h>

#include "codegen/target/CudaToolkit.h"
#include "codegen/target/GpuTarget.h"
#include "llvm/IR/IRBuilder.h"
#include "llvm/IR/Intrinsics.h"
#include "llvm/IR/IntrinsicsNVPTX.h"
#include "llvm/IR/LLVMContext.h"
#include "llvm/IR/Module.h"

using namespace tessera::codegen;

namespace {
// saxpy(float* x, float* y, float a, int n): y[i] = a*x[i] + y[i] for i = ctaid*ntid + tid < n.
std::unique_ptr<llvm::Module> buildSaxpy(llvm::LLVMContext& ctx) {
  auto m = std::make_unique<llvm::Module>("saxpy", ctx);
  llvm::IRBuilder<> b(ctx);
  auto* ptrTy = llvm::PointerType::get(ctx, 1);
  auto* fnTy = llvm::FunctionType::get(b.getVoidTy(), {ptrTy, ptrTy, b.getFloatTy(), b.getInt32Ty()}, false);
  auto* fn = llvm::Function::Create(fnTy, llvm::Function::ExternalLinkage, "saxpy", *m);
  fn->setCallingConv(llvm::CallingConv::PTX_Kernel);
  auto* entry = llvm::BasicBlock::Create(ctx, "entry", fn);
  auto* body = llvm::BasicBlock::Create(ctx, "body", fn);
  auto* exit = llvm::BasicBlock::Create(ctx, "exit", fn);
  b.SetInsertPoint(entry);
  auto* tid = b.CreateIntrinsic(llvm::Intrinsic::nvvm_read_ptx_sreg_tid_x, {}, {});
  auto* ctaid = b.CreateIntrinsic(llvm::Intrinsic::nvvm_read_ptx_sreg_ctaid_x, {}, {});
  auto* ntid = b.CreateIntrinsic(llvm::Intrinsic::nvvm_read_ptx_sreg_ntid_x, {}, {});
  auto* i = b.CreateAdd(b.CreateMul(ctaid, ntid), tid);
  b.CreateCondBr(b.CreateICmpSLT(i, fn->getArg(3)), body, exit);
  b.SetInsertPoint(body);
  auto* idx = b.CreateSExt(i, b.getInt64Ty());
  auto* px = b.CreateGEP(b.getFloatTy(), fn->getArg(0), idx);
  auto* py = b.CreateGEP(b.getFloatTy(), fn->getArg(1), idx);
  auto* r =
      b.CreateFAdd(b.CreateFMul(fn->getArg(2), b.CreateLoad(b.getFloatTy(), px)), b.CreateLoad(b.getFloatTy(), py));
  b.CreateStore(r, py);
  b.CreateBr(exit);
  b.SetInsertPoint(exit);
  b.CreateRetVoid();
  // Mark it a kernel the way the NVPTX back end reads it.
  auto* md = m->getOrInsertNamedMetadata("nvvm.annotations");
  md->addOperand(llvm::MDNode::get(ctx, {llvm::ValueAsMetadata::get(fn), llvm::MDString::get(ctx, "kernel"),
                                         llvm::ValueAsMetadata::get(b.getInt32(1))}));
  return m;
}
}  // namespace

TEST_CASE("GPU architecture names") {
  std::string error;
  auto a = parseGpuArch("sm_90a", error);
  REQUIRE(a);
  CHECK(a->sm == 90);
  CHECK(a->archSpecific);
  CHECK(a->ptxVersion >= 80);
  auto b = parseGpuArch("sm_80", error);
  REQUIRE(b);
  CHECK_FALSE(b->archSpecific);
  CHECK_FALSE(parseGpuArch("sm_80a", error));
  CHECK(error.find("unsupported GPU architecture 'sm_80a'") != std::string::npos);
  CHECK_FALSE(parseGpuArch("compute_90", error));
  CHECK_FALSE(parseGpuArch("sm_", error));
  CHECK_FALSE(parseGpuArch("sm_100", error));

  std::vector<GpuArch> archs;
  REQUIRE(parseGpuArchList("sm_80,sm_90a,sm_80", archs, error));
  REQUIRE(archs.size() == 2);
  CHECK(archs[0].name == "sm_80");
  CHECK(archs[1].name == "sm_90a");
  archs.clear();
  CHECK_FALSE(parseGpuArchList("sm_80,,sm_90a", archs, error));
  CHECK(error.find("empty entry") != std::string::npos);
}

TEST_CASE("PTX for sm_80 and sm_90a from the NVPTX back end") {
  for (const char* name : {"sm_80", "sm_90a"}) {
    llvm::LLVMContext ctx;
    auto m = buildSaxpy(ctx);
    std::string error;
    auto arch = parseGpuArch(name, error);
    REQUIRE(arch);
    auto ptx = emitPTX(*m, *arch, 3, error);
    REQUIRE_MESSAGE(ptx, error);
    CHECK(ptx->find(std::string(".target ") + name) != std::string::npos);
    CHECK(ptx->find(".entry saxpy") != std::string::npos);
    // No implicit contraction: a*x + y stays a multiply and an add, as on the CPU target.
    CHECK(ptx->find("mul.rn.f32") != std::string::npos);
    CHECK(ptx->find("add.rn.f32") != std::string::npos);
    CHECK(ptx->find("fma.rn.f32") == std::string::npos);
    CHECK(ptx->find("mov.u32") != std::string::npos);
  }
}

TEST_CASE("cubins from ptxas and a fatbin holding them") {
  CudaToolkit cuda = CudaToolkit::locate();
#if TESSERA_EXPECT_CUDA
  REQUIRE_MESSAGE(cuda.found(), cuda.missingReason());
#else
  if (!cuda.found()) {
    MESSAGE("skipped: " << cuda.missingReason());
    return;
  }
#endif
  std::vector<CudaToolkit::Image> images;
  std::string lastPtx;
  GpuArch last;
  for (const char* name : {"sm_80", "sm_90a"}) {
    llvm::LLVMContext ctx;
    auto m = buildSaxpy(ctx);
    std::string error;
    auto arch = parseGpuArch(name, error);
    auto ptx = emitPTX(*m, *arch, 3, error);
    REQUIRE(ptx);
    std::string cubin;
    REQUIRE_MESSAGE(cuda.assemble(*ptx, *arch, 3, false, cubin, error), error);
    REQUIRE(cubin.size() > 4);
    CHECK(std::memcmp(cubin.data(),
                      "\x7f"
                      "ELF",
                      4) == 0);
    images.push_back({*arch, cubin});
    lastPtx = *ptx;
    last = *arch;
  }
  std::string fatbin, error;
  REQUIRE_MESSAGE(cuda.fatbinary(images, lastPtx, last, fatbin, error), error);
  REQUIRE(fatbin.size() > 16);
  uint32_t magic;
  std::memcpy(&magic, fatbin.data(), 4);
  CHECK(magic == 0xBA55ED50u);

  // Bad PTX gives an error carrying ptxas's own message.
  std::string cubin;
  CHECK_FALSE(cuda.assemble(".version 8.0\n.target sm_90a\nnot ptx", images[1].arch, 3, false, cubin, error));
  CHECK(error.find("ptxas failed") != std::string::npos);
}
