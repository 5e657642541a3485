#include "hostgen/HostFunctions.h"

#include <iostream>
#include <map>

#include "frontend/Lexer.h"
#include "frontend/Parser.h"
#include "graph/KernelGen.h"
#include "graph/Passes.h"
#include "ir/IR.h"
#include "irgen/IRGen.h"
#include "runtime/include/tessera/runtime.h"
#include "sema/Sema.h"

namespace tessera {

namespace {

int32_t abiDType(DType d) {
  switch (d) {
#define DTYPE(ID, NAME, SHORT, BITS, KIND, EXP, MANT, ABI, IR, IRNAME, LLVM, CTYPE, DOC) \
  case DType::ID: return ABI;
#include "basic/DTypes.def"
    default: return 0;
  }
}

// A Dim as the postfix program of tessera_expr_op over the entry's symbols.
void extentProgram(const graph::Dim& d, const std::map<std::string, unsigned>& symbols,
                   std::vector<codegen::ExtentOp>& out) {
  using Op = codegen::ExtentOp;
  if (d.isConst()) {
    out.push_back({Op::Const, 0, d.value()});
    return;
  }
  if (d.isSymbol()) {
    out.push_back({Op::Symbol, static_cast<int32_t>(symbols.at(d.name())), 0});
    return;
  }
  extentProgram(d.lhs(), symbols, out);
  extentProgram(d.rhs(), symbols, out);
  switch (d.op()) {
    case graph::Dim::Op::Add: out.push_back({Op::Add, 0, 0}); break;
    case graph::Dim::Op::Sub: out.push_back({Op::Sub, 0, 0}); break;
    case graph::Dim::Op::Mul: out.push_back({Op::Mul, 0, 0}); break;
    case graph::Dim::Op::Div: out.push_back({Op::Div, 0, 0}); break;
    case graph::Dim::Op::CeilDiv: out.push_back({Op::CeilDiv, 0, 0}); break;
    case graph::Dim::Op::Mod: out.push_back({Op::Mod, 0, 0}); break;
  }
}

codegen::HostEntryTensor entryTensor(const graph::PlanTensor& t, const std::map<std::string, unsigned>& symbols) {
  codegen::HostEntryTensor e;
  e.dtype = abiDType(t.dtype);
  e.elemBits = dtypeInfo(t.dtype).bits;
  for (const graph::Dim& d : t.shape) {
    e.shape.emplace_back();
    extentProgram(d, symbols, e.shape.back());
  }
  return e;
}

codegen::HostEntry entryOf(const graph::HostPlan& p) {
  codegen::HostEntry e;
  e.name = p.name;
  e.signature = p.signature;
  e.captureGraph = p.captureGraph;
  std::map<std::string, unsigned> symbols;
  for (size_t i = 0; i < p.params.size(); ++i) {
    const graph::PlanParam& q = p.params[i];
    e.params.push_back({q.name, q.isTensor, abiDType(q.dtype), static_cast<int32_t>(q.shape.size()), q.writable});
    for (size_t a = 0; a < q.shape.size(); ++a)
      if (q.shape[a].isSymbol() && !symbols.count(q.shape[a].name())) {
        symbols[q.shape[a].name()] = static_cast<unsigned>(e.symbols.size());
        e.symbols.push_back({q.shape[a].name(), static_cast<unsigned>(i), static_cast<unsigned>(a)});
      }
  }
  for (const graph::PlanTensor& t : p.outputs) e.outputs.push_back(entryTensor(t, symbols));
  for (const graph::PlanTensor& t : p.temps) e.temps.push_back(entryTensor(t, symbols));
  using K = codegen::HostEntryArg::Kind;
  for (const graph::PlanStep& s : p.steps) {
    codegen::HostEntryStep step{s.kernel, {}};
    for (const graph::PlanArg& a : s.args) {
      if (a.kind == graph::PlanArg::Kind::ScalarParam) {
        step.args.push_back({K::ScalarParam, a.param, {}});
        continue;
      }
      if (a.kind == graph::PlanArg::Kind::Float) {
        codegen::HostEntryArg e{K::Float, 0, {}};
        e.value = a.value;
        e.dtype = abiDType(a.dtype);
        e.invSqrt = a.invSqrt;
        if (a.invSqrt) extentProgram(a.extent, symbols, e.extent);
        step.args.push_back(std::move(e));
        continue;
      }
      if (a.kind == graph::PlanArg::Kind::Extent) {
        codegen::HostEntryArg e{K::Extent, 0, {}};
        extentProgram(a.extent, symbols, e.extent);
        step.args.push_back(std::move(e));
        continue;
      }
      K k = a.buffer.kind == graph::PlanBuffer::Kind::Param    ? K::Param
            : a.buffer.kind == graph::PlanBuffer::Kind::Output ? K::Output
                                                               : K::Temp;
      codegen::HostEntryArg t{k, a.buffer.index, {}};
      for (const graph::Dim& d : a.view) {
        t.view.emplace_back();
        extentProgram(d, symbols, t.view.back());
      }
      for (const graph::Dim& d : a.viewStrides) {
        t.viewStrides.emplace_back();
        extentProgram(d, symbols, t.viewStrides.back());
      }
      if (!a.view.empty()) extentProgram(a.viewOffset, symbols, t.viewOffset);
      step.args.push_back(std::move(t));
    }
    e.steps.push_back(std::move(step));
  }
  return e;
}

}  // namespace

bool compileHostFunctions(graph::GraphModule& graphs, const HostFunctionOptions& opts, SourceManager& sm,
                          ASTContext& ctx, ir::Module& lowered, DiagnosticEngine& diags,
                          std::vector<codegen::HostEntry>& entries) {
  if (graphs.graphs.empty()) return true;
  std::string error;
  if (!graph::runPipeline(graphs, opts.graphPasses, opts.disabledGraphPasses, diags, error)) {
    if (!error.empty()) std::cerr << "tesserac: error: " << error << "\n";
    return false;
  }
  graph::GeneratedHostCode code;
  graph::generateHostCode(graphs, code, diags);
  if (code.plans.empty()) return !diags.hasErrors();
  // The generated kernels go through the same front end, checks and lowering as user kernels.
  FileID file = sm.addBuffer("<host kernels of " + graphs.name + ">", code.source);
  std::vector<Token> tokens = lexBuffer(sm, file, diags);
  Module* ast = parseTokens(tokens, sm, file, ctx, diags);
  // Generated row kernels import stdlib.nn (graph/KernelForms.h): the user module's search paths.
  SemaContext sema(sm, ctx);
  sema.includePaths = opts.includePaths;
  sema.stdlibDir = opts.stdlibDirGiven ? opts.stdlibDir : defaultStdlibDir();
  if (diags.hasErrors() || !analyzeModule(*ast, sema, diags)) return false;
  // Steps that launch a stdlib.nn kernel lower that kernel from the library's own module.
  const Module* nn = nullptr;
  for (const auto& [path, info] : sema.modules)
    if (info && info->name == "stdlib.nn") nn = info->module;
  for (const graph::HostPlan& p : code.plans)
    for (const graph::PlanStep& s : p.steps) {
      if (lowered.lookupFunc(s.kernel)) continue;
      const Module* from = s.stdlib.empty() ? ast : nn;
      if (!from) {
        std::cerr << "tesserac: error: host function '" << p.name << "' needs stdlib.nn, which was not found\n";
        return false;
      }
      if (!lowerKernelInto(*from, sema, s.stdlib.empty() ? s.kernel : s.stdlib, s.kernel, lowered, diags)) {
        if (!diags.hasErrors())  // e.g. a stdlib.nn older than this compiler, without the kernel
          std::cerr << "tesserac: error: host function '" << p.name << "' launches kernel '"
                    << (s.stdlib.empty() ? s.kernel : "stdlib.nn." + s.stdlib) << "', which could not be compiled\n";
        return false;
      }
    }
  for (const graph::HostPlan& p : code.plans) entries.push_back(entryOf(p));
  return true;
}

}  // namespace tessera
