// The state of lowering one kernel from Tile IR to LLVM IR, shared by the files that lower its
// parts: LowerToLLVM.cpp (entries, scalars, control flow), LowerMemory.cpp (views, copies,
// reductions over memory) and LowerTiles.cpp (tile values in the group's workspace). Internal to
// codegen/.
#pragma once

#include <array>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <unordered_map>
#include <vector>

#include "codegen/lower/DeviceHooks.h"
#include "codegen/lower/LowerToLLVM.h"
#include "ir/IR.h"
#include "llvm/IR/IRBuilder.h"
#include "llvm/IR/MDBuilder.h"
#include "llvm/IR/Module.h"
#include "runtime/include/tessera/runtime.h"

namespace tessera::codegen::detail {

// A view of memory: element (i0..ik) is at ptr + sum(i_j * strides[j]) elements.
struct View {
  llvm::Value* ptr = nullptr;
  llvm::Type* elem = nullptr;                // the LLVM type elements are stored as
  std::vector<llvm::Value*> shape, strides;  // i64
  llvm::Value* splat = nullptr;              // a broadcast scalar: every element is this value (ptr unused)
  int root = -1;  // the tensor parameter (index among tensors) it views, or -1: unknown or none
  // XOR-swizzled shared buffer (32, 64 or 128; 0: none), rows of rowBytes from ptr: the 16-byte
  // chunk of an element moves within its row by a function of the row (swizzledOffset).
  int swizzle = 0;
  int64_t rowBytes = 0;
  std::string name;  // what it views, for bounds-check messages: "tensor 'x'", "shared array 's'"
  // Sub-byte elements (int4, fp4: 4 bits, fp6: 6 bits) packed in memory: element e is at bit
  // (elemOffset + e) * packedBits from ptr, little-endian (docs/abi.md 1). 0: byte-addressed.
  unsigned packedBits = 0;
  llvm::Value* elemOffset = nullptr;  // packed views: elements before ptr's first (null: 0)
};

// The LLVM struct of tessera_kernel_tensor: {ptr data, [8 x i64] shape, [8 x i64] strides}.
inline llvm::StructType* kernelTensorType(llvm::LLVMContext& c) {
  if (auto* t = llvm::StructType::getTypeByName(c, "tessera_kernel_tensor")) return t;
  auto* a8 = llvm::ArrayType::get(llvm::Type::getInt64Ty(c), TESSERA_MAX_RANK);
  return llvm::StructType::create(c, {llvm::PointerType::get(c, 0), a8, a8}, "tessera_kernel_tensor");
}

// What ids mean for the kernel (LowerToLLVM.cpp).
KernelShape shapeOf(const KernelInterface& k);
// Tiles each GPU thread of a kernel without a group shape runs (VectorForms.cpp).
// `why` (when given) says what keeps the kernel at one tile per thread, `at` the op it is.
unsigned chooseGpuTilesPerThread(ir::Operation& func, const KernelInterface& k, std::string* why = nullptr,
                                 const ir::Operation** at = nullptr);

class Lowering {
 public:
  Lowering(ir::Module& m, DeviceTarget target, llvm::Module& out, std::string& error, bool boundsCheck = false)
      : m_(m), target_(target), out_(out), c_(out.getContext()), b_(c_), error_(error), boundsCheck_(boundsCheck) {}

  bool kernel(ir::Operation& func, KernelInterface& k);

  // One element of elementwise IR ops outside the lowering of a whole kernel: the epilogues of
  // the sm_90a forms, on accumulator registers (codegen/lower/LowerEpilogue.cpp). Lowers `ops` in order
  // at `at`'s insertion point through their hooks, as lowerTileElementwise does for one element
  // (tile.broadcast passes its operand's element through); `env` gives each operand that no op
  // of `ops` makes (accumulators, loaded elements, scalar parameters) and receives the results.
  // `at` continues after the code. GPU code of kernel `k`.
  bool lowerElementwiseAt(llvm::IRBuilder<>& at, const KernelInterface& k, const std::vector<ir::Operation*>& ops,
                          std::unordered_map<const ir::Value*, llvm::Value*>& env);

