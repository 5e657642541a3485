// plan-memory: decides where the tensors between kernels live, so that a call allocates few
// buffers and a stored value is not copied:
//  - graph.store %P, %v gets {in_place} when %v's kernel can write the caller's tensor P
//    directly (its only use is the store, it is not returned, and nothing from its kernel on
//    reads P's old value, except an elementwise kernel, which reads each element of P before it
//    writes it); kernel generation then skips the copy;
//  - every other tensor computed by a kernel and not returned gets {buffers = [slot, ...]} (one
//    per result, -1 for none): values of the same dtype and shape whose lifetimes do not overlap
//    share a slot, which is one allocation of the entry point. A value's lifetime runs from its
//    node to its last use (through the views made of it); a slot freed by a node's operands is
//    reused from the next node on, so no kernel writes a buffer it reads.
// Launches on one stream run in order, which is what makes reuse safe (docs/graph.md).
#include <map>
#include <set>

#include "graph/Passes.h"

namespace tessera::graph {

namespace {

// Nodes whose results are buffers their kernel writes (not views, not folded constants, not
// user kernels' arguments).
bool allocates(const Node& n) {
  switch (kernelKind(n.op)) {
    case KernelKind::Elementwise:
    case KernelKind::MatMul:
    case KernelKind::Rows:
    case KernelKind::Reduce:
    case KernelKind::FlashAttention:
    case KernelKind::FlashAttentionGrad:
    case KernelKind::Copy:
    case KernelKind::Fill:
    case KernelKind::Randn: return true;
    default: return false;
  }
}

void markInPlaceStores(Graph& g, const std::map<const Node*, size_t>& pos) {
  for (auto& up : g.nodes) {
    Node& st = *up;
    if (!st.is(OpId::Store)) continue;
    st.attrs.erase(AttrId::InPlace);
    Value *dst = st.operands[0], *v = st.operands[1];
    Node* p = v->def;
    if (!p || !allocates(*p) || v->users.size() != 1 || g.isResult(v) || v->type != dst->type) continue;
    bool elementwise = kernelKind(p->op) == KernelKind::Elementwise;
    bool safe = true;
    for (Node* u : dst->users)
      if (u != &st && pos.at(u) >= pos.at(p) && !(u == p && elementwise)) safe = false;
    if (safe) st.attrs.set(AttrId::InPlace, Attr::b(true));
  }
}

}  // namespace

bool runPlanMemory(Graph& g, DiagnosticEngine&) {
  std::map<const Node*, size_t> pos;
  for (auto& n : g.nodes) pos[n.get()] = pos.size();
  markInPlaceStores(g, pos);
  // Last uses, through views: a view's operand lives as long as the view.
  std::map<const Value*, size_t> last;
  for (auto it = g.nodes.rbegin(); it != g.nodes.rend(); ++it) {
    Node& n = **it;
    size_t at = pos[&n];
    for (auto& r : n.results) {
      size_t l = last.count(r.get()) ? last[r.get()] : at;
      last[r.get()] = l;
      if (n.has(T_ViewLike) && kernelKind(n.op) == KernelKind::View)
        for (Value* o : n.operands) last[o] = std::max(last.count(o) ? last[o] : 0, l);
    }
    for (Value* o : n.operands) last[o] = std::max(last.count(o) ? last[o] : 0, at);
  }
  // Linear scan: slots by type, freed after their value's last use.
  std::vector<Type> slotType;
  std::set<int64_t> free;
  std::map<size_t, std::vector<int64_t>> releaseAt;
  for (auto& up : g.nodes) {
    Node& n = *up;
    n.attrs.erase(AttrId::Buffers);
    size_t at = pos[&n];
    if (allocates(n)) {
      AttrList slots;
      bool any = false;
      for (auto& r : n.results) {
        const Value* v = r.get();
        bool stored = v->users.size() == 1 && v->users[0]->is(OpId::Store) && v->users[0]->attrs.has(AttrId::InPlace);
        if (!v->type.isTensor() || g.isResult(v) || stored) {
          slots.push_back(Attr::i(-1));
          continue;
        }
        int64_t s = -1;
        for (int64_t f : free)
          if (slotType[f] == v->type) {
            s = f;
            break;
          }
        if (s < 0) {
          s = static_cast<int64_t>(slotType.size());
          slotType.push_back(v->type);
        } else {
          free.erase(s);
        }
        slots.push_back(Attr::i(s));
        releaseAt[last[v]].push_back(s);
        any = true;
      }
      if (any) n.attrs.set(AttrId::Buffers, Attr::list(std::move(slots)));
    }
    for (int64_t s : releaseAt[at]) free.insert(s);
  }
  return true;
}

}  // namespace tessera::graph
