// CUDA max_pool2d forward with the CPU kernel's contract (ops/pool/cpu/max_pool_kernels.h): the
// pooled values and, shaped like them, the int64 index into x.flatten() of each maximum. One
// thread per output element walks its window in row-major order with the CPU's rule (strictly
// greater keeps the first maximum, a NaN wins), so both devices pick the same element. The VJP
// needs no kernel here: it is embedding_backward over those indices, which has one.
#include <limits>

#include "framework/cuda/indexing.cuh"
#include "ops/cuda_kernels.h"

namespace ember::cuda {
namespace {

template <class T>
__global__ void max_pool_forward(PoolGeometry g, const T* x, T* y, int64_t* idx, int64_t total) {
  const int64_t ohw = g.oh * g.ow, hw = g.h * g.w;
  for (int64_t e = blockIdx.x * int64_t(blockDim.x) + threadIdx.x; e < total; e += int64_t(gridDim.x) * blockDim.x) {
    const int64_t plane = e / ohw, oy = (e % ohw) / g.ow, ox = e % g.ow;
    const T* px = x + plane * hw;
    T best = -std::numeric_limits<T>::infinity();
    int64_t at = -1;
    for (int64_t ki = 0; ki < g.kh; ++ki) {
      const int64_t iy = oy * g.sh - g.ph + ki * g.dh;
      if (iy < 0 || iy >= g.h) continue;
      for (int64_t kj = 0; kj < g.kw; ++kj) {
        const int64_t ix = ox * g.sw - g.pw + kj * g.dw;
        if (ix < 0 || ix >= g.w) continue;
        const int64_t i = iy * g.w + ix;
        const T v = px[i];
        // The first tap inside the image starts the search, so an all -inf window names an element.
        if (at < 0 || v > best || v != v) {
          at = i;
          best = v;
        }
      }
    }
    y[e] = best;
    idx[e] = plane * hw + at;
  }
}

}  // namespace

Tensor max_pool2d(const PoolGeometry& g, const Tensor& x_in, Tensor* indices) {
  EMBER_CHECK(x_in.device() == Device::CUDA, "max_pool2d: expected a CUDA tensor");
  Tensor x = x_in.contiguous();
  Tensor y = empty({g.n, g.c, g.oh, g.ow}, x.dtype(), Device::CUDA);
  *indices = empty({g.n, g.c, g.oh, g.ow}, DType::Int64, Device::CUDA);
  const int64_t total = y.numel();
  if (total == 0) return y;
  EMBER_DISPATCH_FLOAT(x.dtype(), "max_pool2d", [&] {
    max_pool_forward<scalar_t><<<blocks_for(total), kThreads>>>(g, x.data<scalar_t>(), y.data<scalar_t>(),
                                                                indices->data<int64_t>(), total);
  });
  EMBER_CUDA_CHECK_LAUNCH();
  return y;
}

// Fills the hooks that the ops call (ops/cuda_kernels.h) when libember_cuda.so is loaded.
namespace {
const bool registered = [] {
  cuda_kernels::max_pool2d.set(&max_pool2d);
  return true;
}();
}  // namespace

}  // namespace ember::cuda
