// Checks one stage's table of the diagnostics registry: every row has a name and a message, and
// an id that names its severity (err_, warn_, note_) has it.
#pragma once

#include <doctest/doctest.h>
#include <string>

#include "basic/Diagnostics.h"

namespace tessera {

inline void checkDiagnosticTable(const DiagInfo* rows, size_t count) {
  CHECK(count > 0);
  for (size_t i = 0; i < count; ++i) {
    const DiagInfo& info = rows[i];
    CAPTURE(info.name);
    CHECK(info.name[0] != '\0');
    CHECK(info.format[0] != '\0');
    std::string name = info.name;
    if (name.rfind("warn_", 0) == 0) CHECK(info.severity == Severity::Warning);
    if (name.rfind("note_", 0) == 0) CHECK(info.severity == Severity::Note);
    if (name.rfind("remark_", 0) == 0) CHECK(info.severity == Severity::Remark);
    if (name.rfind("err_", 0) == 0) CHECK(info.severity >= Severity::Error);
  }
}

}  // namespace tessera
