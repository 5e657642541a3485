// print(...) inside a kernel -> tile.print: the line's text with `{}` where each operand goes
// (literal braces doubled), the values as scalar operands. Sema (KernelPrint.cpp) has refused
// what cannot be printed; code generation formats the values (codegen/lower/LowerDebug.cpp).
#include "irgen/FunctionContext.h"

namespace tessera::irgen {

namespace {

std::string escapeBraces(const std::string& s) {
  std::string out;
  for (char ch : s) {
    out += ch;
    if (ch == '{' || ch == '}') out += ch;
  }
  return out;
}

}  // namespace

Lowered FunctionContext::handlePrint(const BuiltinCall& c) {
  std::string sep = " ", end = "\n";
  for (Argument& a : c.expr->args)
    if (a.kind == Argument::Keyword)
      if (auto* s = a.value ? dyn_cast<StringLiteralExpr>(a.value) : nullptr)
        (a.keyword == "sep" ? sep : end) = s->value;
  std::string format;
  std::vector<I::Value*> values;
  auto field = [&](Expr* e) {
    I::Value* v = value(lower(e), e->range);
    if (!I::isScalar(v->type)) unsupported(e->range, "printing a value of type " + I::printType(v->type));
    values.push_back(v);
    format += "{}";
  };
  bool first = true;
  for (Argument& a : c.expr->args) {
    if (a.kind != Argument::Positional || !a.value) continue;
    if (!first) format += escapeBraces(sep);
    first = false;
    if (auto* s = dyn_cast<StringLiteralExpr>(a.value)) {
      format += escapeBraces(s->value);
    } else if (auto* f = dyn_cast<FStringExpr>(a.value)) {
      for (FStringPart& p : f->parts) {
        if (p.expr)
          field(p.expr);
        else
          format += escapeBraces(p.literal);
      }
    } else {
      field(a.value);
    }
  }
  format += escapeBraces(end);
  loc(c.expr);
  op(I::OpId::TilePrint, values, {}, {{I::AttrId::Format, I::Attribute::string(format)}});
  return Lowered();
}

}  // namespace tessera::irgen
