// What a host function does when it is called, after the rewrites: its entry point's parameters
// and results, the buffers it allocates, and the kernels it launches in order. Kernel generation
// (graph/KernelGen.cpp) makes a HostPlan per graph together with the Tessera source of the
// kernels it launches; the driver compiles that source with the module and hands the plans to
// code generation (codegen/host/HostEntries.cpp), which writes each as a C entry point in the
// module's object. Extents are Dims over the symbols of the parameters' shapes, bound when the
// function is called (docs/abi.md, "Host entry points").
#pragma once

#include <string>
#include <vector>

#include "graph/Dim.h"
#include "sema/DType.h"

namespace tessera::graph {

struct PlanParam {
  std::string name;
  bool isTensor = true;
  DType dtype = DType::FP32;
  Shape shape;            // tensors
  bool writable = false;  // Region[write] / Region[reduce_sum]: kernels of the plan write it
};

// A tensor the entry point allocates: a result (handed to the caller) or a temporary (freed
// before the entry point returns).
struct PlanTensor {
  DType dtype = DType::FP32;
  Shape shape;
};

struct PlanBuffer {
  enum class Kind : uint8_t { Param, Output, Temp } kind = Kind::Temp;
  unsigned index = 0;
};

struct PlanArg {
  // Extent: an i64 scalar evaluated from the parameters' shapes when the function runs;
  // Float: a constant scalar of dtype `dtype` (an f32 softmax scale).
  enum class Kind : uint8_t { Tensor, ScalarParam, Extent, Float } kind = Kind::Tensor;
  PlanBuffer buffer;              // Tensor (Param: a tensor parameter)
  unsigned param = 0;             // ScalarParam: a scalar parameter of the function
  Dim extent = Dim::constant(0);  // Extent
  // Tensor: when `view` is not empty, the buffer seen with this shape (no copy): dense with the
  // same element count when `viewStrides` is empty, else with these element strides, starting at
  // element `viewOffset` (a head of split_qkv's result inside its operand).
  Shape view, viewStrides;
  Dim viewOffset = Dim::constant(0);
  double value = 0;           // Float
  bool invSqrt = false;       // Float: the value is 1 / sqrt(extent), evaluated when the function runs
  DType dtype = DType::FP32;  // Float

  static PlanArg tensor(PlanBuffer b, Shape view = {}) {
    PlanArg a;
    a.buffer = b;
    a.view = std::move(view);
    return a;
  }
  static PlanArg constant(double v, DType d) {
    PlanArg a;
    a.kind = Kind::Float;
    a.value = v;
    a.dtype = d;
    return a;
  }
};

struct PlanStep {
  std::string kernel;  // a kernel of the module: generated, or `stdlib`'s
  std::vector<PlanArg> args;
  // When not empty, the kernel is this kernel of stdlib.nn, launched as it is (compiled into the
  // module under the name `kernel`).
  std::string stdlib = {};
};

struct HostPlan {
  std::string name;  // the host function's source name
  std::vector<PlanParam> params;
  std::vector<PlanTensor> outputs, temps;
  std::vector<PlanStep> steps;  // launch order
  std::string signature;        // for the header's comment
  bool captureGraph = false;    // @jit(capture_graph=True): the launches run as one graph
};

}  // namespace tessera::graph
