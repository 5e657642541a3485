// @kernel(flops="2*M*N*K"): the text of a cost expression over a kernel's shape symbols, read
// into the postfix program the kernel descriptor carries (tessera_kernel_desc.flops).
#pragma once

#include <string>
#include <vector>

#include "codegen/lower/KernelInterface.h"

namespace tessera::codegen {

// Integers, symbols of `symbols`, + - * / (or //) %, parentheses; * / % bind tighter than + -.
// On failure returns false; `unknown` then names a symbol that is not in `symbols`, or is empty
// when the text is not such an expression.
bool parseCostExpression(const std::string& text, const std::vector<std::string>& symbols, std::vector<ExtentOp>& out,
                         std::string& unknown);

}  // namespace tessera::codegen
