// Shared memory of a kernel: the sum of its static allocations (each call site once, wherever
// it sits) against the declared budget `shared(N)` and the 227 KiB a Hopper SM gives one group.
#include "sema/SemaDiagnostics.h"
#include "sema/analyses/Analyses.h"

namespace tessera {

void checkSharedMemory(FunctionDefStmt* fn, FunctionInfo& info, DiagnosticEngine& diags) {
  long long total = 0;
  long long limit = info.sharedBudget >= 0 ? info.sharedBudget : kHopperSharedLimit;
  const SharedAllocation* crossing = nullptr;
  for (const SharedAllocation& a : info.sharedAllocations) {
    if (a.bytes < 0) continue;
    total = total > LLONG_MAX - a.bytes ? LLONG_MAX : total + a.bytes;
    if (!crossing && total > limit) crossing = &a;
  }
  if (!crossing) return;
  auto d = info.sharedBudget >= 0 ? diags.report(diag::err_shared_over_budget, crossing->call->range)
                                  : diags.report(diag::err_shared_over_device_limit, crossing->call->range);
  d << fn->name << total;
  if (info.sharedBudget >= 0) d << info.sharedBudget;
  for (const SharedAllocation& a : info.sharedAllocations)
    if (a.bytes >= 0) d.note(diag::note_shared_allocation, a.call->range, {std::to_string(a.bytes)});
}

}  // namespace tessera
