// The row reductions' CUDA kernels (sum and max over the last dimension, one block of kRowThreads
// per row) as per-thread phases, __host__ __device__, split where the kernel has __syncthreads():
// reduce.cu's __global__ wrappers place the barriers, and the CPU block emulator of
// tests/ops/reduce/cuda/row_reduce_emulator_test.cpp runs every thread's phase before the next
// phase, which is all a barrier guarantees. Plain C++ apart from EMBER_HD.
#pragma once
#include <cstdint>
#include <type_traits>

#include "framework/core/host_device.h"
#include "framework/cuda/row_launch.h"

namespace ember::cuda {

// float rows are summed in double, as on the CPU.
template <class T>
using row_acc_t = std::conditional_t<std::is_same_v<T, float>, double, T>;

// "a beats b" for max: larger, or NaN (NaN propagates), ties to the lower index as on the CPU.
template <class T>
EMBER_HD inline bool beats(T av, int64_t ai, T bv, int64_t bi) {
  if (av != av) return bv == bv || ai < bi;  // a is NaN: wins unless b is an earlier NaN
  if (bv != bv) return false;
  return av > bv || (av == bv && ai < bi);
}

// Phases: fold (each thread its strided share of the row into part[thread]), then for stride =
// threads/2, threads/4, ..., 1: combine (thread < stride takes part[thread + stride]), then store.
// A barrier follows fold and every combine.
template <class T>
struct SumRows {
  using Acc = row_acc_t<T>;
  static_assert(sizeof(Acc) <= kRowPartBytes, "the partials must fit kRowSharedBytes");
  struct Shared {
    Acc part[kRowThreads];
  };
  EMBER_HD static void fold(const T* x, int64_t r, Shared& s, int64_t block, int thread, int threads) {
    const T* row = x + block * r;
    Acc acc = 0;
    for (int64_t k = thread; k < r; k += threads) acc += row[k];
    s.part[thread] = acc;
  }
  EMBER_HD static void combine(Shared& s, int thread, int stride) {
    if (thread < stride) s.part[thread] += s.part[thread + stride];
  }
  EMBER_HD static void store(T* o, const Shared& s, int64_t block, int thread) {
    if (thread == 0) o[block] = T(s.part[0]);
  }
};

template <class T>
struct MaxRows {
  static_assert(sizeof(T) + sizeof(int64_t) <= kRowPartBytes, "the partials must fit kRowSharedBytes");
  struct Shared {
    T value[kRowThreads];
    int64_t index[kRowThreads];
  };
  EMBER_HD static void fold(const T* x, int64_t r, Shared& s, int64_t block, int thread, int threads) {
    const T* row = x + block * r;
    T best = row[0];
    int64_t bi = 0;
    for (int64_t k = thread; k < r; k += threads)
      if (beats(row[k], k, best, bi)) {
        best = row[k];
        bi = k;
      }
    s.value[thread] = best;
    s.index[thread] = bi;
  }
  EMBER_HD static void combine(Shared& s, int thread, int stride) {
    if (thread < stride && beats(s.value[thread + stride], s.index[thread + stride], s.value[thread], s.index[thread])) {
      s.value[thread] = s.value[thread + stride];
      s.index[thread] = s.index[thread + stride];
    }
  }
  // vals or idx may be null (max_dim wants one of them).
  EMBER_HD static void store(T* vals, int64_t* idx, const Shared& s, int64_t block, int thread) {
    if (thread != 0) return;
    if (vals) vals[block] = s.value[0];
    if (idx) idx[block] = s.index[0];
  }
};

}  // namespace ember::cuda
