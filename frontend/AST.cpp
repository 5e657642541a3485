#include "frontend/AST.h"

namespace tessera {

const char* nodeKindName(NodeKind k) {
  switch (k) {
#define EXPR(NAME, ...) \
  case NodeKind::NAME##Expr: return #NAME "Expr";
#define STMT(NAME, ...) \
  case NodeKind::NAME##Stmt: return #NAME "Stmt";
#include "frontend/ASTNodes.def"
  }
  return "?";
}

// Nodes have no virtual destructor (they are plain data); destroy through the concrete type.
void ASTContext::Deleter::operator()(Node* n) const {
  switch (n->kind) {
#define EXPR(NAME, ...) \
  case NodeKind::NAME##Expr: static_cast<NAME##Expr*>(n)->~NAME##Expr(); return;
#define STMT(NAME, ...) \
  case NodeKind::NAME##Stmt: static_cast<NAME##Stmt*>(n)->~NAME##Stmt(); return;
#include "frontend/ASTNodes.def"
  }
}

ASTContext::~ASTContext() {
  Deleter destroy;
  for (Node* n : nodes_) destroy(n);
}

void* ASTContext::allocate(size_t size) {
  constexpr size_t kAlign = alignof(std::max_align_t);
  size = (size + kAlign - 1) & ~(kAlign - 1);
  if (static_cast<size_t>(end_ - cur_) < size) {
    constexpr size_t kSlab = 256 * 1024;
    size_t bytes = size > kSlab ? size : kSlab;
    slabs_.emplace_back(new std::max_align_t[bytes / sizeof(std::max_align_t) + 1]);
    cur_ = reinterpret_cast<char*>(slabs_.back().get());
    end_ = cur_ + bytes;
  }
  void* p = cur_;
  cur_ += size;
  return p;
}

const char* unaryOpSpelling(UnaryOp op) {
  switch (op) {
    case UnaryOp::Neg: return "-";
    case UnaryOp::Pos: return "+";
    case UnaryOp::Invert: return "~";
    case UnaryOp::Not: return "not";
  }
  return "?";
}

const char* binaryOpSpelling(BinaryOp op) {
  switch (op) {
    case BinaryOp::Add: return "+";
    case BinaryOp::Sub: return "-";
    case BinaryOp::Mul: return "*";
    case BinaryOp::Div: return "/";
    case BinaryOp::FloorDiv: return "//";
    case BinaryOp::Mod: return "%";
    case BinaryOp::Pow: return "**";
    case BinaryOp::MatMul: return "@";
    case BinaryOp::BitAnd: return "&";
    case BinaryOp::BitOr: return "|";
    case BinaryOp::BitXor: return "^";
    case BinaryOp::Shl: return "<<";
    case BinaryOp::Shr: return ">>";
    case BinaryOp::And: return "and";
    case BinaryOp::Or: return "or";
    case BinaryOp::Eq: return "==";
    case BinaryOp::Ne: return "!=";
    case BinaryOp::Lt: return "<";
    case BinaryOp::Le: return "<=";
    case BinaryOp::Gt: return ">";
    case BinaryOp::Ge: return ">=";
    case BinaryOp::In: return "in";
    case BinaryOp::NotIn: return "not in";
    case BinaryOp::Is: return "is";
    case BinaryOp::IsNot: return "is not";
  }
  return "?";
}

bool isComparison(BinaryOp op) { return op >= BinaryOp::Eq; }

}  // namespace tessera
