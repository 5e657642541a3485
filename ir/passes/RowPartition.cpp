// row-partition: splits the rows of whole-tensor tile programs across groups (docs/language.md,
// section 4). The lowering marks such a kernel `whole_tensor` and lowers its body over whole
// tensors; this pass gives it its launch and consumes the mark (the rules: basic/RowSplit.h):
//   - an output (the first writable tensor parameter) of static leading extent: the program is
//     one group's work, `exact_grid` and `blocks = [out, 0, rows]`;
//   - a symbolic leading extent M: the body runs once per block of kRowBlock rows, grid-stride,
//     in `tile.range %g * 16, dim(out, 0), %num_groups * 16` whose block argument is `%rows`.
//     Every parameter whose leading extent is M is used as its row block `P[rows]` (`%P_rows`), a
//     rank-2 parameter with M second that the body uses only transposed as its column block
//     `P[:, rows]` (`%P_cols`), the others whole; the values computed from blocks get the block's
//     extent where they had M, and `blocks = [out, 0, 16]`. Codegen clips the last block.
// Before it changes a type it checks that rows of different blocks never meet: a block is not
// the right operand of a product, transposed, reduced along its rows, broadcast along the rows
// of a larger tile, sliced across its rows or indexed by element, and a value that has all of
// M's rows (computed from whole tensors) is not broadcast to or stored into a block. Sema makes
// the same checks on the typed AST (sema/analyses/RowSplit.cpp); this pass decides alone for kernels
// with unannotated parameters and for Tile IR given to tessera-opt.
#include <algorithm>
#include <functional>
#include <map>

#include "basic/RowSplit.h"
#include "ir/IRDiagnostics.h"
#include "ir/Pass.h"
#include "ir/Verifier.h"

namespace tessera::ir {

namespace {

using rowsplit::kRowBlock;
using rowsplit::Rule;

// The ops lowering puts before the body (ir::FunctionContext::prologue): shared buffers and the
// extents of shape symbols read from parameters. They stay outside the row loop, on whole tensors.
bool isPrologue(const Operation* o) {
  return o->id == OpId::SmemAlloc || (o->id == OpId::MemDim && o->operand(0)->isBlockArg());
}

bool hasShape(Type t) { return t->kind == TypeKind::Tensor || t->kind == TypeKind::Tile || t->kind == TypeKind::Frag; }

class Partition {
 public:
  Partition(Module& m, Operation& f, DiagnosticEngine& diags) : ctx_(m.ctx()), f_(f), diags_(diags) {}

  bool run() {
    f_.removeAttr(AttrId::WholeTensor);
    Block& top = f_.body();
    int out = -1;
    for (unsigned i = 0; i < top.numArgs() && out < 0; ++i)
      if (top.arg(i)->type->kind == TypeKind::Tensor && top.arg(i)->type->access != Access::Read)
        out = static_cast<int>(i);
    if (out < 0 || top.arg(static_cast<unsigned>(out))->type->shape.empty()) return true;
    out_ = top.arg(static_cast<unsigned>(out));
    const Dim& rows = out_->type->shape[0];
    if (rows.isStatic()) {
      // Without a symbol there is nothing to split rows by: one group does it all, so the default
      // launch is one group (every group would do all of it).
      f_.setAttr(AttrId::ExactGrid, Attribute::unit());
      setLaunch({out, 0, std::max<int64_t>(1, rows.size)});
      return true;
    }
    if (rows.sym.empty()) return true;
    rowSym_ = rows.sym;
    if (!buildLoop(top)) return false;
    if (!visit(loop_->body())) return false;
    setLaunch({out, 0, kRowBlock});
    return true;
  }

 private:
  // `group` (the compiler's [128] unless the lowering chose one) and then `blocks`, in the order
  // the launch attributes are always printed.
  void setLaunch(const std::vector<int64_t>& blocks) {
    Attribute group = f_.hasAttr(AttrId::Group) ? *f_.attr(AttrId::Group) : Attribute::ints({128});
    f_.removeAttr(AttrId::Group);
    f_.setAttr(AttrId::Group, group);
    f_.setAttr(AttrId::Blocks, Attribute::ints(blocks));
  }

  bool isRowSym(const Dim& d) const { return !d.isStatic() && d.sym == rowSym_; }

