// cse: a pure op (no regions, not an allocation, not reading memory through a view) that repeats an earlier one with
// the same operands, attributes and result types is replaced by it. Scoped by region: a value computed in an enclosing
// block is reused inside nested regions, never the other way round. Commutative ops match with their operands in either
// order.
#include <algorithm>
#include <unordered_map>

#include "ir/Pass.h"
#include "ir/passes/PassUtils.h"

namespace tessera::ir {

namespace {

std::string keyOf(const Operation* op) {
  std::string k = std::to_string(static_cast<int>(op->id));
  std::vector<const Value*> ops(op->operands.begin(), op->operands.end());
  if (op->has(T_Commutative)) std::sort(ops.begin(), ops.end());
  char buf[32];
  for (const Value* v : ops) {
    snprintf(buf, sizeof buf, "|%p", static_cast<const void*>(v));
    k += buf;
  }
  k += "|{";
  for (const NamedAttr& a : op->attrs) k += a.name + "=" + printAttribute(a.value) + ",";
  k += "}";
  for (auto& r : op->results) k += "|" + r->type->key;
  return k;
}

class CSE {
 public:
  bool run(Module& m) {
    for (Operation* f : m.funcs())
      if (!f->regions.empty()) block(f->body());
    return true;
  }

 private:
  std::vector<std::unordered_map<std::string, Operation*>> scopes_;

  Operation* lookup(const std::string& k) {
    for (auto it = scopes_.rbegin(); it != scopes_.rend(); ++it) {
      auto f = it->find(k);
      if (f != it->end()) return f->second;
    }
    return nullptr;
  }

  void block(Block& b) {
    scopes_.emplace_back();
    for (auto it = b.ops.begin(); it != b.ops.end();) {
      Operation* op = it->get();
      ++it;
      if (isMovablePure(op) && op->regions.empty() && !op->results.empty()) {
        std::string k = keyOf(op);
        if (Operation* prev = lookup(k)) {
          std::vector<Value*> vs;
          for (auto& r : prev->results) vs.push_back(r.get());
          replaceOp(op, vs);
          continue;
        }
        scopes_.back()[k] = op;
      }
      for (auto& r : op->regions) block(r->block());
    }
    scopes_.pop_back();
  }
};

}  // namespace

bool runCSE(Module& m, DiagnosticEngine&) { return CSE().run(m); }

}  // namespace tessera::ir
