// Register-tiled CUDA matmul (float32): the block algorithm a second time, inside each thread.
//
// A block of NT = (BM/TM) * (BN/TN) threads owns a BM x BN tile of C. Per step of BK along k it
// stages A's BM x BK tile (transposed, so that a thread's TM values of one k are adjacent) and B's
// BK x BN tile in shared memory, loading four consecutive floats per instruction (float4) where
// the operand is row-major and 16-byte aligned. Then each thread computes a TM x TN block of C in
// registers: per k it reads TM values of A and TN of B from shared memory and does TM*TN
// multiply-adds, an outer product. The shared-memory traffic per multiply-add drops from 2 loads
// (Tiled) to (TM + TN) / (TM * TN), and global traffic to mnk (1/BM + 1/BN) loads.
//
// A thread's columns are strided (tc, tc + BN/TN, ...) rather than adjacent: neighbouring threads
// then read neighbouring words of the B tile (no shared-memory bank conflicts) and write
// neighbouring words of C (coalesced stores).
//
// Phases as in tiled_kernel.h: for t { load(t); barrier; accumulate(); barrier; } store().
// The double-buffered form keeps two shared tiles and needs one barrier per step:
//   fetch(0); stash(buf 0); barrier;
//   for t { fetch(t+1) into registers; accumulate(buf t%2); stash(buf (t+1)%2); barrier; } store()
// Step t's stash writes the buffer last read in step t-1, which every thread left before the
// barrier ending step t-1; and the loads of step t+1 are in flight while step t computes.
#pragma once
#include <cstdint>

#include "ops/matmul/cuda_gemm_view.h"

namespace ember::cuda {

// Four consecutive floats from p (p[0..3]), as one 16-byte load on the GPU.
EMBER_HD inline void load4(const float* p, float out[4]) {
#ifdef __CUDA_ARCH__
  float4 v = *reinterpret_cast<const float4*>(p);
  out[0] = v.x, out[1] = v.y, out[2] = v.z, out[3] = v.w;
#else
  for (int i = 0; i < 4; ++i) out[i] = p[i];
#endif
}

template <int BM, int BN, int BK, int TM, int TN>
struct RegisterTiledMatmul {
  static constexpr int kThreads = (BM / TM) * (BN / TN);
  static_assert(BM % TM == 0 && BN % TN == 0, "thread tiles must divide the block tile");
  static_assert(BK % 4 == 0 && BN % 4 == 0, "tiles are loaded four floats at a time");
  static_assert((BM * BK) % (4 * kThreads) == 0 && (BK * BN) % (4 * kThreads) == 0,
                "every thread loads the same number of float4s");
  static_assert(kThreads <= 1024, "a block holds at most 1024 threads");

  struct Shared {
    float a[BK][BM];  // transposed: a[p][r] = A[block row + r][t*BK + p]
    float b[BK][BN];  // b[p][c] = B[t*BK + p][block col + c]
  };
  // This thread's share of one step's tiles, in registers between fetch and stash: quad q covers
  // the tile elements starting at 4 * (thread + q * kThreads).
  static constexpr int kQuadsA = BM * BK / (4 * kThreads), kQuadsB = BK * BN / (4 * kThreads);
  struct Staged {
    float a[kQuadsA][4];
    float b[kQuadsB][4];
  };
  struct Regs {
    float acc[TM][TN] = {};
    Staged next;  // the double-buffered kernel's prefetch
  };
  // Whether A's rows and B's rows may be read as float4 (row-major, 16-byte aligned everywhere).
  struct Vec {
    bool a = false, b = false;
  };

  static LaunchShape launch(int64_t m, int64_t n, int batch) {
    return {{int(ceil_div(n, BN)), int(ceil_div(m, BM)), batch}, {kThreads, 1, 1}};
  }
  static int64_t steps(const GemmView<float>& g) { return ceil_div(g.k, BK); }
  static Vec vectorisable(const GemmView<float>& g) {
    auto aligned = [](const void* p) { return reinterpret_cast<uintptr_t>(p) % 16 == 0; };
    return {g.a_cs == 1 && g.a_rs % 4 == 0 && g.a_bs % 4 == 0 && aligned(g.a),
            g.b_cs == 1 && g.b_rs % 4 == 0 && g.b_bs % 4 == 0 && aligned(g.b)};
  }

