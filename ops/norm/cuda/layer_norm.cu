// CUDA layer_norm over the last dim, with the CPU kernel's contract (ops/norm/layer_norm.cpp):
// weight and bias (D) may be undefined, mean / rstd (x's shape with last dim 1) are written when
// asked. One block per row: shifted sums of (x - x0) and (x - x0)^2 (x0 the row's first element,
// so a large mean does not cancel), accumulated in double for float rows and merged in shared
// memory, then each thread writes its strided share of the row.
#include <type_traits>

#include "framework/cuda/indexing.cuh"
#include "ops/cuda_kernels.h"

namespace ember::cuda {
namespace {

constexpr int kRowThreads = 256;

template <class T>
__global__ void layer_norm_rows(const T* x, const T* w, int64_t sw, const T* b, int64_t sb, T* out, T* mean_out,
                                T* rstd_out, int64_t n, double eps) {
  using acc_t = std::conditional_t<std::is_same_v<T, float>, double, T>;
  __shared__ acc_t s1[kRowThreads], s2[kRowThreads];
  const T* row = x + blockIdx.x * n;
  acc_t k0 = row[0], a1 = 0, a2 = 0;
  for (int64_t k = threadIdx.x; k < n; k += blockDim.x) {
    acc_t v = acc_t(row[k]) - k0;
    a1 += v;
    a2 += v * v;
  }
  s1[threadIdx.x] = a1;
  s2[threadIdx.x] = a2;
  __syncthreads();
  for (int s = blockDim.x / 2; s > 0; s >>= 1) {
    if (int(threadIdx.x) < s) {
      s1[threadIdx.x] += s1[threadIdx.x + s];
      s2[threadIdx.x] += s2[threadIdx.x + s];
    }
    __syncthreads();
  }
  acc_t m1 = s1[0] / acc_t(n);
  acc_t var = s2[0] / acc_t(n) - m1 * m1;
  if (var < 0) var = 0;
  T tm = T(k0 + m1), tr = T(1 / sqrt(var + acc_t(eps)));
  T* dst = out + blockIdx.x * n;
  for (int64_t k = threadIdx.x; k < n; k += blockDim.x) {
    T v = (row[k] - tm) * tr;
    if (w) v *= w[k * sw];
    if (b) v += b[k * sb];
    dst[k] = v;
  }
  if (threadIdx.x == 0) {
    if (mean_out) mean_out[blockIdx.x] = tm;
    if (rstd_out) rstd_out[blockIdx.x] = tr;
  }
}

}  // namespace

Tensor layer_norm(const Tensor& x_in, const Tensor& weight, const Tensor& bias, double eps, Tensor* mean, Tensor* rstd) {
  EMBER_CHECK(x_in.device() == Device::CUDA, "layer_norm: expected a CUDA tensor");
  Tensor x = x_in.contiguous();
  Tensor out = empty(x.shape(), x.dtype(), Device::CUDA);
  Shape ss = x.shape();
  ss.back() = 1;
  if (mean) *mean = empty(ss, x.dtype(), Device::CUDA);
  if (rstd) *rstd = empty(ss, x.dtype(), Device::CUDA);
  if (x.numel() == 0) return out;
  int64_t n = x.size(-1), rows = x.numel() / n;
  EMBER_CHECK(rows < (int64_t(1) << 31), "layer_norm: too many rows for one launch (", rows, ")");
  EMBER_DISPATCH_FLOAT(x.dtype(), "layer_norm", [&] {
    auto param = [](const Tensor& p) {
      return p.defined() ? static_cast<const scalar_t*>(p.impl()->storage->data()) + p.offset() : nullptr;
    };
    layer_norm_rows<scalar_t><<<unsigned(rows), kRowThreads>>>(
        x.data<scalar_t>(), param(weight), weight.defined() ? weight.strides()[0] : 0, param(bias),
        bias.defined() ? bias.strides()[0] : 0, out.data<scalar_t>(), mean ? mean->data<scalar_t>() : nullptr,
        rstd ? rstd->data<scalar_t>() : nullptr, n, eps);
  });
  EMBER_CUDA_CHECK_LAUNCH();
  return out;
}

// Fills the hooks that the ops call (ops/cuda_kernels.h) when libember_cuda.so is loaded.
namespace {
const bool registered = [] {
  cuda_kernels::layer_norm.set(&layer_norm);
  return true;
}();
}  // namespace

}  // namespace ember::cuda
