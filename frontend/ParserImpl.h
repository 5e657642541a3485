// The parser's internal state, shared by Parser.cpp (tokens, recovery, modules), ParseStmt.cpp
// (statements and blocks), ParseExpr.cpp (expressions) and ParseFString.cpp (f-string fields).
//
// Error handling: a syntax error that leaves the parser unsure where it is calls fail(), which
// reports and enters "panic" mode; while panicking, further reports are dropped, so one mistake
// never yields a cascade. The statement loop leaves panic mode by skipping to the end of the
// logical line (respecting Indent/Dedent) and recording an ErrorStmt. Errors after which the tree
// is still well formed (a chained comparison, 'break' outside a loop) call error() and parsing
// goes on normally.
#pragma once

#include <deque>
#include <string>
#include <string_view>
#include <vector>

#include "basic/Diagnostics.h"
#include "frontend/AST.h"
#include "frontend/Token.h"

namespace tessera {

class Parser {
 public:
  Parser(const std::vector<Token>& tokens, const SourceManager& sm, ASTContext& ctx, DiagnosticEngine& diags);

  Module* parseModule(FileID file);
  // Parses a whole f-string replacement field (tokens from lexFragment): one expression list.
  Expr* parseFieldExpr(SourceRange fieldRange);

 private:
  // ---------------------------------------------------------------- tokens
  const Token& tok() const { return (*toks_)[pos_]; }
  const Token& peek(size_t n = 1) const {
    size_t i = pos_ + n;
    return i < toks_->size() ? (*toks_)[i] : toks_->back();
  }
  bool at(TokenKind k) const { return (*toks_)[pos_].kind == k; }
  // prevEnd_ follows the last consumed token that is not a layout token, so node ranges end at
  // real text and a missing ':' is reported right after the header.
  void consume() {
    const Token& t = (*toks_)[pos_];
    if (t.kind == TokenKind::Eof) return;
    if (!t.isOneOf(TokenKind::Newline, TokenKind::Indent, TokenKind::Dedent)) prevEnd_ = t.range.end;
    ++pos_;
  }
  bool tryConsume(TokenKind k) {
    if (!at(k)) return false;
    consume();
    return true;
  }
  SourceLoc startLoc() const { return tok().range.begin; }
  SourceRange rangeFrom(SourceLoc begin) const { return {begin, prevEnd_}; }
  // Where a missing token should have been: right after the previous token.
  SourceRange insertionPoint() const { return SourceRange(prevEnd_, prevEnd_); }
  bool atLineEnd() const { return at(TokenKind::Newline) || at(TokenKind::Eof); }

  // ---------------------------------------------------------------- diagnostics
  // Reports unless panicking or stopped (returns a detached builder then).
  DiagBuilder error(DiagID id, SourceRange r);
  // Reports and enters panic mode.
  DiagBuilder fail(DiagID id, SourceRange r);
  // The current token is a scanner Error token (already diagnosed): panic silently.
  bool swallowLexError();
  // "expected X" at the current token (a Newline/Eof is reported right after the previous token).
  SourceRange hereRange() const;
  // Expects the closer of a bracket pair; reports "expected ')'" with a note at the opener.
  // `between` ("arguments", ...) turns "expected ')'" into "expected ',' between arguments" when
  // the next token starts an expression on the same line.
  bool expectCloser(TokenKind closer, const Token& opener, const char* between = nullptr);
  static bool startsExpr(const Token& t);
  // The opener was never closed: the scanner joined later lines into its logical line, and the
  // parser failed in the middle of one of them.
  bool neverClosed(const Token& opener) const;

  // ---------------------------------------------------------------- statements (ParseStmt.cpp)
  void parseStatementInto(std::vector<Stmt*>& out);
  void parseSimpleStatementsInto(std::vector<Stmt*>& out);
  Stmt* parseSimpleStatement();
  Stmt* parseExprOrAssignment();
  Stmt* parseReturn();
  Stmt* parseImport();
  Stmt* parseImportFrom();
  bool parseDottedName(std::string& name, SourceRange& range);
  bool parseImportAlias(ImportName& n);
  Stmt* parseIf(bool isElif);
  // The condition of an if/elif/while; `what` names it for the '=' instead of '==' error.
  Expr* parseCondition(const char* what);
  Stmt* parseWhile();
  Stmt* parseFor();
  Stmt* parseWith();
  Stmt* parseFunctionDef();
  bool parseDecorator(Decorator& d);
  void parseParameters(FunctionDefStmt* fn);
  Expr* parseParamAnnotation();
  void parseUnsupportedStatement(std::vector<Stmt*>& out);
  void parseStrayClause(std::vector<Stmt*>& out);
  // After a compound header: ':' then a suite. `what` names the header for messages.
  void parseSuite(Block& block, const char* colonWhat, const char* blockWhat, SourceLoc headerStart);
  void parseLoopSuites(Block& body, Block& elseBlock, const char* colonWhat, const char* blockWhat, SourceLoc begin);
  static void setBlockRange(Block& block);
  void parseIndentedBlock(Block& block);
  // Skips the rest of a bad logical line; swallows an indented block that follows it.
  // Skips to the end of the logical line. When a bracket was never closed, the scanner joined the
  // rest of the file into this line; then the layout is rebuilt from the next physical line so
  // that the statements after the error are still read.
  void skipToLineEnd();
  bool startsPhysicalLine(size_t i) const;
  void resyncLayout();
  static size_t finalLineStart(const std::vector<Token>& v);
  // Pushes an ErrorStmt from `begin` to the line's end onto `out` (when given).
  void skipLine(SourceLoc begin, std::vector<Stmt*>* out);
  SourceRange firstRealTokenRange() const;
  Stmt* makeErrorStmt(SourceLoc begin);
  void checkAssignTarget(Expr* e, bool augmented);
  void checkForTarget(Expr* e);
  void setDocstring(const std::vector<Stmt*>& stmts, std::string& doc);

