#include "graph/Dim.h"

#include <cstdint>

#include "sema/Extent.h"

namespace tessera::graph {

struct Dim::Operands {
  Dim lhs, rhs;
};

namespace {

int precedence(const Dim& d) {
  if (d.kind() != Dim::Kind::Expr || d.op() == Dim::Op::CeilDiv) return 3;
  return d.op() == Dim::Op::Add || d.op() == Dim::Op::Sub ? 1 : 2;
}

const char* spelling(Dim::Op op) {
  switch (op) {
    case Dim::Op::Add: return "+";
    case Dim::Op::Sub: return "-";
    case Dim::Op::Mul: return "*";
    case Dim::Op::Div: return "/";
    case Dim::Op::Mod: return "%";
    case Dim::Op::CeilDiv: return "ceil_div";
  }
  return "?";
}

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

Dim Dim::constant(int64_t v) {
  Dim d;
  d.kind_ = Kind::Const;
  d.value_ = v;
  d.text_ = std::to_string(v);
  return d;
}

Dim Dim::symbol(std::string name) {
  Dim d;
  d.kind_ = Kind::Symbol;
  d.text_ = std::move(name);
  return d;
}

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
  // Constants to the left of products: 3*E, never E*3.
  if (op == Op::Mul && rhs.isConst() && !lhs.isConst()) return binary(op, rhs, lhs);
  // (a*x)*b with constants a, b -> (a*b)*x
  int64_t product = 0;
  if (op == Op::Mul && lhs.isConst() && rhs.kind() == Kind::Expr && rhs.op() == Op::Mul && rhs.lhs().isConst() &&
      !__builtin_mul_overflow(lhs.value(), rhs.lhs().value(), &product))
    return binary(Op::Mul, constant(product), rhs.rhs());
  Dim d;
  d.kind_ = Kind::Expr;
  d.op_ = op;
  d.operands_ = std::make_shared<const Operands>(Operands{lhs, rhs});
  if (op == Op::CeilDiv) {
    d.text_ = "ceil_div(" + lhs.str() + "," + rhs.str() + ")";
    return d;
  }
  int p = precedence(d);
  std::string l = precedence(lhs) < p ? "(" + lhs.str() + ")" : lhs.str();
  std::string r = precedence(rhs) <= p ? "(" + rhs.str() + ")" : rhs.str();
  d.text_ = l + spelling(op) + r;
  return d;
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
  Op op = Op::Add;
  switch (e.op()) {
    case Extent::Op::Add: op = Op::Add; break;
    case Extent::Op::Sub: op = Op::Sub; break;
    case Extent::Op::Mul: op = Op::Mul; break;
    case Extent::Op::Div: op = Op::Div; break;
    case Extent::Op::Mod: op = Op::Mod; break;
  }
  return binary(op, *l, *r);
}

const Dim& Dim::lhs() const { return operands_->lhs; }
const Dim& Dim::rhs() const { return operands_->rhs; }

void Dim::collectSymbols(std::set<std::string>& out) const {
  if (kind_ == Kind::Symbol) out.insert(text_);
  if (kind_ == Kind::Expr) {
    lhs().collectSymbols(out);
    rhs().collectSymbols(out);
  }
}

Dim Dim::substitute(const std::function<std::optional<Dim>(const std::string&)>& subst) const {
  if (kind_ == Kind::Symbol) {
    auto r = subst(text_);
    return r ? *r : *this;
  }
  if (kind_ == Kind::Expr) return binary(op_, lhs().substitute(subst), rhs().substitute(subst));
  return *this;
}

std::optional<int64_t> Dim::evaluate(const std::map<std::string, int64_t>& symbols) const {
  switch (kind_) {
    case Kind::Const: return value_;
    case Kind::Symbol: {
      auto it = symbols.find(text_);
      if (it == symbols.end()) return std::nullopt;
      return it->second;
    }
    case Kind::Expr: break;
  }
  auto l = lhs().evaluate(symbols), r = rhs().evaluate(symbols);
  if (!l || !r) return std::nullopt;
  return apply(op_, *l, *r);
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

}  // namespace tessera::graph
