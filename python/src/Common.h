// What every file of the extension shares: raising the package's exceptions, the device this
// process runs Tessera on, and the runtime's errors turned into Python exceptions.
#pragma once

#include <Python.h>
#include <string>

#include "tessera/runtime.h"

namespace tessera::py {

// The package's exception classes (tessera/_errors.py), installed by _tessera._set_errors.
struct ErrorClasses {
  PyObject* error = nullptr;       // tessera.Error (RuntimeError)
  PyObject* dtypeError = nullptr;  // tessera.DTypeError (Error, TypeError)
  PyObject* shapeError = nullptr;  // tessera.ShapeError (Error, ValueError)
};
ErrorClasses& errorClasses();

// The raise* functions set a Python exception and throw pybind11::error_already_set, which the
// bindings propagate to the caller.
// Sets the exception for `status` (DTYPE_MISMATCH: DTypeError, SHAPE/RANK_MISMATCH: ShapeError,
// every other status: Error) with `message` and the status name as its arguments, then throws.
[[noreturn]] void raiseStatus(tessera_status status, const std::string& message);
// raiseStatus with the runtime's message for the calling thread's last failure.
[[noreturn]] void raiseRuntime(tessera_status status);
inline void check(tessera_status s) {
  if (s != TESSERA_SUCCESS) raiseRuntime(s);
}
// A plain Python exception (PyExc_TypeError, ...).
[[noreturn]] void raise(PyObject* type, const std::string& message);

// Where the data of a tensor lives.
struct Device {
  bool cuda = false;
  int id = 0;  // the CUDA ordinal
};

// The device Tessera runs on in this process, chosen at the first call that needs one (the
// runtime picks it once per process): TESSERA_DEVICE when set, else the device of the first
// tensor a call receives (`first`, nullptr when the call has none), else the runtime's default.
struct ActiveDevice {
  bool gpu = false;
  int ordinal = -1;  // CUDA ordinal on the GPU
  std::string name;
};
const ActiveDevice& activeDevice(const Device* first);
// Whether a device has been chosen yet through activeDevice.
bool deviceChosen();
// tessera.set_device("cpu" | "gpu") before the first call: sets TESSERA_DEVICE; afterwards only
// the device in use is accepted.
void setDevice(const std::string& kind);

// "cpu" or "cuda:N".
std::string deviceText(const Device& d);

}  // namespace tessera::py
