// Shared-memory tiled CUDA matmul: the naive kernel's one-output-per-thread mapping, with the
// k loop cut into steps of TILE. In each step the TILE x TILE threads of a block first stage one
// TILE x TILE tile of A and one of B in __shared__ memory (one element each), then every thread
// reads its row of A's tile and its column of B's tile from shared memory. Each global element is
// thus loaded once per block instead of once per thread: 2mnk / TILE global loads in all.
//
// The phases, in the kernel:  for t { load(t); __syncthreads(); accumulate(); __syncthreads(); } store();
// The first barrier makes the tiles complete before anyone reads them; the second keeps a fast
// thread from overwriting a tile (load of step t+1) that a slow one is still reading.
#pragma once
#include "ops/matmul/cuda_gemm_view.h"

namespace ember::cuda {

template <class T, int TILE>
struct TiledMatmul {
  static_assert(TILE >= 1 && TILE * TILE <= 1024, "a block holds at most 1024 threads");

  struct Shared {
    T a[TILE][TILE];  // a[r][p] = A[block row + r][t*TILE + p]
    T b[TILE][TILE];  // b[p][c] = B[t*TILE + p][block col + c]
  };
  struct Regs {
    T acc = 0;
  };

  static LaunchShape launch(int64_t m, int64_t n, int batch) {
    return {{int(ceil_div(n, TILE)), int(ceil_div(m, TILE)), batch}, {TILE, TILE, 1}};
  }
  static int64_t steps(const GemmView<T>& g) { return ceil_div(g.k, TILE); }

  // Phase 1 of step t: this thread stages A[i][t*TILE + x] and B[t*TILE + y][j]; outside the
  // matrices it stages 0, which adds nothing in phase 2 (the edge guard).
  EMBER_HD static void load(const GemmView<T>& g, Shared& s, Idx3 block, Idx3 thread, int64_t t) {
    int64_t i = int64_t(block.y) * TILE + thread.y, j = int64_t(block.x) * TILE + thread.x;
    int64_t pa = t * TILE + thread.x, pb = t * TILE + thread.y;
    s.a[thread.y][thread.x] = (i < g.m && pa < g.k) ? g.a_at(block.z, i, pa) : T(0);
    s.b[thread.y][thread.x] = (pb < g.k && j < g.n) ? g.b_at(block.z, pb, j) : T(0);
  }

  // Phase 2: the TILE multiply-adds of this thread's output over the staged tiles.
  EMBER_HD static void accumulate(const Shared& s, Regs& r, Idx3 thread) {
    for (int p = 0; p < TILE; ++p) r.acc += s.a[thread.y][p] * s.b[p][thread.x];
  }

  EMBER_HD static void store(const GemmView<T>& g, const Regs& r, Idx3 block, Idx3 thread) {
    int64_t i = int64_t(block.y) * TILE + thread.y, j = int64_t(block.x) * TILE + thread.x;
    if (i < g.m && j < g.n) g.c_at(block.z, i, j) = r.acc;
  }
};

}  // namespace ember::cuda
