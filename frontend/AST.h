// The abstract syntax tree. Every node carries its exact source range. Nodes live in an
// ASTContext arena and refer to each other by plain pointers; a tree is never mutated after
// parsing except for the annotation fields that sema fills in (type, symbol).
#pragma once

#include <cstddef>
#include <cstdint>
#include <deque>
#include <memory>
#include <new>
#include <string>
#include <vector>

#include "basic/SourceManager.h"

namespace tessera {

class Type;    // sema's type of an expression
class Symbol;  // sema's meaning of a name

enum class NodeKind : uint8_t {
#define EXPR(NAME, ...) NAME##Expr,
#define STMT(NAME, ...) NAME##Stmt,
#include "frontend/ASTNodes.def"
};
const char* nodeKindName(NodeKind k);  // "NameExpr", "ForStmt", ...

enum class UnaryOp : uint8_t { Neg, Pos, Invert, Not };
enum class BinaryOp : uint8_t {
  Add,
  Sub,
  Mul,
  Div,
  FloorDiv,
  Mod,
  Pow,
  MatMul,
  BitAnd,
  BitOr,
  BitXor,
  Shl,
  Shr,
  And,
  Or,
  Eq,
  Ne,
  Lt,
  Le,
  Gt,
  Ge,
  In,
  NotIn,
  Is,
  IsNot,
};
const char* unaryOpSpelling(UnaryOp op);    // "-", "not", ...
const char* binaryOpSpelling(BinaryOp op);  // "+", "@", "not in", ...
bool isComparison(BinaryOp op);

struct Node {
  NodeKind kind;
  SourceRange range;

 protected:
  Node(NodeKind k, SourceRange r) : kind(k), range(r) {}
};

// ---------------------------------------------------------------- expressions

struct Expr : Node {
  const Type* type = nullptr;  // set by sema
  static bool classof(const Node* n) { return n->kind <= NodeKind::ErrorExpr; }

