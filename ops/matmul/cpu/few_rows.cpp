// C = A B for a product with few rows (m <= max(mc, kUnpackedRows): GPT-2's layers at a prompt of
// 64-256 tokens) whose B is row-major, or a transposed view (the tied LM head, wte^T), where the
// stripes (stripes.cpp) do not take it. Each element of B is used only m times there, so packing it
// (a read and a write of all of B, then a second read from L3, since B is megabytes) costs more
// than the copy is worth; the micro-kernel reads a row-major B where it lies instead, sliver by
// sliver. A sliver comes from memory on the first row panel of A, which prefetches its rows ahead
// (one row per page, which the hardware prefetchers do not follow) and packs it as it goes; the
// other panels read that copy from L2. Threads take disjoint ranges of slivers and pack A each for
// themselves (m x k, small next to B), so they never wait for one another.
// A transposed B cannot be read as slivers in place: each sliver is packed alone just before its
// use, so that it is written to and read from L1/L2 instead of going through a kc x nc block in L3.
// A row-major B too large to stay in the L3 between calls (b_from_memory) comes from memory at
// every call, where the rows of a sliver, a whole row of B apart, leave the prefetchers nothing to
// follow: such a B is packed a group of slivers at a time, kStreamedRun bytes of each row in one
// run, which the prefetchers stream; the group then feeds all panels from L2.
#include <algorithm>
#include <numeric>

#include "framework/core/parallel.h"
#include "ops/matmul/cpu/packed_internal.h"
#include "ops/matmul/cpu/packing.h"

namespace ember::cpu::packed_gemm {

namespace {

// The blocking of one product on this path, shared by the threads.
template <class T>
struct FewRows : Operands<T> {
  int MR, NR;
  int64_t KC;         // rows of B per block
  int64_t mpanels;    // row panels of A
  int64_t slivers;    // NR-wide slivers of B
  bool row_major;     // B row-major (else a transposed view)
  bool streamed;      // a row-major B from memory, packed in groups
  int64_t group;      // slivers per group where streamed, else 1
};

// The depth of the blocks. A sliver's rows lie b_rs apart; where that stride is a multiple of 4 KiB
// they fall into few of the L2's sets, and a long sliver evicts itself before its second use: such
// strides get a shorter kc (kAliasedSliverBytes), others at most kUnpackedKc. A transposed B is
// packed from NR columns of kc contiguous elements each; with kc the whole of k (up to
// kTransposedKc, fewer where A's block would outgrow kTransposedABytes) each is one run of memory.
template <class T>
int64_t few_rows_kc(const GemmArgs& g, const PackedConfig<T>& cfg, bool row_major) {
  const int64_t alias = row_major ? std::gcd<int64_t>(g.b_rs * int64_t(sizeof(T)), kPageBytes) : 1;
  const int64_t t_most = std::clamp<int64_t>(kTransposedABytes / (round_up(g.m, cfg.mr) * int64_t(sizeof(T))),
                                             kTransposedKcFloor, kTransposedKc);
  const int64_t t_blocks = (g.k + t_most - 1) / t_most;
  return row_major ? std::min({cfg.kc, kUnpackedKc, g.k,
                               std::max<int64_t>(kAliasedKcFloor, kAliasedSliverBytes / std::max<int64_t>(alias, 1))})
                   : (g.k + t_blocks - 1) / t_blocks;
}

// The tiles of one sliver of C's columns (from j0, `cols` wide, B's rows at bs + p * b_rs) for the
// row panels [q0, q1), over one kc block at pc. A full row-major sliver used by several panels is
// read in place only by the first, which stores it packed into edge_b as it goes; the others read
// that copy (rows of B a stride apart ran slower from L2 than the same rows packed). The first panel
// reads the sliver ahead of itself (the kernel does that for any B read in place); the other panels
// fetch the next sliver's rows, a share each, so that it is in cache when its turn comes.
template <class T>
void few_rows_sliver(const FewRows<T>& f, int64_t s, int64_t s1, int64_t q0, int64_t q1, int64_t pc, int64_t kc,
                     const T* ap, const T* bs, int64_t b_rs, T* edge_b) {
  const GemmArgs& g = f.g;
  const int MR = f.MR, NR = f.NR;
  const bool accumulate = pc > 0;
  const int64_t j0 = s * NR, cols = std::min<int64_t>(NR, g.n - j0);
  const bool copy_first = f.row_major && !f.streamed && cols == NR && q1 - q0 > 1;
  const bool next_full = f.row_major && !f.streamed && s + 1 < s1 && (s + 2) * NR <= g.n;
  const T* next = next_full ? f.b + pc * g.b_rs + j0 + NR : nullptr;
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
    T* cij = f.c + i0 * g.c_rs + j0;
    if (rows == MR && cols == NR) {
      f.cfg.kernel_strided_b(kc, as, bk, bk_rs, cij, g.c_rs, accumulate, pf, pf_rs, pf_rows, copy);
      continue;
    }
    if (cols == NR && f.cfg.first_rows_strided_b[rows]) {
      f.cfg.first_rows_strided_b[rows](kc, as, bk, bk_rs, cij, g.c_rs, accumulate, pf, pf_rs, pf_rows, copy);
      continue;
    }
    alignas(64) T edge[16 * 64];  // >= the largest MR x NR of any config
    f.cfg.kernel_strided_b(kc, as, bk, bk_rs, edge, NR, false, pf, pf_rs, pf_rows, copy);
    store_edge(edge, NR, rows, cols, accumulate, cij, g.c_rs);
  }
}

// One thread's share: the slivers [s0, s1) of C's columns for the row panels [q0, q1).
template <class T>
void few_rows_share(const FewRows<T>& f, int64_t s0, int64_t s1, int64_t q0, int64_t q1) {
  const GemmArgs& g = f.g;
  const int MR = f.MR, NR = f.NR;
  const int64_t KC = f.KC;
  T* ap = scratch<T>(1, size_t(f.mpanels * MR * KC + KC * NR));
  T* edge_b = ap + f.mpanels * MR * KC;  // a packed sliver: the last, if narrower than NR, or any of a transposed B
  T* grouped = f.streamed ? scratch<T>(0, size_t(f.group * NR * KC)) : nullptr;  // a streamed B's group of slivers
  const bool simd = f.cfg.isa >= CpuIsa::Avx2;
  for (int64_t pc = 0; pc < g.k; pc += KC) {
    const int64_t kc = std::min(KC, g.k - pc);
    for (int64_t ip = q0; ip < q1; ++ip) pack_a_sliver(g, f.a, ip * MR, pc, kc, MR, ap + ip * MR * kc);
    for (int64_t s = s0; s < s1; ++s) {
      const int64_t j0 = s * NR, cols = std::min<int64_t>(NR, g.n - j0);
      const T* bs = f.b + pc * g.b_rs + j0;
      int64_t b_rs = g.b_rs;
      if (f.streamed) {
        const int64_t first = s0 + (s - s0) / f.group * f.group;
        if (s == first) pack_b_slivers(g, f.b, pc, kc, first * NR, 0, std::min(s1 - first, f.group), NR, grouped, simd);
        bs = grouped + (s - first) * NR * kc, b_rs = NR;
      } else if (!f.row_major) {  // B a transposed view: this sliver packed alone, into L1/L2
        pack_b_slivers(g, f.b, pc, kc, j0, 0, 1, NR, edge_b, simd);
        bs = edge_b, b_rs = NR;
      } else if (cols < NR) {
        for (int64_t p = 0; p < kc; ++p) {
          for (int64_t j = 0; j < cols; ++j) edge_b[p * NR + j] = bs[p * g.b_rs + j];
          for (int64_t j = cols; j < NR; ++j) edge_b[p * NR + j] = T(0);
        }
        bs = edge_b, b_rs = NR;
      }
      few_rows_sliver(f, s, s1, q0, q1, pc, kc, ap, bs, b_rs, edge_b);
    }
  }
}

}  // namespace

