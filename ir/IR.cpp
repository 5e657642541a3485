#include "ir/IR.h"

#include <algorithm>
#include <cassert>
#include <charconv>
#include <cmath>
#include <cstring>
#include <map>

namespace tessera::ir {

// ---- scalar table ----

namespace {
struct ScalarInfo {
  const char* name;
  unsigned bits;
  ScalarClass cls;
};
// In ScalarKind's order. A bool value is one bit (i1); other dtypes have their storage width.
const ScalarInfo kScalars[] = {
#define DTYPE(ID, NAME, SHORT, BITS, KIND, EXP, MANT, ABI, IR, IRNAME, LLVM, CTYPE, DOC) \
  {IRNAME, ScalarClass::KIND == ScalarClass::Bool ? 1u : BITS, ScalarClass::KIND},
#include "basic/DTypes.def"
#define SCALAR(ID, NAME, BITS, CLASS) {NAME, BITS, ScalarClass::CLASS},
#include "ir/Types.def"
};

const OpInfo kOps[] = {
#define OP(ID, NAME, MINOPS, MAXOPS, MINRES, MAXRES, REGIONS, TRAITS, VERIFY, LOWER) \
  {NAME, MINOPS, MAXOPS, MINRES, MAXRES, REGIONS, static_cast<uint32_t>(TRAITS)},
#include "ir/Ops.def"
};
}  // namespace

const char* scalarName(ScalarKind k) { return kScalars[static_cast<size_t>(k)].name; }
unsigned scalarBits(ScalarKind k) { return kScalars[static_cast<size_t>(k)].bits; }
ScalarClass scalarClass(ScalarKind k) { return kScalars[static_cast<size_t>(k)].cls; }
bool lookupScalar(std::string_view name, ScalarKind& out) {
  for (size_t i = 0; i < std::size(kScalars); ++i)
    if (name == kScalars[i].name) {
      out = static_cast<ScalarKind>(i);
      return true;
    }
  return false;
}
// The name of enumerator e in `names`, which lists them in declaration order (ir/IR.h).
template <class E, size_t N>
const char* enumName(const char* const (&names)[N], E e, const char* fallback) {
  auto i = static_cast<size_t>(e);
  return i < N ? names[i] : fallback;
}

const char* memSpaceName(MemSpace s) {
  static const char* const kNames[] = {"global", "shared", "local"};
  return enumName(kNames, s, "global");
}
const char* accessName(Access a) {
  static const char* const kNames[] = {"read", "write", "readwrite"};
  return enumName(kNames, a, "readwrite");
}
const char* swizzleName(Swizzle s) {
  static const char* const kNames[] = {"none", "xor", "xor32", "xor64", "xor128"};
  return enumName(kNames, s, "none");
}
const char* roleName(FragRole r) {
  static const char* const kNames[] = {"a", "b", "acc"};
  return enumName(kNames, r, "acc");
}
const char* roundingName(Rounding r) {
  static const char* const kNames[] = {"default", "nearest_even", "toward_zero", "stochastic"};
  return enumName(kNames, r, "default");
}

const OpInfo& opInfo(OpId id) { return kOps[static_cast<size_t>(id)]; }
bool lookupOp(std::string_view name, OpId& out) {
  static const std::unordered_map<std::string_view, OpId> table = [] {
    std::unordered_map<std::string_view, OpId> m;
    for (size_t i = 0; i < std::size(kOps); ++i) m.emplace(kOps[i].name, static_cast<OpId>(i));
    return m;
  }();
  auto it = table.find(name);
  if (it == table.end()) return false;
  out = it->second;
  return true;
}

// ---- type queries ----

bool isScalar(Type t) { return t && (t->kind == TypeKind::Scalar || t->kind == TypeKind::Num); }
ScalarKind baseScalar(Type t) { return t->kind == TypeKind::Num ? t->elem->scalar : t->scalar; }
Type elementType(Type t) {
  switch (t->kind) {
    case TypeKind::Tensor:
    case TypeKind::Smem:
    case TypeKind::Tile:
    case TypeKind::Frag: return t->elem;
    default: return t;
  }
}
bool isFloatLike(Type t) {
  if (!t) return false;
  Type e = elementType(t);
  return isScalar(e) && scalarClass(baseScalar(e)) == ScalarClass::Float && (isScalar(t) || isValueShaped(t));
}
bool isIntLike(Type t) {
  if (!t) return false;
  Type e = elementType(t);
  return isScalar(e) && scalarClass(baseScalar(e)) != ScalarClass::Float && (isScalar(t) || isValueShaped(t));
}
bool isIndexOrInt(Type t) {
  if (!isScalar(t)) return false;
  ScalarClass c = scalarClass(baseScalar(t));
  return c == ScalarClass::Int || c == ScalarClass::UInt || c == ScalarClass::Index;
}
bool isView(Type t) { return t && (t->kind == TypeKind::Tensor || t->kind == TypeKind::Smem); }
bool isValueShaped(Type t) { return t && (t->kind == TypeKind::Tile || t->kind == TypeKind::Frag); }
int64_t elementBytes(Type t) {
  Type e = elementType(t);
  if (!isScalar(e)) return 1;
  unsigned bits = scalarBits(baseScalar(e));
  return std::max<int64_t>(1, (bits + 7) / 8);
}
int64_t staticElementCount(Type t) {
  int64_t n = 1;
  for (const Dim& d : t->shape) {
    if (!d.isStatic()) return -1;
    if (d.size != 0 && n > INT64_MAX / d.size) return -1;
    n *= d.size;
  }
  return n;
}

// ---- printing of types and attributes ----

const char* dimOpName(DimOp op) {
  static const char* const kNames[] = {"add", "sub", "mul", "div", "mod"};
  return enumName(kNames, op, "?");
}

const char* dimOpSpelling(DimOp op) {
  static const char* const kNames[] = {"+", "-", "*", "/", "%"};
  return enumName(kNames, op, "?");
}

namespace {
int dimPrecedence(const Dim& d) {
  if (!d.isDerived()) return 3;
  return d.expr->op == DimOp::Add || d.expr->op == DimOp::Sub ? 1 : 2;
}
std::string printDim(const Dim& d) {
  if (d.isStatic()) return std::to_string(d.size);
  if (d.isDerived())
    return std::string(dimOpName(d.expr->op)) + "(" + printDim(d.expr->lhs) + ", " + printDim(d.expr->rhs) + ")";
  return d.sym.empty() ? "?" : d.sym;
}
}  // namespace

// The canonical spelling is the language's (sema/Extent.cpp spells extents the same way), so
// messages and `mem.slice` sizes name `K/tp` as the user wrote it.
Dim Dim::derived(DimOp op, const Dim& lhs, const Dim& rhs) {
  Dim d;
  d.expr = std::make_shared<const DimExpr>(DimExpr{op, lhs, rhs});
  int p = dimPrecedence(d);
  auto spell = [](const Dim& x) { return x.isStatic() ? std::to_string(x.size) : x.sym.empty() ? "?" : x.sym; };
  std::string l = dimPrecedence(lhs) < p ? "(" + spell(lhs) + ")" : spell(lhs);
  std::string r = dimPrecedence(rhs) <= p ? "(" + spell(rhs) + ")" : spell(rhs);
  d.sym = l + dimOpSpelling(op) + r;
  return d;
}

std::string printShape(const std::vector<Dim>& shape) {
  std::string s = "[";
  for (size_t i = 0; i < shape.size(); ++i) {
    if (i) s += ", ";
    s += printDim(shape[i]);
  }
  return s + "]";
}

namespace {
std::string computeKey(const TypeStorage& t) {
  switch (t.kind) {
    case TypeKind::Scalar: return scalarName(t.scalar);
    case TypeKind::Num: {
      std::string s = "!num<" + t.elem->key;
      if (t.accum) s += ", accum = " + t.accum->key;
      if (t.round != Rounding::Default) s += std::string(", round = ") + roundingName(t.round);
      if (t.saturate) s += ", saturate";
      if (t.scale != 0) s += ", scale = " + printFloat(t.scale);
      return s + ">";
    }
    case TypeKind::Tensor:
      return "!tensor<" + t.elem->key + ", " + printShape(t.shape) + ", " + memSpaceName(t.space) + ", " +
             accessName(t.access) + ">";
    case TypeKind::Smem: {
      std::string s = "!smem<" + t.elem->key + ", " + printShape(t.shape);
      if (t.layout == Layout::Col) s += ", col";
      if (t.swizzle != Swizzle::None) s += std::string(", swizzle = ") + swizzleName(t.swizzle);
      return s + ">";
    }
    case TypeKind::Tile: return "!tile<" + t.elem->key + ", " + printShape(t.shape) + ">";
    case TypeKind::Frag: return "!frag<" + t.elem->key + ", " + printShape(t.shape) + ", " + roleName(t.role) + ">";
    case TypeKind::Token: return "!token";
    case TypeKind::CGroup: return "!cgroup<" + std::to_string(t.count) + ">";
  }
  return "?";
}
}  // namespace

std::string printType(Type t) { return t ? t->key : std::string("<null>"); }

std::string printFloat(double v) {
  if (std::isnan(v)) return "nan";
  if (std::isinf(v)) return v < 0 ? "-inf" : "inf";
  char buf[64];
  auto r = std::to_chars(buf, buf + sizeof buf, v);
  std::string s(buf, r.ptr);
  if (s.find_first_of(".e") == std::string::npos) s += ".0";
  return s;
}

namespace {
void quote(std::string& out, const std::string& s) {
  static const char* hex = "0123456789abcdef";
  out += '"';
  for (unsigned char c : s) {
    if (c == '"' || c == '\\') {
      out += '\\';
      out += static_cast<char>(c);
    } else if (c == '\n') {
      out += "\\n";
    } else if (c == '\t') {
      out += "\\t";
    } else if (c < 0x20 || c >= 0x7f) {
      out += "\\x";
      out += hex[c >> 4];
      out += hex[c & 15];
    } else {
      out += static_cast<char>(c);
    }
  }
  out += '"';
}
}  // namespace

std::string printAttribute(const Attribute& a) {
  switch (a.kind) {
    case AttrKind::Unit: return "unit";
    case AttrKind::Int: return std::to_string(a.i);
    case AttrKind::Float: return printFloat(a.f);
    case AttrKind::String: {
      std::string s;
      quote(s, a.s);
      return s;
    }
    case AttrKind::Symbol: return "@" + a.s;
    case AttrKind::Type: return printType(a.type);
    case AttrKind::Array: {
      std::string s = "[";
      for (size_t i = 0; i < a.array.size(); ++i) {
        if (i) s += ", ";
        s += printAttribute(a.array[i]);
      }
      return s + "]";
    }
    case AttrKind::Dict: {
      std::string s = "{";
      for (size_t i = 0; i < a.array.size() && i < a.keys.size(); ++i) {
        if (i) s += ", ";
        s += a.keys[i];
        if (a.array[i].kind != AttrKind::Unit) s += " = " + printAttribute(a.array[i]);
      }
      return s + "}";
    }
  }
  return "unit";
}

Attribute Attribute::ints(const std::vector<int64_t>& v) {
  std::vector<Attribute> xs;
  for (int64_t x : v) xs.push_back(integer(x));
  return arrayOf(std::move(xs));
}

bool Attribute::operator==(const Attribute& o) const {
  if (kind != o.kind) return false;
  switch (kind) {
    case AttrKind::Unit: return true;
    case AttrKind::Int: return i == o.i;
    case AttrKind::Float: return std::memcmp(&f, &o.f, sizeof f) == 0;
    case AttrKind::String:
    case AttrKind::Symbol: return s == o.s;
    case AttrKind::Type: return type == o.type;
    case AttrKind::Array: return array == o.array;
    case AttrKind::Dict: return keys == o.keys && array == o.array;
  }
  return false;
}

// ---- context ----

Type IRContext::intern(TypeStorage s) {
  s.key = computeKey(s);
  auto it = types_.find(s.key);
  if (it != types_.end()) return it->second.get();
  auto p = std::make_unique<TypeStorage>(std::move(s));
  Type t = p.get();
  types_.emplace(t->key, std::move(p));
  return t;
}
Type IRContext::scalar(ScalarKind k) {
  TypeStorage s;
  s.kind = TypeKind::Scalar;
  s.scalar = k;
  return intern(std::move(s));
}
Type IRContext::num(Type storage, Type accum, Rounding r, bool saturate, double scale) {
  TypeStorage s;
  s.kind = TypeKind::Num;
  s.elem = storage;
  s.accum = accum;
  s.round = r;
  s.saturate = saturate;
  s.scale = scale;
  return intern(std::move(s));
}
Type IRContext::tensor(Type elem, std::vector<Dim> shape, MemSpace space, Access access) {
  TypeStorage s;
  s.kind = TypeKind::Tensor;
  s.elem = elem;
  s.shape = std::move(shape);
  s.space = space;
  s.access = access;
  return intern(std::move(s));
}
Type IRContext::smem(Type elem, std::vector<Dim> shape, Layout layout, Swizzle swizzle) {
  TypeStorage s;
  s.kind = TypeKind::Smem;
  s.elem = elem;
  s.shape = std::move(shape);
  s.layout = layout;
  s.swizzle = swizzle;
  return intern(std::move(s));
}
Type IRContext::tile(Type elem, std::vector<Dim> shape) {
  TypeStorage s;
  s.kind = TypeKind::Tile;
  s.elem = elem;
  s.shape = std::move(shape);
  return intern(std::move(s));
}
Type IRContext::frag(Type elem, std::vector<Dim> shape, FragRole role) {
  TypeStorage s;
  s.kind = TypeKind::Frag;
  s.elem = elem;
  s.shape = std::move(shape);
  s.role = role;
  return intern(std::move(s));
}
Type IRContext::token() {
  TypeStorage s;
  s.kind = TypeKind::Token;
  return intern(std::move(s));
}
Type IRContext::cgroup(int64_t count) {
  TypeStorage s;
  s.kind = TypeKind::CGroup;
  s.count = count;
  return intern(std::move(s));
}
Type IRContext::withShape(Type t, std::vector<Dim> shape) {
  TypeStorage s = *t;
  s.shape = std::move(shape);
  return intern(std::move(s));
}
Type IRContext::withSwizzle(Type t, Swizzle sw) {
  TypeStorage s = *t;
  s.swizzle = sw;
  return intern(std::move(s));
}

// ---- values ----

void Value::replaceAllUsesWith(Value* v) {
  if (v == this) return;
  auto us = uses;  // setOperand edits `uses`
  for (const Use& u : us) u.user->setOperand(u.index, v);
}

Block* Value::definingBlock() const { return defOp ? defOp->parent : ownerBlock; }

// ---- operations ----

Operation::~Operation() = default;

Block& Operation::body(unsigned i) const { return regions[i]->block(); }

void Operation::addOperand(Value* v) {
  operands.push_back(v);
  v->uses.push_back({this, static_cast<unsigned>(operands.size() - 1)});
}

static void removeUse(Value* v, Operation* op, unsigned index) {
  auto& us = v->uses;
  for (size_t i = 0; i < us.size(); ++i)
    if (us[i].user == op && us[i].index == index) {
      us[i] = us.back();
      us.pop_back();
      return;
    }
}

void Operation::setOperand(unsigned i, Value* v) {
  if (operands[i] == v) return;
  removeUse(operands[i], this, i);
  operands[i] = v;
  v->uses.push_back({this, i});
}

void Operation::eraseOperand(unsigned i) {
  std::vector<Value*> rest(operands.begin() + i + 1, operands.end());
  for (unsigned j = i; j < operands.size(); ++j) removeUse(operands[j], this, j);
  operands.resize(i);
  for (Value* v : rest) addOperand(v);
}

void Operation::setOperands(const std::vector<Value*>& vs) {
  for (unsigned j = 0; j < operands.size(); ++j) removeUse(operands[j], this, j);
  operands.clear();
  for (Value* v : vs) addOperand(v);
}

void Operation::dropAllReferences() {
  for (unsigned j = 0; j < operands.size(); ++j) removeUse(operands[j], this, j);
  operands.clear();
  for (auto& r : regions)
    for (auto& op : r->block().ops) op->dropAllReferences();
}

Value* Operation::addResult(Type t) {
  auto v = std::make_unique<Value>();
  v->type = t;
  v->defOp = this;
  v->index = static_cast<unsigned>(results.size());
  results.push_back(std::move(v));
  return results.back().get();
}

namespace {
template <AttrKind... K>
bool kindIn(AttrKind k) {
  return ((k == K) || ...);
}
}  // namespace

const AttrInfo& attrInfo(AttrId id) {
#define KIND_Unit kindIn<AttrKind::Unit>, "a unit attribute (no value)"
#define KIND_Int kindIn<AttrKind::Int>, "an integer"
#define KIND_IntOrFloat kindIn<AttrKind::Int, AttrKind::Float>, "a number"
#define KIND_String kindIn<AttrKind::String>, "a string"
#define KIND_Symbol kindIn<AttrKind::Symbol>, "a symbol (@name)"
#define KIND_Array kindIn<AttrKind::Array>, "an array"
#define KIND_Dict kindIn<AttrKind::Dict>, "a dictionary"
  static const AttrInfo table[] = {
#define ATTR(ID, NAME, KIND, VALUES) {NAME, KIND_##KIND, VALUES},
#include "ir/Attrs.def"
  };
#undef KIND_Unit
#undef KIND_Int
#undef KIND_IntOrFloat
#undef KIND_String
#undef KIND_Symbol
#undef KIND_Array
#undef KIND_Dict
  return table[static_cast<size_t>(id)];
}

const AttrId* attrIdOf(std::string_view name) {
  static const std::map<std::string_view, AttrId> byName = [] {
    std::map<std::string_view, AttrId> m;
    for (unsigned i = 0; i < static_cast<unsigned>(AttrId::NumAttrs); ++i)
      m.emplace(attrInfo(static_cast<AttrId>(i)).name, static_cast<AttrId>(i));
    return m;
  }();
  auto it = byName.find(name);
  return it == byName.end() ? nullptr : &it->second;
}

const Attribute* Operation::attr(AttrId id) const {
  std::string_view n = attrName(id);
  for (const NamedAttr& a : attrs)
    if (a.name == n) return &a.value;
  return nullptr;
}
Attribute* Operation::attr(AttrId id) {
  std::string_view n = attrName(id);
  for (NamedAttr& a : attrs)
    if (a.name == n) return &a.value;
  return nullptr;
}
void Operation::setAttr(AttrId id, Attribute a) {
  if (Attribute* p = attr(id))
    *p = std::move(a);
  else
    attrs.emplace_back(id, std::move(a));
}
bool Operation::removeAttr(AttrId id) {
  std::string_view n = attrName(id);
  for (auto it = attrs.begin(); it != attrs.end(); ++it)
    if (it->name == n) {
      attrs.erase(it);
      return true;
    }
  return false;
}
int64_t Operation::intAttr(AttrId id, int64_t fallback) const {
  const Attribute* a = attr(id);
  return a && a->kind == AttrKind::Int ? a->i : fallback;
}
std::string Operation::strAttr(AttrId id) const {
  const Attribute* a = attr(id);
  return a && (a->kind == AttrKind::String || a->kind == AttrKind::Symbol) ? a->s : std::string();
}

Operation* Operation::parentOp() const { return parent ? parent->parentOp() : nullptr; }
Region* Operation::parentRegion() const { return parent ? parent->parent : nullptr; }

bool Operation::isInside(const Operation* other) const {
  for (const Operation* p = this; p; p = p->parentOp())
    if (p == other) return true;
  return false;
}

void Operation::walk(const std::function<void(Operation*)>& fn) {
  fn(this);
  for (auto& r : regions)
    for (auto& op : r->block().ops) op->walk(fn);
}

void Operation::walk(const std::function<void(const Operation*)>& fn) const {
  fn(this);
  for (auto& r : regions)
    for (auto& op : r->block().ops) static_cast<const Operation&>(*op).walk(fn);
}

std::unique_ptr<Operation> Operation::clone(IRMapping& map) const {
  auto op = std::make_unique<Operation>(id);
  op->loc = loc;
  op->attrs = attrs;
  for (Value* v : operands) {
    auto it = map.find(v);
    op->addOperand(it == map.end() ? v : it->second);
  }
  for (const auto& r : results) {
    Value* nv = op->addResult(r->type);
    nv->nameHint = r->nameHint;
    map[r.get()] = nv;
  }
  for (const auto& r : regions) {
    auto nr = std::make_unique<Region>();
    nr->parent = op.get();
    Block& nb = nr->block();
    for (const auto& a : r->block().args) map[a.get()] = nb.addArg(a->type, a->nameHint);
    for (const auto& inner : r->block().ops) nb.push_back(inner->clone(map));
    op->regions.push_back(std::move(nr));
  }
  return op;
}

std::vector<Type> Operation::funcResultTypes() const {
  std::vector<Type> ts;
  if (const Attribute* a = attr(AttrId::ResultTypes))
    for (const Attribute& e : a->array)
      if (e.kind == AttrKind::Type) ts.push_back(e.type);
  return ts;
}

// ---- blocks and regions ----

Value* Block::addArg(Type t, std::string name) {
  auto v = std::make_unique<Value>();
  v->type = t;
  v->ownerBlock = this;
  v->index = static_cast<unsigned>(args.size());
  v->nameHint = std::move(name);
  args.push_back(std::move(v));
  return args.back().get();
}

void Block::eraseArg(unsigned i) {
  args.erase(args.begin() + i);
  for (unsigned j = 0; j < args.size(); ++j) args[j]->index = j;
}

Operation* Block::terminator() const {
  if (ops.empty() || !ops.back()->has(T_Terminator)) return nullptr;
  return ops.back().get();
}

Operation* Block::parentOp() const { return parent ? parent->parent : nullptr; }

Block::iterator Block::find(const Operation* op) {
  if (op->parent == this) return op->self;
  for (auto it = ops.begin(); it != ops.end(); ++it)
    if (it->get() == op) return it;
  return ops.end();
}

Operation* Block::insert(iterator before, std::unique_ptr<Operation> op) {
  op->parent = this;
  auto it = ops.insert(before, std::move(op));
  (*it)->self = it;
  return it->get();
}

std::unique_ptr<Operation> Block::remove(Operation* op) {
  auto it = find(op);
  assert(it != ops.end());
  std::unique_ptr<Operation> p = std::move(*it);
  ops.erase(it);
  p->parent = nullptr;
  return p;
}

void Block::erase(Operation* op) {
  std::unique_ptr<Operation> p = remove(op);
  p->dropAllReferences();
}

Region::Region() : block_(std::make_unique<Block>()) { block_->parent = this; }

Module::Module() : ctx_(std::make_unique<IRContext>()), body_(std::make_unique<Block>()) {}

Operation* Module::lookupFunc(std::string_view name) {
  for (auto& op : body_->ops)
    if (op->id == OpId::TileFunc && op->funcName() == name) return op.get();
  return nullptr;
}

std::vector<Operation*> Module::funcs() {
  std::vector<Operation*> fs;
  for (auto& op : body_->ops)
    if (op->id == OpId::TileFunc) fs.push_back(op.get());
  return fs;
}

// ---- builder ----

void Builder::setInsertionPoint(Operation* before) {
  block_ = before->parent;
  point_ = block_->find(before);
}
void Builder::setInsertionPointAfter(Operation* after) {
  block_ = after->parent;
  point_ = std::next(block_->find(after));
}

Operation* Builder::insert(std::unique_ptr<Operation> op) {
  assert(block_ && "no insertion point");
  return block_->insert(point_, std::move(op));
}

Operation* Builder::create(OpId id, const std::vector<Value*>& operands, const std::vector<Type>& resultTypes,
                           std::vector<NamedAttr> attrs) {
  auto op = std::make_unique<Operation>(id);
  op->loc = loc_;
  for (Value* v : operands) op->addOperand(v);
  for (Type t : resultTypes) op->addResult(t);
  op->attrs = std::move(attrs);
  for (int i = 0; i < opInfo(id).numRegions; ++i) {
    auto r = std::make_unique<Region>();
    r->parent = op.get();
    op->regions.push_back(std::move(r));
  }
  return insert(std::move(op));
}

Value* Builder::constInt(int64_t v, Type t) {
  return create(OpId::ArithConstant, {}, {t}, {{AttrId::Value, Attribute::integer(v)}})->result();
}
Value* Builder::constFloat(double v, Type t) {
  return create(OpId::ArithConstant, {}, {t}, {{AttrId::Value, Attribute::floating(v)}})->result();
}
Value* Builder::binary(OpId id, Value* a, Value* b) { return create(id, {a, b}, {a->type})->result(); }
Value* Builder::cmpi(std::string_view pred, Value* a, Value* b) {
  return create(OpId::ArithCmpI, {a, b}, {ctx_.i1()}, {{AttrId::Pred, Attribute::string(std::string(pred))}})->result();
}

Operation* Builder::func(std::string_view name, const std::vector<Type>& args, const std::vector<Type>& results,
                         std::vector<NamedAttr> attrs) {
  std::vector<Attribute> rs;
  for (Type t : results) rs.push_back(Attribute::typeAttr(t));
  std::vector<NamedAttr> all = {{AttrId::SymName, Attribute::symbol(std::string(name))},
                                {AttrId::ResultTypes, Attribute::arrayOf(std::move(rs))}};
  for (auto& a : attrs) all.push_back(std::move(a));
  Operation* f = create(OpId::TileFunc, {}, {}, std::move(all));
  for (Type t : args) f->body().addArg(t);
  return f;
}

}  // namespace tessera::ir
