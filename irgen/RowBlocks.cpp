// Whole-tensor tile programs (docs/language.md): a kernel that computes with tile values but
// says nothing about which part of the data a group owns has the rows of its output split into
// blocks across groups, after a check that rows of different blocks never meet.
#include <functional>
#include <map>
#include <set>

#include "irgen/FunctionContext.h"
#include "sema/ASTWalk.h"

namespace tessera::irgen {

// Whole-tensor tile programs and the parameters used only transposed: sema's definitions
// (sema/RowSplit.cpp), which checks the same rules as checkRowsIndependent on the typed AST.
bool FunctionContext::wholeTensorProgram() { return kernel_ && info_ && isWholeTensorProgram(*def_, *info_); }

// The body of a whole-tensor program runs once per block of kRowBlock rows of the output,
// grid-stride over groups, as if written `for rows in tile.range(Out, axis=0, step=16)`: every
// tensor parameter whose leading extent is the output's leading symbol is used as its row block
// `P[rows]`; a rank-2 parameter whose second extent is that symbol and which the body uses only
// transposed (`tile.dot(A.T, B)` with `A: [K, M]`) as its column block `P[:, rows]`, whose
// transpose is the row block of `P.T`; the others are used whole. Codegen clips the last block
// at run time.
void FunctionContext::lowerRowBlocks(const std::vector<const Param*>& params, unsigned outIdx) {
  needsGroup_ = true;
  I::Value* out = top_->arg(outIdx);
  std::string rowSym = out->type->shape[0].sym;
  I::Value* ub = op1(I::OpId::MemDim, {out}, ctx().index(), {{I::AttrId::Axis, I::Attribute::integer(0)}});
  I::Value* blk = b_->constIndex(kRowBlock);
  I::Value* lb = op1(I::OpId::ArithMulI, {op1(I::OpId::TileGroupId, {}, ctx().index()), blk}, ctx().index());
  I::Value* st = op1(I::OpId::ArithMulI, {op1(I::OpId::TileNumGroups, {}, ctx().index()), b_->constIndex(kRowBlock)},
                     ctx().index());
  distributed_.push_back({static_cast<int64_t>(outIdx), 0, kRowBlock});
  std::map<const I::Value*, std::string> roots, columnRoots;
  std::set<std::string> transposedOnly = namesUsedOnlyTransposed(def_->body);
  pushLoop(def_->body, def_->range, true);
  ++blockLoopDepth_;
  buildLoop(I::OpId::TileRange, lb, ub, st, {}, def_->body, def_->range, "for",
            [&](I::Value* rows) {
              rows->nameHint = "rows";
              for (size_t i = 0; i < params.size(); ++i) {
                I::Value* p = top_->arg(static_cast<unsigned>(i));
                I::Type t = p->type;
                if (t->kind != I::TypeKind::Tensor || t->shape.empty()) continue;
                if (t->shape.size() == 2 && t->shape[0].sym != rowSym && t->shape[1].sym == rowSym &&
                    transposedOnly.count(params[i]->name)) {
                  const I::Dim& k = t->shape[0];
                  if (!k.isStatic() && k.sym.empty())
                    error(diag::err_lower_dynamic_tile_shape, params[i]->nameRange, std::string("?"), 0u,
                          params[i]->name);
                  // Through slice(), as every view: the type follows the sizes attribute, so that an
                  // extent expression (K/2) is the same dimension the verifier reads back from it.
                  I::Value* cols = slice(p, {b_->constIndex(0), rows},
                                         {k.isStatic() ? I::Attribute::integer(k.size) : I::Attribute::string(k.sym),
                                          I::Attribute::integer(kRowBlock)},
                                         {});
                  cols->nameHint = params[i]->name + "_cols";
                  columnRoots[cols] = params[i]->name;
                  if (const Symbol* sym = info_->scope->lookupLocal(params[i]->name)) env_[sym] = Lowered::val(cols);
                  continue;
                }
                if (t->shape[0].sym != rowSym) continue;
                std::vector<I::Value*> offsets = {rows};
                std::vector<I::Attribute> sizes = {I::Attribute::integer(kRowBlock)};
                for (size_t d = 1; d < t->shape.size(); ++d) {
                  const I::Dim& full = t->shape[d];
                  if (!full.isStatic() && full.sym.empty())
                    error(diag::err_lower_dynamic_tile_shape, params[i]->nameRange, std::string("?"),
                          static_cast<unsigned>(d), params[i]->name);
                  offsets.push_back(b_->constIndex(0));
                  sizes.push_back(full.isStatic() ? I::Attribute::integer(full.size) : I::Attribute::string(full.sym));
                }
                I::Value* block = slice(p, offsets, sizes, {});
                block->nameHint = params[i]->name + "_rows";
                roots[block] = params[i]->name;
                const Symbol* sym = info_->scope->lookupLocal(params[i]->name);
                if (sym) env_[sym] = Lowered::val(block);
              }
            },
            {});
  --blockLoopDepth_;
  popLoop();
  I::Operation* loop = nullptr;
  for (auto it = top_->ops.rbegin(); it != top_->ops.rend() && !loop; ++it)
    if ((*it)->id == I::OpId::TileRange) loop = it->get();
  if (loop) checkRowsIndependent(loop, roots, columnRoots, rowSym, params[outIdx]->name);
}

// Sema makes these checks first (err_rows_not_independent, err_rows_not_split); these stay as a
// backstop, and decide alone for kernels with unannotated parameters.
// Rows of different blocks must not meet: a row-block value may not be the right operand of a
// matrix product (it contracts over rows), be transposed, reduced or softmaxed along axis 0,
// broadcast along the rows of a larger tile, sliced across rows, or indexed element by element.
// A column block (`P[:, rows]` of a parameter used only as `P.T`) becomes a row block when
// transposed and may only be loaded before. And a value computed from whole tensors that has the
// output's rows (its leading extent is the output's row symbol) may not meet the row blocks:
// broadcast to a block's rows or stored into one, it would put rows 0-15 into every block.
void FunctionContext::checkRowsIndependent(I::Operation* loop, const std::map<const I::Value*, std::string>& roots,
                                           const std::map<const I::Value*, std::string>& columnRoots,
                                           const std::string& rowSym, const std::string& out) {
  std::map<const I::Value*, std::string> row(roots), col(columnRoots);
  auto fail = [&](I::Operation* at, const std::string& name, const std::string& what) {
    {
      diags().report(diag::err_lower_rows_not_independent, at->loc) << name << what << out;
    }
    abort();
  };
  auto wholeRows = [&](I::Operation* at, I::Value* v, const std::string& what) {
    if (row.count(v) || !I::isValueShaped(v->type) || v->type->shape.empty() || v->type->shape[0].sym != rowSym) return;
    {
      diags().report(diag::err_lower_rows_not_split, at->loc) << rowSym << what << out;
    }
    abort();
  };
  auto axisOf = [](I::Operation* o, size_t rank) {
    int64_t a = o->intAttr(I::AttrId::Axis, -1);
    return a < 0 ? a + static_cast<int64_t>(rank) : a;
  };
  std::function<void(I::Block&)> visit = [&](I::Block& b) {
    for (auto& opPtr : b.ops) {
      I::Operation* o = opPtr.get();
      std::string src;
      int srcOperand = -1;
      for (unsigned i = 0; i < o->numOperands() && src.empty(); ++i)
        if (auto it = row.find(o->operand(i)); it != row.end()) src = it->second, srcOperand = static_cast<int>(i);
      if (!o->regions.empty()) {
        for (auto& r : o->regions) {
          if (!src.empty())
            for (auto& a : r->block().args) row[a.get()] = src;
          visit(r->block());
          if (I::Operation* t = r->block().terminator())
            for (I::Value* v : t->operands)
              if (src.empty())
                if (auto it = row.find(v); it != row.end()) src = it->second;
        }
        if (!src.empty())
          for (auto& r : o->results) row[r.get()] = src;
        continue;
      }
      // Column blocks: loaded, then transposed into a row block; nothing else.
      std::string colSrc;
      for (unsigned i = 0; i < o->numOperands() && colSrc.empty(); ++i)
        if (auto it = col.find(o->operand(i)); it != col.end()) colSrc = it->second;
      if (!colSrc.empty()) {
        if (o->id == I::OpId::TileTranspose) {
          row[o->result()] = colSrc;
        } else if (o->id == I::OpId::TileLoad) {
          col[o->result()] = colSrc;
        } else {
          fail(o, colSrc, "using it other than transposed");
        }
        continue;
      }
      if (o->id == I::OpId::TileBroadcast && !o->result()->type->shape.empty() &&
          o->result()->type->shape[0] == I::Dim::fixed(kRowBlock))
        wholeRows(o, o->operand(0), "broadcasting it to a block of rows");
      if (o->id == I::OpId::TileStore && src.empty() == false && srcOperand == 1)
        wholeRows(o, o->operand(0), "storing it into a block of rows");
      if (src.empty()) continue;
      I::Value* x = o->operand(static_cast<unsigned>(srcOperand));
      switch (o->id) {
        case I::OpId::TileDot:
        case I::OpId::TileMma:
          if (auto it = row.find(o->operand(1)); it != row.end())
            fail(o, it->second, "the right operand of a matrix product (it contracts over rows)");
          break;
        case I::OpId::TileTranspose: fail(o, src, "a transpose ('.T')"); break;
        case I::OpId::TileSoftmax:
          if (axisOf(o, x->type->shape.size()) == 0) fail(o, src, "a softmax along axis 0");
          break;
        case I::OpId::TileReduce:
          if (axisOf(o, x->type->shape.size()) == 0) fail(o, src, "a reduction along axis 0");
          break;
        case I::OpId::MemReduce: fail(o, src, "a reduction over all its elements"); break;
        case I::OpId::TileBroadcast:
          if (I::isValueShaped(x->type) && x->type->shape.size() < o->result()->type->shape.size())
            fail(o, src, "broadcasting it along the rows of a larger tile");
          break;
        case I::OpId::MemLoad:
        case I::OpId::MemStore: fail(o, src, "indexing single elements"); break;
        case I::OpId::MemSlice:
          if (srcOperand == 0 && !(o->result()->type->shape[0] == x->type->shape[0])) fail(o, src, "slicing its rows");
          if (srcOperand != 0) fail(o, src, "indexing with it");
          break;
        default: break;
      }
      for (auto& r : o->results) row[r.get()] = src;
    }
  };
  visit(loop->body());
}

}  // namespace tessera::irgen
