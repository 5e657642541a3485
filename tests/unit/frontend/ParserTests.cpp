// The parser: precedence and associativity, every statement and expression form, exact node
// ranges, error recovery (N independent errors give exactly N diagnostics), f-string splitting,
// and the AST dump.
#include <doctest/doctest.h>
#include <sstream>

#include "frontend/ASTDump.h"
#include "frontend/FrontendDiagnostics.h"
#include "frontend/Lexer.h"
#include "frontend/Parser.h"

using namespace tessera;

namespace {

struct Parse {
  SourceManager sm;
  DiagnosticEngine diags{sm};
  StoringDiagnosticConsumer store;
  ASTContext ctx;
  FileID file = 0;
  Module* module = nullptr;

  explicit Parse(std::string text, unsigned errorLimit = 0) {
    diags.addConsumer(&store);
    diags.setErrorLimit(errorLimit);
    file = sm.addBuffer("t.tessera", std::move(text));
    module = parseBuffer(sm, file, ctx, diags);
  }
  std::string at(SourceLoc l) const {
    LineColumn lc = sm.lineColumn(l);
    return std::to_string(lc.line) + ":" + std::to_string(lc.column);
  }
  std::string range(SourceRange r) const { return at(r.begin) + "-" + at(r.end); }
  std::string range(const Node* n) const { return range(n->range); }
  size_t errors() const { return store.diagnostics.size(); }
  // "id line:col" for each diagnostic, joined by "; ".
  std::string diagList() const {
    std::string s;
    for (const Diagnostic& d : store.diagnostics) {
      if (!s.empty()) s += "; ";
      s += std::string(diagInfo(d.id).name) + " " + at(d.range.begin);
    }
    return s;
  }
  Stmt* stmt(size_t i = 0) const { return module->stmts.at(i); }
  Expr* expr(size_t i = 0) const {
    auto* s = dyn_cast<ExprStmt>(stmt(i));
    REQUIRE(s);
    return s->expr;
  }
  std::string dump() const {
    std::ostringstream os;
    dumpAST(*module, sm, os);
    return os.str();
  }
};

std::string sx(const Expr* e);

std::string args(const std::vector<Argument>& as) {
  std::string s;
  for (const Argument& a : as) {
    s += ' ';
    switch (a.kind) {
      case Argument::Positional: break;
      case Argument::Keyword: s += a.keyword + "="; break;
      case Argument::Star: s += "*"; break;
      case Argument::DoubleStar: s += "**"; break;
    }
    s += sx(a.value);
  }
  return s;
}

// A fully parenthesised prefix form of an expression, for precedence tests.
std::string sx(const Expr* e) {
  if (!e) return "_";
  switch (e->kind) {
    case NodeKind::NameExpr: return cast<NameExpr>(e)->name;
    case NodeKind::IntLiteralExpr: return std::to_string(cast<IntLiteralExpr>(e)->value);
    case NodeKind::FloatLiteralExpr: {
      std::ostringstream os;
      os << cast<FloatLiteralExpr>(e)->value;
      return os.str();
    }
    case NodeKind::StringLiteralExpr: return "'" + cast<StringLiteralExpr>(e)->value + "'";
    case NodeKind::BoolLiteralExpr: return cast<BoolLiteralExpr>(e)->value ? "True" : "False";
    case NodeKind::NoneLiteralExpr: return "None";
    case NodeKind::EllipsisExpr: return "...";
    case NodeKind::UnaryExpr: {
      auto* u = cast<UnaryExpr>(e);
      return std::string("(") + unaryOpSpelling(u->op) + " " + sx(u->operand) + ")";
    }
    case NodeKind::BinaryExpr: {
      auto* b = cast<BinaryExpr>(e);
      return std::string("(") + binaryOpSpelling(b->op) + " " + sx(b->lhs) + " " + sx(b->rhs) + ")";
    }
    case NodeKind::ConditionalExpr: {
      auto* c = cast<ConditionalExpr>(e);
      return "(if " + sx(c->cond) + " " + sx(c->thenExpr) + " " + sx(c->elseExpr) + ")";
    }
    case NodeKind::CallExpr: return "(call " + sx(cast<CallExpr>(e)->callee) + args(cast<CallExpr>(e)->args) + ")";
    case NodeKind::SubscriptExpr:
      return "(sub " + sx(cast<SubscriptExpr>(e)->base) + args(cast<SubscriptExpr>(e)->indices) + ")";
    case NodeKind::SliceExpr: {
      auto* s = cast<SliceExpr>(e);
      return "(slice " + sx(s->lower) + " " + sx(s->upper) + " " + sx(s->step) + ")";
    }
    case NodeKind::AttributeExpr:
      return "(. " + sx(cast<AttributeExpr>(e)->base) + " " + cast<AttributeExpr>(e)->name + ")";
    case NodeKind::TupleExpr: {
      std::string s = "(tuple";
      for (const Expr* x : cast<TupleExpr>(e)->elements) s += " " + sx(x);
      return s + ")";
    }
    case NodeKind::ListExpr: {
      std::string s = "[";
      for (const Expr* x : cast<ListExpr>(e)->elements) s += (s.size() > 1 ? " " : "") + sx(x);
      return s + "]";
    }
    case NodeKind::DictExpr: {
      std::string s = "{";
      for (const DictEntry& d : cast<DictExpr>(e)->entries)
        s += (s.size() > 1 ? " " : "") + sx(d.key) + ":" + sx(d.value);
      return s + "}";
    }
    case NodeKind::ComprehensionExpr: {
      auto* c = cast<ComprehensionExpr>(e);
      std::string s = c->comprehensionKind == ComprehensionExpr::List ? "(listcomp " : "(genexp ";
      s += sx(c->element);
      for (const ComprehensionClause& cl : c->clauses) {
        s += " (for " + sx(cl.target) + " " + sx(cl.iter);
        for (const Expr* x : cl.conditions) s += " (if " + sx(x) + ")";
        s += ")";
      }
      return s + ")";
    }
    case NodeKind::MutExpr: return "(mut " + sx(cast<MutExpr>(e)->type) + ")";
    case NodeKind::StarredExpr: return "*" + sx(cast<StarredExpr>(e)->value);
    case NodeKind::FStringExpr: {
      std::string s = "(f";
      for (const FStringPart& p : cast<FStringExpr>(e)->parts) {
        if (!p.expr) {
          s += " '" + p.literal + "'";
          continue;
        }
        s += " {" + sx(p.expr);
        if (!p.conversion.empty()) s += "!" + p.conversion;
        if (!p.formatSpec.empty()) s += ":" + p.formatSpec;
        s += "}";
      }
      return s + ")";
    }
    case NodeKind::ErrorExpr: return "<error>";
    default: return "?";
  }
}

// The prefix form of a one-line expression statement; fails the test on any diagnostic.
std::string parseExpr(const std::string& text) {
  Parse p(text + "\n");
  INFO(text, " -> ", p.diagList());
  CHECK(p.errors() == 0);
  if (p.module->stmts.size() != 1 || !isa<ExprStmt>(p.stmt())) return "<not one expression statement>";
  return sx(p.expr());
}

}  // namespace

