// CUDA dropout with the CPU kernel's contract (ops/dropout/dropout.cpp): element i of the
// (contiguous) input is kept when dropout_keep(seed, i, p), the counter-based draw of
// ops/dropout/keep_mask.h, so the GPU drops exactly the elements the CPU drops for a seed.
#include "framework/cuda/indexing.cuh"
#include "ops/dropout/keep_mask.h"
#include "ops/cuda_kernels.h"

namespace ember::cuda {
namespace {

template <class T>
__global__ void dropout_kernel(const T* x, T* out, T* mask, int64_t n, uint64_t seed, double p, T scale) {
  for (int64_t i = blockIdx.x * int64_t(blockDim.x) + threadIdx.x; i < n; i += int64_t(gridDim.x) * blockDim.x) {
    T k = dropout_keep(seed, uint64_t(i), p) ? scale : T(0);
    out[i] = x[i] * k;
    if (mask) mask[i] = k;
  }
}

}  // namespace

Tensor dropout(const Tensor& x_in, double p, uint64_t seed, Tensor* mask) {
  EMBER_CHECK(x_in.device() == Device::CUDA, "dropout: expected a CUDA tensor");
  Tensor x = x_in.contiguous();
  Tensor out = empty(x.shape(), x.dtype(), Device::CUDA);
  if (mask) *mask = empty(x.shape(), x.dtype(), Device::CUDA);
  int64_t n = x.numel();
  if (n == 0) return out;
  EMBER_DISPATCH_FLOAT(x.dtype(), "dropout", [&] {
    dropout_kernel<scalar_t><<<blocks_for(n), kThreads>>>(x.data<scalar_t>(), out.data<scalar_t>(),
                                                          mask ? mask->data<scalar_t>() : nullptr, n, seed, p,
                                                          scalar_t(1.0 / (1.0 - p)));
  });
  EMBER_CUDA_CHECK_LAUNCH();
  return out;
}

// Fills the hooks that the ops call (ops/cuda_kernels.h) when libember_cuda.so is loaded.
namespace {
const bool registered = [] {
  cuda_kernels::dropout.set(&dropout);
  return true;
}();
}  // namespace

}  // namespace ember::cuda
