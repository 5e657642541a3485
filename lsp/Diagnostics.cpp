// Diagnostics as LSP sees them: severity, code (the registry id), related information from the
// notes; fix-its become quick-fix code actions.
#include "lsp/Features.h"

namespace tessera::lsp {

namespace {
constexpr size_t kMaxDiagnostics = 500;

int lspSeverity(Severity s) {
  switch (s) {
    case Severity::Error:
    case Severity::Fatal: return 1;
    case Severity::Warning: return 2;
    case Severity::Note: return 3;
    case Severity::Remark: return 4;  // Hint: what the compiler chose (-Rpass)
  }
  return 1;
}

bool sameBuffer(const Analysis& a, SourceRange r) {
  return r.valid() && r.begin.offset >= a.base() && r.begin.offset <= a.base() + a.text().size();
}

Range rangeOrStart(const Analysis& a, SourceRange r) {
  if (!sameBuffer(a, r)) return Range{};
  return a.range(r);
}
}  // namespace

json diagnosticsJSON(const Analysis& a) {
  json out = json::array();
  for (const Diagnostic& d : a.diagnostics) {
    if (out.size() >= kMaxDiagnostics) break;
    json j = {{"range", toJSON(rangeOrStart(a, d.range))},
              {"severity", lspSeverity(d.severity)},
              {"code", diagInfo(d.id).name},
              {"source", "tessera"},
              {"message", d.message}};
    if (!d.notes.empty()) {
      json related = json::array();
      for (const DiagNote& n : d.notes)
        related.push_back(
            {{"location", {{"uri", a.uri}, {"range", toJSON(rangeOrStart(a, n.range))}}}, {"message", n.message}});
      j["relatedInformation"] = related;
    }
    out.push_back(std::move(j));
  }
  return out;
}

namespace {
bool overlaps(const Range& x, const Range& y) {
  auto le = [](Position p, Position q) { return p.line < q.line || (p.line == q.line && p.character <= q.character); };
  return le(x.start, y.end) && le(y.start, x.end);
}
}  // namespace

json codeActions(const Analysis& a, const Range& range) {
  json out = json::array();
  for (const Diagnostic& d : a.diagnostics) {
    if (d.fixits.empty()) continue;
    Range dr = rangeOrStart(a, d.range);
    if (!overlaps(dr, range)) continue;
    json edits = json::array();
    std::string title;
    for (const FixIt& f : d.fixits) {
      if (!sameBuffer(a, f.range)) continue;
      edits.push_back({{"range", toJSON(a.range(f.range))}, {"newText", f.replacement}});
      if (title.empty())
        title = f.replacement.empty()          ? "Remove '" + std::string(a.sm.text(f.range)) + "'"
                : f.range.begin == f.range.end ? "Insert '" + f.replacement + "'"
                                               : "Change to '" + f.replacement + "'";
    }
    if (edits.empty()) continue;
    json diag = {{"range", toJSON(dr)},
                 {"severity", lspSeverity(d.severity)},
                 {"code", diagInfo(d.id).name},
                 {"source", "tessera"},
                 {"message", d.message}};
    out.push_back({{"title", title},
                   {"kind", "quickfix"},
                   {"diagnostics", json::array({diag})},
                   {"isPreferred", d.fixits.size() == 1},
                   {"edit", {{"changes", {{a.uri, edits}}}}}});
  }
  return out;
}

}  // namespace tessera::lsp
