// The packed GEMM, structured as in BLIS and OpenBLAS (Goto's algorithm):
//
//   for jc in n by nc:                 B block kc x nc, packed once per (jc, pc), lives in L3
//     for pc in k by kc:
//       pack B[pc:pc+kc, jc:jc+nc] into NR-wide slivers (k-major)
//       for ic in m by mc:             A block mc x kc, packed, lives in L2
//         pack A[ic:ic+mc, pc:pc+kc] into MR-tall slivers (k-major), unless its rows serve as they are
//         for jr in nc by NR:          B sliver kc x NR stays in L1 or L2 across the ir loop
//           for ir in mc by MR:        micro-kernel: MR x NR of C in registers, kc rank-1 updates
//
// Packing reads A and B through their row and column strides, so transposed and other strided
// views cost nothing extra, and it zero-pads the edge slivers so the micro-kernel always runs on
// full MR x NR tiles (edge tiles go through a small buffer). One OpenMP region spans the whole
// product; each thread owns a fixed part of C, or takes groups of its columns in turn (see
// packed() below).
#include <algorithm>
#include <atomic>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <numeric>
#include <type_traits>

#include <unistd.h>

#include "framework/core/parallel.h"
#include "framework/core/storage.h"
#include "ops/matmul/cpu/gemv_avx2.h"
#include "ops/matmul/cpu/pack_avx2.h"
#include "ops/matmul/cpu/packed_config.h"
#include "ops/matmul/cpu/packing.h"
#include "ops/matmul/cpu/yielding_barrier.h"

