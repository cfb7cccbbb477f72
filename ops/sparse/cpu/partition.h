// Splits the rows of a sparse matrix into one range per thread with about equal work, where the
// work before row r is prefix[r] + r (its nonzeros or products, plus one unit per row so that long
// runs of empty rows are not free). Uniform row splits would leave a thread idle on skewed
// matrices; this costs one binary search per thread.
#pragma once
#include <algorithm>
#include <cstdint>
#include <vector>

#include "framework/core/parallel.h"

namespace ember::sparse::cpu {

// f(row_begin, row_end) on disjoint ranges covering [0, rows); one thread when the total work is
// below `grain` per extra thread.
template <class I, class F>
void parallel_rows(const I* prefix, int64_t rows, int64_t grain, F&& f) {
  if (rows <= 0) return;
  int64_t base = int64_t(prefix[0]);
  int64_t work = int64_t(prefix[rows]) - base + rows;
  int64_t parts = std::min<int64_t>(num_threads(), std::max<int64_t>(1, work / std::max<int64_t>(grain, 1)));
  if (parts <= 1) {
    f(int64_t(0), rows);
    return;
  }
  std::vector<int64_t> bounds(size_t(parts + 1), rows);
  bounds[0] = 0;
  for (int64_t t = 1; t < parts; ++t) {
    int64_t target = work * t / parts;
    int64_t lo = 0, hi = rows;  // first row r with prefix[r] - base + r >= target
    while (lo < hi) {
      int64_t mid = (lo + hi) / 2;
      if (int64_t(prefix[mid]) - base + mid < target) lo = mid + 1;
      else hi = mid;
    }
    bounds[size_t(t)] = std::max(lo, bounds[size_t(t - 1)]);
  }
  parallel_for(parts, 1, [&](int64_t lo, int64_t hi) {
    for (int64_t t = lo; t < hi; ++t)
      if (bounds[size_t(t)] < bounds[size_t(t + 1)]) f(bounds[size_t(t)], bounds[size_t(t + 1)]);
  });
}

}  // namespace ember::sparse::cpu
