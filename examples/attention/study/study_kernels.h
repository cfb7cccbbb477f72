// The attention study's CPU kernels: the paper's Algorithm 0 (standard: S and P materialised,
// N x N) and Algorithm 1 (FlashAttention in the paper's loop order: key blocks outside, query
// blocks inside, O_i re-read and re-written per key block), forward and backward, instrumented with
// byte counters (io_counters.h); examples/attention/README.md measures them. They are not part of
// the library, which ships FlashAttention-2: a program or test that compares them calls
// register_attention_study_kernels(), after which attention selects each by name
// (AttentionOptions::impl = "standard" or "flash") and every table-driven test covers it.
#pragma once
#include <cstdint>

#include "ops/attention/attention.h"
#include "ops/attention/cpu/kernels.h"

namespace ember::attention_study {

// Registers "standard" (Algorithm 0), "unfused" (Algorithm 0 as three whole-matrix passes) and
// "flash" (Algorithm 1) as CPU variants of attention. Once per process: later calls do nothing, so
// every test and program may call it.
void register_attention_study_kernels();

// Algorithm 0's backward on tensors: dV = P^T dO, dP = dO V^T, dS = P * (dP - rowsum(dO * O)),
// dQ = scale dS K, dK = scale dS^T Q, with P from attention_forward(..., impl "standard").saved
// (recomputed when undefined; (BH, Nq, Nk) elements). On CUDA tensors it runs the backend's
// standard kernels. Registers the study's kernels first.
AttentionGrads attention_backward_standard(const Tensor& q, const Tensor& k, const Tensor& v, const Tensor& out,
                                           const Tensor& probs, const Tensor& dout, const AttentionOptions& opt);
// Algorithm 1's backward: recomputes S and P block by block from Q, K and the saved row
// log-sum-exp L, with D = rowsum(dO * O), and accumulates dQ, dK, dV without any N x N storage.
// On CUDA tensors, the backend's flash backward. Registers the study's kernels first.
AttentionGrads attention_backward_flash(const Tensor& q, const Tensor& k, const Tensor& v, const Tensor& out,
                                        const Tensor& lse, const Tensor& dout, const AttentionOptions& opt);

// ---- the kernels on raw arrays (Problem, the block sizes and the KV-cache stride:
// ops/attention/cpu/kernels.h) ----
using cpu::attn::Problem;

// Algorithm 0. p: (BH, Nq, Nk) buffer that receives P; o: (BH, Nq, d); lse: (BH, Nq).
template <class T>
void standard_forward(const Problem<T>& pr, const T* q, const T* k, const T* v, T* p, T* o, T* lse);
// Algorithm 0 with each step over the whole matrix before the next (S = scale Q K^T for every
// row, then the softmax of every row, then O = P V), as three separate kernels would run it: S and
// P make the round trips to main memory that the paper counts. Same arguments, same arithmetic
// and the same result as standard_forward, bit for bit; it records how long each step took.
template <class T>
void unfused_forward(const Problem<T>& pr, const T* q, const T* k, const T* v, T* p, T* o, T* lse);
struct AttentionPhaseTimes {
  double scores_ms = 0, softmax_ms = 0, output_ms = 0;
};
// The step times of the last unfused_forward in this process (zeros before the first).
AttentionPhaseTimes last_unfused_phase_times();

// ds: (BH, Nq, Nk) scratch for dP / dS. dq, dk, dv are written (not accumulated).
template <class T>
void standard_backward(const Problem<T>& pr, const T* q, const T* k, const T* v, const T* o, const T* p,
                       const T* dout, T* ds, T* dq, T* dk, T* dv);

// Algorithm 1. The forward splits each batch*head into tasks of this many row blocks (all of them
// when there are enough heads to keep the threads busy). Scratch comes from Ember's allocator (so
// it is counted by memory_stats).
template <class T>
int64_t flash_row_blocks_per_task(const Problem<T>& pr);
template <class T>
void flash_forward(const Problem<T>& pr, const T* q, const T* k, const T* v, T* o, T* lse);
template <class T>
void flash_backward(const Problem<T>& pr, const T* q, const T* k, const T* v, const T* o, const T* lse,
                    const T* dout, T* dq, T* dk, T* dv);

}  // namespace ember::attention_study