  static bool isTileValue(ir::Type t) { return ir::isValueShaped(t); }
  // Tile ops, and ops whose result is a tile value, except control flow (LowerTiles.cpp).
  static bool isTileOp(const ir::Operation& op);

 private:
  // ---- errors
  bool fail(const ir::Operation& op, const std::string& what) {
    if (error_.empty()) error_ = std::string(op.name()) + ": " + what;
    return false;
  }

  // ---- types
  // The LLVM type of a scalar: the LLVM column of basic/DTypes.def (fp8 values are their 8-bit
  // codes, whose arithmetic lowering makes explicit with arith.convert in the accumulation type;
  // fp6/fp4, which pack several values per byte, have none yet), i64 for index.
  enum class LLVMScalar { Double, Float, Half, BFloat, Int1, Int8, Int16, Int32, Int64, None };
  llvm::Type* llvmScalar(LLVMScalar k) {
    switch (k) {
      case LLVMScalar::Double: return b_.getDoubleTy();
      case LLVMScalar::Float: return b_.getFloatTy();
      case LLVMScalar::Half: return b_.getHalfTy();
      case LLVMScalar::BFloat: return b_.getBFloatTy();
      case LLVMScalar::Int1: return b_.getInt1Ty();
      case LLVMScalar::Int8: return b_.getInt8Ty();
      case LLVMScalar::Int16: return b_.getInt16Ty();
      case LLVMScalar::Int32: return b_.getInt32Ty();
      case LLVMScalar::Int64: return b_.getInt64Ty();
      case LLVMScalar::None: return nullptr;
    }
    return nullptr;
  }
  llvm::Type* scalarType(ir::Type t) {
    switch (ir::baseScalar(t)) {
#define DTYPE(ID, NAME, SHORT, BITS, KIND, EXP, MANT, ABI, IR, IRNAME, LLVM, CTYPE, DOC) \
  case ir::ScalarKind::IR: return llvmScalar(LLVMScalar::LLVM);
#include "basic/DTypes.def"
      case ir::ScalarKind::Index: return b_.getInt64Ty();
    }
    return nullptr;
  }
  // How an element sits in memory (i1 as a byte).
  llvm::Type* storageType(ir::Type elem) {
    llvm::Type* t = scalarType(elem);
    return t && t->isIntegerTy(1) ? b_.getInt8Ty() : t;
  }
  bool isUnsigned(ir::Type t) {
    ir::ScalarClass c = ir::scalarClass(ir::baseScalar(t));
    return c == ir::ScalarClass::UInt || c == ir::ScalarClass::Bool;
  }

  // ---- values
  llvm::Value* get(const ir::Value* v) { return vals_[v]; }
  void set(const ir::Value* v, llvm::Value* l) { vals_[v] = l; }
  View* view(const ir::Value* v) {
    auto it = views_.find(v);
    return it == views_.end() ? nullptr : &it->second;
  }
  // Values that flow through loops and branches: a view travels as its pointer; its shape
  // and strides are those of `tmpl` (views of one type share them: static for shared buffers).
  llvm::Value* carried(const ir::Value* v) {
    if (ir::isView(v->type)) return view(v)->ptr;
    return get(v);
  }
  void bindCarried(const ir::Value* v, llvm::Value* l, const ir::Value* tmpl) {
    if (ir::isView(v->type)) {
      View w = *view(tmpl);
      w.ptr = l;
      w.root = -1;  // a phi may join views of different tensors
      views_[v] = w;
    } else {
      set(v, l);
    }
  }
  llvm::Value* asI64(llvm::Value* v, bool isUnsignedValue = false) {
    if (v->getType()->isIntegerTy(64)) return v;
    if (auto it = narrowed_.find(v); it != narrowed_.end()) return it->second;
    return isUnsignedValue ? b_.CreateZExt(v, b_.getInt64Ty()) : b_.CreateSExt(v, b_.getInt64Ty());
  }