namespace ember::cpu {

namespace {

struct FreeDeleter {
  void operator()(void* p) const { free_host(p); }
};

// A 64-byte aligned scratch buffer per calling thread, kept between calls (packing buffers are
// needed on every matmul; a fresh allocation would cost more than packing small products). It
// holds at most kc x nc + threads x kc x mc elements per dtype: for float32 about 9 MiB on a 1 MiB
// L2, 18 MiB on a 2 MiB one (twice the kc: general_blocks).
template <class T>
T* scratch(int slot, size_t count) {
  thread_local std::unique_ptr<void, FreeDeleter> buf[2];
  thread_local size_t cap[2] = {0, 0};
  if (cap[slot] < count) {
    size_t bytes = (count * sizeof(T) + 63) / 64 * 64;
    void* p = allocate_host(bytes);  // on huge pages from 2 MiB on (framework/core/storage.h)
    EMBER_CHECK(p != nullptr, "matmul: cannot allocate ", bytes, " bytes for packing");
    buf[slot].reset(p);
    cap[slot] = bytes / sizeof(T);
  }
  return static_cast<T*>(buf[slot].get());
}

int64_t round_up(int64_t x, int64_t m) { return (x + m - 1) / m * m; }

}  // namespace

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
  // compiler turns into a few vector moves; the copy of runtime width took a quarter of the time
  // of GPT-2's 64-row products, where each element of B is used only 64 times (NOTES.md).
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

namespace {

// A product with fewer rows than this is a (few) matrix-vector product, e.g. one token of GPT-2
// generation: packing B would copy all of B to use each element fewer than 4 times, so such
// products stream B straight from its storage instead: in the AVX-512 stripes, which copy nothing,
// where they take it, else in skinny() below (packed()).
constexpr int64_t kSkinnyRows = 4;

// C = A B for m < kSkinnyRows, threads splitting the columns of C. With rows of B contiguous the
// inner loop is an axpy over a row of B; with columns contiguous (B a transposed view) it is a dot
// product, summed in eight independent partial sums so that it vectorises.
template <class T>
void skinny(const GemmArgs& g, CpuIsa isa) {
  const T* a = static_cast<const T*>(g.a);
  const T* b = static_cast<const T*>(g.b);
  T* c = static_cast<T*>(g.c);
  int64_t grain = std::max<int64_t>(64, 65536 / std::max<int64_t>(1, g.m * g.k));
#if defined(__x86_64__) || defined(__i386__)
  // B's columns contiguous (a transposed matrix, as GPT-2's tied LM head x @ wte^T) and A's rows
  // too: the AVX2 dot kernel reads each column of B once for all rows of A. The loop below reads
  // B once per row, at 0.16-0.49x of MKL's speed with two and three rows (NOTES.md, 2026-12-06,
  // ninth session).
  if constexpr (std::is_same_v<T, float>) {
    if (isa >= CpuIsa::Avx2 && g.b_rs == 1 && g.a_cs == 1) {
      parallel_for(g.n, grain, [&](int64_t lo, int64_t hi) {
        gemm_dots_avx2(a, g.a_rs, int(g.m), b + lo * g.b_cs, g.b_cs, g.k, hi - lo, c + lo, g.c_rs);
      });
      return;
    }
  }
#endif
  parallel_for(g.n, grain, [&](int64_t lo, int64_t hi) {
    for (int64_t i = 0; i < g.m; ++i) {
      T* crow = c + i * g.c_rs;
      const T* arow = a + i * g.a_rs;
      if (g.b_rs == 1 && g.b_cs != 1) {
        for (int64_t j = lo; j < hi; ++j) {
          const T* bcol = b + j * g.b_cs;
          T part[8] = {};
          int64_t p = 0;
          if (g.a_cs == 1)
            for (; p + 8 <= g.k; p += 8)
              for (int q = 0; q < 8; ++q) part[q] += arow[p + q] * bcol[p + q];
          T acc = 0;
          for (; p < g.k; ++p) acc += arow[p * g.a_cs] * bcol[p];
          for (int q = 0; q < 8; ++q) acc += part[q];
          crow[j] = acc;
        }
        continue;
      }
      std::fill(crow + lo, crow + hi, T(0));
      for (int64_t p = 0; p < g.k; ++p) {
        const T av = arow[p * g.a_cs];
        const T* brow = b + p * g.b_rs;
        if (g.b_cs == 1)
          for (int64_t j = lo; j < hi; ++j) crow[j] += av * brow[j];
        else
          for (int64_t j = lo; j < hi; ++j) crow[j] += av * brow[j * g.b_cs];
      }
    }
  });
}

// How nt threads split C: a tm x tn grid of row and column ranges (tm * tn = nt), chosen so that
// the largest share (rounded up to whole MR x NR tiles) is smallest; on a near tie rows are split,
// since then no thread packs the same rows of A twice, unless A is not packed at all
// (`columns_free`): then the columns, since threads that share no column of C pack their own
// slivers of B and never wait for one another (packed() below).
struct Grid {
  int tm = 1, tn = 1;
};
Grid thread_grid(int nt, int64_t mpanels, int64_t npanels, bool columns_free = false) {
  Grid best;
  double best_load = -1;
  auto load = [&](int tm) { return double((mpanels + tm - 1) / tm) * double((npanels + nt / tm - 1) / (nt / tm)); };
  for (int tm = nt; tm >= 1; --tm) {
    if (nt % tm) continue;
    if (best_load < 0 || load(tm) < 0.95 * best_load) best = {tm, nt / tm}, best_load = load(tm);
  }
  if (columns_free && load(1) <= 1.05 * best_load) best = {1, nt};
  return best;
}

// Products with at most this many rows (or the config's mc, if more) read B in place. On the Xeon
// 256 rows still gained from it (n = 256 on two threads: 79-85% of MKL packed, 89-91% in place),
// 384 lost (90-96% to 85-92%; NOTES.md, 2026-12-04).
constexpr int64_t kUnpackedRows = 256;
// The most rows of B an unpacked sliver spans (its kc); the packed path keeps the config's kc.
constexpr int64_t kUnpackedKc = 256;
// The most rows of a transposed B that the few-rows path packs into one sliver (kc x NR: 256 KiB
// of floats for AVX-512, in L2 beside the m x kc block of A).
constexpr int64_t kTransposedKc = 1024;
// ... and fewer where A's m x kc block would outgrow half of a 1 MiB L2 (m > 128 rows of floats).
constexpr int64_t kTransposedA = 512 * 1024;

// A row-major B larger than this is packed a group of slivers at a time (packed_unpacked_b); 0
// until set: the default then comes from the L3's size (streamed_b_default()).
int64_t g_streamed_b_bytes = 0;
// Half the L3, and at most 64 MiB: the most of a shared L3 that one tenant of a server can count
// on keeping between two calls (the Xeon model 207 guest sees 300 MiB of L3, shared with the rest
// of its host; there 64 x 768 x 32768, 100 MB of B, already gained 1.03x from the grouped pack,
// while 25 MB lost 5%: NOTES.md, 2026-12-05, second session).
int64_t streamed_b_default() {
  static const long l3 = sysconf(_SC_LEVEL3_CACHE_SIZE);
  const int64_t cache = l3 > 0 ? int64_t(l3) : int64_t(32) << 20;
  return std::min<int64_t>(cache, int64_t(128) << 20) / 2;
}
// Whether B is too large to stay in the L3 between calls (streamed_b_bytes()), so that it comes
// from memory at every call: the grouped pack and the stripes' kc choose by it.
bool b_from_memory(const GemmArgs& g) {
  return double(g.k) * double(g.n) * double(itemsize(g.dtype)) > double(streamed_b_bytes());
}
// The length of the runs of each row of B that the grouped pack reads (a group of slivers of this
// many bytes per row). Runs of 1-2 KiB ran the 50257-column LM head 1.2x faster than the slivers'
// 256 bytes; 4 KiB 1.13-1.18x, 8 KiB 1.11x (NOTES.md, 2026-12-05, second session).
constexpr int64_t kStreamedRun = 1024;

// Threads pay off from about 128^3 multiply-adds (10 us on one core; waking a thread and two
// barriers cost a few microseconds when the machine is quiet, much more when it is not).
int threads_for(const GemmArgs& g) {
#ifdef _OPENMP
  if (!omp_in_parallel() && double(g.m) * double(g.n) * double(g.k) >= 2097152.0) return num_threads();
#endif
  (void)g;
  return 1;
}

// C = A B for a product with few rows (m <= max(mc, kUnpackedRows): GPT-2's layers at a prompt of
// 64-256 tokens) and whose B is row-major, or a transposed view (the tied LM head, wte^T). Each
// element of B is used only m times there, so packing it (a read and a write of all of B, then a
// second read from L3, since B is megabytes) cost more than the copy is worth; the micro-kernel
// reads a row-major B where it lies instead, sliver by sliver. A sliver (kc rows of NR floats,
// 64 KiB for AVX-512 at kc = 256) comes from memory on the first row panel of A, which prefetches
// its rows ahead (one row per page, which the hardware prefetchers do not follow) and packs it as
// it goes; the other panels read that copy from L2. Threads take disjoint ranges of slivers and pack A each for
// themselves (m x k, small next to B), so they never wait for one another. A transposed B cannot
// be read as slivers in place; each sliver is packed alone just before its use, so that it is
// written to and read from L1/L2 instead of going through a kc x nc block in L3.
// A row-major B too large to stay in the L3 between calls (streamed_b_bytes()) comes from memory
// at every call, where the rows of a sliver, 256 bytes each and a whole row of B apart, leave the
// hardware prefetchers nothing to follow and each sliver waits on memory's latency row by row. Such a B is packed a
// group of slivers at a time instead, reading kStreamedRun bytes of each row in one run, which the
// prefetchers stream; the group (kc x 1 KiB) then feeds all panels from L2.
template <class T>
void packed_unpacked_b(const GemmArgs& g, const PackedConfig<T>& cfg, int nt) {
  const T* a = static_cast<const T*>(g.a);
  const T* b = static_cast<const T*>(g.b);
  T* c = static_cast<T*>(g.c);
  const int MR = cfg.mr, NR = cfg.nr;
  // A sliver's rows lie b_rs apart; where that stride is a multiple of 4 KiB (n = 1024, 3072, ...)
  // they all fall into 1/64 of the L2's sets, and a sliver of 512 rows (2048 lines) evicts itself
  // before its second use: such strides get a shorter kc (on the Xeon, 64 x 768 x 3072 went from
  // 51-72% of MKL to 100-118%; NOTES.md). Other strides take at most kUnpackedKc rows: a sliver of
  // 512 rows, each on its own page, ran GPT-2's products at 58-61% (the LM head) to 82-100% of MKL
  // on one thread, 256 rows at 66-90% to 89-103% (NOTES.md, 2026-12-03).
  // A transposed B is packed sliver by sliver from NR columns of kc contiguous elements each; with
  // kc the whole of k (up to kTransposedKc) those columns are one contiguous run of memory, which
  // the hardware prefetchers stream at twice the rate of NR runs of 256 (NOTES.md, 2026-12-04).
  const bool row_major = g.b_cs == 1;
  const int64_t alias = row_major ? std::gcd<int64_t>(g.b_rs * int64_t(sizeof(T)), 4096) : 1;
  const int64_t t_most =
      std::clamp<int64_t>(kTransposedA / (round_up(g.m, MR) * int64_t(sizeof(T))), 64, kTransposedKc);
  const int64_t t_blocks = (g.k + t_most - 1) / t_most;
  const int64_t KC =
      row_major ? std::min({cfg.kc, kUnpackedKc, g.k, std::max<int64_t>(64, 128 * 4096 / std::max<int64_t>(alias, 1))})
                : (g.k + t_blocks - 1) / t_blocks;
  const int64_t mpanels = (g.m + MR - 1) / MR, slivers = (g.n + NR - 1) / NR;
  const bool streamed = row_major && b_from_memory(g);
  const int64_t group = streamed ? std::max<int64_t>(1, kStreamedRun / (NR * int64_t(sizeof(T)))) : 1;
  auto work = [&](int64_t s0, int64_t s1, int64_t q0, int64_t q1) {
    T* ap = scratch<T>(1, size_t(mpanels * MR * KC + KC * NR));
    T* edge_b = ap + mpanels * MR * KC;  // a packed sliver: the last, if narrower than NR, or any of a transposed B
    T* grouped = streamed ? scratch<T>(0, size_t(group * NR * KC)) : nullptr;  // a streamed B's group of slivers
    for (int64_t pc = 0; pc < g.k; pc += KC) {
      const int64_t kc = std::min(KC, g.k - pc);
      const bool accumulate = pc > 0;
      for (int64_t ip = q0; ip < q1; ++ip) pack_a_sliver(g, a, ip * MR, pc, kc, MR, ap + ip * MR * kc);
      for (int64_t s = s0; s < s1; ++s) {
        const int64_t j0 = s * NR, cols = std::min<int64_t>(NR, g.n - j0);
        const T* bs = b + pc * g.b_rs + j0;
        int64_t b_rs = g.b_rs;
        if (streamed) {
          const int64_t first = s0 + (s - s0) / group * group;
          if (s == first)
            pack_b_slivers(g, b, pc, kc, first * NR, 0, std::min(s1 - first, group), NR, grouped, cfg.isa >= CpuIsa::Avx2);
          bs = grouped + (s - first) * NR * kc, b_rs = NR;
        } else if (!row_major) {  // B a transposed view: this sliver packed alone, into L1/L2
          pack_b_slivers(g, b, pc, kc, j0, 0, 1, NR, edge_b, cfg.isa >= CpuIsa::Avx2);
          bs = edge_b, b_rs = NR;
        } else if (cols < NR) {
          for (int64_t p = 0; p < kc; ++p) {
            for (int64_t j = 0; j < cols; ++j) edge_b[p * NR + j] = bs[p * g.b_rs + j];
            for (int64_t j = cols; j < NR; ++j) edge_b[p * NR + j] = T(0);
          }
          bs = edge_b, b_rs = NR;
        }
        // A full row-major sliver used by several panels is read in place only by the first, which
        // stores it packed into edge_b as it goes; the others read that copy. Rows of B a stride
        // apart ran 5-16% slower from L2 than the same rows packed (NOTES.md, 2026-12-04).
        const bool copy_first = row_major && !streamed && cols == NR && q1 - q0 > 1;
        // Prefetching: the first panel of A reads the sliver eight rows ahead of itself (the kernel
        // does that for any B read in place; a second, 16-row lookahead here only doubled the
        // prefetches: NOTES.md, 2026-12-04); the other panels fetch the next sliver's rows, a share
        // each, so that it is in cache when its turn comes.
        const bool next_full = row_major && !streamed && s + 1 < s1 && (s + 2) * NR <= g.n;
        const T* next = next_full ? b + pc * g.b_rs + j0 + NR : nullptr;
        const int64_t share = q1 - q0 > 1 ? (kc + q1 - q0 - 2) / (q1 - q0 - 1) : 0;
        for (int64_t ip = q0; ip < q1; ++ip) {
          const int64_t i0 = ip * MR, rows = std::min<int64_t>(MR, g.m - i0);
          const T* as = ap + ip * MR * kc;
          const T* bk = bs;
          int64_t bk_rs = b_rs;
          T* copy = nullptr;
          if (copy_first && ip == q0) copy = edge_b;
          else if (copy_first) bk = edge_b, bk_rs = NR;
          const T* pf = nullptr;
          int64_t pf_rs = 0, pf_rows = 0;
          if (ip > q0 && next) {
            const int64_t r0 = (ip - q0 - 1) * share;
            pf = next + r0 * g.b_rs, pf_rs = g.b_rs, pf_rows = std::min(share, kc - r0);
          }
          T* cij = c + i0 * g.c_rs + j0;
          if (rows == MR && cols == NR) {
            cfg.kernel_strided_b(kc, as, bk, bk_rs, cij, g.c_rs, accumulate, pf, pf_rs, pf_rows, copy);
            continue;
          }
          if (cols == NR && cfg.first_rows_strided_b[rows]) {
            cfg.first_rows_strided_b[rows](kc, as, bk, bk_rs, cij, g.c_rs, accumulate, pf, pf_rs, pf_rows, copy);
            continue;
          }
          alignas(64) T edge[16 * 64];  // >= the largest MR x NR of any config
          cfg.kernel_strided_b(kc, as, bk, bk_rs, edge, NR, false, pf, pf_rs, pf_rows, copy);
          for (int64_t i = 0; i < rows; ++i)
            for (int64_t j = 0; j < cols; ++j)
              cij[i * g.c_rs + j] = accumulate ? cij[i * g.c_rs + j] + edge[i * NR + j] : edge[i * NR + j];
        }
      }
    }
  };
  if (nt == 1) return work(0, slivers, 0, mpanels);
  // Threads split the columns of C where B is wide (each then packs all of A, which is small next
  // to its share of B) and the rows where it is narrow (each then reads all of B, small next to its
  // share of A). A row-major B is copied as it is read, a transposed one packed in a pass of its
  // own, so the rows are split where C has at most twice as many columns as rows for the first,
  // at most as many for the second; never for a streamed B, which would come from memory once per
  // thread. On two Xeon threads splitting rows ran 256 x 256 x 256 1.07-1.19x faster (row-major B;
  // 1.15x transposed), 128 x 768 x 256 1.14x (1.05x), 200 x 512 x 300 1.29x (1.09x), and
  // 256 x 768 x 768 0.98x (0.95x), 64 x 768 x 768 0.76x (0.82x): NOTES.md, 2026-12-05.
  if (!streamed && (row_major ? 2 * g.m >= g.n : g.m >= g.n) && mpanels >= 2 * int64_t(nt))
    return parallel_for(mpanels, 1, [&](int64_t lo, int64_t hi) { work(0, slivers, lo, hi); });
  parallel_for(slivers, 1, [&](int64_t lo, int64_t hi) { work(lo, hi, 0, mpanels); });
}

// This core's L2 in bytes (1 MiB where the system does not say).
int64_t l2_bytes() {
  static const long l2 = sysconf(_SC_LEVEL2_CACHE_SIZE);
  return l2 > 0 ? int64_t(l2) : int64_t(1) << 20;
}

// Whether a product takes the few-rows path (packed_unpacked_b) rather than the general one.
template <class T>
bool few_rows(const GemmArgs& g, const PackedConfig<T>& cfg) {
  return (g.b_cs == 1 || g.b_rs == 1) && g.m <= std::max(cfg.mc, kUnpackedRows);
}

// Whether rows row_bytes apart keep a block of `rows` x `block_row_bytes` in the L2 as well as a
// packed copy of it would. An address's set in a cache of `ways` ways repeats every size / ways
// bytes, and rows whose stride shares a large power of two with that period land on a few of its
// offsets only: at 8 KiB apart, 2 KiB of each row (kc = 512 floats) use a quarter of the Xeon's
// 2 MiB L2, too little for its 768 KiB block. That is exact on huge pages, whose physical bits
// below 2 MiB are the virtual ones. On 4 KiB pages only the offsets within a page are known; which
// of the period's pages (its colours: 32 on the Xeon) each row lands on is the OS's draw, and some
// colours are drawn more often than others: there the block must also fit half of what its
// offsets within a page cover. Memory not known to lie on huge pages (on_huge_pages) may lie on
// either, so it must fit both ways. GPT-2's fc (rows 12 KiB apart; 384 rows put twelve on each
// set) ran at 0.7x on 4 KiB pages of what it ran on huge ones, and 192 rows ran 1.35-1.54x faster
// than 384 there (NOTES.md, 2026-12-06, eighth session).
bool rows_fit_l2(int64_t row_bytes, int64_t rows, int64_t block_row_bytes, bool huge_pages) {
  static const long assoc = sysconf(_SC_LEVEL2_CACHE_ASSOC);
  constexpr int64_t kPage = 4096;
  const int64_t cache = l2_bytes(), ways = assoc > 0 ? int64_t(assoc) : 16;
  const int64_t period = std::max<int64_t>(64, cache / ways);
  // The room that rows on `span` bytes of known placement leave the block.
  auto room = [&](int64_t span) {
    const int64_t offsets = std::min(rows, span / std::gcd(std::abs(row_bytes), span));
    const int64_t covered = std::min(span, offsets * block_row_bytes);
    return double(cache) * double(covered) / double(span);
  };
  const double block = double(rows) * double(block_row_bytes);
  if (block > room(period)) return false;
  return huge_pages || period <= kPage || block <= room(kPage) / 2;
}

// Products of the few-rows path (at most kUnpackedRows rows) with A and B both row-major take the
// stripes (below) where the config has them and their depth pays (stripe_depth): on the Xeon,
// 32-96 rows gained 1.02-1.22x over the copying path, 128-256 rows 1.06-1.49x on one thread and
// 0.99-1.13x on two (NOTES.md, 2026-12-05, third session).
// The most rows of B a stripe spans (kc), in balanced blocks: MKL's choice for k = 768 and 3072
// (its kernel is called with k = 384); 256 and 768 ran within a few percent of it here, 256 lost
// 2-5% at n = 3072. A B streamed from memory (streamed_b_bytes) takes 256: the row-major LM head
// ran 1.13x faster so on one thread and 1.15x on two (192: 1.03x and 1.07x; 128: 0.83x; NOTES.md).
constexpr int64_t kStripeKc = 384;
constexpr int64_t kStreamedStripeKc = 256;

template <class T>
bool takes_stripes(const GemmArgs& g, const PackedConfig<T>& cfg) {
  return cfg.stripe && g.m <= kUnpackedRows && g.a_cs == 1 && g.b_cs == 1;
}

// The most rows of B a stripe of NR columns may span: every row panel reads the stripe from L2, so
// its rows must fit the sets they fall on there (rows_fit_l2). At n = 3072 (rows 12 KiB apart) 384
// do on huge pages and 192 where B may lie on 4 KiB ones; at 2048 192, at 4096 96, at 8192 48,
// wherever B lies. 0 where none of the halvings down to 48 rows fits (64, from a streamed B's 256).
int64_t stripe_rows_cap(const GemmArgs& g, int64_t NR) {
  const int64_t elem = int64_t(itemsize(g.dtype));
  const bool huge = on_huge_pages(g.b, size_t(((g.k - 1) * g.b_rs + g.n) * elem));
  for (int64_t most = b_from_memory(g) ? kStreamedStripeKc : kStripeKc; most >= 48; most /= 2)
    if (rows_fit_l2(g.b_rs * elem, most, NR * elem, huge)) return most;
  return 0;
}

// The stripes' kc for g, in balanced blocks, or 0 where g takes the copying path
// (packed_unpacked_b) instead. Each kc block of the stripes reads and writes all of C again, while
// the copying path (kc up to 1024) copies each sliver of B once for all its row panels: a short cap
// costs the stripes more the more rows share it. Side by side on the Xeon, Ember's memory, one
// thread: at a cap of 48 (8192 columns) 64 rows ran 1.53x faster on the copying path (two threads
// too), 32 level, 16 at 0.82x; at 96 (4096 columns) 128-256 rows 1.08-1.11x, 64 level, 32 0.89x;
// at 192 (2048 columns) 128 and 256 rows level (NOTES.md, 2026-12-06, eighth session). So under a
// cap of 192 the stripes take at most two thirds as many rows as their cap, or a k that one block
// holds; from 192 on (measured level or ahead) they take every row count as before.
template <class T>
int64_t stripe_depth(const GemmArgs& g, const PackedConfig<T>& cfg) {
  if (!takes_stripes(g, cfg)) return 0;
  const int64_t most = stripe_rows_cap(g, cfg.stripe_nr);
  if (most == 0 || (most < 192 && g.k > most && 3 * g.m > 2 * most)) return 0;
  const int64_t blocks = (g.k + most - 1) / most;
  return (g.k + blocks - 1) / blocks;
}

// C = A B for few rows, in stripes of B's columns, nothing copied (kernel_body_stripe in
// microkernel.h): each stripe of kc rows of B is read where it lies by every row panel of A, also
// read where it lies. This is how MKL's sgemm runs GPT-2's 64-row products (its no-copy kernel, as
// a profile of torch.mm shows); it beat the copying path of packed_unpacked_b by 4-11% on them,
// the grouped pack of a B from memory (the row-major LM head) by 6%, and the copying path by
// 8-10% where B's rows do not start on cache lines (2300 columns; NOTES.md, 2026-12-05, third
// session). The last stripe, if narrower, takes a kernel of fewer vectors (and where its columns
// do not fill them, a zero-padded copy of them and a buffer of C). Threads split the stripes, or
// the rows where C has at most twice as many columns as rows.
template <class T>
void stripes(const GemmArgs& g, const PackedConfig<T>& cfg, int nt, int64_t KC) {
  const T* a = static_cast<const T*>(g.a);
  const T* b = static_cast<const T*>(g.b);
  T* c = static_cast<T*>(g.c);
  const int MR = cfg.stripe_mr, NR = cfg.stripe_nr;
  const int64_t nstripes = (g.n + NR - 1) / NR, panels = (g.m + MR - 1) / MR;
  // Where a kc block's C, B and A together are larger than the L2, a tile of C has left it by the
  // time a panel stores it (or adds to it): each panel asks for its lines first. The row-major LM
  // head (64 x 50257) ran 1.12-1.14x faster so, GPT-2's other 64-row products 1.01-1.03x; where
  // the block fits, as at n = 256, the requests only cost (0.99x; NOTES.md, 2026-12-05, fourth
  // session).
  const bool fetch_c =
      (double(g.m) * double(g.n) + double(KC) * double(g.n) + double(g.m) * double(KC)) * double(sizeof(T)) >
      double(l2_bytes());
  auto work = [&](int64_t s0, int64_t s1, int64_t r0, int64_t r1) {
    for (int64_t pc = 0; pc < g.k; pc += KC) {
      const int64_t kc = std::min(KC, g.k - pc);
      const T* ak = a + r0 * g.a_rs + pc;
      for (int64_t s = s0; s < s1; ++s) {
        const int64_t j0 = s * NR, cols = std::min<int64_t>(NR, g.n - j0);
        const T* bk = b + pc * g.b_rs + j0;
        if (cols == NR) {
          const T* next = s + 1 < s1 && j0 + 2 * NR <= g.n ? bk + NR : nullptr;
          cfg.stripe(kc, ak, g.a_rs, r1 - r0, bk, g.b_rs, c + r0 * g.c_rs + j0, g.c_rs, pc > 0, fetch_c, next);
          continue;
        }
        // The last stripe, narrower: as many vectors as its columns need, read in place where they
        // fill them, else from a zero-padded copy, into a buffer of C.
        const int lanes = cfg.stripe_lanes, nv = int((cols + lanes - 1) / lanes);
        const bool has_narrow = nv < NR / lanes && cfg.stripe_narrow[nv];
        const MicroKernelStripe<T> narrow = has_narrow ? cfg.stripe_narrow[nv] : cfg.stripe;
        const int64_t wb = has_narrow ? int64_t(nv) * lanes : NR;  // the kernel's width
        if (cols == wb) {
          narrow(kc, ak, g.a_rs, r1 - r0, bk, g.b_rs, c + r0 * g.c_rs + j0, g.c_rs, pc > 0, fetch_c, nullptr);
          continue;
        }
        T* bb = scratch<T>(1, size_t(kc * wb + (r1 - r0) * wb));
        T* cb = bb + kc * wb;
        for (int64_t p = 0; p < kc; ++p) {
          for (int64_t j = 0; j < cols; ++j) bb[p * wb + j] = bk[p * g.b_rs + j];
          for (int64_t j = cols; j < wb; ++j) bb[p * wb + j] = T(0);
        }
        narrow(kc, ak, g.a_rs, r1 - r0, bb, wb, cb, wb, false, false, nullptr);
        for (int64_t i = r0; i < r1; ++i)
          for (int64_t j = 0; j < cols; ++j) {
            T& dst = c[i * g.c_rs + j0 + j];
            dst = pc > 0 ? dst + cb[(i - r0) * wb + j] : cb[(i - r0) * wb + j];
          }
      }
    }
  };
  if (nt == 1) return work(0, nstripes, 0, g.m);
  if (2 * g.m >= g.n && panels >= 2 * int64_t(nt))
    return parallel_for(panels, 1, [&](int64_t lo, int64_t hi) { work(0, nstripes, lo * MR, std::min(g.m, hi * MR)); });
  parallel_for(nstripes, 1, [&](int64_t lo, int64_t hi) { work(lo, hi, 0, g.m); });
}

// The general path reads a row-major A where it lies instead of packing it, where the config has
// a kernel for that and the rows keep its mc x kc block in L2 (rows_fit_l2). Packing A is there
// to keep that block in L2 while every sliver of B passes it; rows of A that stay there serve as
// well, and the kernel's six broadcasts then come from six streams of consecutive floats, which
// the hardware prefetchers follow. On the Xeon, one thread: n = 512 1.05x, 768 1.03x, 1024
// 1.02-1.04x; n = 2048, whose rows lie 8 KiB apart, ran 0.97-0.98x in place with the full block,
// so it takes a smaller one (a_block_rows below; NOTES.md, 2026-12-05, third session).
template <class T>
bool a_in_place(const GemmArgs& g, const PackedConfig<T>& cfg, int64_t kc, int64_t mc) {
  // By the rule for huge pages alone: the one for 4 KiB pages was measured on the stripes only.
  return cfg.kernel_rows_a && g.a_cs == 1 && rows_fit_l2(g.a_rs * int64_t(sizeof(T)), mc, kc * int64_t(sizeof(T)), true);
}
// The rows of A's block in the general path: mc, or where A is row-major and its rows would not
// keep mc of them in L2, the most rows (down to `least`) that they do keep, so that A is still read
// in place. At n = 2048 (rows 8 KiB apart) 192 rows instead of 384 ran 1.02x on one thread and
// 1.00-1.04x on two, 1024 x 4096 x 1024 (96 rows) 1.05-1.06x; a block of 48 rows (32 KiB apart)
// lost 7% on two threads, so 96 rows on that 2 MiB L2 are the floor (NOTES.md).
template <class T>
int64_t a_block_rows(const GemmArgs& g, const PackedConfig<T>& cfg, int64_t kc, int64_t mc, int64_t least) {
  if (!cfg.kernel_rows_a || g.a_cs != 1 || a_in_place(g, cfg, kc, mc)) return mc;
  for (int64_t rows = (mc / 2) / cfg.mr * cfg.mr; rows >= least; rows = (rows / 2) / cfg.mr * cfg.mr)
    if (a_in_place(g, cfg, kc, rows)) return rows;
  return mc;
}

// The columns of C a thread takes at a time where threads split only the columns of a product
// whose A is read in place (packed() below): on the Xeon's two vCPUs, either of which can run
// 10-20% slower than the other for whole calls at a time, fixed halves left one thread done 7-13 ms
// before the other in 63-73 ms products of n = 2048. Groups of 128 columns taken in turn ran
// n = 4096 at a median 1.07x of the halves, 2048 1.03x, 1536 1.01x, 1024 1.00x (NOTES.md, 2026-12-06).
constexpr int64_t kColumnsInTurn = 128;

// The depth and rows of the general path's blocks. The config's kc and mc suit a 1 MiB L2 (its
// comment in microkernels.cpp): the kc x NR sliver of B and the mc x kc block of A fill half of it.
// A 2 MiB L2 takes twice the depth rather than twice the rows: every kc block costs a load and a
// store of each tile of C, and each call of the micro-kernel does twice the FMAs for the same
// overhead. On the Xeon's 2 MiB L2, kc 1024 x mc 192 against 512 x 384 ran squares of 768-4096
// 1.00-1.04x and GPT-2-sized products of 512-2048 rows 1.02-1.04x, on one thread and on two
// (NOTES.md, 2026-12-05, sixth session). A still larger L2 also takes more rows. Configs whose B sliver is
// sized for the L1 (AVX2's 256 x 16 floats, 16 KiB) keep their kc and take more rows, as before:
// twice the depth would outgrow a 32 KiB L1, and it was not measured.
struct GeneralBlocks {
  int64_t kc, mc;
};
template <class T>
GeneralBlocks general_blocks(const GemmArgs& g, const PackedConfig<T>& cfg) {
  // A B sliver over 64 KiB (more than any core's L1d) is one the config already streams from L2.
  const bool sliver_in_l2 = cfg.kc * cfg.nr * int64_t(sizeof(T)) > (int64_t(64) << 10);
  const int64_t scale = std::clamp<int64_t>(l2_bytes() >> 20, 1, 4);
  const int64_t deeper = sliver_in_l2 ? std::min<int64_t>(scale, 2) : 1;
  const int64_t kc = std::min(cfg.kc * deeper, g.k);
  const int64_t mc = std::min(cfg.mc * (scale / deeper), round_up(g.m, cfg.mr));
  return {kc, a_block_rows(g, cfg, kc, mc, cfg.mc * scale / 4)};  // the floor: a quarter of mc per MiB
}

template <class T>
void packed(const GemmArgs& g, const PackedConfig<T>& cfg) {
  const T* a = static_cast<const T*>(g.a);
  const T* b = static_cast<const T*>(g.b);
  T* c = static_cast<T*>(g.c);
  const int MR = cfg.mr, NR = cfg.nr;
  const GeneralBlocks blocks = general_blocks(g, cfg);
  const int64_t KC = blocks.kc, MC = blocks.mc;
  const int64_t NC = std::min(cfg.nc, round_up(g.n, NR));

  const int nt = threads_for(g);
  // Products of fewer than kSkinnyRows rows take skinny() (B read once per row of A) unless the
  // stripes take them: with two and three rows the stripes read a B of 768 x 2304 or 3072 at
  // 23-24 GB/s, as they do with four, where skinny() read it at 9-14 (MKL 22-23; NOTES.md,
  // 2026-12-06, ninth session).
  const int64_t depth = stripe_depth(g, cfg);
  if (g.m < kSkinnyRows && depth == 0) return skinny<T>(g, cfg.isa);
  if (few_rows(g, cfg)) return depth > 0 ? stripes(g, cfg, nt, depth) : packed_unpacked_b(g, cfg, nt);
  const int64_t mpanels_all = (g.m + MR - 1) / MR;
  const bool a_rows = a_in_place(g, cfg, KC, MC);
  const Grid grid = thread_grid(nt, mpanels_all, (NC + NR - 1) / NR, a_rows);
  // Threads that split only columns, A read in place, take groups of kColumnsInTurn columns in
  // turn (work_columns below), each packed into a region of the thread's own.
  const bool columns_in_turn = nt > 1 && grid.tm == 1 && a_rows;
  const int64_t group = std::max<int64_t>(1, kColumnsInTurn / NR);  // slivers per group
  const int64_t b_elems = columns_in_turn ? nt * group * NR * KC : KC * NC;
  T* bp = scratch<T>(0, size_t(b_elems));  // the packed kc x nc block of B, or one group per thread
  T* ap_all = a_rows ? nullptr : scratch<T>(1, size_t(nt * KC * MC));   // private: one packed block of A per thread

  // Each thread owns a fixed range of C's rows and columns for the whole product and packs its own
  // blocks of A. Where threads split rows, they share the block of B, each packing a part of it,
  // with two barriers per block (packed before use, used before it is overwritten) that yield the
  // core while waiting: on a machine where another process may hold a core, every barrier can
  // cost a scheduler time slice, so their number and their manners matter more than their quiet
  // cost. Where they split only columns, each packs the slivers it uses into a region of its own,
  // laid out at the full KC (a shorter last kc block must not move a thread's slivers into the
  // region of a neighbour still working on the previous block), and nobody waits; on two Xeon
  // threads, with A read in place, that ran 1.02-1.03x faster than the shared block (NOTES.md).
  YieldingBarrier barrier(nt);
  // One kc block of the columns [jp0, jp1) of the NC block at jc, for C's rows [row0, row1): the
  // slivers from bt on (the first being sliver sl0 of the block), A packed into ap or read in place.
  auto run_block = [&](int64_t jc, int64_t pc, int64_t kc, int64_t jp0, int64_t jp1, const T* bt, int64_t sl0,
                       int64_t row0, int64_t row1, T* ap) {
    const bool accumulate = pc > 0;
    for (int64_t ic = row0; ic < row1; ic += MC) {
      const int64_t mc = std::min(MC, row1 - ic), mpanels = (mc + MR - 1) / MR;
      if (!a_rows)
        for (int64_t ip = 0; ip < mpanels; ++ip) pack_a_sliver(g, a, ic + ip * MR, pc, kc, MR, ap + ip * MR * kc);
      // The B sliver of one column of tiles stays in L1/L2 while the A slivers stream past it.
      // Its successor (after the last, the first again, for the next block of A) comes from L3:
      // the panels after the first fetch it a share each, so that it is in L2 when its turn comes.
      for (int64_t jp = jp0; jp < jp1; ++jp) {
        const T* next = bt + ((jp + 1 < jp1 ? jp + 1 : jp0) - sl0) * NR * kc;
        const int64_t share = mpanels > 1 ? (kc + mpanels - 2) / (mpanels - 1) : 0;
        for (int64_t ip = 0; ip < mpanels; ++ip) {
          const int64_t i0 = ic + ip * MR, j0 = jc + jp * NR;
          const int64_t rows = std::min<int64_t>(MR, g.m - i0), cols = std::min<int64_t>(NR, g.n - j0);
          const T* bs = bt + (jp - sl0) * NR * kc;
          T* cij = c + i0 * g.c_rs + j0;
          const T* pf = nullptr;
          int64_t pf_rows = 0;
          if (ip > 0 && (ip - 1) * share < kc) {
            const int64_t r0 = (ip - 1) * share;
            pf = next + r0 * NR, pf_rows = std::min(share, kc - r0);
          }
          if (a_rows) {  // A where it lies, the last panel's rows < MR with a kernel of that height
            const T* ar = a + i0 * g.a_rs + pc;
            const MicroKernelRowsA<T> kern = cfg.rows_a_kernel(rows);
            if (cols == NR) {
              kern(kc, ar, g.a_rs, bs, cij, g.c_rs, accumulate, pf, pf_rows);
              continue;
            }
            alignas(64) T edge[16 * 64];
            kern(kc, ar, g.a_rs, bs, edge, NR, false, pf, pf_rows);
            for (int64_t i = 0; i < rows; ++i)
              for (int64_t j = 0; j < cols; ++j)
                cij[i * g.c_rs + j] = accumulate ? cij[i * g.c_rs + j] + edge[i * NR + j] : edge[i * NR + j];
            continue;
          }
          const T* as = ap + ip * MR * kc;
          if (rows == MR && cols == NR) {
            if (pf) cfg.kernel_strided_b(kc, as, bs, NR, cij, g.c_rs, accumulate, pf, NR, pf_rows, nullptr);
            else cfg.kernel(kc, as, bs, cij, g.c_rs, accumulate);
            continue;
          }
          alignas(64) T edge[16 * 64];  // >= the largest MR x NR of any config
          cfg.kernel(kc, as, bs, edge, NR, false);
          for (int64_t i = 0; i < rows; ++i)
            for (int64_t j = 0; j < cols; ++j)
              cij[i * g.c_rs + j] = accumulate ? cij[i * g.c_rs + j] + edge[i * NR + j] : edge[i * NR + j];
        }
      }
    }
  };
  auto work = [&](const int t, const int threads, const Grid gr, YieldingBarrier* bar) {
    const int ti = t / gr.tn, tj = t % gr.tn;
    const int64_t mshare = (mpanels_all + gr.tm - 1) / gr.tm;
    const int64_t row0 = std::min(g.m, ti * mshare * MR), row1 = std::min(g.m, (ti + 1) * mshare * MR);
    T* ap = a_rows ? nullptr : ap_all + t * KC * MC;
    bool first = true;
    for (int64_t jc = 0; jc < g.n; jc += NC) {
      const int64_t nc = std::min(NC, g.n - jc), npanels = (nc + NR - 1) / NR;
      const int64_t nshare = (npanels + gr.tn - 1) / gr.tn;
      const int64_t jp0 = std::min(npanels, tj * nshare), jp1 = std::min(npanels, (tj + 1) * nshare);
      for (int64_t pc = 0; pc < g.k; pc += KC) {
        const int64_t kc = std::min(KC, g.k - pc);
        // This thread's slivers: from bt on, the first being sliver sl0 of the block.
        const bool own = gr.tm == 1;
        T* const bt = own ? bp + jp0 * NR * KC : bp;
        const int64_t sl0 = own ? jp0 : 0;
        if (own) {
          if (jp0 < jp1) pack_b_slivers(g, b, pc, kc, jc + jp0 * NR, 0, jp1 - jp0, NR, bt, cfg.isa >= CpuIsa::Avx2);
        } else {
          if (!first && bar) bar->wait();
          first = false;
          const int64_t bshare = (npanels + threads - 1) / threads;
          pack_b_slivers(g, b, pc, kc, jc, std::min(npanels, t * bshare), std::min(npanels, (t + 1) * bshare), NR, bp,
                         cfg.isa >= CpuIsa::Avx2);
          if (bar) bar->wait();
        }
        if (jp0 < jp1) run_block(jc, pc, kc, jp0, jp1, bt, sl0, row0, row1, ap);
      }
    }
  };
  // Where the threads split only columns, each takes the next group of slivers from a shared
  // counter, packs it into its own region and runs it through every kc block and every row, until
  // none is left. Fixed halves (work() above) made a thread whose core ran slower for a while keep
  // the other waiting; a group's B (kc x 128 columns) also stays in L2 across all the row blocks.
  std::atomic<int64_t> claimed{0};
  auto work_columns = [&](const int t) {
    T* const bt = bp + t * group * NR * KC;
    for (;;) {
      int64_t u = claimed.fetch_add(1, std::memory_order_relaxed), jc = 0, npanels = 0;
      for (; jc < g.n; jc += NC) {  // unit u: group u of the NC blocks' groups, counted in order
        npanels = (std::min(NC, g.n - jc) + NR - 1) / NR;
        const int64_t units = (npanels + group - 1) / group;
        if (u < units) break;
        u -= units;
      }
      if (jc >= g.n) return;
      const int64_t jp0 = u * group, jp1 = std::min(npanels, jp0 + group);
      for (int64_t pc = 0; pc < g.k; pc += KC) {
        const int64_t kc = std::min(KC, g.k - pc);
        pack_b_slivers(g, b, pc, kc, jc + jp0 * NR, 0, jp1 - jp0, NR, bt, cfg.isa >= CpuIsa::Avx2);
        run_block(jc, pc, kc, jp0, jp1, bt, jp0, 0, g.m, nullptr);
      }
    }
  };
  if (nt == 1) return work(0, 1, Grid{}, nullptr);
#pragma omp parallel num_threads(nt)
  {
#ifdef _OPENMP
    const int t = omp_get_thread_num(), threads = omp_get_num_threads();
#else
    const int t = 0, threads = 1;
#endif
    if (threads == nt && columns_in_turn) work_columns(t);
    else if (threads == nt) work(t, threads, grid, &barrier);
    else if (t == 0) work(0, 1, Grid{}, nullptr);  // the runtime granted fewer threads than asked
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

bool reads_a_in_place(const GemmArgs& g, CpuIsa isa) {
  if (g.m < kSkinnyRows || g.n == 0 || g.k == 0) return false;  // skinny, or the stripes
  auto decide = [&](const auto& cfg) {
    const GeneralBlocks blocks = general_blocks(g, cfg);
    return !few_rows(g, cfg) && a_in_place(g, cfg, blocks.kc, blocks.mc);
  };
  return g.dtype == DType::Float32 ? decide(packed_config_f32(isa)) : decide(packed_config_f64(isa));
}

int64_t stripe_kc(const GemmArgs& g, CpuIsa isa) {
  if (g.n == 0 || g.k == 0) return 0;  // as gemm_packed: those take no kernel
  return g.dtype == DType::Float32 ? stripe_depth(g, packed_config_f32(isa)) : stripe_depth(g, packed_config_f64(isa));
}

int64_t streamed_b_bytes() { return g_streamed_b_bytes > 0 ? g_streamed_b_bytes : streamed_b_default(); }
void set_streamed_b_bytes(int64_t bytes) {
  EMBER_CHECK(bytes >= 0, "matmul: the streamed-B threshold must be >= 0 bytes (0: the default), got ", bytes);
  g_streamed_b_bytes = bytes;
}

}  // namespace ember::cpu
