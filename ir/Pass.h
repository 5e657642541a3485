// Passes over Tile IR and the pass manager (--passes=a,b,c, --print-after-all, --time-passes,
// --verify-each). The registry of passes is ir/Passes.def.
#pragma once

#include <ostream>
#include <string>
#include <vector>

#include "basic/Diagnostics.h"
#include "ir/IR.h"

namespace tessera::ir {

using PassFn = bool (*)(Module&, DiagnosticEngine&);

#define PASS(NAME, FN, DESC) bool FN(Module& m, DiagnosticEngine& diags);
#include "ir/Passes.def"

struct PassInfo {
  const char* name;
  PassFn run;
  const char* description;
};
const std::vector<PassInfo>& passRegistry();

// The default Tile IR pipeline: the rows of whole-tensor programs split across groups, device
// functions inlined, then cleaned up, `tile.range(..., prefetch=k)` loops turned into k-stage
// async-copy pipelines, then shared memory placed (code generation needs its offsets). -O0
// keeps only what code generation needs.
inline constexpr const char* kDefaultPipeline =
    "row-partition,inline,canonicalize,cse,licm,dce,uniformity,mma-form,attention-form,attention-backward-form,product-"
    "steps,pipeline,smem-plan";
inline constexpr const char* kDefaultPipelineO0 = "row-partition,inline,uniformity,smem-plan";

// Why kernel `f` is not one canonical tile.mma loop that mma-form records (empty when it is);
// code generation's -Rpass-missed=tensor-cores remark on sm_90a (ir/passes/MmaForm.cpp).
std::string mmaFormMismatch(Operation& f);
const PassInfo* lookupPass(std::string_view name);

struct PassManagerOptions {
#ifdef NDEBUG
  bool verifyEach = false;
#else
  bool verifyEach = true;  // debug builds always verify after every pass
#endif
  bool printAfterAll = false;
  bool timePasses = false;
  std::ostream* log = nullptr;  // where --print-after-all and --time-passes write (stderr)
};

class PassManager {
 public:
  explicit PassManager(PassManagerOptions opts = {}) : opts_(opts) {}
  // Adds the passes of a comma-separated list; reports unknown names and returns false.
  bool parsePipeline(std::string_view list, DiagnosticEngine& diags);
  void add(const PassInfo* p) { passes_.push_back(p); }
  // Runs the passes in order; stops at the first failure (an error, or invalid IR under
  // verify-each). Returns true on success.
  bool run(Module& m, DiagnosticEngine& diags);
  size_t size() const { return passes_.size(); }

 private:
  PassManagerOptions opts_;
  std::vector<const PassInfo*> passes_;
};

}  // namespace tessera::ir
