// This machine's memory bandwidth, measured (STREAM-style), for benchmarks whose work is
// bandwidth-bound (GEMV, decode, SpMV, elementwise ops): each reports the share of it that it
// reached, so "fast" means "close to what the memory can deliver here", not a guess from a spec.
//
//   bench::Bandwidth bw = bench::measure_bandwidth();   // ~1 s with the defaults
//   std::printf("%s\n", bench::describe(bw).c_str());
//   double pct = bench::percent_of_read(bytes_read, seconds, bw);
//
// Two kernels, each at 1 thread and at `threads` threads, best of `repeats` (the best run is the
// one that another process's time slice did not spoil):
//   copy: b[i] = a[i], counted as one read and one write per element, as STREAM counts it
//         (write-allocate makes the hardware move a third stream; STREAM does not count it);
//   read: a sum over a, the pattern of a weight-streaming GEMV or decode step, as one sequential
//         stream per thread and as four and as eight 8 KiB rows at a time, side by side; the best
//         counts.
// Arrays are far larger than any last-level cache (default 256 MiB each, on 2 MiB pages where
// Linux grants them, as the tensors whose reads they bound), first touched by the
// threads that use them, as STREAM does.
#pragma once
#include <omp.h>

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <nlohmann/json.hpp>
#include <string>
#if defined(__linux__)
#include <sys/mman.h>
#endif

#include "examples/common/bench.h"
#include "framework/core/error.h"
#include "framework/core/parallel.h"

