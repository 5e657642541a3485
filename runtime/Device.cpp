//===- Device.cpp - TESSERA_DEVICE and the GPU-else-CPU default ------------------------------===//
#include "runtime/Device.h"

#include <cstdlib>
#include <memory>
#include <mutex>

#include "runtime/CpuBackend.h"
#include "runtime/GpuBackend.h"
#include "runtime/Status.h"

namespace tessera::rt {

namespace {
std::mutex& ordinalMutex() {
  static std::mutex m;
  return m;
}
int requestedOrdinal = 0;  // the CUDA device the GPU backend opens (requestGpuOrdinal)
bool selected = false;     // the backend has been chosen; the ordinal is fixed from then on

struct Selection {
  std::unique_ptr<Backend> backend;
  tessera_status status = TESSERA_SUCCESS;
  std::string error;  // message for `status`
  std::string gpuReason;
};

Selection& selection() {
  static Selection* sel = [] {
    auto* s = new Selection;  // never destroyed: handles may be released during exit
    int ordinal = 0;
    {
      std::lock_guard<std::mutex> lock(ordinalMutex());
      selected = true;
      ordinal = requestedOrdinal;
    }
    const char* env = std::getenv("TESSERA_DEVICE");
    std::string want = env ? env : "";
    if (want == "cpu") {
      s->gpuReason = "TESSERA_DEVICE=cpu";
      s->backend = createCpuBackend();
    } else if (want == "gpu") {
      s->backend = createGpuBackend(s->gpuReason, ordinal);
      if (!s->backend) {
        s->status = TESSERA_ERROR_NO_DEVICE;
        s->error = "TESSERA_DEVICE=gpu but no GPU is usable: " + s->gpuReason;
      }
    } else if (want.empty()) {
      s->backend = createGpuBackend(s->gpuReason, ordinal);
      if (!s->backend) s->backend = createCpuBackend();
    } else {
      s->status = TESSERA_ERROR_INVALID_ARGUMENT;
      s->error = "TESSERA_DEVICE must be 'cpu' or 'gpu', not '" + want + "'";
    }
    return s;
  }();
  return *sel;
}
}  // namespace

tessera_status activeBackend(Backend*& out) {
  Selection& s = selection();
  if (s.status != TESSERA_SUCCESS) return fail(s.status, s.error);
  out = s.backend.get();
  return TESSERA_SUCCESS;
}

const std::string& gpuUnavailableReason() { return selection().gpuReason; }

tessera_status requestGpuOrdinal(int ordinal) {
  {
    std::lock_guard<std::mutex> lock(ordinalMutex());
    if (!selected) {
      requestedOrdinal = ordinal;
      return TESSERA_SUCCESS;
    }
  }
  Backend* b = nullptr;
  TESSERA_TRY(activeBackend(b));
  if (b->kind() == TESSERA_DEVICE_GPU && b->deviceOrdinal() != ordinal)
    return fail(TESSERA_ERROR_INVALID_ARGUMENT, "GPU ", ordinal, " cannot be bound: the runtime already uses GPU ",
                b->deviceOrdinal(), " (call tessera_dist_init before any other runtime call)");
  return TESSERA_SUCCESS;
}

}  // namespace tessera::rt
