// parallel_for: splits [0, n) into chunks over OpenMP threads when the work is large enough to
// pay for waking them. Kernels call this instead of writing pragmas themselves.
#pragma once
#include <algorithm>
#include <cstdint>

#ifdef _OPENMP
#include <omp.h>
#endif

namespace ember {

inline int num_threads() {
#ifdef _OPENMP
  return omp_get_max_threads();
#else
  return 1;
#endif
}

// Sets the number of threads kernels use from now on (benchmarks compare 1 and 2 threads).
inline void set_num_threads(int n) {
#ifdef _OPENMP
  omp_set_num_threads(n > 0 ? n : 1);
#else
  (void)n;
#endif
}

// f(begin, end) is called on disjoint ranges covering [0, n). `grain` is the smallest range worth a thread.
template <class F>
void parallel_for(int64_t n, int64_t grain, F&& f) {
  if (n <= 0) return;
#ifdef _OPENMP
  int threads = int(std::min<int64_t>(num_threads(), (n + grain - 1) / std::max<int64_t>(grain, 1)));
  if (threads > 1 && !omp_in_parallel()) {
#pragma omp parallel num_threads(threads)
    {
      int t = omp_get_thread_num(), nt = omp_get_num_threads();
      int64_t chunk = (n + nt - 1) / nt, b = t * chunk, e = std::min(n, b + chunk);
      if (b < e) f(b, e);
    }
    return;
  }
#endif
  f(int64_t(0), n);
}

}  // namespace ember