  // ---- entry points
  bool gpuEntry(ir::Operation& func, KernelInterface& k);
  // Vector-friendly forms of GPU bodies (VectorForms.cpp).
  bool gpuTilesPerThread(ir::Operation& func, KernelInterface& k, llvm::Value* launchTiles, unsigned tiles);
  bool lowerBodyVersioned(ir::Operation& func, KernelInterface& k);
  void remarkAlignedForm(ir::Operation& func, KernelInterface& k, bool eligible, size_t ops, bool noTensors);
  // No tile values or async copies: per-tile scalar code (memory-bound kernels).
  bool isScalarBody(ir::Operation& func);
  bool cpuEntry(ir::Operation& func, KernelInterface& k);
  void bindParams(ir::Operation& func, const std::vector<llvm::Value*>& tensorBlocks,
                  const std::vector<llvm::Value*>& scalars);

  // ---- bodies
  // Lowers the ops of `block`; returns its terminator (not lowered) or null.
  bool lowerBlock(ir::Block& block, ir::Operation** terminator);
  // Lowers one op: tile-valued ones through lowerTileOp, the others through the hook their
  // row of ir/Ops.def names (the Lower column).
  bool lowerOp(ir::Operation& op);
  // Calls the hook that op's row of ir/Ops.def names.
  bool lowerThroughTable(ir::Operation& op);
  // The type a hook reads for v: while lowerTileElementwise lowers one element of a tile op,
  // a tile value's element type (codegen presents the elements without changing the IR).
  ir::Type typeOf(const ir::Value* v) const { return perElement_ && isTileValue(v->type) ? v->type->elem : v->type; }
  // The hooks of ir/Ops.def's Lower column, one per row or family of rows. For a T_Elementwise
  // op the hook lowers one element: lowerTileElementwise presents each element as a scalar.
  bool lowerConstant(ir::Operation& op);
  bool lowerArith(ir::Operation& op);
  llvm::Value* mulHigh(llvm::Value* a, llvm::Value* b, bool isUnsignedValue);
  bool lowerMath(ir::Operation& op);
  bool lowerConvert(ir::Operation& op);
  // Conversion of one scalar of IR type `from` to `to` (lowerConvert, tile products): software
  // formats (MiniFloat.h), scales, rounding modes (`round`: the op's attribute), int4.
  llvm::Value* convertScalar(llvm::Value* v, ir::Type from, ir::Type to, const std::string& round,
                             const ir::Operation* site);
  llvm::Value* toF32(llvm::Value* v, ir::Type from);
  // The 64 random bits of a stochastic rounding at `site`: a counter-based hash of the site and
  // stochasticKey_ (the element: set by stores and tile ops), or of the tile and the value.
  llvm::Value* stochasticBits(const ir::Operation* site, llvm::Value* f32);
  llvm::Value* stochasticKey_ = nullptr;
  std::unordered_map<const ir::Operation*, uint64_t> siteSeeds_;
  // Stochastic conversions whose only use is a store: lowered by the store, keyed by the element.
  std::unordered_map<const ir::Value*, const ir::Operation*> deferred_;
  llvm::Value* tileRoundCounter_ = nullptr;  // per tile: stochastic tile conversions so far (i64 alloca)
  llvm::Value* roundCounter();
  // Sub-byte packed views.
  static unsigned packedBitsOf(ir::Type elem);
  llvm::Value* linearOffset(const View& v, const std::vector<llvm::Value*>& idx);
  llvm::Value* loadPacked(View& v, const std::vector<llvm::Value*>& idx, ir::Type elem);
  void storePacked(View& v, const std::vector<llvm::Value*>& idx, llvm::Value* value);
  bool lowerBitcast(ir::Operation& op);
  bool lowerGroup(ir::Operation& op);  // ids, barriers, shuffles, cooperative groups
  bool lowerDebug(ir::Operation& op);  // tile.clock, tile.print (LowerDebug.cpp)
  bool lowerPrint(ir::Operation& op);
  bool lowerCall(ir::Operation& op);
  bool lowerByParent(ir::Operation& op);  // terminators and functions: lowered by what holds them
  // Activations (LowerActivations.cpp), one hook per op.
  bool lowerSigmoid(ir::Operation& op);
  bool lowerGelu(ir::Operation& op);
  bool lowerSilu(ir::Operation& op);
  // Sets op's result to f(operand 0), computed in f32 for 16-bit floats.
  bool lowerUnaryFloat(ir::Operation& op, const std::function<llvm::Value*(llvm::Value*)>& f);
  // The device's math library function `name` (exp, tanh, ...) of one float.
  llvm::Value* callMath(const char* name, llvm::Value* x);
  // Integer semantics shared by both targets (docs/language.md, "Integer semantics").
  llvm::Value* totalDivision(ir::OpId id, llvm::Value* a, llvm::Value* b);
  llvm::Value* totalShift(ir::OpId id, llvm::Value* a, llvm::Value* b);
  llvm::Value* floatToInt(llvm::Value* v, llvm::Type* to, bool isUnsignedResult);
  llvm::Value* floatToInt4(llvm::Value* f);
  llvm::Value* storedValue(ir::Value* stored, View& v, const std::vector<llvm::Value*>& idx);
  bool lowerMemory(ir::Operation& op);
  bool lowerSharedAlloc(ir::Operation& op);
  void squeezeView(View& r, const ir::Attribute& squeeze);
  bool lowerFor(ir::Operation& op);
  bool lowerIf(ir::Operation& op);
  bool lowerWhile(ir::Operation& op);
  llvm::Value* address(View& v, const std::vector<llvm::Value*>& idx);
  // Byte offset `linear` (from v.ptr, row-major) after v's swizzle.
  llvm::Value* swizzledOffset(const View& v, llvm::Value* linear);
  llvm::Value* loadElem(View& v, const std::vector<llvm::Value*>& idx, ir::Type elem);
  // Under --bounds-check: every index of `idx` checked against v's extents; a failed check is
  // reported (DeviceHooks::boundsFault) and skips `access`, whose result is then zero of
  // `resultType` (null for stores). Without it, just access().
  llvm::Value* checkedAccess(const View& v, const std::vector<llvm::Value*>& idx, llvm::Type* resultType,
                             const std::function<llvm::Value*()>& access);
  // Under --bounds-check: a slice may not start before its source (it may start past the end:
  // it is clipped to nothing there).
  void checkSliceStart(const View& src, const std::vector<llvm::Value*>& at);
  void storeElem(View& v, const std::vector<llvm::Value*>& idx, llvm::Value* value, ir::Type elem);
  // mem.atomic / mem.atomic_cas on element idx of v (compare: null for mem.atomic): the old value.
  llvm::Value* atomicElem(View& v, const std::vector<llvm::Value*>& idx, const ir::Operation& op, llvm::Value* value,
                          llvm::Value* compare);
  // `async`: the IR's async.copy (cp.async on the GPU where the block allows it).
  void copyCooperative(View& dst, View& src, ir::Type elem, bool async = false);
  void copyElements(View& dst, View& src, ir::Type elem);
  // Fixed-order reductions (LowerReduce.cpp).
  llvm::Value* reduceTree(View& v, ir::Type elem, const std::string& kind);
  llvm::Value* reduceTreeInRegisters(View& v, int64_t n, ir::Type elem, const std::string& kind);
  llvm::Value* reduceTreeStreaming(View& v, llvm::Value* n, ir::Type elem, const std::string& kind);
  llvm::Value* combine(const std::string& kind, llvm::Value* a, llvm::Value* b, ir::Type elem);
  // max()/min() of floats: IEEE 754-2019 maximumNumber/minimumNumber (NaN ignored, -0 < +0), as
  // compares and selects, so that every device and -O level gives the same bits
  // (docs/language.md, "Floating-point max and min").
  llvm::Value* floatMinMax(bool isMax, llvm::Value* a, llvm::Value* b);
  std::pair<llvm::Value*, llvm::Value*> combineArg(bool isMax, llvm::Value* a, llvm::Value* ia, llvm::Value* b,
                                                   llvm::Value* ib, ir::Type valueType, ir::Type indexType);
  bool lowerGroupReduce(ir::Operation& op);
  llvm::Value* reduceParity();
  // Tags an access through a view of tensor parameter v.root: it aliases no other parameter.
  void noalias(const View& v, llvm::Instruction* access) {
    if (v.root < 0 || static_cast<size_t>(v.root) >= scopes_.size()) return;
    std::vector<llvm::Metadata*> others;
    for (size_t i = 0; i < scopes_.size(); ++i)
      if (i != static_cast<size_t>(v.root)) others.push_back(scopes_[i]);
    access->setMetadata(llvm::LLVMContext::MD_alias_scope, llvm::MDNode::get(c_, {scopes_[v.root]}));
    access->setMetadata(llvm::LLVMContext::MD_noalias, llvm::MDNode::get(c_, others));
  }

