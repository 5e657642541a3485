//===- CpuGroup.cpp - Group execution, fibers, barriers and warp operations ------------------===//
#include "runtime/CpuGroup.h"

#include <algorithm>
#include <chrono>
#include <cstring>

namespace tessera::rt {

namespace {
constexpr uint32_t kWarp = 32;
constexpr size_t kDefaultStack = 256 * 1024;
thread_local GroupRunner* activeRunner = nullptr;

GroupRunner& runnerOf(const tessera_cpu_ctx* ctx) { return *static_cast<GroupRunner*>(ctx->runtime); }

void opBarrier(const tessera_cpu_ctx* ctx) {
  GroupRunner& r = runnerOf(ctx);
  r.partitionSync(ctx->tile_linear, r.tiles());
}
void opPartitionSync(const tessera_cpu_ctx* ctx, uint32_t size) { runnerOf(ctx).partitionSync(ctx->tile_linear, size); }
uint64_t opShuffle(const tessera_cpu_ctx* ctx, uint64_t v, int32_t mode, int32_t x, uint32_t width) {
  return runnerOf(ctx).shuffle(ctx->tile_linear, v, mode, x, width);
}
uint32_t opVote(const tessera_cpu_ctx* ctx, int32_t mode, int32_t pred) {
  return runnerOf(ctx).vote(ctx->tile_linear, mode, pred);
}
void opFault(const tessera_cpu_ctx* ctx, const char* message) { runnerOf(ctx).reportFault(message); }
int64_t opClock(const tessera_cpu_ctx*) {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

const tessera_cpu_ops kOps = {opBarrier, opPartitionSync, opShuffle, opVote, opFault, opClock};
}  // namespace

bool GroupRunner::runTiles(const LaunchPlan& plan, uint64_t first, uint64_t count, std::string& fault) {
  plan_ = &plan;
  faulted_ = false;
  faultMessage_.clear();
  tessera_cpu_ctx c{};
  for (int i = 0; i < 3; ++i) {
    c.group_shape[i] = plan.group[i];
    c.grid_shape[i] = plan.grid[i];
  }
  uint64_t left = static_cast<uint64_t>(plan.launchTiles) - first;
  c.group_tiles = static_cast<uint32_t>(std::min<uint64_t>({count, left, UINT32_MAX}));
  c.group_linear = first / plan.groupTiles;
  c.grid_groups = plan.groups;
  c.global_linear = first;
  c.launch_tiles = static_cast<uint64_t>(plan.launchTiles);
  c.ops = &kOps;
  c.runtime = this;
  tiles_ = c.group_tiles;
  plan.kernel->cpu_entry(const_cast<void**>(plan.argPtrs.data()), &c);
  if (faulted_) fault = faultMessage_;
  return !faulted_;
}

bool GroupRunner::run(const LaunchPlan& plan, uint64_t group, std::string& fault) {
  const tessera_kernel_desc& k = *plan.kernel;
  plan_ = &plan;
  faulted_ = false;
  faultMessage_.clear();
  // Ungrouped default launches end with a partial group.
  uint64_t first = group * plan.groupTiles;
  tiles_ = static_cast<uint32_t>(std::min<uint64_t>(plan.groupTiles, static_cast<uint64_t>(plan.launchTiles) - first));

  size_t shared = plan.sharedBytes;
  sharedStorage_.resize(shared + 64);
  auto* sharedBase =
      reinterpret_cast<unsigned char*>((reinterpret_cast<uintptr_t>(sharedStorage_.data()) + 63) & ~uintptr_t(63));
  std::memset(sharedBase, 0, shared);  // deterministic contents, unlike the GPU's

  tessera_cpu_ctx base{};
  for (int i = 0; i < 3; ++i) {
    base.group_shape[i] = plan.group[i];
    base.grid_shape[i] = plan.grid[i];
  }
  base.group_tiles = plan.groupTiles;
  base.group_id[0] = static_cast<uint32_t>(group % plan.grid[0]);
  base.group_id[1] = static_cast<uint32_t>(group / plan.grid[0] % plan.grid[1]);
  base.group_id[2] = static_cast<uint32_t>(group / (uint64_t(plan.grid[0]) * plan.grid[1]));
  base.group_linear = group;
  base.grid_groups = plan.groups;
  base.global_linear = first;
  base.launch_tiles = static_cast<uint64_t>(plan.launchTiles);
  base.shared = sharedBase;
  base.shared_bytes = shared;
  // The group's workspace (tile values): one group's worth per worker, reused group after group.
  if (plan.workspaceGroupBytes) {
    workspaceStorage_.resize(plan.workspaceGroupBytes + TESSERA_WORKSPACE_ALIGN);
    base.workspace =
        reinterpret_cast<void*>((reinterpret_cast<uintptr_t>(workspaceStorage_.data()) + TESSERA_WORKSPACE_ALIGN - 1) &
                                ~uintptr_t(TESSERA_WORKSPACE_ALIGN - 1));
    base.workspace_bytes = plan.workspaceGroupBytes;
  }
  base.ops = &kOps;
  base.runtime = this;

  if (k.flags & TESSERA_KERNEL_CPU_PER_GROUP) {
    // One call runs the whole group: it needs the group's context only, not one per tile.
    ctx_.resize(1);
    ctx_[0] = base;
    ctx_[0].global_linear = first;
    k.cpu_entry(const_cast<void**>(plan.argPtrs.data()), &ctx_[0]);
    if (faulted_) fault = faultMessage_;
    return !faulted_;
  }
  ctx_.assign(tiles_, base);
  for (uint32_t t = 0; t < tiles_; ++t) {
    tessera_cpu_ctx& c = ctx_[t];
    c.tile_linear = t;
    c.tile_id[0] = t % plan.group[0];
    c.tile_id[1] = t / plan.group[0] % plan.group[1];
    c.tile_id[2] = t / (plan.group[0] * plan.group[1]);
    c.global_linear = first + t;
  }
  void** args = const_cast<void**>(plan.argPtrs.data());

  if (!(k.flags & TESSERA_KERNEL_CPU_SYNC)) {
    for (uint32_t t = 0; t < tiles_ && !faulted_; ++t) k.cpu_entry(args, &ctx_[t]);
  } else {
    fiberMode_ = true;
    runFibers();
    fiberMode_ = false;
  }
  if (faulted_) fault = faultMessage_;
  return !faulted_;
}

void GroupRunner::fiberMain() {
  GroupRunner& r = *activeRunner;
  uint32_t t = r.current_;
  fiberStarted(r.scheduler_);
  r.plan_->kernel->cpu_entry(const_cast<void**>(r.plan_->argPtrs.data()), &r.ctx_[t]);
  r.state_[t] = State::Finished;
  for (Partitions& ps : r.partitions_) {
    ++ps.finished[t / ps.size];
    r.releaseIfComplete(ps, t / ps.size);
  }
  fiberExit(r.fibers_[t], r.scheduler_);
}

void GroupRunner::runFibers() {
  size_t stack = plan_->kernel->cpu_stack_bytes ? plan_->kernel->cpu_stack_bytes : kDefaultStack;
  if (!stacks_.empty() && stacks_.front().size() < stack)
    stacks_.clear();  // a kernel needs bigger stacks: reallocate all
  while (stacks_.size() < tiles_) {
    FiberStack s;
    if (!s.allocate(stack)) {
      reportFault("cannot allocate fiber stacks for the group's tiles");
      return;
    }
    stacks_.push_back(std::move(s));
  }
  fibers_.resize(tiles_);
  state_.assign(tiles_, State::Runnable);
  waitSize_.assign(tiles_, 0);
  exchange_.assign(tiles_, 0);
  partitions_.clear();
  for (uint32_t t = 0; t < tiles_; ++t)
    fiberMake(fibers_[t], stacks_[t].bottom(), stacks_[t].size(), &GroupRunner::fiberMain);

  GroupRunner* saved = activeRunner;
  activeRunner = this;
  for (;;) {
    bool ran = false, done = true;
    for (uint32_t t = 0; t < tiles_; ++t) {
      if (state_[t] != State::Runnable) continue;
      current_ = t;
      fiberSwitch(scheduler_, fibers_[t]);
      ran = true;
    }
    for (uint32_t t = 0; t < tiles_; ++t) done &= state_[t] == State::Finished;
    if (done) break;
    if (!ran) {
      // Only reachable when tiles wait at different barriers (sema rejects such kernels).
      uint32_t t = 0;
      while (state_[t] != State::Blocked) ++t;
      reportFault(("barrier deadlock: tile " + std::to_string(t) + " waits at a barrier of " +
                   std::to_string(waitSize_[t]) + " tiles that the other tiles never reach")
                      .c_str());
      break;  // abandoned fibers are re-made for the next group
    }
  }
  activeRunner = saved;
}

GroupRunner::Partitions& GroupRunner::partitionsFor(uint32_t size) {
  for (Partitions& ps : partitions_)
    if (ps.size == size) return ps;
  Partitions ps;
  ps.size = size;
  uint32_t count = (tiles_ + size - 1) / size;
  ps.arrived.assign(count, 0);
  ps.finished.assign(count, 0);
  for (uint32_t t = 0; t < tiles_; ++t)
    if (state_[t] == State::Finished) ++ps.finished[t / size];
  partitions_.push_back(std::move(ps));
  return partitions_.back();
}

uint32_t GroupRunner::live(const Partitions& ps, uint32_t index) const {
  uint32_t begin = index * ps.size;
  return std::min(ps.size, tiles_ - begin) - ps.finished[index];
}

void GroupRunner::releaseIfComplete(Partitions& ps, uint32_t index) {
  if (!ps.arrived[index] || ps.arrived[index] < live(ps, index)) return;
  ps.arrived[index] = 0;
  uint32_t begin = index * ps.size, end = std::min(tiles_, begin + ps.size);
  for (uint32_t t = begin; t < end; ++t)
    if (state_[t] == State::Blocked && waitSize_[t] == ps.size) state_[t] = State::Runnable;
}

void GroupRunner::partitionSync(uint32_t tile, uint32_t size) {
  if (!fiberMode_) {
    reportFault(
        "kernel uses a barrier or warp operation but its descriptor lacks "
        "TESSERA_KERNEL_CPU_SYNC");
    return;
  }
  if (size == 0 || size > tiles_) size = tiles_;
  Partitions& ps = partitionsFor(size);
  uint32_t index = tile / size;
  ++ps.arrived[index];
  if (ps.arrived[index] >= live(ps, index)) {
    releaseIfComplete(ps, index);  // last to arrive: release the others and go on
    return;
  }
  state_[tile] = State::Blocked;
  waitSize_[tile] = size;
  fiberSwitch(fibers_[tile], scheduler_);
}

uint64_t GroupRunner::shuffle(uint32_t tile, uint64_t value, int32_t mode, int32_t x, uint32_t width) {
  uint32_t lane = tile % kWarp, warpBase = tile - lane;
  uint32_t lanes = std::min(kWarp, tiles_ - warpBase);
  if (width == 0 || width > kWarp || (width & (width - 1))) width = kWarp;
  exchange_[tile] = value;
  partitionSync(tile, kWarp);
  int64_t seg = lane & ~(width - 1), src = lane;
  switch (mode) {
    case TESSERA_SHFL_IDX: src = seg + ((x % int64_t(width)) + width) % width; break;
    case TESSERA_SHFL_UP: src = int64_t(lane) - x; break;
    case TESSERA_SHFL_DOWN: src = int64_t(lane) + x; break;
    case TESSERA_SHFL_XOR: src = int64_t(lane ^ uint32_t(x)); break;
    default: break;
  }
  // As PTX shfl.sync: a source outside the segment (idx, up, down) or after it (xor reaches the
  // earlier segments), past the warp's live tiles, or not live gives the caller its own value.
  int64_t lo = mode == TESSERA_SHFL_XOR ? 0 : seg;
  if (src < lo || src >= seg + width || src >= lanes || !laneLive(warpBase + uint32_t(src))) src = lane;
  uint64_t result = exchange_[warpBase + src];
  partitionSync(tile, kWarp);  // nobody overwrites a slot before every lane has read
  return result;
}

uint32_t GroupRunner::vote(uint32_t tile, int32_t mode, int32_t pred) {
  uint32_t lane = tile % kWarp, warpBase = tile - lane;
  uint32_t lanes = std::min(kWarp, tiles_ - warpBase);
  exchange_[tile] = pred != 0;
  partitionSync(tile, kWarp);
  uint32_t ballot = 0, liveMask = 0;
  for (uint32_t l = 0; l < lanes; ++l) {
    if (!laneLive(warpBase + l)) continue;
    liveMask |= 1u << l;
    if (exchange_[warpBase + l]) ballot |= 1u << l;
  }
  partitionSync(tile, kWarp);
  switch (mode) {
    case TESSERA_VOTE_ALL: return ballot == liveMask;
    case TESSERA_VOTE_ANY: return ballot != 0;
    default: return ballot;
  }
}

void GroupRunner::reportFault(const char* message) {
  if (faulted_) return;  // keep the first
  faulted_ = true;
  faultMessage_ = message ? message : "kernel fault";
}

}  // namespace tessera::rt
