// Completion. The context comes from the text before the cursor (robust on half-typed code):
//   after `ns.` (tile., tshared., cp_async., dist., op., tessera.tile., ...): the builtins table's
//     members of that namespace; after `value.`: the methods of the value's type;
//   after `@` on a decorator line: decorators; after `@` elsewhere: numeric policies;
//   in type position (a parameter's or declaration's annotation, after `->` or `mut`): dtypes;
//   elsewhere: locals and parameters in scope (sema), module names, builtins, keywords.
#include <algorithm>
#include <cctype>
#include <set>

#include "lsp/ASTWalk.h"
#include "lsp/BuiltinDocs.h"
#include "lsp/Features.h"

namespace tessera::lsp {

namespace {
enum ItemKind {
  kFunction = 3,
  kVariable = 6,
  kModule = 9,
  kProperty = 10,
  kValue = 12,
  kKeyword = 14,
  kConstant = 21,
  kTypeParameter = 25,
  kMethod = 2
};

bool isIdentChar(char c) { return std::isalnum(static_cast<unsigned char>(c)) || c == '_'; }

bool fuzzy(std::string_view pattern, std::string_view label) {
  size_t i = 0;
  for (char c : label)
    if (i < pattern.size() &&
        std::tolower(static_cast<unsigned char>(c)) == std::tolower(static_cast<unsigned char>(pattern[i])))
      ++i;
  return i == pattern.size();
}

struct Items {
  std::string prefix;
  json list = json::array();
  std::set<std::string> seen;
  void add(const std::string& label, int kind, const std::string& detail = "", const std::string& doc = "",
           const char* sortGroup = "5") {
    if (label.empty() || !fuzzy(prefix, label) || !seen.insert(label).second) return;
    json item = {{"label", label}, {"kind", kind}, {"sortText", std::string(sortGroup) + label}};
    if (!detail.empty()) item["detail"] = detail;
    if (!doc.empty()) item["documentation"] = {{"kind", "markdown"}, {"value", doc}};
    list.push_back(std::move(item));
  }
};

const char* const kKeywords[] = {"and", "as",   "break", "continue", "def",  "elif",  "else", "False",
                                 "for", "from", "if",    "import",   "in",   "is",    "mut",  "None",
                                 "not", "or",   "pass",  "return",   "True", "while", "with"};

void addNamespaceMembers(Items& items, const std::string& ns) {
  for (const std::string& m : builtinMembers(ns)) {
    std::string full = ns.empty() ? m : ns + "." + m;
    if (const BuiltinInfo* b = lookupBuiltin(full)) {
      items.add(m, b->sig.isValue ? kValue : kFunction, builtinLabel(*b), builtinMarkdown(*b), "1");
    } else if (isBuiltinNamespace(full)) {
      items.add(m, kModule, "namespace " + full, "", "2");
    } else if (auto d = lookupDType(m)) {
      items.add(m, kTypeParameter, "dtype", dtypeMarkdown(*d, m), "3");
    }
  }
}

void addDTypes(Items& items) {
  for (auto& [spelling, d] : allDTypeSpellings())
    items.add(spelling, kTypeParameter, "dtype", dtypeMarkdown(d, spelling), "1");
  items.add("mut", kKeyword, "writable tensor", "", "2");
  items.add("Tensor", kFunction, "tensor type", "", "3");
  items.add("Region", kFunction, "privilege-qualified tensor", "", "3");
}

void addPolicies(Items& items) {
  for (const std::string& p : allPolicyNames())
    if (auto id = lookupPolicy(p)) items.add(p, kProperty, "numeric policy", policyMarkdown(policyInfo(*id)), "1");
}

void addDecorators(Items& items) {
  for (const BuiltinInfo& b : allBuiltins())
    if (!b.isMethod && b.sig.result == "decorator")
      items.add(b.name, kFunction, builtinLabel(b), builtinMarkdown(b), "1");
}

const char* symbolItemKind(const Symbol* s, int& kind) {
  switch (s->kind) {
    case SymbolKind::Parameter: kind = kVariable; return "0";
    case SymbolKind::Variable: kind = kVariable; return "0";
    case SymbolKind::ShapeSymbol: kind = kTypeParameter; return "1";
    case SymbolKind::AutotuneParam:
    case SymbolKind::Constant: kind = kConstant; return "1";
    case SymbolKind::Function: kind = kFunction; return "2";
    case SymbolKind::Module: kind = kModule; return "2";
    default: kind = kValue; return "3";
  }
}

// The function whose body the cursor is in: the innermost def before the cursor that is
// indented less than the cursor's line, with no line in between that leaves its body.
const FunctionDefStmt* functionAtCursor(const Analysis& a, uint32_t offset) {
  if (!a.module) return nullptr;
  Position cur = a.lines.position(offset);
  std::string_view curLine = a.lines.lineText(cur.line);
  size_t curIndent = curLine.find_first_not_of(" \t");
  if (curIndent == std::string_view::npos) curIndent = std::min<size_t>(curLine.size(), cur.character);
  const FunctionDefStmt* best = nullptr;
  walk(*a.module, [&](const Node* n) {
    auto* f = dyn_cast<FunctionDefStmt>(n);
    if (!f) return isa<Stmt>(n);
    Position start = a.position(f->range.begin);
    if (start.line >= cur.line) return false;
    uint32_t defCol = start.character;
    if (curIndent <= defCol && !curLine.substr(0, cur.character).empty() &&
        curLine.find_first_not_of(" \t") != std::string_view::npos)
      return false;
    uint32_t header = f->nameRange.valid() ? a.position(f->nameRange.begin).line : start.line;
    for (uint32_t l = header + 1; l < cur.line; ++l) {
      std::string_view t = a.lines.lineText(l);
      size_t ind = t.find_first_not_of(" \t");
      if (ind == std::string_view::npos || t[ind] == '#') continue;
      if (ind <= defCol && t[ind] != ')' && t[ind] != ']') return false;
    }
    best = f;
    return true;
  });
  return best;
}

void addScopeNames(Items& items, const Analysis& a, uint32_t offset) {
  if (!a.sema) return;
  std::vector<const Scope*> scopes;
  if (const FunctionDefStmt* f = functionAtCursor(a, offset)) {
    auto it = a.sema->functions.find(f);
    if (it != a.sema->functions.end() && it->second)
      for (const Scope* s = it->second->scope; s && s->kind != Scope::Prelude; s = s->parent) scopes.push_back(s);
  }
  if (scopes.empty())
    for (auto& [path, mod] : a.sema->modules)
      if (mod && mod->module == a.module && mod->scope) scopes.push_back(mod->scope);
  for (const Scope* s : scopes)
    for (auto& [name, sym] : s->symbols()) {
      if (!sym) continue;
      int kind;
      const char* group = symbolItemKind(sym, kind);
      items.add(name, kind, sym->type ? sym->type->str() : symbolKindName(sym->kind), "", group);
    }
}

// The methods of a value's type (Tensor.parts, Group.sync, KernelFn.inspect_ir).
void addMethodsOf(Items& items, const Analysis& a, uint32_t offset, const std::string& receiverName) {
  if (!a.sema) return;
  const Symbol* sym = nullptr;
  if (const FunctionDefStmt* f = functionAtCursor(a, offset)) {
    auto it = a.sema->functions.find(f);
    if (it != a.sema->functions.end() && it->second && it->second->scope)
      sym = const_cast<Scope*>(it->second->scope)->lookup(receiverName);
  }
  if (!sym)
    for (auto& [path, mod] : a.sema->modules)
      if (mod && mod->module == a.module && mod->scope) sym = mod->scope->lookup(receiverName);
  if (!sym || !sym->type) return;
  // `act.` with `import act_lib as act`: the module's functions, kernels and constants.
  if (sym->kind == SymbolKind::Module && sym->type->module && sym->type->module->scope) {
    for (auto& [name, member] : sym->type->module->scope->symbols()) {
      if (!member || member->kind == SymbolKind::Module) continue;
      int kind;
      const char* group = symbolItemKind(member, kind);
      std::string doc = member->kind == SymbolKind::Function && member->function ? member->function->docstring : "";
      items.add(name, kind, member->type ? member->type->str() : symbolKindName(member->kind), doc, group);
    }
    return;
  }
  const Type* t = sym->type;
  std::string receiver;
  if (t->kind == TypeKind::Tensor || t->kind == TypeKind::Tile)
    receiver = "Tensor";
  else if (t->kind == TypeKind::Opaque)
    receiver = t->name;
  else if (t->kind == TypeKind::Function && t->functionKind == FunctionKind::Kernel)
    receiver = "KernelFn";
  else if (sym->kind == SymbolKind::Function)
    receiver = "KernelFn";
  if (receiver.empty()) return;
  for (const BuiltinInfo& b : allBuiltins()) {
    std::string n = b.name;
    if (b.isMethod && n.rfind(receiver + ".", 0) == 0)
      items.add(n.substr(receiver.size() + 1), kMethod, builtinLabel(b), builtinMarkdown(b), "1");
  }
}

// Bracket depth and whether the line is a `def` header, for the text before the cursor.
struct LineContext {
  int parenDepth = 0;
  bool defLine = false;
};
LineContext lineContext(std::string_view before) {
  LineContext c;
  size_t i = before.find_first_not_of(" \t");
  c.defLine = i != std::string_view::npos && before.substr(i, 4) == "def ";
  char quote = 0;
  for (char ch : before) {
    if (quote) {
      if (ch == quote) quote = 0;
      continue;
    }
    if (ch == '"' || ch == '\'')
      quote = ch;
    else if (ch == '(' || ch == '[' || ch == '{')
      ++c.parenDepth;
    else if ((ch == ')' || ch == ']' || ch == '}') && c.parenDepth > 0)
      --c.parenDepth;
    else if (ch == '#')
      break;
  }
  return c;
}

bool isTypePosition(std::string_view before) {
  std::string_view t = before;
  while (!t.empty() && (t.back() == ' ' || t.back() == '\t')) t.remove_suffix(1);
  if (t.size() >= 2 && t.substr(t.size() - 2) == "->") return true;
  if (t.size() >= 3 && t.substr(t.size() - 3) == "mut" && (t.size() == 3 || !isIdentChar(t[t.size() - 4]))) return true;
  if (t.empty() || t.back() != ':' || (t.size() >= 2 && t[t.size() - 2] == ':')) return false;
  LineContext c = lineContext(t);
  if (c.defLine) return c.parenDepth > 0;  // a parameter's annotation (not the header's colon)
  // `name: T` at statement level (an annotated declaration), not a block header.
  size_t i = t.find_first_not_of(" \t");
  std::string_view head = t.substr(i, t.size() - 1 - i);
  if (head.empty() || !(std::isalpha(static_cast<unsigned char>(head[0])) || head[0] == '_')) return false;
  for (char ch : head)
    if (!isIdentChar(ch)) return false;
  return keywordKind(head) == TokenKind::Identifier;
}

// Is the end of `before` (a line's text up to the cursor) inside a comment or a string?
bool inCommentOrString(std::string_view before) {
  char quote = 0;
  for (size_t i = 0; i < before.size(); ++i) {
    char ch = before[i];
    if (quote) {
      if (ch == '\\')
        ++i;
      else if (ch == quote)
        quote = 0;
    } else if (ch == '#') {
      return true;
    } else if (ch == '"' || ch == '\'') {
      quote = ch;
    }
  }
  return quote != 0;
}
}  // namespace

json completion(const Analysis& a, std::string_view text, Position pos) {
  json result = {{"isIncomplete", false}, {"items", json::array()}};
  LineTable lines(text);
  std::string_view line = lines.lineText(pos.line);
  std::string_view before = line.substr(0, utf8PrefixForUTF16(line, pos.character));
  if (inCommentOrString(before)) return result;
  // The scopes come from `a`; map the cursor to its text by line (an older text differs by the
  // edit being typed, which is on this line).
  uint32_t offset = a.lines.clampedOffset(pos);
  size_t p = before.size();
  while (p > 0 && isIdentChar(before[p - 1])) --p;
  Items items;
  items.prefix = std::string(before.substr(p));
  std::string_view lead = before.substr(0, p);

  if (!lead.empty() && lead.back() == '.') {
    // The dotted receiver before the dot.
    size_t q = lead.size() - 1;
    while (q > 0 && (isIdentChar(lead[q - 1]) || lead[q - 1] == '.')) --q;
    std::string path(lead.substr(q, lead.size() - 1 - q));
    if (path.empty() || std::isdigit(static_cast<unsigned char>(path[0]))) return result;  // `1.` is a float
    std::string ns(stripTesseraPrefix(path));
    if (path == "tessera" || path == "ts") ns.clear();
    if (ns.empty() || isBuiltinNamespace(ns))
      addNamespaceMembers(items, ns);
    else if (path.find('.') == std::string::npos)
      addMethodsOf(items, a, offset, path);
  } else {
    std::string_view trimmed = lead;
    while (!trimmed.empty() && (trimmed.back() == ' ' || trimmed.back() == '\t')) trimmed.remove_suffix(1);
    if (!trimmed.empty() && trimmed.back() == '@') {
      size_t first = lead.find_first_not_of(" \t");
      if (first != std::string_view::npos && lead[first] == '@' && lineContext(lead).parenDepth == 0)
        addDecorators(items);
      else
        addPolicies(items);
    } else if (isTypePosition(lead)) {
      addDTypes(items);
    } else {
      addScopeNames(items, a, offset);
      for (const std::string& n : preludeNames()) {
        if (const BuiltinInfo* b = lookupBuiltin(n))
          items.add(n, kFunction, builtinLabel(*b), builtinMarkdown(*b), "4");
        else if (isBuiltinNamespace(n))
          items.add(n, kModule, "namespace " + n, "", "4");
        else if (auto d = lookupDType(n))
          items.add(n, kTypeParameter, "dtype", dtypeMarkdown(*d, n), "4");
        else
          items.add(n, kValue, "", "", "4");
      }
      for (const char* k : kKeywords) items.add(k, kKeyword, "", "", "6");
    }
  }
  result["items"] = std::move(items.list);
  return result;
}

}  // namespace tessera::lsp
