#include "graph/Graph.h"

#include <algorithm>
#include <cassert>

namespace tessera::graph {

namespace {

const OpInfo kOps[] = {
#define GRAPH_EW(ID, NAME, ARITY, EXPR, ADJOINT, DOC) {OpId::ID, NAME, ARITY, ARITY, 1, T_Elementwise, EXPR, DOC},
#define GRAPH_OP(ID, NAME, MINOPS, MAXOPS, RESULTS, TRAITS, RULE, ADJOINT, KERNEL, DOC) \
  {OpId::ID, NAME, MINOPS, MAXOPS, RESULTS, TRAITS, nullptr, DOC},
#include "graph/GraphOps.def"
};
static_assert(sizeof(kOps) / sizeof(kOps[0]) == static_cast<size_t>(OpId::NumOps), "op table");

}  // namespace

const OpInfo& opInfo(OpId id) { return kOps[static_cast<size_t>(id)]; }

KernelKind kernelKind(OpId id) {
  switch (id) {
#define GRAPH_OP(ID, NAME, MINOPS, MAXOPS, RESULTS, TRAITS, RULE, ADJOINT, KERNEL, DOC) \
  case OpId::ID: return KernelKind::KERNEL;
#include "graph/GraphOps.def"
    case OpId::NumOps: break;
  }
  return KernelKind::None;
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

// ---- attributes

Attr Attr::ints(const std::vector<int64_t>& v) {
  AttrList l;
  for (int64_t x : v) l.push_back(Attr::i(x));
  return list(std::move(l));
}

Attr Attr::dims(const Shape& s) {
  AttrList l;
  for (const Dim& d : s) l.push_back(d.isConst() ? Attr::i(d.value()) : Attr::s(d.str()));
  return list(std::move(l));
}

std::vector<int64_t> Attr::asInts() const {
  std::vector<int64_t> out;
  if (!isList()) return out;
  for (const Attr& a : asList())
    if (a.isInt()) out.push_back(a.asInt());
  return out;
}

Dim parseDimSpelling(const std::string& text, bool& ok);  // Parser.cpp

bool Attr::asDims(Shape& out) const {
  out.clear();
  if (!isList()) return false;
  for (const Attr& a : asList()) {
    if (a.isInt()) {
      out.push_back(Dim::constant(a.asInt()));
    } else if (a.isStr()) {
      bool ok = false;
      Dim d = parseDimSpelling(a.asStr(), ok);
      if (!ok) return false;
      out.push_back(d);
    } else {
      return false;
    }
  }
  return true;
}

bool Attrs::has(const std::string& k) const { return get(k) != nullptr; }

const Attr* Attrs::get(const std::string& k) const {
  for (const auto& [name, v] : items_)
    if (name == k) return &v;
  return nullptr;
}

void Attrs::set(const std::string& k, Attr v) {
  for (auto& [name, old] : items_)
    if (name == k) {
      old = std::move(v);
      return;
    }
  items_.emplace_back(k, std::move(v));
}

void Attrs::erase(const std::string& k) {
  items_.erase(std::remove_if(items_.begin(), items_.end(), [&](const auto& p) { return p.first == k; }), items_.end());
}

int64_t Attrs::getInt(const std::string& k, int64_t dflt) const {
  const Attr* a = get(k);
  return a && a->isInt() ? a->asInt() : a && a->isBool() ? a->asBool() : dflt;
}
double Attrs::getFloat(const std::string& k, double dflt) const {
  const Attr* a = get(k);
  return a && (a->isFloat() || a->isInt()) ? a->asFloat() : dflt;
}
bool Attrs::getBool(const std::string& k, bool dflt) const {
  const Attr* a = get(k);
  return a && a->isBool() ? a->asBool() : a && a->isInt() ? a->asInt() != 0 : dflt;
}
std::string Attrs::getStr(const std::string& k, const std::string& dflt) const {
  const Attr* a = get(k);
  return a && a->isStr() ? a->asStr() : dflt;
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
