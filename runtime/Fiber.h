//===- Fiber.h - Minimal stackful coroutines for the CPU executor -----------------*- C++ -*-===//
//
// A group's tiles run as fibers on one worker thread so that tbarrier and warp operations can
// suspend a tile and resume the next one in a fixed order. x86-64 uses a 20-instruction switch
// (callee-saved registers, MXCSR and the x87 control word); other targets use ucontext.
//
//===----------------------------------------------------------------------------------------===//
#ifndef TESSERA_RUNTIME_FIBER_H
#define TESSERA_RUNTIME_FIBER_H

#include <cstddef>

#if !defined(__x86_64__)
#include <ucontext.h>
#endif

namespace tessera::rt {

struct FiberContext {
#if defined(__x86_64__)
  void* sp = nullptr;
#else
  ucontext_t uc;
#endif
  // Stack bounds, for AddressSanitizer's fiber annotations (a thread's own stack is learnt
  // when a fiber first starts).
  const void* stackBottom = nullptr;
  size_t stackSize = 0;
  void* tsanFiber = nullptr;  // ThreadSanitizer's identity for this context
};

// Prepares `fiber` to run entry() on [stack, stack + size). entry must first call
// fiberStarted() and must never return: it ends with fiberExit().
void fiberMake(FiberContext& fiber, char* stack, size_t size, void (*entry)());
// Saves the running context into `from` and resumes `to`.
void fiberSwitch(FiberContext& from, FiberContext& to);
// First thing in a fiber's entry: completes the switch from `from` (records its stack).
void fiberStarted(FiberContext& from);
// Leaves a finished fiber for good.
[[noreturn]] void fiberExit(FiberContext& self, FiberContext& to);

// A fiber stack with a guard page below it (mmap'd, committed lazily by the OS).
class FiberStack {
 public:
  FiberStack() = default;
  FiberStack(const FiberStack&) = delete;
  FiberStack& operator=(const FiberStack&) = delete;
  FiberStack(FiberStack&& o) noexcept : base_(o.base_), size_(o.size_) { o.base_ = nullptr; }
  ~FiberStack();
  bool allocate(size_t size);  // false if mmap failed
  char* bottom() const { return base_ ? base_ + guard() : nullptr; }
  size_t size() const { return size_; }

 private:
  static size_t guard();
  char* base_ = nullptr;
  size_t size_ = 0;
};

}  // namespace tessera::rt

#endif
