#include "graph/Graph.h"

#include <algorithm>
#include <cassert>

namespace tessera::graph {

namespace {

const OpInfo kOps[] = {
#define GRAPH_EW(ID, NAME, ARITY, EXPR, ADJOINT, DOC) {OpId::ID, NAME, ARITY, ARITY, 1, T_Elementwise, EXPR, DOC},
#define GRAPH_OP(ID, NAME, MINOPS, MAXOPS, RESULTS, TRAITS, RULE, ADJOINT, KERNEL, ATTRS, DOC) \
  {OpId::ID, NAME, MINOPS, MAXOPS, RESULTS, TRAITS, nullptr, DOC},
#include "graph/GraphOps.def"
};
static_assert(sizeof(kOps) / sizeof(kOps[0]) == static_cast<size_t>(OpId::NumOps), "op table");

}  // namespace

const OpInfo& opInfo(OpId id) { return kOps[static_cast<size_t>(id)]; }

KernelKind kernelKind(OpId id) {
  switch (id) {
#define GRAPH_OP(ID, NAME, MINOPS, MAXOPS, RESULTS, TRAITS, RULE, ADJOINT, KERNEL, ATTRS, DOC) \
  case OpId::ID: return KernelKind::KERNEL;
#include "graph/GraphOps.def"
    case OpId::NumOps: break;
  }
  return KernelKind::None;
}

const std::vector<AttrSpec>& opAttrs(OpId id) {
#define REQ(ID, KIND) \
  AttrSpec { AttrId::ID, AttrKind::KIND, true }
#define OPT(ID, KIND) \
  AttrSpec { AttrId::ID, AttrKind::KIND, false }
#define GRAPH_UNPAREN(...) __VA_ARGS__
  switch (id) {
#define GRAPH_OP(ID, NAME, MINOPS, MAXOPS, RESULTS, TRAITS, RULE, ADJOINT, KERNEL, ATTRS, DOC) \
  case OpId::ID: {                                                                             \
    static const std::vector<AttrSpec> specs{GRAPH_UNPAREN ATTRS};                             \
    return specs;                                                                              \
  }
#include "graph/GraphOps.def"
    case OpId::NumOps: break;
  }
#undef REQ
#undef OPT
#undef GRAPH_UNPAREN
  static const std::vector<AttrSpec> none;
  return none;
}

bool lookupOp(const std::string& name, OpId& out) {
  for (const OpInfo& i : kOps)
    if (name == i.name) {
      out = i.id;
      return true;
    }
  return false;
}

const char* dtypeName(DType d) { return dtypeInfo(d).shortName; }

std::string Type::str() const {
  if (isScalar()) return dtypeName(dtype);
  return std::string("tensor<") + dtypeName(dtype) + ", " + shapeString(shape) + ">";
}

// ---- nodes and graphs

const char* accessName(Access a) {
  switch (a) {
    case Access::Read: return "read";
    case Access::Write: return "write";
    case Access::ReduceSum: return "reduce_sum";
    case Access::ReduceMax: return "reduce_max";
    case Access::ReduceMin: return "reduce_min";
  }
  return "read";
}

void Node::setOperand(unsigned i, Value* v) {
  Value* old = operands[i];
  if (old == v) return;
  auto it = std::find(old->users.begin(), old->users.end(), this);
  if (it != old->users.end()) old->users.erase(it);
  operands[i] = v;
  v->users.push_back(this);
}

Value* Graph::addParam(const std::string& n, Type t, Access a) {
  auto v = std::make_unique<Value>();
  v->type = std::move(t);
  v->name = n;
  v->index = static_cast<unsigned>(params.size());
  Value* raw = v.get();
  params.push_back(Param{std::move(v), a});
  return raw;
}

Node* Graph::create(OpId op, const std::vector<Value*>& operands, const std::vector<Type>& resultTypes, Attrs attrs,
                    SourceRange loc, Node* before) {
  auto n = std::make_unique<Node>();
  n->op = op;
  n->operands = operands;
  n->attrs = std::move(attrs);
  n->loc = loc;
  for (size_t i = 0; i < resultTypes.size(); ++i) {
    auto v = std::make_unique<Value>();
    v->type = resultTypes[i];
    v->def = n.get();
    v->index = static_cast<unsigned>(i);
    n->results.push_back(std::move(v));
  }
  Node* raw = n.get();
  for (Value* v : operands) v->users.push_back(raw);
  if (before)
    nodes.insert(position(before), std::move(n));
  else
    nodes.push_back(std::move(n));
  return raw;
}

std::list<std::unique_ptr<Node>>::iterator Graph::position(Node* n) {
  return std::find_if(nodes.begin(), nodes.end(), [&](const std::unique_ptr<Node>& p) { return p.get() == n; });
}

void Graph::erase(Node* n) {
#ifndef NDEBUG
  for (auto& r : n->results) assert(r->users.empty() && "erasing a node whose results are used");
#endif
  for (Value* v : n->operands) {
    auto it = std::find(v->users.begin(), v->users.end(), n);
    if (it != v->users.end()) v->users.erase(it);
  }
  nodes.erase(position(n));
}

void Graph::replaceAllUses(Value* from, Value* to) {
  if (from == to) return;
  std::vector<Node*> users = from->users;
  for (Node* u : users)
    for (unsigned i = 0; i < u->operands.size(); ++i)
      if (u->operands[i] == from) u->setOperand(i, to);
  for (Value*& r : results)
    if (r == from) r = to;
}

bool Graph::isResult(const Value* v) const { return std::find(results.begin(), results.end(), v) != results.end(); }

Graph* GraphModule::lookup(const std::string& n) const {
  for (const auto& g : graphs)
    if (g->name == n) return g.get();
  return nullptr;
}

}  // namespace tessera::graph
