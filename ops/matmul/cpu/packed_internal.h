// What the files of the packed GEMM share (packed.cpp, the general path and the choice of path;
// scratch.cpp, thread_grid.cpp, cache_model.cpp, skinny.cpp, few_rows.cpp, stripes.cpp). Not part of
// the library's interface: kernels.h and packing.h are.
#pragma once
#include <algorithm>
#include <cstddef>
#include <cstdint>

#include "ops/matmul/cpu/packed_config.h"
#include "ops/matmul/cpu/tuning.h"
#include "ops/matmul/matmul.h"

namespace ember::cpu::packed_gemm {

inline int64_t round_up(int64_t x, int64_t m) { return (x + m - 1) / m * m; }

// ---- scratch.cpp ----

// A 64-byte aligned buffer of at least `count` elements per calling thread, slot (0 or 1) and
// dtype, kept between calls: packing needs one on every matmul, and a fresh allocation would cost
// more than packing a small product.
template <class T>
T* scratch(int slot, size_t count);

// ---- thread_grid.cpp ----

// One product's operands as every path reads them: its arguments, the kernel configuration, and
// A, B and C typed; each path's blocking derives from it.
template <class T>
struct Operands {
  const GemmArgs& g;
  const PackedConfig<T>& cfg;
  const T* a;
  const T* b;
  T* c;
  static Operands of(const GemmArgs& g, const PackedConfig<T>& cfg) {
    return {g, cfg, static_cast<const T*>(g.a), static_cast<const T*>(g.b), static_cast<T*>(g.c)};
  }
};

// How many threads a product runs on: all of them from kThreadedMacs multiply-adds on, else one.
int threads_for(const GemmArgs& g);
// nt threads as a tm x tn grid of row and column ranges of C (tm * tn = nt).
struct Grid {
  int tm = 1, tn = 1;
};
// The grid whose largest share of mpanels x npanels tiles is smallest; on a near tie rows are
// split, unless A is not packed at all (`columns_free`): then the columns.
Grid thread_grid(int nt, int64_t mpanels, int64_t npanels, bool columns_free = false);
// Slivers (nr columns each) per group when nt threads take an NC block's `slivers` in turns:
// kColumnsInTurn's worth, but few enough that each thread gets two groups (C of 128 columns was
// one group, and the second thread sat idle through a training step's narrow products).
int64_t columns_in_turn_group(int64_t slivers, int nr, int nt);

// ---- cache_model.cpp ----

// This core's L2 in bytes (kL2BytesFallback where the system does not say).
int64_t l2_bytes();
// Whether rows row_bytes apart keep a block of `rows` x `block_row_bytes` in the L2 as well as a
// packed copy of it would, on huge pages or (huge_pages false) on pages of either size.
bool rows_fit_l2(int64_t row_bytes, int64_t rows, int64_t block_row_bytes, bool huge_pages);
// Whether g's B is too large to stay in the L3 between calls (streamed_b_bytes(), kernels.h).
bool b_from_memory(const GemmArgs& g);
// The stripes' kc for g, in balanced blocks, or 0 where g does not take the stripes.
template <class T>
int64_t stripe_depth(const GemmArgs& g, const PackedConfig<T>& cfg);
// Whether the general path reads g's row-major A where it lies, in blocks of mc x kc.
template <class T>
bool a_in_place(const GemmArgs& g, const PackedConfig<T>& cfg, int64_t kc, int64_t mc);
// The depth (kc) and rows (mc) of the general path's blocks, from the config's and the L2's size.
struct GeneralBlocks {
  int64_t kc, mc;
};
template <class T>
GeneralBlocks general_blocks(const GemmArgs& g, const PackedConfig<T>& cfg);

// ---- The few-rows paths ----

// Whether a product takes a few-rows path (few_rows.cpp or stripes.cpp) rather than the general one.
template <class T>
bool few_rows(const GemmArgs& g, const PackedConfig<T>& cfg) {
  return (g.b_cs == 1 || g.b_rs == 1) && g.m <= std::max(cfg.mc, kUnpackedRows);
}
// Whether the config and the layout allow the stripes (stripe_depth decides whether they pay).
template <class T>
bool takes_stripes(const GemmArgs& g, const PackedConfig<T>& cfg) {
  return cfg.stripe && g.m <= kUnpackedRows && g.a_cs == 1 && g.b_cs == 1;
}

// C = A B for m < kSkinnyRows, B streamed from where it lies (skinny.cpp).
template <class T>
void skinny(const GemmArgs& g, CpuIsa isa);
// C = A B for few rows with B read in place, sliver by sliver, or packed in groups (few_rows.cpp).
template <class T>
void packed_unpacked_b(const GemmArgs& g, const PackedConfig<T>& cfg, int nt);
// C = A B for few rows in stripes of B's columns, kc = depth, nothing copied (stripes.cpp).
template <class T>
void stripes(const GemmArgs& g, const PackedConfig<T>& cfg, int nt, int64_t depth);

// C[i0.., j0..] (rows x cols, C's row stride c_rs) from an edge tile computed into a buffer of row
// stride NR: stored, or added where `accumulate`.
template <class T>
void store_edge(const T* edge, int64_t nr, int64_t rows, int64_t cols, bool accumulate, T* c, int64_t c_rs) {
  for (int64_t i = 0; i < rows; ++i)
    for (int64_t j = 0; j < cols; ++j)
      c[i * c_rs + j] = accumulate ? c[i * c_rs + j] + edge[i * nr + j] : edge[i * nr + j];
}

}  // namespace ember::cpu::packed_gemm
