// Folding ranges: function bodies and compound statements, runs of comment lines, runs of
// imports.
#include "lsp/ASTWalk.h"
#include "lsp/Features.h"

namespace tessera::lsp {

namespace {
uint32_t lastLine(const Analysis& a, SourceRange r) {
  Position e = a.position(r.end.valid() ? r.end : r.begin);
  if (e.character == 0 && e.line > 0) --e.line;
  return e.line;
}
void addRange(json& out, uint32_t start, uint32_t end, const char* kind = nullptr) {
  if (end <= start) return;
  json j = {{"startLine", start}, {"endLine", end}};
  if (kind) j["kind"] = kind;
  out.push_back(std::move(j));
}
void addBlock(const Analysis& a, json& out, SourceLoc header, const Block& b) {
  if (b.stmts.empty() || !b.stmts.back()) return;
  addRange(out, a.position(header).line, lastLine(a, b.stmts.back()->range));
}

// The folds of a statement's blocks, by its kind (frontend/ASTVisitor.h).
struct BlockFolds : ConstASTVisitor<BlockFolds> {
  const Analysis& a;
  json& out;
  void visitFunctionDefStmt(const FunctionDefStmt* f) {
    addBlock(a, out, f->nameRange.valid() ? f->nameRange.begin : f->range.begin, f->body);
  }
  void visitIfStmt(const IfStmt* s) {
    addBlock(a, out, s->range.begin, s->thenBlock);
    // An `else:` block folds from its own header line (elif chains fold as nested ifs).
    if (!s->elseBlock.stmts.empty() && s->elseBlock.stmts.front() &&
        !(s->elseBlock.stmts.size() == 1 && isa<IfStmt>(s->elseBlock.stmts.front()) &&
          cast<IfStmt>(s->elseBlock.stmts.front())->isElif)) {
      Position first = a.position(s->elseBlock.stmts.front()->range.begin);
      if (first.line > 0) addRange(out, first.line - 1, lastLine(a, s->elseBlock.stmts.back()->range));
    }
  }
  void visitForStmt(const ForStmt* s) { addBlock(a, out, s->range.begin, s->body); }
  void visitWhileStmt(const WhileStmt* s) { addBlock(a, out, s->range.begin, s->body); }
  void visitWithStmt(const WithStmt* s) { addBlock(a, out, s->range.begin, s->body); }
};
}  // namespace

json foldingRanges(const Analysis& a) {
  json out = json::array();
  if (a.module) {
    BlockFolds folds{{}, a, out};
    walk(*a.module, [&](const Node* n) {
      folds.visit(n);
      return isa<Stmt>(n);  // expressions hold no blocks
    });
    // Runs of imports.
    const std::vector<Stmt*>& top = a.module->stmts;
    for (size_t i = 0; i < top.size();) {
      size_t j = i;
      while (j < top.size() && top[j] && (isa<ImportStmt>(top[j]) || isa<ImportFromStmt>(top[j]))) ++j;
      if (j - i >= 2) addRange(out, a.position(top[i]->range.begin).line, lastLine(a, top[j - 1]->range), "imports");
      i = j > i ? j : i + 1;
    }
  }
  // Runs of comment-only lines.
  for (size_t i = 0; i < a.tokens.size();) {
    if (a.tokens[i].kind != TokenKind::Comment || !a.tokens[i].atLineStart) {
      ++i;
      continue;
    }
    uint32_t start = a.position(a.tokens[i].range.begin).line, end = start;
    size_t j = i + 1;
    for (; j < a.tokens.size(); ++j) {
      const Token& t = a.tokens[j];
      if (t.kind == TokenKind::Indent || t.kind == TokenKind::Dedent) continue;
      if (t.kind != TokenKind::Comment || !t.atLineStart) break;
      uint32_t line = a.position(t.range.begin).line;
      if (line != end + 1) break;
      end = line;
    }
    addRange(out, start, end, "comment");
    i = j;
  }
  return out;
}

}  // namespace tessera::lsp