TEST_CASE("precedence and associativity") {
  struct Row {
    const char* text;
    const char* tree;
  } rows[] = {
      {"a + b * c", "(+ a (* b c))"},
      {"a * b + c", "(+ (* a b) c)"},
      {"a - b - c", "(- (- a b) c)"},
      {"a / b / c", "(/ (/ a b) c)"},
      {"a // b % c", "(% (// a b) c)"},
      {"a @ b * c", "(* (@ a b) c)"},
      {"a ** b ** c", "(** a (** b c))"},
      {"-x ** 2", "(- (** x 2))"},
      {"2 ** -1", "(** 2 (- 1))"},
      {"-a * b", "(* (- a) b)"},
      {"~a + b", "(+ (~ a) b)"},
      {"- - a", "(- (- a))"},
      {"a << b + c", "(<< a (+ b c))"},
      {"a >> b << c", "(<< (>> a b) c)"},
      {"a & b << c", "(& a (<< b c))"},
      {"a ^ b & c", "(^ a (& b c))"},
      {"a | b ^ c", "(| a (^ b c))"},
      {"a | b < c", "(< (| a b) c)"},
      {"not a < b", "(not (< a b))"},
      {"not not a", "(not (not a))"},
      {"a and b or c", "(or (and a b) c)"},
      {"a or b and c", "(or a (and b c))"},
      {"a and not b", "(and a (not b))"},
      {"a or b or c", "(or (or a b) c)"},
      {"a if b else c if d else e", "(if b a (if d c e))"},
      {"a or b if c and d else e", "(if (and c d) (or a b) e)"},
      {"x in y", "(in x y)"},
      {"x not in y", "(not in x y)"},
      {"x is y", "(is x y)"},
      {"x is not None", "(is not x None)"},
      {"a != b + 1", "(!= a (+ b 1))"},
      {"a >= b", "(>= a b)"},
      {"a <= -b", "(<= a (- b))"},
      {"(a + b) * c", "(* (+ a b) c)"},
      {"a.b.c", "(. (. a b) c)"},
      {"a.b(c)[d]", "(sub (call (. a b) c) d)"},
      {"-a.b ** c.d", "(- (** (. a b) (. c d)))"},
      {"x.T @ y", "(@ (. x T) y)"},
  };
  for (const Row& r : rows) {
    CHECK_MESSAGE(parseExpr(r.text) == r.tree, r.text);
  }
}

