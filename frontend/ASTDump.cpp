// dumpAST: one node per line, `KindName L:C-L:C key=value ...`, children indented two spaces.
// Slots that need naming (decorators, clauses, parameters, arguments, blocks) get labelled lines.
#include <charconv>

#include "frontend/ASTDump.h"

namespace tessera {

namespace {

class Dumper {
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
    begin(e, depth);
    switch (e->kind) {
      case NodeKind::NameExpr: os_ << " name=" << quote(cast<NameExpr>(e)->name); break;
      case NodeKind::IntLiteralExpr: os_ << " value=" << cast<IntLiteralExpr>(e)->value; break;
      case NodeKind::FloatLiteralExpr: {
        char buf[64];
        auto r = std::to_chars(buf, buf + sizeof buf, cast<FloatLiteralExpr>(e)->value);
        os_ << " value=" << std::string_view(buf, r.ptr - buf);
        break;
      }
      case NodeKind::StringLiteralExpr: os_ << " value=" << quote(cast<StringLiteralExpr>(e)->value); break;
      case NodeKind::BoolLiteralExpr: os_ << " value=" << (cast<BoolLiteralExpr>(e)->value ? "True" : "False"); break;
      case NodeKind::UnaryExpr: os_ << " op=" << quote(unaryOpSpelling(cast<UnaryExpr>(e)->op)); break;
      case NodeKind::BinaryExpr: os_ << " op=" << quote(binaryOpSpelling(cast<BinaryExpr>(e)->op)); break;
      case NodeKind::AttributeExpr: os_ << " name=" << quote(cast<AttributeExpr>(e)->name); break;
      case NodeKind::TupleExpr:
        if (cast<TupleExpr>(e)->parenthesized) os_ << " parenthesized";
        break;
      case NodeKind::ComprehensionExpr:
        os_ << " kind="
            << (cast<ComprehensionExpr>(e)->comprehensionKind == ComprehensionExpr::List ? "list" : "generator");
        break;
      default: break;
    }
    end(e);
    int d = depth + 1;
    switch (e->kind) {
      case NodeKind::FStringExpr:
        for (const FStringPart& p : cast<FStringExpr>(e)->parts) {
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
        break;
      case NodeKind::UnaryExpr: expr(cast<UnaryExpr>(e)->operand, d); break;
      case NodeKind::BinaryExpr:
        expr(cast<BinaryExpr>(e)->lhs, d);
        expr(cast<BinaryExpr>(e)->rhs, d);
        break;
      case NodeKind::ConditionalExpr: {
        auto* c = cast<ConditionalExpr>(e);
        expr(c->thenExpr, d);
        expr(c->cond, d);
        expr(c->elseExpr, d);
        break;
      }
      case NodeKind::CallExpr: {
        auto* c = cast<CallExpr>(e);
        expr(c->callee, d);
        for (const Argument& a : c->args) argument("arg", a, d);
        break;
      }
      case NodeKind::SubscriptExpr: {
        auto* s = cast<SubscriptExpr>(e);
        expr(s->base, d);
        for (const Argument& a : s->indices) argument("index", a, d);
        break;
      }
      case NodeKind::SliceExpr: {
        auto* s = cast<SliceExpr>(e);
        labelled("lower:", s->lower, d);
        labelled("upper:", s->upper, d);
        labelled("step:", s->step, d);
        break;
      }
      case NodeKind::AttributeExpr: expr(cast<AttributeExpr>(e)->base, d); break;
      case NodeKind::TupleExpr:
        for (const Expr* x : cast<TupleExpr>(e)->elements) expr(x, d);
        break;
      case NodeKind::ListExpr:
        for (const Expr* x : cast<ListExpr>(e)->elements) expr(x, d);
        break;
      case NodeKind::DictExpr:
        for (const DictEntry& en : cast<DictExpr>(e)->entries) {
          label("entry", d);
          expr(en.key, d + 1);
          expr(en.value, d + 1);
        }
        break;
      case NodeKind::ComprehensionExpr: {
        auto* c = cast<ComprehensionExpr>(e);
        expr(c->element, d);
        for (const ComprehensionClause& cl : c->clauses) {
          indent(d);
          os_ << "for " << range(cl.range) << '\n';
          expr(cl.target, d + 1);
          expr(cl.iter, d + 1);
          for (const Expr* x : cl.conditions) labelled("if:", x, d + 1);
        }
        break;
      }
      case NodeKind::MutExpr: expr(cast<MutExpr>(e)->type, d); break;
      case NodeKind::StarredExpr: expr(cast<StarredExpr>(e)->value, d); break;
      default: break;
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

  void stmt(const Stmt* s, int depth) {
    begin(s, depth);
    switch (s->kind) {
      case NodeKind::AugAssignStmt: {
        os_ << " op=" << quote(std::string(binaryOpSpelling(cast<AugAssignStmt>(s)->op)) + "=");
        break;
      }
      case NodeKind::IfStmt:
        if (cast<IfStmt>(s)->isElif) os_ << " elif";
        break;
      case NodeKind::ImportFromStmt: {
        auto* i = cast<ImportFromStmt>(s);
        os_ << " module=" << quote(i->module);
        if (i->level) os_ << " level=" << i->level;
        if (i->star) os_ << " star";
        break;
      }
      case NodeKind::FunctionDefStmt: {
        auto* f = cast<FunctionDefStmt>(s);
        os_ << " name=" << quote(f->name);
        if (!f->docstring.empty()) os_ << " docstring=" << quote(f->docstring);
        break;
      }
      default: break;
    }
    end(s);
    int d = depth + 1;
    switch (s->kind) {
      case NodeKind::ExprStmt: expr(cast<ExprStmt>(s)->expr, d); break;
      case NodeKind::AssignStmt: {
        auto* a = cast<AssignStmt>(s);
        for (const Expr* t : a->targets) labelled("target:", t, d);
        labelled("value:", a->value, d);
        break;
      }
      case NodeKind::AugAssignStmt: {
        auto* a = cast<AugAssignStmt>(s);
        labelled("target:", a->target, d);
        labelled("value:", a->value, d);
        break;
      }
      case NodeKind::AnnAssignStmt: {
        auto* a = cast<AnnAssignStmt>(s);
        labelled("target:", a->target, d);
        labelled("annotation:", a->annotation, d);
        labelled("value:", a->value, d);
        break;
      }
      case NodeKind::ReturnStmt:
        if (cast<ReturnStmt>(s)->value) expr(cast<ReturnStmt>(s)->value, d);
        break;
      case NodeKind::IfStmt: {
        auto* i = cast<IfStmt>(s);
        expr(i->cond, d);
        block("then:", i->thenBlock, d);
        if (!i->elseBlock.stmts.empty()) block("else:", i->elseBlock, d);
        break;
      }
      case NodeKind::WhileStmt: {
        auto* w = cast<WhileStmt>(s);
        expr(w->cond, d);
        block("body:", w->body, d);
        if (!w->elseBlock.stmts.empty()) block("else:", w->elseBlock, d);
        break;
      }
      case NodeKind::ForStmt: {
        auto* f = cast<ForStmt>(s);
        labelled("target:", f->target, d);
        labelled("iter:", f->iter, d);
        block("body:", f->body, d);
        if (!f->elseBlock.stmts.empty()) block("else:", f->elseBlock, d);
        break;
      }
      case NodeKind::WithStmt: {
        auto* w = cast<WithStmt>(s);
        for (const WithItem& it : w->items) {
          label("item", d);
          expr(it.context, d + 1);
          labelled("as:", it.target, d + 1);
        }
        block("body:", w->body, d);
        break;
      }
      case NodeKind::ImportStmt:
      case NodeKind::ImportFromStmt: {
        const auto& names = isa<ImportStmt>(s) ? cast<ImportStmt>(s)->names : cast<ImportFromStmt>(s)->names;
        for (const ImportName& n : names) {
          indent(d);
          os_ << "name " << range(n.range) << " name=" << quote(n.name);
          if (!n.alias.empty()) os_ << " alias=" << quote(n.alias);
          os_ << '\n';
        }
        break;
      }
      case NodeKind::FunctionDefStmt: {
        auto* f = cast<FunctionDefStmt>(s);
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
        break;
      }
      default: break;
    }
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
