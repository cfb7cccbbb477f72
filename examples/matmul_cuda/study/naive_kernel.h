// Naive CUDA matmul: one thread per C[i][j], reading its row of A and its column of B straight
// from global memory (2 loads per multiply-add, 2mnk global loads in all). threadIdx.x runs along
// j, so a warp reads 32 consecutive elements of B's row p (coalesced) and one element of A
// (a broadcast). One phase, no shared memory, no barrier.
#pragma once
#include "ops/matmul/cuda_gemm_view.h"

namespace ember::cuda {

template <class T>
struct NaiveMatmul {
  static constexpr int kBlockX = 16, kBlockY = 16;

  static LaunchShape launch(int64_t m, int64_t n, int batch) {
    return {{int(ceil_div(n, kBlockX)), int(ceil_div(m, kBlockY)), batch}, {kBlockX, kBlockY, 1}};
  }

  EMBER_HD static void run(const GemmView<T>& g, Idx3 block, Idx3 thread) {
    int64_t i = int64_t(block.y) * kBlockY + thread.y;
    int64_t j = int64_t(block.x) * kBlockX + thread.x;
    if (i >= g.m || j >= g.n) return;  // edge blocks hang over C
    T acc = 0;
    for (int64_t p = 0; p < g.k; ++p) acc += g.a_at(block.z, i, p) * g.b_at(block.z, p, j);
    g.c_at(block.z, i, j) = acc;
  }
};

}  // namespace ember::cuda
