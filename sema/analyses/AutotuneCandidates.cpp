// Every candidate of an autotune space compiles (issue 11): the module's own analysis sees the
// first candidate of each list; here each other configuration of each autotuned kernel's space
// (the product of the lists, the last parameter varying fastest, as irgen/Autotune.cpp lowers
// them) is a fresh parse and analysis of the module with sema's autotune choice set, and a
// configuration that does not pass is refused at the kernel's decorator with its first error, so
// that `--check` and the editor show it.
#include <algorithm>

#include "frontend/Lexer.h"
#include "frontend/Parser.h"
#include "sema/SemaDiagnostics.h"
#include "sema/analyses/Analyses.h"

namespace tessera {

std::vector<AutotuneConfig> autotuneConfigurations(const std::map<std::string, std::vector<long long>>& space) {
  std::vector<AutotuneConfig> out = {{}};
  for (auto& [name, cands] : space) {
    std::vector<AutotuneConfig> next;
    for (const AutotuneConfig& c : out)
      for (long long v : cands) {
        AutotuneConfig d = c;
        d.push_back({name, v});
        next.push_back(std::move(d));
      }
    out = std::move(next);
    if (out.size() > kMaxAutotuneConfigurations) break;  // refused (err_autotune_space_too_large)
  }
  return out;
}

Module* analyzeCandidate(const SemaContext& base, FileID file, const std::string& kernel, const AutotuneConfig& config,
                         ASTContext& actx, SemaContext& fresh, DiagnosticEngine& diags) {
  std::vector<Token> tokens = lexBuffer(base.sm, file, diags);
  Module* mod = parseTokens(tokens, base.sm, file, actx, diags);
  fresh.includePaths = base.includePaths;
  fresh.stdlibDir = base.stdlibDir;
  fresh.autotuneChoice = base.autotuneChoice;
  fresh.checkAutotuneCandidates = false;
  for (auto& [p, v] : config) fresh.autotuneChoice[kernel][p] = v;
  return mod && analyzeModule(*mod, fresh, diags) ? mod : nullptr;
}

std::string autotuneConfigText(const AutotuneConfig& c) {
  std::string s;
  for (auto& [name, v] : c) s += (s.empty() ? "" : ", ") + name + "=" + std::to_string(v);
  return s;
}

namespace {

using Config = AutotuneConfig;

// Collects the first error of an analysis (a candidate's), printing nothing.
class FirstError : public DiagnosticConsumer {
 public:
  void handle(const Diagnostic& d) override {
    if (d.severity == Severity::Error && message.empty()) message = d.message;
  }
  std::string message;
};

// The first error of the module analysed with `config` chosen for kernel `kernel`; empty when it
// passes.
std::string candidateError(const Module& module, const SemaContext& sc, const std::string& kernel,
                           const Config& config) {
  FirstError first;
  DiagnosticEngine quiet(sc.sm);
  quiet.addConsumer(&first);
  ASTContext actx;
  SemaContext csc(sc.sm, actx);
  analyzeCandidate(sc, module.file, kernel, config, actx, csc, quiet);
  if (!quiet.hasErrors()) return "";
  return first.message.empty() ? "it does not pass semantic analysis" : first.message;
}

}  // namespace

void checkAutotuneCandidates(Module& module, SemaContext& sc, DiagnosticEngine& diags) {
  for (Stmt* s : module.stmts) {
    auto* f = dyn_cast<FunctionDefStmt>(s);
    auto it = f ? sc.functions.find(f) : sc.functions.end();
    if (it == sc.functions.end() || !it->second->isKernel() || it->second->autotuneSpace.empty()) continue;
    const FunctionInfo& info = *it->second;
    std::vector<Config> configs = autotuneConfigurations(info.autotuneSpace);
    if (configs.size() > kMaxAutotuneConfigurations) continue;
    for (size_t c = 1; c < configs.size() && !diags.stopped(); ++c) {
      std::string error = candidateError(module, sc, f->name, configs[c]);
      if (error.empty()) continue;
      diags.report(diag::err_autotune_candidate, info.kernelDecoratorRange)
          << autotuneConfigText(configs[c]) << f->name << error;
      break;  // one candidate's error per kernel
    }
  }
}

}  // namespace tessera
