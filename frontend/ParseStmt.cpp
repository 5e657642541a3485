// Statements, blocks and the recovery at statement and block boundaries.
#include "frontend/ASTVisitor.h"
#include "frontend/FrontendDiagnostics.h"
#include "frontend/ParserImpl.h"

namespace tessera {

namespace {
bool isAugAssignOp(TokenKind k, BinaryOp& op) {
  switch (k) {
    case TokenKind::plusequal: op = BinaryOp::Add; return true;
    case TokenKind::minusequal: op = BinaryOp::Sub; return true;
    case TokenKind::starequal: op = BinaryOp::Mul; return true;
    case TokenKind::slashequal: op = BinaryOp::Div; return true;
    case TokenKind::slashslashequal: op = BinaryOp::FloorDiv; return true;
    case TokenKind::percentequal: op = BinaryOp::Mod; return true;
    case TokenKind::starstarequal: op = BinaryOp::Pow; return true;
    case TokenKind::atequal: op = BinaryOp::MatMul; return true;
    case TokenKind::ampequal: op = BinaryOp::BitAnd; return true;
    case TokenKind::pipeequal: op = BinaryOp::BitOr; return true;
    case TokenKind::caretequal: op = BinaryOp::BitXor; return true;
    case TokenKind::lesslessequal: op = BinaryOp::Shl; return true;
    case TokenKind::greatergreaterequal: op = BinaryOp::Shr; return true;
    default: return false;
  }
}

// What an invalid target is, for "cannot assign to {0}", by the expression's kind
// (frontend/ASTVisitor.h).
struct ExprDescription : ConstASTVisitor<ExprDescription, const char*> {
  const char* visitCallExpr(const CallExpr*) { return "a function call"; }
  const char* visitIntLiteralExpr(const IntLiteralExpr*) { return "a literal"; }
  const char* visitFloatLiteralExpr(const FloatLiteralExpr*) { return "a literal"; }
  const char* visitStringLiteralExpr(const StringLiteralExpr*) { return "a literal"; }
  const char* visitFStringExpr(const FStringExpr*) { return "a literal"; }
  const char* visitEllipsisExpr(const EllipsisExpr*) { return "a literal"; }
  const char* visitBoolLiteralExpr(const BoolLiteralExpr* e) { return e->value ? "True" : "False"; }
  const char* visitNoneLiteralExpr(const NoneLiteralExpr*) { return "None"; }
  const char* visitBinaryExpr(const BinaryExpr* e) {
    if (isComparison(e->op)) return "a comparison";
    if (e->op == BinaryOp::And || e->op == BinaryOp::Or) return "a boolean expression";
    return "an operator expression";
  }
  const char* visitUnaryExpr(const UnaryExpr*) { return "an operator expression"; }
  const char* visitConditionalExpr(const ConditionalExpr*) { return "a conditional expression"; }
  const char* visitTupleExpr(const TupleExpr* e) { return e->elements.empty() ? "an empty tuple" : "a tuple"; }
  const char* visitListExpr(const ListExpr*) { return "a list"; }
  const char* visitDictExpr(const DictExpr*) { return "a dict literal"; }
  const char* visitComprehensionExpr(const ComprehensionExpr*) { return "a comprehension"; }
  const char* visitSliceExpr(const SliceExpr*) { return "a slice"; }
  const char* visitMutExpr(const MutExpr*) { return "a 'mut' annotation"; }
  const char* visitStarredExpr(const StarredExpr*) { return "a starred expression"; }
  const char* visitNode(const Node*) { return "an expression"; }
};
const char* describeExpr(const Expr* e) { return ExprDescription().visit(e); }

const char* unsupportedWhat(TokenKind k) {
  switch (k) {
    case TokenKind::kw_class: return "'class' definitions";
    case TokenKind::kw_try: return "'try' statements";
    case TokenKind::kw_except: return "'except' clauses";
    case TokenKind::kw_finally: return "'finally' clauses";
    case TokenKind::kw_async: return "'async' functions and statements";
    case TokenKind::kw_raise: return "'raise' statements";
    case TokenKind::kw_global: return "'global' declarations";
    case TokenKind::kw_nonlocal: return "'nonlocal' declarations";
    case TokenKind::kw_del: return "'del' statements";
    case TokenKind::kw_assert: return "'assert' statements";
    case TokenKind::kw_yield: return "'yield' expressions";
    case TokenKind::kw_await: return "'await' expressions";
    default: return nullptr;
  }
}
}  // namespace

void Parser::setBlockRange(Block& block) {
  if (!block.stmts.empty()) block.range = SourceRange(block.stmts.front()->range.begin, block.stmts.back()->range.end);
}

void Parser::setDocstring(const std::vector<Stmt*>& stmts, std::string& doc) {
  if (stmts.empty()) return;
  if (auto* es = dyn_cast<ExprStmt>(stmts.front()))
    if (auto* s = dyn_cast<StringLiteralExpr>(es->expr)) doc = s->value;
}

SourceRange Parser::firstRealTokenRange() const {
  size_t i = pos_;
  while (i + 1 < toks_->size() && (*toks_)[i].isOneOf(TokenKind::Dedent, TokenKind::Indent, TokenKind::Newline)) ++i;
  const Token& t = (*toks_)[i];
  if (t.is(TokenKind::Eof)) return insertionPoint();
  return t.range;
}

void Parser::skipLine(SourceLoc begin, std::vector<Stmt*>* out) {
  skipToLineEnd();
  if (out) out->push_back(makeErrorStmt(begin));
  tryConsume(TokenKind::Newline);
  panic_ = false;
  // A bad line that meant to open a block: read the block (its own errors are independent) and
  // drop it, so it does not cause an "unexpected indent".
  if (at(TokenKind::Indent)) {
    Block dropped;
    parseIndentedBlock(dropped);
  }
}

void Parser::parseStatementInto(std::vector<Stmt*>& out) {
  panic_ = false;
  const Token& t = tok();
  switch (t.kind) {
    case TokenKind::Indent: {
      SourceRange r = peek().range;
      error(diag::err_parse_unexpected_indent,
            SourceRange(r.begin, r.begin.valid() ? SourceLoc{r.begin.offset + 1} : r.end));
      consume();
      blockColumns_.push_back(sm_.lineColumn(tok().range.begin).column);
      while (!at(TokenKind::Dedent) && !at(TokenKind::Eof) && !diags_.stopped()) {
        if (tryConsume(TokenKind::Newline)) continue;
        parseStatementInto(out);
      }
      tryConsume(TokenKind::Dedent);
      blockColumns_.pop_back();
      return;
    }
    case TokenKind::at:
    case TokenKind::kw_def: out.push_back(parseFunctionDef()); return;
    case TokenKind::kw_if: out.push_back(parseIf(false)); return;
    case TokenKind::kw_while: out.push_back(parseWhile()); return;
    case TokenKind::kw_for: out.push_back(parseFor()); return;
    case TokenKind::kw_with: out.push_back(parseWith()); return;
    case TokenKind::kw_elif:
    case TokenKind::kw_else: parseStrayClause(out); return;
    case TokenKind::r_paren:
    case TokenKind::r_square:
    case TokenKind::r_brace: {
      SourceLoc begin = startLoc();
      fail(diag::err_parse_unmatched_closer, t.range) << std::string(t.text);
      skipLine(begin, &out);
      return;
    }
    default:
      if (unsupportedWhat(t.kind)) {
        parseUnsupportedStatement(out);
        return;
      }
      parseSimpleStatementsInto(out);
      return;
  }
}

void Parser::parseUnsupportedStatement(std::vector<Stmt*>& out) {
  SourceLoc begin = startLoc();
  bool isTry = at(TokenKind::kw_try);
  fail(diag::err_parse_unsupported, tok().range) << unsupportedWhat(tok().kind);
  skipLine(begin, &out);
  // The clauses of a 'try' belong to the one reported statement.
  while (isTry && tok().isOneOf(TokenKind::kw_except, TokenKind::kw_finally, TokenKind::kw_else)) {
    panic_ = true;
    skipLine(startLoc(), nullptr);
  }
}

void Parser::parseStrayClause(std::vector<Stmt*>& out) {
  SourceLoc begin = startLoc();
  fail(tok().is(TokenKind::kw_elif) ? diag::err_parse_elif_without_if : diag::err_parse_else_without_if, tok().range);
  skipLine(begin, &out);
}

void Parser::parseSimpleStatementsInto(std::vector<Stmt*>& out) {
  for (;;) {
    SourceLoc begin = startLoc();
    Stmt* s = parseSimpleStatement();
    if (panic_) {
      skipLine(begin, &out);
      return;
    }
    out.push_back(s);
    if (tryConsume(TokenKind::semi)) {
      if (atLineEnd()) break;
      continue;
    }
    if (at(TokenKind::Newline) || at(TokenKind::Eof)) break;
    SourceLoc junk = startLoc();
    if (!swallowLexError()) {
      if (tok().isOneOf(TokenKind::r_paren, TokenKind::r_square, TokenKind::r_brace))
        fail(diag::err_parse_unmatched_closer, tok().range) << std::string(tok().text);
      else if (tok().is(TokenKind::walrus))
        fail(diag::err_parse_walrus, tok().range);
      else
        fail(diag::err_parse_expected_newline, tok().range);
    }
    skipLine(junk, &out);
    return;
  }
  tryConsume(TokenKind::Newline);
}

Stmt* Parser::parseSimpleStatement() {
  const Token& t = tok();
  switch (t.kind) {
    case TokenKind::kw_pass: consume(); return ctx_.make<PassStmt>(t.range);
    case TokenKind::kw_break:
      consume();
      if (!loopDepth_) error(diag::err_parse_break_outside_loop, t.range);
      return ctx_.make<BreakStmt>(t.range);
    case TokenKind::kw_continue:
      consume();
      if (!loopDepth_) error(diag::err_parse_continue_outside_loop, t.range);
      return ctx_.make<ContinueStmt>(t.range);
    case TokenKind::kw_return: return parseReturn();
    case TokenKind::kw_import: return parseImport();
    case TokenKind::kw_from: return parseImportFrom();
    case TokenKind::kw_def:
    case TokenKind::kw_if:
    case TokenKind::kw_while:
    case TokenKind::kw_for:
    case TokenKind::kw_with:
    case TokenKind::at:
      fail(diag::err_parse_compound_on_same_line, t.range) << (t.is(TokenKind::at) ? "@" : std::string(t.text));
      return nullptr;
    case TokenKind::kw_elif: fail(diag::err_parse_elif_without_if, t.range); return nullptr;
    case TokenKind::kw_else: fail(diag::err_parse_else_without_if, t.range); return nullptr;
    default:
      if (const char* what = unsupportedWhat(t.kind)) {
        fail(diag::err_parse_unsupported, t.range) << what;
        return nullptr;
      }
      return parseExprOrAssignment();
  }
}

void Parser::checkAssignTarget(Expr* e, bool augmented) {
  if (!e || panic_) return;
  switch (e->kind) {
    case NodeKind::NameExpr:
    case NodeKind::AttributeExpr:
    case NodeKind::SubscriptExpr:
    case NodeKind::ErrorExpr: return;
    default: break;
  }
  if (augmented) {
    error(diag::err_parse_invalid_augassign_target, e->range) << describeExpr(e);
    return;
  }
  if (isa<TupleExpr>(e) || isa<ListExpr>(e)) {
    const auto& elts = isa<TupleExpr>(e) ? cast<TupleExpr>(e)->elements : cast<ListExpr>(e)->elements;
    if (elts.empty()) {
      error(diag::err_parse_invalid_assign_target, e->range) << describeExpr(e);
      return;
    }
    unsigned stars = 0;
    for (Expr* x : elts) {
      if (auto* s = dyn_cast<StarredExpr>(x)) {
        if (++stars == 2) error(diag::err_parse_multiple_starred, s->range);
        checkAssignTarget(s->value, false);
      } else {
        checkAssignTarget(x, false);
      }
    }
    return;
  }
  if (isa<StarredExpr>(e)) {
    error(diag::err_parse_star_not_allowed, e->range);
    return;
  }
  error(diag::err_parse_invalid_assign_target, e->range) << describeExpr(e);
}

void Parser::checkForTarget(Expr* e) {
  if (!e || panic_) return;
  switch (e->kind) {
    case NodeKind::NameExpr:
    case NodeKind::AttributeExpr:
    case NodeKind::SubscriptExpr:
    case NodeKind::ErrorExpr: return;
    case NodeKind::TupleExpr:
    case NodeKind::ListExpr: {
      const auto& elts = isa<TupleExpr>(e) ? cast<TupleExpr>(e)->elements : cast<ListExpr>(e)->elements;
      for (Expr* x : elts) checkForTarget(isa<StarredExpr>(x) ? cast<StarredExpr>(x)->value : x);
      if (!elts.empty()) return;
      break;
    }
    default: break;
  }
  error(diag::err_parse_invalid_for_target, e->range) << describeExpr(e);
}

Stmt* Parser::parseExprOrAssignment() {
  SourceLoc begin = startLoc();
  Expr* first = parseExprList(/*allowStar=*/true);
  if (panic_) return nullptr;

  if (at(TokenKind::equal)) {
    auto* a = ctx_.make<AssignStmt>(SourceRange());
    a->targets.push_back(first);
    Expr* value = nullptr;
    while (tryConsume(TokenKind::equal)) {
      if (atLineEnd()) {
        fail(diag::err_parse_expected_expr, hereRange());
        return nullptr;
      }
      value = parseExprList(true);
      if (panic_) return nullptr;
      a->targets.push_back(value);
    }
    a->targets.pop_back();
    a->value = value;
    for (Expr* t : a->targets) checkAssignTarget(t, false);
    if (isa<StarredExpr>(value)) error(diag::err_parse_star_not_allowed, value->range);
    a->range = rangeFrom(begin);
    return a;
  }

  BinaryOp op;
  if (isAugAssignOp(tok().kind, op)) {
    auto* a = ctx_.make<AugAssignStmt>(SourceRange());
    a->target = first;
    a->op = op;
    a->opRange = tok().range;
    consume();
    checkAssignTarget(first, true);
    a->value = parseExprList(false);
    a->range = rangeFrom(begin);
    return a;
  }

  if (at(TokenKind::colon)) {
    auto* a = ctx_.make<AnnAssignStmt>(SourceRange());
    if (!isa<NameExpr>(first) && !isa<AttributeExpr>(first) && !isa<SubscriptExpr>(first))
      error(diag::err_parse_invalid_annotation_target, first->range);
    consume();
    a->target = first;
    a->annotation = parseExpr();
    if (!panic_ && tryConsume(TokenKind::equal)) a->value = parseExprList(true);
    a->range = rangeFrom(begin);
    return a;
  }

  if (isa<StarredExpr>(first)) error(diag::err_parse_star_not_allowed, first->range);
  auto* s = ctx_.make<ExprStmt>(rangeFrom(begin));
  s->expr = first;
  return s;
}

Stmt* Parser::parseReturn() {
  const Token& kw = tok();
  SourceLoc begin = startLoc();
  consume();
  if (!funcDepth_) error(diag::err_parse_return_outside_function, kw.range);
  auto* r = ctx_.make<ReturnStmt>(SourceRange());
  if (!atLineEnd() && !at(TokenKind::semi)) r->value = parseExprList(true);
  r->range = rangeFrom(begin);
  return r;
}

bool Parser::parseDottedName(std::string& name, SourceRange& range) {
  if (!at(TokenKind::Identifier)) return false;
  SourceLoc begin = startLoc();
  name.assign(tok().text);
  consume();
  while (at(TokenKind::period)) {
    consume();
    if (!at(TokenKind::Identifier) && !isKeyword(tok().kind)) {
      if (!swallowLexError()) fail(diag::err_parse_expected_attr_name, hereRange());
      return false;
    }
    name += '.';
    name.append(tok().text);
    consume();
  }
  range = rangeFrom(begin);
  return true;
}

bool Parser::parseImportAlias(ImportName& n) {
  if (!tryConsume(TokenKind::kw_as)) return true;
  if (!at(TokenKind::Identifier)) {
    if (!swallowLexError()) fail(diag::err_parse_expected_alias, hereRange());
    return false;
  }
  n.alias.assign(tok().text);
  n.aliasRange = tok().range;
  consume();
  return true;
}

Stmt* Parser::parseImport() {
  SourceLoc begin = startLoc();
  consume();
  auto* s = ctx_.make<ImportStmt>(SourceRange());
  do {
    ImportName n;
    if (!parseDottedName(n.name, n.nameRange)) {
      if (!panic_ && !swallowLexError()) fail(diag::err_parse_expected_module_name, hereRange()) << "import";
      return nullptr;
    }
    if (!parseImportAlias(n)) return nullptr;
    n.range = rangeFrom(n.nameRange.begin);
    s->names.push_back(std::move(n));
  } while (tryConsume(TokenKind::comma));
  s->range = rangeFrom(begin);
  return s;
}

Stmt* Parser::parseImportFrom() {
  SourceLoc begin = startLoc();
  consume();
  auto* s = ctx_.make<ImportFromStmt>(SourceRange());
  for (;;) {
    if (tryConsume(TokenKind::period))
      s->level += 1;
    else if (tryConsume(TokenKind::ellipsis))
      s->level += 3;
    else
      break;
  }
  if (at(TokenKind::Identifier)) {
    if (!parseDottedName(s->module, s->moduleRange)) return nullptr;
  } else if (s->level == 0) {
    if (!swallowLexError()) fail(diag::err_parse_expected_module_name, hereRange()) << "from";
    return nullptr;
  }
  if (!tryConsume(TokenKind::kw_import)) {
    if (!swallowLexError()) fail(diag::err_parse_expected_import, hereRange()).fixitInsert(prevEnd_, " import");
    return nullptr;
  }
  if (at(TokenKind::star)) {
    consume();
    s->star = true;
    s->range = rangeFrom(begin);
    return s;
  }
  const Token* open = at(TokenKind::l_paren) ? &tok() : nullptr;
  if (open) consume();
  do {
    if (open && at(TokenKind::r_paren) && !s->names.empty()) break;  // trailing comma
    if (!at(TokenKind::Identifier)) {
      if (!swallowLexError()) fail(diag::err_parse_expected_import_name, hereRange());
      return nullptr;
    }
    ImportName n;
    n.name.assign(tok().text);
    n.nameRange = tok().range;
    consume();
    if (!parseImportAlias(n)) return nullptr;
    n.range = rangeFrom(n.nameRange.begin);
    s->names.push_back(std::move(n));
  } while (tryConsume(TokenKind::comma));
  if (open && !expectCloser(TokenKind::r_paren, *open, "names")) return nullptr;
  s->range = rangeFrom(begin);
  return s;
}

// ---------------------------------------------------------------- compound statements

void Parser::parseIndentedBlock(Block& block) {
  if (blockDepth_ >= kMaxBlockDepth) {
    error(diag::err_parse_too_many_indents, tok().range) << static_cast<unsigned>(kMaxBlockDepth);
    skipIndentedBlock();
    return;
  }
  ++blockDepth_;
  struct Restore {
    unsigned& d;
    ~Restore() { --d; }
  } restore{blockDepth_};
  consume();  // Indent
  blockColumns_.push_back(sm_.lineColumn(tok().range.begin).column);
  while (!at(TokenKind::Dedent) && !at(TokenKind::Eof) && !diags_.stopped()) {
    if (tryConsume(TokenKind::Newline)) continue;
    parseStatementInto(block.stmts);
  }
  tryConsume(TokenKind::Dedent);
  blockColumns_.pop_back();
  setBlockRange(block);
}

void Parser::parseSuite(Block& block, const char* colonWhat, const char* blockWhat, SourceLoc headerStart) {
  if (!panic_ && !at(TokenKind::colon) && !swallowLexError()) {
    if (at(TokenKind::walrus))
      fail(diag::err_parse_walrus, tok().range);
    else
      fail(diag::err_parse_expected_colon, insertionPoint()).fixitInsert(prevEnd_, ":") << colonWhat;
  }
  if (panic_) {
    // A bad header: skip what is left of it, but still read the block that follows.
    skipToLineEnd();
    tryConsume(TokenKind::Newline);
    panic_ = false;
    if (at(TokenKind::Indent)) parseIndentedBlock(block);
    return;
  }
  consume();  // ':'
  if (tryConsume(TokenKind::Newline)) {
    if (!at(TokenKind::Indent)) {
      error(diag::err_parse_expected_indented_block, firstRealTokenRange())
          << blockWhat << sm_.lineColumn(headerStart).line;
      // Read the next statement as the body the user forgot to indent, so that a `return` or
      // `break` there is not reported a second time as outside its function or loop.
      if (!at(TokenKind::Dedent) && !at(TokenKind::Eof) && !diags_.stopped()) {
        parseStatementInto(block.stmts);
        setBlockRange(block);
      }
      return;
    }
    parseIndentedBlock(block);
    return;
  }
  if (at(TokenKind::Eof)) {
    error(diag::err_parse_expected_indented_block, insertionPoint()) << blockWhat << sm_.lineColumn(headerStart).line;
    return;
  }
  // A single-line suite: `def f(x): return x`.
  parseSimpleStatementsInto(block.stmts);
  setBlockRange(block);
}

Expr* Parser::parseCondition(const char* what) {
  SourceLoc begin = startLoc();
  Expr* lhs = parseExpr();
  if (panic_ || !at(TokenKind::equal)) return lhs;
  // `if i = 0:` is a C programmer's comparison: say so, and read it as `==` so that nothing
  // cascades (the condition still gets checked).
  error(diag::err_parse_assign_in_condition, tok().range).fixit(tok().range, "==") << what;
  auto* b = ctx_.make<BinaryExpr>(SourceRange());
  b->op = BinaryOp::Eq;
  b->opRange = tok().range;
  consume();
  b->lhs = lhs;
  b->rhs = parseBinary(1);
  b->range = rangeFrom(begin);
  return b;
}

Stmt* Parser::parseIf(bool isElif) {
  SourceLoc begin = startLoc();
  consume();
  auto* s = ctx_.make<IfStmt>(SourceRange());
  s->isElif = isElif;
  s->cond = parseCondition(isElif ? "an 'elif' condition" : "an 'if' condition");
  parseSuite(s->thenBlock, isElif ? "'elif' condition" : "'if' condition",
             isElif ? "'elif' statement" : "'if' statement", begin);
  if (!diags_.stopped()) {
    bool elifNext = at(TokenKind::kw_elif) || (at(TokenKind::kw_else) && peek().is(TokenKind::kw_if));
    if (elifNext && elifDepth_ >= kMaxElifs) {
      // Each `elif` nests one level deeper in the tree; past the limit the rest of the chain is
      // reported once and skipped.
      error(diag::err_parse_too_many_elifs, tok().range) << static_cast<unsigned>(kMaxElifs);
      while ((at(TokenKind::kw_elif) || at(TokenKind::kw_else)) && !diags_.stopped()) {
        skipToLineEnd();
        tryConsume(TokenKind::Newline);
        if (at(TokenKind::Indent)) skipIndentedBlock();
      }
    } else if (elifNext) {
      if (at(TokenKind::kw_else)) {
        // C's `else if`: Python spells it `elif`. Read it as one.
        SourceRange both(tok().range.begin, peek().range.end);
        error(diag::err_parse_else_if, both).fixit(both, "elif");
        consume();
      }
      ++elifDepth_;
      Stmt* e = parseIf(true);
      --elifDepth_;
      s->elseBlock.stmts.push_back(e);
      s->elseBlock.range = e->range;
    } else if (at(TokenKind::kw_else)) {
      SourceLoc eb = startLoc();
      consume();
      parseSuite(s->elseBlock, "'else'", "'else' clause", eb);
    }
  }
  s->range = rangeFrom(begin);
  return s;
}

Stmt* Parser::parseWhile() {
  SourceLoc begin = startLoc();
  consume();
  auto* s = ctx_.make<WhileStmt>(SourceRange());
  s->cond = parseCondition("a 'while' condition");
  parseLoopSuites(s->body, s->elseBlock, "'while' condition", "'while' statement", begin);
  s->range = rangeFrom(begin);
  return s;
}

// A loop's body (where break and continue are allowed) and its optional `else:` clause.
void Parser::parseLoopSuites(Block& body, Block& elseBlock, const char* colonWhat, const char* blockWhat,
                             SourceLoc begin) {
  ++loopDepth_;
  parseSuite(body, colonWhat, blockWhat, begin);
  --loopDepth_;
  if (at(TokenKind::kw_else) && !diags_.stopped()) {
    SourceLoc eb = startLoc();
    consume();
    parseSuite(elseBlock, "'else'", "'else' clause", eb);
  }
}

Stmt* Parser::parseFor() {
  SourceLoc begin = startLoc();
  consume();
  auto* s = ctx_.make<ForStmt>(SourceRange());
  s->target = parseTargetList();
  checkForTarget(s->target);
  if (!panic_) {
    if (tryConsume(TokenKind::kw_in)) {
      s->iter = parseExprList(true);
    } else if (!swallowLexError()) {
      fail(diag::err_parse_expected_in, hereRange()).fixitInsert(prevEnd_, " in");
    }
  }
  parseLoopSuites(s->body, s->elseBlock, "'for' clause", "'for' statement", begin);
  s->range = rangeFrom(begin);
  return s;
}

Stmt* Parser::parseWith() {
  SourceLoc begin = startLoc();
  consume();
  auto* s = ctx_.make<WithStmt>(SourceRange());
  do {
    WithItem item;
    item.context = parseExpr();
    if (!panic_ && tryConsume(TokenKind::kw_as)) {
      item.target = parseStarOrExpr(false, true);
      checkAssignTarget(item.target, false);
    }
    s->items.push_back(item);
  } while (!panic_ && tryConsume(TokenKind::comma));
  parseSuite(s->body, "'with' items", "'with' statement", begin);
  s->range = rangeFrom(begin);
  return s;
}

bool Parser::parseDecorator(Decorator& d) {
  SourceLoc begin = startLoc();
  consume();  // '@'
  if (!at(TokenKind::Identifier) && !at(TokenKind::l_paren)) {
    if (!swallowLexError()) fail(diag::err_parse_expected_decorator, hereRange());
    return false;
  }
  d.expr = parsePostfix();
  // Attribute clauses on the same line: `@kernel tile[(128,)] shared(8_KiB)`.
  while (!panic_ && at(TokenKind::Identifier)) d.clauses.push_back(parsePostfix());
  d.range = rangeFrom(begin);
  return !panic_;
}

Expr* Parser::parseParamAnnotation() {
  SourceLoc begin = startLoc();
  if (!at(TokenKind::kw_mut)) {
    Expr* e = parseExpr();
    if (panic_ || !at(TokenKind::kw_mut)) return e;
    // `y: f32 mut[n]`: 'mut' after the dtype. Read it as `mut f32[n]` and say so once.
    SourceLoc dtypeEnd = prevEnd_;
    SourceRange mutRange = tok().range;
    consume();
    auto* m = ctx_.make<MutExpr>(SourceRange());
    m->type = parseTrailers(e, begin);
    m->range = rangeFrom(begin);
    std::string fixed =
        "mut " + std::string(sm_.text(e->range)) + std::string(sm_.text(SourceRange(mutRange.end, prevEnd_)));
    error(diag::err_parse_mut_after_dtype, mutRange)
            .fixit(SourceRange(dtypeEnd, mutRange.end), "")
            .fixitInsert(begin, "mut ")
        << fixed;
    return m;
  }
  consume();
  auto* m = ctx_.make<MutExpr>(SourceRange());
  m->type = parseExpr();
  m->range = rangeFrom(begin);
  return m;
}

void Parser::parseParameters(FunctionDefStmt* fn) {
  const Token& open = tok();
  consume();
  bool seenDefault = false, seenStar = false;
  bool kwargs = false;
  size_t kwargsIndex = 0;
  SourceRange firstDefault;
  bool reportedAfterKwargs = false, duplicateStar = false;
  fn->params.reserve(4);
  while (!at(TokenKind::r_paren)) {
    Param p;
    SourceLoc pb = startLoc();
    if (kwargs && !reportedAfterKwargs &&
        (at(TokenKind::Identifier) || at(TokenKind::star) || at(TokenKind::starstar))) {
      error(diag::err_parse_param_after_kwargs, tok().range) << fn->params[kwargsIndex].name;
      reportedAfterKwargs = true;
    }
    if (at(TokenKind::star)) {
      SourceRange starRange = tok().range;
      consume();
      if (seenStar && !kwargs) {
        error(diag::err_parse_duplicate_star, starRange);
        duplicateStar = true;
      }
      seenStar = true;
      if (at(TokenKind::Identifier)) {
        p.paramKind = Param::VarArgs;
        p.name.assign(tok().text);
        p.nameRange = tok().range;
        consume();
        if (tryConsume(TokenKind::colon)) p.annotation = parseParamAnnotation();
      } else {
        p.paramKind = Param::KeywordOnlyMarker;
      }
    } else if (at(TokenKind::starstar)) {
      consume();
      if (!at(TokenKind::Identifier)) {
        if (!swallowLexError()) fail(diag::err_parse_expected_param, hereRange());
        break;
      }
      p.paramKind = Param::KwArgs;
      p.name.assign(tok().text);
      p.nameRange = tok().range;
      consume();
      if (tryConsume(TokenKind::colon)) p.annotation = parseParamAnnotation();
      kwargs = true;
      kwargsIndex = fn->params.size();
    } else if (at(TokenKind::slash)) {
      error(diag::err_parse_positional_only_marker, tok().range);
      consume();
      if (!tryConsume(TokenKind::comma)) break;
      continue;
    } else if (at(TokenKind::kw_mut) && peek().is(TokenKind::Identifier)) {
      // `mut b: f32`: 'mut' belongs in the annotation (`b: mut f32`).
      error(diag::err_parse_mut_outside_param, tok().range);
      consume();
      continue;
    } else if (at(TokenKind::Identifier)) {
      p.name.assign(tok().text);
      p.nameRange = tok().range;
      consume();
      if (tryConsume(TokenKind::colon)) p.annotation = parseParamAnnotation();
      if (!panic_ && tryConsume(TokenKind::equal)) {
        p.defaultValue = parseExpr();
        if (!seenDefault) firstDefault = rangeFrom(pb);
        seenDefault = true;
      } else if (seenDefault && !seenStar && !panic_) {
        DiagBuilder b = error(diag::err_parse_non_default_after_default, p.nameRange);
        b << p.name;
        b.note(diag::note_parse_first_default, firstDefault);
      }
    } else {
      if (!swallowLexError()) fail(diag::err_parse_expected_param, hereRange());
      break;
    }
    if (panic_) break;
    p.range = rangeFrom(pb);
    fn->params.push_back(std::move(p));
    if (!tryConsume(TokenKind::comma)) break;
  }
  if (!panic_) {
    for (size_t i = 0; i < fn->params.size() && !duplicateStar; ++i)
      if (fn->params[i].paramKind == Param::KeywordOnlyMarker &&
          (i + 1 == fn->params.size() || fn->params[i + 1].paramKind != Param::Normal)) {
        error(diag::err_parse_bare_star_at_end, fn->params[i].range);
        break;
      }
    expectCloser(TokenKind::r_paren, open, "parameters");
  }
}

Stmt* Parser::parseFunctionDef() {
  SourceLoc begin = startLoc();
  std::vector<Decorator> decorators;
  while (at(TokenKind::at)) {
    Decorator d;
    if (!parseDecorator(d)) {
      // A bad decorator line: skip it; the function that follows is still read.
      skipToLineEnd();
      tryConsume(TokenKind::Newline);
      panic_ = false;
      continue;
    }
    decorators.push_back(std::move(d));
    if (at(TokenKind::at)) continue;  // `@jit @autodiff`
    if (tryConsume(TokenKind::Newline)) continue;
    if (!at(TokenKind::Eof)) {
      if (!swallowLexError()) fail(diag::err_parse_expected_newline, tok().range);
      skipToLineEnd();
      tryConsume(TokenKind::Newline);
      panic_ = false;
    }
  }
  if (!at(TokenKind::kw_def)) {
    SourceLoc end = prevEnd_;
    // A decorated 'class' or 'async def' gets only its own "not supported" error.
    if (!decorators.empty() && !unsupportedWhat(tok().kind))
      error(diag::err_parse_decorator_without_def, firstRealTokenRange());
    return ctx_.make<ErrorStmt>(SourceRange(begin, end));
  }
  SourceLoc defBegin = startLoc();
  consume();
  auto* fn = ctx_.make<FunctionDefStmt>(SourceRange());
  fn->decorators = std::move(decorators);
  if (at(TokenKind::Identifier)) {
    fn->name.assign(tok().text);
    fn->nameRange = tok().range;
    consume();
    if (at(TokenKind::l_paren))
      parseParameters(fn);
    else if (!swallowLexError())
      fail(diag::err_parse_expected_lparen_after_name, hereRange());
  } else if (!swallowLexError()) {
    fail(diag::err_parse_expected_function_name, hereRange());
  }
  if (!panic_ && tryConsume(TokenKind::arrow)) fn->returns = parseExpr();
  unsigned savedLoops = loopDepth_;
  loopDepth_ = 0;
  ++funcDepth_;
  parseSuite(fn->body, "function signature", "function definition", defBegin);
  --funcDepth_;
  loopDepth_ = savedLoops;
  setDocstring(fn->body.stmts, fn->docstring);
  fn->range = rangeFrom(begin);
  return fn;
}

}  // namespace tessera
