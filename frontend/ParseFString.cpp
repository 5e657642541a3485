// f-strings: the scanner hands over one FStringLiteral token; this splits it into literal text
// (with `{{`/`}}` escapes and backslash escapes decoded) and replacement fields `{expr!r:spec}`,
// whose expressions are lexed with lexFragment so every location stays exact.
#include "frontend/FrontendDiagnostics.h"
#include "frontend/Lexer.h"
#include "frontend/ParserImpl.h"

namespace tessera {

Expr* Parser::parseFieldExpr(SourceRange fieldRange) {
  Expr* e = parseExprList(false);
  if (!panic_ && !at(TokenKind::Eof) && !swallowLexError())
    error(diag::err_parse_fstring_extra_tokens, SourceRange(tok().range.begin, fieldRange.end));
  return e;
}

void Parser::splitFString(const Token& t, FStringExpr* fs) {
  std::string_view text = t.text;
  const uint32_t base = t.range.begin.offset;
  auto loc = [&](size_t k) { return SourceLoc{base + static_cast<uint32_t>(k)}; };
  size_t i = 0;
  bool raw = false;
  while (i < text.size() && text[i] != '\'' && text[i] != '"') {
    if (text[i] == 'r' || text[i] == 'R') raw = true;
    ++i;
  }
  if (i >= text.size()) return;
  const char q = text[i];
  size_t qlen = (i + 2 < text.size() && text[i + 1] == q && text[i + 2] == q) ? 3 : 1;
  const size_t contentBegin = i + qlen;
  size_t contentEnd = text.size();
  if (contentEnd >= contentBegin + qlen) {
    bool closed = true;
    for (size_t k = 0; k < qlen; ++k) closed &= text[contentEnd - 1 - k] == q;
    if (closed) contentEnd -= qlen;
  }

  std::string lit;
  size_t litBegin = contentBegin;
  auto flush = [&](size_t end) {
    if (lit.empty()) return;
    FStringPart p;
    p.range = SourceRange(loc(litBegin), loc(end));
    p.literal = raw ? lit : decodeEscapes(lit);
    fs->parts.push_back(std::move(p));
    lit.clear();
  };
  auto addLit = [&](size_t at, std::string_view s) {
    if (lit.empty()) litBegin = at;
    lit += s;
  };

  size_t k = contentBegin;
  while (k < contentEnd) {
    char c = text[k];
    if (c == '\\' && !raw && k + 1 < contentEnd) {
      addLit(k, text.substr(k, 2));
      k += 2;
      continue;
    }
    if (c == '}') {
      if (k + 1 < contentEnd && text[k + 1] == '}') {
        addLit(k, "}");
        k += 2;
        continue;
      }
      error(diag::err_parse_fstring_single_brace, SourceRange(loc(k), loc(k + 1))).fixitInsert(loc(k), "}");
      ++k;
      continue;
    }
    if (c != '{') {
      addLit(k, text.substr(k, 1));
      ++k;
      continue;
    }
    if (k + 1 < contentEnd && text[k + 1] == '{') {
      addLit(k, "{");
      k += 2;
      continue;
    }
    flush(k);
    // A replacement field: the expression ends at a top-level '!' (not '!='), ':' or '}'.
    const size_t fieldBegin = k++;
    const size_t exprBegin = k;
    int depth = 0;
    char quote = 0;
    for (; k < contentEnd; ++k) {
      char d = text[k];
      if (quote) {
        if (d == quote) quote = 0;
        continue;
      }
      if (d == '\'' || d == '"') {
        quote = d;
      } else if (d == '(' || d == '[' || d == '{') {
        ++depth;
      } else if ((d == ')' || d == ']' || d == '}') && depth > 0) {
        --depth;
      } else if (depth == 0 && (d == '}' || d == ':' || (d == '!' && !(k + 1 < contentEnd && text[k + 1] == '=')))) {
        break;
      }
    }
    const size_t exprEnd = k;
    FStringPart part;
    bool blank = true;
    for (size_t j = exprBegin; j < exprEnd; ++j)
      if (text[j] != ' ' && text[j] != '\t' && text[j] != '\n' && text[j] != '\r') blank = false;
    if (blank) {
      size_t end = k < contentEnd ? k + 1 : k;
      error(diag::err_parse_fstring_empty_expr, SourceRange(loc(fieldBegin), loc(end)));
    } else {
      SourceRange exprRange(loc(exprBegin), loc(exprEnd));
      std::vector<Token> toks = lexFragment(sm_, exprRange, diags_);
      Parser sub(toks, sm_, ctx_, diags_);
      part.expr = sub.parseFieldExpr(exprRange);
    }
    if (k < contentEnd && text[k] == '!') {
      size_t cb = ++k;
      while (k < contentEnd && text[k] != ':' && text[k] != '}') ++k;
      std::string_view conv = text.substr(cb, k - cb);
      if (conv == "r" || conv == "s" || conv == "a")
        part.conversion.assign(conv);
      else
        error(diag::err_parse_fstring_bad_conversion, SourceRange(loc(cb), loc(k > cb ? k : cb + 1)))
            << std::string(conv);
    }
    if (k < contentEnd && text[k] == ':') {
      size_t sb = ++k;
      int nest = 0;
      for (; k < contentEnd; ++k) {
        if (text[k] == '{')
          ++nest;
        else if (text[k] == '}' && nest-- == 0)
          break;
      }
      part.formatSpec.assign(text.substr(sb, k - sb));
    }
    if (k >= contentEnd) {
      if (!blank)
        error(diag::err_parse_fstring_unterminated_field, SourceRange(loc(fieldBegin), loc(fieldBegin + 1)))
            .fixitInsert(loc(contentEnd), "}");
      part.range = SourceRange(loc(fieldBegin), loc(contentEnd));
      if (part.expr) fs->parts.push_back(std::move(part));
      break;
    }
    ++k;  // '}'
    part.range = SourceRange(loc(fieldBegin), loc(k));
    if (part.expr) fs->parts.push_back(std::move(part));
  }
  flush(contentEnd);
}

}  // namespace tessera
