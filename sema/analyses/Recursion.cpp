// Recursion among the functions kernels call. Device functions are inlined or specialised per
// call and GPU code has no call stack to grow, so a call cycle reachable from a kernel cannot be
// compiled: it is an error at the call that closes the cycle, naming every function of it
// ("'f' calls 'g', which calls 'f'"), with a note at each other call of the cycle and one at the
// kernel's call that leads into it. Reported in sema so that `--check` and the editor show it.
#include <algorithm>
#include <map>
#include <set>

#include "sema/ASTWalk.h"
#include "sema/SemaDiagnostics.h"
#include "sema/analyses/Analyses.h"

namespace tessera {

namespace {

struct Call {
  const FunctionDefStmt* callee;
  SourceRange at;
};

class RecursionCheck {
 public:
  RecursionCheck(SemaContext& sc, DiagnosticEngine& diags) : sc_(sc), diags_(diags) {}

  void fromKernel(const FunctionDefStmt* kernel) {
    for (const Call& c : callsOf(kernel)) {
      entry_ = c;
      kernelName_ = kernel->name;
      visit(c.callee);
    }
  }

 private:
  // Calls of user functions (not kernels: calling one is an error of its own) in `f`'s body. A
  // call of a function defined later in the module has no type yet when the caller's body is
  // checked, so the callee comes from the name's symbol as well as from the type.
  const std::vector<Call>& callsOf(const FunctionDefStmt* f) {
    auto [it, inserted] = calls_.try_emplace(f);
    if (!inserted) return it->second;
    std::vector<Call> out;
    walkStmts(
        f->body, [](Stmt*) {},
        [&](Expr* e) {
          auto* c = dyn_cast<CallExpr>(e);
          const FunctionDefStmt* callee = calledFunction(c);
          if (!callee) return;
          auto info = sc_.functions.find(callee);
          if (info != sc_.functions.end() && info->second && info->second->isKernel()) return;
          out.push_back({callee, c->callee->range});
        });
    calls_[f] = std::move(out);
    return calls_[f];
  }

  // Depth-first over the call graph with an explicit stack (a chain of thousands of helpers must
  // not exhaust the compiler's own stack).
  void visit(const FunctionDefStmt* root) {
    if (state_[root] != 0) return;
    struct Frame {
      const FunctionDefStmt* fn;
      size_t next;
      SourceRange via;  // the call that entered fn
    };
    std::vector<Frame> stack{{root, 0, entry_.at}};
    state_[root] = 1;
    while (!stack.empty()) {
      Frame& top = stack.back();
      const std::vector<Call>& cs = callsOf(top.fn);
      if (top.next >= cs.size()) {
        state_[top.fn] = 2;
        stack.pop_back();
        continue;
      }
      const Call c = cs[top.next++];
      int& st = state_[c.callee];
      if (st == 0) {
        st = 1;
        stack.push_back({c.callee, 0, c.at});
      } else if (st == 1) {
        report(stack, c);
      }
    }
  }

  template <class Frames>
  void report(const Frames& stack, const Call& closing) {
    if (!reported_.insert(closing.at.begin.offset).second) return;
    size_t first = 0;
    while (stack[first].fn != closing.callee) ++first;
    std::string chain = "'" + closing.callee->name + "' calls ";
    if (first + 1 == stack.size()) {
      chain += "itself";
    } else {
      for (size_t i = first + 1; i < stack.size(); ++i)
        chain += (i > first + 1 ? ", which calls '" : "'") + stack[i].fn->name + "'";
      chain += ", which calls '" + closing.callee->name + "'";
    }
    auto d = diags_.report(diag::err_recursive_call, closing.at);
    d << chain;
    for (size_t i = first + 1; i < stack.size(); ++i)
      d.note(diag::note_recursive_call, stack[i].via, {stack[i - 1].fn->name, stack[i].fn->name});
    d.note(diag::note_recursion_from_kernel, entry_.at, {kernelName_, entry_.callee->name});
  }

  SemaContext& sc_;
  DiagnosticEngine& diags_;
  std::map<const FunctionDefStmt*, std::vector<Call>> calls_;
  std::map<const FunctionDefStmt*, int> state_;  // 0 unvisited, 1 on the stack, 2 done
  std::set<uint32_t> reported_;
  Call entry_{nullptr, {}};
  std::string kernelName_;
};

}  // namespace

void checkKernelRecursion(SemaContext& sc, DiagnosticEngine& diags) {
  // Kernels in source order, so that reports come in a stable order.
  std::vector<const FunctionDefStmt*> kernels;
  for (auto& [def, info] : sc.functions)
    if (info->isKernel()) kernels.push_back(def);
  std::sort(kernels.begin(), kernels.end(), [](const FunctionDefStmt* a, const FunctionDefStmt* b) {
    return a->range.begin.offset < b->range.begin.offset;
  });
  RecursionCheck check(sc, diags);
  for (const FunctionDefStmt* k : kernels)
    if (!diags.stopped()) check.fromKernel(k);
}

}  // namespace tessera