TEST_CASE("expression forms") {
  CHECK(parseExpr("f()") == "(call f)");
  CHECK(parseExpr("f(a, b=1, *c, **d,)") == "(call f a b=1 *c **d)");
  CHECK(parseExpr("launch.grid(blocks=(4,), threads=(256,))(saxpy)(a, X)") ==
        "(call (call (call (. launch grid) blocks=(tuple 4) threads=(tuple 256)) saxpy) a X)");
  CHECK(parseExpr("X[t:t+128]") == "(sub X (slice t (+ t 128) _))");
  CHECK(parseExpr("Y[:]") == "(sub Y (slice _ _ _))");
  CHECK(parseExpr("A[:, k:k+128]") == "(sub A (slice _ _ _) (slice k (+ k 128) _))");
  CHECK(parseExpr("x[::2]") == "(sub x (slice _ _ 2))");
  CHECK(parseExpr("x[1:2:3, i]") == "(sub x (slice 1 2 3) i)");
  CHECK(parseExpr("x[a,]") == "(sub x a)");
  CHECK(parseExpr("gemm_tc[grid, block, stream=s2](A, B, C)") == "(call (sub gemm_tc grid block stream=s2) A B C)");
  CHECK(parseExpr("tshared.alloc[f32](128)") == "(call (sub (. tshared alloc) f32) 128)");
  CHECK(parseExpr("()") == "(tuple)");
  CHECK(parseExpr("(128,)") == "(tuple 128)");
  CHECK(parseExpr("(1, 2, *r)") == "(tuple 1 2 *r)");
  CHECK(parseExpr("a, b") == "(tuple a b)");
  CHECK(parseExpr("[]") == "[]");
  CHECK(parseExpr("[16,8,4,2,1,]") == "[16 8 4 2 1]");
  CHECK(parseExpr("{}") == "{}");
  CHECK(parseExpr("{\"BM\": [64,128], 1: x,}") == "{'BM':[64 128] 1:x}");
  CHECK(parseExpr("[i * 2 for i in range(4) if i if i > 1 for j in k]") ==
        "(listcomp (* i 2) (for i (call range 4) (if i) (if (> i 1))) (for j k))");
  CHECK(parseExpr("(x for x, y in z)") == "(genexp x (for (tuple x y) z))");
  CHECK(parseExpr("sum(x for x in y)") == "(call sum (genexp x (for x y)))");
  CHECK(parseExpr("[f\"cuda:{i}\" for i in range(72)]") == "(listcomp (f 'cuda:' {i}) (for i (call range 72)))");
  CHECK(parseExpr("1_000_000 + 8_KiB + 0x2A") == "(+ (+ 1000000 8192) 42)");
  CHECK(parseExpr("1.5") == "1.5");
  CHECK(parseExpr("'a' \"b\" '''c'''") == "'abc'");
  CHECK(parseExpr("True, False, None, ...") == "(tuple True False None ...)");
  CHECK(parseExpr("fp6 @accum(fp32)") == "(@ fp6 (call accum fp32))");
  CHECK(parseExpr("cp_async.shared.global(s1, X)") == "(call (. (. cp_async shared) global) s1 X)");
  CHECK(parseExpr("f(\n  a,\n  b)") == "(call f a b)");
}

