#include "framework/train/dist/poll.h"

#include <sched.h>
#include <time.h>

#include <chrono>

namespace ember::dist {

bool poll_until(const std::function<bool()>& done, double timeout_s, double nap_s) {
  using Clock = std::chrono::steady_clock;
  const auto start = Clock::now();
  const auto limit = std::chrono::duration<double>(timeout_s);
  const long nap_ns = long(nap_s * 1e9);
  for (int64_t polls = 0;; ++polls) {
    if (done()) return true;
    if (polls < 200) continue;
    const auto waited = Clock::now() - start;
    if (waited > limit) return false;
    if (waited < std::chrono::milliseconds(20)) {
      sched_yield();
    } else {
      timespec nap{time_t(nap_ns / 1000000000), nap_ns % 1000000000};
      nanosleep(&nap, nullptr);
    }
  }
}

}  // namespace ember::dist