  // Step t's global loads of this thread, four elements at a time, into registers. A quad that
  // lies wholly inside the matrix (and is aligned) is one float4; quads at the edges are read
  // element by element with zeros outside.
  EMBER_HD static void fetch(const GemmView<float>& g, Vec vec, Staged& st, Idx3 block, Idx3 thread, int64_t t) {
    int z = block.z;
    int64_t row0 = int64_t(block.y) * BM, col0 = int64_t(block.x) * BN, k0 = t * BK;
    for (int q = 0; q < kQuadsA; ++q) {
      int e = (thread.x + q * kThreads) * 4, r = e / BK, p = e % BK;  // A[row0 + r][k0 + p .. +3]
      int64_t i = row0 + r, kk = k0 + p;
      if (vec.a && i < g.m && kk + 3 < g.k) load4(&g.a[z * g.a_bs + i * g.a_rs + kk], st.a[q]);
      else
        for (int u = 0; u < 4; ++u) st.a[q][u] = (i < g.m && kk + u < g.k) ? g.a_at(z, i, kk + u) : 0.f;
    }
    for (int q = 0; q < kQuadsB; ++q) {
      int e = (thread.x + q * kThreads) * 4, p = e / BN, c = e % BN;  // B[k0 + p][col0 + c .. +3]
      int64_t kk = k0 + p, j = col0 + c;
      if (vec.b && kk < g.k && j + 3 < g.n) load4(&g.b[z * g.b_bs + kk * g.b_rs + j], st.b[q]);
      else
        for (int u = 0; u < 4; ++u) st.b[q][u] = (kk < g.k && j + u < g.n) ? g.b_at(z, kk, j + u) : 0.f;
    }
  }

  // Writes a fetched share into a shared-memory tile (A transposed).
  EMBER_HD static void stash(const Staged& st, Shared& s, Idx3 thread) {
    for (int q = 0; q < kQuadsA; ++q) {
      int e = (thread.x + q * kThreads) * 4, r = e / BK, p = e % BK;
      for (int u = 0; u < 4; ++u) s.a[p + u][r] = st.a[q][u];
    }
    for (int q = 0; q < kQuadsB; ++q) {
      int e = (thread.x + q * kThreads) * 4, p = e / BN, c = e % BN;
      for (int u = 0; u < 4; ++u) s.b[p][c + u] = st.b[q][u];
    }
  }

  // Phase 1 of step t (single-buffered kernel): fetch, then stash.
  EMBER_HD static void load(const GemmView<float>& g, Vec vec, Shared& s, Idx3 block, Idx3 thread, int64_t t) {
    Staged st;
    fetch(g, vec, st, block, thread, t);
    stash(st, s, thread);
  }

  // Phase 2: BK outer products of TM values of A and TN values of B, all in registers.
  EMBER_HD static void accumulate(const Shared& s, Regs& r, Idx3 thread) {
    int tr = thread.x / (BN / TN), tc = thread.x % (BN / TN);
    for (int p = 0; p < BK; ++p) {
      float ra[TM], rb[TN];
      for (int u = 0; u < TM; ++u) ra[u] = s.a[p][tr * TM + u];
      for (int v = 0; v < TN; ++v) rb[v] = s.b[p][tc + v * (BN / TN)];
      for (int u = 0; u < TM; ++u)
        for (int v = 0; v < TN; ++v) r.acc[u][v] += ra[u] * rb[v];
    }
  }

  EMBER_HD static void store(const GemmView<float>& g, const Regs& r, Idx3 block, Idx3 thread) {
    int tr = thread.x / (BN / TN), tc = thread.x % (BN / TN);
    for (int u = 0; u < TM; ++u) {
      int64_t i = int64_t(block.y) * BM + tr * TM + u;
      if (i >= g.m) break;
      for (int v = 0; v < TN; ++v) {
        int64_t j = int64_t(block.x) * BN + tc + v * (BN / TN);
        if (j < g.n) g.c_at(block.z, i, j) = r.acc[u][v];
      }
    }
  }
};

// The configuration the GPU runs: 128 x 128 tiles of C, 8 x 8 outputs per thread, 256 threads.
using RegisterTiledSgemm = RegisterTiledMatmul<128, 128, 8, 8, 8>;

}  // namespace ember::cuda
