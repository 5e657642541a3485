// tesserac: the Tessera compiler driver. A thin layer over the stage libraries: it reads the
// command line, loads the inputs, runs the stages in order and writes what --emit asks for.
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <memory>
#include <tuple>
#include <unistd.h>
#include <utility>

#include "basic/Diagnostics.h"
#include "basic/Remarks.h"
#include "basic/StageTimes.h"
#include "frontend/ASTDump.h"
#include "frontend/Format.h"
#include "frontend/Lexer.h"
#include "frontend/Parser.h"
#include "graph/Build.h"
#include "graph/Passes.h"
#include "graph/Printer.h"
#include "hostgen/HostFunctions.h"
#include "ir/AsmFormat.h"
#include "ir/IR.h"
#include "ir/Verifier.h"
#include "irgen/IRGen.h"
#include "llvm/Support/Process.h"
#include "sema/Builtins.h"
#include "sema/Sema.h"
#include "tools/tesserac/Backend.h"
#include "tools/tesserac/DepFile.h"
#include "tools/tesserac/Options.h"
#include "tools/tesserac/Version.h"

using namespace tessera;

namespace {

// Where --emit output goes: the -o file, or stdout. The file is created when the first output
// is written, so that a compilation that fails leaves no empty or stale file behind.
class OutputFile {
 public:
  explicit OutputFile(std::string path) : path_(std::move(path)) {}
  std::ostream& os() {
    if (path_.empty() || path_ == "-") return std::cout;
    if (!file_) {
      file_ = std::make_unique<std::ofstream>(path_, std::ios::binary);
      if (!*file_) std::cerr << "tesserac: error: cannot open output file '" << path_ << "'\n";
    }
    return *file_;
  }