// Threads split the columns of C where B is wide (each then packs all of A, small next to its
// share of B) and the rows where it is narrow (splits_rows); never the rows for a streamed B,
// which would then come from memory once per thread.
template <class T>
void packed_unpacked_b(const GemmArgs& g, const PackedConfig<T>& cfg, int nt) {
  const bool row_major = g.b_cs == 1;
  const bool streamed = row_major && b_from_memory(g);
  const FewRows<T> f{Operands<T>::of(g, cfg),
                     cfg.mr,
                     cfg.nr,
                     few_rows_kc(g, cfg, row_major),
                     (g.m + cfg.mr - 1) / cfg.mr,
                     (g.n + cfg.nr - 1) / cfg.nr,
                     row_major,
                     streamed,
                     streamed ? std::max<int64_t>(1, kStreamedRun / (cfg.nr * int64_t(sizeof(T)))) : 1};
  if (nt == 1) return few_rows_share(f, 0, f.slivers, 0, f.mpanels);
  const int64_t columns_per_row = row_major ? kRowMajorColumnsPerRow : kTransposedColumnsPerRow;
  if (!streamed && splits_rows(g.m, g.n, columns_per_row, f.mpanels, nt))
    return parallel_for(f.mpanels, 1, [&](int64_t lo, int64_t hi) { few_rows_share(f, 0, f.slivers, lo, hi); });
  parallel_for(f.slivers, 1, [&](int64_t lo, int64_t hi) { few_rows_share(f, lo, hi, 0, f.mpanels); });
}

template void packed_unpacked_b<float>(const GemmArgs&, const PackedConfig<float>&, int);
template void packed_unpacked_b<double>(const GemmArgs&, const PackedConfig<double>&, int);

}  // namespace ember::cpu::packed_gemm
