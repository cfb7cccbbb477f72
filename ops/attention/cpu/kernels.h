// The library's CPU attention kernels, on contiguous (BH, N, d) arrays (K and V of the forward may
// be a KV cache's view, see kv_bh_stride). They are called by ops/attention/dispatch.cpp after
// its checks and never recorded by autograd. Problem, task_grain and rowdot serve the study's
// kernels too (examples/attention/study/), which build on the same pieces.
#pragma once
#include <algorithm>
#include <cstdint>

#include "ops/attention/attention.h"
#include "ops/attention/attention_math.h"
#include "ops/matmul/cpu/kernels.h"

namespace ember::cpu::attn {

// The generation-step kernel's key block when the caller gives no budget M: 4 KiB of K (16 keys
// at d = 64 in float32, 8 at d = 128), at least 8 keys so that the per-block softmax update stays
// a small share of the work. With short blocks the K and V streams advance together instead of
// each restarting after a long run of the other; on a Zen 4, timed in turns with Algorithm 1's
// block for half the L2 (512 keys at d = 64), 12 heads at 150 and 1000 cached positions took
// 0.88-0.98x the time, and were level on two threads at 150.
constexpr int64_t kDecodeBlockBytes = 4096, kDecodeMinKeys = 8;
inline int64_t decode_key_block(int64_t d, size_t itemsize) {
  return std::max<int64_t>(kDecodeMinKeys, kDecodeBlockBytes / std::max<int64_t>(1, d * int64_t(itemsize)));
}

template <class T>
struct Problem {
  int64_t bh = 1, nq = 0, nk = 0, d = 0;
  T scale = 1;
  bool causal = false;
  int64_t br = 64, bc = 64;  // Algorithm 1's row and column blocks (attention_blocks)
  int64_t decode_bc = 64;    // the generation-step kernel's key blocks (decode_key_block, or bc for a given M)
  // Elements between the keys (and values) of consecutive batch*head slices in the forward: nk * d
  // for contiguous K and V, more for views into a larger buffer such as a KV cache, which the
  // forward kernels then read in place (rows of d elements stay contiguous).
  int64_t kv_bh_stride = 0;
  int64_t kv_stride() const { return kv_bh_stride ? kv_bh_stride : nk * d; }
  // The last key that query row i may see is i + causal_offset (causal only).
  int64_t causal_offset() const { return attention_math::causal_offset(nq, nk); }
  // Keys [0, visible(i)) are visible to query row i.
  int64_t visible(int64_t i) const { return attention_math::visible_keys(i, nq, nk, causal); }
  // Queries before first_query(j) do not see key j.
  int64_t first_query(int64_t j) const { return attention_math::first_query_seeing(j, nq, nk, causal); }

  // The kernels' view of attention's type-erased arguments (the op and every registered CPU
  // variant start from these), with Algorithm 1's blocks for the caller's budget a.block_m.
  static Problem of(const AttentionArgs& a) {
    Problem p;
    p.bh = a.bh;
    p.nq = a.nq;
    p.nk = a.nk;
    p.d = a.d;
    p.scale = T(a.scale);
    p.causal = a.causal;
    const AttentionBlocks b = attention_blocks(a.d, a.block_m);
    p.br = b.br;
    p.bc = b.bc;
    p.decode_bc = a.block_m > 0 ? b.bc : decode_key_block(a.d, sizeof(T));
    p.kv_bh_stride = a.kv_bh_stride;
    return p;
  }
};

// Below this many query rows (a generation step has one) the forward takes Q K^T as dot products
// against K's rows in place instead of packing or transposing K (decode_forward).
constexpr int64_t kFewRows = 4;

// Tasks per thread worth waking a thread for: each task does about `task_flops`; below ~256k flops
// a thread costs more than it saves (and spinning OpenMP threads hurt a loaded machine).
inline int64_t task_grain(int64_t task_flops) {
  const int64_t want = int64_t(1) << 18;
  return task_flops >= want ? 1 : (want + task_flops - 1) / std::max<int64_t>(task_flops, 1);
}

// FlashAttention-2 (flash2.cpp), the library's kernel: the outer loop over query blocks (forward)
// and key blocks (backward), block products on the packed GEMM's micro-kernel. Its block sizes
// follow the micro-kernel's register block, not pr.br / pr.bc (fewer than kFewRows queries:
// decode_forward). The first forms use best_cpu_isa(); the second force an instruction set no
// better than it (tests run each one the CPU supports, as for gemm_packed).
template <class T>
void flash2_forward(const Problem<T>& pr, const T* q, const T* k, const T* v, T* o, T* lse);
template <class T>
void flash2_forward(const Problem<T>& pr, const T* q, const T* k, const T* v, T* o, T* lse, CpuIsa isa);
template <class T>
void flash2_backward(const Problem<T>& pr, const T* q, const T* k, const T* v, const T* o, const T* lse,
                     const T* dout, T* dq, T* dk, T* dv);
template <class T>
void flash2_backward(const Problem<T>& pr, const T* q, const T* k, const T* v, const T* o, const T* lse,
                     const T* dout, T* dq, T* dk, T* dv, CpuIsa isa);

// A generation step (decode.cpp): fewer than kFewRows queries against keys and values read in
// place, in key blocks of pr.decode_bc, with the online softmax. o: (BH, Nq, d), lse: (BH, Nq).
template <class T>
void decode_forward(const Problem<T>& pr, const T* q, const T* k, const T* v, T* o, T* lse);

// D[r] = sum_c dO[r, c] * O[r, c] over all BH * Nq rows (every backward starts with it).
template <class T>
void rowdot(int64_t rows, int64_t d, const T* dout, const T* o, T* out);

}  // namespace ember::cpu::attn
