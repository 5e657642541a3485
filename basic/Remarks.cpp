#include "basic/Remarks.h"

#include <optional>
#include <regex>

namespace tessera {

const DiagInfo kRemarkDiagnostics[] = {
#define REMARK(ID, PASS, KIND, MSG) {#ID, Severity::Remark, MSG, PASS, RemarkKind::KIND},
#include "basic/RemarkDiagnostics.def"
#undef REMARK
};

struct RemarkFilter::Patterns {
  std::optional<std::regex> passed, missed, analysis;
  std::optional<std::regex>& of(RemarkKind k) {
    return k == RemarkKind::Passed ? passed : k == RemarkKind::Missed ? missed : analysis;
  }
};

RemarkFilter::RemarkFilter() : p_(std::make_unique<Patterns>()) {}
RemarkFilter::~RemarkFilter() = default;

bool RemarkFilter::set(RemarkKind kind, const std::string& pattern, std::string& error) {
  try {
    p_->of(kind) = std::regex(pattern, std::regex::ECMAScript | std::regex::nosubs);
  } catch (const std::regex_error& e) {
    error = "invalid regular expression '" + pattern + "': " + e.what();
    return false;
  }
  return true;
}

bool RemarkFilter::any() const { return p_->passed || p_->missed || p_->analysis; }

bool RemarkFilter::wants(const DiagInfo& info) const {
  if (info.remarkKind == RemarkKind::None || !info.remarkPass) return true;
  const std::optional<std::regex>& re = p_->of(info.remarkKind);
  return re && std::regex_search(info.remarkPass, *re);
}

std::string remarkFlag(const DiagInfo& info) {
  const char* flag = info.remarkKind == RemarkKind::Passed   ? "-Rpass="
                     : info.remarkKind == RemarkKind::Missed ? "-Rpass-missed="
                                                             : "-Rpass-analysis=";
  return flag + std::string(info.remarkPass ? info.remarkPass : "");
}

std::string remarkPassNames() {
  std::string out;
  for (const DiagInfo& r : kRemarkDiagnostics) {
    std::string name = r.remarkPass;
    if (out.find(name) != std::string::npos) continue;
    out += (out.empty() ? "" : ", ") + name;
  }
  return out;
}

}  // namespace tessera
