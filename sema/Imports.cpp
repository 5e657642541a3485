// Imports: `import tessera [as ts]`, `from tessera[.ns] import ...` (builtins), and user
// modules found as NAME.tessera (a.b -> a/b.tessera) next to the importing file or on -I.
#include <cstdlib>
#include <filesystem>

#include "frontend/Parser.h"
#include "sema/Checker.h"
#include "sema/SemaDiagnostics.h"

namespace tessera {

// $TESSERA_STDLIB_PATH when set, else share/tessera beside the running program's bin/ (the
// installed layout, which the build tree mirrors: build/bin and build/share/tessera/stdlib).
std::string defaultStdlibDir() {
  if (const char* env = std::getenv("TESSERA_STDLIB_PATH")) return env;
  std::error_code ec;
  std::filesystem::path exe = std::filesystem::read_symlink("/proc/self/exe", ec);
  if (ec) return std::string();
  std::filesystem::path dir = exe.parent_path().parent_path() / "share" / "tessera";
  return std::filesystem::is_directory(dir / "stdlib", ec) ? dir.string() : std::string();
}

namespace {
// "tessera", "tessera.dist" -> "", "dist"; other names -> nullopt.
std::optional<std::string> builtinPrefix(const std::string& dotted) {
  if (dotted == "tessera") return std::string();
  if (dotted.rfind("tessera.", 0) == 0) return dotted.substr(8);
  return std::nullopt;
}
}  // namespace

ModuleInfo* Checker::loadModule(const std::string& dotted, SourceRange at) {
  std::string rel = dotted;
  for (char& c : rel)
    if (c == '.') c = '/';
  rel += ".tessera";
  std::vector<std::string> dirs;
  std::filesystem::path self(mod.path);
  if (!mod.path.empty()) dirs.push_back(self.parent_path().string());
  for (const std::string& d : sc.includePaths) dirs.push_back(d);
  if (!sc.stdlibDir.empty()) dirs.push_back(sc.stdlibDir);
  std::string found;
  for (const std::string& d : dirs) {
    std::error_code ec;
    std::filesystem::path p = std::filesystem::path(d.empty() ? "." : d) / rel;
    if (std::filesystem::is_regular_file(p, ec)) {
      found = std::filesystem::weakly_canonical(p, ec).string();
      if (ec) found = p.string();
      break;
    }
  }
  if (found.empty()) {
    diags.report(diag::err_module_not_found, at) << dotted;
    return nullptr;
  }
  auto it = sc.modules.find(found);
  if (it != sc.modules.end()) {
    if (it->second->analyzing) {
      diags.report(diag::err_import_cycle, at) << dotted;
      return nullptr;
    }
    return it->second.get();
  }
  FileID file;
  std::string error;
  if (!sc.sm.addFile(found, file, error)) {
    diags.report(diag::err_module_not_found, at) << dotted;
    return nullptr;
  }
  auto info = std::make_unique<ModuleInfo>();
  ModuleInfo* m = info.get();
  m->name = dotted;
  m->path = found;
  m->analyzing = true;
  sc.modules[found] = std::move(info);
  m->module = parseBuffer(sc.sm, file, sc.ast, diags);
  m->scope = sc.symbols.makeScope(Scope::Module, sc.prelude());
  if (m->module) {
    Checker sub(sc, diags, *m);
    sub.checkModule();
  }
  m->analyzing = false;
  return m;
}

void Checker::checkImport(ImportStmt* s) {
  for (ImportName& n : s->names) {
    std::string bindName = n.alias.empty() ? n.name.substr(0, n.name.find('.')) : n.alias;
    SourceRange bindRange = n.alias.empty() ? n.nameRange : n.aliasRange;
    if (auto prefix = builtinPrefix(n.name)) {
      if (!prefix->empty() && !isBuiltinNamespace(*prefix) && !lookupBuiltin(*prefix)) {
        diags.report(diag::err_module_not_found, n.nameRange) << n.name;
        continue;
      }
      // `import tessera.dist` binds `tessera`; `import tessera.dist as d` binds the namespace.
      const Type* t = T.ns(n.alias.empty() ? std::string() : *prefix);
      declareLocal(bindName, bindRange, t, SymbolKind::Namespace);
      continue;
    }
    ModuleInfo* m = loadModule(n.name, n.nameRange);
    const Type* t = m ? T.module(m, n.name) : T.error();
    if (!n.alias.empty() || n.name.find('.') == std::string::npos)
      declareLocal(bindName, bindRange, t, SymbolKind::Module);
    else
      declareLocal(bindName, bindRange, m ? packageOf(n.name, t) : T.error(), SymbolKind::Module);
  }
}

// `import a.b.c` binds `a`, a package whose member `b` is the package a.b, whose member `c` is
// the module (as Python does), so that `a.b.c.f(x)` names the module's function. A package is
// shared by every import that names it: `import stdlib.nn` and `import stdlib.reduce` give one
// `stdlib` with both members.
const Type* Checker::packageOf(const std::string& dotted, const Type* module) {
  std::vector<std::string> parts;
  for (size_t start = 0, dot;; start = dot + 1) {
    dot = dotted.find('.', start);
    parts.push_back(dotted.substr(start, dot - start));
    if (dot == std::string::npos) break;
  }
  const Type* member = module;
  for (size_t i = parts.size() - 1; i-- > 0;) {
    std::string name = parts[0];
    for (size_t j = 1; j <= i; ++j) name += "." + parts[j];
    std::unique_ptr<ModuleInfo>& pkg = sc.packages[name];
    if (!pkg) {
      pkg = std::make_unique<ModuleInfo>();
      pkg->name = name;
      pkg->scope = sc.symbols.makeScope(Scope::Module, sc.prelude());
    }
    pkg->scope->declare(sc.symbols.make(SymbolKind::Module, parts[i + 1], SourceRange(), member));
    member = T.module(pkg.get(), name);
  }
  return member;
}

void Checker::checkImportFrom(ImportFromStmt* s) {
  if (s->level > 0) {
    diags.report(diag::err_relative_import, s->range);
    return;
  }
  if (auto prefix = builtinPrefix(s->module)) {
    if (!prefix->empty() && !isBuiltinNamespace(*prefix)) {
      diags.report(diag::err_module_not_found, s->moduleRange) << s->module;
      return;
    }
    if (s->star) return;  // the builtins are visible anyway
    for (ImportName& n : s->names) {
      std::string q = prefix->empty() ? n.name : *prefix + "." + n.name;
      std::string bind = n.alias.empty() ? n.name : n.alias;
      SourceRange at = n.alias.empty() ? n.nameRange : n.aliasRange;
      if (const BuiltinInfo* b = lookupBuiltin(q)) {
        Symbol* sym = declareLocal(bind, at, T.builtin(b), SymbolKind::Builtin);
        sym->builtin = b;
      } else if (isBuiltinNamespace(q)) {
        declareLocal(bind, at, T.ns(q), SymbolKind::Namespace);
      } else if (auto d = prefix->empty() ? lookupDType(n.name) : std::nullopt) {
        declareLocal(bind, at, T.dtypeValue(*d), SymbolKind::DType);
      } else {
        std::vector<std::string> cands = builtinMembers(*prefix);
        std::string best = closestMatch(n.name, cands);
        if (!best.empty())
          diags.report(diag::err_import_name_not_found_suggest, n.nameRange).fixit(n.nameRange, best)
              << s->module << n.name << best;
        else
          diags.report(diag::err_import_name_not_found, n.nameRange) << s->module << n.name;
        declareLocal(bind, at, T.error(), SymbolKind::Variable);
      }
    }
    return;
  }
  ModuleInfo* m = loadModule(s->module, s->moduleRange);
  if (!m || !m->scope) {
    for (ImportName& n : s->names) declareLocal(n.alias.empty() ? n.name : n.alias, n.nameRange, T.error());
    return;
  }
  if (s->star) {
    for (auto& [name, sym] : m->scope->symbols())
      if (!name.empty() && name[0] != '_') scope->declare(sym);
    return;
  }
  for (ImportName& n : s->names) {
    Symbol* sym = m->scope->lookupLocal(n.name);
    if (!sym) {
      std::vector<std::string> cands;
      for (auto& [name, x] : m->scope->symbols()) cands.push_back(name);
      std::string best = closestMatch(n.name, cands);
      if (!best.empty())
        diags.report(diag::err_import_name_not_found_suggest, n.nameRange).fixit(n.nameRange, best)
            << s->module << n.name << best;
      else
        diags.report(diag::err_import_name_not_found, n.nameRange) << s->module << n.name;
      declareLocal(n.alias.empty() ? n.name : n.alias, n.nameRange, T.error());
      continue;
    }
    if (n.alias.empty())
      scope->declare(sym);
    else {
      Symbol* alias = sc.symbols.make(sym->kind, n.alias, n.aliasRange, sym->type);
      *alias = *sym;
      alias->name = n.alias;
      scope->declare(alias);
    }
  }
}

}  // namespace tessera
