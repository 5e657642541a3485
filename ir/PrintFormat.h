// The `format` attribute of tile.print: the line's text with `{}` where each operand goes and
// `{{` / `}}` for literal braces. Read by the verifier and by code generation.
#pragma once

#include <string>
#include <vector>

namespace tessera::ir {

// The literal text around the placeholders (one piece more than there are placeholders), braces
// unescaped; false when a brace is neither doubled nor part of `{}`.
inline bool splitPrintFormat(const std::string& format, std::vector<std::string>& pieces) {
  pieces.assign(1, "");
  for (size_t i = 0; i < format.size(); ++i) {
    char ch = format[i];
    bool next = i + 1 < format.size();
    if (ch == '{' && next && format[i + 1] == '}') {
      pieces.emplace_back();
      ++i;
    } else if ((ch == '{' || ch == '}') && next && format[i + 1] == ch) {
      pieces.back() += ch;
      ++i;
    } else if (ch == '{' || ch == '}') {
      return false;
    } else {
      pieces.back() += ch;
    }
  }
  return true;
}

}  // namespace tessera::ir