  // ---- tile values (LowerTiles.cpp). Every tile value lives in a slot of the group's
  // workspace, row-major at its static capacity, with its run-time extents in its View.
  // Binds the symbols of the parameters' extents to their run-time values (after bindParams).
  void bindSymbols(ir::Operation& func, const KernelInterface& k);
  // Gives every tile value of `func` a workspace slot and records the layout in `k`.
  bool planWorkspace(ir::Operation& func, KernelInterface& k);
  bool lowerTileOp(ir::Operation& op);
  bool lowerTileElementwise(ir::Operation& op);
  bool lowerTileDot(ir::Operation& op);
  bool lowerTileSoftmax(ir::Operation& op);
  bool lowerTileReduce(ir::Operation& op);
  // The slot of `key` (a tile-valued op result) as a View of run-time `shape`.
  View slotView(const ir::Value* key, const std::vector<llvm::Value*>& shape);
  // Runs body(idx) for every element of `shape` in row-major order, element e on tile
  // e % group size, then a group barrier.
  void forEachElement(const std::vector<llvm::Value*>& shape,
                      const std::function<void(const std::vector<llvm::Value*>&)>& body);
  // The skeleton of every counted loop here: a header block `name` with phis for the index
  // (`indexName`, from `start`) and for each carried value (`carriedName`, from `init`), the body
  // `name.body` while cond(index, carried) holds, back to the header with index + step and the
  // values body(index, carried) returns, and the exit `name.done`. Leaves the builder in the exit
  // block; returns the phis (on exit, their values after the last trip).
  using LoopPhis = std::vector<llvm::PHINode*>;
  struct LoopExit {
    llvm::PHINode* index;
    LoopPhis carried;
  };
  LoopExit loopWithPhis(const char* name, const char* indexName, llvm::Value* start, llvm::Value* step,
                        const std::vector<llvm::Value*>& init, const char* carriedName,
                        const std::function<llvm::Value*(llvm::Value*, const LoopPhis&)>& cond,
                        const std::function<std::vector<llvm::Value*>(llvm::Value*, const LoopPhis&)>& body);
  // for (i = start; i < end; i += step) body(i), unsigned i64 compares.
  void loop(llvm::Value* start, llvm::Value* end, llvm::Value* step, const std::function<void(llvm::Value*)>& body);
  // The row-major index of element `flat` of `shape`.
  std::vector<llvm::Value*> unflatten(llvm::Value* flat, const std::vector<llvm::Value*>& shape);
  // Runs body(i) for i in [0, n), i on tile i % group size, then (unless told not to) a group
  // barrier.
  void forEachIndex(llvm::Value* n, const std::function<void(llvm::Value*)>& body, bool barrier = true);
  // A sequential loop j = 0..len-1 carrying one value: returns the final acc = step(acc, j).
  llvm::Value* foldLine(llvm::Value* len, llvm::Value* init,
                        const std::function<llvm::Value*(llvm::Value*, llvm::Value*)>& step);
  // dst[idx] = src[idx] over src's extents; dst takes src's extents.
  void copyTile(View& dst, const View& src, ir::Type elem);
  // Loop-carried tile values live in the slot of the loop's (or if's) result.
  bool carryTileInto(const ir::Value* result, const ir::Value* value, View* out);
  std::vector<llvm::Value*> capacity(ir::Type t, bool* ok);

