// A host function's entry point (@jit, @graph.module; docs/abi.md section 10) as a Python
// callable: tensors and scalars in, new tensors out. The C function is called through libffi from
// the parameter list its header declares.
#pragma once

#include <ffi.h>
#include <pybind11/pybind11.h>
#include <string>
#include <vector>

#include "python/src/Args.h"

namespace tessera::py {

class HostEntry {
 public:
  // `fn` is the entry's address; `params` its parameters as (name, "tensor" | dtype name, rank)
  // tuples; `results` the declared rank of each result (-1 unknown).
  HostEntry(uintptr_t fn, std::string name, pybind11::list params, pybind11::list resultRanks, pybind11::object keep);
  HostEntry(const HostEntry&) = delete;
  HostEntry& operator=(const HostEntry&) = delete;

  // Calls the entry; returns (framework, [Buffer per result]); framework: 0 none, 1 torch,
  // 2 numpy, 3 another DLPack producer (the first tensor argument's).
  pybind11::tuple call(pybind11::args args, pybind11::object stream);

  const std::string& name() const { return name_; }
  size_t numParams() const { return params_.size(); }
  size_t numResults() const { return resultRanks_.size(); }

 private:
  void* fn_;
  std::string name_, owner_;
  [[noreturn]] void fail(const CallArgs& call, tessera_status status) const;

  std::vector<ParamInfo> params_;
  std::vector<int> resultRanks_;
  std::vector<ffi_type*> types_;
  ffi_cif cif_{};
  pybind11::object keep_;
};

void addHostEntryType(pybind11::module_& m);

}  // namespace tessera::py
