// Parser entry points, token helpers and the diagnostics/recovery machinery (see ParserImpl.h).
#include "frontend/Parser.h"

#include "frontend/Lexer.h"
#include "frontend/ParserImpl.h"

namespace tessera {

namespace {
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
    : toks_(selectTokens(tokens, filtered_)), sm_(sm), ctx_(ctx), diags_(diags) {
  prevEnd_ = toks_.front().range.begin;
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

std::string Parser::describe(const Token& t) const {
  switch (t.kind) {
    case TokenKind::Newline: return "newline";
    case TokenKind::Eof: return "end of file";
    case TokenKind::Indent: return "indent";
    case TokenKind::Dedent: return "dedent";
    default: return "'" + std::string(t.text) + "'";
  }
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
    DiagBuilder b = fail(DiagID::err_parse_mismatched_closer, tok().range);
    b << std::string(tok().text) << open;
    b.note(DiagID::note_parse_to_match, opener.range, {open});
  } else if (between && startsExpr(tok()) && !tok().atLineStart) {
    DiagBuilder b = fail(DiagID::err_parse_missing_comma, tok().range);
    b << between;
    b.fixitInsert(prevEnd_, ",");
    return false;
  } else {
    DiagBuilder b = fail(DiagID::err_parse_expected_closer, hereRange());
    b << closerSpelling(closer);
    b.note(DiagID::note_parse_to_match, opener.range, {open});
  }
  return false;
}

bool Parser::startsExpr(const Token& t) {
  switch (t.kind) {
    case TokenKind::Identifier: case TokenKind::IntLiteral: case TokenKind::FloatLiteral:
    case TokenKind::StringLiteral: case TokenKind::FStringLiteral: case TokenKind::kw_True:
    case TokenKind::kw_False: case TokenKind::kw_None: case TokenKind::kw_not: case TokenKind::ellipsis:
    case TokenKind::l_paren: case TokenKind::l_square: case TokenKind::l_brace: case TokenKind::minus:
    case TokenKind::plus: case TokenKind::tilde: case TokenKind::kw_lambda: case TokenKind::kw_await:
    case TokenKind::kw_mut:
      return true;
    default:
      return false;
  }
}

Stmt* Parser::makeErrorStmt(SourceLoc begin) {
  SourceLoc end = prevEnd_;
  if (end < begin) end = begin;
  return ctx_.make<ErrorStmt>(SourceRange(begin, end));
}

Module* Parser::parseModule(FileID file) {
  Module* m = ctx_.makeModule(file);
  m->stmts.reserve(toks_.size() / 8 + 4);
  SourceLoc begin = tok().range.begin;
  while (!at(TokenKind::Eof) && !diags_.stopped()) {
    if (at(TokenKind::Newline) || at(TokenKind::Dedent)) {  // stray layout tokens (already diagnosed)
      consume();
      continue;
    }
    parseStatementInto(m->stmts);
  }
  m->range = SourceRange(begin, tok().range.end.valid() ? tok().range.end : prevEnd_);
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
