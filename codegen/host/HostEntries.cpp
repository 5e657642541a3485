// The C entry points of host functions (codegen/host/HostEntry.h), written as x86-64 LLVM IR into
// the module's host object. An entry point is straight-line code over runtime calls:
//
//   tessera_status m_f(const tessera_launch_options *opts, <parameters>, tessera_tensor *out...)
//     bind the symbols from the tensor parameters' shapes
//     tessera_malloc_async every result and temporary on opts->stream (dense, row-major),
//     tessera_tensor_init them
//     tessera_launch each step's kernel on opts->stream with default launch sizes (a view
//     argument: tessera_tensor_view of its buffer, no copy)
//     on success: tessera_free_async the temporaries on the stream (stream-ordered: no wait),
//     fill *out
//     on failure: free everything allocated, leave *out untouched, return the first error
//
// Every check of arguments happens in tessera_launch (each kernel checks dtypes, ranks and that
// its tensors agree with each other and with the results allocated from the bound symbols), so
// the entry point has no checks of its own beyond null pointers.
#include "codegen/host/HostEntries.h"

#include <algorithm>

#include "codegen/host/HostModule.h"
#include "llvm/IR/Constants.h"
#include "llvm/IR/Function.h"
#include "llvm/IR/IRBuilder.h"
#include "llvm/IR/Intrinsics.h"
#include "llvm/IR/Module.h"
#include "runtime/include/tessera/runtime.h"

namespace tessera::codegen {

std::string hostEntryName(const std::string& module, const HostEntry& e) { return module + "_" + e.name; }

llvm::Type* scalarLLVMType(llvm::LLVMContext& c, int32_t dtype) {
  switch (dtype) {
    case TESSERA_F64: return llvm::Type::getDoubleTy(c);
    case TESSERA_F32: return llvm::Type::getFloatTy(c);
    default: return llvm::Type::getIntNTy(c, scalarBytes(dtype) * 8);
  }
}

namespace {

class EntryWriter {
 public:
  EntryWriter(llvm::Module& m, llvm::GlobalVariable* kernels, const std::map<std::string, size_t>& index)
      : m_(m), c_(m.getContext()), b_(c_), kernels_(kernels), index_(index) {
    ptr_ = llvm::PointerType::get(c_, 0);
    i32_ = llvm::Type::getInt32Ty(c_);
    i64_ = llvm::Type::getInt64Ty(c_);
    auto* shapeTy = llvm::ArrayType::get(i64_, TESSERA_MAX_RANK);
    tensorTy_ = llvm::StructType::get(c_, {ptr_, i32_, i32_, shapeTy, shapeTy, i32_, i32_});
    argTy_ = llvm::StructType::get(c_, {i32_, i32_, i64_});
    optsTy_ = llvm::StructType::get(c_, {ptr_, llvm::ArrayType::get(i32_, 3), llvm::ArrayType::get(i32_, 3), i64_});
  }

  bool write(const std::string& module, const HostEntry& e, std::string& error);

 private:
  llvm::FunctionCallee fn(const char* name, llvm::Type* ret, std::vector<llvm::Type*> args) {
    return m_.getOrInsertFunction(name, llvm::FunctionType::get(ret, args, false));
  }
  llvm::Value* extent(const std::vector<ExtentOp>& program);
  // Branches to the failure block with `status` when it is not TESSERA_SUCCESS.
  void check(llvm::Value* status) {
    b_.CreateStore(status, statusSlot_);
    llvm::BasicBlock* next = llvm::BasicBlock::Create(c_, "ok", f_);
    b_.CreateCondBr(b_.CreateICmpNE(status, b_.getInt32(0)), fail_, next);
    b_.SetInsertPoint(next);
  }
  llvm::Value* allocate(const HostEntryTensor& t, const char* what);
  llvm::Value* viewOf(llvm::Value* t, const HostEntryArg& a);
  llvm::Value* replayKey(const HostEntry& e);
  bool launch(const HostEntryStep& s, const HostEntry& e, llvm::Value* opts, std::string& error);

