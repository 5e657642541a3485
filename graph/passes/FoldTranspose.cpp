// fold-transpose: graph.transpose of the last two axes feeding graph.matmul becomes the
// product's transpose flag, so kernels read the operand transposed instead of copying it;
// transpose(transpose(x)) of the last two axes is x. Transposes left without users are
// removed by dce.
#include "graph/Passes.h"

namespace tessera::graph {

namespace {

bool swapsLastTwo(const Node* t) {
  if (!t || !t->is(OpId::Transpose)) return false;
  const Attr* p = t->attrs.get(AttrId::Perm);
  if (!p) return true;
  std::vector<int64_t> perm = p->asInts();
  size_t r = perm.size();
  for (size_t i = 0; i + 2 < r; ++i)
    if (perm[i] != static_cast<int64_t>(i)) return false;
  return r >= 2 && perm[r - 1] == static_cast<int64_t>(r - 2) && perm[r - 2] == static_cast<int64_t>(r - 1);
}

}  // namespace

bool runFoldTranspose(Graph& g, DiagnosticEngine&) {
  for (auto& np : g.nodes) {
    Node* n = np.get();
    if (n->is(OpId::MatMul)) {
      for (unsigned i = 0; i < 2; ++i) {
        Node* t = n->operands[i]->def;
        // A batched left operand is flattened into rows by its kernel; transposed, it could not be.
        if (!swapsLastTwo(t) || (i == 0 && t->operands[0]->type.rank() > 2)) continue;
        AttrId flag = i == 0 ? AttrId::TransposeA : AttrId::TransposeB;
        n->attrs.set(flag, Attr::b(!n->attrs.getBool(flag, false)));
        if (!n->attrs.getBool(flag, false)) n->attrs.erase(flag);
        n->setOperand(i, t->operands[0]);
      }
    }
    if (n->is(OpId::Transpose) && swapsLastTwo(n) && swapsLastTwo(n->operands[0]->def))
      g.replaceAllUses(n->result(), n->operands[0]->def->operands[0]);
  }
  return true;
}

}  // namespace tessera::graph