TEST_CASE("f-strings are split into literal text and fields with exact locations") {
  Parse p("s = f\"cuda:{i!r:>10} {{x}} {a + b}\" \"!\"\n");
  REQUIRE(p.errors() == 0);
  auto* f = dyn_cast<FStringExpr>(cast<AssignStmt>(p.stmt())->value);
  REQUIRE(f);
  CHECK(p.range(f) == "1:5-1:40");
  REQUIRE(f->parts.size() == 5);
  CHECK(f->parts[0].literal == "cuda:");
  CHECK(p.range(f->parts[0].range) == "1:7-1:12");
  CHECK(p.range(f->parts[1].range) == "1:12-1:21");
  CHECK(f->parts[1].conversion == "r");
  CHECK(f->parts[1].formatSpec == ">10");
  CHECK(p.range(f->parts[1].expr) == "1:13-1:14");
  CHECK(f->parts[2].literal == " {x} ");
  CHECK(p.range(f->parts[3].range) == "1:28-1:35");
  CHECK(sx(f->parts[3].expr) == "(+ a b)");
  CHECK(p.range(f->parts[3].expr) == "1:29-1:34");
  auto* b = cast<BinaryExpr>(f->parts[3].expr);
  CHECK(p.range(b->rhs) == "1:33-1:34");
  CHECK(f->parts[4].literal == "!");
  CHECK(p.range(f->parts[4].range) == "1:37-1:40");

  CHECK(parseExpr("f'{a[\"k\"]}{b!s}{c != d}'") == "(f {(sub a 'k')} {b!s} {(!= c d)})");
  CHECK(parseExpr("f\"tab\\t{x}\"") == "(f 'tab\t' {x})");
  CHECK(parseExpr("rf\"\\d{x}\"") == "(f '\\d' {x})");
  CHECK(parseExpr("f\"{x:{w}}\"") == "(f {x:{w}})");
}

TEST_CASE("f-string errors") {
  Parse p(
      "a = f\"{}\"\n"
      "b = f\"}\"\n"
      "c = f\"{x\"\n"
      "d = f\"{x!q}\"\n"
      "e = f\"{x y}\"\n");
  CHECK(p.diagList() ==
        "err_parse_fstring_empty_expr 1:7; err_parse_fstring_single_brace 2:7; "
        "err_parse_fstring_unterminated_field 3:7; err_parse_fstring_bad_conversion 4:10; "
        "err_parse_fstring_extra_tokens 5:10");
  CHECK(p.module->stmts.size() == 5);
}

