// The block-wide row log-sum-exp of the CUDA kernels (softmax, cross-entropy): RowMaxSum's phases
// (max_sum.h, checked on the CPU by the block emulator) with the barriers between them.
#pragma once
#include "ops/softmax/cuda/max_sum.h"

namespace ember::cuda {

// The max and sum of a whole row of n values, computed by the block together; every thread gets
// the result. blockDim.x must be a power of two of at most kRowThreads.
template <class T>
__device__ DeviceMaxSum<T> block_row_max_sum(const T* row, int64_t n, typename RowMaxSum<T>::Shared& s) {
  using K = RowMaxSum<T>;
  K::fold(row, n, s, threadIdx.x, blockDim.x);
  __syncthreads();
  for (int stride = blockDim.x / 2; stride > 0; stride >>= 1) {
    K::combine(s, threadIdx.x, stride);
    __syncthreads();
  }
  return K::result(s);
}

}  // namespace ember::cuda
