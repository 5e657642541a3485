// inline: replaces every func.call to a function of the module by a copy of its body (callees
// first, so nested calls disappear too). Device functions (attribute `device`, e.g. the stdlib)
// that have no calls left are removed; kernels always stay. A recursive call cannot be inlined
// (and a GPU device function cannot recurse): it is an error.
#include <unordered_map>
#include <unordered_set>

#include "ir/IRDiagnostics.h"
#include "ir/Pass.h"
#include "ir/Verifier.h"
#include "ir/passes/PassUtils.h"

namespace tessera::ir {

namespace {

class Inliner {
public:
  Inliner(Module& m, DiagnosticEngine& d) : m_(m), diags_(d) {}

  bool run() {
    for (Operation* f : m_.funcs()) process(f);
    if (!ok_) return false;
    // Drop device functions nobody calls any more.
    std::unordered_set<std::string> called;
    for (Operation* f : m_.funcs())
      f->walk([&](Operation* op) {
        if (op->id == OpId::FuncCall) called.insert(op->strAttr("callee"));
      });
    for (Operation* f : m_.funcs())
      if (f->hasAttr("device") && !f->hasAttr("kernel") && !called.count(f->funcName())) m_.body().erase(f);
    return ok_;
  }

private:
  Module& m_;
  DiagnosticEngine& diags_;
  bool ok_ = true;
  std::unordered_set<Operation*> done_, active_;

  // Inlines every call in `f`, after inlining its callees' calls.
  void process(Operation* f) {
    if (done_.count(f) || f->regions.empty()) return;
    active_.insert(f);
    std::vector<Operation*> calls;
    f->walk([&](Operation* op) {
      if (op->id == OpId::FuncCall) calls.push_back(op);
    });
    for (Operation* call : calls) {
      Operation* callee = m_.lookupFunc(call->strAttr("callee"));
      if (!callee || callee->regions.empty()) continue;
      if (active_.count(callee)) {
        ok_ = false;
        diags_.report(diag::err_ir_recursive_inline, locationOf(call)) << callee->funcName();
        continue;
      }
      process(callee);
      inlineCall(call, callee);
    }
    active_.erase(f);
    done_.insert(f);
  }

  void inlineCall(Operation* call, Operation* callee) {
    Block& body = callee->body();
    Operation* ret = body.terminator();
    if (!ret || ret->id != OpId::FuncReturn || body.numArgs() != call->numOperands() ||
        ret->numOperands() != call->numResults())
      return;  // invalid IR; the verifier reports it
    IRMapping map;
    for (unsigned i = 0; i < body.numArgs(); ++i) map[body.arg(i)] = call->operand(i);
    Block* dest = call->parent;
    auto pos = dest->find(call);
    for (auto& op : body.ops) {
      if (op.get() == ret) break;
      dest->insert(pos, op->clone(map));
    }
    std::vector<Value*> results;
    for (Value* v : ret->operands) {
      auto it = map.find(v);
      results.push_back(it == map.end() ? v : it->second);
    }
    replaceOp(call, results);
  }
};

}  // namespace

bool runInline(Module& m, DiagnosticEngine& diags) { return Inliner(m, diags).run(); }

}  // namespace tessera::ir
