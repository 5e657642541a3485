//===- Status.cpp - Status names and the thread-local error message -------------------------===//
#include "runtime/Status.h"

namespace tessera::rt {

static thread_local std::string lastMessage;

void setLastError(std::string message) { lastMessage = std::move(message); }
const std::string& lastError() { return lastMessage; }

}  // namespace tessera::rt

extern "C" {

const char* tessera_last_error_message(void) { return tessera::rt::lastError().c_str(); }

void tessera_clear_error(void) { tessera::rt::setLastError(""); }

const char* tessera_status_name(tessera_status status) {
  switch (status) {
#define NAME(s) \
  case s: return #s;
    NAME(TESSERA_SUCCESS)
    NAME(TESSERA_ERROR_INVALID_ARGUMENT)
    NAME(TESSERA_ERROR_RANK_MISMATCH)
    NAME(TESSERA_ERROR_SHAPE_MISMATCH)
    NAME(TESSERA_ERROR_DTYPE_MISMATCH)
    NAME(TESSERA_ERROR_NULL_POINTER)
    NAME(TESSERA_ERROR_HOST_POINTER)
    NAME(TESSERA_ERROR_ALIASED_MUT)
    NAME(TESSERA_ERROR_INVALID_GRID)
    NAME(TESSERA_ERROR_NO_LAUNCH_SIZE)
    NAME(TESSERA_ERROR_NOT_FOUND)
    NAME(TESSERA_ERROR_ALREADY_REGISTERED)
    NAME(TESSERA_ERROR_ABI_MISMATCH)
    NAME(TESSERA_ERROR_OUT_OF_MEMORY)
    NAME(TESSERA_ERROR_NO_DEVICE)
    NAME(TESSERA_ERROR_NOT_SUPPORTED)
    NAME(TESSERA_ERROR_DRIVER)
    NAME(TESSERA_ERROR_KERNEL_FAULT)
    NAME(TESSERA_ERROR_NOT_READY)
    NAME(TESSERA_ERROR_INVALID_HANDLE)
    NAME(TESSERA_ERROR_TIMEOUT)
    NAME(TESSERA_ERROR_COMM_ABORTED)
    NAME(TESSERA_ERROR_INTERNAL)
#undef NAME
  }
  return "TESSERA_ERROR_UNKNOWN";
}

}  // extern "C"
