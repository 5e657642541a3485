#include "tools/tesserac/Backend.h"

#include <cstdio>
#include <fstream>
#include <iostream>

#include "codegen/CompileModule.h"
#include "codegen/HostModule.h"
#include "codegen/ResourceUsage.h"
#include "ir/AsmFormat.h"
#include "ir/Pass.h"

namespace tessera {

namespace {

// The default Tile IR pipeline: device functions inlined, then cleaned up, `tile.range(...,
// prefetch=k)` loops turned into k-stage async-copy pipelines, then shared memory placed (code
// generation needs its offsets).
const char* kDefaultPipeline = "inline,canonicalize,cse,licm,dce,uniformity,mma-form,pipeline,smem-plan";
const char* kDefaultPipelineO0 = "inline,uniformity,smem-plan";

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

int runBackend(ir::Module& m, const DriverOptions& opts, DiagnosticEngine& diags) {
  ir::PassManagerOptions pmOpts;
  pmOpts.verifyEach = pmOpts.verifyEach || opts.verifyEach;
  pmOpts.printAfterAll = opts.printAfterAll;
  pmOpts.timePasses = opts.timePasses;
  pmOpts.log = &std::cerr;
  ir::PassManager pm(pmOpts);
  std::string pipeline = !opts.passes.empty() ? opts.passes : opts.optLevel == 0 ? kDefaultPipelineO0 : kDefaultPipeline;
  if (!pm.parsePipeline(pipeline, diags) || !pm.run(m, diags)) {
    diags.finish();
    return 1;
  }
  EmitKind emit = opts.emitGiven ? opts.emit : EmitKind::Obj;
  if (emit == EmitKind::TileIR) {
    diags.finish();
    return writeFile(opts.output, ir::printModule(m)) ? 0 : fail("cannot write '" + opts.output + "'");
  }

  codegen::CompileOptions co;
  std::string input = opts.inputs[0];
  co.moduleName = codegen::cIdentifier(stem(input));
  co.sourceName = input.substr(input.find_last_of('/') == std::string::npos ? 0 : input.find_last_of('/') + 1);
  co.optLevel = opts.optLevel;
  co.lineInfo = opts.debugInfo;
  // Bounds checking is on by default in debugging builds (-O0, -g), as with -fsanitize=bounds.
  co.boundsCheck = opts.boundsCheck < 0 ? opts.optLevel == 0 || opts.debugInfo : opts.boundsCheck > 0;
  co.cpu = opts.target != DriverOptions::Target::Gpu;
  std::string error;
  if (opts.target != DriverOptions::Target::Cpu && !codegen::parseGpuArchList(opts.gpuArchs, co.archs, error))
    return fail(error);
  if ((emit == EmitKind::PTX || emit == EmitKind::Cubin) && co.archs.size() != 1)
    return fail("--emit=ptx and --emit=cubin need exactly one GPU architecture (--gpu=sm_XX)");

  codegen::StopAfter stop = emit == EmitKind::LLVM   ? codegen::StopAfter::LLVM
                            : emit == EmitKind::PTX   ? codegen::StopAfter::PTX
                            : emit == EmitKind::Cubin ? codegen::StopAfter::Cubin
                                                      : codegen::StopAfter::Object;
  if (emit == EmitKind::Header) stop = codegen::StopAfter::LLVM;
  if (opts.resourceUsage != DriverOptions::ResourceUsage::Off &&
      (co.archs.empty() || stop == codegen::StopAfter::LLVM || stop == codegen::StopAfter::PTX))
    return fail("--resource-usage reads the cubins: it needs GPU code (--target=all or gpu) and an output that "
                "assembles them (an object or --emit=cubin)");
  codegen::CompileOutput out;
  if (!codegen::compileModule(m, co, stop, out, error)) return fail(error);
  if (opts.resourceUsage != DriverOptions::ResourceUsage::Off) {
    // Like nvcc --resource-usage: on stdout, unless the compile's output goes there.
    std::ostream& os = opts.output == "-" ? std::cerr : std::cout;
    os << (opts.resourceUsage == DriverOptions::ResourceUsage::Json
               ? codegen::formatResourcesJson(co.moduleName, out.kernels)
               : codegen::formatResourcesText(co.sourceName, out.kernels));
  }

  // Every output, written all or nothing: an unwritable header (-H into a missing directory)
  // leaves no object behind for a build system to take as up to date.
  std::vector<std::pair<std::string, const std::string*>> outputs;
  std::string path = opts.output;
  switch (emit) {
    case EmitKind::LLVM:
      // The device module when there is one, else the CPU executor's.
      outputs.push_back({path, co.archs.empty() ? &out.cpuLLVM : &out.gpuLLVM});
      break;
    case EmitKind::PTX: outputs.push_back({path, &out.ptx[0]}); break;
    case EmitKind::Cubin: outputs.push_back({path.empty() ? stem(input) + ".cubin" : path, &out.cubins[0]}); break;
    case EmitKind::Header: outputs.push_back({path, &out.header}); break;
    default:
      if (path.empty()) path = stem(input) + ".o";
      if (path == "-") return fail("an object file is not written to stdout; use -o FILE");
      outputs.push_back({path, &out.object});
      break;
  }
  if (!opts.headerOutput.empty()) outputs.push_back({opts.headerOutput, &out.header});
  for (size_t i = 0; i < outputs.size(); ++i) {
    if (writeFile(outputs[i].first, *outputs[i].second)) continue;
    for (size_t j = 0; j < i; ++j)
      if (!outputs[j].first.empty() && outputs[j].first != "-") std::remove(outputs[j].first.c_str());
    return fail("cannot write '" + outputs[i].first + "'");
  }
  diags.finish();
  return 0;
}

}  // namespace tessera
