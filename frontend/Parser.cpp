// Parser entry points, token helpers and the diagnostics/recovery machinery (see ParserImpl.h).
#include "frontend/Parser.h"

#include "frontend/FrontendDiagnostics.h"
#include "frontend/Lexer.h"
#include "frontend/ParserImpl.h"

namespace tessera {

namespace {
// Bracket nesting as the scanner counts it: a stray closer never takes the depth below 0.
void trackBracketDepth(TokenKind k, unsigned& depth) {
  switch (k) {
    case TokenKind::l_paren:
    case TokenKind::l_square:
    case TokenKind::l_brace: ++depth; break;
    case TokenKind::r_paren:
    case TokenKind::r_square:
    case TokenKind::r_brace:
      if (depth) --depth;
      break;
    default: break;
  }
}

// The parser wants a stream without Comment tokens that ends with Eof; copy only when needed.
const std::vector<Token>& selectTokens(const std::vector<Token>& in, std::vector<Token>& scratch) {
  bool clean = !in.empty() && in.back().kind == TokenKind::Eof;
  if (clean)
    for (const Token& t : in)
      if (t.kind == TokenKind::Comment) {
        clean = false;
        break;
      }
  if (clean) return in;
  scratch.reserve(in.size() + 1);
  for (const Token& t : in)
    if (t.kind != TokenKind::Comment) scratch.push_back(t);
  if (scratch.empty() || scratch.back().kind != TokenKind::Eof) {
    Token eof;
    eof.kind = TokenKind::Eof;
    SourceLoc end = scratch.empty() ? SourceLoc{} : scratch.back().range.end;
    eof.range = SourceRange(end, end);
    scratch.push_back(eof);
  }
  return scratch;
}
}  // namespace

Parser::Parser(const std::vector<Token>& tokens, const SourceManager& sm, ASTContext& ctx, DiagnosticEngine& diags)
    : toks_(&selectTokens(tokens, filtered_)), sm_(sm), ctx_(ctx), diags_(diags) {
  prevEnd_ = toks_->front().range.begin;
  blockColumns_.reserve(16);
  blockColumns_.push_back(1);
  // Bracket balance at the end, as the scanner counts it (a stray closer never goes below 0).
  unsigned depth = 0;
  for (const Token& t : *toks_) trackBracketDepth(t.kind, depth);
  unbalancedAtEof_ = depth > 0;
  lastLogicalLineStart_ = finalLineStart(*toks_);
}

// Index of the first token of the final logical line: just after the last Newline that real
// tokens follow.
size_t Parser::finalLineStart(const std::vector<Token>& v) {
  for (size_t j = v.size(); j-- > 0;)
    if (v[j].is(TokenKind::Newline) && j + 1 < v.size() && !v[j + 1].isOneOf(TokenKind::Dedent, TokenKind::Eof))
      return j + 1;
  return 0;
}

bool Parser::startsPhysicalLine(size_t i) const {
  if (i == 0 || i >= toks_->size()) return false;
  const Token& prev = (*toks_)[i - 1];
  const Token& t = (*toks_)[i];
  if (prev.isOneOf(TokenKind::Newline, TokenKind::Indent, TokenKind::Dedent)) return true;
  if (!prev.range.end.valid() || !t.range.begin.valid() || t.range.begin < prev.range.end) return false;
  std::string_view gap = sm_.text(SourceRange(prev.range.end, t.range.begin));
  return gap.find('\n') != std::string_view::npos;
}

void Parser::skipToLineEnd() {
  while (!at(TokenKind::Newline) && !at(TokenKind::Eof)) {
    // Resynchronise only inside the joined line, never at its first token (which would loop).
    if (unbalancedAtEof_ && pos_ > lastLogicalLineStart_ && pos_ > 0 &&
        !(*toks_)[pos_ - 1].isOneOf(TokenKind::Newline, TokenKind::Indent, TokenKind::Dedent) &&
        !tok().isOneOf(TokenKind::Indent, TokenKind::Dedent) && startsPhysicalLine(pos_)) {
      resyncLayout();
      return;
    }
    consume();
  }
}

void Parser::resyncLayout() {
  // Rebuild Newline/Indent/Dedent for the tokens from pos_ on, as the scanner would have done
  // had the open bracket been closed at the end of the previous physical line.
  const std::vector<Token>& old = *toks_;
  std::vector<Token>& out = repaired_.emplace_back();
  out.reserve(old.size() - pos_ + 16);
  std::vector<uint32_t> levels = blockColumns_;
  unsigned depth = 0;
  auto layout = [&](TokenKind k, SourceLoc at) {
    Token t;
    t.kind = k;
    t.range = SourceRange(at, at);
    out.push_back(t);
  };
  SourceLoc lastEnd = old[pos_].range.begin;
  size_t start = pos_;
  for (size_t i = start; i < old.size(); ++i) {
    const Token& t = old[i];
    if (t.isOneOf(TokenKind::Newline, TokenKind::Indent, TokenKind::Dedent, TokenKind::Eof)) continue;
    if (depth == 0 && (i == start || startsPhysicalLine(i))) {
      layout(TokenKind::Newline, lastEnd);
      uint32_t col = sm_.lineColumn(t.range.begin).column;
      if (col > levels.back()) {
        levels.push_back(col);
        layout(TokenKind::Indent, t.range.begin);
      } else {
        while (levels.size() > 1 && col < levels.back()) {
          levels.pop_back();
          layout(TokenKind::Dedent, t.range.begin);
        }
      }
    }
    trackBracketDepth(t.kind, depth);
    Token copy = t;
    out.push_back(copy);
    lastEnd = t.range.end;
  }
  layout(TokenKind::Newline, lastEnd);
  SourceLoc eofLoc = old.back().range.begin;
  for (size_t i = levels.size(); i-- > 1;) layout(TokenKind::Dedent, eofLoc);
  out.push_back(old.back());  // Eof
  toks_ = &out;
  pos_ = 0;
  unbalancedAtEof_ = depth > 0;
  lastLogicalLineStart_ = finalLineStart(out);
}

DiagBuilder Parser::error(DiagID id, SourceRange r) {
  if (panic_ || diags_.stopped()) return DiagBuilder(nullptr, id, r);
  return diags_.report(id, r);
}

DiagBuilder Parser::fail(DiagID id, SourceRange r) {
  DiagBuilder b = error(id, r);
  panic_ = true;
  return b;
}

bool Parser::enterExprLevel() {
  if (++exprDepth_ <= kMaxExprDepth) return true;
  if (!panic_) fail(diag::err_parse_too_deep, tok().range) << static_cast<unsigned>(kMaxExprDepth);
  return false;
}

void Parser::skipIndentedBlock() {
  unsigned open = 0;
  do {
    if (at(TokenKind::Indent))
      ++open;
    else if (at(TokenKind::Dedent))
      --open;
    consume();
  } while (open > 0 && !at(TokenKind::Eof));
}

bool Parser::swallowLexError() {
  if (!at(TokenKind::Error)) return false;
  consume();
  panic_ = true;
  return true;
}

SourceRange Parser::hereRange() const {
  const Token& t = tok();
  if (t.isOneOf(TokenKind::Newline, TokenKind::Eof, TokenKind::Indent, TokenKind::Dedent)) return insertionPoint();
  return t.range;
}

static const char* closerSpelling(TokenKind k) {
  switch (k) {
    case TokenKind::r_paren: return ")";
    case TokenKind::r_square: return "]";
    case TokenKind::r_brace: return "}";
    default: return "?";
  }
}

bool Parser::expectCloser(TokenKind closer, const Token& opener, const char* between) {
  if (tryConsume(closer)) return true;
  if (swallowLexError()) return false;
  std::string open(opener.text);
  if (at(TokenKind::r_paren) || at(TokenKind::r_square) || at(TokenKind::r_brace)) {
    DiagBuilder b = fail(diag::err_parse_mismatched_closer, tok().range);
    b << std::string(tok().text) << open;
    b.note(diag::note_parse_to_match, opener.range, {open});
  } else if (between && startsExpr(tok()) && !startsPhysicalLine(pos_)) {
    DiagBuilder b = fail(diag::err_parse_missing_comma, tok().range);
    b << between;
    b.fixitInsert(prevEnd_, ",");
    return false;
  } else if (neverClosed(opener)) {
    // The scanner joined the following lines into this one: say so at the opener, and read on
    // from the start of the physical line where the parser noticed.
    fail(diag::err_parse_unclosed_bracket, opener.range) << open;
    size_t openerIndex = static_cast<size_t>(&opener - toks_->data());
    size_t i = pos_;
    while (i > openerIndex + 1 && !startsPhysicalLine(i)) --i;
    if (i > openerIndex && startsPhysicalLine(i)) {
      pos_ = i;
      resyncLayout();
    }
  } else {
    DiagBuilder b = fail(diag::err_parse_expected_closer, startsPhysicalLine(pos_) ? insertionPoint() : hereRange());
    b << closerSpelling(closer);
    b.note(diag::note_parse_to_match, opener.range, {open});
  }
  return false;
}

bool Parser::neverClosed(const Token& opener) const {
  if (!unbalancedAtEof_ || panic_) return false;
  const Token* base = toks_->data();
  if (&opener < base || &opener >= base + toks_->size()) return false;  // from before a resync
  size_t openerIndex = static_cast<size_t>(&opener - base);
  if (openerIndex < lastLogicalLineStart_) return false;
  if (tok().isOneOf(TokenKind::Newline, TokenKind::Eof, TokenKind::Indent, TokenKind::Dedent)) return false;
  if (startsPhysicalLine(pos_)) return false;
  return sm_.lineColumn(opener.range.begin).line != sm_.lineColumn(tok().range.begin).line;
}

bool Parser::startsExpr(const Token& t) {
  switch (t.kind) {
    case TokenKind::Identifier:
    case TokenKind::IntLiteral:
    case TokenKind::FloatLiteral:
    case TokenKind::StringLiteral:
    case TokenKind::FStringLiteral:
    case TokenKind::kw_True:
    case TokenKind::kw_False:
    case TokenKind::kw_None:
    case TokenKind::kw_not:
    case TokenKind::ellipsis:
    case TokenKind::l_paren:
    case TokenKind::l_square:
    case TokenKind::l_brace:
    case TokenKind::minus:
    case TokenKind::plus:
    case TokenKind::tilde:
    case TokenKind::kw_lambda:
    case TokenKind::kw_await:
    case TokenKind::kw_mut: return true;
    default: return false;
  }
}

Stmt* Parser::makeErrorStmt(SourceLoc begin) {
  SourceLoc end = prevEnd_;
  if (end < begin) end = begin;
  return ctx_.make<ErrorStmt>(SourceRange(begin, end));
}

Module* Parser::parseModule(FileID file) {
  Module* m = ctx_.makeModule(file);
  m->stmts.reserve(toks_->size() / 8 + 4);
  SourceLoc begin = sm_.bufferStart(file);  // the module spans its whole file
  while (!at(TokenKind::Eof) && !diags_.stopped()) {
    if (at(TokenKind::Newline) || at(TokenKind::Dedent)) {  // stray layout tokens (already diagnosed)
      consume();
      continue;
    }
    parseStatementInto(m->stmts);
  }
  m->range = SourceRange(begin, toks_->back().range.end.valid() ? toks_->back().range.end : prevEnd_);
  setDocstring(m->stmts, m->docstring);
  return m;
}

Module* parseTokens(const std::vector<Token>& tokens, const SourceManager& sm, FileID file, ASTContext& ctx,
                    DiagnosticEngine& diags) {
  Parser p(tokens, sm, ctx, diags);
  return p.parseModule(file);
}

Module* parseBuffer(const SourceManager& sm, FileID file, ASTContext& ctx, DiagnosticEngine& diags) {
  std::vector<Token> tokens = lexBuffer(sm, file, diags);
  return parseTokens(tokens, sm, file, ctx, diags);
}

}  // namespace tessera
