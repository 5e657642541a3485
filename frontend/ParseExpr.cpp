// Expressions, by Python's precedence: conditional, or, and, not, comparisons (never chained),
// | ^ & << >> + - * / // % @, unary - + ~, ** (right-associative), trailers, atoms.
#include <optional>

#include "frontend/FrontendDiagnostics.h"
#include "frontend/ParserImpl.h"

namespace tessera {

namespace {
// Binary operators from | (1) to the multiplicative ones (6); 0 for anything else.
int binaryPrecedence(TokenKind k, BinaryOp& op) {
  switch (k) {
    case TokenKind::pipe: op = BinaryOp::BitOr; return 1;
    case TokenKind::caret: op = BinaryOp::BitXor; return 2;
    case TokenKind::amp: op = BinaryOp::BitAnd; return 3;
    case TokenKind::lessless: op = BinaryOp::Shl; return 4;
    case TokenKind::greatergreater: op = BinaryOp::Shr; return 4;
    case TokenKind::plus: op = BinaryOp::Add; return 5;
    case TokenKind::minus: op = BinaryOp::Sub; return 5;
    case TokenKind::star: op = BinaryOp::Mul; return 6;
    case TokenKind::slash: op = BinaryOp::Div; return 6;
    case TokenKind::slashslash: op = BinaryOp::FloorDiv; return 6;
    case TokenKind::percent: op = BinaryOp::Mod; return 6;
    case TokenKind::at: op = BinaryOp::MatMul; return 6;
    default: return 0;
  }
}

bool isOperatorToken(TokenKind k) {
  switch (k) {
    case TokenKind::pipe:
    case TokenKind::caret:
    case TokenKind::amp:
    case TokenKind::lessless:
    case TokenKind::greatergreater:
    case TokenKind::plus:
    case TokenKind::minus:
    case TokenKind::star:
    case TokenKind::slash:
    case TokenKind::slashslash:
    case TokenKind::percent:
    case TokenKind::at:
    case TokenKind::starstar:
    case TokenKind::tilde:
    case TokenKind::less:
    case TokenKind::greater:
    case TokenKind::lessequal:
    case TokenKind::greaterequal:
    case TokenKind::equalequal:
    case TokenKind::exclaimequal:
    case TokenKind::kw_and:
    case TokenKind::kw_or:
    case TokenKind::kw_not:
    case TokenKind::kw_in:
    case TokenKind::kw_is: return true;
    default: return false;
  }
}
}  // namespace

Expr* Parser::makeError(SourceLoc begin) {
  SourceLoc end = prevEnd_;
  if (!end.valid() || end < begin) end = begin;
  return ctx_.make<ErrorExpr>(SourceRange(begin, end));
}

Expr* Parser::parseExprList(bool allowStar) {
  SourceLoc begin = startLoc();
  Expr* first = parseStarOrExpr(allowStar, false);
  if (!at(TokenKind::comma) || panic_) return first;
  auto* t = ctx_.make<TupleExpr>(SourceRange());
  t->elements.push_back(first);
  while (tryConsume(TokenKind::comma)) {
    if (!startsExpr(tok()) && !at(TokenKind::star)) break;  // trailing comma
    t->elements.push_back(parseStarOrExpr(allowStar, false));
    if (panic_) break;
  }
  t->range = rangeFrom(begin);
  return t;
}

Expr* Parser::parseTargetList() {
  SourceLoc begin = startLoc();
  Expr* first = parseStarOrExpr(true, true);
  if (!at(TokenKind::comma) || panic_) return first;
  auto* t = ctx_.make<TupleExpr>(SourceRange());
  t->elements.push_back(first);
  while (tryConsume(TokenKind::comma)) {
    if (!startsExpr(tok()) && !at(TokenKind::star)) break;
    t->elements.push_back(parseStarOrExpr(true, true));
    if (panic_) break;
  }
  t->range = rangeFrom(begin);
  return t;
}

Expr* Parser::parseStarOrExpr(bool allowStar, bool bitOrOnly) {
  if (!at(TokenKind::star)) return bitOrOnly ? parseBinary(1) : parseExpr();
  SourceLoc begin = startLoc();
  consume();
  auto* s = ctx_.make<StarredExpr>(SourceRange());
  s->value = parseBinary(1);
  s->range = rangeFrom(begin);
  if (!allowStar) error(diag::err_parse_star_not_allowed, s->range);
  return s;
}

Expr* Parser::parseExpr() {
  if (at(TokenKind::kw_lambda)) {
    SourceLoc begin = startLoc();
    fail(diag::err_parse_lambda, tok().range);
    consume();
    return makeError(begin);
  }
  SourceLoc begin = startLoc();
  Expr* e = parseOr();
  ExprDepthScope depthScope(*this);
  if (at(TokenKind::kw_if) && !panic_ && enterExprLevel()) {
    consume();
    auto* c = ctx_.make<ConditionalExpr>(SourceRange());
    c->thenExpr = e;
    c->cond = parseOr();
    if (!panic_) {
      if (tryConsume(TokenKind::kw_else)) {
        c->elseExpr = parseExpr();
      } else if (!swallowLexError()) {
        fail(diag::err_parse_expected_else_in_conditional, hereRange());
      }
    }
    c->range = rangeFrom(begin);
    e = c;
  }
  if (at(TokenKind::walrus) && !panic_) fail(diag::err_parse_walrus, tok().range);
  return e;
}

// `a or b or c` and `a and b and c`: left-associative chains of one boolean operator.
Expr* Parser::parseBoolChain(TokenKind keyword, BinaryOp op, Expr* (Parser::*operand)()) {
  ExprDepthScope depthScope(*this);
  SourceLoc begin = startLoc();
  Expr* lhs = (this->*operand)();
  while (at(keyword) && !panic_ && enterExprLevel()) {
    auto* b = ctx_.make<BinaryExpr>(SourceRange());
    b->op = op;
    b->opRange = tok().range;
    consume();
    b->lhs = lhs;
    b->rhs = (this->*operand)();
    b->range = rangeFrom(begin);
    lhs = b;
  }
  return lhs;
}

Expr* Parser::parseOr() { return parseBoolChain(TokenKind::kw_or, BinaryOp::Or, &Parser::parseAnd); }

Expr* Parser::parseAnd() { return parseBoolChain(TokenKind::kw_and, BinaryOp::And, &Parser::parseNot); }

Expr* Parser::parseNot() {
  if (!at(TokenKind::kw_not)) return parseComparison();
  ExprDepthScope depthScope(*this);
  SourceLoc begin = startLoc();
  if (!enterExprLevel()) return makeError(begin);
  auto* u = ctx_.make<UnaryExpr>(SourceRange());
  u->op = UnaryOp::Not;
  u->opRange = tok().range;
  consume();
  u->operand = parseNot();
  u->range = rangeFrom(begin);
  return u;
}

Expr* Parser::parseComparison() {
  SourceLoc begin = startLoc();
  Expr* lhs = parseBinary(1);
  std::vector<Expr*> operands;
  std::vector<BinaryOp> ops;
  ExprDepthScope depthScope(*this);
  while (!panic_) {
    BinaryOp op;
    SourceRange opRange = tok().range;
    switch (tok().kind) {
      case TokenKind::equalequal: op = BinaryOp::Eq; break;
      case TokenKind::exclaimequal: op = BinaryOp::Ne; break;
      case TokenKind::less: op = BinaryOp::Lt; break;
      case TokenKind::lessequal: op = BinaryOp::Le; break;
      case TokenKind::greater: op = BinaryOp::Gt; break;
      case TokenKind::greaterequal: op = BinaryOp::Ge; break;
      case TokenKind::kw_in: op = BinaryOp::In; break;
      case TokenKind::kw_is:
        op = BinaryOp::Is;
        if (peek().is(TokenKind::kw_not)) {
          op = BinaryOp::IsNot;
          consume();
          opRange.end = tok().range.end;
        }
        break;
      case TokenKind::kw_not:
        if (!peek().is(TokenKind::kw_in)) goto done;
        op = BinaryOp::NotIn;
        consume();
        opRange.end = tok().range.end;
        break;
      default: goto done;
    }
    if (!enterExprLevel()) goto done;
    consume();
    {
      if (operands.empty()) operands.push_back(lhs);
      Expr* rhs = parseBinary(1);
      operands.push_back(rhs);
      ops.push_back(op);
      auto* b = ctx_.make<BinaryExpr>(SourceRange());
      b->op = op;
      b->opRange = opRange;
      b->lhs = lhs;
      b->rhs = rhs;
      b->range = rangeFrom(begin);
      lhs = b;
    }
  }
done:
  if (ops.size() >= 2 && !panic_) {
    // Our language decision: `a < b < c` is an error; suggest `(a < b) and (b < c)`.
    std::string fix;
    for (size_t i = 0; i < ops.size(); ++i) {
      if (i) fix += " and ";
      fix += "(";
      fix += sm_.text(operands[i]->range);
      fix += " ";
      fix += binaryOpSpelling(ops[i]);
      fix += " ";
      fix += sm_.text(operands[i + 1]->range);
      fix += ")";
    }
    error(diag::err_parse_chained_comparison, lhs->range).fixit(lhs->range, fix);
  }
  return lhs;
}

Expr* Parser::parseBinary(int minPrec) {
  ExprDepthScope depthScope(*this);
  SourceLoc begin = startLoc();
  Expr* lhs = parseUnary();
  for (;;) {
    if (atCIncrement()) {
      reportCIncrement(lhs);
      break;
    }
    BinaryOp op;
    int prec = binaryPrecedence(tok().kind, op);
    if (prec == 0 || prec < minPrec || panic_ || !enterExprLevel()) break;
    auto* b = ctx_.make<BinaryExpr>(SourceRange());
    b->op = op;
    b->opRange = tok().range;
    consume();
    b->lhs = lhs;
    b->rhs = parseBinary(prec + 1);
    b->range = rangeFrom(begin);
    lhs = b;
  }
  return lhs;
}

// `i++` / `i--`: two adjacent '+' (or '-') that nothing follows on the line. (`a++b` is
// `a + (+b)` and stays valid, as in Python.)
bool Parser::atCIncrement() const {
  if (!(at(TokenKind::plus) && peek().is(TokenKind::plus)) && !(at(TokenKind::minus) && peek().is(TokenKind::minus)))
    return false;
  return tok().range.end == peek().range.begin && !startsExpr(peek(2));
}

void Parser::reportCIncrement(Expr* operand) {
  SourceRange op(tok().range.begin, peek().range.end);
  bool plus = at(TokenKind::plus);
  std::string target(sm_.text(operand->range));
  auto d = error(diag::err_parse_c_increment, op);
  d << (plus ? "++" : "--") << target << (plus ? "+" : "-");
  // As a statement of its own, `i++` becomes `i += 1`.
  if (peek(2).isOneOf(TokenKind::Newline, TokenKind::Eof, TokenKind::semi) &&
      (isa<NameExpr>(operand) || isa<SubscriptExpr>(operand) || isa<AttributeExpr>(operand)))
    d.fixit(op, plus ? " += 1" : " -= 1");
  consume();
  consume();
}

Expr* Parser::parseUnary() {
  UnaryOp op;
  switch (tok().kind) {
    case TokenKind::minus: op = UnaryOp::Neg; break;
    case TokenKind::plus: op = UnaryOp::Pos; break;
    case TokenKind::tilde: op = UnaryOp::Invert; break;
    default: return parsePower();
  }
  ExprDepthScope depthScope(*this);
  SourceLoc begin = startLoc();
  if (!enterExprLevel()) return makeError(begin);
  auto* u = ctx_.make<UnaryExpr>(SourceRange());
  u->op = op;
  u->opRange = tok().range;
  consume();
  u->operand = parseUnary();
  u->range = rangeFrom(begin);
  return u;
}

Expr* Parser::parsePower() {
  SourceLoc begin = startLoc();
  Expr* base = parsePostfix();
  if (!at(TokenKind::starstar) || panic_) return base;
  ExprDepthScope depthScope(*this);
  if (!enterExprLevel()) return base;
  auto* b = ctx_.make<BinaryExpr>(SourceRange());
  b->op = BinaryOp::Pow;
  b->opRange = tok().range;
  consume();
  b->lhs = base;
  b->rhs = parseUnary();  // right-associative; `2 ** -1`
  b->range = rangeFrom(begin);
  return b;
}

Expr* Parser::parsePostfix() {
  SourceLoc begin = startLoc();
  Expr* e = parsePrimary();
  return parseTrailers(e, begin);
}

Expr* Parser::parseTrailers(Expr* e, SourceLoc begin) {
  ExprDepthScope depthScope(*this);
  while (!panic_ && enterExprLevel()) {
    if (at(TokenKind::period)) {
      consume();
      // Keywords are fine as attribute names: the spec writes `cp_async.shared.global(...)`.
      if (!at(TokenKind::Identifier) && !isKeyword(tok().kind)) {
        if (!swallowLexError()) fail(diag::err_parse_expected_attr_name, hereRange());
        break;
      }
      auto* a = ctx_.make<AttributeExpr>(SourceRange());
      a->base = e;
      a->name.assign(tok().text);
      a->nameRange = tok().range;
      consume();
      a->range = rangeFrom(begin);
      e = a;
    } else if (at(TokenKind::l_paren)) {
      const Token& open = tok();
      consume();
      auto* c = ctx_.make<CallExpr>(SourceRange());
      c->callee = e;
      parseCallArgs(c, open);
      c->parenRange = rangeFrom(open.range.begin);
      c->range = rangeFrom(begin);
      e = c;
    } else if (at(TokenKind::l_square)) {
      const Token& open = tok();
      consume();
      auto* s = ctx_.make<SubscriptExpr>(SourceRange());
      s->base = e;
      parseSubscriptItems(s, open);
      s->bracketRange = rangeFrom(open.range.begin);
      s->range = rangeFrom(begin);
      e = s;
    } else {
      break;
    }
  }
  return e;
}

void Parser::parseCallArgs(CallExpr* call, const Token& open) {
  bool sawKeyword = false, sawKwUnpack = false;
  size_t genIndex = SIZE_MAX;
  while (!at(TokenKind::r_paren)) {
    Argument a;
    SourceLoc ab = startLoc();
    if (at(TokenKind::star)) {
      consume();
      a.kind = Argument::Star;
      a.value = parseExpr();
    } else if (at(TokenKind::starstar)) {
      consume();
      a.kind = Argument::DoubleStar;
      a.value = parseExpr();
      sawKwUnpack = true;
    } else if (at(TokenKind::Identifier) && peek().is(TokenKind::equal)) {
      a.kind = Argument::Keyword;
      a.keyword.assign(tok().text);
      a.keywordRange = tok().range;
      consume();
      consume();
      a.value = parseExpr();
      sawKeyword = true;
    } else {
      Expr* v = parseExpr();
      if (!panic_ && at(TokenKind::equal)) {
        // `f(1=2)`, `f(a.b=2)`
        error(diag::err_parse_keyword_not_identifier, v->range);
        consume();
        a.kind = Argument::Keyword;
        a.keywordRange = v->range;
        v = parseExpr();
        sawKeyword = true;
      } else if (!panic_ && at(TokenKind::kw_for)) {
        auto* g = ctx_.make<ComprehensionExpr>(SourceRange());
        g->comprehensionKind = ComprehensionExpr::Generator;
        g->element = v;
        parseComprehensionClauses(g);
        g->range = rangeFrom(ab);
        v = g;
        genIndex = call->args.size();
      } else if (!panic_) {
        if (sawKwUnpack)
          error(diag::err_parse_positional_after_kwunpack, v->range);
        else if (sawKeyword)
          error(diag::err_parse_positional_after_keyword, v->range);
      }
      a.value = v;
    }
    a.range = rangeFrom(ab);
    call->args.push_back(std::move(a));
    if (panic_) return;
    if (!tryConsume(TokenKind::comma)) break;
  }
  if (genIndex != SIZE_MAX && call->args.size() > 1)
    error(diag::err_parse_unparenthesized_genexp, call->args[genIndex].range)
        .fixit(SourceRange(call->args[genIndex].range.begin, call->args[genIndex].range.begin), "(")
        .fixit(SourceRange(call->args[genIndex].range.end, call->args[genIndex].range.end), ")");
  expectCloser(TokenKind::r_paren, open, "arguments");
}

void Parser::parseSubscriptItems(SubscriptExpr* sub, const Token& open) {
  if (at(TokenKind::r_square)) {
    error(diag::err_parse_empty_subscript, SourceRange(open.range.begin, tok().range.end));
    consume();
    return;
  }
  while (!at(TokenKind::r_square)) {
    Argument a;
    SourceLoc ab = startLoc();
    if (at(TokenKind::Identifier) && peek().is(TokenKind::equal)) {
      a.kind = Argument::Keyword;
      a.keyword.assign(tok().text);
      a.keywordRange = tok().range;
      consume();
      consume();
      a.value = parseExpr();
    } else if (at(TokenKind::star)) {
      consume();
      a.kind = Argument::Star;
      a.value = parseBinary(1);
    } else {
      a.value = parseSliceOrExpr();
    }
    a.range = rangeFrom(ab);
    sub->indices.push_back(std::move(a));
    if (panic_) return;
    if (!tryConsume(TokenKind::comma)) break;
  }
  expectCloser(TokenKind::r_square, open, "indices");
}

Expr* Parser::parseSliceOrExpr() {
  SourceLoc begin = startLoc();
  Expr* lower = nullptr;
  if (!at(TokenKind::colon)) {
    lower = parseExpr();
    if (!at(TokenKind::colon) || panic_) return lower;
  }
  consume();  // ':'
  auto* s = ctx_.make<SliceExpr>(SourceRange());
  s->lower = lower;
  auto endsPart = [&] { return at(TokenKind::colon) || at(TokenKind::comma) || at(TokenKind::r_square); };
  if (!endsPart()) s->upper = parseExpr();
  if (!panic_ && tryConsume(TokenKind::colon) && !at(TokenKind::comma) && !at(TokenKind::r_square))
    s->step = parseExpr();
  s->range = rangeFrom(begin);
  return s;
}

void Parser::parseComprehensionClauses(ComprehensionExpr* comp) {
  while (at(TokenKind::kw_for) && !panic_) {
    ComprehensionClause c;
    SourceLoc cb = startLoc();
    consume();
    c.target = parseTargetList();
    checkForTarget(c.target);
    if (panic_) return;
    if (!tryConsume(TokenKind::kw_in)) {
      if (!swallowLexError()) fail(diag::err_parse_expected_in, hereRange()).fixitInsert(prevEnd_, " in");
      return;
    }
    c.iter = parseOr();
    while (at(TokenKind::kw_if) && !panic_) {
      consume();
      c.conditions.push_back(parseOr());
    }
    c.range = rangeFrom(cb);
    comp->clauses.push_back(std::move(c));
  }
}

Expr* Parser::parseMutInExpr() {
  SourceLoc begin = startLoc();
  error(diag::err_parse_mut_outside_param, tok().range);
  consume();
  auto* m = ctx_.make<MutExpr>(SourceRange());
  m->type = parseUnary();
  m->range = rangeFrom(begin);
  return m;
}

Expr* Parser::parsePrimary() {
  ExprDepthScope depthScope(*this);
  if (!enterExprLevel()) return makeError(startLoc());
  const Token& t = tok();
  switch (t.kind) {
    case TokenKind::Identifier: {
      consume();
      auto* n = ctx_.make<NameExpr>(t.range);
      n->name.assign(t.text);
      return n;
    }
    case TokenKind::IntLiteral: {
      consume();
      auto* n = ctx_.make<IntLiteralExpr>(t.range);
      if (std::optional<uint64_t> v = decodeIntLiteral(t.text)) n->value = *v;  // else: the scanner said so
      return n;
    }
    case TokenKind::FloatLiteral: {
      consume();
      auto* n = ctx_.make<FloatLiteralExpr>(t.range);
      if (std::optional<double> v = decodeFloatLiteral(t.text)) n->value = *v;
      return n;
    }
    case TokenKind::StringLiteral:
    case TokenKind::FStringLiteral: return parseStrings();
    case TokenKind::kw_True:
    case TokenKind::kw_False: {
      consume();
      auto* b = ctx_.make<BoolLiteralExpr>(t.range);
      b->value = t.is(TokenKind::kw_True);
      return b;
    }
    case TokenKind::kw_None: consume(); return ctx_.make<NoneLiteralExpr>(t.range);
    case TokenKind::ellipsis: consume(); return ctx_.make<EllipsisExpr>(t.range);
    case TokenKind::l_paren: return parseParenthesized();
    case TokenKind::l_square: return parseList();
    case TokenKind::l_brace: return parseBrace();
    case TokenKind::kw_mut: return parseMutInExpr();
    case TokenKind::kw_lambda:
      fail(diag::err_parse_lambda, t.range);
      consume();
      return makeError(t.range.begin);
    case TokenKind::kw_await:
    case TokenKind::kw_yield:
      fail(diag::err_parse_unsupported, t.range)
          << (t.is(TokenKind::kw_await) ? "'await' expressions" : "'yield' expressions");
      consume();
      return makeError(t.range.begin);
    case TokenKind::Error: swallowLexError(); return ctx_.make<ErrorExpr>(t.range);
    default: break;
  }
  SourceRange here = hereRange();
  const Token& prev = pos_ > 0 ? (*toks_)[pos_ - 1] : t;
  if (atLineEnd() && pos_ > 0 && isOperatorToken(prev.kind)) {
    DiagBuilder b = fail(diag::err_parse_trailing_operator, prev.range);
    b << std::string(prev.text);
    b.note(diag::note_parse_wrap_in_parens, prev.range);
  } else {
    fail(diag::err_parse_expected_expr, here);
  }
  return ctx_.make<ErrorExpr>(SourceRange(here.begin, here.begin));
}

Expr* Parser::parseParenthesized() {
  const Token& open = tok();
  SourceLoc begin = startLoc();
  consume();
  if (tryConsume(TokenKind::r_paren)) {
    auto* t = ctx_.make<TupleExpr>(rangeFrom(begin));
    t->parenthesized = true;
    return t;
  }
  Expr* first = parseStarOrExpr(true, false);
  if (panic_) return first;
  if (at(TokenKind::kw_for)) {
    auto* g = ctx_.make<ComprehensionExpr>(SourceRange());
    g->comprehensionKind = ComprehensionExpr::Generator;
    g->element = first;
    parseComprehensionClauses(g);
    expectCloser(TokenKind::r_paren, open);
    g->range = rangeFrom(begin);
    return g;
  }
  if (at(TokenKind::comma)) {
    auto* t = ctx_.make<TupleExpr>(SourceRange());
    t->parenthesized = true;
    t->elements.push_back(first);
    while (tryConsume(TokenKind::comma)) {
      if (at(TokenKind::r_paren)) break;
      t->elements.push_back(parseStarOrExpr(true, false));
      if (panic_) break;
    }
    expectCloser(TokenKind::r_paren, open, "elements");
    t->range = rangeFrom(begin);
    return t;
  }
  if (auto* star = dyn_cast<StarredExpr>(first)) {
    error(diag::err_parse_star_not_allowed, star->range);
    first = star->value;  // reported once; the star is dropped
  }
  expectCloser(TokenKind::r_paren, open);
  return first;
}

Expr* Parser::parseList() {
  const Token& open = tok();
  SourceLoc begin = startLoc();
  consume();
  if (tryConsume(TokenKind::r_square)) return ctx_.make<ListExpr>(rangeFrom(begin));
  Expr* first = parseStarOrExpr(true, false);
  if (!panic_ && at(TokenKind::kw_for)) {
    auto* c = ctx_.make<ComprehensionExpr>(SourceRange());
    c->comprehensionKind = ComprehensionExpr::List;
    c->element = first;
    parseComprehensionClauses(c);
    expectCloser(TokenKind::r_square, open);
    c->range = rangeFrom(begin);
    return c;
  }
  auto* l = ctx_.make<ListExpr>(SourceRange());
  l->elements.push_back(first);
  while (!panic_ && tryConsume(TokenKind::comma)) {
    if (at(TokenKind::r_square)) break;
    l->elements.push_back(parseStarOrExpr(true, false));
  }
  expectCloser(TokenKind::r_square, open, "elements");
  l->range = rangeFrom(begin);
  return l;
}

Expr* Parser::parseBrace() {
  const Token& open = tok();
  SourceLoc begin = startLoc();
  consume();
  auto* d = ctx_.make<DictExpr>(SourceRange());
  if (tryConsume(TokenKind::r_brace)) {
    d->range = rangeFrom(begin);
    return d;
  }
  if (at(TokenKind::starstar)) {
    fail(diag::err_parse_dict_unpack, tok().range);
    return makeError(begin);
  }
  Expr* key = parseExpr();
  if (panic_) return makeError(begin);
  if (!at(TokenKind::colon)) {
    // A set display or set comprehension: parse it through, then explain.
    if (at(TokenKind::kw_for)) {
      auto* c = ctx_.make<ComprehensionExpr>(SourceRange());
      c->element = key;
      parseComprehensionClauses(c);
    } else {
      while (!panic_ && tryConsume(TokenKind::comma)) {
        if (at(TokenKind::r_brace)) break;
        parseExpr();
      }
    }
    if (!panic_ && at(TokenKind::colon)) {
      fail(diag::err_parse_expected_closer, tok().range) << "}";
      return makeError(begin);
    }
    if (expectCloser(TokenKind::r_brace, open, "elements")) error(diag::err_parse_set_literal, rangeFrom(begin));
    return makeError(begin);
  }
  consume();
  Expr* value = parseExpr();
  if (!panic_ && at(TokenKind::kw_for)) {
    fail(diag::err_parse_dict_comprehension, tok().range);
    return makeError(begin);
  }
  d->entries.push_back({key, value});
  while (!panic_ && tryConsume(TokenKind::comma)) {
    if (at(TokenKind::r_brace)) break;
    if (at(TokenKind::starstar)) {
      fail(diag::err_parse_dict_unpack, tok().range);
      break;
    }
    Expr* k = parseExpr();
    if (panic_) break;
    if (!tryConsume(TokenKind::colon)) {
      if (!swallowLexError()) fail(diag::err_parse_expected_dict_colon, insertionPoint()).fixitInsert(prevEnd_, ": ");
      break;
    }
    Expr* v = parseExpr();
    d->entries.push_back({k, v});
  }
  expectCloser(TokenKind::r_brace, open, "entries");
  d->range = rangeFrom(begin);
  return d;
}

Expr* Parser::parseStrings() {
  SourceLoc begin = startLoc();
  size_t first = pos_;
  bool anyF = false;
  while (at(TokenKind::StringLiteral) || at(TokenKind::FStringLiteral)) {
    anyF |= at(TokenKind::FStringLiteral);
    consume();
  }
  size_t last = pos_;
  if (!anyF) {
    auto* s = ctx_.make<StringLiteralExpr>(rangeFrom(begin));
    for (size_t i = first; i < last; ++i) s->value += decodeStringLiteral((*toks_)[i].text);
    return s;
  }
  auto* f = ctx_.make<FStringExpr>(rangeFrom(begin));
  for (size_t i = first; i < last; ++i) {
    const Token& t = (*toks_)[i];
    if (t.is(TokenKind::StringLiteral)) {
      FStringPart p;
      p.range = t.range;
      p.literal = decodeStringLiteral(t.text);
      f->parts.push_back(std::move(p));
    } else {
      splitFString(t, f);
    }
  }
  return f;
}

}  // namespace tessera
