// The last phases of the CUDA cross-entropy kernels (one block per row), after the block's
// RowMaxSum (ops/softmax/cuda/max_sum.h) gave the row's max and sum: the row's loss, and its share
// of the gradient. __host__ __device__, so that tests/ops/loss/cuda/cross_entropy_emulator_test.cpp
// runs them on the CPU; each returns false when the row's target is out of range (the kernel then
// reports the row, and nothing is read out of bounds).
#pragma once
#include <cmath>
#include <cstdint>

#include "framework/core/host_device.h"
#include "ops/softmax/cuda/max_sum.h"

namespace ember::cuda {

template <class T>
struct CrossEntropyRow {
  // Thread 0 writes loss[block] = lse - logits[target] in double (0 for a bad target).
  EMBER_HD static bool loss(const T* logits, const int64_t* targets, double* loss, int64_t classes,
                            const DeviceMaxSum<T>& ms, int64_t block, int thread) {
    if (thread != 0) return true;
    const int64_t t = targets[block];
    if (t < 0 || t >= classes) {
      loss[block] = 0;
      return false;
    }
    loss[block] = double(ms.log_sum_exp()) - double(logits[block * classes + t]);
    return true;
  }
  // Each thread writes its strided share of (softmax - one_hot) * g / N, scale = g * inv_n.
  EMBER_HD static bool gradient(const T* logits, const int64_t* targets, T* grad, int64_t classes, double scale,
                                const DeviceMaxSum<T>& ms, int64_t block, int thread, int threads) {
    const int64_t t = targets[block];
    if (t < 0 || t >= classes) return false;
    const double lse = double(ms.log_sum_exp());
    const T* row = logits + block * classes;
    T* out = grad + block * classes;
    for (int64_t k = thread; k < classes; k += threads)
      out[k] = T((exp(double(row[k]) - lse) - (k == t ? 1.0 : 0.0)) * scale);
    return true;
  }
};

}  // namespace ember::cuda
