#include "graph/Attrs.h"

#include <algorithm>
#include <cstring>

#include "graph/Printer.h"
#include "sema/DType.h"

namespace tessera::graph {

namespace {

struct AttrInfo {
  const char* name;
  const char* values;  // Enum: '|'-separated
};
const AttrInfo kAttrs[] = {
#define GRAPH_ATTR(ID, NAME, VALUES) {NAME, VALUES},
#include "graph/GraphAttrs.def"
};
static_assert(sizeof(kAttrs) / sizeof(kAttrs[0]) == static_cast<size_t>(AttrId::NumAttrs), "attribute table");

bool isEnumValue(AttrId id, const std::string& v) {
  std::string values = kAttrs[static_cast<size_t>(id)].values;
  size_t start = 0;
  while (start <= values.size()) {
    size_t end = values.find('|', start);
    if (end == std::string::npos) end = values.size();
    if (!v.empty() && values.compare(start, end - start, v) == 0 && end - start == v.size()) return true;
    start = end + 1;
  }
  return false;
}

bool listOf(const Attr& a, bool (*elem)(const Attr&)) {
  if (!a.isList()) return false;
  return std::all_of(a.asList().begin(), a.asList().end(), elem);
}

std::string describe(AttrKind kind, AttrId id) {
  switch (kind) {
    case AttrKind::Bool: return "a bool";
    case AttrKind::Int: return "an integer";
    case AttrKind::Number: return "a number";
    case AttrKind::Str: return "a string";
    case AttrKind::Symbol: return "a symbol such as @k";
    case AttrKind::Ints: return "a list of integers";
    case AttrKind::Dims: return "a list of extents";
    case AttrKind::Strs: return "a list of strings";
    case AttrKind::DType: return "a dtype name";
    case AttrKind::Extent: return "an integer or an extent";
    case AttrKind::Enum: {
      std::string out = "one of \"";
      for (const char* v = kAttrs[static_cast<size_t>(id)].values; *v; ++v)
        out += *v == '|' ? "\", \"" : std::string(1, *v);
      return out + "\"";
    }
  }
  return "?";
}

}  // namespace

const char* attrName(AttrId id) { return kAttrs[static_cast<size_t>(id)].name; }

bool lookupAttr(const std::string& name, AttrId& out) {
  for (size_t i = 0; i < static_cast<size_t>(AttrId::NumAttrs); ++i)
    if (name == kAttrs[i].name) {
      out = static_cast<AttrId>(i);
      return true;
    }
  return false;
}

// ---- values

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

bool Attr::is(AttrKind kind, AttrId id) const {
  auto str = [](const Attr& a) { return a.isStr() && !a.ref; };
  switch (kind) {
    case AttrKind::Bool: return isBool();
    case AttrKind::Int: return isInt();
    case AttrKind::Number: return isInt() || isFloat();
    case AttrKind::Str: return str(*this);
    case AttrKind::Symbol: return isStr() && ref;
    case AttrKind::Ints: return listOf(*this, [](const Attr& a) { return a.isInt(); });
    case AttrKind::Dims: {
      Shape ignored;
      return asDims(ignored);
    }
    case AttrKind::Strs: return listOf(*this, [](const Attr& a) { return a.isStr() && !a.ref; });
    case AttrKind::DType: return str(*this) && lookupDType(asStr()).has_value();
    case AttrKind::Enum: return str(*this) && isEnumValue(id, asStr());
    case AttrKind::Extent: {
      if (isInt()) return true;
      bool ok = false;
      if (str(*this)) parseDimSpelling(asStr(), ok);
      return ok;
    }
  }
  return false;
}

// ---- dictionaries

const Attr* Attrs::get(AttrId k) const {
  const char* name = attrName(k);
  for (const auto& [n, v] : items_)
    if (n == name) return &v;
  return nullptr;
}

void Attrs::set(AttrId k, Attr v) { setNamed(attrName(k), std::move(v)); }

void Attrs::erase(AttrId k) {
  const char* name = attrName(k);
  items_.erase(std::remove_if(items_.begin(), items_.end(), [&](const auto& p) { return p.first == name; }),
               items_.end());
}

bool Attrs::hasNamed(const std::string& k) const {
  for (const auto& [n, v] : items_)
    if (n == k) return true;
  return false;
}

void Attrs::setNamed(const std::string& k, Attr v) {
  for (auto& [n, old] : items_)
    if (n == k) {
      old = std::move(v);
      return;
    }
  items_.emplace_back(k, std::move(v));
}

int64_t Attrs::getInt(AttrId k, int64_t dflt) const {
  const Attr* a = get(k);
  return a && a->isInt() ? a->asInt() : a && a->isBool() ? a->asBool() : dflt;
}
double Attrs::getFloat(AttrId k, double dflt) const {
  const Attr* a = get(k);
  return a && (a->isFloat() || a->isInt()) ? a->asFloat() : dflt;
}
bool Attrs::getBool(AttrId k, bool dflt) const {
  const Attr* a = get(k);
  return a && a->isBool() ? a->asBool() : a && a->isInt() ? a->asInt() != 0 : dflt;
}
std::string Attrs::getStr(AttrId k, const std::string& dflt) const {
  const Attr* a = get(k);
  return a && a->isStr() ? a->asStr() : dflt;
}
std::vector<int64_t> Attrs::getInts(AttrId k) const {
  const Attr* a = get(k);
  return a ? a->asInts() : std::vector<int64_t>{};
}

// ---- the tables' checks

#define REQ(ID, KIND) \
  AttrSpec { AttrId::ID, AttrKind::KIND, true }
#define OPT(ID, KIND) \
  AttrSpec { AttrId::ID, AttrKind::KIND, false }
#define GRAPH_UNPAREN(...) __VA_ARGS__

const std::vector<AttrSpec>& anyOpAttrs() {
#define GRAPH_ANY_OP_ATTRS(ATTRS) static const std::vector<AttrSpec> specs{GRAPH_UNPAREN ATTRS};
#include "graph/GraphAttrs.def"
  return specs;
}

const std::vector<AttrSpec>& funcAttrs() {
#define GRAPH_FUNC_ATTRS(ATTRS) static const std::vector<AttrSpec> specs{GRAPH_UNPAREN ATTRS};
#include "graph/GraphAttrs.def"
  return specs;
}

#undef REQ
#undef OPT
#undef GRAPH_UNPAREN

bool checkAttrs(const Attrs& attrs, const std::vector<AttrSpec>& specs, const std::vector<AttrSpec>& common,
                std::string& error) {
  auto find = [&](const std::string& name) -> const AttrSpec* {
    for (const std::vector<AttrSpec>* list : {&specs, &common})
      for (const AttrSpec& s : *list)
        if (name == attrName(s.id)) return &s;
    return nullptr;
  };
  for (const auto& [name, value] : attrs.items()) {
    const AttrSpec* s = find(name);
    if (!s) {
      error = "has no attribute '" + name + "'";
      return false;
    }
    if (!value.is(s->kind, s->id)) {
      error = "attribute '" + name + "' must be " + describe(s->kind, s->id);
      return false;
    }
  }
  for (const AttrSpec& s : specs)
    if (s.required && !attrs.has(s.id)) {
      error = std::string("needs the attribute '") + attrName(s.id) + "' (" + describe(s.kind, s.id) + ")";
      return false;
    }
  return true;
}

}  // namespace tessera::graph
