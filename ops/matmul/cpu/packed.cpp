// The packed GEMM, structured as in BLIS and OpenBLAS (Goto's algorithm):
//
//   for jc in n by nc:                 B block kc x nc, packed once per (jc, pc), lives in L3
//     for pc in k by kc:
//       pack B[pc:pc+kc, jc:jc+nc] into NR-wide slivers (k-major)
//       for ic in m by mc:             A block mc x kc, packed, lives in L2
//         pack A[ic:ic+mc, pc:pc+kc] into MR-tall slivers (k-major)
//         for jr in nc by NR:          B sliver kc x NR stays in L1 across the ir loop
//           for ir in mc by MR:        micro-kernel: MR x NR of C in registers, kc rank-1 updates
//
// Packing reads A and B through their row and column strides, so transposed and other strided
// views cost nothing extra, and it zero-pads the edge slivers so the micro-kernel always runs on
// full MR x NR tiles (edge tiles go through a small buffer). One OpenMP region spans the whole
// product; the threads share the packing and split the (jr, ir) tiles of each block, so each
// thread's tiles reuse a B sliver it keeps in its own L1 while both read the same packed A.
#include <algorithm>
#include <cstdlib>
#include <memory>

#include "framework/parallel.h"
#include "ops/matmul/cpu/packed_config.h"

