//===- ProfileCost.cpp - Bytes and flops of a launch, for the profile -------------------------===//
#include <vector>

#include "runtime/LaunchPlan.h"
#include "runtime/Profiler.h"

namespace tessera::rt::profile {

uint64_t launchBytes(const LaunchPlan& plan) {
  const tessera_kernel_desc& k = *plan.kernel;
  uint64_t total = 0;
  for (uint32_t i = 0; i < k.num_params && i < plan.tensors.size(); ++i) {
    const tessera_param_desc& p = k.params[i];
    if (p.kind != TESSERA_PARAM_TENSOR) continue;
    uint64_t n = 1;
    for (int32_t d = 0; d < p.rank; ++d) n *= static_cast<uint64_t>(plan.tensors[i].shape[d]);
    uint64_t bytes = (n * tessera_dtype_bits(p.dtype) + 7) / 8;
    bool mut = p.flags & TESSERA_PARAM_MUT;
    total += bytes * (mut && !(p.flags & TESSERA_PARAM_WRITE_ONLY) ? 2 : 1);
  }
  return total;
}

double launchFlops(const LaunchPlan& plan) {
  const tessera_kernel_desc& k = *plan.kernel;
  if (!tessera_kernel_has_v3(&k) || !k.flops_len) return 0;
  std::vector<double> stack;
  for (uint32_t i = 0; i < k.flops_len; ++i) {
    const tessera_expr_op& op = k.flops[i];
    if (op.op == TESSERA_EXPR_CONST || op.op == TESSERA_EXPR_SYMBOL) {
      stack.push_back(op.op == TESSERA_EXPR_CONST                            ? double(op.value)
                      : static_cast<size_t>(op.symbol) < plan.symbols.size() ? double(plan.symbols[op.symbol])
                                                                             : 0.0);
      continue;
    }
    if (stack.size() < 2) return 0;
    double b = stack.back();
    stack.pop_back();
    double& a = stack.back();
    switch (op.op) {
      case TESSERA_EXPR_ADD: a += b; break;
      case TESSERA_EXPR_SUB: a -= b; break;
      case TESSERA_EXPR_MUL: a *= b; break;
      case TESSERA_EXPR_DIV: a = b ? a / b : 0; break;
      case TESSERA_EXPR_CEIL_DIV: a = b ? static_cast<double>(static_cast<int64_t>((a + b - 1) / b)) : 0; break;
      case TESSERA_EXPR_MOD: a = b ? static_cast<double>(static_cast<int64_t>(a) % static_cast<int64_t>(b)) : 0; break;
      default: return 0;
    }
  }
  return stack.size() == 1 ? stack[0] : 0;
}

}  // namespace tessera::rt::profile
