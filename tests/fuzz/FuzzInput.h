// The setup every fuzz target shares: the input as a source buffer with a diagnostics engine that
// stores everything it reports (no error limit), and the check every target makes at the end:
// each diagnostic has a message and points inside the buffer (or nowhere). A broken rule traps,
// which libFuzzer reports as a crash.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>

#include "basic/Diagnostics.h"

namespace tessera::fuzz {

struct FuzzInput {
  SourceManager sm;
  FileID file;
  DiagnosticEngine diags{sm};
  StoringDiagnosticConsumer store;

  FuzzInput(const uint8_t* data, size_t size, const char* name)
      : file(sm.addBuffer(name, std::string(reinterpret_cast<const char*>(data), size))) {
    diags.addConsumer(&store);
    diags.setErrorLimit(0);
  }

  void checkDiagnostics() const {
    for (const Diagnostic& d : store.diagnostics) {
      if (d.message.empty()) __builtin_trap();
      if (d.range.valid() && sm.fileOf(d.range.begin) != file) __builtin_trap();
    }
  }
};

}  // namespace tessera::fuzz
