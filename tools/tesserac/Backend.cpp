#include "tools/tesserac/Backend.h"

#include <cstdio>
#include <fstream>
#include <iostream>

#include "basic/StageTimes.h"
#include "codegen/CompileModule.h"
#include "codegen/host/HostModule.h"
#include "codegen/lower/KernelRemarks.h"
#include "codegen/target/ResourceUsage.h"
#include "ir/AsmFormat.h"
#include "ir/Pass.h"
#include "ir/Verifier.h"
#include "runtime/include/tessera/runtime.h"
#include "sema/Sema.h"

namespace tessera {

// Sema refuses kernel tensor parameters of a rank the launch ABI cannot describe.
static_assert(kMaxTensorParamRank == TESSERA_MAX_RANK, "sema's rank limit must be the runtime's");

namespace {

std::string stem(const std::string& path) {
  size_t slash = path.find_last_of('/');
  std::string base = slash == std::string::npos ? path : path.substr(slash + 1);
  size_t dot = base.find_last_of('.');
  return dot == std::string::npos ? base : base.substr(0, dot);
}

bool writeFile(const std::string& path, const std::string& data) {
  if (path.empty() || path == "-") {
    std::cout << data;
    return static_cast<bool>(std::cout);
  }
  std::ofstream f(path, std::ios::binary | std::ios::trunc);
  f << data;
  return static_cast<bool>(f.flush());
}

int fail(const std::string& message) {
  std::cerr << "tesserac: error: " << message << "\n";
  return 1;
}

}  // namespace

int runBackend(ir::Module& m, const DriverOptions& opts, DiagnosticEngine& diags,
               std::vector<codegen::HostEntry> entries) {
  ir::PassManagerOptions pmOpts;
  pmOpts.verifyEach = pmOpts.verifyEach || opts.verifyEach;
  pmOpts.printAfterAll = opts.printAfterAll;
  pmOpts.timePasses = opts.timePasses;
  pmOpts.log = &std::cerr;
  ir::PassManager pm(pmOpts);
  std::string pipeline = !opts.passes.empty() ? opts.passes
                         : opts.optLevel == 0 ? ir::kDefaultPipelineO0
                                              : ir::kDefaultPipeline;
  // The pipeline's result is verified once more: inlined device functions meet their kernel's
  // rules (a group shape for group features) here, with the builtin's source position.
  StageTimer passes("Tile IR passes");
  if (!pm.parsePipeline(pipeline, diags) || !pm.run(m, diags) || !ir::verifyModule(m, diags)) {
    diags.finish();
    return 1;
  }
  passes.stop();
  EmitKind emit = opts.emitGiven ? opts.emit : EmitKind::Obj;
  if (emit == EmitKind::TileIR) {
    diags.finish();
    return writeFile(opts.output, ir::printModule(m)) ? 0 : fail("cannot write '" + opts.output + "'");
  }

  codegen::CompileOptions co;
  std::string input = opts.inputs[0];
  co.moduleName = codegen::cIdentifier(opts.moduleName.empty() ? stem(input) : opts.moduleName);
  co.sourceName = input.substr(input.find_last_of('/') == std::string::npos ? 0 : input.find_last_of('/') + 1);
  co.optLevel = opts.optLevel;
  co.entries = std::move(entries);
  co.lineInfo = opts.debugInfo;
  // Bounds checking is on by default in debugging builds (-O0, -g), as with -fsanitize=bounds.
  co.boundsCheck = opts.boundsCheck < 0 ? opts.optLevel == 0 || opts.debugInfo : opts.boundsCheck > 0;
  co.cpu = opts.target != DriverOptions::Target::Gpu;
  std::string error;
  if (opts.target != DriverOptions::Target::Cpu && !codegen::parseGpuArchList(opts.gpuArchs, co.archs, error))
    return fail(error);
  if ((emit == EmitKind::PTX || emit == EmitKind::Cubin) && co.archs.size() != 1)
    return fail("--emit=ptx and --emit=cubin need exactly one GPU architecture (--gpu=sm_XX)");

  codegen::StopAfter stop = emit == EmitKind::LLVM    ? codegen::StopAfter::LLVM
                            : emit == EmitKind::PTX   ? codegen::StopAfter::PTX
                            : emit == EmitKind::Cubin ? codegen::StopAfter::Cubin
                                                      : codegen::StopAfter::Object;
  if (emit == EmitKind::Header) stop = codegen::StopAfter::LLVM;
  if (opts.resourceUsage != DriverOptions::ResourceUsage::Off &&
      (co.archs.empty() || stop == codegen::StopAfter::LLVM || stop == codegen::StopAfter::PTX))
    return fail(
        "--resource-usage reads the cubins: it needs GPU code (--target=all or gpu) and an output that "
        "assembles them (an object or --emit=cubin)");
  codegen::CompileOutput out;
  if (!codegen::compileModule(m, co, stop, out, error)) return fail(error);
  codegen::emitKernelRemarks(m, out.kernels, co.archs.empty() ? "on the CPU executor" : "on the GPU", diags);
  if (opts.resourceUsage != DriverOptions::ResourceUsage::Off) {
    // Like nvcc --resource-usage: on stdout, unless the compile's output goes there.
    std::ostream& os = opts.output == "-" ? std::cerr : std::cout;
    os << (opts.resourceUsage == DriverOptions::ResourceUsage::Json
               ? codegen::formatResourcesJson(co.moduleName, out.kernels)
               : codegen::formatResourcesText(co.sourceName, out.kernels));
  }

  std::string path = opts.output;
  switch (emit) {
    case EmitKind::LLVM:
      // The device module when there is one, else the CPU executor's.
      if (!writeFile(path, co.archs.empty() ? out.cpuLLVM : out.gpuLLVM)) return fail("cannot write '" + path + "'");
      break;
    case EmitKind::PTX:
      if (!writeFile(path, out.ptx[0])) return fail("cannot write '" + path + "'");
      break;
    case EmitKind::Cubin:
      if (path.empty()) path = stem(input) + ".cubin";
      if (!writeFile(path, out.cubins[0])) return fail("cannot write '" + path + "'");
      break;
    case EmitKind::Header:
      if (!writeFile(path, out.header)) return fail("cannot write '" + path + "'");
      break;
    default:
      if (path.empty()) path = stem(input) + ".o";
      if (path == "-") return fail("an object file is not written to stdout; use -o FILE");
      if (!writeFile(path, out.object)) return fail("cannot write '" + path + "'");
      break;
  }
  if (!opts.headerOutput.empty() && !writeFile(opts.headerOutput, out.header)) {
    // The object without its header is half a result: take it back (the driver checked both
    // paths before compiling, so this is a write error such as a full disk).
    if (!path.empty() && path != "-") std::remove(path.c_str());
    return fail("cannot write '" + opts.headerOutput + "'");
  }
  diags.finish();
  return 0;
}

}  // namespace tessera
