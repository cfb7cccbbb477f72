// CPU kernels of the attention study, on contiguous (BH, N, d) arrays. They are called by
// ops/attention/attention.cpp after its checks, never recorded by autograd, and count the bytes
// they move through ops/attention/io_counters.h.
#pragma once
#include <algorithm>
#include <cstdint>

namespace ember::cpu::attn {

template <class T>
struct Problem {
  int64_t bh = 1, nq = 0, nk = 0, d = 0;
  T scale = 1;
  bool causal = false;
  int64_t br = 64, bc = 64;  // Flash: row and column block sizes; Standard: its row / column strip sizes
  // Elements between the keys (and values) of consecutive batch*head slices in the forward: nk * d
  // for contiguous K and V, more for views into a larger buffer such as a KV cache, which the
  // forward kernels then read in place (rows of d elements stay contiguous).
  int64_t kv_bh_stride = 0;
  int64_t kv_stride() const { return kv_bh_stride ? kv_bh_stride : nk * d; }
  // The last key that query row i may see is i + causal_offset (causal only).
  int64_t causal_offset() const { return nk - nq; }
  // Keys [0, visible(i)) are visible to query row i.
  int64_t visible(int64_t i) const {
    if (!causal) return nk;
    int64_t v = i + causal_offset() + 1;
    return v < 0 ? 0 : (v > nk ? nk : v);
  }
};

// Below this many query rows (a generation step has one) the kernels take Q K^T as dot products
// against K's rows in place instead of transposing each K tile first (tile_math.h).
constexpr int64_t kFewRows = 4;

// Tasks per thread worth waking a thread for: each task does about `task_flops`; below ~256k flops
// a thread costs more than it saves (and spinning OpenMP threads hurt a loaded machine).
inline int64_t task_grain(int64_t task_flops) {
  const int64_t want = int64_t(1) << 18;
  return task_flops >= want ? 1 : (want + task_flops - 1) / std::max<int64_t>(task_flops, 1);
}

// Standard (Algorithm 0). p: (BH, Nq, Nk) buffer that receives P; o: (BH, Nq, d); lse: (BH, Nq).
template <class T>
void standard_forward(const Problem<T>& pr, const T* q, const T* k, const T* v, T* p, T* o, T* lse);
// ds: (BH, Nq, Nk) scratch for dP / dS. dq, dk, dv are written (not accumulated).
template <class T>
void standard_backward(const Problem<T>& pr, const T* q, const T* k, const T* v, const T* o, const T* p,
                       const T* dout, T* ds, T* dq, T* dk, T* dv);

// Flash (Algorithm 1) and its backward. The forward splits each batch*head into tasks of this many
// row blocks (all of them when there are enough heads to keep the threads busy).
template <class T>
int64_t flash_row_blocks_per_task(const Problem<T>& pr);
// Scratch comes from Ember's allocator (so it is counted).
template <class T>
void flash_forward(const Problem<T>& pr, const T* q, const T* k, const T* v, T* o, T* lse);
template <class T>
void flash_backward(const Problem<T>& pr, const T* q, const T* k, const T* v, const T* o, const T* lse,
                    const T* dout, T* dq, T* dk, T* dv);

// FlashAttention-2 (flash2.cpp), the default: the outer loop over query blocks (forward) and key
// blocks (backward), block products on the packed GEMM's micro-kernel. Its block sizes follow the
// micro-kernel's register block, not pr.br / pr.bc (fewer than kFewRows queries: flash_forward).
template <class T>
void flash2_forward(const Problem<T>& pr, const T* q, const T* k, const T* v, T* o, T* lse);
template <class T>
void flash2_backward(const Problem<T>& pr, const T* q, const T* k, const T* v, const T* o, const T* lse,
                     const T* dout, T* dq, T* dk, T* dv);

// D[r] = sum_c dO[r, c] * O[r, c] over all BH * Nq rows (both backwards start with it).
template <class T>
void rowdot(int64_t rows, int64_t d, const T* dout, const T* o, T* out);

}  // namespace ember::cpu::attn
