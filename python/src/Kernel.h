// A kernel of a loaded module as a Python callable: `mod.saxpy(x, y, 2.0)` launches on the
// tensors in place, scalars by value, through tessera_launch and its checks.
#pragma once

#include <pybind11/pybind11.h>
#include <string>
#include <vector>

#include "python/src/Args.h"
#include "tessera/runtime.h"

namespace tessera::py {

class Kernel {
 public:
  // `desc` is a registered tessera_kernel_desc*; `keep` keeps its shared object loaded.
  Kernel(uintptr_t desc, pybind11::object keep);

  // Launches on `args` (and keyword arguments by parameter name); returns None.
  pybind11::object call(pybind11::args args, pybind11::kwargs kwargs);
  // The same kernel with launch options: grid and group (tuples of up to 3 or ints; empty for the
  // default), dynamic shared memory and a stream.
  Kernel configured(pybind11::object grid, pybind11::object group, uint64_t dynamicSharedBytes,
                    pybind11::object stream) const;
  // kernel[grid], kernel[grid, group], kernel[grid, group, stream].
  Kernel subscript(pybind11::object key) const;
  // The spec's autotune.search on these arguments (restores every mut tensor): (best candidate,
  // [median ms per candidate]).
  pybind11::tuple autotuneSearch(pybind11::args args);
  // Runs autotuneSearch on the arguments of the next call before launching it, then calls
  // `callback(best, times)`.
  void searchAtNextCall(pybind11::object callback) { pendingSearch_ = std::move(callback); }

  std::string name() const { return k_->name; }
  pybind11::list params() const;
  pybind11::dict info() const;
  uint32_t numCandidates() const { return tessera_autotune_num_candidates(k_); }
  pybind11::dict candidate(uint32_t index) const;
  uintptr_t descriptor() const { return reinterpret_cast<uintptr_t>(k_); }

 private:
  // The positional and keyword arguments in parameter order.
  std::vector<PyObject*> ordered(pybind11::args& args, pybind11::kwargs& kwargs) const;
  std::string extentText(const tessera_extent& e) const;

  const tessera_kernel_desc* k_;
  std::string owner_;  // "kernel 'saxpy'", for messages
  std::vector<ParamInfo> params_;
  tessera_launch_options opts_{};
  pybind11::object stream_;  // None: the call's default (see callStream)
  pybind11::object keep_;
  pybind11::object pendingSearch_;
};

void addKernelType(pybind11::module_& m);

}  // namespace tessera::py
