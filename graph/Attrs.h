// Attributes of the graph IR: a value (integer, float, bool, string or symbol, list) and the
// small ordered dictionary a node or a function carries. Names are the rows of
// graph/GraphAttrs.def and code reads and writes them by AttrId; which attributes an op takes,
// of which kind and whether required is the ATTRS column of graph/GraphOps.def (opAttrs), which
// the verifier checks with checkAttrs.
#pragma once

#include <cstdint>
#include <string>
#include <utility>
#include <variant>
#include <vector>

#include "graph/Dim.h"

namespace tessera::graph {

enum class AttrId : uint8_t {
#define GRAPH_ATTR(ID, NAME, VALUES) ID,
#include "graph/GraphAttrs.def"
  NumAttrs
};
const char* attrName(AttrId id);
bool lookupAttr(const std::string& name, AttrId& out);

// The kind of value an op's attribute holds.
enum class AttrKind : uint8_t {
  Bool,  // unit attributes are Bool true
  Int,
  Number,  // an integer or a float
  Str,
  Symbol,  // @name
  Ints,    // a list of integers
  Dims,    // a list of extents: integers and extent spellings ("M*N")
  Strs,    // a list of strings
  DType,   // a string naming a dtype ("f32")
  Enum,    // a string among the attribute's values (GraphAttrs.def)
  Extent,  // an integer or an extent spelling
};

// One attribute an op (or a function) takes: graph/GraphOps.def's REQ(Id, Kind) and OPT(Id, Kind).
struct AttrSpec {
  AttrId id;
  AttrKind kind;
  bool required;
};

struct Attr;
using AttrList = std::vector<Attr>;
struct Attr {
  // Unit attributes are Bool true; a symbol reference (@saxpy) is a Str with ref set.
  std::variant<int64_t, double, bool, std::string, AttrList> value;
  bool ref = false;
  static Attr i(int64_t v) { return Attr{v}; }
  static Attr f(double v) { return Attr{v}; }
  static Attr b(bool v) { return Attr{v}; }
  static Attr s(std::string v) { return Attr{std::move(v)}; }
  static Attr symbolRef(std::string v) {
    Attr a{std::move(v)};
    a.ref = true;
    return a;
  }
  static Attr list(AttrList v) { return Attr{std::move(v)}; }
  static Attr ints(const std::vector<int64_t>& v);
  static Attr dims(const Shape& s);  // a list of ints and strings (symbolic extents)
  bool isInt() const { return std::holds_alternative<int64_t>(value); }
  bool isFloat() const { return std::holds_alternative<double>(value); }
  bool isBool() const { return std::holds_alternative<bool>(value); }
  bool isStr() const { return std::holds_alternative<std::string>(value); }
  bool isList() const { return std::holds_alternative<AttrList>(value); }
  int64_t asInt() const { return std::get<int64_t>(value); }
  double asFloat() const { return isInt() ? static_cast<double>(asInt()) : std::get<double>(value); }
  bool asBool() const { return std::get<bool>(value); }
  const std::string& asStr() const { return std::get<std::string>(value); }
  const AttrList& asList() const { return std::get<AttrList>(value); }
  std::vector<int64_t> asInts() const;
  bool asDims(Shape& out) const;            // a list of ints and dim spellings
  bool is(AttrKind kind, AttrId id) const;  // holds a value of `kind` (for Enum: one of id's values)
};

class Attrs {
 public:
  bool has(AttrId k) const { return get(k) != nullptr; }
  const Attr* get(AttrId k) const;
  void set(AttrId k, Attr v);
  void erase(AttrId k);
  int64_t getInt(AttrId k, int64_t dflt) const;
  double getFloat(AttrId k, double dflt) const;
  bool getBool(AttrId k, bool dflt = false) const;
  std::string getStr(AttrId k, const std::string& dflt = "") const;
  std::vector<int64_t> getInts(AttrId k) const;  // empty when absent
  // By name, for the parser: the verifier refuses a name that is not an attribute of the op.
  bool hasNamed(const std::string& k) const;
  void setNamed(const std::string& k, Attr v);
  const std::vector<std::pair<std::string, Attr>>& items() const { return items_; }
  std::vector<std::pair<std::string, Attr>>& mutableItems() { return items_; }
  bool empty() const { return items_.empty(); }

 private:
  std::vector<std::pair<std::string, Attr>> items_;  // in insertion order (printed so)
};

// Checks `attrs` against the attributes `specs` names (and `common`, allowed too): every one is
// named and of its kind, every required one is present. False with `error` set.
bool checkAttrs(const Attrs& attrs, const std::vector<AttrSpec>& specs, const std::vector<AttrSpec>& common,
                std::string& error);
// The attributes every op may carry and those of a function (graph/GraphAttrs.def).
const std::vector<AttrSpec>& anyOpAttrs();
const std::vector<AttrSpec>& funcAttrs();

}  // namespace tessera::graph
