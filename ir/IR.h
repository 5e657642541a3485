// Tile IR: our SSA IR between the typed AST and LLVM. Values are defined once (op results or
// block arguments); ops live in blocks; every region holds exactly one block (control flow is
// structured: scf.for, scf.if, scf.while, tile.range). Types and the op table are described in
// docs/tile-ir.md; the op table itself is ir/Ops.def.
#pragma once

#include <cstdint>
#include <functional>
#include <list>
#include <memory>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "basic/SourceManager.h"

namespace tessera::ir {

// ---------------------------------------------------------------------------------------------
// Types
// ---------------------------------------------------------------------------------------------

// The scalars: one per dtype of basic/DTypes.def (bool is I1), then those of ir/Types.def.
enum class ScalarKind : uint8_t {
#define DTYPE(ID, NAME, SHORT, BITS, KIND, EXP, MANT, ABI, IR, IRNAME, LLVM, CTYPE, DOC) IR,
#include "basic/DTypes.def"
#define SCALAR(ID, NAME, BITS, CLASS) ID,
#include "ir/Types.def"
};
enum class ScalarClass : uint8_t { Bool, Int, UInt, Float, Index };

enum class TypeKind : uint8_t { Scalar, Num, Tensor, Smem, Tile, Frag, Token, CGroup };
enum class MemSpace : uint8_t { Global, Shared, Local };
enum class Access : uint8_t { Read, Write, ReadWrite };
// `xor` (Auto) asks smem-plan to pick a concrete XOR swizzle; xor32/64/128 swizzle 16-byte
// chunks within rows of 32/64/128 bytes (the CUTLASS Swizzle<1|2|3,4,3> patterns).
enum class Swizzle : uint8_t { None, Auto, Xor32, Xor64, Xor128 };
enum class Layout : uint8_t { Row, Col };
enum class FragRole : uint8_t { A, B, Acc };
enum class Rounding : uint8_t { Default, NearestEven, TowardZero, Stochastic };

// One extent: static (size >= 0), symbolic (sym set, e.g. `n`), derived (an operation over two
// extents, `K/tp`: `expr` set and `sym` its canonical spelling), or unknown (`?`). Derived extents
// print as `div(K, tp)` in the textual IR; codegen turns them into the descriptor's expression
// programs (docs/abi.md 2), which the launch checks.
enum class DimOp : uint8_t { Add, Sub, Mul, Div, Mod };  // Div: exact
struct DimExpr;
struct Dim {
  int64_t size = -1;
  std::string sym;
  std::shared_ptr<const DimExpr> expr;
  bool isStatic() const { return size >= 0; }
  bool isDerived() const { return expr != nullptr; }
  static Dim fixed(int64_t v) {
    Dim d;
    d.size = v;
    return d;
  }
  static Dim symbol(std::string s) {
    Dim d;
    d.sym = std::move(s);
    return d;
  }
  static Dim derived(DimOp op, const Dim& lhs, const Dim& rhs);
  friend bool operator==(const Dim& a, const Dim& b) { return a.size == b.size && a.sym == b.sym; }
  friend bool operator!=(const Dim& a, const Dim& b) { return !(a == b); }
};
struct DimExpr {
  DimOp op;
  Dim lhs, rhs;
};
const char* dimOpName(DimOp op);      // "add", "sub", "mul", "div", "mod" (textual IR)
const char* dimOpSpelling(DimOp op);  // "+", "-", "*", "/", "%" (canonical spelling)

struct TypeStorage {
  TypeKind kind = TypeKind::Scalar;
  ScalarKind scalar = ScalarKind::I1;  // Scalar
  const TypeStorage* elem = nullptr;   // Num: storage scalar; Tensor/Smem/Tile/Frag: element
  const TypeStorage* accum = nullptr;  // Num: accumulation type (may be null)
  Rounding round = Rounding::Default;  // Num
  bool saturate = false;               // Num
  double scale = 0;                    // Num: stored values are value / scale (0: none)
  std::vector<Dim> shape;              // Tensor/Smem/Tile/Frag
  MemSpace space = MemSpace::Global;   // Tensor
  Access access = Access::ReadWrite;   // Tensor
  Layout layout = Layout::Row;         // Smem
  Swizzle swizzle = Swizzle::None;     // Smem
  FragRole role = FragRole::Acc;       // Frag
  int64_t count = 0;                   // CGroup: tiles per cooperative group
  std::string key;                     // the printed form; types are interned by it
};
using Type = const TypeStorage*;

const char* scalarName(ScalarKind k);
unsigned scalarBits(ScalarKind k);
ScalarClass scalarClass(ScalarKind k);
bool lookupScalar(std::string_view name, ScalarKind& out);
const char* memSpaceName(MemSpace s);
const char* accessName(Access a);
const char* swizzleName(Swizzle s);
const char* roleName(FragRole r);
const char* roundingName(Rounding r);

// Queries that look through !num<...> to the storage scalar.
bool isScalar(Type t);          // scalar or !num
ScalarKind baseScalar(Type t);  // requires isScalar
bool isFloatLike(Type t);       // float scalar, or tile/frag of float
bool isIntLike(Type t);         // int/uint/index/bool scalar, or tile/frag of them
bool isIndexOrInt(Type t);      // scalar int/uint/index
bool isView(Type t);            // !tensor or !smem
bool isValueShaped(Type t);     // !tile or !frag
Type elementType(Type t);       // element of shaped types; the type itself for scalars
// Bytes of one element (sub-byte types round up per element; fp4 packs two per byte in memory).
int64_t elementBytes(Type t);
// Static number of elements, or -1 when some extent is not static (or overflows).
int64_t staticElementCount(Type t);

class IRContext {
 public:
  Type scalar(ScalarKind k);
  Type index() { return scalar(ScalarKind::Index); }
  Type i1() { return scalar(ScalarKind::I1); }
  Type num(Type storage, Type accum, Rounding r, bool saturate, double scale = 0);
  Type tensor(Type elem, std::vector<Dim> shape, MemSpace space, Access access);
  Type smem(Type elem, std::vector<Dim> shape, Layout layout, Swizzle swizzle);
  Type tile(Type elem, std::vector<Dim> shape);
  Type frag(Type elem, std::vector<Dim> shape, FragRole role);
  Type token();
  Type cgroup(int64_t count);
  // Same kind and fields with another shape / element (for passes).
  Type withShape(Type t, std::vector<Dim> shape);
  Type withSwizzle(Type t, Swizzle s);

