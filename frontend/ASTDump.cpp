// dumpAST: one node per line, `KindName L:C-L:C key=value ...`, children indented two spaces.
// Slots that need naming (decorators, clauses, parameters, arguments, blocks) get labelled lines.
// Dispatch on the node kind is the generated visitor's (frontend/ASTVisitor.h).
#include "frontend/ASTDump.h"

#include <charconv>

#include "frontend/ASTVisitor.h"

namespace tessera {

namespace {

class Dumper : public ConstASTVisitor<Dumper, void, int> {
 public:
  Dumper(const SourceManager& sm, std::ostream& os, const ASTAnnotator& annotate)
      : sm_(sm), os_(os), annotate_(annotate) {}

  void module(const Module& m) {
    os_ << "Module " << range(m.range);
    if (!m.docstring.empty()) os_ << " docstring=" << quote(m.docstring);
    os_ << '\n';
    for (const Stmt* s : m.stmts) stmt(s, 1);
  }

 private:
  std::string range(SourceRange r) const {
    if (!r.valid()) return "<invalid>";
    LineColumn b = sm_.lineColumn(r.begin);
    LineColumn e = sm_.lineColumn(r.end.valid() ? r.end : r.begin);
    return std::to_string(b.line) + ":" + std::to_string(b.column) + "-" + std::to_string(e.line) + ":" +
           std::to_string(e.column);
  }

  static std::string quote(std::string_view s) {
    std::string out = "'";
    for (unsigned char c : s) {
      switch (c) {
        case '\\': out += "\\\\"; break;
        case '\'': out += "\\'"; break;
        case '\n': out += "\\n"; break;
        case '\t': out += "\\t"; break;
        case '\r': out += "\\r"; break;
        default:
          if (c < 0x20 || c == 0x7f) {
            char buf[8];
            snprintf(buf, sizeof buf, "\\x%02x", c);
            out += buf;
          } else {
            out += static_cast<char>(c);
          }
      }
    }
    return out + "'";
  }

  void indent(int depth) {
    for (int i = 0; i < depth; ++i) os_ << "  ";
  }
  // Starts a node's header line; the caller adds keys, then end(node).
  void begin(const Node* n, int depth) {
    indent(depth);
    os_ << nodeKindName(n->kind) << ' ' << range(n->range);
  }
  void end(const Node* n) {
    if (annotate_) {
      std::string extra = annotate_(*n);
      if (!extra.empty()) os_ << ' ' << extra;
    }
    os_ << '\n';
  }
  void label(const char* text, int depth) {
    indent(depth);
    os_ << text << '\n';
  }
  void labelled(const char* text, const Expr* e, int depth) {
    if (!e) return;
    label(text, depth);
    expr(e, depth + 1);
  }

  void argument(const char* what, const Argument& a, int depth) {
    indent(depth);
    os_ << what << ' ' << range(a.range);
    switch (a.kind) {
      case Argument::Positional: break;
      case Argument::Keyword: os_ << " keyword=" << quote(a.keyword); break;
      case Argument::Star: os_ << " star"; break;
      case Argument::DoubleStar: os_ << " doublestar"; break;
    }
    os_ << '\n';
    expr(a.value, depth + 1);
  }

  void block(const char* text, const Block& b, int depth) {
    label(text, depth);
    for (const Stmt* s : b.stmts) stmt(s, depth + 1);
  }

  void expr(const Expr* e, int depth) {
    if (!e) {
      indent(depth);
      os_ << "<null>\n";
      return;
    }
    visit(e, depth);
  }
  void stmt(const Stmt* s, int depth) { visit(s, depth); }

 public:
  // One visit a kind (frontend/ASTVisitor.h): the header line with the node's keys, then its
  // children one level deeper. Kinds without keys or children print the header alone.
  void visitNode(const Node* n, int depth) {
    begin(n, depth);
    end(n);
  }

