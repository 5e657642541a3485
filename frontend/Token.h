// Tokens: a kind from the catalog (TokenKinds.def), the exact source range, and the spelling.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "basic/SourceManager.h"

namespace tessera {

enum class TokenKind : uint8_t {
#define TOK(NAME) NAME,
#include "frontend/TokenKinds.def"
  NumTokenKinds
};

// "Identifier", "kw_def", "l_paren", ...
const char* tokenKindName(TokenKind k);
// The fixed spelling of a keyword or punctuator ("def", "("), or nullptr.
const char* tokenSpelling(TokenKind k);
// What a diagnostic calls the kind: "'('", "identifier", "newline", "end of file", ...
std::string tokenDescription(TokenKind k);
// The keyword spelled `text`, or Identifier.
TokenKind keywordKind(std::string_view text);
bool isKeyword(TokenKind k);

struct Token {
  TokenKind kind = TokenKind::Eof;
  SourceRange range;
  std::string_view text;  // points into the SourceManager's buffer (empty for layout tokens)
  // True when a newline or comment precedes the token on its physical line start.
  bool atLineStart = false;

  bool is(TokenKind k) const { return kind == k; }
  bool isNot(TokenKind k) const { return kind != k; }
  template <class... Ks>
  bool isOneOf(Ks... ks) const {
    return ((kind == ks) || ...);
  }
};

// Literal decoding, shared by the parser and sema. The scanner has already diagnosed malformed
// literals, so these only fail (nullopt) on values that do not fit.
// Integers: decimal/hex/octal/binary, '_' separators, size suffixes _KiB/_MiB/_GiB.
std::optional<uint64_t> decodeIntLiteral(std::string_view text);
std::optional<double> decodeFloatLiteral(std::string_view text);
// Strings: prefix (r, f, rf, ...) and quotes stripped, escapes processed unless raw.
std::string decodeStringLiteral(std::string_view text);
// Python's backslash escapes in a literal's body (unknown ones stay as written); shared by
// strings and the literal parts of f-strings.
std::string decodeEscapes(std::string_view body);

}  // namespace tessera
