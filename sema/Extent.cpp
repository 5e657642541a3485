#include "sema/Extent.h"

namespace tessera {

struct Extent::Operands {
  Extent lhs, rhs;
};

namespace {
bool isInteger(const std::string& s) {
  size_t i = !s.empty() && s[0] == '-' ? 1 : 0;
  if (i >= s.size() || s.size() >= 19) return false;
  for (; i < s.size(); ++i)
    if (s[i] < '0' || s[i] > '9') return false;
  return true;
}
int precedence(const Extent& e) {
  if (!e.isExpr() || e.op() == Extent::Op::CeilDiv) return 3;
  return e.op() == Extent::Op::Add || e.op() == Extent::Op::Sub ? 1 : 2;
}
}  // namespace

Extent::Extent(const std::string& text) {
  if (text.empty() || text == "?") return;
  if (isInteger(text)) {
    *this = constant(std::stoll(text));
    return;
  }
  kind_ = Kind::Symbol;
  text_ = text;
}

Extent Extent::constant(int64_t v) {
  Extent e;
  e.kind_ = Kind::Const;
  e.value_ = v;
  e.text_ = std::to_string(v);
  return e;
}

Extent Extent::symbol(std::string name) {
  Extent e;
  e.kind_ = Kind::Symbol;
  e.text_ = std::move(name);
  return e;
}

const char* Extent::opSpelling(Op op) {
  switch (op) {
    case Op::Add: return "+";
    case Op::Sub: return "-";
    case Op::Mul: return "*";
    case Op::Div: return "/";
    case Op::Mod: return "%";
    case Op::CeilDiv: return "ceil_div";
  }
  return "?";
}

Extent Extent::binary(Op op, const Extent& lhs, const Extent& rhs) {
  if (lhs.isUnknown() || rhs.isUnknown()) return Extent();
  Extent e;
  e.kind_ = Kind::Expr;
  e.op_ = op;
  e.operands_ = std::make_shared<const Operands>(Operands{lhs, rhs});
  if (op == Op::CeilDiv) {
    e.text_ = "ceil_div(" + lhs.str() + "," + rhs.str() + ")";
    return e;
  }
  int p = precedence(e);
  // Left operands need parentheses only below the operator's precedence; right operands also
  // at equal precedence (`a-(b-c)`, `a/(b*c)`), so the spelling reads back as the same tree.
  std::string l = precedence(lhs) < p ? "(" + lhs.str() + ")" : lhs.str();
  std::string r = precedence(rhs) <= p ? "(" + rhs.str() + ")" : rhs.str();
  e.text_ = l + opSpelling(op) + r;
  return e;
}

const Extent& Extent::lhs() const { return operands_->lhs; }
const Extent& Extent::rhs() const { return operands_->rhs; }

}  // namespace tessera
