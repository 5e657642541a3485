//===- Device.cpp - TESSERA_DEVICE and the GPU-else-CPU default ------------------------------===//
#include "runtime/Device.h"
#include "runtime/CpuBackend.h"
#include "runtime/GpuBackend.h"
#include "runtime/Status.h"

#include <cstdlib>
#include <memory>
#include <mutex>

namespace tessera::rt {

namespace {
struct Selection {
  std::unique_ptr<Backend> backend;
  tessera_status status = TESSERA_SUCCESS;
  std::string error; // message for `status`
  std::string gpuReason;
};

Selection &selection() {
  static Selection *sel = [] {
    auto *s = new Selection; // never destroyed: handles may be released during exit
    const char *env = std::getenv("TESSERA_DEVICE");
    std::string want = env ? env : "";
    if (want == "cpu") {
      s->gpuReason = "TESSERA_DEVICE=cpu";
      s->backend = createCpuBackend();
    } else if (want == "gpu") {
      s->backend = createGpuBackend(s->gpuReason);
      if (!s->backend) {
        s->status = TESSERA_ERROR_NO_DEVICE;
        s->error = "TESSERA_DEVICE=gpu but no GPU is usable: " + s->gpuReason;
      }
    } else if (want.empty()) {
      s->backend = createGpuBackend(s->gpuReason);
      if (!s->backend)
        s->backend = createCpuBackend();
    } else {
      s->status = TESSERA_ERROR_INVALID_ARGUMENT;
      s->error = "TESSERA_DEVICE must be 'cpu' or 'gpu', not '" + want + "'";
    }
    return s;
  }();
  return *sel;
}
} // namespace

tessera_status activeBackend(Backend *&out) {
  Selection &s = selection();
  if (s.status != TESSERA_SUCCESS)
    return fail(s.status, s.error);
  out = s.backend.get();
  return TESSERA_SUCCESS;
}

const std::string &gpuUnavailableReason() { return selection().gpuReason; }

} // namespace tessera::rt
