// The packing routines of the packed GEMM (packing.h): A into MR-row slivers, B into NR-column
// slivers, both k-major and zero-padded at the edges, read through the operands' own strides.
#include <algorithm>
#include <cstring>
#include <type_traits>

#include "ops/matmul/cpu/pack_avx2.h"
#include "ops/matmul/cpu/packed_config.h"
#include "ops/matmul/cpu/packing.h"

namespace ember::cpu {

// Packs rows [i0, i0+MR) x cols [p0, p0+kc) of A into dst[p*MR + i], zero rows past m. The loop
// order follows A's layout so that the reads are the contiguous ones.
template <class T>
void pack_a_sliver(const GemmArgs& g, const T* a, int64_t i0, int64_t p0, int64_t kc, int mr, T* dst) {
  int64_t rows = std::min<int64_t>(mr, g.m - i0);
  const T* src = a + i0 * g.a_rs + p0 * g.a_cs;
  if (g.a_rs == 1 && g.a_cs != 1) {  // A is a transposed view: its columns are contiguous
#if defined(__x86_64__) || defined(__i386__)
    if constexpr (std::is_same_v<T, float>) {
      static const bool avx2 = best_cpu_isa() >= CpuIsa::Avx2;
      if (avx2 && mr <= 8) return pack_a_cols_avx2(src, g.a_cs, rows, kc, mr, dst);
    }
#endif
    for (int64_t p = 0; p < kc; ++p) {
      for (int64_t i = 0; i < rows; ++i) dst[p * mr + i] = src[p * g.a_cs + i];
      for (int64_t i = rows; i < mr; ++i) dst[p * mr + i] = T(0);
    }
    return;
  }
#if defined(__x86_64__) || defined(__i386__)
  if constexpr (std::is_same_v<T, float>) {
    static const bool avx2 = best_cpu_isa() >= CpuIsa::Avx2;
    if (avx2 && g.a_cs == 1 && mr <= 8) return pack_a_rows_avx2(src, g.a_rs, rows, kc, mr, dst);
  }
#endif
  for (int64_t i = 0; i < rows; ++i) {
    const T* row = src + i * g.a_rs;
    if (g.a_cs == 1)
      for (int64_t p = 0; p < kc; ++p) dst[p * mr + i] = row[p];
    else
      for (int64_t p = 0; p < kc; ++p) dst[p * mr + i] = row[p * g.a_cs];
  }
  for (int64_t i = rows; i < mr; ++i)
    for (int64_t p = 0; p < kc; ++p) dst[p * mr + i] = T(0);
}

namespace {
// Copies `count` runs of NR contiguous elements, src[s * NR ..] to dst[s * stride ..].
template <class T, int NR>
void copy_slivers(const T* src, int64_t count, int64_t stride, T* dst) {
  for (int64_t s = 0; s < count; ++s) std::memcpy(dst + s * stride, src + s * NR, NR * sizeof(T));
}
template <class T>
using SliverCopy = void (*)(const T*, int64_t, int64_t, T*);
// The copy for the NR of each micro-kernel config (packed_config.h); nullptr for any other NR.
template <class T>
SliverCopy<T> copy_full_slivers(int nr) {
  switch (nr) {
    case 4: return copy_slivers<T, 4>;
    case 8: return copy_slivers<T, 8>;
    case 16: return copy_slivers<T, 16>;
    case 32: return copy_slivers<T, 32>;
    case 64: return copy_slivers<T, 64>;
    default: return nullptr;
  }
}
}  // namespace

// Packs rows [p0, p0+kc) of B for the NR-wide slivers [s0, s1) of the block that starts at column
// jc: sliver s goes to bp + s*NR*kc as dst[p*NR + j], zero columns past n. Row-major B is read row
// by row across all the slivers (long contiguous runs; a sliver at a time would jump one row
// stride, often a new page, every NR elements); a transposed B column by column.
// With `simd` (the kernel's ISA has AVX2) a transposed float B is packed by 8 x 8 register
// transposes (pack_avx2.h).
template <class T>
void pack_b_slivers(const GemmArgs& g, const T* b, int64_t p0, int64_t kc, int64_t jc, int64_t s0, int64_t s1, int nr,
                    T* bp, bool simd) {
  if (g.b_rs == 1 && g.b_cs != 1) {
    for (int64_t s = s0; s < s1; ++s) {
      int64_t j0 = jc + s * nr, cols = std::min<int64_t>(nr, g.n - j0);
      T* dst = bp + s * nr * kc;
#if defined(__x86_64__) || defined(__i386__)
      if constexpr (std::is_same_v<T, float>) {
        if (simd) {
          pack_b_transposed_avx2(b, g.b_cs, p0, kc, j0, cols, nr, dst);
          for (int64_t j = cols; j < nr; ++j)
            for (int64_t p = 0; p < kc; ++p) dst[p * nr + j] = T(0);
          continue;
        }
      }
#endif
      (void)simd;
      for (int64_t j = 0; j < cols; ++j) {
        const T* col = b + p0 + (j0 + j) * g.b_cs;
        for (int64_t p = 0; p < kc; ++p) dst[p * nr + j] = col[p];
      }
      for (int64_t j = cols; j < nr; ++j)
        for (int64_t p = 0; p < kc; ++p) dst[p * nr + j] = T(0);
    }
    return;
  }
  // Row-major B: the slivers that lie wholly inside B take a copy of constant width, which the
  // compiler turns into a few vector moves; a copy of runtime width is slow enough to matter where
  // each element of B is used only a few dozen times (TUNING.md).
  const int64_t full_end = std::max(s0, std::min(s1, (g.n - jc) / nr));
  const SliverCopy<T> copy = copy_full_slivers<T>(nr);
  if (g.b_cs == 1 && full_end > s0 && copy) {
    for (int64_t p = 0; p < kc; ++p) {
      const T* row = b + (p0 + p) * g.b_rs + jc;
      copy(row + s0 * nr, full_end - s0, nr * kc, bp + s0 * nr * kc + p * nr);
      for (int64_t s = full_end; s < s1; ++s) {
        const int64_t j0 = s * nr, cols = std::min<int64_t>(nr, g.n - jc - j0);
        T* d = bp + s * nr * kc + p * nr;
        for (int64_t j = 0; j < cols; ++j) d[j] = row[j0 + j];
        for (int64_t j = cols; j < nr; ++j) d[j] = T(0);
      }
    }
    return;
  }
  for (int64_t p = 0; p < kc; ++p) {
    const T* row = b + (p0 + p) * g.b_rs;
    for (int64_t s = s0; s < s1; ++s) {
      int64_t j0 = jc + s * nr, cols = std::min<int64_t>(nr, g.n - j0);
      T* d = bp + s * nr * kc + p * nr;
      if (g.b_cs == 1)
        for (int64_t j = 0; j < cols; ++j) d[j] = row[j0 + j];
      else
        for (int64_t j = 0; j < cols; ++j) d[j] = row[(j0 + j) * g.b_cs];
      for (int64_t j = cols; j < nr; ++j) d[j] = T(0);
    }
  }
}

template void pack_a_sliver<float>(const GemmArgs&, const float*, int64_t, int64_t, int64_t, int, float*);
template void pack_a_sliver<double>(const GemmArgs&, const double*, int64_t, int64_t, int64_t, int, double*);
template void pack_b_slivers<float>(const GemmArgs&, const float*, int64_t, int64_t, int64_t, int64_t, int64_t, int,
                                    float*, bool);
template void pack_b_slivers<double>(const GemmArgs&, const double*, int64_t, int64_t, int64_t, int64_t, int64_t, int,
                                     double*, bool);

}  // namespace ember::cpu