 private:
  std::string path_;
  std::unique_ptr<std::ofstream> file_;
};

// An output path must lie in an existing, writable directory and not be a directory itself.
// Checked before anything is compiled or written, so that a bad -H does not leave the object
// of -o behind. Returns the problem, or "" when the path is fine.
std::string outputPathProblem(const std::string& path) {
  namespace fs = std::filesystem;
  if (path.empty() || path == "-") return "";
  std::error_code ec;
  if (fs::is_directory(path, ec)) return "'" + path + "' is a directory";
  fs::path dir = fs::path(path).parent_path();
  if (dir.empty()) dir = ".";
  if (!fs::exists(dir, ec)) return "directory '" + dir.string() + "' does not exist";
  if (!fs::is_directory(dir, ec)) return "'" + dir.string() + "' is not a directory";
  if (access(dir.c_str(), W_OK) != 0) return "directory '" + dir.string() + "' is not writable";
  return "";
}

// -MD: the dependency file of a successful compile (`status` 0) that read `deps`.
int withDepFile(int status, const DriverOptions& opts, const std::vector<std::string>& deps) {
  if (status != 0 || !opts.depFile) return status;
  std::string output = opts.output;
  if (output.empty() || output == "-") {
    std::string base = opts.inputs[0].substr(opts.inputs[0].find_last_of('/') + 1);
    output = base.substr(0, base.find_last_of('.')) + ".o";
  }
  std::string error;
  if (writeDepFile(opts, output, deps, error)) return 0;
  std::cerr << "tesserac: error: " << error << "\n";
  return 1;
}

// ---- lowering (issue 4): the typed AST -> Tile IR (irgen/). --emit=tile-ir prints the
// lowered, verified module (after the pipeline only when --passes= names one); every later
// emit hands it to the back end.
int lowerAndCompile(Module& module, SemaContext& sema, graph::GraphModule* graphs, const DriverOptions& opts,
                    SourceManager& sm, ASTContext& ctx, DiagnosticEngine& diags, OutputFile& out,
                    const std::vector<std::string>& deps) {
  StageTimer lowering("lowering (AST to Tile IR)");
  std::unique_ptr<ir::Module> lowered = lowerToTileIR(module, sema, diags);
  // Autotuned kernels: one function per candidate configuration (irgen/Autotune.cpp).
  if (lowered && !diags.hasErrors()) lowerAutotuneCandidates(module, sema, *lowered, diags);
  lowering.stop();
  StageTimer hostTime("host functions: kernels");
  // Host functions: their generated kernels join the module, their entry points the object.
  std::vector<codegen::HostEntry> entries;
  HostFunctionOptions hostOpts{opts.graphPasses, opts.disabledGraphPasses, opts.includePaths, opts.stdlibDir,
                               opts.stdlibDirGiven};
  bool hostOk = !lowered || !graphs || diags.hasErrors() ||
                compileHostFunctions(*graphs, hostOpts, sm, ctx, *lowered, diags, entries);
  hostTime.stop();
  StageTimer verify("Tile IR verifier");
  if (!lowered || !hostOk || diags.hasErrors() || !ir::verifyModule(*lowered, diags)) {
    diags.finish();
    if (!opts.output.empty() && opts.output != "-") std::remove(opts.output.c_str());  // no stale output
    return 1;
  }
  verify.stop();
  if (opts.emitGiven && opts.emit == EmitKind::TileIR && opts.passes.empty()) {
    out.os() << ir::printModule(*lowered);
    diags.finish();
    return withDepFile(out.os().flush() ? 0 : 1, opts, deps);
  }
  return withDepFile(runBackend(*lowered, opts, diags, std::move(entries)), opts, deps);
}

int run(const DriverOptions& opts) {
  SourceManager sm;
  DiagnosticEngine diags(sm);
  bool color = opts.color == DriverOptions::Color::Always ||
               (opts.color == DriverOptions::Color::Auto && llvm::sys::Process::StandardErrHasColors());
  TextDiagnosticPrinter text(std::cerr, sm, color);
  JSONDiagnosticPrinter json(std::cerr, sm);
  diags.addConsumer(opts.jsonDiagnostics ? static_cast<DiagnosticConsumer*>(&json) : &text);
  diags.setErrorLimit(opts.errorLimit);
  diags.setWarningsAsErrors(opts.warningsAsErrors);
  auto remarks = std::make_shared<RemarkFilter>();
  for (auto [kind, pattern, flag] : {std::tuple{RemarkKind::Passed, &opts.remarksPassed, "-Rpass="},
                                     std::tuple{RemarkKind::Missed, &opts.remarksMissed, "-Rpass-missed="},
                                     std::tuple{RemarkKind::Analysis, &opts.remarksAnalysis, "-Rpass-analysis="}}) {
    std::string error;
    if (!pattern->empty() && !remarks->set(kind, *pattern, error)) {
      std::cerr << "tesserac: error: " << flag << ": " << error << "\n";
      return 1;
    }
  }
  diags.setRemarkFilter(remarks);

  if (opts.inputs.size() != 1) {
    std::cerr << "tesserac: error: exactly one input file is expected (got " << opts.inputs.size() << ")\n";
    return 1;
  }
  for (const auto& [flag, path] : {std::pair{"-o", &opts.output}, std::pair{"-H", &opts.headerOutput}}) {
    std::string problem = outputPathProblem(*path);
    if (!problem.empty()) {
      std::cerr << "tesserac: error: cannot write " << flag << " '" << *path << "': " << problem << "\n";
      return 1;
    }
  }
  FileID file;
  std::string error;
  if (!sm.addFile(opts.inputs[0], file, error)) {
    diags.report(diag::err_drv_cannot_open, SourceRange()) << opts.inputs[0] << error;
    diags.finish();
    return 1;
  }

  // --- formatter (issue 7): --format [-i] formats the input and stops.
  if (opts.format) {
    FormatResult formatted = formatSource(sm.bufferText(file), opts.inputs[0]);
    if (!formatted.ok) {
      std::cerr << "tesserac: error: " << opts.inputs[0] << ": " << formatted.error << "\n";
      return 1;
    }
    if (opts.formatInPlace) {
      if (formatted.text == sm.bufferText(file)) return 0;
      std::ofstream f(opts.inputs[0], std::ios::binary | std::ios::trunc);
      f << formatted.text;
      if (!f.flush()) {
        std::cerr << "tesserac: error: cannot write '" << opts.inputs[0] << "'\n";
        return 1;
      }
      return 0;
    }
    OutputFile fout(opts.output);
    fout.os() << formatted.text;
    return fout.os().flush() ? 0 : 1;
  }
  // --- end formatter

  // --- Tile IR input (issues 4, 5): a .tir module goes straight to the back end.
  if (opts.inputs[0].size() > 4 && opts.inputs[0].substr(opts.inputs[0].size() - 4) == ".tir") {
    std::unique_ptr<ir::Module> irModule = ir::parseModule(sm, file, diags);
    if (!irModule) {
      diags.finish();
      return 1;
    }
    return withDepFile(runBackend(*irModule, opts, diags), opts, {opts.inputs[0]});
  }
  // --- end Tile IR input

  OutputFile out(opts.output);

  StageTimer frontEnd("front end (lexer, parser)");
  std::vector<Token> tokens = lexBuffer(sm, file, diags);
  if (opts.emitGiven && opts.emit == EmitKind::Tokens) {
    dumpTokens(tokens, sm, out.os());
    diags.finish();
    return diags.hasErrors() ? 1 : 0;
  }

  ASTContext ctx;
  Module* module = parseTokens(tokens, sm, file, ctx, diags);
  frontEnd.stop();
  if (opts.parseOnly || (opts.emitGiven && opts.emit == EmitKind::AST)) {
    if (opts.emitGiven && opts.emit == EmitKind::AST) dumpAST(*module, sm, out.os());
    diags.finish();
    return diags.hasErrors() ? 1 : 0;
  }

  // ---- sema (issue 3): names, types and kernel rules. --check stops here; --emit=sema prints
  // the AST with every expression's type.
  StageTimer semaTime("sema");
  SemaContext sema(sm, ctx);
  sema.includePaths = opts.includePaths;
  sema.stdlibDir = opts.stdlibDirGiven ? opts.stdlibDir : defaultStdlibDir();
  analyzeModule(*module, sema, diags);
  semaTime.stop();
  std::vector<std::string> deps = {opts.inputs[0]};  // -MD: the input and every imported module
  for (const auto& [path, info] : sema.modules)
    if (!path.empty()) deps.push_back(path);
  // ---- the host level (issue 18): @jit / @graph.module / @autodiff functions -> graphs
  // (graph/). Building them is part of checking: --check reports their errors too.
  std::unique_ptr<graph::GraphModule> graphs;
  if (!diags.hasErrors() && !(opts.emitGiven && opts.emit == EmitKind::Sema)) {
    StageTimer graphTime("host functions: graphs");
    graphs = graph::buildGraphs(*module, sema, diags);
  }
  if (opts.checkOnly || (opts.emitGiven && opts.emit == EmitKind::Sema)) {
    if (opts.emitGiven && opts.emit == EmitKind::Sema)
      dumpAST(*module, sm, out.os(), [&](const Node& n) { return sema.annotate(n); });
    diags.finish();
    return withDepFile(diags.hasErrors() ? 1 : 0, opts, deps);
  }
  if (graphs && opts.emitGiven && opts.emit == EmitKind::Graph) {
    // The graphs after the rewrites (--graph-passes=, --disable-graph-pass=).
    if (!graph::runPipeline(*graphs, opts.graphPasses, opts.disabledGraphPasses, diags, error)) {
      if (!error.empty()) std::cerr << "tesserac: error: " << error << "\n";
      diags.finish();
      return 1;
    }
    out.os() << graph::printModule(*graphs);
    diags.finish();
    return withDepFile(out.os().flush() ? 0 : 1, opts, deps);
  }
  if (!diags.hasErrors()) return lowerAndCompile(*module, sema, graphs.get(), opts, sm, ctx, diags, out, deps);
  diags.finish();
  return 1;
}

}  // namespace

int main(int argc, char** argv) {
  DriverOptions opts;
  std::string error;
  if (!parseDriverOptions(argc, argv, opts, error)) {
    std::cerr << "tesserac: error: " << error << "\n";
    return 1;
  }
  if (opts.showHelp) {
    printDriverHelp();
    return 0;
  }
  if (opts.showVersion) {
    printVersion(std::cout);
    return 0;
  }
  if (opts.printBuiltinsMarkdown) {  // the generated section of docs/language.md
    std::cout << builtinsMarkdown();
    return 0;
  }
  // --time-passes: the Tile IR passes' report comes from the pass manager; this one covers
  // every stage of the compile.
  StageTimes::get().enabled = opts.timePasses;
  int status = run(opts);
  if (opts.timePasses) std::cerr << StageTimes::get().report();
  return status;
}
