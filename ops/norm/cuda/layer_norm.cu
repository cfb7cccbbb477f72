// CUDA layer_norm over the last dim, with the CPU kernel's contract (ops/norm/layer_norm.cpp):
// weight and bias (D) may be undefined, mean / rstd (x's shape with last dim 1) are written when
// asked. One block per row: shifted sums of (x - x0) and (x - x0)^2 (x0 the row's first element,
// so a large mean does not cancel), accumulated in double for float rows and merged in shared
// memory, then each thread writes its strided share of the row.
#include <type_traits>

#include "framework/cuda/indexing.cuh"
#include "framework/cuda/row_launch.h"
#include "ops/norm/cuda/norm_phases.h"
#include "ops/cuda_kernels.h"

namespace ember::cuda {
namespace {

// One block per row; the phases are in norm_phases.h, the barriers here.
template <class T>
__global__ void layer_norm_rows(const T* x, const T* w, int64_t sw, const T* b, int64_t sb, T* out, T* mean_out,
                                T* rstd_out, int64_t n, double eps) {
  using K = LayerNormRow<T>;
  __shared__ typename K::Shared s;
  K::fold(x, n, s, blockIdx.x, threadIdx.x, blockDim.x);
  __syncthreads();
  for (int stride = blockDim.x / 2; stride > 0; stride >>= 1) {
    K::combine(s, threadIdx.x, stride);
    __syncthreads();
  }
  K::write(x, w, sw, b, sb, out, mean_out, rstd_out, n, eps, s, blockIdx.x, threadIdx.x, blockDim.x);
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
  EMBER_CHECK(rows <= kMaxRowBlocks, "layer_norm: too many rows for one launch (", rows, ")");
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