  llvm::Module& m_;
  llvm::LLVMContext& c_;
  llvm::IRBuilder<> b_;
  llvm::GlobalVariable* kernels_;
  const std::map<std::string, size_t>& index_;
  llvm::Type *ptr_, *i32_, *i64_;
  llvm::StructType *tensorTy_, *argTy_, *optsTy_;
  llvm::Function* f_ = nullptr;
  llvm::BasicBlock* fail_ = nullptr;
  llvm::Value* statusSlot_ = nullptr;
  llvm::Value* capturingSlot_ = nullptr;  // capture_graph: the stream is capturing our launches
  llvm::Value* graphSlot_ = nullptr;      // capture_graph: the captured graph
  std::vector<llvm::Value*> symbols_;
  std::vector<llvm::Value*> dataSlots_;  // every allocation, null until made
  std::vector<llvm::Value*> outputs_, temps_, params_;
  llvm::Value* stream_ = nullptr;  // opts->stream
};

llvm::Value* EntryWriter::extent(const std::vector<ExtentOp>& program) {
  std::vector<llvm::Value*> stack;
  for (const ExtentOp& op : program) {
    if (op.op == ExtentOp::Const) {
      stack.push_back(b_.getInt64(op.value));
      continue;
    }
    if (op.op == ExtentOp::Symbol) {
      stack.push_back(symbols_.at(op.symbol));
      continue;
    }
    llvm::Value* r = stack.back();
    stack.pop_back();
    llvm::Value* l = stack.back();
    stack.pop_back();
    switch (op.op) {
      case ExtentOp::Add: stack.push_back(b_.CreateAdd(l, r)); break;
      case ExtentOp::Sub: stack.push_back(b_.CreateSub(l, r)); break;
      case ExtentOp::Mul: stack.push_back(b_.CreateMul(l, r)); break;
      case ExtentOp::Div: stack.push_back(b_.CreateSDiv(l, r)); break;
      case ExtentOp::Mod: stack.push_back(b_.CreateSRem(l, r)); break;
      default:  // CeilDiv
        stack.push_back(b_.CreateSDiv(b_.CreateSub(b_.CreateAdd(l, r), b_.getInt64(1)), r));
        break;
    }
  }
  return stack.empty() ? b_.getInt64(0) : stack.back();
}

// A dense tensor of `t`'s shape: its view (an alloca the caller reads) after tessera_malloc.
llvm::Value* EntryWriter::allocate(const HostEntryTensor& t, const char* what) {
  llvm::IRBuilder<> entry(&f_->getEntryBlock(), f_->getEntryBlock().begin());
  llvm::Value* view = entry.CreateAlloca(tensorTy_, nullptr, what);
  llvm::Value* shape = entry.CreateAlloca(llvm::ArrayType::get(i64_, TESSERA_MAX_RANK), nullptr, "shape");
  llvm::Value* data = entry.CreateAlloca(ptr_, nullptr, "data");
  entry.CreateStore(llvm::ConstantPointerNull::get(llvm::PointerType::get(c_, 0)), data);
  dataSlots_.push_back(data);
  llvm::Value* numel = b_.getInt64(1);
  for (size_t i = 0; i < t.shape.size(); ++i) {
    llvm::Value* x = extent(t.shape[i]);
    b_.CreateStore(x, b_.CreateConstInBoundsGEP2_64(llvm::ArrayType::get(i64_, TESSERA_MAX_RANK), shape, 0, i));
    numel = b_.CreateMul(numel, x);
  }
  llvm::Value* bytes =
      b_.CreateUDiv(b_.CreateAdd(b_.CreateMul(numel, b_.getInt64(t.elemBits)), b_.getInt64(7)), b_.getInt64(8));
  // Empty tensors get no memory (their data is null, which launches accept).
  llvm::BasicBlock* alloc = llvm::BasicBlock::Create(c_, "alloc", f_);
  llvm::BasicBlock* init = llvm::BasicBlock::Create(c_, "init", f_);
  b_.CreateCondBr(b_.CreateICmpSGT(numel, b_.getInt64(0)), alloc, init);
  b_.SetInsertPoint(alloc);
  check(b_.CreateCall(fn("tessera_malloc_async", i32_, {ptr_, i64_, ptr_}), {data, bytes, stream_}));
  b_.CreateBr(init);
  b_.SetInsertPoint(init);
  b_.CreateCall(
      fn("tessera_tensor_init", b_.getVoidTy(), {ptr_, ptr_, i32_, i32_, ptr_, i32_}),
      {view, b_.CreateLoad(ptr_, data), b_.getInt32(t.dtype), b_.getInt32(t.shape.size()), shape, b_.getInt32(0)});
  return view;
}

// A view of tensor `t` (tessera_tensor_view checks that t is dense and holds the view).
llvm::Value* EntryWriter::viewOf(llvm::Value* t, const HostEntryArg& a) {
  llvm::IRBuilder<> entry(&f_->getEntryBlock(), f_->getEntryBlock().begin());
  llvm::Value* view = entry.CreateAlloca(tensorTy_, nullptr, "view");
  auto* shapeTy = llvm::ArrayType::get(i64_, TESSERA_MAX_RANK);
  llvm::Value* extents = entry.CreateAlloca(shapeTy, nullptr, "view_shape");
  for (size_t i = 0; i < a.view.size(); ++i)
    b_.CreateStore(extent(a.view[i]), b_.CreateConstInBoundsGEP2_64(shapeTy, extents, 0, i));
  llvm::Value* strides = llvm::ConstantPointerNull::get(llvm::PointerType::get(c_, 0));
  if (!a.viewStrides.empty()) {
    strides = entry.CreateAlloca(shapeTy, nullptr, "view_strides");
    for (size_t i = 0; i < a.viewStrides.size(); ++i)
      b_.CreateStore(extent(a.viewStrides[i]), b_.CreateConstInBoundsGEP2_64(shapeTy, strides, 0, i));
  }
  check(b_.CreateCall(fn("tessera_tensor_view", i32_, {ptr_, i64_, i32_, ptr_, ptr_, ptr_}),
                      {t, extent(a.viewOffset), b_.getInt32(a.view.size()), extents, strides, view}));
  return view;
}

// The tessera_graph_key of this call: every tensor parameter, result and temporary (their views,
// which hold the addresses this call allocated), and the scalar parameters' bits.
llvm::Value* EntryWriter::replayKey(const HostEntry& e) {
  llvm::IRBuilder<> entry(&f_->getEntryBlock(), f_->getEntryBlock().begin());
  std::vector<llvm::Value*> tensors;
  std::vector<size_t> scalars;
  for (size_t i = 0; i < e.params.size(); ++i)
    if (e.params[i].isTensor)
      tensors.push_back(params_[i]);
    else
      scalars.push_back(i);
  tensors.insert(tensors.end(), outputs_.begin(), outputs_.end());
  tensors.insert(tensors.end(), temps_.begin(), temps_.end());
  llvm::Value* list = entry.CreateAlloca(ptr_, b_.getInt32(std::max<size_t>(tensors.size(), 1)), "key_tensors");
  for (size_t i = 0; i < tensors.size(); ++i) b_.CreateStore(tensors[i], b_.CreateConstGEP1_64(ptr_, list, i));
  llvm::Value* bits = entry.CreateAlloca(i64_, b_.getInt32(std::max<size_t>(scalars.size(), 1)), "key_scalars");
  for (size_t i = 0; i < scalars.size(); ++i) {
    llvm::Value* slot = b_.CreateConstGEP1_64(i64_, bits, i);
    b_.CreateStore(b_.getInt64(0), slot);
    b_.CreateStore(params_[scalars[i]], slot);  // the scalar's own bytes, the rest zero
  }
  auto* keyTy = llvm::StructType::get(c_, {ptr_, i32_, ptr_, i32_});
  llvm::Value* key = entry.CreateAlloca(keyTy, nullptr, "key");
  b_.CreateStore(list, b_.CreateStructGEP(keyTy, key, 0));
  b_.CreateStore(b_.getInt32(tensors.size()), b_.CreateStructGEP(keyTy, key, 1));
  b_.CreateStore(bits, b_.CreateStructGEP(keyTy, key, 2));
  b_.CreateStore(b_.getInt32(scalars.size()), b_.CreateStructGEP(keyTy, key, 3));
  return key;
}

bool EntryWriter::launch(const HostEntryStep& s, const HostEntry& e, llvm::Value* opts, std::string& error) {
  auto it = index_.find(s.kernel);
  if (it == index_.end()) {
    error = "internal error: host function '" + e.name + "' launches kernel '" + s.kernel + "', which the module lacks";
    return false;
  }
  llvm::IRBuilder<> entry(&f_->getEntryBlock(), f_->getEntryBlock().begin());
  llvm::Value* args = entry.CreateAlloca(argTy_, b_.getInt32(s.args.size()), "args");
  for (size_t i = 0; i < s.args.size(); ++i) {
    const HostEntryArg& a = s.args[i];
    llvm::Value* slot = b_.CreateGEP(argTy_, args, b_.getInt32(i));
    llvm::Value* value = b_.CreateStructGEP(argTy_, slot, 2);
    b_.CreateStore(b_.getInt64(0), value);
    if (a.kind == HostEntryArg::Kind::Extent) {
      b_.CreateStore(b_.getInt32(TESSERA_PARAM_SCALAR), b_.CreateStructGEP(argTy_, slot, 0));
      b_.CreateStore(b_.getInt32(TESSERA_I64), b_.CreateStructGEP(argTy_, slot, 1));
      b_.CreateStore(extent(a.extent), value);
      continue;
    }
    if (a.kind == HostEntryArg::Kind::Float) {
      b_.CreateStore(b_.getInt32(TESSERA_PARAM_SCALAR), b_.CreateStructGEP(argTy_, slot, 0));
      b_.CreateStore(b_.getInt32(a.dtype), b_.CreateStructGEP(argTy_, slot, 1));
      llvm::Type* ft = scalarLLVMType(c_, a.dtype);
      llvm::Value* x = llvm::ConstantFP::get(ft, a.value);
      if (a.invSqrt) {
        llvm::Value* root = b_.CreateUnaryIntrinsic(llvm::Intrinsic::sqrt, b_.CreateSIToFP(extent(a.extent), ft));
        x = b_.CreateFDiv(llvm::ConstantFP::get(ft, 1.0), root);
      }
      b_.CreateStore(x, value);
      continue;
    }
    if (a.kind == HostEntryArg::Kind::ScalarParam) {
      b_.CreateStore(b_.getInt32(TESSERA_PARAM_SCALAR), b_.CreateStructGEP(argTy_, slot, 0));
      b_.CreateStore(b_.getInt32(e.params[a.index].dtype), b_.CreateStructGEP(argTy_, slot, 1));
      b_.CreateStore(params_[a.index], value);
      continue;
    }
    llvm::Value* t = a.kind == HostEntryArg::Kind::Param    ? params_[a.index]
                     : a.kind == HostEntryArg::Kind::Output ? outputs_[a.index]
                                                            : temps_[a.index];
    if (!a.view.empty()) t = viewOf(t, a);
    b_.CreateStore(b_.getInt32(TESSERA_PARAM_TENSOR), b_.CreateStructGEP(argTy_, slot, 0));
    b_.CreateStore(b_.getInt32(0), b_.CreateStructGEP(argTy_, slot, 1));
    b_.CreateStore(t, value);
  }
  llvm::Value* desc = b_.CreateConstInBoundsGEP2_64(kernels_->getValueType(), kernels_, 0, it->second);
  check(b_.CreateCall(fn("tessera_launch", i32_, {ptr_, ptr_, ptr_, i32_}),
                      {desc, opts, args, b_.getInt32(s.args.size())}));
  return true;
}

bool EntryWriter::write(const std::string& module, const HostEntry& e, std::string& error) {
  std::vector<llvm::Type*> types = {ptr_};
  for (const HostEntryParam& p : e.params) types.push_back(p.isTensor ? ptr_ : scalarLLVMType(c_, p.dtype));
  for (size_t i = 0; i < e.outputs.size(); ++i) types.push_back(ptr_);
  std::string name = hostEntryName(module, e);
  if (m_.getFunction(name)) {
    error = "host function '" + e.name + "' gives the C name '" + name + "', which a kernel's launch function has";
    return false;
  }
  f_ =
      llvm::Function::Create(llvm::FunctionType::get(i32_, types, false), llvm::GlobalValue::ExternalLinkage, name, m_);
  b_.SetInsertPoint(llvm::BasicBlock::Create(c_, "entry", f_));
  fail_ = llvm::BasicBlock::Create(c_, "fail", f_);
  statusSlot_ = b_.CreateAlloca(i32_, nullptr, "status");
  if (e.captureGraph) {
    capturingSlot_ = b_.CreateAlloca(b_.getInt1Ty(), nullptr, "capturing");
    graphSlot_ = b_.CreateAlloca(ptr_, nullptr, "graph");
    b_.CreateStore(b_.getFalse(), capturingSlot_);
  }
  for (size_t i = 0; i < e.params.size(); ++i) params_.push_back(f_->getArg(i + 1));
  // The caller's stream, default launch sizes.
  llvm::Value* opts = b_.CreateAlloca(optsTy_, nullptr, "opts");
  b_.CreateStore(llvm::Constant::getNullValue(optsTy_), opts);
  // opts->stream when opts is given (read through a select of pointers: a select of loads would
  // read through a null opts).
  llvm::Value* from = b_.CreateSelect(b_.CreateIsNull(f_->getArg(0)), opts, f_->getArg(0));
  stream_ = b_.CreateLoad(ptr_, from, "stream");
  b_.CreateStore(stream_, opts);
  // Null views or result pointers.
  llvm::Value* anyNull = b_.getFalse();
  for (size_t i = 0; i < e.params.size(); ++i)
    if (e.params[i].isTensor) anyNull = b_.CreateOr(anyNull, b_.CreateIsNull(params_[i]));
  for (size_t i = 0; i < e.outputs.size(); ++i)
    anyNull = b_.CreateOr(anyNull, b_.CreateIsNull(f_->getArg(1 + e.params.size() + i)));
  check(b_.CreateSelect(anyNull, b_.getInt32(TESSERA_ERROR_NULL_POINTER), b_.getInt32(0)));
  for (const HostEntrySymbol& s : e.symbols) {
    llvm::Value* at =
        b_.CreateInBoundsGEP(tensorTy_, params_[s.param], {b_.getInt32(0), b_.getInt32(3), b_.getInt32(s.axis)});
    symbols_.push_back(b_.CreateLoad(i64_, at, s.name));
  }
  for (const HostEntryTensor& t : e.outputs) outputs_.push_back(allocate(t, "result"));
  for (const HostEntryTensor& t : e.temps) temps_.push_back(allocate(t, "temp"));
  // capture_graph on a stream: the launches are captured (the allocations above and the frees
  // below stay outside the graph) and the graph replays through the entry point's cache: made
  // on the first call, updated with each call's arguments after it (tessera_graph_replay). The
  // default stream cannot capture: there the launches run directly.
  // A call whose arguments (tensors, scalars, stream) equal those the cached graph was captured
  // with launches that graph as it is (tessera_graph_launch_cached): no capture, no update.
  llvm::GlobalVariable* cache = nullptr;
  llvm::Value* key = nullptr;
  llvm::BasicBlock* after = nullptr;
  if (e.captureGraph) {
    cache = new llvm::GlobalVariable(m_, ptr_, false, llvm::GlobalValue::InternalLinkage,
                                     llvm::ConstantPointerNull::get(llvm::PointerType::get(c_, 0)), name + ".graph");
    key = replayKey(e);
    after = llvm::BasicBlock::Create(c_, "launched", f_);
    llvm::BasicBlock* lookup = llvm::BasicBlock::Create(c_, "lookup", f_);
    llvm::BasicBlock* begin = llvm::BasicBlock::Create(c_, "capture", f_);
    llvm::BasicBlock* launches = llvm::BasicBlock::Create(c_, "launches", f_);
    b_.CreateCondBr(b_.CreateIsNull(stream_), launches, lookup);
    b_.SetInsertPoint(lookup);
    llvm::Value* hit =
        llvm::IRBuilder<>(&f_->getEntryBlock(), f_->getEntryBlock().begin()).CreateAlloca(i32_, nullptr, "hit");
    check(b_.CreateCall(fn("tessera_graph_launch_cached", i32_, {ptr_, ptr_, ptr_, ptr_}), {cache, key, stream_, hit}));
    b_.CreateCondBr(b_.CreateICmpNE(b_.CreateLoad(i32_, hit), b_.getInt32(0)), after, begin);
    b_.SetInsertPoint(begin);
    check(b_.CreateCall(fn("tessera_stream_begin_capture", i32_, {ptr_}), {stream_}));
    b_.CreateStore(b_.getTrue(), capturingSlot_);
    b_.CreateBr(launches);
    b_.SetInsertPoint(launches);
  }
  for (const HostEntryStep& s : e.steps)
    if (!launch(s, e, opts, error)) return false;
  if (e.captureGraph) {
    llvm::BasicBlock* end = llvm::BasicBlock::Create(c_, "end_capture", f_);
    b_.CreateCondBr(b_.CreateLoad(b_.getInt1Ty(), capturingSlot_), end, after);
    b_.SetInsertPoint(end);
    b_.CreateStore(b_.getFalse(), capturingSlot_);
    check(b_.CreateCall(fn("tessera_stream_end_capture", i32_, {ptr_, ptr_}), {stream_, graphSlot_}));
    check(b_.CreateCall(fn("tessera_graph_replay_keyed", i32_, {ptr_, ptr_, ptr_, ptr_}),
                        {cache, b_.CreateLoad(ptr_, graphSlot_), key, stream_}));
    b_.CreateBr(after);
    b_.SetInsertPoint(after);
  }
  // Success: the temporaries go back to the pool once the launches that read them are done
  // (stream-ordered: the entry does not wait).
  auto freeFn = fn("tessera_free_async", i32_, {ptr_, ptr_});
  for (size_t i = e.outputs.size(); i < e.outputs.size() + e.temps.size(); ++i)
    b_.CreateCall(freeFn, {b_.CreateLoad(ptr_, dataSlots_[i]), stream_});
  for (size_t i = 0; i < e.outputs.size(); ++i)
    b_.CreateStore(b_.CreateLoad(tensorTy_, outputs_[i]), f_->getArg(1 + e.params.size() + i));
  b_.CreateRet(b_.getInt32(0));
  // Failure: free what was allocated (null slots are no-ops), return the first error.
  b_.SetInsertPoint(fail_);
  if (e.captureGraph) {
    // A launch failed while capturing: end the capture and drop what it recorded.
    llvm::BasicBlock* abort = llvm::BasicBlock::Create(c_, "abort_capture", f_);
    llvm::BasicBlock* drop = llvm::BasicBlock::Create(c_, "drop_capture", f_);
    llvm::BasicBlock* frees = llvm::BasicBlock::Create(c_, "frees", f_);
    b_.CreateCondBr(b_.CreateLoad(b_.getInt1Ty(), capturingSlot_), abort, frees);
    b_.SetInsertPoint(abort);
    llvm::Value* ended = b_.CreateCall(fn("tessera_stream_end_capture", i32_, {ptr_, ptr_}), {stream_, graphSlot_});
    b_.CreateCondBr(b_.CreateICmpEQ(ended, b_.getInt32(0)), drop, frees);
    b_.SetInsertPoint(drop);
    b_.CreateCall(fn("tessera_graph_destroy", i32_, {ptr_}), {b_.CreateLoad(ptr_, graphSlot_)});
    b_.CreateBr(frees);
    b_.SetInsertPoint(frees);
  }
  for (llvm::Value* slot : dataSlots_) b_.CreateCall(freeFn, {b_.CreateLoad(ptr_, slot), stream_});
  b_.CreateRet(b_.CreateLoad(i32_, statusSlot_));
  return true;
}

}  // namespace

bool emitHostEntries(llvm::Module& m, const std::string& module, const std::vector<HostEntry>& entries,
                     llvm::GlobalVariable* kernels, const std::map<std::string, size_t>& kernelIndex,
                     std::string& error) {
  for (const HostEntry& e : entries) {
    EntryWriter w(m, kernels, kernelIndex);
    if (!w.write(module, e, error)) return false;
  }
  return true;
}

std::string hostEntryDeclaration(const std::string& module, const HostEntry& e) {
  std::string s =
      "/* " + e.signature + "\n * Host function: launches " + std::to_string(e.steps.size()) +
      " kernel(s) in order on opts->stream. Each result is allocated with tessera_malloc_async\n"
      " * and owned by the caller (tessera_free(out->data)); on an error nothing is\n"
      " * returned and nothing leaks." +
      std::string(e.captureGraph
                      ? "\n * capture_graph: on a stream other than the default one, the launches run as one graph,\n"
                        " * captured and replayed (updated with each call's arguments; a call with the\n"
                        " * arguments of the cached graph launches it without capturing). */\n"
                      : " */\n");
  s += "tessera_status " + hostEntryName(module, e) + "(const tessera_launch_options *opts";
  for (const HostEntryParam& p : e.params)
    s += p.isTensor ? ", const tessera_tensor *" + headerParamName(p.name)
                    : std::string(", ") + scalarCType(p.dtype) + " " + headerParamName(p.name);
  for (size_t i = 0; i < e.outputs.size(); ++i) s += ", tessera_tensor *out" + std::to_string(i);
  return s + ");\n";
}

}  // namespace tessera::codegen
