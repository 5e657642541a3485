// Command-line options of tesserac.
#pragma once

#include <string>
#include <vector>

namespace tessera {

enum class EmitKind { Tokens, AST, Sema, Graph, TileIR, LLVM, PTX, Cubin, Obj, Header };

struct DriverOptions {
  std::vector<std::string> inputs;
  std::string output;                     // -o
  std::vector<std::string> includePaths;  // -I
  // --- standard library (issue 14)
  std::string stdlibDir;  // --stdlib-dir=DIR: where `import stdlib.x` looks (else the default)
  bool stdlibDirGiven = false;
  std::string moduleName;  // --module-name=NAME: the C prefix and registered name (else the stem)
  // --- end standard library
  EmitKind emit = EmitKind::Obj;
  bool emitGiven = false;
  bool checkOnly = false;  // --check: front end and sema only
  bool parseOnly = false;  // --parse-only: front end only
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
  // --- code generation (issue 5, 6)
  std::string headerOutput;                                  // -H: also write the C/C++ header here
  std::string gpuArchs = "sm_90a";                           // --gpu=sm_80,sm_90a
  enum class Target { All, Gpu, Cpu } target = Target::All;  // --target=
  unsigned optLevel = 3;                                     // -O0..-O3
  bool debugInfo = false;                                    // -g: line info in cubins
  int boundsCheck = -1;        // --bounds-check / --no-bounds-check; -1: on at -O0 and with -g
  std::string passes;          // --passes=: Tile IR pipeline instead of the default
  bool printAfterAll = false;  // --print-after-all
  bool timePasses = false;     // --time-passes
  bool verifyEach = false;     // --verify-each
  // --- end code generation
  // --- build tools (issue 19)
  bool showVersion = false;             // --version
  bool depFile = false;                 // -MD: write a make-style dependency file
  std::string depFilePath;              // -MF: where (default: the output with .d for its extension)
  std::vector<std::string> depTargets;  // -MT: the rule's targets (default: the output)
  bool depPhony = false;                // -MP: a phony rule per dependency
  enum class ResourceUsage { Off, Text, Json } resourceUsage = ResourceUsage::Off;  // --resource-usage[=json]
  // -Rpass=RE, -Rpass-missed=RE, -Rpass-analysis=RE (basic/Remarks.h); --remarks: all three ".*".
  std::string remarksPassed, remarksMissed, remarksAnalysis;
  // --- end build tools
  // --- host level (issue 18)
  std::string graphPasses = "default";           // --graph-passes=: the graph pipeline ("" for none)
  std::vector<std::string> disabledGraphPasses;  // --disable-graph-pass=NAME
  // --- end host level
};

// Returns false and sets `error` on a bad command line.
bool parseDriverOptions(int argc, char** argv, DriverOptions& opts, std::string& error);
void printDriverHelp();

}  // namespace tessera
