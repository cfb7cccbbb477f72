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

#include "framework/core/parallel.h"
#include "ops/matmul/cpu/packed_internal.h"
#include "ops/matmul/cpu/packing.h"
#include "ops/matmul/cpu/yielding_barrier.h"

namespace ember::cpu {

namespace packed_gemm {

namespace {

// One product on the general path: its blocking, its buffers, and what every thread reads.
template <class T>
struct General : Operands<T> {
  int MR, NR;
  int64_t KC, MC, NC;   // the blocks: kc x nc of B, mc x kc of A
  int64_t mpanels_all;  // MR-row panels of all of C
  bool a_rows;          // A read where it lies (a_in_place), not packed
  int64_t group;        // slivers per group, where threads take groups of columns in turn
  T* bp;                // the packed kc x nc block of B, or one group's region per thread
  T* ap_all;            // one packed block of A per thread; nullptr where A is read in place
  bool simd;            // the config's ISA has AVX2 (pack_b_slivers)
};

// One kc block of the columns [jp0, jp1) of the NC block at jc, for C's rows [row0, row1): the
// slivers from bt on (the first being sliver sl0 of the block), A packed into ap or read in place.
// The B sliver of one column of tiles stays in L1/L2 while the A slivers stream past it. Its
// successor (after the last, the first again, for the next block of A) comes from L3: the panels
// after the first fetch it a share each, so that it is in L2 when its turn comes.
template <class T>
void general_block(const General<T>& p, int64_t jc, int64_t pc, int64_t kc, int64_t jp0, int64_t jp1, const T* bt,
                   int64_t sl0, int64_t row0, int64_t row1, T* ap) {
  const GemmArgs& g = p.g;
  const PackedConfig<T>& cfg = p.cfg;
  const int MR = p.MR, NR = p.NR;
  const bool accumulate = pc > 0;
  for (int64_t ic = row0; ic < row1; ic += p.MC) {
    const int64_t mc = std::min(p.MC, row1 - ic), mpanels = (mc + MR - 1) / MR;
    if (!p.a_rows)
      for (int64_t ip = 0; ip < mpanels; ++ip) pack_a_sliver(g, p.a, ic + ip * MR, pc, kc, MR, ap + ip * MR * kc);
    for (int64_t jp = jp0; jp < jp1; ++jp) {
      const T* next = bt + ((jp + 1 < jp1 ? jp + 1 : jp0) - sl0) * NR * kc;
      const int64_t share = mpanels > 1 ? (kc + mpanels - 2) / (mpanels - 1) : 0;
      for (int64_t ip = 0; ip < mpanels; ++ip) {
        const int64_t i0 = ic + ip * MR, j0 = jc + jp * NR;
        const int64_t rows = std::min<int64_t>(MR, g.m - i0), cols = std::min<int64_t>(NR, g.n - j0);
        const T* bs = bt + (jp - sl0) * NR * kc;
        T* cij = p.c + i0 * g.c_rs + j0;
        const T* pf = nullptr;
        int64_t pf_rows = 0;
        if (ip > 0 && (ip - 1) * share < kc) {
          const int64_t r0 = (ip - 1) * share;
          pf = next + r0 * NR, pf_rows = std::min(share, kc - r0);
        }
        if (p.a_rows) {  // A where it lies, the last panel's rows < MR with a kernel of that height
          const T* ar = p.a + i0 * g.a_rs + pc;
          const MicroKernelRowsA<T> kern = cfg.rows_a_kernel(rows);
          if (cols == NR) {
            kern(kc, ar, g.a_rs, bs, cij, g.c_rs, accumulate, pf, pf_rows);
            continue;
          }
          alignas(64) T edge[16 * 64];
          kern(kc, ar, g.a_rs, bs, edge, NR, false, pf, pf_rows);
          store_edge(edge, NR, rows, cols, accumulate, cij, g.c_rs);
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
        store_edge(edge, NR, rows, cols, accumulate, cij, g.c_rs);
      }
    }
  }
}

// Thread t's fixed range of C's rows and columns in grid gr, for the whole product: it packs its own
// blocks of A. Where threads split rows (gr.tm > 1) they share the block of B, each packing a part
// of it, with two barriers per block (packed before use, used before it is overwritten) that yield
// the core while waiting (yielding_barrier.h). Where they split only columns, each packs the
// slivers it uses into a region of its own, laid out at the full KC (a shorter last kc block must
// not move a thread's slivers into the region of a neighbour still working on the previous block),
// and nobody waits.
template <class T>
void general_share(const General<T>& p, const int t, const int threads, const Grid gr, YieldingBarrier* bar) {
  const GemmArgs& g = p.g;
  const int MR = p.MR, NR = p.NR;
  const int64_t KC = p.KC, NC = p.NC;
  const int ti = t / gr.tn, tj = t % gr.tn;
  const int64_t mshare = (p.mpanels_all + gr.tm - 1) / gr.tm;
  const int64_t row0 = std::min(g.m, ti * mshare * MR), row1 = std::min(g.m, (ti + 1) * mshare * MR);
  T* ap = p.a_rows ? nullptr : p.ap_all + t * KC * p.MC;
  bool first = true;
  for (int64_t jc = 0; jc < g.n; jc += NC) {
    const int64_t nc = std::min(NC, g.n - jc), npanels = (nc + NR - 1) / NR;
    const int64_t nshare = (npanels + gr.tn - 1) / gr.tn;
    const int64_t jp0 = std::min(npanels, tj * nshare), jp1 = std::min(npanels, (tj + 1) * nshare);
    for (int64_t pc = 0; pc < g.k; pc += KC) {
      const int64_t kc = std::min(KC, g.k - pc);
      // This thread's slivers: from bt on, the first being sliver sl0 of the block.
      const bool own = gr.tm == 1;
      T* const bt = own ? p.bp + jp0 * NR * KC : p.bp;
      const int64_t sl0 = own ? jp0 : 0;
      if (own) {
        if (jp0 < jp1) pack_b_slivers(g, p.b, pc, kc, jc + jp0 * NR, 0, jp1 - jp0, NR, bt, p.simd);
      } else {
        if (!first && bar) bar->wait();
        first = false;
        const int64_t bshare = (npanels + threads - 1) / threads;
        pack_b_slivers(g, p.b, pc, kc, jc, std::min(npanels, t * bshare), std::min(npanels, (t + 1) * bshare), NR,
                       p.bp, p.simd);
        if (bar) bar->wait();
      }
      if (jp0 < jp1) general_block(p, jc, pc, kc, jp0, jp1, bt, sl0, row0, row1, ap);
    }
  }
}

// Where the threads split only columns and A is read in place, each takes the next group of slivers
// from a shared counter, packs it into its own region and runs it through every kc block and every
// row, until none is left: fixed shares (general_share) made a thread whose core ran slower for a
// while keep the other waiting, and a group's B (kc x kColumnsInTurn) stays in L2 across all the
// row blocks.
template <class T>
void general_columns_in_turn(const General<T>& p, const int t, std::atomic<int64_t>& claimed) {
  const GemmArgs& g = p.g;
  const int NR = p.NR;
  const int64_t KC = p.KC, NC = p.NC, group = p.group;
  T* const bt = p.bp + t * group * NR * KC;
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
      pack_b_slivers(g, p.b, pc, kc, jc + jp0 * NR, 0, jp1 - jp0, NR, bt, p.simd);
      general_block(p, jc, pc, kc, jp0, jp1, bt, jp0, 0, g.m, static_cast<T*>(nullptr));
    }
  }
}

// The general path: every product the few-rows paths do not take, on nt threads. One OpenMP region
// spans the whole product; each thread owns a fixed part of C (thread_grid), or, where the grid
// splits only columns and A is read in place, takes groups of columns in turn.
template <class T>
void general(const GemmArgs& g, const PackedConfig<T>& cfg, const int nt) {
  const int MR = cfg.mr, NR = cfg.nr;
  const GeneralBlocks blocks = general_blocks(g, cfg);
  const int64_t KC = blocks.kc, MC = blocks.mc;
  const int64_t NC = std::min(cfg.nc, round_up(g.n, NR));
  const int64_t mpanels_all = (g.m + MR - 1) / MR;
  const bool a_rows = a_in_place(g, cfg, KC, MC);
  const Grid grid = thread_grid(nt, mpanels_all, (NC + NR - 1) / NR, a_rows);
  const bool columns_in_turn = nt > 1 && grid.tm == 1 && a_rows;
  const int64_t group = columns_in_turn_group((std::min(NC, g.n) + NR - 1) / NR, NR, nt);
  const int64_t b_elems = columns_in_turn ? nt * group * NR * KC : KC * NC;
  T* bp = scratch<T>(0, size_t(b_elems));
  T* ap_all = a_rows ? nullptr : scratch<T>(1, size_t(nt * KC * MC));
  const General<T> p{Operands<T>::of(g, cfg), MR, NR, KC, MC, NC, mpanels_all, a_rows, group, bp, ap_all,
                     cfg.isa >= CpuIsa::Avx2};
  YieldingBarrier barrier(nt);
  std::atomic<int64_t> claimed{0};
  if (nt == 1) return general_share(p, 0, 1, Grid{}, nullptr);
#pragma omp parallel num_threads(nt)
  {
#ifdef _OPENMP
    const int t = omp_get_thread_num(), threads = omp_get_num_threads();
#else
    const int t = 0, threads = 1;
#endif
    if (threads == nt && columns_in_turn) general_columns_in_turn(p, t, claimed);
    else if (threads == nt) general_share(p, t, threads, grid, &barrier);
    else if (t == 0) general_share(p, 0, 1, Grid{}, nullptr);  // the runtime granted fewer threads than asked
  }
}

// The choice of path. Products of fewer than kSkinnyRows rows take skinny() (B read once per row of
// A) unless the stripes take them; products with few rows (few_rows) take the stripes where their
// depth pays, else the copying path; the rest the general path.
template <class T>
void packed(const GemmArgs& g, const PackedConfig<T>& cfg) {
  const int nt = threads_for(g);
  const int64_t depth = stripe_depth(g, cfg);
  if (g.m < kSkinnyRows && depth == 0) return skinny<T>(g, cfg.isa);
  if (few_rows(g, cfg)) return depth > 0 ? stripes(g, cfg, nt, depth) : packed_unpacked_b(g, cfg, nt);
  general(g, cfg, nt);
}

// Whether gemm_packed reads A in place, for one config (reads_a_in_place).
template <class T>
bool general_reads_a_in_place(const GemmArgs& g, const PackedConfig<T>& cfg) {
  const GeneralBlocks blocks = general_blocks(g, cfg);
  return !few_rows(g, cfg) && a_in_place(g, cfg, blocks.kc, blocks.mc);
}

}  // namespace

}  // namespace packed_gemm

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
  if (g.dtype == DType::Float32) packed_gemm::packed<float>(g, packed_config_f32(isa));
  else packed_gemm::packed<double>(g, packed_config_f64(isa));
}

void gemm_packed(const GemmArgs& g) { gemm_packed(g, best_cpu_isa()); }

bool reads_a_in_place(const GemmArgs& g, CpuIsa isa) {
  if (g.m < packed_gemm::kSkinnyRows || g.n == 0 || g.k == 0) return false;  // skinny, or the stripes
  return g.dtype == DType::Float32 ? packed_gemm::general_reads_a_in_place(g, packed_config_f32(isa))
                                   : packed_gemm::general_reads_a_in_place(g, packed_config_f64(isa));
}

int64_t stripe_kc(const GemmArgs& g, CpuIsa isa) {
  if (g.n == 0 || g.k == 0) return 0;  // as gemm_packed: those take no kernel
  return g.dtype == DType::Float32 ? packed_gemm::stripe_depth(g, packed_config_f32(isa))
                                   : packed_gemm::stripe_depth(g, packed_config_f64(isa));
}

}  // namespace ember::cpu
