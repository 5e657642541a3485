// The textual form of Tile IR (.tir): printer and parser. print(parse(print(m))) == print(m),
// byte for byte. Grammar and examples: docs/tile-ir.md.
#pragma once

#include <memory>
#include <ostream>
#include <string>

#include "basic/Diagnostics.h"
#include "ir/IR.h"

namespace tessera::ir {

std::string printModule(const Module& m);
// One op (with its regions) as it would appear inside a function, for debugging and tests.
std::string printOp(const Operation& op);

// Parses the bytes [begin, end) of buffer `file` (end == UINT32_MAX: to the end). Errors go to
// `diags` with exact locations; the result is null after the first error.
std::unique_ptr<Module> parseModule(const SourceManager& sm, FileID file, DiagnosticEngine& diags, uint32_t begin = 0,
                                    uint32_t end = UINT32_MAX);

// Maximum nesting of regions, arrays and types the parser accepts (keeps recursion bounded).
constexpr unsigned kMaxNesting = 128;

}  // namespace tessera::ir
