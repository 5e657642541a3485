// What a name means (NameExpr::symbol): a variable, parameter, function, builtin, namespace,
// module, dtype, shape symbol, module constant or autotune parameter.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "frontend/AST.h"
#include "sema/Type.h"

namespace tessera {

struct FunctionInfo;

// A compile-time value (constant folding).
struct ConstValue {
  enum Kind : uint8_t { Int, Float, Bool, Str } kind = Int;
  long long i = 0;
  double f = 0;
  bool b = false;
  std::string s;
  static ConstValue ofInt(long long v) {
    ConstValue c;
    c.kind = Int;
    c.i = v;
    return c;
  }
  static ConstValue ofFloat(double v) {
    ConstValue c;
    c.kind = Float;
    c.f = v;
    return c;
  }
  static ConstValue ofBool(bool v) {
    ConstValue c;
    c.kind = Bool;
    c.b = v;
    return c;
  }
  static ConstValue ofStr(std::string v) {
    ConstValue c;
    c.kind = Str;
    c.s = std::move(v);
    return c;
  }
  bool isNumber() const { return kind == Int || kind == Float || kind == Bool; }
  double asDouble() const { return kind == Float ? f : kind == Bool ? (b ? 1 : 0) : static_cast<double>(i); }
  std::string str() const;
};

enum class SymbolKind : uint8_t {
  Variable,
  Parameter,
  Function,
  Builtin,
  Namespace,
  Module,
  DType,
  ShapeSymbol,
  Constant,
  AutotuneParam,
};
const char* symbolKindName(SymbolKind k);

class Symbol {
 public:
  SymbolKind kind = SymbolKind::Variable;
  std::string name;
  SourceRange declRange;
  const Type* type = nullptr;
  std::optional<ConstValue> value;            // module constants, autotune parameters (compiled candidate)
  std::vector<long long> candidates;          // autotune parameters
  const BuiltinInfo* builtin = nullptr;       // Builtin
  const FunctionDefStmt* function = nullptr;  // Function
  FunctionInfo* functionInfo = nullptr;       // Function
  const Param* param = nullptr;               // Parameter
  unsigned assignments = 0;                   // module-level: more than one makes it a variable
};

}  // namespace tessera