 protected:
  using Node::Node;
};

#define TESSERA_NODE(NAME, BASE)                                           \
  static constexpr NodeKind Kind = NodeKind::NAME;                         \
  static bool classof(const Node* n) { return n->kind == NodeKind::NAME; } \
  explicit NAME(SourceRange r) : BASE(NodeKind::NAME, r) {}

struct NameExpr : Expr {
  TESSERA_NODE(NameExpr, Expr)
  std::string name;
  const Symbol* symbol = nullptr;  // set by sema
};

struct IntLiteralExpr : Expr {
  TESSERA_NODE(IntLiteralExpr, Expr)
  uint64_t value = 0;  // after separators and size suffixes (8_KiB == 8192)
};

struct FloatLiteralExpr : Expr {
  TESSERA_NODE(FloatLiteralExpr, Expr)
  double value = 0;
};

struct StringLiteralExpr : Expr {
  TESSERA_NODE(StringLiteralExpr, Expr)
  std::string value;  // adjacent literals are concatenated ("a" "b")
};

// f"cuda:{i}": literal text and replacement fields, in order.
struct FStringPart {
  SourceRange range;
  std::string literal;  // when expr is null
  struct Expr* expr = nullptr;
  std::string conversion;  // "", "r", "s", "a" (after '!')
  std::string formatSpec;  // after ':'
};
struct FStringExpr : Expr {
  TESSERA_NODE(FStringExpr, Expr)
  std::vector<FStringPart> parts;
};

struct BoolLiteralExpr : Expr {
  TESSERA_NODE(BoolLiteralExpr, Expr)
  bool value = false;
};

struct NoneLiteralExpr : Expr {
  TESSERA_NODE(NoneLiteralExpr, Expr)
};

// `...` (a body or value left to be written, as the spec's fragments do).
struct EllipsisExpr : Expr {
  TESSERA_NODE(EllipsisExpr, Expr)
};

struct UnaryExpr : Expr {
  TESSERA_NODE(UnaryExpr, Expr)
  UnaryOp op = UnaryOp::Neg;
  SourceRange opRange;
  Expr* operand = nullptr;
};

struct BinaryExpr : Expr {
  TESSERA_NODE(BinaryExpr, Expr)
  BinaryOp op = BinaryOp::Add;
  SourceRange opRange;
  Expr* lhs = nullptr;
  Expr* rhs = nullptr;
};

// `a if cond else b`
struct ConditionalExpr : Expr {
  TESSERA_NODE(ConditionalExpr, Expr)
  Expr* thenExpr = nullptr;
  Expr* cond = nullptr;
  Expr* elseExpr = nullptr;
};

// A call or subscript argument: positional, keyword (`name=value`), `*value` or `**value`.
struct Argument {
  SourceRange range;
  std::string keyword;  // empty for positional
  SourceRange keywordRange;
  Expr* value = nullptr;
  enum Kind : uint8_t { Positional, Keyword, Star, DoubleStar } kind = Positional;
};

struct CallExpr : Expr {
  TESSERA_NODE(CallExpr, Expr)
  Expr* callee = nullptr;
  std::vector<Argument> args;
  SourceRange parenRange;  // from '(' to ')'
};

// `base[i, j:k, name=v]`: indices are expressions (SliceExpr for slices); keyword items appear
// in launch configurations (`gemm_tc[grid, block, stream=s2]`).
struct SubscriptExpr : Expr {
  TESSERA_NODE(SubscriptExpr, Expr)
  Expr* base = nullptr;
  std::vector<Argument> indices;
  SourceRange bracketRange;
};

// `lower:upper:step`, each part optional.
struct SliceExpr : Expr {
  TESSERA_NODE(SliceExpr, Expr)
  Expr* lower = nullptr;
  Expr* upper = nullptr;
  Expr* step = nullptr;
};

struct AttributeExpr : Expr {
  TESSERA_NODE(AttributeExpr, Expr)
  Expr* base = nullptr;
  std::string name;
  SourceRange nameRange;
};

struct TupleExpr : Expr {
  TESSERA_NODE(TupleExpr, Expr)
  std::vector<Expr*> elements;
  bool parenthesized = false;
};

struct ListExpr : Expr {
  TESSERA_NODE(ListExpr, Expr)
  std::vector<Expr*> elements;
};

struct DictEntry {
  Expr* key = nullptr;
  Expr* value = nullptr;
};
struct DictExpr : Expr {
  TESSERA_NODE(DictExpr, Expr)
  std::vector<DictEntry> entries;
};

struct ComprehensionClause {
  SourceRange range;
  Expr* target = nullptr;
  Expr* iter = nullptr;
  std::vector<Expr*> conditions;
};
// `[elt for x in xs if c]` (list) or `(elt for x in xs)` (generator).
struct ComprehensionExpr : Expr {
  TESSERA_NODE(ComprehensionExpr, Expr)
  enum Kind : uint8_t { List, Generator } comprehensionKind = List;
  Expr* element = nullptr;
  std::vector<ComprehensionClause> clauses;
};

// `mut T` in a parameter annotation: a writable tensor.
struct MutExpr : Expr {
  TESSERA_NODE(MutExpr, Expr)
  Expr* type = nullptr;
};

// `*x` in a call argument list or an assignment target.
struct StarredExpr : Expr {
  TESSERA_NODE(StarredExpr, Expr)
  Expr* value = nullptr;
};

// Stands in for an expression the parser could not read (already diagnosed).
struct ErrorExpr : Expr {
  TESSERA_NODE(ErrorExpr, Expr)
};

// ---------------------------------------------------------------- statements

struct Stmt : Node {
  static bool classof(const Node* n) { return n->kind >= NodeKind::ExprStmt; }

