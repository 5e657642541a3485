// Command-line options of tesserac.
#pragma once

#include <string>
#include <vector>

namespace tessera {

enum class EmitKind { Tokens, AST, Sema, TileIR, LLVM, PTX, Cubin, Obj, Header };

struct DriverOptions {
  std::vector<std::string> inputs;
  std::string output;          // -o
  std::vector<std::string> includePaths;  // -I
  EmitKind emit = EmitKind::Obj;
  bool emitGiven = false;
  bool checkOnly = false;      // --check: front end and sema only
  bool parseOnly = false;      // --parse-only: front end only
  bool jsonDiagnostics = false;
  enum class Color { Auto, Always, Never } color = Color::Auto;
  unsigned errorLimit = 20;
  bool warningsAsErrors = false;
  bool showHelp = false;
  bool printBuiltinsMarkdown = false;  // --print-builtins-markdown (docs/language.md)
  // --- formatter (issue 7): --format prints the formatted source, -i rewrites the file.
  bool format = false;
  bool formatInPlace = false;
  // --- end formatter
};

// Returns false and sets `error` on a bad command line.
bool parseDriverOptions(int argc, char** argv, DriverOptions& opts, std::string& error);
void printDriverHelp();

}  // namespace tessera
