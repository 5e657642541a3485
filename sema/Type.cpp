#include "sema/Type.h"

#include <cstdlib>
#include <sstream>

#include "frontend/AST.h"

namespace tessera {

const char* privilegeName(Privilege p) {
  switch (p) {
    case Privilege::None: return "";
    case Privilege::Read: return "read";
    case Privilege::Write: return "write";
    case Privilege::ReduceSum: return "reduce_sum";
    case Privilege::ReduceMax: return "reduce_max";
    case Privilege::ReduceMin: return "reduce_min";
  }
  return "";
}

namespace {
std::string joinDims(const std::vector<Extent>& dims, const char* sep) {
  std::string s;
  for (size_t i = 0; i < dims.size(); ++i) {
    if (i) s += sep;
    s += dims[i].str();
  }
  return s;
}
std::string elemStr(const Type& t) {
  if (!t.dtypeKnown) return "?";
  return std::string(dtypeInfo(t.dtype).shortName) + t.policy.str();
}
}  // namespace

std::string Type::str() const {
  switch (kind) {
    case TypeKind::Error: return "<error>";
    case TypeKind::Dynamic: return "?";
    case TypeKind::None: return "None";
    case TypeKind::Str: return "str";
    case TypeKind::Scalar:
      if (weak) return isFloat(dtype) ? "float" : dtype == DType::BOOL ? "bool" : "int";
      return elemStr(*this);
    case TypeKind::Tensor: {
      std::string s;
      if (privilege != Privilege::None) {
        s = std::string("Region[") + privilegeName(privilege) + "]";
        if (dtypeKnown || rankKnown) s += " " + elemStr(*this) + "[" + (rankKnown ? joinDims(dims, ", ") : "...") + "]";
        return s;
      }
      if (mut) s = "mut ";
      return s + elemStr(*this) + "[" + (rankKnown ? joinDims(dims, ", ") : "...") + "]";
    }
    case TypeKind::Shared: {
      std::string s = "shared<" + elemStr(*this) + "," + (dims.empty() ? std::string("?") : joinDims(dims, "x"));
      if (swizzle != Swizzle::None) s += std::string(",swizzle=") + swizzles()[static_cast<size_t>(swizzle)].name;
      return s + ">";
    }
    case TypeKind::Tile:
      return "tile<" + elemStr(*this) + "," + (rankKnown ? joinDims(dims, "x") : std::string("...")) + ">";
    case TypeKind::Fragment:
      return "fragment<" + elemStr(*this) + (dims.empty() ? "" : "," + joinDims(dims, "x")) + ">";
    case TypeKind::Tuple: {
      std::string s = "(";
      for (size_t i = 0; i < elems.size(); ++i) s += (i ? ", " : "") + elems[i]->str();
      if (elems.size() == 1) s += ",";
      return s + ")";
    }
    case TypeKind::List: return "list<" + (elems.empty() ? std::string("?") : elems[0]->str()) + ">";
    case TypeKind::Dict: return "dict";
    case TypeKind::Range: return "range<" + (elems.empty() ? std::string("?") : elems[0]->str()) + ">";
    case TypeKind::Slice: return dims.empty() ? "slice" : "slice<" + joinDims(dims, "x") + ">";
    case TypeKind::Function: {
      std::string s = functionKind == FunctionKind::Kernel ? "kernel "
                      : functionKind == FunctionKind::Jit  ? "jit "
                                                           : "def ";
      s += name + "(";
      for (size_t i = 0; i < elems.size(); ++i) s += (i ? ", " : "") + elems[i]->str();
      s += ")";
      if (result) s += " -> " + result->str();
      return s;
    }
    case TypeKind::Builtin:
      return std::string("builtin ") + (builtin ? builtin->name : "?") + (typeArg ? "[" + typeArg->str() + "]" : "");
    case TypeKind::Namespace: return "namespace " + (name.empty() ? std::string("tessera") : name);
    case TypeKind::Module: return "module " + name;
    case TypeKind::DTypeValue: return "dtype " + elemStr(*this);
    case TypeKind::Opaque: return name;
  }
  return "?";
}

std::string Type::key() const {
  std::ostringstream os;
  os << static_cast<int>(kind) << '|' << str() << '|' << static_cast<const void*>(function) << '|'
     << static_cast<const void*>(module) << '|' << static_cast<const void*>(builtin) << '|' << weak;
  for (const Type* e : elems) os << '|' << static_cast<const void*>(e);
  os << '|' << static_cast<const void*>(result) << '|' << static_cast<const void*>(typeArg);
  return os.str();
}

TypeContext::TypeContext() {
  error_ = unique(std::make_unique<Type>(TypeKind::Error));
  dynamic_ = unique(std::make_unique<Type>(TypeKind::Dynamic));
  none_ = unique(std::make_unique<Type>(TypeKind::None));
  str_ = unique(std::make_unique<Type>(TypeKind::Str));
  dict_ = unique(std::make_unique<Type>(TypeKind::Dict));
  slice_ = unique(std::make_unique<Type>(TypeKind::Slice));
}

const Type* TypeContext::unique(std::unique_ptr<Type> t) {
  std::string k = t->key();
  auto it = byKey_.find(k);
  if (it != byKey_.end()) return it->second;
  storage_.push_back(std::move(t));
  byKey_.emplace(std::move(k), storage_.back().get());
  return storage_.back().get();
}

const Type* TypeContext::slice(const Extent& length) {
  auto t = std::make_unique<Type>(TypeKind::Slice);
  t->dims = {length};
  return unique(std::move(t));
}

const Type* TypeContext::scalar(DType d, NumericPolicy p, bool weak) {
  auto t = std::make_unique<Type>(TypeKind::Scalar);
  t->dtype = d;
  t->policy = std::move(p);
  t->weak = weak;
  return unique(std::move(t));
}

const Type* TypeContext::tensor(DType d, bool known, NumericPolicy p, std::vector<Extent> dims, bool rankKnown,
                                bool mut, Privilege priv) {
  auto t = std::make_unique<Type>(TypeKind::Tensor);
  t->dtype = d;
  t->dtypeKnown = known;
  t->policy = std::move(p);
  t->dims = std::move(dims);
  t->rankKnown = rankKnown;
  t->mut = mut;
  t->privilege = priv;
  return unique(std::move(t));
}

const Type* TypeContext::shared(DType d, std::vector<Extent> dims, Swizzle s) {
  auto t = std::make_unique<Type>(TypeKind::Shared);
  t->dtype = d;
  t->dims = std::move(dims);
  t->swizzle = s;
  return unique(std::move(t));
}

const Type* TypeContext::tile(DType d, bool known, std::vector<Extent> dims, bool rankKnown, NumericPolicy p) {
  auto t = std::make_unique<Type>(TypeKind::Tile);
  t->dtype = d;
  t->dtypeKnown = known;
  t->dims = std::move(dims);
  t->rankKnown = rankKnown;
  t->policy = std::move(p);
  return unique(std::move(t));
}

const Type* TypeContext::fragment(DType accum, std::vector<Extent> dims) {
  auto t = std::make_unique<Type>(TypeKind::Fragment);
  t->dtype = accum;
  t->dims = std::move(dims);
  return unique(std::move(t));
}

const Type* TypeContext::tuple(std::vector<const Type*> elems) {
  auto t = std::make_unique<Type>(TypeKind::Tuple);
  t->elems = std::move(elems);
  return unique(std::move(t));
}
const Type* TypeContext::list(const Type* elem) {
  auto t = std::make_unique<Type>(TypeKind::List);
  t->elems = {elem};
  return unique(std::move(t));
}
const Type* TypeContext::range(const Type* elem) {
  auto t = std::make_unique<Type>(TypeKind::Range);
  t->elems = {elem};
  return unique(std::move(t));
}
const Type* TypeContext::function(const FunctionDefStmt* fn, const std::string& name, FunctionKind k,
                                  std::vector<const Type*> params, const Type* result) {
  auto t = std::make_unique<Type>(TypeKind::Function);
  t->function = fn;
  t->name = name;
  t->functionKind = k;
  t->elems = std::move(params);
  t->result = result;
  return unique(std::move(t));
}
const Type* TypeContext::builtin(const BuiltinInfo* b, const Type* typeArg) {
  auto t = std::make_unique<Type>(TypeKind::Builtin);
  t->builtin = b;
  t->typeArg = typeArg;
  return unique(std::move(t));
}
const Type* TypeContext::ns(const std::string& prefix) {
  auto t = std::make_unique<Type>(TypeKind::Namespace);
  t->name = prefix;
  return unique(std::move(t));
}
const Type* TypeContext::module(const ModuleInfo* m, const std::string& name) {
  auto t = std::make_unique<Type>(TypeKind::Module);
  t->module = m;
  t->name = name;
  return unique(std::move(t));
}
const Type* TypeContext::dtypeValue(DType d, NumericPolicy p) {
  auto t = std::make_unique<Type>(TypeKind::DTypeValue);
  t->dtype = d;
  t->policy = std::move(p);
  return unique(std::move(t));
}
const Type* TypeContext::opaque(const std::string& name) {
  auto t = std::make_unique<Type>(TypeKind::Opaque);
  t->name = name;
  return unique(std::move(t));
}

const Type* TypeContext::withElement(const Type* t, DType d, NumericPolicy p) {
  switch (t->kind) {
    case TypeKind::Scalar: return scalar(d, p);
    case TypeKind::Tensor: return tensor(d, true, p, t->dims, t->rankKnown, t->mut, t->privilege);
    case TypeKind::Tile: return tile(d, true, t->dims, t->rankKnown, p);
    case TypeKind::Shared: return tile(d, true, t->dims, true, p);
    case TypeKind::Fragment: return tile(d, true, t->dims, !t->dims.empty(), p);
    default: return t;
  }
}

const Type* TypeContext::elementOf(const Type* t) {
  if (!t->hasElements()) return t->isError() ? error_ : dynamic_;
  if (!t->dtypeKnown) return dynamic_;
  return scalar(t->dtype, t->policy);
}

}  // namespace tessera