 private:
  Type intern(TypeStorage s);
  std::unordered_map<std::string, std::unique_ptr<TypeStorage>> types_;
};

std::string printType(Type t);
std::string printShape(const std::vector<Dim>& shape);

// ---------------------------------------------------------------------------------------------
// Attributes
// ---------------------------------------------------------------------------------------------

enum class AttrKind : uint8_t { Unit, Int, Float, String, Symbol, Type, Array, Dict };

struct Attribute {
  AttrKind kind = AttrKind::Unit;
  int64_t i = 0;
  double f = 0;
  std::string s;  // String and Symbol
  Type type = nullptr;
  std::vector<Attribute> array;   // Array elements, or Dict values
  std::vector<std::string> keys;  // Dict keys (parallel to `array`)

  static Attribute unit() { return {}; }
  static Attribute integer(int64_t v) {
    Attribute a;
    a.kind = AttrKind::Int;
    a.i = v;
    return a;
  }
  static Attribute floating(double v) {
    Attribute a;
    a.kind = AttrKind::Float;
    a.f = v;
    return a;
  }
  static Attribute string(std::string v) {
    Attribute a;
    a.kind = AttrKind::String;
    a.s = std::move(v);
    return a;
  }
  static Attribute symbol(std::string v) {
    Attribute a;
    a.kind = AttrKind::Symbol;
    a.s = std::move(v);
    return a;
  }
  static Attribute typeAttr(Type t) {
    Attribute a;
    a.kind = AttrKind::Type;
    a.type = t;
    return a;
  }
  static Attribute arrayOf(std::vector<Attribute> v) {
    Attribute a;
    a.kind = AttrKind::Array;
    a.array = std::move(v);
    return a;
  }
  static Attribute dict(std::vector<std::string> k, std::vector<Attribute> v) {
    Attribute a;
    a.kind = AttrKind::Dict;
    a.keys = std::move(k);
    a.array = std::move(v);
    return a;
  }
  static Attribute ints(const std::vector<int64_t>& v);
  bool operator==(const Attribute& o) const;
  bool operator!=(const Attribute& o) const { return !(*this == o); }
};
std::string printAttribute(const Attribute& a);
// Shortest text that parses back to exactly `v` (always has '.', 'e', "inf" or "nan").
std::string printFloat(double v);

// The attribute catalogue (ir/Attrs.def): ops are built and read by AttrId, never by spelling.
enum class AttrId : uint8_t {
#define ATTR(ID, NAME, KIND, VALUES) ID,
#include "ir/Attrs.def"
  NumAttrs
};
struct AttrInfo {
  const char* name;
  bool (*kindOk)(AttrKind);  // whether a value of this kind is one of the attribute
  const char* kindName;      // "an integer", "a symbol", ...
  const char* values;        // an enum attribute's strings, '|'-separated; "" when any
};
const AttrInfo& attrInfo(AttrId id);
inline const char* attrName(AttrId id) { return attrInfo(id).name; }
// The attribute spelled `name`, or null when the catalogue has none.
const AttrId* attrIdOf(std::string_view name);

struct NamedAttr {
  std::string name;
  Attribute value;
  NamedAttr(AttrId id, Attribute v) : name(attrName(id)), value(std::move(v)) {}
  // Any spelling, for the parser: the verifier judges it against the catalogue.
  static NamedAttr parsed(std::string name, Attribute v) {
    NamedAttr a(AttrId::SymName, std::move(v));
    a.name = std::move(name);
    return a;
  }
  bool operator==(const NamedAttr& o) const { return name == o.name && value == o.value; }
};

// ---------------------------------------------------------------------------------------------
// The op table
// ---------------------------------------------------------------------------------------------

enum class OpId : uint16_t {
#define OP(ID, NAME, MINOPS, MAXOPS, MINRES, MAXRES, REGIONS, TRAITS, VERIFY, LOWER) ID,
#include "ir/Ops.def"
  NumOps
};

enum Trait : uint32_t {
  T_Pure = 1u << 0,             // no side effects: CSE, DCE and LICM may move or drop it
  T_Terminator = 1u << 1,       // ends a block
  T_Barrier = 1u << 2,          // synchronises the tiles of a group (bar.sync)
  T_GroupCollective = 1u << 3,  // all tiles of the group must reach it together
  T_WarpCollective = 1u << 4,   // all lanes of the warp take part (shuffles)
  T_MemRead = 1u << 5,
  T_MemWrite = 1u << 6,
  T_Commutative = 1u << 7,
  T_Divergent = 1u << 8,  // its result differs between tiles of a group
  T_Constant = 1u << 9,
  T_Loop = 1u << 10,  // region 0 is a loop body; block arg 0 is the induction variable
  T_Func = 1u << 11,
  T_NoSpeculate = 1u << 12,    // pure but may trap (integer division): never hoisted
  T_Elementwise = 1u << 13,    // applies to scalars, tiles and fragments alike
  T_ViewLike = 1u << 14,       // result is a view of operand 0's memory
  T_Alloc = 1u << 15,          // allocates (distinct result each time; dead when unused)
  T_NeedsGroup = 1u << 16,     // only in kernels that declare a group shape
  T_UniformResult = 1u << 17,  // its result is the same on every tile of the group, whatever its operands
};

// Shared bytes a group of `tiles` tiles needs for tile.group_reduce: one 16-byte slot (value,
// index) per warp, twice (back-to-back reductions alternate halves: codegen/lower/LowerReduce.cpp).
// smem-plan places it (the `group_scratch` offset).
inline int64_t groupReduceScratchBytes(int64_t tiles) { return 32 * ((tiles + 31) / 32); }

struct OpInfo {
  const char* name;
  int minOperands, maxOperands;  // max -1: variadic
  int minResults, maxResults;
  int numRegions;
  uint32_t traits;
  bool has(uint32_t t) const { return (traits & t) != 0; }
};
const OpInfo& opInfo(OpId id);
bool lookupOp(std::string_view name, OpId& out);

// ---------------------------------------------------------------------------------------------
// Values, operations, blocks, regions, modules
// ---------------------------------------------------------------------------------------------

class Operation;
class Block;
class Region;

struct Use {
  Operation* user;
  unsigned index;
};

class Value {
 public:
  Type type = nullptr;
  Operation* defOp = nullptr;   // null for block arguments
  Block* ownerBlock = nullptr;  // for block arguments
  unsigned index = 0;           // result number or argument number
  std::string nameHint;         // printed name when set (%x), else a number
  std::vector<Use> uses;

