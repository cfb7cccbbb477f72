// How many threads a packed product runs on, and how they split its C (packed_internal.h).
#include <algorithm>

#include "framework/core/parallel.h"
#include "ops/matmul/cpu/packed_internal.h"

namespace ember::cpu::packed_gemm {

int threads_for(const GemmArgs& g) {
#ifdef _OPENMP
  if (!omp_in_parallel() && double(g.m) * double(g.n) * double(g.k) >= kThreadedMacs) return num_threads();
#endif
  (void)g;
  return 1;
}

namespace {
// The largest share of a tm-row grid, in MR x NR tiles.
double largest_share(int nt, int64_t mpanels, int64_t npanels, int tm) {
  return double((mpanels + tm - 1) / tm) * double((npanels + nt / tm - 1) / (nt / tm));
}
}  // namespace

// Rows are split on a near tie (kGridRowsMargin), since then no thread packs the same rows of A
// twice; with `columns_free` (A not packed) the columns are (kGridColumnsMargin), since threads
// that share no column of C pack their own slivers of B and never wait (packed.cpp).
Grid thread_grid(int nt, int64_t mpanels, int64_t npanels, bool columns_free) {
  Grid best;
  double best_load = -1;
  for (int tm = nt; tm >= 1; --tm) {
    if (nt % tm) continue;
    const double load = largest_share(nt, mpanels, npanels, tm);
    if (best_load < 0 || load < kGridRowsMargin * best_load) best = {tm, nt / tm}, best_load = load;
  }
  if (columns_free && largest_share(nt, mpanels, npanels, 1) <= kGridColumnsMargin * best_load) best = {1, nt};
  return best;
}

int64_t columns_in_turn_group(int64_t slivers, int nr, int nt) {
  const int64_t most = std::max<int64_t>(1, kColumnsInTurn / nr);
  return std::clamp<int64_t>((slivers + 2 * int64_t(nt) - 1) / (2 * int64_t(nt)), 1, most);
}

}  // namespace ember::cpu::packed_gemm