  void visitNameExpr(const NameExpr* e, int depth) {
    begin(e, depth);
    os_ << " name=" << quote(e->name);
    end(e);
  }
  void visitIntLiteralExpr(const IntLiteralExpr* e, int depth) {
    begin(e, depth);
    os_ << " value=" << e->value;
    end(e);
  }
  void visitFloatLiteralExpr(const FloatLiteralExpr* e, int depth) {
    begin(e, depth);
    char buf[64];
    auto r = std::to_chars(buf, buf + sizeof buf, e->value);
    os_ << " value=" << std::string_view(buf, r.ptr - buf);
    end(e);
  }
  void visitStringLiteralExpr(const StringLiteralExpr* e, int depth) {
    begin(e, depth);
    os_ << " value=" << quote(e->value);
    end(e);
  }
  void visitBoolLiteralExpr(const BoolLiteralExpr* e, int depth) {
    begin(e, depth);
    os_ << " value=" << (e->value ? "True" : "False");
    end(e);
  }
  void visitFStringExpr(const FStringExpr* e, int depth) {
    visitNode(e, depth);
    int d = depth + 1;
    for (const FStringPart& p : e->parts) {
      indent(d);
      if (!p.expr) {
        os_ << "literal " << range(p.range) << " value=" << quote(p.literal) << '\n';
        continue;
      }
      os_ << "field " << range(p.range);
      if (!p.conversion.empty()) os_ << " conversion=" << quote(p.conversion);
      if (!p.formatSpec.empty()) os_ << " spec=" << quote(p.formatSpec);
      os_ << '\n';
      expr(p.expr, d + 1);
    }
  }
  void visitUnaryExpr(const UnaryExpr* e, int depth) {
    begin(e, depth);
    os_ << " op=" << quote(unaryOpSpelling(e->op));
    end(e);
    expr(e->operand, depth + 1);
  }
  void visitBinaryExpr(const BinaryExpr* e, int depth) {
    begin(e, depth);
    os_ << " op=" << quote(binaryOpSpelling(e->op));
    end(e);
    expr(e->lhs, depth + 1);
    expr(e->rhs, depth + 1);
  }
  void visitConditionalExpr(const ConditionalExpr* e, int depth) {
    visitNode(e, depth);
    expr(e->thenExpr, depth + 1);
    expr(e->cond, depth + 1);
    expr(e->elseExpr, depth + 1);
  }
  void visitCallExpr(const CallExpr* e, int depth) {
    visitNode(e, depth);
    expr(e->callee, depth + 1);
    for (const Argument& a : e->args) argument("arg", a, depth + 1);
  }
  void visitSubscriptExpr(const SubscriptExpr* e, int depth) {
    visitNode(e, depth);
    expr(e->base, depth + 1);
    for (const Argument& a : e->indices) argument("index", a, depth + 1);
  }
  void visitSliceExpr(const SliceExpr* e, int depth) {
    visitNode(e, depth);
    labelled("lower:", e->lower, depth + 1);
    labelled("upper:", e->upper, depth + 1);
    labelled("step:", e->step, depth + 1);
  }
  void visitAttributeExpr(const AttributeExpr* e, int depth) {
    begin(e, depth);
    os_ << " name=" << quote(e->name);
    end(e);
    expr(e->base, depth + 1);
  }
  void visitTupleExpr(const TupleExpr* e, int depth) {
    begin(e, depth);
    if (e->parenthesized) os_ << " parenthesized";
    end(e);
    for (const Expr* x : e->elements) expr(x, depth + 1);
  }
  void visitListExpr(const ListExpr* e, int depth) {
    visitNode(e, depth);
    for (const Expr* x : e->elements) expr(x, depth + 1);
  }
  void visitDictExpr(const DictExpr* e, int depth) {
    visitNode(e, depth);
    for (const DictEntry& en : e->entries) {
      label("entry", depth + 1);
      expr(en.key, depth + 2);
      expr(en.value, depth + 2);
    }
  }
  void visitComprehensionExpr(const ComprehensionExpr* e, int depth) {
    begin(e, depth);
    os_ << " kind=" << (e->comprehensionKind == ComprehensionExpr::List ? "list" : "generator");
    end(e);
    int d = depth + 1;
    expr(e->element, d);
    for (const ComprehensionClause& cl : e->clauses) {
      indent(d);
      os_ << "for " << range(cl.range) << '\n';
      expr(cl.target, d + 1);
      expr(cl.iter, d + 1);
      for (const Expr* x : cl.conditions) labelled("if:", x, d + 1);
    }
  }
  void visitMutExpr(const MutExpr* e, int depth) {
    visitNode(e, depth);
    expr(e->type, depth + 1);
  }
  void visitStarredExpr(const StarredExpr* e, int depth) {
    visitNode(e, depth);
    expr(e->value, depth + 1);
  }

