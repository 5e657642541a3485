//===- Nvtx.h - NVTX ranges named after Tessera kernels ----------------------------*- C++ -*-===//
//
// Each launch, copy and collective is an NVTX range in the "Tessera" domain, so Nsight Systems
// shows kernels by their Tessera names. NVTX tools announce themselves through
// NVTX_INJECTION64_PATH; without one, a Range is one predictable branch and calls nothing.
//
//===----------------------------------------------------------------------------------------===//
#ifndef TESSERA_RUNTIME_NVTX_H
#define TESSERA_RUNTIME_NVTX_H

namespace tessera::rt::nvtx {

// Whether an NVTX tool is attached (read once).
bool attached();
void push(const char* name);
void pop();

class Range {
 public:
  explicit Range(const char* name) : on_(attached()) {
    if (on_) push(name);
  }
  ~Range() {
    if (on_) pop();
  }
  Range(const Range&) = delete;
  Range& operator=(const Range&) = delete;

 private:
  bool on_;
};

}  // namespace tessera::rt::nvtx

#endif
