// The last phase of the CUDA row softmax kernels (softmax, log_softmax, logsumexp; one block per
// row), after the block's RowMaxSum (max_sum.h): each thread writes its strided share of the row.
// __host__ __device__, so that tests/ops/softmax/cuda/softmax_emulator_test.cpp runs it on the CPU.
#pragma once
#include <cmath>
#include <cstdint>

#include "framework/core/host_device.h"
#include "ops/softmax/cuda/max_sum.h"

namespace ember::cuda {

enum class SoftmaxKind { Softmax, LogSoftmax, LogSumExp };

template <class T>
EMBER_HD inline T softmax_finish(SoftmaxKind kind, T v, const DeviceMaxSum<T>& ms) {
  using acc_t = typename DeviceMaxSum<T>::acc_t;
  if (kind == SoftmaxKind::Softmax) return T(exp(acc_t(v) - acc_t(ms.max)) / ms.sum);
  return T(acc_t(v) - ms.log_sum_exp());
}

template <class T>
struct SoftmaxRow {
  // Row `block` of x (r values) into out: r values, or one (logsumexp, written by thread 0).
  EMBER_HD static void write(const T* x, T* out, int64_t r, SoftmaxKind kind, const DeviceMaxSum<T>& ms, int64_t block,
                             int thread, int threads) {
    if (kind == SoftmaxKind::LogSumExp) {
      if (thread == 0) out[block] = T(ms.log_sum_exp());
      return;
    }
    const T* row = x + block * r;
    T* dst = out + block * r;
    for (int64_t k = thread; k < r; k += threads) dst[k] = softmax_finish(kind, row[k], ms);
  }
};

}  // namespace ember::cuda
