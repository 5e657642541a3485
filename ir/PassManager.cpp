#include <chrono>
#include <cstdio>

#include "ir/AsmFormat.h"
#include "ir/IRDiagnostics.h"
#include "ir/Pass.h"
#include "ir/Verifier.h"

namespace tessera::ir {

const std::vector<PassInfo>& passRegistry() {
  static const std::vector<PassInfo> registry = {
#define PASS(NAME, FN, DESC) {NAME, &FN, DESC},
#include "ir/Passes.def"
  };
  return registry;
}

const PassInfo* lookupPass(std::string_view name) {
  for (const PassInfo& p : passRegistry())
    if (name == p.name) return &p;
  return nullptr;
}

bool PassManager::parsePipeline(std::string_view list, DiagnosticEngine& diags) {
  bool ok = true;
  while (!list.empty()) {
    size_t comma = list.find(',');
    std::string_view name = list.substr(0, comma);
    list = comma == std::string_view::npos ? std::string_view() : list.substr(comma + 1);
    if (name.empty()) continue;
    if (const PassInfo* p = lookupPass(name)) {
      add(p);
    } else {
      std::string known;
      for (const PassInfo& q : passRegistry()) known += (known.empty() ? "" : ", ") + std::string(q.name);
      diags.report(diag::err_ir_unknown_pass, SourceRange()) << name << known;
      ok = false;
    }
  }
  return ok;
}

bool PassManager::run(Module& m, DiagnosticEngine& diags) {
  using Clock = std::chrono::steady_clock;
  std::vector<std::pair<const char*, double>> times;
  auto total0 = Clock::now();
  bool ok = true;
  for (const PassInfo* p : passes_) {
    auto t0 = Clock::now();
    unsigned errorsBefore = diags.errorCount();
    bool passOk = p->run(m, diags) && diags.errorCount() == errorsBefore;
    times.push_back({p->name, std::chrono::duration<double>(Clock::now() - t0).count()});
    if (passOk && opts_.verifyEach) {
      auto v0 = Clock::now();
      if (!verifyModule(m, diags)) {
        diags.report(diag::err_ir_verify_after_pass, SourceRange()) << p->name;
        passOk = false;
      }
      times.push_back({"(verify)", std::chrono::duration<double>(Clock::now() - v0).count()});
    }
    if (opts_.printAfterAll && opts_.log) {
      *opts_.log << "// -----// IR Dump After " << p->name << " //----- //\n" << printModule(m);
    }
    if (!passOk) {
      ok = false;
      break;
    }
  }
  if (opts_.timePasses && opts_.log) {
    double total = std::chrono::duration<double>(Clock::now() - total0).count();
    // Merge the verifier's runs into one line.
    std::vector<std::pair<const char*, double>> rows;
    for (auto& t : times) {
      bool merged = false;
      for (auto& r : rows)
        if (std::string_view(r.first) == t.first && std::string_view(t.first) == "(verify)") {
          r.second += t.second;
          merged = true;
        }
      if (!merged) rows.push_back(t);
    }
    char buf[160];
    *opts_.log << "===-------------------------------------------------------------------------===\n"
               << "                         ... Pass execution timing report ...\n"
               << "===-------------------------------------------------------------------------===\n";
    std::snprintf(buf, sizeof buf, "  Total Execution Time: %.4f seconds\n\n", total);
    *opts_.log << buf << "   Wall Time  Name\n";
    for (auto& r : rows) {
      std::snprintf(buf, sizeof buf, "  %.4f (%5.1f%%)  %s\n", r.second, total > 0 ? 100.0 * r.second / total : 0.0,
                    r.first);
      *opts_.log << buf;
    }
    std::snprintf(buf, sizeof buf, "  %.4f (100.0%%)  Total\n", total);
    *opts_.log << buf;
  }
  return ok;
}

}  // namespace tessera::ir
