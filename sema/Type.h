// Sema's types. Every expression gets one (Expr::type); they are uniqued in a TypeContext, so
// equal types are equal pointers.
//
//   Error      an expression already diagnosed; every rule accepts it silently (no cascades)
//   Dynamic    unknown at compile time (an unannotated parameter, a host operator's result)
//   Scalar     a dtype with its numeric policy; `weak` for untyped literals (3, 0.5) that take
//              the type of the other operand
//   Tensor     global memory: dtype, symbolic shape (extents such as n, 128, K/tp), mut or a
//              Region privilege
//   Shared     a shared-memory array: dtype, static shape, swizzle
//   Tile       a group-level value of static (or symbolic) shape: slices, tile ops
//   Fragment   a tensor-core register fragment (the result of tile.mma)
//   Tuple, List, Dict, Str, None, Range, Slice
//   Function   a user function or kernel; Builtin a builtin (optionally with its [T] argument);
//   Namespace  a builtin namespace (tile, cp_async.shared); Module a user module
//   DTypeValue a dtype name used as a value (a cast when called); Opaque a runtime handle
//              (Stream, Mesh, Graph, Group, ...)
#pragma once

#include <deque>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "sema/Builtins.h"
#include "sema/DType.h"
#include "sema/Extent.h"

namespace tessera {

struct FunctionDefStmt;
struct ModuleInfo;

enum class TypeKind : uint8_t {
  Error,
  Dynamic,
  None,
  Scalar,
  Str,
  Tensor,
  Shared,
  Tile,
  Fragment,
  Tuple,
  List,
  Dict,
  Range,
  Slice,
  Function,
  Builtin,
  Namespace,
  Module,
  DTypeValue,
  Opaque,
};

enum class Privilege : uint8_t { None, Read, Write, ReduceSum, ReduceMax, ReduceMin };
const char* privilegeName(Privilege p);

enum class FunctionKind : uint8_t { Plain, Kernel, Jit };

// One extent of a shape (sema/Extent.h): a constant ("128"), a symbol ("n"), an expression ("K/tp")
// or unknown ("?").
inline bool extentIsConst(const Extent& e) { return e.isConst(); }
inline long long extentValue(const Extent& e) { return e.value(); }  // only when extentIsConst

class Type {
 public:
  TypeKind kind;
  // Scalar, Tensor, Shared, Tile, Fragment, DTypeValue
  DType dtype = DType::FP32;
  bool dtypeKnown = true;  // false: a tensor or tile of unknown element type
  bool weak = false;       // Scalar: an untyped literal
  NumericPolicy policy;
  // Tensor, Shared, Tile, Fragment
  std::vector<Extent> dims;
  bool rankKnown = true;
  bool mut = false;
  Privilege privilege = Privilege::None;
  Swizzle swizzle = Swizzle::None;
  // Tuple elements, List element (elems[0]), Function parameters, Range element (elems[0])
  std::vector<const Type*> elems;
  const Type* result = nullptr;  // Function
  // Builtin
  const BuiltinInfo* builtin = nullptr;
  const Type* typeArg = nullptr;
  // Namespace prefix, Opaque name, Function name, Module name
  std::string name;
  const FunctionDefStmt* function = nullptr;
  FunctionKind functionKind = FunctionKind::Plain;
  const ModuleInfo* module = nullptr;

  bool isError() const { return kind == TypeKind::Error; }
  bool isDynamic() const { return kind == TypeKind::Dynamic; }
  // Error or Dynamic: rules accept it.
  bool isLenient() const { return kind == TypeKind::Error || kind == TypeKind::Dynamic; }
  bool isScalar() const { return kind == TypeKind::Scalar; }
  bool isNumeric() const { return kind == TypeKind::Scalar && dtypeInfo(dtype).kind != DTypeKind::Bool; }
  bool isIntegral() const { return kind == TypeKind::Scalar && (isInteger(dtype) || dtype == DType::BOOL); }
  bool isTileLike() const {
    return kind == TypeKind::Tile || kind == TypeKind::Tensor || kind == TypeKind::Shared || kind == TypeKind::Fragment;
  }
  bool hasElements() const { return isTileLike(); }
  // The printed form: f32, mut f32[n], tile<f32,128x128>, shared<f16,128,swizzle=xor>, ...
  std::string str() const;
  // The key TypeContext uniques on.
  std::string key() const;

  explicit Type(TypeKind k) : kind(k) {}
};

class TypeContext {
 public:
  TypeContext();
  const Type* error() const { return error_; }
  const Type* dynamic() const { return dynamic_; }
  const Type* none() const { return none_; }
  const Type* str() const { return str_; }
  const Type* dict() const { return dict_; }
  const Type* slice() const { return slice_; }
  // A block of `length` elements (tile.range with a constant step): a subscript by it has that
  // extent, as code generation gives it (the last block is clipped by masking, not resized).
  const Type* slice(const Extent& length);
  const Type* scalar(DType d, NumericPolicy p = {}, bool weak = false);
  const Type* intLiteral() { return scalar(DType::INT32, {}, true); }
  const Type* floatLiteral() { return scalar(DType::FP32, {}, true); }
  const Type* boolType() { return scalar(DType::BOOL); }
  const Type* tensor(DType d, bool dtypeKnown, NumericPolicy p, std::vector<Extent> dims, bool rankKnown, bool mut,
                     Privilege priv = Privilege::None);
  const Type* shared(DType d, std::vector<Extent> dims, Swizzle s);
  const Type* tile(DType d, bool dtypeKnown, std::vector<Extent> dims, bool rankKnown, NumericPolicy p = {});
  const Type* fragment(DType accum, std::vector<Extent> dims);
  const Type* tuple(std::vector<const Type*> elems);
  const Type* list(const Type* elem);
  const Type* range(const Type* elem);
  const Type* function(const FunctionDefStmt* fn, const std::string& name, FunctionKind k,
                       std::vector<const Type*> params, const Type* result);
  const Type* builtin(const BuiltinInfo* b, const Type* typeArg = nullptr);
  const Type* ns(const std::string& prefix);
  const Type* module(const ModuleInfo* m, const std::string& name);
  const Type* dtypeValue(DType d, NumericPolicy p = {});
  const Type* opaque(const std::string& name);
  // The same type with another dtype/policy (tensor, tile, scalar).
  const Type* withElement(const Type* t, DType d, NumericPolicy p = {});
  // Scalar type of the elements of a tensor/shared/tile/fragment (Dynamic when unknown).
  const Type* elementOf(const Type* t);

 private:
  const Type* unique(std::unique_ptr<Type> t);
  std::map<std::string, const Type*> byKey_;
  std::deque<std::unique_ptr<Type>> storage_;
  const Type *error_, *dynamic_, *none_, *str_, *dict_, *slice_;
};

}  // namespace tessera
