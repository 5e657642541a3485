// inline: replaces every func.call to a function of the module by a copy of its body, expanding
// the calls in each copy in turn, so nested calls disappear too. Only functions that are not
// `device` (kernels, host-side test functions) are expanded: a device function's body is copied
// where it is called, never inlined into itself first, so a chain of N helpers costs O(N), and
// the walk uses a worklist, not the native stack. Device functions that no other function calls
// are then removed; kernels always stay. A recursive call cannot be inlined (and a GPU device
// function cannot recurse): it is an error, found on the call graph before anything is inlined.
// So is a function that inlining would make larger than a budget (err_ir_inline_budget): helpers
// that each call the previous one twice grow exponentially.
#include <deque>
#include <unordered_map>
#include <unordered_set>

#include "ir/IRDiagnostics.h"
#include "ir/Pass.h"
#include "ir/Verifier.h"
#include "ir/passes/PassUtils.h"

namespace tessera::ir {

namespace {

// The most operations a function may have once its calls are inlined (a kernel of 8,000
// statements has a few tens of thousands).
constexpr size_t kInlineBudget = 250000;

class Inliner {
 public:
  Inliner(Module& m, DiagnosticEngine& d) : m_(m), diags_(d) {}

  bool run() {
    for (Operation* f : m_.funcs()) byName_.emplace(f->funcName(), f);
    if (!checkRecursion()) return false;
    for (Operation* f : m_.funcs())
      if (!f->hasAttr(AttrId::Device) || f->hasAttr(AttrId::Kernel))
        if (!expand(f)) return false;
    // Drop device functions that no expanded function calls any more.
    std::unordered_set<std::string> called;
    for (Operation* f : m_.funcs())
      if (!f->hasAttr(AttrId::Device) || f->hasAttr(AttrId::Kernel))
        f->walk([&](Operation* op) {
          if (op->id == OpId::FuncCall) called.insert(op->strAttr(AttrId::Callee));
        });
    for (Operation* f : m_.funcs())
      if (f->hasAttr(AttrId::Device) && !f->hasAttr(AttrId::Kernel) && !called.count(f->funcName())) m_.body().erase(f);
    return true;
  }

 private:
  Module& m_;
  DiagnosticEngine& diags_;

  std::unordered_map<std::string, Operation*> byName_;  // Module::lookupFunc is a linear search

  Operation* calleeOf(Operation* call) {
    auto it = byName_.find(call->strAttr(AttrId::Callee));
    return it != byName_.end() && !it->second->regions.empty() ? it->second : nullptr;
  }

  static std::vector<Operation*> callsIn(Operation* op) {
    std::vector<Operation*> calls;
    op->walk([&](Operation* o) {
      if (o->id == OpId::FuncCall) calls.push_back(o);
    });
    return calls;
  }

  // Every call that closes a cycle of the call graph is an error (depth-first, iteratively).
  bool checkRecursion() {
    enum Color { White, Grey, Black };
    std::unordered_map<Operation*, Color> color;
    bool ok = true;
    struct Frame {
      Operation* f;
      std::vector<Operation*> calls;
      size_t next;
    };
    for (Operation* root : m_.funcs()) {
      if (color[root] != White) continue;
      std::vector<Frame> stack;
      color[root] = Grey;
      stack.push_back({root, callsIn(root), 0});
      while (!stack.empty()) {
        Frame& fr = stack.back();
        if (fr.next == fr.calls.size()) {
          color[fr.f] = Black;
          stack.pop_back();
          continue;
        }
        Operation* call = fr.calls[fr.next++];
        Operation* callee = calleeOf(call);
        if (!callee) continue;
        if (color[callee] == Grey) {
          ok = false;
          diags_.report(diag::err_ir_recursive_inline, locationOf(call)) << callee->funcName();
        } else if (color[callee] == White) {
          color[callee] = Grey;
          stack.push_back({callee, callsIn(callee), 0});  // `fr` is not used after this
        }
      }
    }
    return ok;
  }

  // A call and its place in its block (list iterators stay valid while other ops come and go,
  // so inlining never searches a block: a kernel that grows to the budget stays linear).
  struct Site {
    Operation* call;
    Block::iterator at;
  };

  // The calls of `b` and of the blocks nested in its ops.
  static void collect(Block& b, std::deque<Site>& work) {
    for (auto it = b.ops.begin(); it != b.ops.end(); ++it) collect(b, it, work);
  }
  static void collect(Block& b, Block::iterator it, std::deque<Site>& work) {
    Operation* op = it->get();
    if (op->id == OpId::FuncCall) work.push_back({op, it});
    for (auto& r : op->regions) collect(r->block(), work);
  }

  // Inlines every call in `f`, and the calls each inlined body brings, until none is left.
  bool expand(Operation* f) {
    size_t size = 0;
    f->walk([&](Operation*) { ++size; });
    std::unordered_map<Operation*, size_t> calleeSize;
    std::deque<Site> work;
    for (auto& r : f->regions) collect(r->block(), work);
    while (!work.empty()) {
      Site site = work.front();
      work.pop_front();
      Operation* callee = calleeOf(site.call);
      if (!callee) continue;
      auto [it, fresh] = calleeSize.emplace(callee, 0);
      if (fresh) callee->walk([&](Operation*) { ++it->second; });
      size += it->second;
      if (size > kInlineBudget) {
        diags_.report(diag::err_ir_inline_budget, locationOf(site.call))
            << callee->funcName() << f->funcName() << std::to_string(kInlineBudget);
        return false;
      }
      inlineCall(site, callee, work);
    }
    return true;
  }

  // Copies the callee's body before the call, queues the calls among the copies and replaces
  // the call by the returned values (nothing happens if the IR is invalid: the verifier says so).
  void inlineCall(const Site& site, Operation* callee, std::deque<Site>& work) {
    Operation* call = site.call;
    Block& body = callee->body();
    Operation* ret = body.terminator();
    if (!ret || ret->id != OpId::FuncReturn || body.numArgs() != call->numOperands() ||
        ret->numOperands() != call->numResults())
      return;
    IRMapping map;
    for (unsigned i = 0; i < body.numArgs(); ++i) map[body.arg(i)] = call->operand(i);
    Block* dest = call->parent;
    for (auto& op : body.ops) {
      if (op.get() == ret) break;
      dest->insert(site.at, op->clone(map));
      collect(*dest, std::prev(site.at), work);
    }
    for (size_t i = 0; i < ret->operands.size(); ++i) {
      auto it = map.find(ret->operands[i]);
      call->result(i)->replaceAllUsesWith(it == map.end() ? ret->operands[i] : it->second);
    }
    std::unique_ptr<Operation> dead = std::move(*site.at);
    dest->ops.erase(site.at);
    dead->parent = nullptr;
    dead->dropAllReferences();
  }
};

}  // namespace

bool runInline(Module& m, DiagnosticEngine& diags) { return Inliner(m, diags).run(); }

}  // namespace tessera::ir
