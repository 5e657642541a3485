// Remarks as in clang: the catalogue (basic/RemarkDiagnostics.def: one row per remark, with its
// pass and kind) and the filter that -Rpass=RE, -Rpass-missed=RE and -Rpass-analysis=RE build.
// Remarks are diagnostics of severity Remark; the engine drops those its filter does not want.
#pragma once

#include <memory>
#include <string>

#include "basic/Diagnostics.h"

namespace tessera {

namespace diag {
enum Remark : uint16_t {
#define REMARK(ID, PASS, KIND, MSG) ID,
#include "basic/RemarkDiagnostics.def"
#undef REMARK
  NumRemarks
};
}  // namespace diag
TESSERA_DIAGNOSTIC_TABLE_DECL(Remark)

class RemarkFilter {
 public:
  RemarkFilter();
  ~RemarkFilter();
  // Shows the remarks of `kind` whose pass matches `pattern` (ECMAScript regular expression,
  // searched in the pass name, as clang does). Returns false with `error` on a bad pattern.
  bool set(RemarkKind kind, const std::string& pattern, std::string& error);
  bool any() const;
  bool wants(const DiagInfo& info) const;

 private:
  struct Patterns;
  std::unique_ptr<Patterns> p_;
};

// The flag that shows a remark: "-Rpass-missed=vectorize".
std::string remarkFlag(const DiagInfo& info);
// The passes of the catalogue, in order, without repeats: "pipeline, tile-registers, ...".
std::string remarkPassNames();

}  // namespace tessera
