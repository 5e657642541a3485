// One call's arguments: tensors imported through DLPack, scalars converted to the parameter's
// dtype, the device checked, and the stream the call runs on.
#pragma once

#include <Python.h>
#include <string>
#include <vector>

#include "python/src/Tensors.h"
#include "tessera/runtime.h"

namespace tessera::py {

// A parameter as the bindings see it (from a kernel descriptor or a host entry's signature).
struct ParamInfo {
  std::string name;
  bool tensor = true;
  int32_t dtype = TESSERA_DTYPE_INVALID;
  int32_t rank = 0;
};

// The scalar `obj` as parameter `where` of dtype `dtype` wants it, in the dtype's natural
// little-endian layout (value.bytes of a tessera_arg). Raises TypeError (not a number, a dtype
// Python has no value of) or ValueError (out of range of an integer dtype).
uint64_t scalarBits(PyObject* obj, int32_t dtype, const Where& where);

// The arguments of one call, in parameter order.
class CallArgs {
 public:
  // Imports `args` for `params` of `owner` ("kernel 'saxpy'"). Raises TypeError for a wrong
  // count, None, a tensor where a scalar goes or the reverse; tessera.Error for a tensor on a
  // device this process does not run Tessera on.
  CallArgs(const std::string& owner, const std::vector<ParamInfo>& params, PyObject* const* args, size_t nargs);

  std::vector<tessera_arg>& args() { return args_; }
  std::vector<uint64_t>& scalars() { return scalars_; }  // per parameter (0 for tensors)
  const tessera_tensor* tensor(size_t i) const { return args_[i].value.tensor; }
  Framework framework() const { return framework_; }
  bool anyTorchCuda() const { return anyTorchCuda_; }
  const ActiveDevice& device() const { return *device_; }

 private:
  ImportScope scope_;
  std::vector<tessera_tensor> tensors_;
  std::vector<tessera_arg> args_;
  std::vector<uint64_t> scalars_;
  Framework framework_ = Framework::None;
  bool anyTorchCuda_ = false;
  const ActiveDevice* device_ = nullptr;
};

// The stream a call runs on: the innermost `with tessera.stream.use(s)` / graph.capture() stream
// of this thread, else `explicitStream` (a tessera stream or a torch.cuda.Stream), else PyTorch's
// current stream when a PyTorch CUDA tensor is among the arguments, else the default stream.
tessera_stream callStream(const CallArgs& call, PyObject* explicitStream);
// The tessera_stream of a Python stream object (tessera.stream.Stream, torch.cuda.Stream, an
// integer CUstream, None for the default stream).
tessera_stream streamOf(PyObject* obj);
// PyTorch's current CUDA stream on the active GPU as a wrapped tessera_stream (NULL: the legacy
// default stream).
tessera_stream torchCurrentStream(const ActiveDevice& d);
// The thread's stream override (graph capture, `with tessera.stream.use(s)`).
void pushStream(PyObject* stream);
void popStream();

}  // namespace tessera::py
