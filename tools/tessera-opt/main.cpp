// tessera-opt: reads Tile IR (.tir) or graph IR (.tgraph, or --graph with stdin), verifies it,
// runs passes (Tile IR passes, or for graph IR the graph rewrites of graph/GraphPasses.def),
// prints the result.
//   tessera-opt in.tir [-o out.tir] [--passes=a,b,c] [--verify-each] [--print-after-all]
//               [--time-passes] [--split-input-file] [--no-verify] [--list-passes] [--graph]
// Diagnostics go to stderr ("file:line:col: error: ..."); the exit status is 1 after an error.
#include <fstream>
#include <iostream>
#include <iterator>
#include <sstream>

#include "basic/Diagnostics.h"
#include "graph/Passes.h"
#include "graph/Printer.h"
#include "graph/Verifier.h"
#include "ir/AsmFormat.h"
#include "ir/Pass.h"
#include "ir/Verifier.h"

using namespace tessera;

namespace {

void usage(std::ostream& os) {
  os << "usage: tessera-opt [options] <input.tir | ->\n"
        "  -o <file>             write the result there (default: stdout)\n"
        "  --passes=a,b,c        run these passes in order (see --list-passes)\n"
        "  --verify-each         verify after every pass (always on in debug builds)\n"
        "  --no-verify           do not verify the parsed input\n"
        "  --print-after-all     print the IR to stderr after every pass\n"
        "  --time-passes         print a timing report to stderr\n"
        "  --split-input-file    treat '// -----' lines as separators of independent inputs\n"
        "  --error-limit=<n>     stop after n errors (0: no limit)\n"
        "  --list-passes         list the passes and exit\n"
        "  --graph               the input is graph IR (implied by a .tgraph file); --passes= names\n"
        "                        graph rewrites\n";
}

// The pieces of the buffer between '// -----' lines (the whole buffer without --split-input-file).
std::vector<std::pair<uint32_t, uint32_t>> inputChunks(std::string_view text, bool split) {
  std::vector<std::pair<uint32_t, uint32_t>> chunks;
  if (!split) return {{0, static_cast<uint32_t>(text.size())}};
  size_t start = 0, pos = 0;
  while (pos <= text.size()) {
    size_t eol = text.find('\n', pos);
    if (eol == std::string_view::npos) eol = text.size();
    std::string_view line = text.substr(pos, eol - pos);
    if (line.rfind("// -----", 0) == 0) {
      chunks.push_back({static_cast<uint32_t>(start), static_cast<uint32_t>(pos)});
      start = eol + 1;
    }
    pos = eol + 1;
  }
  if (start <= text.size()) chunks.push_back({static_cast<uint32_t>(start), static_cast<uint32_t>(text.size())});
  return chunks;
}

// Graph IR: parse, verify, run the rewrites named by --passes= (none by default), print.
bool processGraphChunk(const SourceManager& sm, FileID file, std::pair<uint32_t, uint32_t> chunk,
                       const std::string& passes, bool verifyInput, DiagnosticEngine& diags, std::string& result) {
  unsigned before = diags.errorCount();
  std::unique_ptr<graph::GraphModule> m = graph::parseModule(sm, file, diags, chunk.first, chunk.second);
  bool ok = m != nullptr;
  if (ok && verifyInput) ok = graph::verifyModule(*m, diags);
  if (ok) {
    std::string error;
    ok = graph::runPipeline(*m, passes, {}, diags, error);
    if (!error.empty()) std::cerr << "tessera-opt: error: " << error << "\n";
  }
  ok = ok && diags.errorCount() == before;
  if (ok) result += graph::printModule(*m);
  return ok;
}

}  // namespace

int main(int argc, char** argv) {
  std::string input, output, passes;
  bool split = false, verifyInput = true, errorLimitSet = false, graphInput = false;
  unsigned errorLimit = 20;
  ir::PassManagerOptions opts;
  opts.log = &std::cerr;
  for (int i = 1; i < argc; ++i) {
    std::string a = argv[i];
    if (a == "-o" && i + 1 < argc)
      output = argv[++i];
    else if (a.rfind("--passes=", 0) == 0)
      passes = a.substr(9);
    else if (a == "--verify-each")
      opts.verifyEach = true;
    else if (a == "--no-verify")
      verifyInput = false;
    else if (a == "--print-after-all")
      opts.printAfterAll = true;
    else if (a == "--time-passes")
      opts.timePasses = true;
    else if (a == "--split-input-file")
      split = true;
    else if (a == "--graph")
      graphInput = true;
    else if (a.rfind("--error-limit=", 0) == 0) {
      errorLimit = static_cast<unsigned>(std::strtoul(a.c_str() + 14, nullptr, 10));
      errorLimitSet = true;
    } else if (a == "--list-passes") {
      for (const ir::PassInfo& p : ir::passRegistry()) std::cout << "  " << p.name << "  " << p.description << "\n";
      return 0;
    } else if (a == "-h" || a == "--help") {
      usage(std::cout);
      return 0;
    } else if (!a.empty() && a[0] == '-' && a != "-") {
      std::cerr << "tessera-opt: error: unknown option '" << a << "'\n";
      usage(std::cerr);
      return 2;
    } else if (input.empty())
      input = a;
    else {
      std::cerr << "tessera-opt: error: more than one input file\n";
      return 2;
    }
  }
  if (input.empty()) input = std::string(1, '-');
  (void)errorLimitSet;

  SourceManager sm;
  DiagnosticEngine diags(sm);
  diags.setErrorLimit(errorLimit);
  TextDiagnosticPrinter printer(std::cerr, sm, false);
  diags.addConsumer(&printer);

  FileID file;
  if (input == "-") {
    std::string text((std::istreambuf_iterator<char>(std::cin)), std::istreambuf_iterator<char>());
    file = sm.addBuffer("<stdin>", std::move(text));
  } else {
    std::string err;
    if (!sm.addFile(input, file, err)) {
      diags.report(diag::err_drv_cannot_open, SourceRange()) << input << err;
      diags.finish();
      return 1;
    }
  }

  graphInput |= input.size() > 7 && input.substr(input.size() - 7) == ".tgraph";
  ir::PassManager pm(opts);
  if (!graphInput && !pm.parsePipeline(passes, diags)) {
    diags.finish();
    return 1;
  }

  std::vector<std::pair<uint32_t, uint32_t>> chunks = inputChunks(sm.bufferText(file), split);
  std::string result;
  bool failed = false;
  for (size_t c = 0; c < chunks.size(); ++c) {
    if (c) result += "// -----\n";
    if (graphInput) {
      failed |= !processGraphChunk(sm, file, chunks[c], passes, verifyInput, diags, result);
      if (diags.stopped()) break;
      continue;
    }
    unsigned before = diags.errorCount();
    std::unique_ptr<ir::Module> m = ir::parseModule(sm, file, diags, chunks[c].first, chunks[c].second);
    bool ok = m != nullptr;
    if (ok && verifyInput) ok = ir::verifyModule(*m, diags);
    if (ok) ok = pm.run(*m, diags);
    ok = ok && diags.errorCount() == before;
    if (ok) result += ir::printModule(*m);
    failed |= !ok;
    if (diags.stopped()) break;
  }

  if (output.empty() || output == "-") {
    std::cout << result;
  } else {
    std::ofstream out(output, std::ios::binary);
    if (!out) {
      std::cerr << "tessera-opt: error: cannot write '" << output << "'\n";
      return 1;
    }
    out << result;
  }
  diags.finish();
  return failed ? 1 : 0;
}