  // Every use of `p` but the prologue's is a tile.transpose, directly or of its tile.load.
  static bool usedOnlyTransposed(const Value* p) {
    bool transposed = false;
    for (const Use& u : p->uses) {
      const Operation* o = u.user;
      if (o->parent == p->ownerBlock && isPrologue(o)) continue;
      if (o->id == OpId::TileLoad) {
        for (const Use& lu : o->result()->uses)
          if (lu.user->id != OpId::TileTranspose) return false;
        transposed |= o->result()->hasUses();
      } else if (o->id == OpId::TileTranspose) {
        transposed = true;
      } else {
        return false;
      }
    }
    return transposed;
  }

  // The extent of a view's `sizes` attribute: a constant, or the symbol the verifier reads back.
  bool sizeOf(const Value* p, size_t d, Attribute& out) {
    const Dim& full = p->type->shape[d];
    if (full.isStatic())
      out = Attribute::integer(full.size);
    else if (!full.sym.empty())
      out = Attribute::string(full.sym);
    else {
      diags_.report(diag::err_ir_rows_unnamed_extent, locationOf(&f_)) << p->nameHint << static_cast<unsigned>(d);
      return false;
    }
    return true;
  }

  // tile.range %group_id * 16, dim(out, 0), %num_groups * 16 { ^bb0(%rows): blocks; body }.
  bool buildLoop(Block& top) {
    auto first = top.ops.begin();
    while (first != top.ops.end() && isPrologue(first->get())) ++first;
    Builder b(ctx_);
    b.setLoc(f_.loc);
    if (first == top.ops.end())
      b.setInsertionPointToEnd(top);
    else
      b.setInsertionPoint(first->get());
    Type ix = ctx_.index();
    Value* ub = b.create(OpId::MemDim, {out_}, {ix}, {{AttrId::Axis, Attribute::integer(0)}})->result();
    Value* blk = b.constIndex(kRowBlock);
    Value* group = b.create(OpId::TileGroupId, {}, {ix})->result();
    Value* lb = b.binary(OpId::ArithMulI, group, blk);
    Value* groups = b.create(OpId::TileNumGroups, {}, {ix})->result();
    Value* st = b.binary(OpId::ArithMulI, groups, b.constIndex(kRowBlock));
    loop_ = b.create(OpId::TileRange, {lb, ub, st}, {});
    Block& body = loop_->body();
    Value* rows = body.addArg(ix, "rows");
    // The body moves into the loop, all but the return.
    for (auto it = std::next(top.find(loop_)); it != top.ops.end() && !(*it)->has(T_Terminator);) {
      Operation* o = (it++)->get();
      body.push_back(top.remove(o));
    }
    Builder in(ctx_);
    in.setLoc(f_.loc);
    in.setInsertionPointToStart(body);
    for (unsigned i = 0; i < top.numArgs(); ++i) {
      Value* p = top.arg(i);
      Type t = p->type;
      if (t->kind != TypeKind::Tensor || t->shape.empty()) continue;
      bool second = t->shape.size() > 1 && isRowSym(t->shape[1]);
      rowsplit::ParamSplit how =
          rowsplit::classifyParam(t->shape.size(), isRowSym(t->shape[0]), second, usedOnlyTransposed(p));
      if (how == rowsplit::ParamSplit::Whole) continue;
      std::vector<Value*> offsets;
      std::vector<Attribute> sizes;
      if (how == rowsplit::ParamSplit::Columns) {
        Attribute k;
        if (!sizeOf(p, 0, k)) return false;
        offsets = {in.constIndex(0), rows};
        sizes = {k, Attribute::integer(kRowBlock)};
      } else {
        offsets = {rows};
        sizes = {Attribute::integer(kRowBlock)};
        for (size_t d = 1; d < t->shape.size(); ++d) {
          Attribute s;
          if (!sizeOf(p, d, s)) return false;
          offsets.push_back(in.constIndex(0));
          sizes.push_back(s);
        }
      }
      // The view's type follows its sizes, as the verifier reads them back (an extent expression
      // such as K+1 is the symbol it spells).
      std::vector<Dim> shape;
      for (const Attribute& a : sizes) shape.push_back(a.kind == AttrKind::Int ? Dim::fixed(a.i) : Dim::symbol(a.s));
      std::vector<Value*> operands = {p};
      operands.insert(operands.end(), offsets.begin(), offsets.end());
      Operation* slice =
          in.create(OpId::MemSlice, operands, {ctx_.withShape(t, shape)}, {{AttrId::Sizes, Attribute::arrayOf(sizes)}});
      Value* block = slice->result();
      bool cols = how == rowsplit::ParamSplit::Columns;
      block->nameHint = p->nameHint + (cols ? "_cols" : "_rows");
      auto uses = p->uses;
      for (const Use& u : uses)
        if (u.user != slice && u.user->isInside(loop_)) u.user->setOperand(u.index, block);
      (cols ? col_ : row_)[block] = p->nameHint;
    }
    Builder end(ctx_);
    end.setLoc(f_.loc);
    end.setInsertionPointToEnd(body);
    end.create(OpId::ScfYield, {}, {});
    return true;
  }