TEST_CASE("statement forms") {
  Parse p(
      "import a.b as c, d\n"                                                        // 0
      "from ..m.n import (x as y, z,)\n"                                            // 1
      "from . import w\n"                                                           // 2
      "from m import *\n"                                                           // 3
      "a = b = v\n"                                                                 // 4
      "s0, s1 = s1, s0\n"                                                           // 5
      "first, *rest = xs\n"                                                         // 6
      "x ^= 1; x @= w; x //= 2; x **= 3\n"                                          // 7, 8, 9, 10
      "n: int\n"                                                                    // 11
      "y: f32 = 0.0\n"                                                              // 12
      "if a:\n    pass\nelif b:\n    pass\nelse:\n    pass\n"                       // 13
      "while c:\n    break\nelse:\n    pass\n"                                      // 14
      "for m, n, k in tile.mma(A, B, C, BM=128):\n    continue\nelse:\n    pass\n"  // 15
      "with graph.capture() as g, lock:\n    pass\n"                                // 16
      "def f(x): return x\n"                                                        // 17
      "f(a)\n");                                                                    // 18
  REQUIRE(p.errors() == 0);
  REQUIRE(p.module->stmts.size() == 19);

  auto* imp = cast<ImportStmt>(p.stmt(0));
  REQUIRE(imp->names.size() == 2);
  CHECK(imp->names[0].name == "a.b");
  CHECK(imp->names[0].alias == "c");
  CHECK(p.range(imp->names[0].range) == "1:8-1:16");
  CHECK(p.range(imp->names[0].aliasRange) == "1:15-1:16");

  auto* from = cast<ImportFromStmt>(p.stmt(1));
  CHECK(from->module == "m.n");
  CHECK(from->level == 2);
  CHECK(p.range(from->moduleRange) == "2:8-2:11");
  REQUIRE(from->names.size() == 2);
  CHECK(from->names[0].alias == "y");
  CHECK(from->names[1].name == "z");
  CHECK(cast<ImportFromStmt>(p.stmt(2))->level == 1);
  CHECK(cast<ImportFromStmt>(p.stmt(2))->module.empty());
  CHECK(cast<ImportFromStmt>(p.stmt(3))->star);

  auto* chain = cast<AssignStmt>(p.stmt(4));
  REQUIRE(chain->targets.size() == 2);
  CHECK(sx(chain->targets[0]) == "a");
  CHECK(sx(chain->targets[1]) == "b");
  CHECK(sx(chain->value) == "v");
  CHECK(sx(cast<AssignStmt>(p.stmt(5))->targets[0]) == "(tuple s0 s1)");
  CHECK(sx(cast<AssignStmt>(p.stmt(5))->value) == "(tuple s1 s0)");
  CHECK(sx(cast<AssignStmt>(p.stmt(6))->targets[0]) == "(tuple first *rest)");

  CHECK(cast<AugAssignStmt>(p.stmt(7))->op == BinaryOp::BitXor);
  CHECK(cast<AugAssignStmt>(p.stmt(8))->op == BinaryOp::MatMul);
  CHECK(cast<AugAssignStmt>(p.stmt(9))->op == BinaryOp::FloorDiv);
  CHECK(cast<AugAssignStmt>(p.stmt(10))->op == BinaryOp::Pow);
  CHECK(p.range(cast<AugAssignStmt>(p.stmt(10))->opRange) == "8:28-8:31");

  auto* ann = cast<AnnAssignStmt>(p.stmt(11));
  CHECK(sx(ann->annotation) == "int");
  CHECK(ann->value == nullptr);
  CHECK(sx(cast<AnnAssignStmt>(p.stmt(12))->value) == "0");

  auto* ifs = cast<IfStmt>(p.stmt(13));
  CHECK_FALSE(ifs->isElif);
  REQUIRE(ifs->elseBlock.stmts.size() == 1);
  auto* elif = dyn_cast<IfStmt>(ifs->elseBlock.stmts[0]);
  REQUIRE(elif);
  CHECK(elif->isElif);
  CHECK(sx(elif->cond) == "b");
  REQUIRE(elif->elseBlock.stmts.size() == 1);
  CHECK(isa<PassStmt>(elif->elseBlock.stmts[0]));
  CHECK(p.range(ifs) == "11:1-16:9");

  auto* wh = cast<WhileStmt>(p.stmt(14));
  CHECK(isa<BreakStmt>(wh->body.stmts.at(0)));
  CHECK(wh->elseBlock.stmts.size() == 1);

  auto* fr = cast<ForStmt>(p.stmt(15));
  CHECK(sx(fr->target) == "(tuple m n k)");
  CHECK(sx(fr->iter) == "(call (. tile mma) A B C BM=128)");
  CHECK(isa<ContinueStmt>(fr->body.stmts.at(0)));
  CHECK(fr->elseBlock.stmts.size() == 1);

  auto* w = cast<WithStmt>(p.stmt(16));
  REQUIRE(w->items.size() == 2);
  CHECK(sx(w->items[0].target) == "g");
  CHECK(w->items[1].target == nullptr);

  auto* fn = cast<FunctionDefStmt>(p.stmt(17));
  CHECK(fn->name == "f");
  REQUIRE(fn->body.stmts.size() == 1);
  CHECK(isa<ReturnStmt>(fn->body.stmts[0]));
  CHECK(p.range(fn->body.range) == "27:11-27:19");
}

