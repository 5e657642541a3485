// Async copies: completion is awaited lazily (DESIGN.md's pipelines overlap copies). A copy's
// token stays pending until something reads or overwrites its buffer, a barrier awaits every
// copy, and tokens do not leave the region that made them.
#include <algorithm>

#include "irgen/FunctionContext.h"

namespace tessera::irgen {

void FunctionContext::waitFor(I::Value* buf, bool barrier) {
  if (barrier && buf->type->kind == I::TypeKind::Smem) smemReadSinceBarrier_ = true;
  std::vector<I::Value*> toks;
  bool sameRegion = true;
  for (auto it = pending_.begin(); it != pending_.end();) {
    if (it->buf == buf) {
      toks.push_back(it->token);
      sameRegion = sameRegion && it->depth == depth_;
      // A copy from an enclosing region stays pending there (this region may not run).
      if (it->depth >= depth_)
        it = pending_.erase(it);
      else
        ++it;
    } else {
      ++it;
    }
  }
  if (toks.empty()) return;
  op(I::OpId::AsyncWait, toks, {});
  if (barrier && sameRegion && kernel_) {
    op(I::OpId::TileBarrier, {}, {});
    smemReadSinceBarrier_ = buf->type->kind == I::TypeKind::Smem;
  }
}

void FunctionContext::waitAll() {
  std::vector<I::Value*> toks;
  for (auto& p : pending_) toks.push_back(p.token);
  pending_.erase(std::remove_if(pending_.begin(), pending_.end(), [&](const Pending& p) { return p.depth >= depth_; }),
                 pending_.end());
  if (!toks.empty()) op(I::OpId::AsyncWait, toks, {});
}

// Tokens do not leave their region: copies still in flight at its end are awaited there.
void FunctionContext::flushRegion() {
  std::vector<I::Value*> toks;
  for (auto it = pending_.begin(); it != pending_.end();) {
    if (it->depth >= depth_) {
      toks.push_back(it->token);
      it = pending_.erase(it);
    } else {
      ++it;
    }
  }
  if (!toks.empty()) op(I::OpId::AsyncWait, toks, {});
}

void FunctionContext::asyncCopy(I::Value* dst, I::Value* src, SourceRange at) {
  staticShared(src->type, at, text(at));
  if (dst->type->elem != src->type->elem)
    unsupported(at, "an async copy from " + I::printType(src->type) + " into " + I::printType(dst->type),
                "the shared buffer and the source need the same element type");
  if (I::staticElementCount(dst->type) != I::staticElementCount(src->type))
    unsupported(at, "an async copy of " + I::printType(src->type) + " into " + I::printType(dst->type),
                "the shared buffer and the source need the same number of elements");
  waitFor(dst, false);
  ++asyncCopies_;
  I::Value* tok = op1(I::OpId::AsyncCopy, {dst, src}, ctx().token());
  pending_.push_back({tok, dst, depth_});
}

// The shared buffer a copy writes: an unsized `tile.alloc_shared()` takes its first copy's shape.
I::Value* FunctionContext::sharedFor(Lowered& dst, I::Value* srcView, SourceRange at) {
  if (dst.kind == Lowered::Unsized && dst.sym && sizedShared_.count(dst.sym)) dst = Lowered::val(sizedShared_[dst.sym]);
  if (dst.kind == Lowered::Unsized) {
    I::Type elem = srcView->type->elem;
    I::Value* buf =
        prologue(I::OpId::SmemAlloc, ctx().smem(elem, srcView->type->shape, I::Layout::Row, I::Swizzle::None))
            ->result();
    if (dst.sym) {
      buf->nameHint = dst.sym->name;
      sizedShared_[dst.sym] = buf;
    }
    Lowered sized = Lowered::val(buf);
    if (dst.sym)
      for (auto& [s, v] : env_)
        if (v.kind == Lowered::Unsized && v.sym == dst.sym) v = sized;
    dst = sized;
    return buf;
  }
  I::Value* d = value(dst, at);
  if (d->type->kind != I::TypeKind::Smem) unsupported(at, "copying into a value of type " + I::printType(d->type));
  return d;
}

}  // namespace tessera::irgen
