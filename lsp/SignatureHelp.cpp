// Signature help: the call around the cursor is found in the tokens (so it works while the
// arguments are half-typed), the callee is a builtin (signature from the builtins table) or a
// function of this document; the active parameter is the argument's position or its keyword.
#include "lsp/BuiltinDocs.h"
#include "lsp/Features.h"
#include "lsp/Lookup.h"

namespace tessera::lsp {

namespace {
struct CallSite {
  std::string callee;     // dotted
  unsigned argIndex = 0;  // positional index of the argument under the cursor
  std::string keyword;    // `name=` of the argument under the cursor, if any
  bool found = false;
};

CallSite findCall(const Analysis& a, uint32_t offset) {
  CallSite site;
  SourceLoc at = a.locAt(offset);
  // The tokens before the cursor, innermost unclosed '(' first.
  size_t end = 0;
  while (end < a.tokens.size() && a.tokens[end].range.end.offset <= at.offset && a.tokens[end].kind != TokenKind::Eof)
    ++end;
  if (end < a.tokens.size() && a.tokens[end].range.begin.offset < at.offset) ++end;  // inside a token
  int depth = 0;
  unsigned commas = 0;
  std::string kw;
  for (size_t i = end; i-- > 0;) {
    const Token& t = a.tokens[i];
    if (t.kind == TokenKind::Newline || t.kind == TokenKind::Indent || t.kind == TokenKind::Dedent) break;
    if (t.kind == TokenKind::r_paren || t.kind == TokenKind::r_square || t.kind == TokenKind::r_brace) {
      ++depth;
    } else if (t.kind == TokenKind::l_square || t.kind == TokenKind::l_brace) {
      if (depth == 0) return site;  // inside a subscript or dict, not a call
      --depth;
    } else if (t.kind == TokenKind::l_paren) {
      if (depth > 0) {
        --depth;
        continue;
      }
      // The callee: Identifier (. Identifier)* right before '('.
      std::string name;
      size_t j = i;
      while (j > 0 && (a.tokens[j - 1].kind == TokenKind::Identifier || isKeyword(a.tokens[j - 1].kind))) {
        name = std::string(a.tokens[j - 1].text) + name;
        --j;
        if (j > 0 && a.tokens[j - 1].kind == TokenKind::period) {
          name = "." + name;
          --j;
        } else {
          break;
        }
      }
      if (name.empty() || name[0] == '.') return site;
      site.callee = name;
      site.argIndex = commas;
      site.keyword = kw;
      site.found = true;
      return site;
    } else if (depth == 0 && t.kind == TokenKind::comma) {
      ++commas;
    } else if (depth == 0 && t.kind == TokenKind::equal && commas == 0 && i > 0 &&
               a.tokens[i - 1].kind == TokenKind::Identifier) {
      kw = std::string(a.tokens[i - 1].text);
    }
  }
  return site;
}

// [start, end) of each parameter inside `label`, found after the opening '('.
json paramOffsets(const std::string& label, size_t open, const std::vector<std::string>& names) {
  json params = json::array();
  size_t from = open + 1;
  for (const std::string& n : names) {
    size_t s = label.find(n, from);
    while (s != std::string::npos && s > 0 &&
           (std::isalnum(static_cast<unsigned char>(label[s - 1])) || label[s - 1] == '_'))
      s = label.find(n, s + 1);
    if (s == std::string::npos) break;
    if (s > 0 && label[s - 1] == '*') --s;
    int d = 0;
    size_t e = s;
    for (; e < label.size(); ++e) {
      char c = label[e];
      if (c == '[' || c == '(')
        ++d;
      else if ((c == ']' || c == ')') && d-- == 0)
        break;
      else if (c == ',' && d == 0)
        break;
    }
    params.push_back({{"label", {s, e}}});
    from = e;
  }
  return params;
}
}  // namespace

json signatureHelp(const Analysis& a, uint32_t offset) {
  CallSite site = findCall(a, offset);
  if (!site.found) return nullptr;
  std::string label, doc;
  std::vector<std::string> names;
  std::vector<bool> keywordOnly;
  if (const BuiltinInfo* b = lookupBuiltin(stripTesseraPrefix(site.callee))) {
    label = builtinLabel(*b);
    doc = b->doc;
    for (const BuiltinParam& p : b->sig.params) {
      names.push_back(p.name);
      keywordOnly.push_back(p.keywordOnly);
    }
  }
  // A function of this document, or of a module it imports (`act.relu6` with `import act_lib as
  // act`: the definition lies in the module's buffer of the same source manager).
  const FunctionDefStmt* fn = nullptr;
  if (label.empty() && a.module && site.callee.find('.') == std::string::npos) {
    for (const Stmt* s : a.module->stmts)
      if (auto* f = dyn_cast<FunctionDefStmt>(s); f && f->name == site.callee) {
        fn = f;
        break;
      }
  }
  if (label.empty() && !fn)
    if (size_t dot = site.callee.find('.');
        dot != std::string::npos && site.callee.find('.', dot + 1) == std::string::npos)
      if (const Symbol* m = moduleMember(lookupAt(a, offset, site.callee.substr(0, dot)), site.callee.substr(dot + 1));
          m && m->kind == SymbolKind::Function)
        fn = m->function;
  if (fn) {
    label = fn->name + "(";
    for (size_t i = 0; i < fn->params.size(); ++i) {
      label += (i ? ", " : "") + std::string(a.sm.text(fn->params[i].range));
      if (!fn->params[i].name.empty()) {
        names.push_back(fn->params[i].name);
        keywordOnly.push_back(false);
      }
    }
    label += ")";
    if (fn->returns) label += " -> " + std::string(a.sm.text(fn->returns->range));
    doc = fn->docstring;
  }
  if (label.empty()) return nullptr;
  size_t open = label.find('(');
  json params = open == std::string::npos ? json::array() : paramOffsets(label, open, names);
  // The active parameter: the keyword's, else the n-th positional one.
  int active = -1;
  if (!site.keyword.empty()) {
    for (size_t i = 0; i < names.size(); ++i)
      if (names[i] == site.keyword) active = static_cast<int>(i);
  } else {
    unsigned seen = 0;
    for (size_t i = 0; i < names.size(); ++i) {
      if (keywordOnly[i]) break;
      if (seen++ == site.argIndex) active = static_cast<int>(i);
    }
    if (active < 0 && !names.empty() && !keywordOnly.empty()) {
      // Past the last positional parameter: a variadic one keeps absorbing arguments.
      for (size_t i = 0; i < names.size(); ++i)
        if (!keywordOnly[i] && label.find("*" + names[i]) != std::string::npos) active = static_cast<int>(i);
    }
  }
  json sig = {{"label", label}, {"parameters", params}};
  if (!doc.empty()) sig["documentation"] = {{"kind", "markdown"}, {"value", doc}};
  if (active >= 0 && static_cast<size_t>(active) < params.size()) sig["activeParameter"] = active;
  return json{
      {"signatures", json::array({sig})}, {"activeSignature", 0}, {"activeParameter", active >= 0 ? active : 0}};
}

}  // namespace tessera::lsp
