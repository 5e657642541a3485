//===- Nccl.h - NCCL, resolved at run time -------------------------------------------*- C++ -*-===//
//
// libnccl.so.2 is opened with dlopen on the first GPU communicator (TESSERA_NCCL_LIBRARY names
// another file), like libcuda, so programs linked with libtessera_dist start on machines without
// NCCL and run CPU ranks there. Prototypes come from the CUDA toolkit's nccl.h; without it the
// GPU ranks compile out (TESSERA_DIST_HAVE_NCCL = 0).
//
//===----------------------------------------------------------------------------------------===//
#ifndef TESSERA_RUNTIME_DIST_NCCL_H
#define TESSERA_RUNTIME_DIST_NCCL_H

#include "runtime/dist/Transport.h"

#if TESSERA_DIST_HAVE_NCCL
#include <nccl.h>
#include <string>

namespace tessera::dist {

#define TESSERA_NCCL_FUNCTIONS(X) \
  X(ncclGetVersion)               \
  X(ncclGetUniqueId)              \
  X(ncclCommInitRankConfig)       \
  X(ncclCommSplit)                \
  X(ncclCommAbort)                \
  X(ncclCommDestroy)              \
  X(ncclCommGetAsyncError)        \
  X(ncclGetErrorString)           \
  X(ncclGetLastError)             \
  X(ncclAllReduce)                \
  X(ncclReduceScatter)            \
  X(ncclAllGather)                \
  X(ncclBroadcast)                \
  X(ncclSend)                     \
  X(ncclRecv)                     \
  X(ncclGroupStart)               \
  X(ncclGroupEnd)

struct NcclLib {
#define TESSERA_NCCL_DECLARE(fn) decltype(&::fn) fn = nullptr;
  TESSERA_NCCL_FUNCTIONS(TESSERA_NCCL_DECLARE)
#undef TESSERA_NCCL_DECLARE
  int version = 0;  // ncclGetVersion: 22809 for 2.28.9

  // The process-wide library, or null with `why` set.
  static const NcclLib* load(std::string& why);
};

// The NCCL communicator under a GPU transport (for the benchmarks' NCCL baselines).
ncclComm_t ncclCommOf(Transport& t);

}  // namespace tessera::dist
#endif

namespace tessera::dist {
// A GPU transport over `boot`'s ranks (one GPU each, the runtime's device current): the unique id
// goes through `boot`. NOT_SUPPORTED when built without nccl.h or when libnccl.so.2 is missing.
tessera_status makeNcclTransport(std::unique_ptr<Bootstrap> boot, const Deadline& d, std::unique_ptr<Transport>& out);
}  // namespace tessera::dist

#endif
