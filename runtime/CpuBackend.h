//===- CpuBackend.h - The CPU executor as a device --------------------------------*- C++ -*-===//
//
// Device memory is host memory; work runs synchronously at submission, which trivially keeps
// stream order. A capturing stream records work instead, and a graph replays it in order.
//
//===----------------------------------------------------------------------------------------===//
#ifndef TESSERA_RUNTIME_CPUBACKEND_H
#define TESSERA_RUNTIME_CPUBACKEND_H

#include <memory>

#include "runtime/Backend.h"

namespace tessera::rt {

std::unique_ptr<Backend> createCpuBackend();

}  // namespace tessera::rt

#endif
