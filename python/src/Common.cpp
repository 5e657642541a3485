#include "python/src/Common.h"

#include <cstdlib>
#include <mutex>
#include <pybind11/pybind11.h>

#include "runtime/Device.h"

namespace tessera::py {

ErrorClasses& errorClasses() {
  static ErrorClasses classes;
  return classes;
}

void raise(PyObject* type, const std::string& message) {
  PyErr_SetString(type, message.c_str());
  throw pybind11::error_already_set();
}

void raiseStatus(tessera_status status, const std::string& message) {
  const ErrorClasses& c = errorClasses();
  PyObject* type = c.error;
  if (status == TESSERA_ERROR_DTYPE_MISMATCH) type = c.dtypeError;
  if (status == TESSERA_ERROR_SHAPE_MISMATCH || status == TESSERA_ERROR_RANK_MISMATCH) type = c.shapeError;
  if (!type) type = PyExc_RuntimeError;  // the package's classes are not installed yet
  PyObject* args = Py_BuildValue("(ss)", message.c_str(), tessera_status_name(status));
  if (args) {
    PyErr_SetObject(type, args);
    Py_DECREF(args);
  }
  throw pybind11::error_already_set();
}

void raiseRuntime(tessera_status status) {
  std::string message = tessera_last_error_message();
  if (message.empty()) message = tessera_status_name(status);
  raiseStatus(status, message);
}

std::string deviceText(const Device& d) { return d.cuda ? "cuda:" + std::to_string(d.id) : std::string("cpu"); }

namespace {
std::mutex& deviceMutex() {
  static std::mutex m;
  return m;
}
ActiveDevice active;
bool chosen = false;
}  // namespace

bool deviceChosen() {
  std::lock_guard<std::mutex> lock(deviceMutex());
  return chosen;
}

const ActiveDevice& activeDevice(const Device* first) {
  {
    std::lock_guard<std::mutex> lock(deviceMutex());
    if (chosen) return active;
    // The runtime reads TESSERA_DEVICE once, at its first call: the first tensor decides when the
    // user has not.
    if (first && !std::getenv("TESSERA_DEVICE")) setenv("TESSERA_DEVICE", first->cuda ? "gpu" : "cpu", 0);
  }
  tessera_device_kind kind = TESSERA_DEVICE_CPU;
  tessera_status s = tessera_get_device_kind(&kind);
  if (s != TESSERA_SUCCESS) raiseRuntime(s);
  rt::Backend* backend = nullptr;
  if (rt::activeBackend(backend) != TESSERA_SUCCESS) raiseRuntime(TESSERA_ERROR_NO_DEVICE);
  std::lock_guard<std::mutex> lock(deviceMutex());
  active.gpu = kind == TESSERA_DEVICE_GPU;
  active.ordinal = backend->deviceOrdinal();
  active.name = backend->name();
  chosen = true;
  return active;
}

void setDevice(const std::string& kind) {
  if (kind != "cpu" && kind != "gpu") raise(PyExc_ValueError, "tessera.set_device: 'cpu' or 'gpu', not '" + kind + "'");
  {
    std::lock_guard<std::mutex> lock(deviceMutex());
    if (!chosen) {
      setenv("TESSERA_DEVICE", kind.c_str(), 1);
      return;
    }
  }
  const ActiveDevice& d = activeDevice(nullptr);
  if (d.gpu != (kind == "gpu"))
    raise(PyExc_RuntimeError, "tessera.set_device('" + kind + "'): this process already runs Tessera on the " + d.name +
                                  "; the device is chosen once per process, before the first call");
}

}  // namespace tessera::py
