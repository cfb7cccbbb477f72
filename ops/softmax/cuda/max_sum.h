// The online (running-max) log-sum-exp of the CUDA kernels, with the CPU's conventions
// (ops/softmax/cpu/online_max_sum.h): sums in double for float rows, an all -inf row gives
// max -inf and sum 0, a NaN makes the sum NaN. Partial results of threads combine exactly.
// __host__ __device__ and plain C++ apart from EMBER_HD, so that the CPU block emulator of
// tests/ops/softmax/cuda/softmax_emulator_test.cpp runs the same code; max_sum.cuh places the
// barriers between RowMaxSum's phases.
#pragma once
#include <cmath>
#include <cstdint>
#include <type_traits>

#include "framework/core/host_device.h"
#include "framework/cuda/row_launch.h"

namespace ember::cuda {

template <class T>
struct DeviceMaxSum {
  using acc_t = std::conditional_t<std::is_same_v<T, float>, double, T>;
  T max;
  acc_t sum;

  EMBER_HD static DeviceMaxSum empty() { return {T(-INFINITY), acc_t(0)}; }
  EMBER_HD void add(T v) {
    if (v > max) {
      sum = sum * exp(acc_t(max) - acc_t(v)) + 1;
      max = v;
    } else if (!(max == -INFINITY && v == -INFINITY)) {
      sum += exp(acc_t(v) - acc_t(max));
    }
  }
  EMBER_HD void merge(const DeviceMaxSum& o) {
    if (o.sum == acc_t(0) && o.max == -INFINITY) return;  // o saw nothing (or only -inf)
    if (sum == acc_t(0) && max == -INFINITY) {
      *this = o;
      return;
    }
    T m = o.max > max ? o.max : max;
    if (m != m) m = o.max != o.max ? o.max : max;  // keep a NaN max visible
    sum = sum * exp(acc_t(max) - acc_t(m)) + o.sum * exp(acc_t(o.max) - acc_t(m));
    max = m;
  }
  EMBER_HD acc_t log_sum_exp() const { return acc_t(max) + log(sum); }
};

// The max and sum of one row of n values, by a block of `threads` (a power of two, at most
// kRowThreads) together. Phases: fold (each thread its strided share into part[thread]), then for
// stride = threads/2, ..., 1: combine; a barrier after fold and after every combine. Then every
// thread may read result().
template <class T>
struct RowMaxSum {
  static_assert(sizeof(DeviceMaxSum<T>) <= kRowPartBytes, "the partials must fit kRowSharedBytes");
  struct Shared {
    DeviceMaxSum<T> part[kRowThreads];
  };
  EMBER_HD static void fold(const T* row, int64_t n, Shared& s, int thread, int threads) {
    DeviceMaxSum<T> ms = DeviceMaxSum<T>::empty();
    for (int64_t k = thread; k < n; k += threads) ms.add(row[k]);
    s.part[thread] = ms;
  }
  EMBER_HD static void combine(Shared& s, int thread, int stride) {
    if (thread < stride) s.part[thread].merge(s.part[thread + stride]);
  }
  EMBER_HD static DeviceMaxSum<T> result(const Shared& s) { return s.part[0]; }
};

}  // namespace ember::cuda
