// How device-level operations become LLVM IR on each target. The GPU reads special registers
// and calls NVVM intrinsics; the CPU executor's code reads its tessera_cpu_ctx and calls the
// runtime's services through ctx->ops (runtime/include/tessera/runtime.h). Everything else in
// a kernel lowers the same way on both.
#pragma once

#include <memory>

#include "llvm/IR/IRBuilder.h"

namespace tessera::codegen {

// What ids mean for the kernel being lowered.
struct KernelShape {
  bool grouped = false;     // declares tile[(...)]: tile.linear_id() is the index in the group
  unsigned groupTiles = 0;  // grouped: tiles per group
};

class DeviceHooks {
 public:
  virtual ~DeviceHooks() = default;
  virtual bool isGpu() const = 0;

  // Called once at the function entry (the builder is positioned there).
  virtual void beginFunction(llvm::IRBuilder<>& b) {}

  virtual llvm::Value* tileLinear(llvm::IRBuilder<>& b) = 0;    // index of the tile in its group
  virtual llvm::Value* globalLinear(llvm::IRBuilder<>& b) = 0;  // launch.thread_id()
  virtual llvm::Value* groupLinear(llvm::IRBuilder<>& b) = 0;   // group_linear_id()
  virtual llvm::Value* groupTiles(llvm::IRBuilder<>& b) = 0;    // group_tile_count()
  virtual llvm::Value* numGroups(llvm::IRBuilder<>& b) = 0;     // grid_groups
  virtual llvm::Value* laneId(llvm::IRBuilder<>& b);            // tileLinear % 32
  // The hardware thread's index in its hardware group (GPU: the linear thread id).
  virtual llvm::Value* threadInGroup(llvm::IRBuilder<>& b) { return tileLinear(b); }
  virtual llvm::Value* sharedBase(llvm::IRBuilder<>& b) = 0;  // the group's shared memory (i8*)
  virtual unsigned sharedAddressSpace() const = 0;

  virtual void barrier(llvm::IRBuilder<>& b) = 0;
  // Barrier over the aligned partition of `size` tiles that holds this tile.
  virtual void partitionSync(llvm::IRBuilder<>& b, unsigned size) = 0;
  // Warp shuffle (mode: 0 idx, 1 up, 2 down, 3 xor) of a 32- or 64-bit value within segments of
  // `width` lanes (a power of two, 1..32), as PTX shfl.sync: a source lane outside the caller's
  // segment (idx, up, down) or after it (xor may reach earlier segments), or one that is not
  // live, yields the caller's own value.
  virtual llvm::Value* shuffle(llvm::IRBuilder<>& b, llvm::Value* v, int mode, llvm::Value* laneOrDelta,
                               unsigned width) = 0;
  // Warp vote over the live lanes of the warp (mode: 0 all, 1 any -> i1; 2 ballot -> i32 mask).
  virtual llvm::Value* vote(llvm::IRBuilder<>& b, int mode, llvm::Value* pred) = 0;
  // tile.clock(): an i64 counter that never decreases on one tile (GPU: %clock64, SM cycles;
  // CPU: ctx->ops->clock, steady-clock nanoseconds).
  virtual llvm::Value* clock(llvm::IRBuilder<>& b) = 0;
  // A NUL-terminated constant string, as a generic pointer.
  virtual llvm::Value* cString(llvm::IRBuilder<>& b, const std::string& text) = 0;
  // printf(format, args...) from this tile; args are promoted already (i32, i64, double, ptr).
  // GPU: vprintf(format, buffer) with the arguments laid out at their natural alignment, as
  // clang lowers printf for NVPTX; CPU: the C library's printf.
  virtual void print(llvm::IRBuilder<>& b, llvm::Value* format, const std::vector<llvm::Value*>& args) = 0;

  // Reports a failed bounds check (docs/abi.md "Bounds checking"): `site` says what was indexed
  // ("tensor 'y', dimension 0"), `index` and `extent` are i64. The caller skips the access and
  // goes on; the launch fails with TESSERA_ERROR_KERNEL_FAULT once the kernel is done.
  virtual void boundsFault(llvm::IRBuilder<>& b, const std::string& site, llvm::Value* index, llvm::Value* extent) = 0;

  // Math functions without an exact LLVM intrinsic on every target (exp, log, tanh, erf, sin,
  // cos, pow): libdevice on the GPU, libm on the CPU.
  virtual llvm::FunctionCallee mathFunction(llvm::Module& m, const std::string& name, llvm::Type* type,
                                            unsigned arity) = 0;
};

// GPU hooks; ids come from special registers, except that entries running several tiles per
// thread (kernels without a group shape) pass the tile's global index as `tileOverride`.
std::unique_ptr<DeviceHooks> makeGpuHooks(const KernelShape& shape, llvm::Value* tileOverride = nullptr);

// CPU hooks; ids come from `ctx` (a tessera_cpu_ctx*), except that per-group entries pass the
// tile index of their loop as `tileOverride`.
std::unique_ptr<DeviceHooks> makeCpuHooks(const KernelShape& shape, llvm::Value* ctx, llvm::Value* tileOverride);

// Defines (weak, hidden) the conversion routines that LLVM's x86 back end calls for types the
// host may lack in its C runtime: __truncsfbf2 (f32 -> bf16, round to nearest even, as
// cvt.rn.bf16.f32 on the GPU) and __truncdfbf2 (f64 -> bf16, one rounding, as cvt.rn.bf16.f64),
// missing from libgcc before GCC 13.
void defineCpuLibcalls(llvm::Module& m);

// The GPU module's fault record (tessera_fault_record of runtime.h), named TESSERA_FAULT_RECORD.
llvm::GlobalVariable* gpuFaultRecord(llvm::Module& m);

// The LLVM struct type of tessera_cpu_ctx and tessera_cpu_ops.
llvm::StructType* cpuCtxType(llvm::LLVMContext& c);
llvm::StructType* cpuOpsType(llvm::LLVMContext& c);

}  // namespace tessera::codegen
