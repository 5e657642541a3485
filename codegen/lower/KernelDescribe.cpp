// The host-side description of a kernel, read off its tile.func: parameters with dtypes, ranks
// and extents, the symbols that the extents name, the group shape and the shared memory.
#include <map>
#include <set>

#include "codegen/lower/CostExpr.h"
#include "codegen/lower/LowerToLLVM.h"
#include "ir/AsmFormat.h"
#include "ir/IR.h"
#include "runtime/include/tessera/runtime.h"

namespace tessera::codegen {

// The tessera_dtype number of a scalar (basic/DTypes.def); index values are i64.
int32_t dtypeOf(ir::ScalarKind k) {
  switch (k) {
#define DTYPE(ID, NAME, SHORT, BITS, KIND, EXP, MANT, ABI, IR, IRNAME, LLVM, CTYPE, DOC) \
  case ir::ScalarKind::IR: return ABI;
#include "basic/DTypes.def"
    case ir::ScalarKind::Index: return TESSERA_I64;
  }
  return TESSERA_DTYPE_INVALID;
}

namespace {

int32_t symbolIndex(const std::string& name, std::vector<std::string>& symbols) {
  for (size_t i = 0; i < symbols.size(); ++i)
    if (symbols[i] == name) return static_cast<int32_t>(i);
  symbols.push_back(name);
  return static_cast<int32_t>(symbols.size() - 1);
}

// A derived extent (K/tp) as the descriptor's postfix program, interning its symbols. False for
// an unknown ('?') leaf, which no launch could evaluate.
bool postfix(const ir::Dim& d, std::vector<std::string>& symbols, std::vector<ExtentOp>& out) {
  if (d.isStatic()) {
    out.push_back({ExtentOp::Const, 0, d.size});
    return true;
  }
  if (!d.isDerived()) {
    if (d.sym.empty()) return false;
    out.push_back({ExtentOp::Symbol, symbolIndex(d.sym, symbols), 0});
    return true;
  }
  if (!postfix(d.expr->lhs, symbols, out) || !postfix(d.expr->rhs, symbols, out)) return false;
  ExtentOp::Op op = ExtentOp::Add;
  switch (d.expr->op) {
    case ir::DimOp::Add: op = ExtentOp::Add; break;
    case ir::DimOp::Sub: op = ExtentOp::Sub; break;
    case ir::DimOp::Mul: op = ExtentOp::Mul; break;
    case ir::DimOp::Div: op = ExtentOp::Div; break;
    case ir::DimOp::Mod: op = ExtentOp::Mod; break;
  }
  out.push_back({op, 0, 0});
  return true;
}

// Bytes of shared memory the function's buffers (and group reductions' scratch) occupy once
// smem-plan has placed them.
int64_t plannedSharedBytes(ir::Operation& func) {
  int64_t end = 0;
  func.walk([&](ir::Operation* op) {
    if (op->id != ir::OpId::SmemAlloc) return;
    int64_t bytes = ir::staticElementCount(op->result()->type) * ir::elementBytes(op->result()->type);
    end = std::max(end, op->intAttr(ir::AttrId::Offset, 0) + bytes);
  });
  if (const ir::Attribute* g = func.attr(ir::AttrId::Group); g && func.hasAttr(ir::AttrId::GroupScratch)) {
    int64_t tiles = 1;
    for (const ir::Attribute& d : g->array) tiles *= d.i;
    end = std::max(end, func.intAttr(ir::AttrId::GroupScratch, 0) + ir::groupReduceScratchBytes(tiles));
  }
  return end;
}

// Whether the kernel reads tensor argument `arg`: some memory-reading op takes it, or a view of
// it, as an operand.
bool readsArgument(ir::Operation& func, ir::Value* arg) {
  std::set<ir::Value*> views = {arg};
  bool reads = false;
  func.walk([&](ir::Operation* op) {
    for (unsigned i = 0; i < op->numOperands(); ++i) {
      if (!views.count(op->operand(i))) continue;
      if (op->info().has(ir::T_ViewLike) && i == 0)
        views.insert(op->result());
      else if (op->info().has(ir::T_MemRead))
        reads = true;
    }
  });
  return reads;
}

// FNV-1a, 64 bits.
uint64_t fnv1a(const std::string& text) {
  uint64_t h = 1469598103934665603ull;
  for (unsigned char c : text) {
    h ^= c;
    h *= 1099511628211ull;
  }
  return h;
}

// The autotune attributes irgen puts on the candidates of a tuned kernel.
void describeAutotune(ir::Operation& func, KernelInterface& k) {
  if (!func.hasAttr(ir::AttrId::AutotuneIndex)) return;
  k.autotuneIndex = func.intAttr(ir::AttrId::AutotuneIndex, 0);
  if (const ir::Attribute* of = func.attr(ir::AttrId::AutotuneOf)) k.autotuneOf = of->s;
  if (const ir::Attribute* c = func.attr(ir::AttrId::AutotuneConfig))
    for (size_t i = 0; i < c->keys.size() && i < c->array.size(); ++i)
      k.autotuneConfig.push_back({c->keys[i], c->array[i].i});
  k.codeHash = fnv1a(ir::printOp(func));
}

}  // namespace

bool describeKernel(ir::Operation& func, KernelInterface& k, std::string& error) {
  k.name = func.funcName();
  if (const ir::Attribute* g = func.attr(ir::AttrId::Group)) {
    k.grouped = true;
    for (size_t i = 0; i < g->array.size() && i < 3; ++i) k.groupShape[i] = static_cast<uint32_t>(g->array[i].i);
  }
  k.deterministic = !func.hasAttr(ir::AttrId::Nondeterministic);
  describeAutotune(func, k);
  k.exactGrid = func.hasAttr(ir::AttrId::ExactGrid);
  k.sharedBytes = static_cast<uint64_t>(std::max(func.intAttr(ir::AttrId::Shared, 0), plannedSharedBytes(func)));
  for (auto& arg : func.body().args) {
    KernelParam p;
    p.name = arg->nameHint.empty() ? "arg" + std::to_string(arg->index) : arg->nameHint;
    ir::Type t = arg->type;
    if (t->kind == ir::TypeKind::Tensor) {
      p.isTensor = true;
      p.isMut = t->access != ir::Access::Read;
      p.writeOnly = p.isMut && !readsArgument(func, arg.get());
      p.dtype = dtypeOf(ir::baseScalar(t->elem));
      if (t->shape.size() > TESSERA_MAX_RANK) {
        error = "kernel '" + k.name + "': parameter '" + p.name + "' has rank " + std::to_string(t->shape.size()) +
                ", more than the " + std::to_string(TESSERA_MAX_RANK) + " a launch can pass";
        return false;
      }
      for (const ir::Dim& d : t->shape) {
        Extent e;
        if (d.isStatic()) {
          e.kind = Extent::Const;
          e.value = d.size;
        } else if (d.isDerived()) {
          e.kind = Extent::Expr;
          if (!postfix(d, k.symbols, e.expr)) {
            error =
                "kernel '" + k.name + "': the extent '" + d.sym + "' of parameter '" + p.name + "' has an unknown part";
            return false;
          }
        } else if (!d.sym.empty()) {
          e.kind = Extent::Symbol;
          e.symbol = symbolIndex(d.sym, k.symbols);
        }
        p.extents.push_back(std::move(e));
      }
    } else if (ir::isScalar(t)) {
      p.isTensor = false;
      p.dtype = dtypeOf(ir::baseScalar(t));
    } else {
      error = "kernel '" + k.name + "': parameter '" + p.name + "' of type " + ir::printType(t) +
              " cannot be passed from the host";
      return false;
    }
    k.params.push_back(std::move(p));
  }
  for (size_t i = 0; i < k.symbols.size(); ++i)
    if (k.symbols[i] == "grid_groups") k.gridSymbol = static_cast<int32_t>(i);
  // @kernel(flops="..."): an expression over the shape symbols, evaluated at each launch.
  if (const ir::Attribute* f = func.attr(ir::AttrId::Flops)) {
    std::string unknown;
    if (!parseCostExpression(f->s, k.symbols, k.flops, unknown)) {
      error = "flops=\"" + f->s + "\" " +
              (unknown.empty() ? std::string("is not an expression of integers, shape symbols, + - * / % and "
                                             "parentheses")
                               : "names '" + unknown + "', which no parameter's shape binds");
      return false;
    }
  }
  // `blocks = [param, axis, step, ...]`: the default grid of a block-partitioned kernel.
  if (const ir::Attribute* b = func.attr(ir::AttrId::Blocks)) {
    bool ok = b->array.size() % 3 == 0;
    for (size_t i = 0; ok && i < b->array.size(); i += 3) {
      KernelInterface::GridBlock g{static_cast<int32_t>(b->array[i].i), static_cast<int32_t>(b->array[i + 1].i),
                                   b->array[i + 2].i};
      ok = g.param >= 0 && static_cast<size_t>(g.param) < k.params.size() && k.params[g.param].isTensor &&
           g.axis >= 0 && static_cast<size_t>(g.axis) < k.params[g.param].extents.size() && g.step > 0;
      k.gridBlocks.push_back(g);
    }
    if (!ok) {
      error = "kernel '" + k.name +
              "': the `blocks` attribute must list (parameter, axis, step) triples naming "
              "dimensions of tensor parameters";
      return false;
    }
  }
  return true;
}

}  // namespace tessera::codegen
