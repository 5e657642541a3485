// Functions: a kernel's signature and attributes from its annotations, a device function
// specialised by its argument types, and the exit of both.
#include "irgen/FunctionContext.h"

namespace tessera::irgen {

I::IRContext& FunctionContext::ctx() { return ml_.module->ctx(); }
DiagnosticEngine& FunctionContext::diags() { return ml_.diags; }

std::string FunctionContext::text(SourceRange r) const {
  std::string_view t = ml_.sema.sm.text(r);
  return std::string(t);
}

I::Operation* FunctionContext::prologue(I::OpId id, I::Type result, std::vector<I::NamedAttr> attrs,
                                        const std::vector<I::Value*>& operands) {
  I::Builder pb(ctx());
  if (prologueLast_)
    pb.setInsertionPointAfter(prologueLast_);
  else
    pb.setInsertionPointToStart(*top_);
  pb.setLoc(b_->loc());
  I::Operation* o = pb.create(id, operands, {result}, std::move(attrs));
  prologueLast_ = o;
  return o;
}

void FunctionContext::finishFunction(SourceRange at) {
  b_->setInsertionPointToEnd(*top_);
  if (retVal_) returned_ = {env_[retVal_].v};
  waitAll();
  op(I::OpId::FuncReturn, returned_, {});
}

I::Operation* FunctionContext::lowerKernel() {
  std::vector<I::Type> argTypes;
  std::vector<const Param*> params;
  for (const Param& p : def_->params) {
    const Symbol* sym = info_ && info_->scope ? info_->scope->lookupLocal(p.name) : nullptr;
    if (sym && sym->type && sym->type->kind == TypeKind::Tensor)
      for (const Extent& e : sym->type->dims)
        if (!dimOf(e).sym.empty()) usedSyms_.insert(dimOf(e).sym);
  }
  for (const Param& p : def_->params) {
    if (p.paramKind != Param::Normal) unsupported(p.range, "a '*' parameter of a kernel");
    if (p.name.empty()) continue;
    const Symbol* sym = info_ && info_->scope ? info_->scope->lookupLocal(p.name) : nullptr;
    argTypes.push_back(paramType(p, sym ? sym->type : nullptr));
    params.push_back(&p);
  }
  std::vector<I::NamedAttr> attrs = {{I::AttrId::Kernel, I::Attribute::unit()}};
  if (!info_->groupShape.empty()) {
    std::vector<int64_t> g(info_->groupShape.begin(), info_->groupShape.end());
    attrs.push_back({I::AttrId::Group, I::Attribute::ints(g)});
  }
  if (info_->sharedBudget >= 0) attrs.push_back({I::AttrId::Shared, I::Attribute::integer(info_->sharedBudget)});
  if (!info_->deterministic) attrs.push_back({I::AttrId::Nondeterministic, I::Attribute::unit()});
  if (!info_->flops.empty()) attrs.push_back({I::AttrId::Flops, I::Attribute::string(info_->flops)});
  if (!info_->autotuneSpace.empty()) {
    std::vector<std::string> keys;
    std::vector<I::Attribute> vals;
    for (auto& [k, v] : info_->autotuneSpace) {
      keys.push_back(k);
      vals.push_back(I::Attribute::ints(std::vector<int64_t>(v.begin(), v.end())));
    }
    attrs.push_back({I::AttrId::Autotune, I::Attribute::dict(keys, vals)});
  }
  I::Builder fb(ctx());
  fb.setInsertionPointToEnd(ml_.module->body());
  fb.setLoc(def_->nameRange.begin);
  func_ = fb.func(funcName_.empty() ? def_->name : funcName_, argTypes, {}, std::move(attrs));
  top_ = &func_->body();
  b_ = std::make_unique<I::Builder>(ctx());
  b_->setInsertionPointToEnd(*top_);
  b_->setLoc(def_->nameRange.begin);
  for (size_t i = 0; i < params.size(); ++i) {
    top_->arg(static_cast<unsigned>(i))->nameHint = params[i]->name;
    const Symbol* sym = info_->scope->lookupLocal(params[i]->name);
    if (sym) {
      env_[sym] = Lowered::val(top_->arg(static_cast<unsigned>(i)));
      paramIndex_[sym] = static_cast<unsigned>(i);
    }
  }
  ml_.insertBefore = func_;
  prepareReturns();
  // A whole-tensor tile program is lowered over whole tensors and marked; the row-partition pass
  // splits its output's rows across groups (or, for an output of static shape, makes it one
  // group's work), after checking that rows of different blocks never meet.
  if (wholeTensorProgram()) func_->setAttr(I::AttrId::WholeTensor, I::Attribute::unit());
  lowerBlock(def_->body);
  if (!returned_.empty()) unsupported(def_->range, "a kernel that returns a value");
  finishFunction(def_->range);
  // Kernels that use group features without declaring a group shape (whole-tensor tile programs,
  // tile.mma iteration) get the compiler's group size.
  if (needsGroup_ && !func_->hasAttr(I::AttrId::Group)) func_->setAttr(I::AttrId::Group, I::Attribute::ints({128}));
  // The default launch of a kernel with one outermost block loop over a parameter: one group
  // per block, ceil(T.shape[axis] / step) groups.
  // The default launch: one group per block, when every outermost block loop (one, or one per
  // branch of a uniform condition) walks the same parameter's axis in the same steps.
  bool sameBlocks = !distributed_.empty() && distributed_[0][0] >= 0;
  for (const auto& d : distributed_) sameBlocks &= d == distributed_[0];
  if (kernel_ && sameBlocks) func_->setAttr(I::AttrId::Blocks, I::Attribute::ints(distributed_[0]));
  return func_;
}

I::Operation* FunctionContext::lowerDevice(const std::string& name, const std::vector<I::Type>& argTypes,
                                           std::vector<I::Type>& resultTypes) {
  I::Builder fb(ctx());
  if (ml_.insertBefore)
    fb.setInsertionPoint(ml_.insertBefore);
  else
    fb.setInsertionPointToEnd(ml_.module->body());
  fb.setLoc(def_->nameRange.begin);
  func_ = fb.func(name, argTypes, {}, {{I::AttrId::Device, I::Attribute::unit()}});
  top_ = &func_->body();
  b_ = std::make_unique<I::Builder>(ctx());
  b_->setInsertionPointToEnd(*top_);
  b_->setLoc(def_->nameRange.begin);
  unsigned i = 0;
  for (const Param& p : def_->params) {
    if (p.paramKind != Param::Normal || p.name.empty()) continue;
    top_->arg(i)->nameHint = p.name;
    if (const Symbol* sym = info_ && info_->scope ? info_->scope->lookupLocal(p.name) : nullptr) {
      env_[sym] = Lowered::val(top_->arg(i));
      paramIndex_[sym] = i;
    }
    ++i;
  }
  prepareReturns();
  lowerBlock(def_->body);
  // A declared scalar result type converts the returned value.
  const Type* rt = info_ && info_->type ? info_->type->result : nullptr;
  if (rt && rt->kind == TypeKind::Scalar && returned_.size() == 1) {
    b_->setInsertionPointToEnd(*top_);
    returned_[0] = coerce(returned_[0], scalarType(rt->dtype, rt->policy), def_->range);
  }
  finishFunction(def_->range);
  for (I::Value* v : returned_) resultTypes.push_back(v->type);
  std::vector<I::Attribute> rts;
  for (I::Type t : resultTypes) rts.push_back(I::Attribute::typeAttr(t));
  func_->setAttr(I::AttrId::ResultTypes, I::Attribute::arrayOf(rts));
  return func_;
}

}  // namespace tessera::irgen
