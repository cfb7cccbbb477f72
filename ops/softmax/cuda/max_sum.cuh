// The online (running-max) log-sum-exp on the GPU, with the CPU's conventions
// (ops/softmax/cpu/online_max_sum.h): sums in double for float rows, an all -inf row gives
// max -inf and sum 0, a NaN makes the sum NaN. Partial results of threads combine exactly.
#pragma once
#include <cmath>
#include <type_traits>

namespace ember::cuda {

template <class T>
struct DeviceMaxSum {
  using acc_t = std::conditional_t<std::is_same_v<T, float>, double, T>;
  T max;
  acc_t sum;

  __device__ static DeviceMaxSum empty() { return {-INFINITY, acc_t(0)}; }
  __device__ void add(T v) {
    if (v > max) {
      sum = sum * exp(acc_t(max) - acc_t(v)) + 1;
      max = v;
    } else if (!(max == -INFINITY && v == -INFINITY)) {
      sum += exp(acc_t(v) - acc_t(max));
    }
  }
  __device__ void merge(const DeviceMaxSum& o) {
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
  __device__ acc_t log_sum_exp() const { return acc_t(max) + log(sum); }
};

// Combines the blockDim.x partials of one block (a power of two, <= 1024) into part[0].
template <class T>
__device__ void block_merge(DeviceMaxSum<T>* part) {
  for (int s = blockDim.x / 2; s > 0; s >>= 1) {
    if (int(threadIdx.x) < s) part[threadIdx.x].merge(part[threadIdx.x + s]);
    __syncthreads();
  }
}

// The max and sum of a whole row of n values, computed by the block together: each thread folds
// its strided share, then the partials merge in `part` (blockDim.x entries of shared memory).
// Every thread gets the result.
template <class T>
__device__ DeviceMaxSum<T> block_row_max_sum(const T* row, int64_t n, DeviceMaxSum<T>* part) {
  DeviceMaxSum<T> ms = DeviceMaxSum<T>::empty();
  for (int64_t k = threadIdx.x; k < n; k += blockDim.x) ms.add(row[k]);
  part[threadIdx.x] = ms;
  __syncthreads();
  block_merge(part);
  return part[0];
}

}  // namespace ember::cuda
