// A barrier for the threads of one product that gives the core away while it waits. With more
// runnable threads than cores (a laptop doing other work, a shared build machine), the thread a
// waiter waits for may be the one that needs its core; OpenMP's barrier spins for milliseconds
// first, so on such a machine each barrier can cost a whole scheduler time slice.
#pragma once
#include <atomic>
#include <thread>

namespace ember::cpu {

class YieldingBarrier {
 public:
  explicit YieldingBarrier(int threads) : threads_(threads) {}

  // Returns once all `threads` threads have called wait(); everything written before the call in
  // any thread is visible after it in every thread.
  void wait() {
    const int gen = generation_.load(std::memory_order_acquire);
    if (arrived_.fetch_add(1, std::memory_order_acq_rel) + 1 == threads_) {
      arrived_.store(0, std::memory_order_relaxed);
      generation_.fetch_add(1, std::memory_order_release);
      return;
    }
    // A short spin catches the common quiet case (the other thread is microseconds away).
    for (int spin = 0; generation_.load(std::memory_order_acquire) == gen; ++spin)
      if (spin > 256) std::this_thread::yield();
  }

 private:
  const int threads_;
  std::atomic<int> arrived_{0};
  std::atomic<int> generation_{0};
};

}  // namespace ember::cpu
