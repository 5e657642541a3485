// Inlay hints: the inferred type after the first assignment of a local (and of loop targets),
// the bytes of each shared-memory allocation, and a kernel's shared-memory use against its
// declared budget. All from sema; a build without sema shows none.
#include "lsp/ASTWalk.h"
#include "lsp/Features.h"

namespace tessera::lsp {

namespace {
bool within(const Range& r, Position p) {
  auto le = [](Position x, Position y) { return x.line < y.line || (x.line == y.line && x.character <= y.character); };
  return le(r.start, p) && le(p, r.end);
}

std::string bytesText(long long bytes) {
  if (bytes >= 1024 && bytes % 1024 == 0) return std::to_string(bytes / 1024) + " KiB";
  if (bytes >= 1024) {
    char buf[32];
    std::snprintf(buf, sizeof buf, "%.1f KiB", static_cast<double>(bytes) / 1024.0);
    return buf;
  }
  return std::to_string(bytes) + " B";
}

void targetNames(const Expr* e, std::vector<const NameExpr*>& out) {
  if (!e) return;
  if (auto* n = dyn_cast<NameExpr>(e))
    out.push_back(n);
  else if (auto* t = dyn_cast<TupleExpr>(e))
    for (const Expr* x : t->elements) targetNames(x, out);
}
}  // namespace

json inlayHints(const Analysis& a, const Range& range) {
  json out = json::array();
  if (!a.module || !a.sema) return out;
  auto add = [&](SourceLoc at, const std::string& label, int kind, bool padLeft) {
    Position p = a.position(at);
    if (!within(range, p)) return;
    json h = {{"position", toJSON(p)}, {"label", label}, {"paddingLeft", padLeft}};
    if (kind) h["kind"] = kind;
    out.push_back(std::move(h));
  };
  auto typeHints = [&](const Expr* target) {
    std::vector<const NameExpr*> names;
    targetNames(target, names);
    for (const NameExpr* n : names) {
      const Symbol* s = n->symbol;
      if (!s || s->kind != SymbolKind::Variable || !(s->declRange.begin == n->range.begin)) continue;
      const Type* t = n->type ? n->type : s->type;
      if (!t || t->isLenient()) continue;
      add(n->range.end, ": " + t->str(), 1, false);
    }
  };
  walk(*a.module, [&](const Node* n) {
    if (auto* as = dyn_cast<AssignStmt>(n)) {
      for (const Expr* t : as->targets) typeHints(t);
    } else if (auto* f = dyn_cast<ForStmt>(n)) {
      typeHints(f->target);
    }
    return isa<Stmt>(n);
  });
  for (auto& [def, info] : a.sema->functions) {
    if (!info || !def || a.sm.fileOf(def->range.begin) != a.file) continue;
    long long total = 0;
    bool known = true;
    for (const SharedAllocation& s : info->sharedAllocations) {
      if (!s.call) continue;
      if (s.bytes < 0) {
        known = false;
        continue;
      }
      total += s.bytes;
      add(s.call->range.end, bytesText(s.bytes) + " shared", 0, true);
    }
    if (!info->sharedAllocations.empty() && info->sharedClauseRange.valid()) {
      std::string label = known ? "uses " + bytesText(total) : "uses at least " + bytesText(total);
      if (info->sharedBudget >= 0) label += " of " + bytesText(info->sharedBudget);
      add(info->sharedClauseRange.end, label, 0, true);
    }
  }
  return out;
}

}  // namespace tessera::lsp
