// What a cubin says about each of its functions, read from its ELF sections as cuobjdump
// --dump-resource-usage reads them: the .nv.info attributes (EIATTR_REGCOUNT, EIATTR_FRAME_SIZE,
// EIATTR_MIN/MAX_STACK_SIZE) and the sizes of the per-function .nv.shared.<f>, .nv.local.<f> and
// .nv.constant0.<f> sections. Spills are not in the ELF: ptxas reports them (parsePtxasInfo).
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

namespace tessera::codegen {

struct CubinFunction {
  std::string name;
  bool isKernel = false;        // an entry (STO_CUDA_ENTRY), not a device function
  uint32_t registers = 0;       // per thread
  uint32_t frameBytes = 0;      // the function's own stack frame
  uint32_t stackBytes = 0;      // stack the function needs, callees included (cuobjdump's STACK)
  uint64_t sharedBytes = 0;     // static shared memory (cuobjdump's SHARED)
  uint64_t localBytes = 0;      // local memory section (cuobjdump's LOCAL)
  uint64_t constant0Bytes = 0;  // constant bank 0: parameters and driver constants
  // sm_90 cubins place the 1 KiB of shared memory the system reserves per group inside each
  // function's .nv.shared section (there is a .nv.shared.reserved section); older ones do not.
  bool sharedIncludesReserved = false;
};

// Parses `image` (an ELF cubin). Returns false with `error` set when it is not one.
bool readCubin(const std::string& image, std::vector<CubinFunction>& functions, std::string& error);

// What `ptxas -v` printed per function.
struct PtxasFunctionInfo {
  uint32_t registers = 0;
  uint32_t stackFrameBytes = 0;
  uint32_t spillStoreBytes = 0;
  uint32_t spillLoadBytes = 0;
  uint64_t sharedBytes = 0;  // "N bytes smem"
};
std::map<std::string, PtxasFunctionInfo> parsePtxasInfo(const std::string& log);

// Static counts of the instructions that decide a kernel's speed, per PTX function (.entry or
// .func); every instruction counts once wherever it is (a loop body once, not per trip).
struct InstructionMix {
  uint32_t mma = 0;       // mma.sync: tensor cores, sm_80 path
  uint32_t wgmma = 0;     // wgmma.mma_async: Hopper warpgroup tensor cores
  uint32_t tma = 0;       // cp.async.bulk*: the Tensor Memory Accelerator
  uint32_t cpAsync = 0;   // cp.async.ca / cp.async.cg: Ampere asynchronous copies
  uint32_t ldmatrix = 0;  // ldmatrix: shared -> mma fragment loads
};
std::map<std::string, InstructionMix> countPtxInstructions(const std::string& ptx);

}  // namespace tessera::codegen
