// What the host side needs to know of a kernel: its parameters with dtypes, ranks and symbolic
// extents, its symbols, group shape and shared memory. Lowering fills it from sema's types;
// the host module turns it into the runtime's registration data (runtime/include/tessera/
// runtime.h) and launch stubs, and the header writer into C and C++ declarations.
#pragma once

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "basic/Remarks.h"
#include "basic/SourceManager.h"

namespace tessera::codegen {

// A postfix program over int64 (tessera_expr_op): `K/tp` is {Symbol K, Symbol tp, Div}.
struct ExtentOp {
  enum Op : int32_t { Const = 0, Symbol = 1, Add = 2, Sub = 3, Mul = 4, Div = 5, CeilDiv = 6, Mod = 7 } op;
  int32_t symbol = 0;
  int64_t value = 0;
};

struct Extent {
  enum Kind : int32_t { Any = 0, Const = 1, Symbol = 2, Expr = 3 } kind = Any;
  int32_t symbol = 0;
  int64_t value = 0;
  std::vector<ExtentOp> expr;
};

struct KernelParam {
  std::string name;
  bool isTensor = true;
  int32_t dtype = 0;  // tessera_dtype
  bool isMut = false;
  std::vector<Extent> extents;  // tensors: one per dimension
  bool writeOnly = false;       // a mut tensor the kernel never reads (profiling counts its bytes once)
};

// A slot of the per-group workspace: one tile value kept in memory (tessera_workspace_slot).
struct WorkspaceSlot {
  uint32_t elemBytes = 0;
  std::vector<Extent> extents;
};

// Compile-time only (--remarks): the op whose tile-valued result a slot holds, where it came from.
struct WorkspaceValue {
  std::string op;    // "tile.dot"
  std::string type;  // "!tile<f32, [128, 64]>"
  SourceLoc loc;
};

// Compile-time only: a remark code generation made at one of its decisions (a row of
// basic/RemarkDiagnostics.def), emitted by the driver through the diagnostics engine.
struct KernelRemark {
  DiagID id;
  SourceLoc loc;
  std::vector<std::string> args;
};

// A tensor map the runtime encodes at launch for a GPU variant (tessera_tensor_map_desc).
struct TensorMapRequest {
  int32_t param = 0;
  uint32_t box[2] = {0, 0};  // box extents: [0] along the contiguous dimension, [1] the other
  uint32_t swizzle = 128;    // bytes
  uint32_t innerExtent = 0;  // the innermost extent the view must have (0: any; < 2^16)
};

// Another GPU entry of the same kernel for newer devices (tessera_gpu_variant): the sm_90a
// wgmma + TMA forms of a tile.mma loop (codegen/hopper/HopperGemm.cpp) and of attention
// (codegen/hopper/HopperAttention.cpp).
struct GpuVariant {
  std::string entry;
  uint32_t minSm = 90;
  uint32_t threads = 0;
  uint32_t cluster = 1;  // CTAs per cluster (along x)
  uint64_t sharedBytes = 0;
  std::vector<TensorMapRequest> tensorMaps;
};

// What the code of a kernel uses on one GPU architecture (tessera_kernel_resources): read from
// the cubin and ptxas's report, with the occupancy that follows (codegen/target/ResourceUsage.h).
struct GpuResources {
  std::string arch;           // "sm_90a"
  unsigned sm = 0;            // 90
  bool archSpecific = false;  // the 'a' suffix
  uint32_t registers = 0;     // per thread
  uint32_t stackBytes = 0;    // per thread
  uint32_t spillStoreBytes = 0;
  uint32_t spillLoadBytes = 0;
  uint64_t staticSharedBytes = 0;
  bool sharedIncludesReserved = false;  // staticSharedBytes holds the system's reserved KiB (sm_90)
  uint64_t localBytes = 0;
  uint32_t threadsPerGroup = 0;  // the group size occupancy assumes
  uint32_t groupsPerSM = 0;
  uint32_t warpsPerSM = 0;
  uint32_t maxWarpsPerSM = 0;
  std::string limitedBy;                                            // what bounds the occupancy
  uint32_t mma = 0, wgmma = 0, tma = 0, cpAsync = 0, ldmatrix = 0;  // static PTX counts
};

struct KernelInterface {
  std::string name;
  std::vector<KernelParam> params;
  std::vector<std::string> symbols;
  int32_t gridSymbol = -1;  // index of `grid_groups`, or -1
  bool grouped = false;
  uint32_t groupShape[3] = {1, 1, 1};
  uint64_t sharedBytes = 0;
  bool deterministic = true;
  bool cpuSync = false;      // CPU code calls the runtime's barrier / warp services
  bool cpuPerGroup = false;  // CPU entry runs once per group
  std::vector<WorkspaceSlot> workspace;
  std::vector<WorkspaceValue> workspaceValues;  // one per slot, of the target lowered first
  std::vector<KernelRemark> remarks;            // of the target lowered first
  // Default grid: the product of ceil(params[param].shape[axis] / step) over these.
  struct GridBlock {
    int32_t param = 0, axis = 0;
    int64_t step = 1;
  };
  std::vector<GridBlock> gridBlocks;
  bool exactGrid = false;
  bool boundsChecked = false;      // --bounds-check: the code reports out-of-range indices    // group g takes block g
                                   // without striding: an explicit grid must match
  uint32_t gpuTilesPerThread = 1;  // ungrouped kernels: tiles each GPU thread runs (a power of 2)
  // Floating-point operations of one launch, over the symbols (@kernel(flops="2*M*N*K")); empty
  // when unknown.
  std::vector<ExtentOp> flops;
  std::vector<GpuResources> resources;  // per GPU architecture of the fatbin, in --gpu order
  std::vector<GpuVariant> gpuVariants;  // tried before gpuEntry where the device allows
  // A chain (tessera_variant_chain): gpuVariants[0 .. steps) run in order as the launch, with
  // scratch matrices between them: scratch j is params[rowsParam].shape[rowsAxis] x
  // params[colsParam].shape[colsAxis] elements of dtype, the workspace argument of step `step`
  // (which writes it) and the tensor map param num_params + j. steps == 0: the variants are
  // alternatives.
  struct ChainScratch {
    int32_t dtype = 0;
    int32_t rowsParam = 0, rowsAxis = 0, colsParam = 0, colsAxis = 0;
    int32_t step = 0;
  };
  struct VariantChain {
    uint32_t steps = 0;
    std::vector<ChainScratch> scratch;
  } chain;
  // Autotune candidates (irgen/Autotune.cpp): a candidate names the kernel it tunes and is
  // emitted in that kernel's candidate table instead of on its own; the kernel itself is
  // candidate 0. `autotuneConfig` is the candidate's value of every tuned parameter, and
  // `codeHash` a hash of its Tile IR (keys the runtime's tuning cache).
  std::string autotuneOf;
  int64_t autotuneIndex = -1;  // -1: not autotuned
  std::vector<std::pair<std::string, int64_t>> autotuneConfig;
  uint64_t codeHash = 0;
  std::string gpuEntry;  // symbol in the fatbin; empty if no GPU code
  std::string cpuEntry;  // function in the host object; empty if no CPU code
};

// C type of a scalar dtype in the generated header ("float", "int32_t", "uint16_t" for the
// 16-bit floats, which C has no portable type for).
const char* scalarCType(int32_t dtype);
// Canonical dtype name ("f32"), for messages and comments.
const char* dtypeName(int32_t dtype);
// Size in bytes of a scalar argument of `dtype` (sub-byte and 6-bit types round up to 1).
unsigned scalarBytes(int32_t dtype);

}  // namespace tessera::codegen
