// The steps of products of a whole-tensor program (docs/codegen.md, "Products of whole-tensor
// programs on wgmma"): the analysis that the `product-steps` pass records and that sm_90a code
// generation compiles into persistent TMA + wgmma kernels, one per step.
//
// A whole-tensor program, after row-partition, is a row loop whose body computes one stored
// value from products `tile.dot(L, R)` and elementwise ops. Every value that is the left operand
// of a product, and the stored value, is *materialised*: a step computes it over 2-d output
// tiles with the products whose results it is made of, applying the ops between (the epilogue)
// per accumulator element. A value materialised for a product lives in a scratch matrix of the
// products' 16-bit type between the steps (rounded once, to nearest even); the stored value goes
// to its parameter through the program's own conversion.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "ir/IR.h"

namespace tessera::ir {

// (tensor parameter, axis) that an extent is read from at run time.
struct ExtentRef {
  int param = -1;
  unsigned axis = 0;
};

// A matrix a step reads as A or writes: a tensor parameter or scratch matrix `scratch` of the plan.
struct StepMatrix {
  int param = -1;
  int scratch = -1;
};

// What an epilogue reads besides its products' accumulators, for output element (row r, col c).
enum class LeafKind {
  Element,  // tile.load of the row block of a parameter P[M, N]: P[r, c]
  Column,   // tile.load of a whole parameter P[N]: P[c]
  Scalar,   // a scalar parameter of the kernel
};

struct EpilogueLeaf {
  const Value* value = nullptr;  // the tile.load's result, or the parameter
  int param = -1;
  LeafKind kind = LeafKind::Scalar;
};

struct StepProduct {
  Operation* dot = nullptr;
  int b = -1;           // the parameter: B [K, N], or (kMajor) Bt [N, K] used as Bt.T
  bool kMajor = false;  // K contiguous in B's rows
};

struct ProductStep {
  StepMatrix a;                       // A [M, K] with K contiguous
  std::vector<StepProduct> products;  // 1 or 2: A, K and N in common
  std::vector<Operation*> epilogue;   // the ops from the products' results to `result`, in order
  std::vector<EpilogueLeaf> leaves;
  Value* result = nullptr;  // the value the step writes (per element: the epilogue's last value)
  StepMatrix out;           // a parameter [M, N] or a scratch matrix
  ExtentRef m, n, k;
};

struct ScratchMatrix {
  ScalarKind elem = ScalarKind::BF16;  // the 16-bit type of the products that read it
  ExtentRef rows, cols;
  int writtenBy = -1;  // the step that writes it
};

struct ProductPlan {
  std::vector<ProductStep> steps;  // in launch order: a scratch matrix is written before it is read
  std::vector<ScratchMatrix> scratch;
};

// The plan of `func`, or nullopt with `why` saying what is not in the form (empty when `func` is
// not a whole-tensor program with a product at all: nothing to report).
std::optional<ProductPlan> planProducts(Operation& func, std::string& why);

}  // namespace tessera::ir
