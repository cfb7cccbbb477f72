// CUDA batch_norm in training mode, with the CPU kernel's contract (ops/norm/cpu/batch_norm_kernels.h):
// x viewed as contiguous (N, C, S); y and per channel the mean, rstd = 1 / sqrt(var + eps) and the
// biased var. One block per channel sums (x - x0) and (x - x0)^2 in double (x0 the channel's first
// element, as on the CPU, so a large mean does not cancel) and folds weight and bias into a scale
// and a shift; a second, elementwise kernel applies them. The backward is the composite rule (Ember
// ops), which runs on the GPU already.
#include "framework/cuda/indexing.cuh"
#include "ops/cuda_kernels.h"

namespace ember::cuda {
namespace {

constexpr int kChannelThreads = 256;

template <class T>
__global__ void channel_stats(const T* x, const T* w, const T* b, int64_t n, int64_t c, int64_t s, double eps, T* mean,
                              T* rstd, T* var, T* scale, T* shift) {
  __shared__ double s1[kChannelThreads], s2[kChannelThreads];
  const int64_t ch = blockIdx.x, count = n * s;
  const double k0 = double(x[ch * s]);
  double a1 = 0, a2 = 0;
  for (int64_t e = threadIdx.x; e < count; e += blockDim.x) {
    const int64_t i = e / s, k = e % s;
    const double v = double(x[(i * c + ch) * s + k]) - k0;
    a1 += v;
    a2 += v * v;
  }
  s1[threadIdx.x] = a1;
  s2[threadIdx.x] = a2;
  __syncthreads();
  for (int half = blockDim.x / 2; half > 0; half >>= 1) {
    if (int(threadIdx.x) < half) {
      s1[threadIdx.x] += s1[threadIdx.x + half];
      s2[threadIdx.x] += s2[threadIdx.x + half];
    }
    __syncthreads();
  }
  if (threadIdx.x != 0) return;
  const double m1 = s1[0] / double(count);
  double v = s2[0] / double(count) - m1 * m1;
  if (v < 0) v = 0;
  const double r = 1.0 / sqrt(v + eps), wc = w ? double(w[ch]) : 1.0, bc = b ? double(b[ch]) : 0.0;
  mean[ch] = T(k0 + m1);
  rstd[ch] = T(r);
  var[ch] = T(v);
  scale[ch] = T(r * wc);
  shift[ch] = T(bc - (k0 + m1) * r * wc);
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
  EMBER_CHECK(c < (int64_t(1) << 31), "batch_norm: too many channels for one launch (", c, ")");
  Tensor scale = empty({c}, x.dtype(), Device::CUDA), shift = empty({c}, x.dtype(), Device::CUDA);
  EMBER_DISPATCH_FLOAT(x.dtype(), "batch_norm", [&] {
    channel_stats<scalar_t><<<unsigned(c), kChannelThreads>>>(
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
