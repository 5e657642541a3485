#include "sema/Builtins.h"

#include <algorithm>
#include <cctype>
#include <map>
#include <set>

#include "sema/DType.h"

namespace tessera {

std::string effectNames(uint32_t e) {
  static const std::pair<uint32_t, const char*> names[] = {
      {eff::Divergent, "Divergent"},
      {eff::GroupFeature, "GroupFeature"},
      {eff::Barrier, "Barrier"},
      {eff::GroupCollective, "GroupCollective"},
      {eff::WarpCollective, "WarpCollective"},
      {eff::MemRead, "MemRead"},
      {eff::MemWrite, "MemWrite"},
      {eff::Atomic, "Atomic"},
      {eff::NonDeterministic, "NonDeterministic"},
      {eff::SharedAlloc, "SharedAlloc"},
      {eff::Async, "Async"},
      {eff::Collective, "Collective"},
      {eff::NotLowered, "NotLowered"},
      {eff::Uniform, "Uniform"},
  };
  std::string out;
  for (auto& [bit, name] : names)
    if (e & bit) {
      if (!out.empty()) out += '|';
      out += name;
    }
  return out.empty() ? "-" : out;
}

const char* builtinContextName(BuiltinContext c) {
  switch (c) {
    case BuiltinContext::Kernel: return "kernel";
    case BuiltinContext::Host: return "host";
    case BuiltinContext::Both: return "kernel and host";
  }
  return "?";
}

unsigned BuiltinSignature::minPositional() const {
  unsigned n = 0;
  for (const BuiltinParam& p : params)
    if (!p.keywordOnly && !p.variadic && !p.optional) ++n;
  return n;
}
unsigned BuiltinSignature::maxPositional() const {
  unsigned n = 0;
  for (const BuiltinParam& p : params) {
    if (p.variadic) return UINT32_MAX;
    if (!p.keywordOnly) ++n;
  }
  return n;
}

namespace {
void skipSpace(std::string_view s, size_t& i) {
  while (i < s.size() && s[i] == ' ') ++i;
}
std::string ident(std::string_view s, size_t& i) {
  size_t b = i;
  while (i < s.size() && (std::isalnum(static_cast<unsigned char>(s[i])) || s[i] == '_')) ++i;
  return std::string(s.substr(b, i - b));
}
bool expect(std::string_view s, size_t& i, std::string_view what) {
  skipSpace(s, i);
  if (s.substr(i, what.size()) != what) return false;
  i += what.size();
  return true;
}
}  // namespace

bool parseBuiltinSignature(std::string_view s, BuiltinSignature& out, std::string& error) {
  out = BuiltinSignature();
  size_t i = 0;
  skipSpace(s, i);
  if (i < s.size() && s[i] == '=') {
    ++i;
    skipSpace(s, i);
    out.isValue = true;
    out.result = ident(s, i);
    if (out.result.empty()) return error = "missing value type", false;
    skipSpace(s, i);
    if (i != s.size()) return error = "trailing text", false;
    return true;
  }
  if (i < s.size() && s[i] == '[') {
    ++i;
    skipSpace(s, i);
    if (ident(s, i).empty() || !expect(s, i, ":")) return error = "bad type parameter", false;
    skipSpace(s, i);
    if (ident(s, i) != "dtype") return error = "type parameter must be a dtype", false;
    out.hasTypeParam = true;
    if (expect(s, i, "= ?")) out.typeParamOptional = true;
    if (!expect(s, i, "]")) return error = "missing ']'", false;
    skipSpace(s, i);
  }
  if (i < s.size() && s[i] == '(') {
    ++i;
    bool kwOnly = false;
    skipSpace(s, i);
    while (i < s.size() && s[i] != ')') {
      skipSpace(s, i);
      if (s.substr(i, 2) == "**") {
        i += 2;
        out.acceptsAnyKeywords = true;
      } else {
        BuiltinParam p;
        if (s[i] == '*') {
          ++i;
          skipSpace(s, i);
          if (i < s.size() && (s[i] == ',' || s[i] == ')')) {
            kwOnly = true;
            if (s[i] == ',') ++i;
            continue;
          }
          p.variadic = true;
        }
        p.name = ident(s, i);
        if (p.name.empty()) return error = "missing parameter name at " + std::to_string(i), false;
        if (!expect(s, i, ":")) return error = "missing ':' after " + p.name, false;
        skipSpace(s, i);
        p.kind = ident(s, i);
        if (p.kind.empty()) return error = "missing kind of " + p.name, false;
        if (expect(s, i, "= ?")) p.optional = true;
        p.keywordOnly = kwOnly;
        if (p.variadic) kwOnly = true;
        out.params.push_back(std::move(p));
      }
      skipSpace(s, i);
      if (i < s.size() && s[i] == ',')
        ++i;
      else if (i < s.size() && s[i] != ')')
        return error = "expected ',' or ')' at " + std::to_string(i), false;
      skipSpace(s, i);
    }
    if (!expect(s, i, ")")) return error = "missing ')'", false;
  } else if (!out.hasTypeParam) {
    return error = "expected '(' or '['", false;
  }
  if (!expect(s, i, "->")) return error = "missing '->'", false;
  skipSpace(s, i);
  out.result = ident(s, i);
  if (out.result.empty()) return error = "missing result", false;
  out.isTypeConstructor = out.result == "type";
  skipSpace(s, i);
  if (i != s.size()) return error = "trailing text", false;
  return true;
}

namespace {
struct Table {
  std::vector<BuiltinInfo> entries;
  std::map<std::string, size_t, std::less<>> byName;  // names and aliases, not methods
  std::map<std::string, size_t, std::less<>> methods;
  std::set<std::string, std::less<>> namespaces;
  std::vector<std::string> prelude;