namespace ember::cpu {

namespace {

struct FreeDeleter {
  void operator()(void* p) const { std::free(p); }
};

// A 64-byte aligned scratch buffer per calling thread, kept between calls (packing buffers are
// needed on every matmul; a fresh allocation would cost more than packing small products).
template <class T>
T* scratch(int slot, size_t count) {
  thread_local std::unique_ptr<void, FreeDeleter> buf[2];
  thread_local size_t cap[2] = {0, 0};
  if (cap[slot] < count) {
    size_t bytes = (count * sizeof(T) + 63) / 64 * 64;
    void* p = std::aligned_alloc(64, bytes);
    EMBER_CHECK(p != nullptr, "matmul: cannot allocate ", bytes, " bytes for packing");
    buf[slot].reset(p);
    cap[slot] = bytes / sizeof(T);
  }
  return static_cast<T*>(buf[slot].get());
}

int64_t round_up(int64_t x, int64_t m) { return (x + m - 1) / m * m; }

// Packs rows [i0, i0+MR) x cols [p0, p0+kc) of A into dst[p*MR + i], zero rows past m.
template <class T>
void pack_a_sliver(const GemmArgs& g, const T* a, int64_t i0, int64_t p0, int64_t kc, int mr, T* dst) {
  int64_t rows = std::min<int64_t>(mr, g.m - i0);
  for (int64_t i = 0; i < rows; ++i) {
    const T* src = a + (i0 + i) * g.a_rs + p0 * g.a_cs;
    if (g.a_cs == 1)
      for (int64_t p = 0; p < kc; ++p) dst[p * mr + i] = src[p];
    else
      for (int64_t p = 0; p < kc; ++p) dst[p * mr + i] = src[p * g.a_cs];
  }
  for (int64_t i = rows; i < mr; ++i)
    for (int64_t p = 0; p < kc; ++p) dst[p * mr + i] = T(0);
}

// Packs rows [p0, p0+kc) x cols [j0, j0+NR) of B into dst[p*NR + j], zero columns past n.
template <class T>
void pack_b_sliver(const GemmArgs& g, const T* b, int64_t p0, int64_t j0, int64_t kc, int nr, T* dst) {
  int64_t cols = std::min<int64_t>(nr, g.n - j0);
  for (int64_t p = 0; p < kc; ++p) {
    const T* src = b + (p0 + p) * g.b_rs + j0 * g.b_cs;
    T* d = dst + p * nr;
    if (g.b_cs == 1)
      for (int64_t j = 0; j < cols; ++j) d[j] = src[j];
    else
      for (int64_t j = 0; j < cols; ++j) d[j] = src[j * g.b_cs];
    for (int64_t j = cols; j < nr; ++j) d[j] = T(0);
  }
}

template <class T>
void packed(const GemmArgs& g, const PackedConfig<T>& cfg) {
  const T* a = static_cast<const T*>(g.a);
  const T* b = static_cast<const T*>(g.b);
  T* c = static_cast<T*>(g.c);
  const int MR = cfg.mr, NR = cfg.nr;
  int64_t kc0 = getenv("TUNE_KC") ? atoi(getenv("TUNE_KC")) : cfg.kc;
  int64_t mc0 = getenv("TUNE_MC") ? atoi(getenv("TUNE_MC")) : cfg.mc;
  int64_t nc0 = getenv("TUNE_NC") ? atoi(getenv("TUNE_NC")) : cfg.nc;
  const int64_t KC = std::min(kc0, g.k);
  const int64_t MC = std::min(mc0, round_up(g.m, MR));
  const int64_t NC = std::min(nc0, round_up(g.n, NR));
  T* bp = scratch<T>(0, size_t(KC * NC));
  T* ap = scratch<T>(1, size_t(KC * MC));

  // Threads pay off from about 64^3 multiply-adds (waking them costs a few microseconds).
  int nt = 1;
#ifdef _OPENMP
  if (!omp_in_parallel() && double(g.m) * double(g.n) * double(g.k) >= 262144.0) nt = num_threads();
#endif

#pragma omp parallel num_threads(nt) if (nt > 1)
  for (int64_t jc = 0; jc < g.n; jc += NC) {
    const int64_t nc = std::min(NC, g.n - jc), npanels = (nc + NR - 1) / NR;
    for (int64_t pc = 0; pc < g.k; pc += KC) {
      const int64_t kc = std::min(KC, g.k - pc);
      const bool accumulate = pc > 0;
#pragma omp for schedule(static)
      for (int64_t jp = 0; jp < npanels; ++jp) pack_b_sliver(g, b, pc, jc + jp * NR, kc, NR, bp + jp * NR * kc);
      for (int64_t ic = 0; ic < g.m; ic += MC) {
        const int64_t mc = std::min(MC, g.m - ic), mpanels = (mc + MR - 1) / MR;
#pragma omp for schedule(static)
        for (int64_t ip = 0; ip < mpanels; ++ip) pack_a_sliver(g, a, ic + ip * MR, pc, kc, MR, ap + ip * MR * kc);
        auto tile = [&](int64_t jp, int64_t ip) {
          const int64_t i0 = ic + ip * MR, j0 = jc + jp * NR;
          const int64_t rows = std::min<int64_t>(MR, g.m - i0), cols = std::min<int64_t>(NR, g.n - j0);
          const T* as = ap + ip * MR * kc;
          const T* bs = bp + jp * NR * kc;
          T* cij = c + i0 * g.c_rs + j0;
          if (rows == MR && cols == NR) return cfg.kernel(kc, as, bs, cij, g.c_rs, accumulate);
          alignas(64) T edge[16 * 64];  // >= the largest MR x NR of any config
          cfg.kernel(kc, as, bs, edge, NR, false);
          for (int64_t i = 0; i < rows; ++i)
            for (int64_t j = 0; j < cols; ++j)
              cij[i * g.c_rs + j] = accumulate ? cij[i * g.c_rs + j] + edge[i * NR + j] : edge[i * NR + j];
        };
        // Whole columns of tiles per task when there are enough of them (a thread keeps its B
        // sliver in L1 across the column); single tiles otherwise (a narrow C, e.g. n = 32).
        // Dynamic, so that a thread slowed by another process on its core does not hold the
        // other one at the barrier.
        if (npanels >= 4 * nt) {
#pragma omp for schedule(dynamic, 1)
          for (int64_t jp = 0; jp < npanels; ++jp)
            for (int64_t ip = 0; ip < mpanels; ++ip) tile(jp, ip);
        } else {
#pragma omp for collapse(2) schedule(dynamic, 1)
          for (int64_t jp = 0; jp < npanels; ++jp)
            for (int64_t ip = 0; ip < mpanels; ++ip) tile(jp, ip);
        }
      }
    }
  }
}

}  // namespace

void gemm_packed(const GemmArgs& g, CpuIsa isa) {
  EMBER_CHECK(isa <= best_cpu_isa(), "matmul: the packed kernel for ", name(isa), " needs a CPU that supports it (this one: ",
              name(best_cpu_isa()), ")");
  if (g.m == 0 || g.n == 0) return;
  if (g.k == 0) {  // an empty sum: C = 0
    for (int64_t i = 0; i < g.m; ++i)
      for (int64_t j = 0; j < g.n; ++j) {
        if (g.dtype == DType::Float32) static_cast<float*>(g.c)[i * g.c_rs + j] = 0;
        else static_cast<double*>(g.c)[i * g.c_rs + j] = 0;
      }
    return;
  }
  if (g.dtype == DType::Float32) packed<float>(g, packed_config_f32(isa));
  else packed<double>(g, packed_config_f64(isa));
}

void gemm_packed(const GemmArgs& g) { gemm_packed(g, best_cpu_isa()); }

}  // namespace ember::cpu
