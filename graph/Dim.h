// One extent of a graph tensor: a constant (`128`), a shape symbol (`M`) or an integer
// expression over those (`3*E`, `E/16`, `ceil_div(N,256)`). Dims are immutable trees with a
// canonical spelling; two dims are equal when their spellings are. Construction folds what is
// known (constants, `x*1`, `x+0`, `(3*E)/3`), so shape rules compare canonical forms. The
// runtime evaluates dims as postfix programs over the bound symbols (tessera_expr_op, where
// `/` is exact: a remainder is an error at the call, never a silent truncation).
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "sema/Extent.h"

namespace tessera::graph {

// The tree and its spelling are sema's Extent (one symbolic-dimension type for the compiler); a
// Dim is a known extent that graph construction keeps folded.
class Dim {
 public:
  using Kind = Extent::Kind;  // never Unknown
  // The operators of tessera_expr_opcode: Div is exact, CeilDiv rounds up.
  using Op = Extent::Op;

  Dim() : e_(Extent::constant(0)) {}
  static Dim constant(int64_t v) { return Dim(Extent::constant(v)); }
  static Dim symbol(std::string name) { return Dim(Extent::symbol(std::move(name))); }
  static Dim binary(Op op, const Dim& lhs, const Dim& rhs);  // folds
  // sema's extent; nullopt for an unknown (`?`) extent.
  static std::optional<Dim> fromExtent(const Extent& e);

  Kind kind() const { return e_.kind(); }
  bool isConst() const { return e_.isConst(); }
  bool isSymbol() const { return e_.kind() == Kind::Symbol; }
  int64_t value() const { return e_.value(); }          // Const
  const std::string& name() const { return e_.str(); }  // Symbol
  Op op() const { return e_.op(); }                     // Expr
  Dim lhs() const { return Dim(e_.lhs()); }
  Dim rhs() const { return Dim(e_.rhs()); }
  const std::string& str() const { return e_.str(); }
  const Extent& extent() const { return e_; }

  // The symbols the dim mentions.
  void collectSymbols(std::set<std::string>& out) const;
  // The dim with symbols replaced (by `subst`, recursively resolved by the caller's function).
  Dim substitute(const std::function<std::optional<Dim>(const std::string&)>& subst) const;
  // Evaluates with bound symbols; nullopt when a symbol is unbound, a division is inexact or
  // divides by zero.
  std::optional<int64_t> evaluate(const std::map<std::string, int64_t>& symbols) const;

  friend bool operator==(const Dim& a, const Dim& b) { return a.e_ == b.e_; }
  friend bool operator!=(const Dim& a, const Dim& b) { return a.e_ != b.e_; }
  friend bool operator<(const Dim& a, const Dim& b) { return a.e_ < b.e_; }

 private:
  explicit Dim(Extent e) : e_(std::move(e)) {}
  Extent e_;
};

using Shape = std::vector<Dim>;

inline Dim operator+(const Dim& a, const Dim& b) { return Dim::binary(Dim::Op::Add, a, b); }
inline Dim operator-(const Dim& a, const Dim& b) { return Dim::binary(Dim::Op::Sub, a, b); }
inline Dim operator*(const Dim& a, const Dim& b) { return Dim::binary(Dim::Op::Mul, a, b); }
inline Dim operator/(const Dim& a, const Dim& b) { return Dim::binary(Dim::Op::Div, a, b); }

// "[M, 3*E]"
std::string shapeString(const Shape& s);
// The product of the dims (1 for rank 0).
Dim numElements(const Shape& s);
// Whether two dims are the same product: equal constant factors and the same other factors in
// any order and grouping (P*R and R*P, (2*P)*R and P*(2*R)): the element counts of a reshape.
bool sameProduct(const Dim& a, const Dim& b);

}  // namespace tessera::graph
