// Text about builtins, dtypes and policies for hover, completion and signature help, all read
// from the tables (sema/Builtins.def, basic/DTypes.def).
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "sema/Builtins.h"
#include "sema/DType.h"

namespace tessera::lsp {

// "tessera.tile.dot" / "ts.tile.dot" -> "tile.dot".
std::string_view stripTesseraPrefix(std::string_view name);

// "tile.dot(a: tile, b: tile, *, accum: dtype = ?) -> tile" (a value: "grid_groups: i64").
std::string builtinLabel(const BuiltinInfo& b);
// Markdown: the signature in a code block, the doc line, where it is allowed, its effects.
std::string builtinMarkdown(const BuiltinInfo& b);
std::string dtypeMarkdown(DType d, std::string_view spelling);
std::string policyMarkdown(const PolicyInfo& p);
// The parameter labels of the signature, in order (for signature help).
std::vector<std::string> builtinParamLabels(const BuiltinInfo& b);

}  // namespace tessera::lsp