TEST_CASE("function definitions: decorators, parameters, docstrings") {
  Parse p(
      "\"\"\"Module doc.\"\"\"\n"
      "@kernel tile[(128,)] shared(8_KiB)\n"
      "@jit @autodiff\n"
      "@kernel.autotune(space=dict(BM=[128,256], stages=[2,3]))\n"
      "def f(x: f32[n], y: mut f32[n], *args, z: f16 = 1, **kw) -> f32:\n"
      "    'Doc.'\n"
      "    return x\n"
      "def g(a, *, b, c=2): ...\n");
  REQUIRE(p.errors() == 0);
  CHECK(p.module->docstring == "Module doc.");
  auto* f = cast<FunctionDefStmt>(p.stmt(1));
  CHECK(f->docstring == "Doc.");
  REQUIRE(f->decorators.size() == 4);
  CHECK(sx(f->decorators[0].expr) == "kernel");
  REQUIRE(f->decorators[0].clauses.size() == 2);
  CHECK(sx(f->decorators[0].clauses[0]) == "(sub tile (tuple 128))");
  CHECK(sx(f->decorators[0].clauses[1]) == "(call shared 8192)");
  CHECK(p.range(f->decorators[0].range) == "2:1-2:35");
  CHECK(sx(f->decorators[1].expr) == "jit");
  CHECK(sx(f->decorators[2].expr) == "autodiff");
  CHECK(p.range(f->decorators[2].range) == "3:6-3:15");
  CHECK(sx(f->decorators[3].expr) == "(call (. kernel autotune) space=(call dict BM=[128 256] stages=[2 3]))");
  REQUIRE(f->params.size() == 5);
  CHECK(f->params[0].name == "x");
  CHECK(sx(f->params[0].annotation) == "(sub f32 n)");
  CHECK(p.range(f->params[0].range) == "5:7-5:16");
  CHECK(p.range(f->params[0].nameRange) == "5:7-5:8");
  CHECK(sx(f->params[1].annotation) == "(mut (sub f32 n))");
  CHECK(p.range(f->params[1].annotation) == "5:21-5:31");
  CHECK(f->params[2].paramKind == Param::VarArgs);
  CHECK(f->params[2].name == "args");
  CHECK(sx(f->params[3].defaultValue) == "1");
  CHECK(f->params[4].paramKind == Param::KwArgs);
  CHECK(sx(f->returns) == "f32");
  CHECK(p.range(f) == "2:1-7:13");

  auto* g = cast<FunctionDefStmt>(p.stmt(2));
  REQUIRE(g->params.size() == 4);
  CHECK(g->params[1].paramKind == Param::KeywordOnlyMarker);
  CHECK(g->params[1].name.empty());
  CHECK(isa<EllipsisExpr>(cast<ExprStmt>(g->body.stmts.at(0))->expr));
}

TEST_CASE("node ranges are exact and end-exclusive") {
  Parse p("y[i] = alpha * (x[i] + 1)\n");
  REQUIRE(p.errors() == 0);
  auto* a = cast<AssignStmt>(p.stmt());
  CHECK(p.range(a) == "1:1-1:26");
  CHECK(p.range(a->targets[0]) == "1:1-1:5");
  auto* mul = cast<BinaryExpr>(a->value);
  CHECK(p.range(mul) == "1:8-1:26");
  CHECK(p.range(mul->opRange) == "1:14-1:15");
  CHECK(p.range(mul->rhs) == "1:17-1:25");  // the parentheses belong to the enclosing node
  auto* sub = cast<SubscriptExpr>(cast<BinaryExpr>(mul->rhs)->lhs);
  CHECK(p.range(sub->bracketRange) == "1:18-1:21");

  Parse q("z = f(a, k=2)(b)\n");
  auto* outer = cast<CallExpr>(cast<AssignStmt>(q.stmt())->value);
  CHECK(q.range(outer) == "1:5-1:17");
  CHECK(q.range(outer->parenRange) == "1:14-1:17");
  auto* inner = cast<CallExpr>(outer->callee);
  CHECK(q.range(inner) == "1:5-1:14");
  CHECK(q.range(inner->args[1].range) == "1:10-1:13");
  CHECK(q.range(inner->args[1].keywordRange) == "1:10-1:11");

  Parse r("n = a not in b\n");
  CHECK(r.range(cast<BinaryExpr>(cast<AssignStmt>(r.stmt())->value)->opRange) == "1:7-1:13");

  Parse s("def f():\n    x = 1\n\n    y = 2  # comment\n");
  auto* f = cast<FunctionDefStmt>(s.stmt());
  CHECK(s.range(f) == "1:1-4:10");
  CHECK(s.range(f->body.range) == "2:5-4:10");
}