  // ---------------------------------------------------------------- expressions (ParseExpr.cpp)
  // expression list: `a, b, *c` (a TupleExpr when there is a comma); stars allowed when asked.
  Expr* parseExprList(bool allowStar);
  // Target list of a `for` (stops before 'in').
  Expr* parseTargetList();
  Expr* parseExpr();  // conditional expression
  Expr* parseOr();
  Expr* parseAnd();
  Expr* parseBoolChain(TokenKind keyword, BinaryOp op, Expr* (Parser::*operand)());
  Expr* parseNot();
  Expr* parseComparison();
  Expr* parseBinary(int minPrec);
  bool atCIncrement() const;
  void reportCIncrement(Expr* operand);
  Expr* parseUnary();
  Expr* parsePower();
  Expr* parsePostfix();
  // Calls, subscripts and attributes after `e` (which starts at `begin`).
  Expr* parseTrailers(Expr* e, SourceLoc begin);
  Expr* parsePrimary();
  Expr* parseStarOrExpr(bool allowStar, bool bitOrOnly);
  Expr* parseParenthesized();
  Expr* parseList();
  Expr* parseBrace();
  Expr* parseStrings();
  void parseCallArgs(CallExpr* call, const Token& open);
  void parseSubscriptItems(SubscriptExpr* sub, const Token& open);
  Expr* parseSliceOrExpr();
  void parseComprehensionClauses(ComprehensionExpr* comp);
  Expr* makeError(SourceLoc begin);
  Expr* parseMutInExpr();

  // ---------------------------------------------------------------- f-strings (ParseFString.cpp)
  void splitFString(const Token& t, FStringExpr* fs);

  std::vector<Token> filtered_;  // only when the stream carries Comment tokens or lacks Eof
  const std::vector<Token>* toks_;
  // Token streams rebuilt by resyncLayout (kept alive: earlier tokens may still be referenced).
  std::deque<std::vector<Token>> repaired_;
  bool unbalancedAtEof_ = false;        // the scanner reached the end inside an open bracket
  size_t lastLogicalLineStart_ = 0;     // index of the first token of the final logical line
  std::vector<uint32_t> blockColumns_;  // indentation column of each open block (module: 1)
  size_t pos_ = 0;
  SourceLoc prevEnd_;
  const SourceManager& sm_;
  ASTContext& ctx_;
  DiagnosticEngine& diags_;
  bool panic_ = false;
  unsigned loopDepth_ = 0;
  unsigned funcDepth_ = 0;

  // Nesting limits keep the recursive descent (and every later recursive walk of the tree)
  // within the stack on any input: expressions (brackets, unary operators and operator chains
  // count) nest at most kMaxExprDepth levels, blocks kMaxBlockDepth, `elif` chains kMaxElifs.
  static constexpr unsigned kMaxExprDepth = 1000;
  static constexpr unsigned kMaxBlockDepth = 100;
  static constexpr unsigned kMaxElifs = 1000;
  unsigned exprDepth_ = 0;
  unsigned blockDepth_ = 0;
  unsigned elifDepth_ = 0;
  // One more expression level; false (after reporting, and entering panic) past the limit.
  bool enterExprLevel();
  // Restores the expression depth on scope exit.
  struct ExprDepthScope {
    Parser& p;
    unsigned saved;
    explicit ExprDepthScope(Parser& parser) : p(parser), saved(parser.exprDepth_) {}
    ~ExprDepthScope() { p.exprDepth_ = saved; }
  };
  // Skips an indented block without parsing it (tokens up to the matching Dedent).
  void skipIndentedBlock();
};

}  // namespace tessera
