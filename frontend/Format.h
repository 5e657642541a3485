// The source formatter (`tesserac --format`, the language server's formatting requests).
// It works on the token stream with comments kept, so it needs no successful parse: it re-emits
// every logical line with canonical spacing and 4-space indentation, keeps comments (re-indented
// to their block) and blank lines (at most two in a row), and keeps the line breaks inside
// brackets and after backslashes. Formatting is idempotent: format(format(x)) == format(x).
#pragma once

#include <string>
#include <string_view>

namespace tessera {

struct FormatResult {
  bool ok = false;
  std::string text;   // the formatted buffer when ok
  std::string error;  // why not, otherwise (lexical errors, or the self-check failed)
};

// Formats a whole buffer. Refuses a buffer with lexical errors (unterminated strings, bad
// indentation), and checks its own output: the formatted text must lex to the same tokens.
FormatResult formatSource(std::string_view text, std::string_view bufferName = "<input>");

}  // namespace tessera
