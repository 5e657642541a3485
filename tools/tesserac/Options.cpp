#include "tools/tesserac/Options.h"

#include <cstdio>
#include <cstdlib>
#include <initializer_list>
#include <string>
#include <string_view>
#include <utility>

namespace tessera {

namespace {
struct EmitName {
  const char* name;
  EmitKind kind;
};
const EmitName kEmitNames[] = {
    {"tokens", EmitKind::Tokens},  {"ast", EmitKind::AST},       {"sema", EmitKind::Sema}, {"graph", EmitKind::Graph},
    {"tile-ir", EmitKind::TileIR}, {"llvm", EmitKind::LLVM},     {"ptx", EmitKind::PTX},   {"cubin", EmitKind::Cubin},
    {"obj", EmitKind::Obj},        {"header", EmitKind::Header},
};

bool startsWith(std::string_view s, std::string_view p) { return s.substr(0, p.size()) == p; }

// --emit=NAME.
bool parseEmit(std::string_view name, DriverOptions& opts, std::string& error) {
  for (const EmitName& e : kEmitNames)
    if (name == e.name) {
      opts.emit = e.kind;
      opts.emitGiven = true;
      return true;
    }
  error = "unknown --emit kind '" + std::string(name) +
          "' (expected tokens, ast, sema, graph, tile-ir, llvm, ptx, cubin, obj or header)";
  return false;
}

// --error-limit=N.
bool parseErrorLimit(std::string_view text, DriverOptions& opts, std::string& error) {
  char* end = nullptr;
  std::string n(text);
  unsigned long lim = std::strtoul(n.c_str(), &end, 10);
  if (n.empty() || *end) {
    error = "--error-limit needs a number";
    return false;
  }
  opts.errorLimit = static_cast<unsigned>(lim);
  return true;
}

// The values of an option that names one of a few choices, and the error when it names none.
template <typename T>
bool chooseValue(std::string_view value, std::initializer_list<std::pair<std::string_view, T>> choices, T& out,
                 std::string& error, std::string_view what, std::string_view expected) {
  for (const auto& [name, v] : choices)
    if (value == name) {
      out = v;
      return true;
    }
  error = "unknown " + std::string(what) + " '" + std::string(value) + "' (expected " + std::string(expected) + ")";
  return false;
}

bool parseDiagnosticsFormat(std::string_view f, DriverOptions& opts, std::string& error) {
  return chooseValue<bool>(f, {{"json", true}, {"text", false}}, opts.jsonDiagnostics, error, "diagnostics format",
                           "text or json");
}

bool parseColor(std::string_view c, DriverOptions& opts, std::string& error) {
  using C = DriverOptions::Color;
  return chooseValue<C>(c, {{"auto", C::Auto}, {"always", C::Always}, {"never", C::Never}}, opts.color, error,
                        "--color value", "auto, always or never");
}

bool parseTarget(std::string_view t, DriverOptions& opts, std::string& error) {
  using T = DriverOptions::Target;
  return chooseValue<T>(t, {{"all", T::All}, {"gpu", T::Gpu}, {"cuda", T::Gpu}, {"cpu", T::Cpu}}, opts.target, error,
                        "--target", "all, gpu or cpu");
}
}  // namespace

// --graph-passes=a,b (the graph pipeline) and --disable-graph-pass=NAME.
static void readGraphPassOption(std::string_view a, DriverOptions& opts) {
  if (startsWith(a, "--graph-passes="))
    opts.graphPasses = std::string(a.substr(15));
  else
    opts.disabledGraphPasses.push_back(std::string(a.substr(21)));
}

bool parseDriverOptions(int argc, char** argv, DriverOptions& opts, std::string& error) {
  for (int i = 1; i < argc; ++i) {
    std::string_view a = argv[i];
    auto value = [&](std::string_view flag, std::string& out) -> bool {
      if (a == flag) {
        if (i + 1 >= argc) {
          error = "missing value after '" + std::string(flag) + "'";
          return false;
        }
        out = argv[++i];
        return true;
      }
      out = std::string(a.substr(flag.size()));
      return true;
    };
    std::string v;
    if (a == "-h" || a == "--help") {
      opts.showHelp = true;
      // --- build tools (issue 19)
    } else if (a == "--version") {
      opts.showVersion = true;
    } else if (a == "-MD") {
      opts.depFile = true;
    } else if (a == "-MP") {
      opts.depPhony = true;
    } else if (a == "-MF" || (startsWith(a, "-MF") && a.size() > 3)) {
      if (!value("-MF", v)) return false;
      opts.depFilePath = v;
    } else if (a == "-MT" || (startsWith(a, "-MT") && a.size() > 3)) {
      if (!value("-MT", v)) return false;
      opts.depTargets.push_back(v);
    } else if (a == "--remarks") {
      opts.remarksPassed = opts.remarksMissed = opts.remarksAnalysis = ".*";
    } else if (startsWith(a, "-Rpass=")) {
      opts.remarksPassed = std::string(a.substr(7));
    } else if (startsWith(a, "-Rpass-missed=")) {
      opts.remarksMissed = std::string(a.substr(14));
    } else if (startsWith(a, "-Rpass-analysis=")) {
      opts.remarksAnalysis = std::string(a.substr(16));
    } else if (a == "--resource-usage" || a == "--resource-usage=text") {
      opts.resourceUsage = DriverOptions::ResourceUsage::Text;
    } else if (a == "--resource-usage=json") {
      opts.resourceUsage = DriverOptions::ResourceUsage::Json;
    } else if (startsWith(a, "--resource-usage=")) {
      error = "unknown --resource-usage format '" + std::string(a.substr(17)) + "' (expected text or json)";
      return false;
      // --- end build tools
    } else if (a == "-o" || (startsWith(a, "-o") && a.size() > 2)) {
      if (!value("-o", v)) return false;
      opts.output = v;
    } else if (a == "-I" || (startsWith(a, "-I") && a.size() > 2)) {
      if (!value("-I", v)) return false;
      opts.includePaths.push_back(v);
      // --- standard library (issue 14)
    } else if (startsWith(a, "--stdlib-dir=")) {
      opts.stdlibDir = std::string(a.substr(13));
      opts.stdlibDirGiven = true;
    } else if (startsWith(a, "--module-name=")) {
      opts.moduleName = std::string(a.substr(14));
      if (opts.moduleName.empty()) {
        error = "--module-name needs a name";
        return false;
      }
      // --- end standard library
    } else if (startsWith(a, "--emit=")) {
      if (!parseEmit(a.substr(7), opts, error)) return false;
    } else if (a == "--check") {
      opts.checkOnly = true;
    } else if (a == "--parse-only") {
      opts.parseOnly = true;
    } else if (startsWith(a, "--diagnostics-format=")) {
      if (!parseDiagnosticsFormat(a.substr(21), opts, error)) return false;
    } else if (startsWith(a, "--color=")) {
      if (!parseColor(a.substr(8), opts, error)) return false;
    } else if (startsWith(a, "--error-limit=")) {
      if (!parseErrorLimit(a.substr(14), opts, error)) return false;
    } else if (a == "--print-builtins-markdown") {
      opts.printBuiltinsMarkdown = true;
    } else if (a == "-Werror") {
      opts.warningsAsErrors = true;
      // --- code generation (issue 5, 6)
    } else if (a == "-H" || (startsWith(a, "-H") && a.size() > 2)) {
      if (!value("-H", v)) return false;
      opts.headerOutput = v;
    } else if (startsWith(a, "--gpu=")) {
      opts.gpuArchs = std::string(a.substr(6));
    } else if (startsWith(a, "--target=")) {
      if (!parseTarget(a.substr(9), opts, error)) return false;
    } else if (a.size() == 3 && startsWith(a, "-O") && a[2] >= '0' && a[2] <= '3') {
      opts.optLevel = static_cast<unsigned>(a[2] - '0');
    } else if (a == "-g") {
      opts.debugInfo = true;
    } else if (a == "--bounds-check" || a == "--no-bounds-check") {
      opts.boundsCheck = a == "--bounds-check" ? 1 : 0;
    } else if (startsWith(a, "--graph-passes=") || startsWith(a, "--disable-graph-pass=")) {
      readGraphPassOption(a, opts);
    } else if (startsWith(a, "--passes=")) {
      opts.passes = std::string(a.substr(9));
    } else if (a == "--print-after-all") {
      opts.printAfterAll = true;
    } else if (a == "--time-passes") {
      opts.timePasses = true;
    } else if (a == "--verify-each") {
      opts.verifyEach = true;
      // --- end code generation
      // --- formatter (issue 7)
    } else if (a == "--format") {
      opts.format = true;
    } else if (a == "-i") {
      opts.formatInPlace = true;
      // --- end formatter
    } else if (startsWith(a, "-") && a != "-") {
      error = "unknown option '" + std::string(a) + "' (see --help)";
      return false;
    } else {
      opts.inputs.emplace_back(a);
    }
  }
  if ((!opts.depFilePath.empty() || !opts.depTargets.empty() || opts.depPhony) && !opts.depFile) {
    error = "-MF, -MT and -MP need -MD (write a dependency file)";
    return false;
  }
  if (!opts.showHelp && !opts.showVersion && !opts.printBuiltinsMarkdown && opts.inputs.empty()) {
    error = "no input file";
    return false;
  }
  return true;
}

void printDriverHelp() {
  std::puts(
      "usage: tesserac [options] file.tessera\n"
      "\n"
      "  --emit=KIND               tokens, ast, sema, graph, tile-ir, llvm, ptx, cubin, obj, header\n"
      "  -o FILE                   write the output to FILE ('-' for stdout)\n"
      "  -I DIR                    add DIR to the module search path\n"
      "  --stdlib-dir=DIR          where `import stdlib.x` finds DIR/stdlib/x.tessera (default: the\n"
      "                            installed share/tessera, or $TESSERA_STDLIB_PATH; empty: none)\n"
      "  --module-name=NAME        the module's C prefix and registered name (default: the stem)\n"
      "  --parse-only              run the front end only\n"
      "  --check                   run the front end and semantic analysis only\n"
      "  --diagnostics-format=F    text (default) or json (one object per line)\n"
      "  --color=auto|always|never colour diagnostics (auto: only on a terminal)\n"
      "  --error-limit=N           stop after N errors (0: no limit; default 20)\n"
      "  -Werror                   treat warnings as errors\n"
      "  -H FILE                   also write the C/C++ header of the module to FILE\n"
      "  --gpu=ARCHS               GPU architectures, e.g. sm_80,sm_90a (default sm_90a)\n"
      "  --target=all|gpu|cpu      code for the GPU, the CPU executor, or both (default)\n"
      "  -O0 .. -O3                optimisation level (default -O3)\n"
      "  -g                        line information in the GPU code\n"
      "  --bounds-check            check every tensor and shared-memory index; a launch that\n"
      "                            indexes out of range fails with KERNEL_FAULT (default at -O0\n"
      "                            and with -g; --no-bounds-check turns it off)\n"
      "  --graph-passes=a,b        the graph rewrites of host functions instead of the default\n"
      "                            (fold-transpose,fuse-attention,dce; '' for none)\n"
      "  --disable-graph-pass=P    leaves graph rewrite P out of the pipeline\n"
      "  --passes=a,b,c            the Tile IR pipeline to run instead of the default\n"
      "  --print-after-all         print the Tile IR after every pass\n"
      "  --time-passes             time every stage (front end, sema, lowering, LLVM, ptxas) and Tile IR pass\n"
      "  --verify-each             verify the Tile IR after every pass\n"
      "  -Rpass=RE                 remarks on what passes whose name matches RE did: pipeline,\n"
      "                            tile-registers, vectorize, tensor-cores (e.g. -Rpass=.*)\n"
      "  -Rpass-missed=RE          remarks on what they did not do, and why\n"
      "  -Rpass-analysis=RE        remarks on what decides their choice at launch\n"
      "  --remarks                 all remarks (-Rpass=.* -Rpass-missed=.* -Rpass-analysis=.*)\n"
      "  --resource-usage[=json]   per kernel and architecture: registers, spills, shared and\n"
      "                            local memory, occupancy, tensor-core/TMA/cp.async counts\n"
      "  -MD                       also write a make-style dependency file (the input and every\n"
      "                            module it imports)\n"
      "  -MF FILE                  the dependency file (default: the output with .d)\n"
      "  -MT TARGET                the target of its rule (default: the output; repeatable)\n"
      "  -MP                       add a phony rule per dependency (deleted imports do not\n"
      "                            break the build)\n"
      "  --version                 the compiler, LLVM and CUDA toolkit versions\n"
      "  --format [-i]             print the formatted source (-i: rewrite the file in place)\n"
      "  --print-builtins-markdown print the builtins reference of docs/language.md and exit\n");
}

}  // namespace tessera