 protected:
  using Node::Node;
};

struct Block {
  SourceRange range;
  std::vector<Stmt*> stmts;
};

struct ExprStmt : Stmt {
  TESSERA_NODE(ExprStmt, Stmt)
  Expr* expr = nullptr;
};

// `a = b = value`: targets are [a, b]. Targets may be names, attributes, subscripts, tuples.
struct AssignStmt : Stmt {
  TESSERA_NODE(AssignStmt, Stmt)
  std::vector<Expr*> targets;
  Expr* value = nullptr;
};

struct AugAssignStmt : Stmt {
  TESSERA_NODE(AugAssignStmt, Stmt)
  Expr* target = nullptr;
  BinaryOp op = BinaryOp::Add;
  SourceRange opRange;
  Expr* value = nullptr;
};

// `x: T` or `x: T = value` (module-level declarations such as `x: Tensor["B","D", fp6]`).
struct AnnAssignStmt : Stmt {
  TESSERA_NODE(AnnAssignStmt, Stmt)
  Expr* target = nullptr;
  Expr* annotation = nullptr;
  Expr* value = nullptr;
};

struct PassStmt : Stmt {
  TESSERA_NODE(PassStmt, Stmt)
};
struct BreakStmt : Stmt {
  TESSERA_NODE(BreakStmt, Stmt)
};
struct ContinueStmt : Stmt {
  TESSERA_NODE(ContinueStmt, Stmt)
};

struct ReturnStmt : Stmt {
  TESSERA_NODE(ReturnStmt, Stmt)
  Expr* value = nullptr;
};

// `elif` is an IfStmt alone in the else block, with isElif set.
struct IfStmt : Stmt {
  TESSERA_NODE(IfStmt, Stmt)
  Expr* cond = nullptr;
  Block thenBlock;
  Block elseBlock;
  bool isElif = false;
};

struct WhileStmt : Stmt {
  TESSERA_NODE(WhileStmt, Stmt)
  Expr* cond = nullptr;
  Block body;
  Block elseBlock;
};

// `for target in iter:`; target may be a tuple (`for m, n, k in ...`).
struct ForStmt : Stmt {
  TESSERA_NODE(ForStmt, Stmt)
  Expr* target = nullptr;
  Expr* iter = nullptr;
  Block body;
  Block elseBlock;
};

struct WithItem {
  Expr* context = nullptr;
  Expr* target = nullptr;  // after `as`, may be null
};
struct WithStmt : Stmt {
  TESSERA_NODE(WithStmt, Stmt)
  std::vector<WithItem> items;
  Block body;
};

// `a.b.c as d`
struct ImportName {
  SourceRange range;
  std::string name;  // dotted
  SourceRange nameRange;
  std::string alias;
  SourceRange aliasRange;
};

struct ImportStmt : Stmt {
  TESSERA_NODE(ImportStmt, Stmt)
  std::vector<ImportName> names;
};

// `from a.b import x as y, z` (or `import *`)
struct ImportFromStmt : Stmt {
  TESSERA_NODE(ImportFromStmt, Stmt)
  std::string module;  // dotted, without leading dots
  SourceRange moduleRange;
  unsigned level = 0;  // number of leading dots
  std::vector<ImportName> names;
  bool star = false;
};

// `@kernel tile[(128,)] shared(8_KiB)`: the decorator expression `kernel` with two attribute
// clauses. `@jit @autodiff` on one line is two decorators.
struct Decorator {
  SourceRange range;  // from '@' to the end of the last clause
  Expr* expr = nullptr;
  std::vector<Expr*> clauses;
};

struct Param {
  SourceRange range;
  std::string name;  // empty for a bare '*' separator
  SourceRange nameRange;
  Expr* annotation = nullptr;
  Expr* defaultValue = nullptr;
  enum Kind : uint8_t { Normal, VarArgs, KwArgs, KeywordOnlyMarker } paramKind = Normal;
};

struct FunctionDefStmt : Stmt {
  TESSERA_NODE(FunctionDefStmt, Stmt)
  std::vector<Decorator> decorators;
  std::string name;
  SourceRange nameRange;
  std::vector<Param> params;
  Expr* returns = nullptr;
  Block body;
  std::string docstring;  // first statement, when it is a string literal
};

// Stands in for a statement the parser could not read (already diagnosed).
struct ErrorStmt : Stmt {
  TESSERA_NODE(ErrorStmt, Stmt)
};

#undef TESSERA_NODE

// ---------------------------------------------------------------- module and arena

struct Module {
  FileID file = 0;
  SourceRange range;
  std::vector<Stmt*> stmts;
  std::string docstring;
};

// Owns every node of one or more modules. Nodes are bump-allocated in large slabs and destroyed
// in place when the context dies, so a 100,000-line module is freed in a few milliseconds instead
// of one free() per node.
class ASTContext {
 public:
  ASTContext() = default;
  ASTContext(const ASTContext&) = delete;
  ASTContext& operator=(const ASTContext&) = delete;
  ~ASTContext();

  template <class T>
  T* make(SourceRange r) {
    static_assert(alignof(T) <= alignof(std::max_align_t), "node alignment");
    T* raw = new (allocate(sizeof(T))) T(r);
    nodes_.push_back(raw);
    return raw;
  }
  Module* makeModule(FileID file) {
    modules_.push_back(std::make_unique<Module>());
    modules_.back()->file = file;
    return modules_.back().get();
  }

 private:
  struct Deleter {
    void operator()(Node* n) const;  // runs the node's destructor (the slab owns the memory)
  };
  void* allocate(size_t size);
  std::vector<Node*> nodes_;
  std::vector<std::unique_ptr<std::max_align_t[]>> slabs_;
  char* cur_ = nullptr;
  char* end_ = nullptr;
  std::deque<std::unique_ptr<Module>> modules_;
};

// LLVM-style checked casts over NodeKind.
template <class T>
bool isa(const Node* n) {
  return n && T::classof(n);
}
template <class T>
T* dyn_cast(Node* n) {
  return isa<T>(n) ? static_cast<T*>(n) : nullptr;
}
template <class T>
const T* dyn_cast(const Node* n) {
  return isa<T>(n) ? static_cast<const T*>(n) : nullptr;
}
template <class T>
T* cast(Node* n) {
  return static_cast<T*>(n);
}
template <class T>
const T* cast(const Node* n) {
  return static_cast<const T*>(n);
}

}  // namespace tessera
