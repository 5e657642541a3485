// print(...) inside a kernel (docs/language.md, "Printing from kernels"): every tile that reaches
// it prints one line, as CUDA's printf does. Code generation formats integers, floats, bools and
// the text of string literals (and of f-strings whose fields are such values, with no conversion
// or format spec); `sep=` and `end=` take string literals. Anything else is refused here, at its
// location, so that --check and the editor report what compilation would.
#include "sema/Checker.h"
#include "sema/SemaDiagnostics.h"

namespace tessera {

namespace {

// Whether a value of type `t` can be printed from a kernel.
bool printable(const Type* t) {
  if (!t || t->isError()) return true;  // reported already
  if (t->kind != TypeKind::Scalar) return false;
  switch (t->dtype) {
    case DType::FP64:
    case DType::FP32:
    case DType::FP16:
    case DType::BF16: return true;
    default: return isInteger(t->dtype) ? dtypeInfo(t->dtype).bits >= 8 : t->dtype == DType::BOOL;
  }
}

}  // namespace

void Checker::checkKernelPrint(CallExpr* call) {
  auto refuse = [&](SourceRange at, const std::string& what) { diags.report(diag::err_print_argument, at) << what; };
  for (Argument& a : call->args) {
    Expr* v = a.value;
    if (!v) continue;
    if (a.kind == Argument::Star || a.kind == Argument::DoubleStar) {
      refuse(a.range, "an unpacked argument ('*' or '**')");
      continue;
    }
    if (a.kind == Argument::Keyword) {
      if (a.keyword != "sep" && a.keyword != "end")
        refuse(a.range, "the keyword argument '" + a.keyword + "'");
      else if (!isa<StringLiteralExpr>(v))
        refuse(v->range, "a computed '" + a.keyword + "'");
      continue;
    }
    if (isa<StringLiteralExpr>(v)) continue;
    if (auto* f = dyn_cast<FStringExpr>(v)) {
      for (FStringPart& p : f->parts) {
        if (!p.expr) continue;
        if (!p.conversion.empty() || !p.formatSpec.empty())
          refuse(p.range, "an f-string field with a conversion or format spec");
        else if (!printable(p.expr->type))
          refuse(p.expr->range, "a value of type '" + (p.expr->type ? p.expr->type->str() : "?") + "'");
      }
      continue;
    }
    if (!printable(v->type)) refuse(v->range, "a value of type '" + (v->type ? v->type->str() : "?") + "'");
  }
}

}  // namespace tessera