  bool isBlockArg() const { return defOp == nullptr; }
  bool hasUses() const { return !uses.empty(); }
  void replaceAllUsesWith(Value* v);
  // The block that holds the definition (the op's block, or the argument's block).
  Block* definingBlock() const;
};

using IRMapping = std::unordered_map<const Value*, Value*>;

class Operation {
 public:
  OpId id;
  SourceLoc loc;
  std::vector<Value*> operands;
  std::vector<std::unique_ptr<Value>> results;
  std::vector<NamedAttr> attrs;
  std::vector<std::unique_ptr<Region>> regions;
  Block* parent = nullptr;
  // Its place in the parent block's list while `parent` is set (Block::insert sets both), so
  // that finding and erasing an op never searches its block.
  std::list<std::unique_ptr<Operation>>::iterator self;

  explicit Operation(OpId id) : id(id) {}
  ~Operation();
  Operation(const Operation&) = delete;
  Operation& operator=(const Operation&) = delete;

  const OpInfo& info() const { return opInfo(id); }
  const char* name() const { return info().name; }
  bool has(uint32_t trait) const { return info().has(trait); }

  Value* result(unsigned i = 0) const { return results[i].get(); }
  Value* operand(unsigned i) const { return operands[i]; }
  unsigned numOperands() const { return static_cast<unsigned>(operands.size()); }
  unsigned numResults() const { return static_cast<unsigned>(results.size()); }
  Region& region(unsigned i) const { return *regions[i]; }
  Block& body(unsigned i = 0) const;