  // ---- accumulator fragments in registers on tensor cores (LowerFragments.cpp, GPU only)
  // Decides whether the function's !frag values can all live in registers (regFrags_).
  bool planRegisterFragments(ir::Operation& func, KernelInterface& k);  // with its remarks
  bool inRegisters(const ir::Value* v) const { return regFrags_ && v->type->kind == ir::TypeKind::Frag; }
  bool lowerFragmentOp(ir::Operation& op);
  // (row, col) in the tile of the thread's register j of a fragment of type t.
  std::pair<llvm::Value*, llvm::Value*> fragCoord(ir::Type t, unsigned j);

  ir::Module& m_;
  DeviceTarget target_;
  llvm::Module& out_;
  llvm::LLVMContext& c_;
  llvm::IRBuilder<> b_;
  std::string& error_;
  bool boundsCheck_ = false;
  bool perElement_ = false;  // see typeOf
  std::unique_ptr<DeviceHooks> hooks_;
  llvm::Function* fn_ = nullptr;
  std::unordered_map<const ir::Value*, llvm::Value*> vals_;
  std::unordered_map<const ir::Value*, View> views_;
  // Scoped-noalias metadata: one scope per tensor parameter (the runtime refuses launches where
  // a mut tensor overlaps another tensor parameter, docs/abi.md 3).
  std::vector<llvm::MDNode*> scopes_;
  // Facts that hold where the body is being lowered: tile index < bound (both i64). Comparisons
  // of exactly these values fold (kernels running several tiles per GPU thread).
  std::vector<std::pair<llvm::Value*, llvm::Value*>> facts_;
  // There also: 32-bit conversions of a tile index (`i = tile.linear_id()` is an i32) -> the
  // index itself, which they equal because the fast path requires the group's last tile to be
  // below 2^31 once any is made (narrowedUsed_).
  std::unordered_map<llvm::Value*, llvm::Value*> narrowed_;
  bool narrowedUsed_ = false;
  // Tile values: the group's workspace, slot offsets, symbol values.
  llvm::Value* wsBase_ = nullptr;
  std::unordered_map<const ir::Value*, llvm::Value*> slotOffset_;
  std::map<std::string, llvm::Value*> symbolValue_;
  std::map<std::string, Extent> symbolExtent_;
  bool regFrags_ = false;
  // The kernel's static group size (0 without a group shape) and its group reductions' shared
  // scratch (smem-plan's `group_scratch`, -1 when none).
  int64_t groupTiles_ = 0;
  int64_t groupScratch_ = -1;
  llvm::AllocaInst* reduceParity_ = nullptr;  // reduceParity(), per function
  unsigned warpsM_ = 2, warpsN_ = 2;          // the group's warps over a fragment (LowerFragments.cpp)
  std::unordered_map<const ir::Value*, std::vector<llvm::Value*>> fragRegs_;
};

}  // namespace tessera::codegen::detail
