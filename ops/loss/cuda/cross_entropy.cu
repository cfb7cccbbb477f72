// CUDA cross-entropy with the CPU kernel's contract (ops/loss/cross_entropy.cpp): logits (..., C)
// any strides, int64 targets (...) on the GPU, each checked to lie in [0, C); the mean loss as a
// 0-d tensor of the logits' dtype. One block per row computes log-sum-exp - logits[target] in
// double; the row losses are then summed by the deterministic block reduction of sum(). The
// first-order backward, (softmax - one_hot) * g / N, is one more pass over the rows, on the device.
#include "framework/cuda/indexing.cuh"
#include "framework/cuda/row_launch.h"
#include "ops/loss/cuda/cross_entropy_phases.h"
#include "ops/softmax/cuda/max_sum.cuh"
#include "ops/cuda_kernels.h"

namespace ember::cuda {

Tensor sum_dim(const Tensor& x, int64_t outer, int64_t r, int64_t inner);  // ops/reduce/cuda/reduce.cu

namespace {

// One block per row: the row's log-sum-exp (block_row_max_sum), then its loss (CrossEntropyRow).
template <class T>
__global__ void row_losses(const T* logits, const int64_t* targets, double* loss, int64_t classes,
                           unsigned long long* bad) {
  __shared__ typename RowMaxSum<T>::Shared part;
  const DeviceMaxSum<T> ms = block_row_max_sum(logits + blockIdx.x * classes, classes, part);
  if (!CrossEntropyRow<T>::loss(logits, targets, loss, classes, ms, blockIdx.x, threadIdx.x))
    BadIndex::report(bad, blockIdx.x);
}

// The mean, divided in double before rounding to the logits' type (as the CPU kernel does).
template <class T>
__global__ void mean_of(const double* total, T* out, int64_t rows) {
  out[0] = T(total[0] / double(rows));
}

// One block per row: its log-sum-exp as in row_losses, then each thread writes its strided share of
// (softmax - one_hot) * g / N, g read on the device (no copy of it to the host). A bad target was
// already refused by the forward; it is reported again here rather than read out of bounds.
template <class T>
__global__ void row_gradients(const T* logits, const int64_t* targets, T* grad, int64_t classes, const T* g,
                              double inv_n, unsigned long long* bad) {
  __shared__ typename RowMaxSum<T>::Shared part;
  const DeviceMaxSum<T> ms = block_row_max_sum(logits + blockIdx.x * classes, classes, part);
  const double scale = double(g[0]) * inv_n;
  if (!CrossEntropyRow<T>::gradient(logits, targets, grad, classes, scale, ms, blockIdx.x, threadIdx.x, blockDim.x) &&
      threadIdx.x == 0)
    BadIndex::report(bad, blockIdx.x);
}

void raise_bad_target(const BadIndex& bad, const Tensor& targets, int64_t rows, int64_t classes) {
  int64_t i = bad.first();
  if (i < 0) return;
  int64_t t = int64_t(targets.reshape({rows}).slice(0, i, i + 1).to(Device::CPU).item());
  throw Error(str("cross_entropy: target ", t, " at flat index ", i, " is out of range for ", classes,
                  " classes (expected 0 to ", classes - 1, ")"));
}

}  // namespace

Tensor cross_entropy_backward(const Tensor& logits_in, const Tensor& targets_in, const Tensor& g_in, double inv_n) {
  EMBER_CHECK(logits_in.device() == Device::CUDA && targets_in.device() == Device::CUDA,
              "cross_entropy: expected logits and targets on cuda");
  EMBER_CHECK(g_in.device() == Device::CUDA && g_in.numel() == 1 && g_in.dtype() == logits_in.dtype(),
              "cross_entropy: expected a one-element output gradient on cuda of the logits' dtype");
  Tensor logits = logits_in.contiguous(), targets = targets_in.contiguous(), g = g_in.contiguous();
  int64_t classes = logits.size(-1), rows = targets.numel();
  EMBER_CHECK(rows <= kMaxRowBlocks, "cross_entropy: too many rows for one launch (", rows, ")");
  Tensor grad = empty(logits.shape(), logits.dtype(), Device::CUDA);
  if (rows == 0) return grad;
  BadIndex bad;
  EMBER_DISPATCH_FLOAT(logits.dtype(), "cross_entropy", [&] {
    row_gradients<scalar_t><<<unsigned(rows), kRowThreads>>>(logits.data<scalar_t>(), targets.data<int64_t>(),
                                                              grad.data<scalar_t>(), classes, g.data<scalar_t>(),
                                                              inv_n, bad.ptr());
  });
  EMBER_CUDA_CHECK_LAUNCH();
  raise_bad_target(bad, targets, rows, classes);
  return grad;
}

Tensor cross_entropy(const Tensor& logits_in, const Tensor& targets_in) {
  EMBER_CHECK(logits_in.device() == Device::CUDA && targets_in.device() == Device::CUDA,
              "cross_entropy: expected logits and targets on cuda");
  Tensor logits = logits_in.contiguous(), targets = targets_in.contiguous();
  int64_t classes = logits.size(-1), rows = targets.numel();
  EMBER_CHECK(rows <= kMaxRowBlocks, "cross_entropy: too many rows for one launch (", rows, ")");
  Tensor loss = empty({rows}, DType::Float64, Device::CUDA);
  BadIndex bad;
  EMBER_DISPATCH_FLOAT(logits.dtype(), "cross_entropy", [&] {
    row_losses<scalar_t><<<unsigned(rows), kRowThreads>>>(logits.data<scalar_t>(), targets.data<int64_t>(),
                                                           loss.data<double>(), classes, bad.ptr());
  });
  EMBER_CUDA_CHECK_LAUNCH();
  raise_bad_target(bad, targets, rows, classes);
  Tensor total = sum_dim(loss, 1, rows, 1);  // summed in a fixed order, in double
  Tensor out = empty({}, logits.dtype(), Device::CUDA);
  EMBER_DISPATCH_FLOAT(logits.dtype(), "cross_entropy", [&] {
    mean_of<scalar_t><<<1, 1>>>(total.data<double>(), out.data<scalar_t>(), rows);
  });
  EMBER_CUDA_CHECK_LAUNCH();
  return out;
}

// Fills the hooks that the ops call (ops/cuda_kernels.h) when libember_cuda.so is loaded.
namespace {
const bool registered = [] {
  cuda_kernels::cross_entropy.set(&cross_entropy);
  cuda_kernels::cross_entropy_backward.set(&cross_entropy_backward);
  return true;
}();
}  // namespace

}  // namespace ember::cuda