  void visitExprStmt(const ExprStmt* s, int depth) {
    visitNode(s, depth);
    expr(s->expr, depth + 1);
  }
  void visitAssignStmt(const AssignStmt* s, int depth) {
    visitNode(s, depth);
    for (const Expr* t : s->targets) labelled("target:", t, depth + 1);
    labelled("value:", s->value, depth + 1);
  }
  void visitAugAssignStmt(const AugAssignStmt* s, int depth) {
    begin(s, depth);
    os_ << " op=" << quote(std::string(binaryOpSpelling(s->op)) + "=");
    end(s);
    labelled("target:", s->target, depth + 1);
    labelled("value:", s->value, depth + 1);
  }
  void visitAnnAssignStmt(const AnnAssignStmt* s, int depth) {
    visitNode(s, depth);
    labelled("target:", s->target, depth + 1);
    labelled("annotation:", s->annotation, depth + 1);
    labelled("value:", s->value, depth + 1);
  }
  void visitReturnStmt(const ReturnStmt* s, int depth) {
    visitNode(s, depth);
    if (s->value) expr(s->value, depth + 1);
  }
  void visitIfStmt(const IfStmt* s, int depth) {
    begin(s, depth);
    if (s->isElif) os_ << " elif";
    end(s);
    expr(s->cond, depth + 1);
    block("then:", s->thenBlock, depth + 1);
    if (!s->elseBlock.stmts.empty()) block("else:", s->elseBlock, depth + 1);
  }
  void visitWhileStmt(const WhileStmt* s, int depth) {
    visitNode(s, depth);
    expr(s->cond, depth + 1);
    block("body:", s->body, depth + 1);
    if (!s->elseBlock.stmts.empty()) block("else:", s->elseBlock, depth + 1);
  }
  void visitForStmt(const ForStmt* s, int depth) {
    visitNode(s, depth);
    labelled("target:", s->target, depth + 1);
    labelled("iter:", s->iter, depth + 1);
    block("body:", s->body, depth + 1);
    if (!s->elseBlock.stmts.empty()) block("else:", s->elseBlock, depth + 1);
  }
  void visitWithStmt(const WithStmt* s, int depth) {
    visitNode(s, depth);
    for (const WithItem& it : s->items) {
      label("item", depth + 1);
      expr(it.context, depth + 2);
      labelled("as:", it.target, depth + 2);
    }
    block("body:", s->body, depth + 1);
  }
  void visitImportStmt(const ImportStmt* s, int depth) {
    visitNode(s, depth);
    importNames(s->names, depth + 1);
  }
  void visitImportFromStmt(const ImportFromStmt* s, int depth) {
    begin(s, depth);
    os_ << " module=" << quote(s->module);
    if (s->level) os_ << " level=" << s->level;
    if (s->star) os_ << " star";
    end(s);
    importNames(s->names, depth + 1);
  }
  void visitFunctionDefStmt(const FunctionDefStmt* f, int depth) {
    begin(f, depth);
    os_ << " name=" << quote(f->name);
    if (!f->docstring.empty()) os_ << " docstring=" << quote(f->docstring);
    end(f);
    int d = depth + 1;
    for (const Decorator& dec : f->decorators) {
      indent(d);
      os_ << "decorator " << range(dec.range) << '\n';
      expr(dec.expr, d + 1);
      for (const Expr* c : dec.clauses) labelled("clause", c, d + 1);
    }
    for (const Param& p : f->params) {
      indent(d);
      os_ << "param " << range(p.range);
      if (!p.name.empty()) os_ << " name=" << quote(p.name);
      if (const char* k = paramKind(p.paramKind)) os_ << " kind=" << k;
      os_ << '\n';
      labelled("type:", p.annotation, d + 1);
      labelled("default:", p.defaultValue, d + 1);
    }
    labelled("returns:", f->returns, d);
    block("body:", f->body, d);
  }

 private:
  void importNames(const std::vector<ImportName>& names, int depth) {
    for (const ImportName& n : names) {
      indent(depth);
      os_ << "name " << range(n.range) << " name=" << quote(n.name);
      if (!n.alias.empty()) os_ << " alias=" << quote(n.alias);
      os_ << '\n';
    }
  }

  static const char* paramKind(Param::Kind k) {
    switch (k) {
      case Param::Normal: return nullptr;
      case Param::VarArgs: return "varargs";
      case Param::KwArgs: return "kwargs";
      case Param::KeywordOnlyMarker: return "star";
    }
    return nullptr;
  }

  const SourceManager& sm_;
  std::ostream& os_;
  const ASTAnnotator& annotate_;
};

}  // namespace

void dumpAST(const Module& module, const SourceManager& sm, std::ostream& os, const ASTAnnotator& annotate) {
  Dumper(sm, os, annotate).module(module);
}

}  // namespace tessera
