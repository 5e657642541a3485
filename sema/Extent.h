// One extent of a shape, as sema types carry it: unknown (`?`), a constant (`128`), a shape
// symbol (`n`), or an integer expression over those (`K/tp`, `2*n+1`). Expressions are typed
// trees, not text: irgen turns them into IR dimensions and codegen into the kernel descriptor's
// postfix programs without reading text back. `str()` is the canonical spelling (no spaces,
// parentheses only where precedence needs them); two extents are equal when their canonical
// spellings are, which is what type uniquing and the shape rules compare.
#pragma once

#include <cstdint>
#include <memory>
#include <string>

namespace tessera {

class Extent {
 public:
  enum class Kind : uint8_t { Unknown, Const, Symbol, Expr };
  // Div is exact division (`K/tp` and `K//tp` alike: the launch refuses a remainder). CeilDiv
  // (`ceil_div(N,256)`) rounds up; only the host level's graphs build it (graph/Dim.h).
  enum class Op : uint8_t { Add, Sub, Mul, Div, Mod, CeilDiv };

  Extent() = default;
  // From a spelling: "?" (or "") is unknown, an integer is a constant, anything else a symbol.
  Extent(const std::string& text);  // NOLINT(google-explicit-constructor): extents read like their text
  Extent(const char* text) : Extent(std::string(text)) {}  // NOLINT
  static Extent constant(int64_t v);
  static Extent symbol(std::string name);
  static Extent binary(Op op, const Extent& lhs, const Extent& rhs);

  Kind kind() const { return kind_; }
  bool isConst() const { return kind_ == Kind::Const; }
  bool isUnknown() const { return kind_ == Kind::Unknown; }
  bool isExpr() const { return kind_ == Kind::Expr; }
  int64_t value() const { return value_; }  // Const
  Op op() const { return op_; }             // Expr
  const Extent& lhs() const;                // Expr
  const Extent& rhs() const;                // Expr
  const std::string& str() const { return text_; }
  const char* c_str() const { return text_.c_str(); }
  static const char* opSpelling(Op op);

  friend bool operator==(const Extent& a, const Extent& b) { return a.text_ == b.text_; }
  friend bool operator!=(const Extent& a, const Extent& b) { return !(a == b); }
  friend bool operator==(const Extent& a, const char* s) { return a.text_ == s; }
  friend bool operator!=(const Extent& a, const char* s) { return a.text_ != s; }
  friend bool operator<(const Extent& a, const Extent& b) { return a.text_ < b.text_; }

 private:
  struct Operands;
  Kind kind_ = Kind::Unknown;
  Op op_ = Op::Add;
  int64_t value_ = 0;
  std::string text_ = "?";
  std::shared_ptr<const Operands> operands_;
};

}  // namespace tessera
