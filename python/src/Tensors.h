// Tensors in: any DLPack producer (PyTorch, NumPy, CuPy, a raw "dltensor" capsule) becomes a
// tessera_tensor view of the producer's memory, without a copy. Tensors out: memory the runtime
// allocated (a host entry's results) becomes a DLPack producer that the caller's framework takes
// over (torch.from_dlpack, numpy.from_dlpack) and frees through our deleter.
#pragma once

#include <Python.h>
#include <string>
#include <vector>

#include "python/src/Common.h"
#include "tessera/runtime.h"

namespace tessera::py {

// The framework a tensor came from: results go back to the framework of the first tensor.
enum class Framework { None = 0, Torch = 1, NumPy = 2, Other = 3 };

// What a call knows about one imported tensor.
struct ImportedTensor {
  tessera_tensor view{};
  Device device;
  Framework framework = Framework::None;
};

// Names the parameter in messages; the text is built only when one is raised.
struct Where {
  const std::string& owner;
  const std::string& param;
  std::string operator()() const;
};

// The producers' exports for one call: capsules and buffers are released when the scope ends,
// after the launch (a kernel reads the memory while the scope lives).
class ImportScope {
 public:
  ImportScope() = default;
  ImportScope(const ImportScope&) = delete;
  ImportScope& operator=(const ImportScope&) = delete;
  ~ImportScope();

  // Views `obj` as a tensor for parameter `param` of `owner` ("kernel 'saxpy'", "function 'mlp'"),
  // whose declared dtype is `want` (TESSERA_DTYPE_INVALID when any is fine: it disambiguates
  // PyTorch's bool, exported as uint8 by PyTorch 1.x). Raises TypeError (not a tensor, None, an
  // unsupported dtype) or ValueError (rank above 8) naming both.
  ImportedTensor import(PyObject* obj, const std::string& owner, const std::string& param, int32_t want);

 private:
  ImportedTensor importBuffer(PyObject* obj, const Where& where);
  PyObject* exportCapsule(PyObject* obj, Framework& fw, int32_t& dtypeOverride, const Where& where);
  std::vector<PyObject*> capsules_;
  std::vector<Py_buffer> buffers_;
};

// The runtime's dtype for a DLPack (code, bits, lanes), or TESSERA_DTYPE_INVALID.
int32_t dtypeFromDLPack(uint8_t code, uint8_t bits, uint16_t lanes);
// Whether `obj` is a torch.Tensor (PyTorch imported and the type matches; subclasses too).
bool isTorchTensor(PyObject* obj);

// A Python object exporting runtime memory through DLPack: a host entry's result (owned: freed
// with tessera_free_async on `stream` when the consumer deletes it) or a view of memory that
// `keepAlive` owns (a distributed tensor's local shard). `rank0` exports a one-element result of
// a rank-0 type with zero dimensions.
PyObject* makeBuffer(const tessera_tensor& t, bool owned, tessera_stream stream, PyObject* keepAlive, bool rank0);
// Registers the Buffer type with the module.
void addBufferType(PyObject* module);

}  // namespace tessera::py
