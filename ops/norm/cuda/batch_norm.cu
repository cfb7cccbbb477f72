// CUDA batch_norm in training mode, with the CPU kernel's contract (ops/norm/cpu/batch_norm_kernels.h):
// x viewed as contiguous (N, C, S); y and per channel the mean, rstd = 1 / sqrt(var + eps) and the
// biased var. One block per channel sums (x - x0) and (x - x0)^2 in double (x0 the channel's first
// element, as on the CPU, so a large mean does not cancel) and folds weight and bias into a scale
// and a shift; a second, elementwise kernel applies them. The backward is the composite rule (Ember
// ops), which runs on the GPU already.
#include "framework/cuda/indexing.cuh"
#include "framework/cuda/row_launch.h"
#include "ops/norm/cuda/norm_phases.h"
#include "ops/cuda_kernels.h"

namespace ember::cuda {
namespace {

// One block per channel; the phases are in norm_phases.h, the barriers here.
template <class T>
__global__ void channel_stats(const T* x, const T* w, const T* b, int64_t n, int64_t c, int64_t s, double eps, T* mean,
                              T* rstd, T* var, T* scale, T* shift) {
  using K = BatchNormChannel<T>;
  __shared__ typename K::Shared sh;
  K::fold(x, n, c, s, sh, blockIdx.x, threadIdx.x, blockDim.x);
  __syncthreads();
  for (int stride = blockDim.x / 2; stride > 0; stride >>= 1) {
    K::combine(sh, threadIdx.x, stride);
    __syncthreads();
  }
  K::finish(x, w, b, n, s, eps, mean, rstd, var, scale, shift, sh, blockIdx.x, threadIdx.x);
}

template <class T>
__global__ void apply_affine(const T* x, const T* scale, const T* shift, T* y, int64_t c, int64_t s, int64_t total) {
  for (int64_t e = blockIdx.x * int64_t(blockDim.x) + threadIdx.x; e < total; e += int64_t(gridDim.x) * blockDim.x) {
    const int64_t ch = (e / s) % c;
    y[e] = x[e] * scale[ch] + shift[ch];
  }
}

}  // namespace

Tensor batch_norm_train(const Tensor& x_in, const Tensor& weight, const Tensor& bias, double eps, Tensor* mean,
                        Tensor* rstd, Tensor* var) {
  EMBER_CHECK(x_in.device() == Device::CUDA, "batch_norm: expected a CUDA tensor");
  Tensor x = x_in.contiguous(), w = weight.defined() ? weight.contiguous() : Tensor();
  Tensor b = bias.defined() ? bias.contiguous() : Tensor();
  const int64_t n = x.size(0), c = x.size(1), s = c > 0 && n > 0 ? x.numel() / (n * c) : 0;
  Tensor y = empty(x.shape(), x.dtype(), Device::CUDA);
  *mean = empty({c}, x.dtype(), Device::CUDA), *rstd = empty({c}, x.dtype(), Device::CUDA);
  *var = empty({c}, x.dtype(), Device::CUDA);
  if (x.numel() == 0) return y;
  EMBER_CHECK(c <= kMaxRowBlocks, "batch_norm: too many channels for one launch (", c, ")");
  Tensor scale = empty({c}, x.dtype(), Device::CUDA), shift = empty({c}, x.dtype(), Device::CUDA);
  EMBER_DISPATCH_FLOAT(x.dtype(), "batch_norm", [&] {
    channel_stats<scalar_t><<<unsigned(c), kRowThreads>>>(
        x.data<scalar_t>(), w.defined() ? w.data<scalar_t>() : nullptr, b.defined() ? b.data<scalar_t>() : nullptr, n, c,
        s, eps, mean->data<scalar_t>(), rstd->data<scalar_t>(), var->data<scalar_t>(), scale.data<scalar_t>(),
        shift.data<scalar_t>());
    EMBER_CUDA_CHECK_LAUNCH();
    const int64_t total = x.numel();
    apply_affine<scalar_t><<<blocks_for(total), kThreads>>>(x.data<scalar_t>(), scale.data<scalar_t>(),
                                                            shift.data<scalar_t>(), y.data<scalar_t>(), c, s, total);
  });
  EMBER_CUDA_CHECK_LAUNCH();
  return y;
}

// Fills the hooks that the ops call (ops/cuda_kernels.h) when libember_cuda.so is loaded.
namespace {
const bool registered = [] {
  cuda_kernels::batch_norm_train.set(&batch_norm_train);
  return true;
}();
}  // namespace

}  // namespace ember::cuda