  Table() {
    struct Raw {
      BuiltinId id;
      const char* name;
      const char* sig;
      BuiltinContext ctx;
      uint32_t eff;
      const char* doc;
      bool method;
    };
    static const Raw raw[] = {
#define BUILTIN(ID, NAME, SIG, CTX, EFF, DOC) {BuiltinId::ID, NAME, SIG, BuiltinContext::CTX, EFF, DOC, false},
#define METHOD(ID, NAME, SIG, CTX, EFF, DOC) {BuiltinId::ID, NAME, SIG, BuiltinContext::CTX, EFF, DOC, true},
#include "sema/Builtins.def"
    };
    for (const Raw& r : raw) {
      BuiltinInfo b{r.id, r.name, r.sig, r.ctx, r.eff, r.doc, r.method, {}, {}};
      std::string err;
      parseBuiltinSignature(r.sig, b.sig, err);  // malformed entries are caught by the unit tests
      entries.push_back(std::move(b));
    }
    struct Alias {
      const char* name;
      BuiltinId id;
    };
    static const Alias aliases[] = {
#define BUILTIN_ALIAS(NAME, ID) {NAME, BuiltinId::ID},
#include "sema/Builtins.def"
    };
    static const BuiltinId elementwise[] = {
#define ELEMENTWISE(ID, NAME, OP, DOC) BuiltinId::ID,
#include "sema/Builtins.def"
    };
    for (BuiltinId id : elementwise) entries[static_cast<size_t>(id)].elementwise = true;
    for (size_t i = 0; i < entries.size(); ++i) {
      if (entries[i].isMethod)
        methods.emplace(entries[i].name, i);
      else
        byName.emplace(entries[i].name, i);
    }
    for (const Alias& a : aliases) {
      byName.emplace(a.name, static_cast<size_t>(a.id));
      entries[static_cast<size_t>(a.id)].aliases.push_back(a.name);
    }
    std::set<std::string> pre;
    for (auto& [name, idx] : byName) {
      std::string n = name;
      size_t dot = n.find('.');
      pre.insert(n.substr(0, dot));
      while ((dot = n.rfind('.')) != std::string::npos) {
        n = n.substr(0, dot);
        namespaces.insert(n);
      }
    }
    pre.insert("tessera");
    prelude.assign(pre.begin(), pre.end());
  }
};
const Table& table() {
  static const Table t;
  return t;
}
}  // namespace

const BuiltinInfo& builtinInfo(BuiltinId id) { return table().entries[static_cast<size_t>(id)]; }
const std::vector<BuiltinInfo>& allBuiltins() { return table().entries; }

const BuiltinInfo* lookupBuiltin(std::string_view name) {
  auto it = table().byName.find(name);
  return it == table().byName.end() ? nullptr : &table().entries[it->second];
}
const BuiltinInfo* lookupMethod(std::string_view receiver, std::string_view name) {
  std::string q = std::string(receiver) + "." + std::string(name);
  auto it = table().methods.find(q);
  return it == table().methods.end() ? nullptr : &table().entries[it->second];
}
bool isBuiltinNamespace(std::string_view prefix) { return table().namespaces.count(prefix) != 0; }

std::vector<std::string> builtinMembers(std::string_view prefix) {
  std::set<std::string> out;
  std::string p = std::string(prefix) + ".";
  for (auto& [name, idx] : table().byName) {
    if (name.compare(0, p.size(), p) != 0) continue;
    std::string rest = name.substr(p.size());
    out.insert(rest.substr(0, rest.find('.')));
  }
  if (prefix.empty())
    for (const std::string& n : table().prelude) out.insert(n);
  return {out.begin(), out.end()};
}

const std::vector<std::string>& preludeNames() { return table().prelude; }

std::string builtinsMarkdown() {
  std::string md;
  md += "<!-- BEGIN GENERATED BUILTINS (tesserac --print-builtins-markdown; do not edit by hand) -->\n";
  md +=
      "Every builtin, generated from `sema/Builtins.def`. *Where*: `kernel` builtins may only be used in "
      "`@kernel` bodies, `host` builtins only outside them. *Effects*: `Barrier` and `GroupCollective` must be "
      "reached by every tile of the group (uniform control flow), `WarpCollective` by every lane of the warp, "
      "`GroupFeature` needs a declared group shape, `Divergent` results differ between tiles, "
      "`Uniform` results are the same on every tile whatever each tile passed, "
      "`NonDeterministic` ones are errors unless the kernel opts out.\n\n";
  std::string section;
  auto sectionOf = [](const BuiltinInfo& b) -> std::string {
    std::string n = b.name;
    if (b.isMethod) return "methods";
    size_t dot = n.find('.');
    return dot == std::string::npos ? "(bare names)" : n.substr(0, dot);
  };
  std::vector<const BuiltinInfo*> sorted;
  for (const BuiltinInfo& b : allBuiltins()) sorted.push_back(&b);
  std::stable_sort(sorted.begin(), sorted.end(),
                   [&](const BuiltinInfo* a, const BuiltinInfo* b) { return sectionOf(*a) < sectionOf(*b); });
  for (const BuiltinInfo* b : sorted) {
    std::string s = sectionOf(*b);
    if (s != section) {
      section = s;
      md += "\n#### " +
            (s == "(bare names)" ? std::string("Bare names")
             : s == "methods"    ? std::string("Methods of values")
                                 : "`" + s + ".`") +
            "\n\n";
      md += "| builtin | signature | where | effects | description |\n|---|---|---|---|---|\n";
    }
    std::string name = "`" + std::string(b->name) + "`";
    for (const std::string& a : b->aliases) name += ", `" + a + "`";
    std::string sig = b->signatureText;
    std::string esc;
    for (char c : sig) {
      if (c == '|')
        esc += "\\|";
      else
        esc += c;
    }
    std::string doc = b->doc;
    std::string docEsc;
    for (char c : doc) {
      if (c == '|')
        docEsc += "\\|";
      else
        docEsc += c;
    }
    std::string effects = effectNames(b->effects);
    for (char& c : effects)
      if (c == '|') c = ' ';  // a table cell cannot hold '|'
    md += "| " + name + " | `" + esc + "` | " + builtinContextName(b->context) + " | " + effects + " | " + docEsc +
          " |\n";
  }
  md +=
      "\n#### Dtypes\n\n| dtype | also spelled | bits | kind | exponent / mantissa bits | description "
      "|\n|---|---|---|---|---|---|\n";
  auto spellings = allDTypeSpellings();
  for (size_t d = 0; d < static_cast<size_t>(DType::NumDTypes); ++d) {
    const DTypeInfo& info = dtypeInfo(static_cast<DType>(d));
    std::string also;
    for (auto& [sp, id] : spellings)
      if (id == info.id && sp != info.name) also += (also.empty() ? "" : ", ") + ("`" + sp + "`");
    const char* kind = info.kind == DTypeKind::Float  ? "float"
                       : info.kind == DTypeKind::Int  ? "int"
                       : info.kind == DTypeKind::UInt ? "uint"
                                                      : "bool";
    std::string em = info.kind == DTypeKind::Float
                         ? std::to_string(info.exponentBits) + " / " + std::to_string(info.mantissaBits)
                         : "-";
    md += "| `" + std::string(info.name) + "` | " + (also.empty() ? "-" : also) + " | " + std::to_string(info.bits) +
          " | " + kind + " | " + em + " | " + info.doc + " |\n";
  }
  md += "\nA dtype name called as a function casts (`f32(x)`, `bf16(t)`): the explicit way to narrow.\n";
  md += "\n#### Numeric policies\n\n| policy | argument | meaning |\n|---|---|---|\n";
  for (size_t p = 0; p < static_cast<size_t>(Policy::NumPolicies); ++p) {
    const PolicyInfo& info = policyInfo(static_cast<Policy>(p));
    std::string arg = info.argument;
    std::string esc;
    for (char c : arg) {
      if (c == '|')
        esc += "\\|";
      else
        esc += c;
    }
    md += "| `@" + std::string(info.name) + "` | " + (esc.empty() ? "-" : esc) + " | " + info.doc + " |\n";
  }
  md += "\nRounding modes: ";
  for (size_t i = 0; i < roundModes().size(); ++i)
    md += (i ? ", " : "") + ("`" + std::string(roundModes()[i].name) + "` (" + roundModes()[i].doc + ")");
  md += ".\n\nShared-memory swizzles: ";
  for (size_t i = 0; i < swizzles().size(); ++i)
    md += (i ? ", " : "") + ("`" + std::string(swizzles()[i].name) + "` (" + swizzles()[i].doc + ")");
  md += ".\n<!-- END GENERATED BUILTINS -->\n";
  return md;
}

}  // namespace tessera