  // A value computed from blocks: M becomes the block's extent where it stands for the rows (the
  // first M of its shape; a block keeps its other extents, M among them), and an extent
  // expression the symbol it spells, as in the blocks' views.
  void markRows(Value* v, const std::string& src, unsigned axisHint = 0) {
    row_[v] = src;
    Type t = v->type;
    if (!hasShape(t)) return;
    std::vector<Dim> shape = t->shape;
    bool rows = false;
    for (size_t d = 0; d < shape.size(); ++d) {
      if (shape[d].expr && !shape[d].sym.empty()) shape[d] = Dim::symbol(shape[d].sym);
      if (!rows && d >= axisHint && isRowSym(shape[d])) shape[d] = Dim::fixed(kRowBlock), rows = true;
    }
    v->type = ctx_.withShape(t, shape);
  }

  bool wholeRows(const Value* v) const {
    return !row_.count(v) && hasShape(v->type) && !v->type->shape.empty() && isRowSym(v->type->shape[0]);
  }

  // A value with M's rows that meets a block: a broadcast made for the meeting (of a value
  // without those rows), or elementwise ops of such, becomes a block too; anything else has all
  // of M's rows and would give every block the same ones.
  bool adopt(Value* v, const std::string& src) {
    Operation* d = v->defOp;
    if (!d) return false;
    if (d->id == OpId::TileBroadcast && wholeRows(d->operand(0))) return false;
    if (d->id != OpId::TileBroadcast) {
      if (!d->has(T_Elementwise)) return false;
      for (Value* x : d->operands)
        if (wholeRows(x) && !adopt(x, src)) return false;
    }
    markRows(v, src);
    return true;
  }

  bool fail(Operation* at, const std::string& src, Rule rule) {
    if (rowsplit::isWholeRowsRule(rule))
      diags_.report(diag::err_ir_rows_not_split, locationOf(at))
          << rowSym_ << rowsplit::ruleText(rule) << out_->nameHint;
    else
      diags_.report(diag::err_ir_rows_not_independent, locationOf(at))
          << src << rowsplit::ruleText(rule) << out_->nameHint;
    return false;
  }

  // A column block: loaded, then transposed into a block of rows; nothing else.
  bool visitColumns(Operation* o, const std::string& src) {
    if (o->id == OpId::TileTranspose) {
      markRows(o->result(), src);
    } else if (o->id == OpId::TileLoad) {
      col_[o->result()] = src;
      markRows(o->result(), src, 1);
      row_.erase(o->result());
    } else {
      return fail(o, src, Rule::ColumnsNotTransposed);
    }
    return true;
  }

  static int64_t axisOf(const Operation* o, size_t rank) {
    int64_t a = o->intAttr(AttrId::Axis, -1);
    return a < 0 ? a + static_cast<int64_t>(rank) : a;
  }

