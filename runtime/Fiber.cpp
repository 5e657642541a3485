//===- Fiber.cpp - Context switch and fiber stacks ------------------------------------------===//
#include "runtime/Fiber.h"

#include <cstdint>
#include <cstring>

#if defined(__SANITIZE_ADDRESS__)
#define TESSERA_RT_ASAN 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define TESSERA_RT_ASAN 1
#endif
#endif
#if defined(__SANITIZE_THREAD__)
#define TESSERA_RT_TSAN 1
#elif defined(__has_feature)
#if __has_feature(thread_sanitizer)
#define TESSERA_RT_TSAN 1
#endif
#endif
#if TESSERA_RT_TSAN
#include <sanitizer/tsan_interface.h>
#endif
#if TESSERA_RT_ASAN
#include <sanitizer/asan_interface.h>
#include <sanitizer/common_interface_defs.h>
#endif
#include <sys/mman.h>
#include <unistd.h>

#if defined(__x86_64__)
// void tessera_rt_fiber_switch(void **from_sp, void *to_sp)
// Frame saved on the stack, from low to high: mxcsr/x87cw, r15, r14, r13, r12, rbx, rbp, rip.
asm(R"(
  .text
  .globl tessera_rt_fiber_switch
  .type tessera_rt_fiber_switch,@function
  .p2align 4
tessera_rt_fiber_switch:
  pushq %rbp
  pushq %rbx
  pushq %r12
  pushq %r13
  pushq %r14
  pushq %r15
  subq $8, %rsp
  stmxcsr (%rsp)
  fnstcw 4(%rsp)
  movq %rsp, (%rdi)
  movq %rsi, %rsp
  ldmxcsr (%rsp)
  fldcw 4(%rsp)
  addq $8, %rsp
  popq %r15
  popq %r14
  popq %r13
  popq %r12
  popq %rbx
  popq %rbp
  ret
  .size tessera_rt_fiber_switch, .-tessera_rt_fiber_switch
)");
extern "C" void tessera_rt_fiber_switch(void** from, void* to);
#endif

namespace tessera::rt {

#if defined(__x86_64__)
void fiberMake(FiberContext& fiber, char* stack, size_t size, void (*entry)()) {
#if TESSERA_RT_ASAN
  ASAN_UNPOISON_MEMORY_REGION(stack, size);  // redzones of the stack's previous fiber
#endif
  auto top = reinterpret_cast<uintptr_t>(stack + size) & ~uintptr_t(15);
  // After the switch pops 64 bytes and returns, rsp = top - 8: the alignment a function sees
  // right after a call.
  auto* frame = reinterpret_cast<uint64_t*>(top - 72);
  std::memset(frame, 0, 72);
  uint32_t mxcsr = 0x1F80;  // default: all exceptions masked, round to nearest
  uint16_t fpucw = 0x037F;  // default x87 control word
  std::memcpy(reinterpret_cast<char*>(frame), &mxcsr, 4);
  std::memcpy(reinterpret_cast<char*>(frame) + 4, &fpucw, 2);
  frame[7] = reinterpret_cast<uint64_t>(entry);
  fiber.sp = frame;
  fiber.stackBottom = stack;
  fiber.stackSize = size;
}

static void rawSwitch(FiberContext& from, FiberContext& to) { tessera_rt_fiber_switch(&from.sp, to.sp); }
#else
void fiberMake(FiberContext& fiber, char* stack, size_t size, void (*entry)()) {
#if TESSERA_RT_ASAN
  ASAN_UNPOISON_MEMORY_REGION(stack, size);
#endif
  getcontext(&fiber.uc);
  fiber.uc.uc_stack.ss_sp = stack;
  fiber.uc.uc_stack.ss_size = size;
  fiber.uc.uc_link = nullptr;
  makecontext(&fiber.uc, entry, 0);
  fiber.stackBottom = stack;
  fiber.stackSize = size;
}

static void rawSwitch(FiberContext& from, FiberContext& to) { swapcontext(&from.uc, &to.uc); }
#endif

// Tells ThreadSanitizer which context runs next (the switch orders memory like a lock).
static void tsanSwitch(FiberContext& from, FiberContext& to) {
#if TESSERA_RT_TSAN
  if (!from.tsanFiber) from.tsanFiber = __tsan_get_current_fiber();
  if (!to.tsanFiber) to.tsanFiber = __tsan_create_fiber(0);
  __tsan_switch_to_fiber(to.tsanFiber, 0);
#else
  (void)from;
  (void)to;
#endif
}

void fiberSwitch(FiberContext& from, FiberContext& to) {
  tsanSwitch(from, to);
#if TESSERA_RT_ASAN
  void* fake = nullptr;
  __sanitizer_start_switch_fiber(&fake, to.stackBottom, to.stackSize);
  rawSwitch(from, to);
  __sanitizer_finish_switch_fiber(fake, nullptr, nullptr);
#else
  rawSwitch(from, to);
#endif
}

void fiberStarted(FiberContext& from) {
#if TESSERA_RT_ASAN
  __sanitizer_finish_switch_fiber(nullptr, &from.stackBottom, &from.stackSize);
#else
  (void)from;
#endif
}

void fiberExit(FiberContext& self, FiberContext& to) {
  tsanSwitch(self, to);
#if TESSERA_RT_ASAN
  __sanitizer_start_switch_fiber(nullptr, to.stackBottom, to.stackSize);  // frees our fake stack
#endif
  rawSwitch(self, to);
  __builtin_trap();  // never resumed
}

size_t FiberStack::guard() { return static_cast<size_t>(sysconf(_SC_PAGESIZE)); }

bool FiberStack::allocate(size_t size) {
  size_t page = guard();
  size = (size + page - 1) / page * page;
  void* p = mmap(nullptr, size + page, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
  if (p == MAP_FAILED) return false;
  mprotect(p, page, PROT_NONE);  // overflow faults instead of corrupting the neighbour
  base_ = static_cast<char*>(p);
  size_ = size;
  return true;
}

FiberStack::~FiberStack() {
  if (base_) munmap(base_, size_ + guard());
}

}  // namespace tessera::rt
