//===- GpuBackend.h - NVIDIA GPUs through the CUDA driver API ---------------------*- C++ -*-===//
#ifndef TESSERA_RUNTIME_GPUBACKEND_H
#define TESSERA_RUNTIME_GPUBACKEND_H

#include <memory>
#include <string>

#include "runtime/Backend.h"

namespace tessera::rt {

// The GPU backend on the primary context of CUDA device `ordinal`, or null with `why` saying why
// it is unusable (built without CUDA headers, no driver, no such device, initialisation failed).
std::unique_ptr<Backend> createGpuBackend(std::string& why, int ordinal);

}  // namespace tessera::rt

#endif
