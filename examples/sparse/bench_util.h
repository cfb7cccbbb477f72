// Measurement helpers for bench_sparse: timing with warm-up and calibrated batches (the median is
// examples/common/bench.h's, the bandwidth probe examples/common/bandwidth.h's); the random test
// matrices; machine facts.
#pragma once
#include <chrono>
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "ops/sparse/csr.h"

namespace bench {

using Clock = std::chrono::steady_clock;
inline double ms_since(Clock::time_point t0) {
  return std::chrono::duration<double, std::milli>(Clock::now() - t0).count();
}

struct Timing {
  double median_ms = 0;  // per call, median over the repeats
  double min_ms = 0;
  int repeats = 0;
  int64_t batch = 1;  // calls per timed sample (short calls are batched to >= min_batch_ms)
};

// Runs f `warmup` times untimed, then `repeats` samples; each sample times a batch of calls sized
// so that it lasts at least min_batch_ms (the clock's resolution stops mattering).
Timing time_it(const std::function<void()>& f, int warmup, int repeats, double min_batch_ms = 2.0);

// A square n x n float32 matrix whose every entry is nonzero with probability `density`
// (positions by geometric skips, so the cost is O(nnz)), values N(0, 1); deterministic in seed.
ember::CsrTensor random_csr(int64_t n, double density, uint64_t seed);

int64_t cache_bytes(int level);  // from sysfs, 0 when unknown

// CPU time used by other processes: bench_sparse cannot stop other work on a shared machine, so
// it measures it. A sample holds /proc/stat's busy and total jiffies (all CPUs) and this
// process's own CPU time (its waited-for children, e.g. the SciPy peer, included).
struct CpuSample {
  double busy = 0, total = 0, self = 0;
};
CpuSample cpu_sample();
// Average number of cores kept busy by other processes between two samples.
double others_cores(const CpuSample& a, const CpuSample& b);
// Waits (up to max_s seconds) for a half-second window in which other processes use less than
// `threshold` cores; returns what they used in the last window.
double wait_quiet(double max_s, double threshold = 0.1);

}  // namespace bench
