// `tesserac --emit=tokens`: one token per line, `L:C-L:C Kind 'text'` (end exclusive).
#include <cstdio>

#include "frontend/ASTDump.h"

namespace tessera {

namespace {
// Quotes and control characters escaped, so a token's text reads back unambiguously on one line.
void writeEscaped(std::ostream& os, std::string_view text) {
  for (unsigned char c : text) {
    switch (c) {
      case '\n': os << "\\n"; break;
      case '\r': os << "\\r"; break;
      case '\t': os << "\\t"; break;
      case '\\': os << "\\\\"; break;
      case '\'': os << "\\'"; break;
      default:
        if (c < 0x20 || c == 0x7f) {
          char buf[8];
          std::snprintf(buf, sizeof buf, "\\x%02x", c);
          os << buf;
        } else {
          os << static_cast<char>(c);
        }
    }
  }
}
}  // namespace

void dumpTokens(const std::vector<Token>& tokens, const SourceManager& sm, std::ostream& os) {
  for (const Token& t : tokens) {
    LineColumn b = sm.lineColumn(t.range.begin), e = sm.lineColumn(t.range.end);
    os << b.line << ':' << b.column << '-' << e.line << ':' << e.column << ' ' << tokenKindName(t.kind);
    bool layout = t.isOneOf(TokenKind::Newline, TokenKind::Indent, TokenKind::Dedent, TokenKind::Eof);
    if (!layout) {
      os << " '";
      writeEscaped(os, t.text);
      os << '\'';
    }
    os << '\n';
  }
}

}  // namespace tessera
