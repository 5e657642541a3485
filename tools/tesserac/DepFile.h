// -MD/-MF/-MT/-MP: a make-style dependency file naming every source file a compile read (the
// input and each module it imports), so that make, Ninja and CMake's DEPFILE rebuild an object
// when an imported module changes, as with a C compiler's -MD.
#pragma once

#include <string>
#include <vector>

#include "tools/tesserac/Options.h"

namespace tessera {

// The rule's text: "target...: dep..." with make's escaping, plus "dep:" lines under -MP.
std::string depFileText(const std::vector<std::string>& targets, const std::vector<std::string>& deps, bool phony);

// Writes the dependency file `opts` asks for (nothing without -MD). `defaultOutput` is the
// compile's output path, the default target and the base of the default file name.
bool writeDepFile(const DriverOptions& opts, const std::string& defaultOutput, const std::vector<std::string>& deps,
                  std::string& error);

}  // namespace tessera