TEST_CASE("the chained comparison is an error with a fix-it") {
  Parse p("ok = 0 <= i < n\n");
  REQUIRE(p.errors() == 1);
  const Diagnostic& d = p.store.diagnostics[0];
  CHECK(d.id == diag::err_parse_chained_comparison);
  CHECK(p.range(d.range) == "1:6-1:16");
  REQUIRE(d.fixits.size() == 1);
  CHECK(d.fixits[0].replacement == "(0 <= i) and (i < n)");
  CHECK(p.range(d.fixits[0].range) == "1:6-1:16");
}

TEST_CASE("missing closer: one error with a note at the opener") {
  Parse p("x = f(a, b\ny = 2\n");
  REQUIRE(p.errors() == 1);
  const Diagnostic& d = p.store.diagnostics[0];
  CHECK(d.id == diag::err_parse_expected_closer);
  CHECK(d.message == "expected ')'");
  CHECK(p.at(d.range.begin) == "1:11");
  REQUIRE(d.notes.size() == 1);
  CHECK(d.notes[0].id == diag::note_parse_to_match);
  CHECK(p.range(d.notes[0].range) == "1:6-1:7");
  // The statement after the unclosed bracket is still read.
  REQUIRE(p.module->stmts.size() == 2);
  CHECK(isa<ErrorStmt>(p.stmt(0)));
  CHECK(sx(cast<AssignStmt>(p.stmt(1))->value) == "2");
}

TEST_CASE("recovery: N independent errors give exactly N diagnostics") {
  struct Case {
    const char* text;
    const char* diags;
  } cases[] = {
      {"x = = 1\ny = 2\n", "err_parse_expected_expr 1:5"},
      {"x = 1 y = 2\nz = (\n", "err_parse_expected_newline 1:7; err_parse_expected_expr 2:6"},
      {"def f(x)\n    return x\ndef g(:\n    return 1\nh(1=2)\n",
       "err_parse_expected_colon 1:9; err_parse_expected_param 3:7; err_parse_keyword_not_identifier 5:3"},
      {"if x\n    y = 1\n        z = 2\n", "err_parse_expected_colon 1:5; err_parse_unexpected_indent 3:9"},
      {"class A:\n    def f(self):\n        return (1 +\n",
       "err_parse_unsupported 1:1; err_parse_trailing_operator 3:19"},
      {"break\ncontinue\nreturn\nf() = 1\na < b < c\n",
       "err_parse_break_outside_loop 1:1; err_parse_continue_outside_loop 2:1; err_parse_return_outside_function 3:1; "
       "err_parse_invalid_assign_target 4:1; err_parse_chained_comparison 5:1"},
      {"for i range(3):\n    pass\nelse:\n    pass\nelse:\n    pass\n",
       "err_parse_expected_in 1:7; err_parse_else_without_if 5:1"},
      {"@kernel\nx = 1\ny = [1, 2 3]\n", "err_parse_decorator_without_def 2:1; err_parse_missing_comma 3:11"},
      {"def f(x):\n    z = (\n    w = 1 2\n    return [1,\nv = 3 4\n",
       "err_parse_unclosed_bracket 2:9; err_parse_expected_newline 3:11; err_parse_unclosed_bracket 4:12; "
       "err_parse_expected_newline 5:7"},
      {"x = a +\ny = f(a]\nz = 1)\n",
       "err_parse_trailing_operator 1:7; err_parse_mismatched_closer 2:8; err_parse_unmatched_closer 3:6"},
  };
  for (const Case& c : cases) {
    Parse p(c.text);
    CHECK_MESSAGE(p.diagList() == c.diags, c.text);
  }
}

