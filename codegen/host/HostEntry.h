// A host function's entry point as code generation sees it (made from graph/HostPlan.h by the
// driver): C-callable, in the module's object beside the kernels' launch stubs. It binds the
// symbols of its parameters' shapes, allocates its results and temporaries with
// tessera_malloc, launches its kernels in order on the caller's stream with tessera_launch, and
// frees the temporaries (docs/abi.md, "Host entry points"). Extents are postfix programs over
// the entry's symbols (ExtentOp::symbol indexes `symbols`).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "codegen/lower/KernelInterface.h"

namespace tessera::codegen {

struct HostEntryParam {
  std::string name;
  bool isTensor = true;
  int32_t dtype = 0;  // tessera_dtype
  int32_t rank = 0;
  bool writable = false;
};

struct HostEntryTensor {
  int32_t dtype = 0;
  unsigned elemBits = 32;
  std::vector<std::vector<ExtentOp>> shape;  // one program per axis
};

struct HostEntrySymbol {
  std::string name;
  unsigned param = 0, axis = 0;  // bound by this tensor parameter's extent
};

struct HostEntryArg {
  // Extent: an i64 scalar evaluated from the bound symbols (the element count of a mean);
  // Float: a constant f32/f64 scalar.
  enum class Kind : uint8_t { Param, Output, Temp, ScalarParam, Extent, Float } kind = Kind::Param;
  unsigned index = 0;
  std::vector<ExtentOp> extent;  // Extent; Float with invSqrt
  // Param/Output/Temp: when `view` is not empty, a view of the buffer (tessera_tensor_view):
  // extents, element strides (empty: dense), first element.
  std::vector<std::vector<ExtentOp>> view, viewStrides;
  std::vector<ExtentOp> viewOffset;
  double value = 0;      // Float
  bool invSqrt = false;  // Float: 1 / sqrt(extent) instead of value
  int32_t dtype = 0;     // Float: tessera_dtype
};

struct HostEntryStep {
  std::string kernel;  // a kernel of the module (its descriptor is launched)
  std::vector<HostEntryArg> args;
};

struct HostEntry {
  std::string name;  // the host function; the C function is <module>_<name>
  std::vector<HostEntryParam> params;
  std::vector<HostEntrySymbol> symbols;
  std::vector<HostEntryTensor> outputs, temps;
  std::vector<HostEntryStep> steps;
  std::string signature;      // the Tessera signature, for the header
  bool captureGraph = false;  // @jit(capture_graph=True): launches captured and replayed as a graph
};

}  // namespace tessera::codegen
