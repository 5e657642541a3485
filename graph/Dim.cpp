#include "graph/Dim.h"

#include <algorithm>
#include <cstdint>

#include "sema/Extent.h"

namespace tessera::graph {

namespace {

// nullopt where the result is undefined or does not fit in 64 bits (the dim then stays an
// expression, and evaluating it at run time is an error).
std::optional<int64_t> apply(Dim::Op op, int64_t a, int64_t b) {
  int64_t r = 0;
  switch (op) {
    case Dim::Op::Add:
      if (__builtin_add_overflow(a, b, &r)) return std::nullopt;
      return r;
    case Dim::Op::Sub:
      if (__builtin_sub_overflow(a, b, &r)) return std::nullopt;
      return r;
    case Dim::Op::Mul:
      if (__builtin_mul_overflow(a, b, &r)) return std::nullopt;
      return r;
    case Dim::Op::Div:
      if (b == 0 || (a == INT64_MIN && b == -1) || a % b != 0) return std::nullopt;
      return a / b;
    case Dim::Op::CeilDiv:
      if (b <= 0 || __builtin_add_overflow(a, b - 1, &r)) return std::nullopt;
      return r / b;
    case Dim::Op::Mod:
      if (b == 0 || (a == INT64_MIN && b == -1)) return std::nullopt;
      return a % b;
  }
  return std::nullopt;
}

}  // namespace

Dim Dim::binary(Op op, const Dim& lhs, const Dim& rhs) {
  if (lhs.isConst() && rhs.isConst())
    if (auto v = apply(op, lhs.value(), rhs.value())) return constant(*v);
  // Identities, so that shape rules compare canonical forms.
  if ((op == Op::Add || op == Op::Sub) && rhs.isConst() && rhs.value() == 0) return lhs;
  if (op == Op::Add && lhs.isConst() && lhs.value() == 0) return rhs;
  if ((op == Op::Mul || op == Op::Div || op == Op::CeilDiv) && rhs.isConst() && rhs.value() == 1) return lhs;
  if (op == Op::Mul && lhs.isConst() && lhs.value() == 1) return rhs;
  if (op == Op::Sub && lhs == rhs) return constant(0);
  if (op == Op::Div && lhs == rhs) return constant(1);
  // (c*x)/c and (x*c)/c -> x: split_qkv's E = (3*E)/3.
  if (op == Op::Div && lhs.kind() == Kind::Expr && lhs.op() == Op::Mul) {
    if (lhs.lhs() == rhs) return lhs.rhs();
    if (lhs.rhs() == rhs) return lhs.lhs();
  }
  // c*(x/c) -> x (division of extents is exact): the concat of split_qkv's thirds, 3*(F/3).
  if (op == Op::Mul && lhs.isConst() && rhs.kind() == Kind::Expr && rhs.op() == Op::Div && rhs.rhs() == lhs)
    return rhs.lhs();
  if (op == Op::Mul && rhs.isConst() && lhs.kind() == Kind::Expr && lhs.op() == Op::Div && lhs.rhs() == rhs)
    return lhs.lhs();
  // x + x -> 2*x, and c*x + x -> (c+1)*x: sums of equal extents (concats of equal parts).
  if (op == Op::Add && lhs == rhs && !lhs.isConst()) return binary(Op::Mul, constant(2), lhs);
  if (op == Op::Add && lhs.kind() == Kind::Expr && lhs.op() == Op::Mul && lhs.lhs().isConst() && lhs.rhs() == rhs &&
      lhs.lhs().value() < (int64_t(1) << 40))
    return binary(Op::Mul, constant(lhs.lhs().value() + 1), rhs);
  // Constants to the left of products: 3*E, never E*3.
  if (op == Op::Mul && rhs.isConst() && !lhs.isConst()) return binary(op, rhs, lhs);
  // (a*x)*b with constants a, b -> (a*b)*x
  int64_t product = 0;
  if (op == Op::Mul && lhs.isConst() && rhs.kind() == Kind::Expr && rhs.op() == Op::Mul && rhs.lhs().isConst() &&
      !__builtin_mul_overflow(lhs.value(), rhs.lhs().value(), &product))
    return binary(Op::Mul, constant(product), rhs.rhs());
  return Dim(Extent::binary(op, lhs.e_, rhs.e_));
}

std::optional<Dim> Dim::fromExtent(const Extent& e) {
  switch (e.kind()) {
    case Extent::Kind::Unknown: return std::nullopt;
    case Extent::Kind::Const: return constant(e.value());
    case Extent::Kind::Symbol: return symbol(e.str());
    case Extent::Kind::Expr: break;
  }
  auto l = fromExtent(e.lhs()), r = fromExtent(e.rhs());
  if (!l || !r) return std::nullopt;
  return binary(e.op(), *l, *r);
}

void Dim::collectSymbols(std::set<std::string>& out) const {
  if (isSymbol()) out.insert(name());
  if (kind() == Kind::Expr) {
    lhs().collectSymbols(out);
    rhs().collectSymbols(out);
  }
}

Dim Dim::substitute(const std::function<std::optional<Dim>(const std::string&)>& subst) const {
  if (isSymbol()) {
    auto r = subst(name());
    return r ? *r : *this;
  }
  if (kind() == Kind::Expr) return binary(op(), lhs().substitute(subst), rhs().substitute(subst));
  return *this;
}

std::optional<int64_t> Dim::evaluate(const std::map<std::string, int64_t>& symbols) const {
  switch (kind()) {
    case Kind::Unknown: return std::nullopt;
    case Kind::Const: return value();
    case Kind::Symbol: {
      auto it = symbols.find(name());
      if (it == symbols.end()) return std::nullopt;
      return it->second;
    }
    case Kind::Expr: break;
  }
  auto l = lhs().evaluate(symbols), r = rhs().evaluate(symbols);
  if (!l || !r) return std::nullopt;
  return apply(op(), *l, *r);
}

std::string shapeString(const Shape& s) {
  std::string out = "[";
  for (size_t i = 0; i < s.size(); ++i) out += (i ? ", " : "") + s[i].str();
  return out + "]";
}

Dim numElements(const Shape& s) {
  Dim n = Dim::constant(1);
  for (const Dim& d : s) n = n * d;
  return n;
}

namespace {
// d as a product: its constant factors multiplied into `c` (false on overflow), its other
// factors' spellings appended to `factors`.
bool productFactors(const Dim& d, int64_t& c, std::vector<std::string>& factors) {
  if (d.kind() == Dim::Kind::Expr && d.op() == Dim::Op::Mul)
    return productFactors(d.lhs(), c, factors) && productFactors(d.rhs(), c, factors);
  if (d.isConst()) return !__builtin_mul_overflow(c, d.value(), &c);
  factors.push_back(d.str());
  return true;
}
}  // namespace

bool sameProduct(const Dim& a, const Dim& b) {
  if (a == b) return true;
  int64_t ca = 1, cb = 1;
  std::vector<std::string> fa, fb;
  if (!productFactors(a, ca, fa) || !productFactors(b, cb, fb) || ca != cb) return false;
  std::sort(fa.begin(), fa.end());
  std::sort(fb.begin(), fb.end());
  return fa == fb;
}

}  // namespace tessera::graph
