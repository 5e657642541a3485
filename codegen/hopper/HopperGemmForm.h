// The sm_90a GEMM schedule's description of one kernel entry (codegen/hopper/HopperGemm.cpp emits it;
// codegen/hopper/HopperGemmPlan.cpp builds it from a tile.mma loop kernel or from a step of a
// whole-tensor program's products): the operands, the output, and what the epilogue computes per
// accumulator element.
#pragma once

#include <string>
#include <vector>

#include "codegen/lower/KernelInterface.h"
#include "ir/IR.h"
#include "ir/passes/ProductPlan.h"

namespace llvm {
class Module;
}

namespace tessera::codegen {

namespace detail {
class Lowering;
}

// The schedule's fixed sizes. A k block is 128 bytes of K (one swizzle row per tile row): BK = 64
// for 16-bit operands, 128 for fp8; four wgmmas of 32 bytes of K (k16 / k32) each. An output tile
// is kBM rows by kBN columns of accumulators, split among the products of the step (one product:
// 128 x 256; two sharing A: 128 x 128 of each).
namespace gemm {
constexpr unsigned kBM = 128, kBN = 256, kKBytes = 128, kStages = 4, kThreads = 384, kGroupRows = 8;
constexpr unsigned kABytes = kBM * kKBytes, kBBytes = kBN * kKBytes, kStageBytes = kABytes + kBBytes;
// B is loaded as boxes of 64 columns (128 bytes) x BK rows when MN-major, 64 rows of BK (128
// bytes) when K-major; either way box j fills bytes [8 KiB j, 8 KiB (j + 1)) of the slot.
constexpr unsigned kBoxN = 64;
// Epilogue staging: each of the 8 consumer warps passes its 16 x 32 columns at a time through a
// private buffer, padded so that the fragment writes hit distinct banks.
constexpr unsigned kStageCols = 32, kConsumerWarps = 8;
constexpr unsigned stagingRowBytes(unsigned elemBytes) { return kStageCols * elemBytes + 8 * elemBytes; }
constexpr unsigned kBarrierBytes = 128;  // 2 * kStages barriers, rounded up
constexpr unsigned kStagingBytes = kConsumerWarps * 16 * stagingRowBytes(4);
constexpr unsigned kSharedBytes = kStages * kStageBytes + kBarrierBytes + kStagingBytes + 1024;  // + alignment slack
constexpr unsigned kProducerRegs = 40, kConsumerRegs = 232;
}  // namespace gemm

// A matrix operand read through a tensor map: `param` is the map's (a tensor parameter, or
// num_params + j for scratch matrix j of a variant chain), K contiguous (`kMajor`) or N
// contiguous (B only).
struct GemmOperand {
  int param = -1;
  bool kMajor = true;
};

struct GemmForm {
  GemmOperand a;
  std::vector<GemmOperand> b;  // one product, or two sharing A (SwiGLU's X W1 and X W3)
  int c = -1;                  // the output parameter, or
  int cScratch = -1;           // the scratch matrix written through the workspace argument
  ir::ScalarKind in = ir::ScalarKind::BF16;
  ir::Type outElem = nullptr;  // what the output holds
  ir::ExtentRef m, n, k;       // M and N of the output, K of the products
  // tile.mma loops: @scale of A times @scale of B over C's (stored values are value / scale),
  // applied once in the epilogue before the rounding to C's type.
  double scale = 1;
  // Steps of a whole-tensor program: the IR ops the epilogue applies to each accumulator element
  // through their code generation hooks (null: scale and rounding only).
  const ir::ProductStep* step = nullptr;
  std::string entry;  // the entry's name
  bool fp8() const { return in == ir::ScalarKind::F8E4M3 || in == ir::ScalarKind::F8E5M2; }
  unsigned bk() const { return gemm::kKBytes / (fp8() ? 1 : 2); }
  unsigned bn() const { return gemm::kBN / static_cast<unsigned>(b.size()); }  // columns of each product
};

// The variant (entry, threads, shared memory, tensor maps) of `form` on clusters of `cluster`.
GpuVariant gemmVariant(const GemmForm& form, unsigned cluster);

// Emits `form`'s entry into `out`; `lowering` lowers its epilogue's IR ops (steps only).
bool emitGemmForm(llvm::Module& out, ir::Operation& func, const KernelInterface& kernel, const GemmForm& form,
                  unsigned cluster, detail::Lowering* lowering, std::string& error);

}  // namespace tessera::codegen