namespace ember::bench {

struct Bandwidth {
  size_t bytes_per_array = 0;
  int threads = 1;  // the team size of the *_nt figures
  double copy_gbs_1t = 0, copy_gbs_nt = 0;
  double read_gbs_1t = 0, read_gbs_nt = 0;
  // The machine's figure is the better of the two team sizes: on a shared 2-core VM the team can
  // lose a core to another process and measure less than one thread does.
  double copy_gbs() const { return std::max(copy_gbs_1t, copy_gbs_nt); }
  double read_gbs() const { return std::max(read_gbs_1t, read_gbs_nt); }
};

namespace detail {

// Runs `body(lo, hi, slot)` over [0, n) split evenly across exactly `threads` OpenMP threads.
template <class F>
void split_over(int threads, int64_t n, F&& body) {
#pragma omp parallel num_threads(threads)
  {
    const int t = omp_get_thread_num(), nt = omp_get_num_threads();
    body(n * t / nt, n * (t + 1) / nt, t);
  }
}

// Best seconds of `repeats` timed calls of f.
template <class F>
double best_seconds(int repeats, F&& f) {
  double best = 1e30;
  for (int r = 0; r < repeats; ++r) {
    const double t0 = now_s();
    f();
    best = std::min(best, now_s() - t0);
  }
  return best;
}

// The sum of x[0, len), read either as one sequential stream (rows == 1) or as rows of kRowFloats
// (8 KiB) taken `rows` at a time, side by side, the way the GEMV reads a weight matrix; the
// remainder after the last whole group is read alone. Each pass adds kLanes independent sums,
// which the compiler keeps in vector registers: one chain of dependent adds would be bound by the
// add's latency (a few GB/s), not by the memory.
inline double sum_streams(const float* x, int64_t len, int rows) {
  constexpr int kLanes = 32, kMaxRows = 8;
  constexpr int64_t kRowFloats = 2048;
  rows = std::max(1, std::min(rows, kMaxRows));
  const int64_t group = rows * kRowFloats, whole = rows == 1 ? len / kLanes * kLanes : len / group * group;
  float acc[kLanes] = {};
  for (int64_t g0 = 0; g0 < whole; g0 += (rows == 1 ? whole : group)) {
    const int64_t width = rows == 1 ? whole : kRowFloats;
    for (int64_t i = 0; i < width; i += kLanes)
      for (int r = 0; r < rows; ++r) {
        const float* p = x + g0 + r * kRowFloats + i;
#pragma omp simd
        for (int j = 0; j < kLanes; ++j) acc[j] += p[j];
      }
  }
  double total = 0;
  for (int64_t i = whole; i < len; ++i) total += double(x[i]);
  for (float v : acc) total += double(v);
  return total;
}

// An array on 2 MiB pages where Linux grants them, as Ember's allocator places every block of 2 MiB
// or more (framework/core/storage.cpp): the probe bounds reads of such tensors, and a probe of a decode
// step's GEMVs read them about 1.1x faster from huge pages than from 4 KiB ones.
struct HugeArray {
  static constexpr size_t kPage = size_t(2) << 20;
  float* data;
  explicit HugeArray(size_t floats)
      : data(static_cast<float*>(std::aligned_alloc(kPage, (floats * sizeof(float) + kPage - 1) / kPage * kPage))) {
    EMBER_CHECK(data != nullptr, "measure_bandwidth: could not allocate ", floats * sizeof(float), " bytes");
#if defined(__linux__) && defined(MADV_HUGEPAGE)
    madvise(data, (floats * sizeof(float) + kPage - 1) / kPage * kPage, MADV_HUGEPAGE);
#endif
  }
  ~HugeArray() { std::free(data); }
  HugeArray(const HugeArray&) = delete;
  HugeArray& operator=(const HugeArray&) = delete;
};
}  // namespace detail

inline Bandwidth measure_bandwidth(size_t bytes_per_array = size_t(256) << 20, int threads = ember::num_threads(),
                                   int repeats = 5) {
  EMBER_CHECK(bytes_per_array >= (size_t(1) << 20), "measure_bandwidth: arrays of ", bytes_per_array,
              " bytes are too small to leave the caches; use at least 1 MiB (the default is 256 MiB)");
  EMBER_CHECK(threads >= 1 && threads <= 256 && repeats >= 1,
              "measure_bandwidth: expected 1 <= threads <= 256 and repeats >= 1, got ",
              threads, " and ", repeats);
  const int64_t n = int64_t(bytes_per_array / sizeof(float));
  const detail::HugeArray a_block{static_cast<size_t>(n)}, b_block{static_cast<size_t>(n)};
  float* a = a_block.data;
  float* b = b_block.data;
  Bandwidth bw;
  bw.bytes_per_array = size_t(n) * sizeof(float);
  bw.threads = threads;
  detail::split_over(threads, n, [&](int64_t lo, int64_t hi, int) {
    for (int64_t i = lo; i < hi; ++i) a[size_t(i)] = float(i & 1023), b[size_t(i)] = 0.f;
  });
  const double bytes = double(bw.bytes_per_array);
  double sink = 0;  // keeps the reads observable
  // One thread: one team size, measured once (the "n threads" figures are then the same).
  const int teams[2] = {1, threads};
  for (int ti = 0; ti < (threads == 1 ? 1 : 2); ++ti) {
    const int team = teams[ti];
    double copy_s = detail::best_seconds(repeats, [&] {
      detail::split_over(team, n, [&](int64_t lo, int64_t hi, int) { std::copy(a + lo, a + hi, b + lo); });
    });
    // Three read patterns, the best one counts: one sequential stream per thread, and four or
    // eight rows of 8 KiB read side by side (as the GEMV reads four or eight rows of a weight
    // matrix at once, gemv_streams()), which keeps more cache-line requests in flight.
    double read_s = 1e30;
    for (int streams : {1, 4, 8}) {
      read_s = std::min(read_s, detail::best_seconds(repeats, [&] {
        double partial[256] = {};
        detail::split_over(team, n, [&](int64_t lo, int64_t hi, int slot) {
          partial[slot & 255] = detail::sum_streams(a + lo, hi - lo, streams);
        });
        for (double p : partial) sink += p;
      }));
    }
    (team == 1 ? bw.copy_gbs_1t : bw.copy_gbs_nt) = 2.0 * bytes / copy_s * 1e-9;
    (team == 1 ? bw.read_gbs_1t : bw.read_gbs_nt) = bytes / read_s * 1e-9;
  }
  if (threads == 1) bw.copy_gbs_nt = bw.copy_gbs_1t, bw.read_gbs_nt = bw.read_gbs_1t;
  EMBER_CHECK(b[size_t(n / 2)] == a[size_t(n / 2)] && sink != 0, "measure_bandwidth: the copy did not happen");
  return bw;
}

inline std::string describe(const Bandwidth& bw) {
  char line[320];
  if (bw.threads == 1) {
    std::snprintf(line, sizeof line,
                  "memory bandwidth (STREAM-style, 2 x %zu MiB, best of runs, 1 thread): copy %.1f GB/s; read %.1f GB/s",
                  bw.bytes_per_array >> 20, bw.copy_gbs_1t, bw.read_gbs_1t);
    return line;
  }
  std::snprintf(line, sizeof line,
                "memory bandwidth (STREAM-style, 2 x %zu MiB, best of runs): copy %.1f GB/s at 1 thread, %.1f at %d; "
                "read %.1f GB/s at 1 thread, %.1f at %d",
                bw.bytes_per_array >> 20, bw.copy_gbs_1t, bw.copy_gbs_nt, bw.threads, bw.read_gbs_1t, bw.read_gbs_nt,
                bw.threads);
  return line;
}

inline nlohmann::json to_json(const Bandwidth& bw) {
  return {{"bytes_per_array", bw.bytes_per_array}, {"threads", bw.threads},   {"copy_gbs_1t", bw.copy_gbs_1t},
          {"copy_gbs_nt", bw.copy_gbs_nt},         {"read_gbs_1t", bw.read_gbs_1t}, {"read_gbs_nt", bw.read_gbs_nt},
          {"copy_gbs", bw.copy_gbs()},             {"read_gbs", bw.read_gbs()}};
}

// What share of the measured bandwidth a run reached: `bytes` moved in `seconds`.
inline double percent_of(double bytes, double seconds, double gbs) {
  return gbs > 0 && seconds > 0 ? 100.0 * bytes / seconds * 1e-9 / gbs : 0.0;
}
inline double percent_of_read(double bytes_read, double seconds, const Bandwidth& bw) {
  return percent_of(bytes_read, seconds, bw.read_gbs());
}
// Traffic counted STREAM's way (reads + writes), against the copy figure: elementwise ops, SpMV.
inline double percent_of_copy(double bytes_moved, double seconds, const Bandwidth& bw) {
  return percent_of(bytes_moved, seconds, bw.copy_gbs());
}

}  // namespace ember::bench