TEST_CASE("bad statements become ErrorStmt; bad headers keep their blocks") {
  Parse p("x = = 1\nif y\n    z = 2\nw = 3\n");
  REQUIRE(p.module->stmts.size() == 3);
  CHECK(isa<ErrorStmt>(p.stmt(0)));
  CHECK(p.range(p.stmt(0)) == "1:1-1:8");
  auto* ifs = dyn_cast<IfStmt>(p.stmt(1));
  REQUIRE(ifs);
  REQUIRE(ifs->thenBlock.stmts.size() == 1);
  CHECK(isa<AssignStmt>(ifs->thenBlock.stmts[0]));
  CHECK(isa<AssignStmt>(p.stmt(2)));
}

TEST_CASE("the parser stops once the diagnostics engine has stopped") {
  std::string text;
  for (int i = 0; i < 50; ++i) text += "x = = 1\n";
  Parse p(text, /*errorLimit=*/3);
  CHECK(p.diags.stopped());
  CHECK(p.errors() == 4);  // three errors and the fatal "too many errors"
  CHECK(p.module->stmts.size() < 10);
}

TEST_CASE("scanner errors are not reported again by the parser") {
  Parse p("x = 1 $ 2\ny = 99999999999999999999999\n");
  for (const Diagnostic& d : p.store.diagnostics) CHECK(std::string(diagInfo(d.id).name).rfind("err_lex_", 0) == 0);
  CHECK(p.errors() == 2);
}

TEST_CASE("the AST dump") {
  Parse p("@kernel tile[(128,)]\ndef f(x: mut f32[n], k=2):\n    x[0] += -k\n");
  REQUIRE(p.errors() == 0);
  CHECK(p.dump() ==
        "Module 1:1-4:1\n"
        "  FunctionDefStmt 1:1-3:15 name='f'\n"
        "    decorator 1:1-1:21\n"
        "      NameExpr 1:2-1:8 name='kernel'\n"
        "      clause\n"
        "        SubscriptExpr 1:9-1:21\n"
        "          NameExpr 1:9-1:13 name='tile'\n"
        "          index 1:14-1:20\n"
        "            TupleExpr 1:14-1:20 parenthesized\n"
        "              IntLiteralExpr 1:15-1:18 value=128\n"
        "    param 2:7-2:20 name='x'\n"
        "      type:\n"
        "        MutExpr 2:10-2:20\n"
        "          SubscriptExpr 2:14-2:20\n"
        "            NameExpr 2:14-2:17 name='f32'\n"
        "            index 2:18-2:19\n"
        "              NameExpr 2:18-2:19 name='n'\n"
        "    param 2:22-2:25 name='k'\n"
        "      default:\n"
        "        IntLiteralExpr 2:24-2:25 value=2\n"
        "    body:\n"
        "      AugAssignStmt 3:5-3:15 op='+='\n"
        "        target:\n"
        "          SubscriptExpr 3:5-3:9\n"
        "            NameExpr 3:5-3:6 name='x'\n"
        "            index 3:7-3:8\n"
        "              IntLiteralExpr 3:7-3:8 value=0\n"
        "        value:\n"
        "          UnaryExpr 3:13-3:15 op='-'\n"
        "            NameExpr 3:14-3:15 name='k'\n");

  std::ostringstream os;
  dumpAST(*p.module, p.sm, os, [](const Node& n) { return isa<NameExpr>(&n) ? std::string("type=?") : std::string(); });
  CHECK(os.str().find("NameExpr 3:14-3:15 name='k' type=?\n") != std::string::npos);
  CHECK(os.str().find("UnaryExpr 3:13-3:15 op='-'\n") != std::string::npos);
}

TEST_CASE("a large module parses and is freed") {
  std::string text;
  for (int i = 0; i < 2000; ++i)
    text += "def f" + std::to_string(i) + "(x: f32[n], y: mut f32[n]):\n    y[i] = x[i] * 2 + f(a, b=[1, 2])\n";
  Parse p(text);
  CHECK(p.errors() == 0);
  CHECK(p.module->stmts.size() == 2000);
}
