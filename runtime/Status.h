//===- Status.h - Errors as values with a thread-local message --------------------*- C++ -*-===//
//
// Every failing runtime call goes through fail(): it stores the message for
// tessera_last_error_message() on the calling thread and returns the status, so call sites read
// `return fail(TESSERA_ERROR_..., "kernel '", name, "': ...");`.
//
//===----------------------------------------------------------------------------------------===//
#ifndef TESSERA_RUNTIME_STATUS_H
#define TESSERA_RUNTIME_STATUS_H

#include <sstream>
#include <string>

#include "tessera/runtime.h"

namespace tessera::rt {

void setLastError(std::string message);
const std::string& lastError();

template <typename... Parts>
std::string concat(const Parts&... parts) {
  std::ostringstream os;
  (os << ... << parts);
  return os.str();
}

template <typename... Parts>
tessera_status fail(tessera_status status, const Parts&... parts) {
  setLastError(concat(parts...));
  return status;
}

// Propagates a failing status (its message is already set).
#define TESSERA_TRY(expr)                                                   \
  do {                                                                      \
    tessera_status tessera_try_status_ = (expr);                            \
    if (tessera_try_status_ != TESSERA_SUCCESS) return tessera_try_status_; \
  } while (0)

}  // namespace tessera::rt

#endif
