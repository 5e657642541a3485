//===- Device.h - Choosing the active backend -------------------------------------*- C++ -*-===//
//
// The first runtime call picks the device once for the process: TESSERA_DEVICE=cpu|gpu, or by
// default the GPU when one is usable and the CPU executor otherwise.
//
//===----------------------------------------------------------------------------------------===//
#ifndef TESSERA_RUNTIME_DEVICE_H
#define TESSERA_RUNTIME_DEVICE_H

#include <string>

#include "runtime/Backend.h"

namespace tessera::rt {

// The active backend; on failure (e.g. TESSERA_DEVICE=gpu without a GPU) every call returns
// the same status and message.
tessera_status activeBackend(Backend*& out);
// Why the GPU is not the active device ("" when it is).
const std::string& gpuUnavailableReason();
// Makes the GPU backend open CUDA device `ordinal` (one process per GPU: the local rank's GPU).
// Must come before the backend is chosen; afterwards it only succeeds for the ordinal in use
// (or when the CPU executor is active).
tessera_status requestGpuOrdinal(int ordinal);

}  // namespace tessera::rt

#endif
