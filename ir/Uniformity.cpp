#include "ir/Uniformity.h"

#include <unordered_map>

namespace tessera::ir {

namespace {

class Analysis {
 public:
  Analysis(Module& m, UniformityResult& r) : m_(m), r_(r) {}

  void run(Operation* func) {
    if (func->regions.empty()) return;
    // Iterate to a fixed point: loop-carried values may become divergent late.
    for (unsigned iter = 0; iter < 64; ++iter) {
      changed_ = false;
      block(func->body(), nullptr);
      if (!changed_) break;
    }
    recording_ = true;
    block(func->body(), nullptr);
  }

 private:
  Module& m_;
  UniformityResult& r_;
  bool changed_ = false, recording_ = false;
  std::unordered_map<Operation*, bool> calleeDivergent_;

  bool div(const Value* v) const { return r_.divergent.count(v) != 0; }
  void mark(const Value* v) {
    if (r_.divergent.insert(v).second) changed_ = true;
  }

  void block(Block& b, const Value* cause) {
    for (auto& op : b.ops) visit(op.get(), cause);
  }

  static Operation* terminatorOf(Operation* op, unsigned region) {
    if (op->regions.size() <= region) return nullptr;
    return op->body(region).terminator();
  }

  bool calleeIsDivergent(Operation* call) {
    Operation* callee = m_.lookupFunc(call->strAttr(AttrId::Callee));
    if (!callee) return true;
    auto it = calleeDivergent_.find(callee);
    if (it != calleeDivergent_.end()) return it->second;
    bool d = false;
    calleeDivergent_[callee] = true;  // recursion: assume divergent while computing
    callee->walk([&](Operation* o) { d = d || o->has(T_Divergent) || o->id == OpId::FuncCall; });
    return calleeDivergent_[callee] = d;
  }

  void visit(Operation* op, const Value* cause) {
    if (cause && recording_ && (op->has(T_GroupCollective) || op->has(T_Barrier))) r_.violations.push_back({op, cause});
    switch (op->id) {
      case OpId::ScfIf: {
        if (op->numOperands() < 1 || op->regions.size() != 2) break;
        Value* cond = op->operand(0);
        const Value* c = cause ? cause : (div(cond) ? cond : nullptr);
        block(op->body(0), c);
        block(op->body(1), c);
        for (unsigned i = 0; i < op->numResults(); ++i) {
          bool d = div(cond);
          for (unsigned r = 0; r < 2; ++r) {
            Operation* y = terminatorOf(op, r);
            if (y && i < y->numOperands() && div(y->operand(i))) d = true;
          }
          if (d) mark(op->result(i));
        }
        return;
      }
      case OpId::ScfFor:
      case OpId::TileRange: {
        if (op->numOperands() < 3 || op->regions.size() != 1) break;
        Block& body = op->body();
        const Value* bounds = nullptr;
        for (unsigned i = 0; i < 3; ++i)
          if (!bounds && div(op->operand(i))) bounds = op->operand(i);
        if (body.numArgs() >= 1 && (div(op->operand(0)) || div(op->operand(2)))) mark(body.arg(0));
        Operation* y = terminatorOf(op, 0);
        for (unsigned i = 3; i < op->numOperands(); ++i) {
          unsigned k = i - 3;
          if (k + 1 >= body.numArgs()) break;
          if (div(op->operand(i)) || (y && k < y->numOperands() && div(y->operand(k)))) mark(body.arg(k + 1));
        }
        block(body, cause ? cause : bounds);
        for (unsigned k = 0; k < op->numResults(); ++k)
          if (bounds || (k + 1 < body.numArgs() && div(body.arg(k + 1)))) mark(op->result(k));
        return;
      }
      case OpId::ScfWhile: {
        if (op->regions.size() != 2) break;
        Block& before = op->body(0);
        Block& after = op->body(1);
        Operation* cond = terminatorOf(op, 0);
        Operation* yield = terminatorOf(op, 1);
        const Value* c = nullptr;
        if (cond && cond->id == OpId::ScfCondition && cond->numOperands() >= 1 && div(cond->operand(0)))
          c = cond->operand(0);
        for (unsigned i = 0; i < before.numArgs(); ++i)
          if ((i < op->numOperands() && div(op->operand(i))) ||
              (yield && i < yield->numOperands() && div(yield->operand(i))))
            mark(before.arg(i));
        for (unsigned i = 0; i < after.numArgs(); ++i)
          if (c || (cond && i + 1 < cond->numOperands() && div(cond->operand(i + 1)))) mark(after.arg(i));
        block(before, cause ? cause : c);
        block(after, cause ? cause : c);
        for (unsigned i = 0; i < op->numResults(); ++i)
          if (c || (cond && i + 1 < cond->numOperands() && div(cond->operand(i + 1)))) mark(op->result(i));
        return;
      }
      case OpId::FuncCall: {
        bool d = calleeIsDivergent(op);
        for (Value* v : op->operands) d = d || div(v);
        if (d)
          for (auto& r : op->results) mark(r.get());
        return;
      }
      default: break;
    }
    bool d = op->has(T_Divergent);
    // Group reductions give every tile the same value, whatever each tile contributed.
    if (!op->has(T_UniformResult))
      for (Value* v : op->operands) d = d || div(v);
    if (d)
      for (auto& r : op->results) mark(r.get());
    for (auto& r : op->regions) block(r->block(), cause);
  }
};

}  // namespace

UniformityResult analyzeUniformity(Module& m, Operation* func) {
  UniformityResult r;
  Analysis(m, r).run(func);
  return r;
}

}  // namespace tessera::ir
