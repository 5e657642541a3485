//===- ThreadPool.h - Fixed pool of workers for the CPU executor ------------------*- C++ -*-===//
#ifndef TESSERA_RUNTIME_THREADPOOL_H
#define TESSERA_RUNTIME_THREADPOOL_H

#include <condition_variable>
#include <functional>
#include <mutex>
#include <thread>
#include <vector>

namespace tessera::rt {

// run(fn) calls fn(w) for every worker w in [0, size()) concurrently and waits; worker 0 is the
// calling thread. Threads persist between runs (their fiber stacks and shared memory too).
class ThreadPool {
 public:
  explicit ThreadPool(unsigned size);
  ~ThreadPool();
  ThreadPool(const ThreadPool&) = delete;
  ThreadPool& operator=(const ThreadPool&) = delete;
  unsigned size() const { return static_cast<unsigned>(threads_.size()) + 1; }
  void run(const std::function<void(unsigned)>& fn);

 private:
  void worker(unsigned index);

  std::vector<std::thread> threads_;
  std::mutex mutex_;
  std::condition_variable wake_, done_;
  const std::function<void(unsigned)>* job_ = nullptr;
  unsigned long generation_ = 0;
  unsigned pending_ = 0;
  bool stop_ = false;
};

}  // namespace tessera::rt

#endif