  // The uses of a block `x` (operand `at` of `o`) that mix rows of different blocks.
  bool checkUse(Operation* o, Value* x, unsigned at, const std::string& src, Type wholeResult) {
    switch (o->id) {
      case OpId::TileDot:
      case OpId::TileMma:
        if (auto it = row_.find(o->operand(1)); it != row_.end()) return fail(o, it->second, Rule::MatmulRight);
        break;
      case OpId::TileTranspose: return fail(o, src, Rule::Transpose);
      case OpId::TileSoftmax:
        if (rowsplit::axisMixesRows(axisOf(o, x->type->shape.size()), x->type->shape.size()))
          return fail(o, src, Rule::SoftmaxRows);
        break;
      case OpId::TileReduce:
        if (rowsplit::axisMixesRows(axisOf(o, x->type->shape.size()), x->type->shape.size()))
          return fail(o, src, Rule::ReduceRows);
        break;
      case OpId::MemReduce: return fail(o, src, Rule::ReduceAll);
      case OpId::TileBroadcast:
        if (isValueShaped(x->type) && rowsplit::broadcastMixesRows(x->type->shape.size(), wholeResult->shape.size()))
          return fail(o, src, Rule::BroadcastAlongRows);
        break;
      case OpId::MemLoad:
      case OpId::MemStore:
      case OpId::MemAtomic:
      case OpId::MemAtomicCas: return fail(o, src, Rule::IndexElements);
      case OpId::MemSlice:
        if (at != 0) return fail(o, src, Rule::IndexWith);
        if (wholeResult->shape.empty() || !isRowSym(wholeResult->shape[0])) return fail(o, src, Rule::SliceRows);
        break;
      default: break;
    }
    return true;
  }

  // A view of a block keeps the block's rows: its `sizes` say so.
  static void blockSizes(Operation* o) {
    Attribute* sizes = o->attr(AttrId::Sizes);
    if (o->id == OpId::MemSlice && sizes && sizes->kind == AttrKind::Array && !sizes->array.empty())
      sizes->array[0] = Attribute::integer(kRowBlock);
  }

  bool visitRegions(Operation* o) {
    std::string src;
    for (Value* v : o->operands)
      if (auto it = row_.find(v); it != row_.end() && src.empty()) src = it->second;
    for (auto& r : o->regions) {
      if (!src.empty())
        for (auto& a : r->block().args) markRows(a.get(), src);
      if (!visit(r->block())) return false;
      if (Operation* t = r->block().terminator())
        for (Value* v : t->operands)
          if (auto it = row_.find(v); it != row_.end() && src.empty()) src = it->second;
    }
    if (!src.empty())
      for (auto& r : o->results) markRows(r.get(), src);
    return true;
  }

  bool visit(Block& b) {
    for (auto& opPtr : b.ops) {
      Operation* o = opPtr.get();
      if (!o->regions.empty()) {
        if (!visitRegions(o)) return false;
        continue;
      }
      std::string colSrc;
      for (Value* v : o->operands)
        if (auto it = col_.find(v); it != col_.end() && colSrc.empty()) colSrc = it->second;
      if (!colSrc.empty()) {
        if (!visitColumns(o, colSrc)) return false;
        continue;
      }
      std::string src;
      unsigned at = 0;
      for (unsigned i = 0; i < o->numOperands() && src.empty(); ++i)
        if (auto it = row_.find(o->operand(i)); it != row_.end()) src = it->second, at = i;
      if (src.empty()) continue;
      // Values with M's rows meeting the block: operands of elementwise ops, the value stored.
      if (o->has(T_Elementwise) || (o->id == OpId::TileStore && at == 1))
        for (unsigned i = 0; i < o->numOperands(); ++i) {
          Value* x = o->operand(i);
          if (!wholeRows(x) || adopt(x, src)) continue;
          return fail(o, src, o->id == OpId::TileStore ? Rule::StoreWholeRows : Rule::BroadcastWholeRows);
        }
      if (o->id == OpId::TileStore || o->has(T_Terminator)) continue;
      Type wholeResult = o->numResults() ? o->result()->type : nullptr;
      if (!checkUse(o, o->operand(at), at, src, wholeResult)) return false;
      blockSizes(o);
      for (auto& r : o->results) markRows(r.get(), src);
    }
    return true;
  }

  IRContext& ctx_;
  Operation& f_;
  DiagnosticEngine& diags_;
  Value* out_ = nullptr;
  std::string rowSym_;
  Operation* loop_ = nullptr;
  std::map<const Value*, std::string> row_, col_;  // blocks of rows / columns, and their parameter
};

}  // namespace

bool runRowPartition(Module& m, DiagnosticEngine& diags) {
  for (Operation* f : m.funcs())
    if (f->hasAttr(AttrId::WholeTensor) && f->hasAttr(AttrId::Kernel) && !f->regions.empty())
      if (!Partition(m, *f, diags).run()) return false;
  return true;
}

}  // namespace tessera::ir