  void addOperand(Value* v);
  void setOperand(unsigned i, Value* v);
  void eraseOperand(unsigned i);
  void setOperands(const std::vector<Value*>& vs);
  // Drops the uses this op and its nested ops hold (before erasing it).
  void dropAllReferences();
  Value* addResult(Type t);

  const Attribute* attr(AttrId id) const;
  Attribute* attr(AttrId id);
  bool hasAttr(AttrId id) const { return attr(id) != nullptr; }
  void setAttr(AttrId id, Attribute a);
  bool removeAttr(AttrId id);
  int64_t intAttr(AttrId id, int64_t fallback) const;
  std::string strAttr(AttrId id) const;  // string or symbol; "" when absent

  Operation* parentOp() const;
  Region* parentRegion() const;
  // True when `this` is `other` or nested inside it.
  bool isInside(const Operation* other) const;

  // Pre-order walk over this op and every nested op. Callbacks must not erase ops.
  void walk(const std::function<void(Operation*)>& fn);
  // The same for readers (code generation reads the IR without changing it).
  void walk(const std::function<void(const Operation*)>& fn) const;
  // Deep copy; operands are looked up in (and results added to) `map`.
  std::unique_ptr<Operation> clone(IRMapping& map) const;

  // Function accessors (tile.func).
  std::string funcName() const { return strAttr(AttrId::SymName); }
  std::vector<Type> funcResultTypes() const;
};

class Block {
 public:
  std::vector<std::unique_ptr<Value>> args;
  std::list<std::unique_ptr<Operation>> ops;
  Region* parent = nullptr;

  using iterator = std::list<std::unique_ptr<Operation>>::iterator;

  Value* addArg(Type t, std::string name = {});
  void eraseArg(unsigned i);
  Value* arg(unsigned i) const { return args[i].get(); }
  unsigned numArgs() const { return static_cast<unsigned>(args.size()); }
  Operation* terminator() const;  // the last op when it is a terminator, else null
  Operation* parentOp() const;
  bool empty() const { return ops.empty(); }

  iterator find(const Operation* op);
  Operation* insert(iterator before, std::unique_ptr<Operation> op);
  Operation* push_back(std::unique_ptr<Operation> op) { return insert(ops.end(), std::move(op)); }
  // Unlinks without dropping references.
  std::unique_ptr<Operation> remove(Operation* op);
  // Drops references and destroys. Results must have no uses left.
  void erase(Operation* op);
};

class Region {
 public:
  Region();
  Block& block() { return *block_; }
  const Block& block() const { return *block_; }
  Operation* parent = nullptr;

 private:
  std::unique_ptr<Block> block_;
};

// A module: a list of tile.func ops, plus the context that owns its types.
class Module {
 public:
  Module();
  IRContext& ctx() { return *ctx_; }
  Block& body() { return *body_; }
  const Block& body() const { return *body_; }
  Operation* lookupFunc(std::string_view name);
  std::vector<Operation*> funcs();

 private:
  std::unique_ptr<IRContext> ctx_;
  std::unique_ptr<Block> body_;
};

// ---------------------------------------------------------------------------------------------
// Builder: creates ops at an insertion point. Lowering and passes create IR only through it.
// ---------------------------------------------------------------------------------------------

class Builder {
 public:
  explicit Builder(IRContext& ctx) : ctx_(ctx) {}
  IRContext& ctx() { return ctx_; }

  void setInsertionPointToEnd(Block& b) {
    block_ = &b;
    point_ = b.ops.end();
  }
  void setInsertionPointToStart(Block& b) {
    block_ = &b;
    point_ = b.ops.begin();
  }
  void setInsertionPoint(Operation* before);
  void setInsertionPointAfter(Operation* after);
  Block* block() const { return block_; }
  void setLoc(SourceLoc loc) { loc_ = loc; }
  SourceLoc loc() const { return loc_; }

  // Creates an op with the table's number of (empty, argument-less) regions.
  Operation* create(OpId id, const std::vector<Value*>& operands, const std::vector<Type>& resultTypes,
                    std::vector<NamedAttr> attrs = {});
  Operation* insert(std::unique_ptr<Operation> op);

  Value* constInt(int64_t v, Type t);
  Value* constIndex(int64_t v) { return constInt(v, ctx_.index()); }
  Value* constFloat(double v, Type t);
  Value* binary(OpId id, Value* a, Value* b);  // result type is a's type
  Value* cmpi(std::string_view pred, Value* a, Value* b);
  // tile.func @name(args) -> results, with its body block's arguments created.
  Operation* func(std::string_view name, const std::vector<Type>& args, const std::vector<Type>& results,
                  std::vector<NamedAttr> attrs = {});

 private:
  IRContext& ctx_;
  Block* block_ = nullptr;
  Block::iterator point_;
  SourceLoc loc_;
};

}  // namespace tessera::ir
