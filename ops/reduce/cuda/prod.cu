// CUDA prod over contiguous rows, with the CPU kernel's contract (ops/reduce/reduce.cpp): per row the
// product, the product of the nonzero elements and the count of zeros (the last two serve the
// backward at zeros). One thread per row multiplies in the row's order in the element type, as the
// CPU does, so both devices round alike.
#include "framework/cuda/indexing.cuh"
#include "ops/cuda_kernels.h"

namespace ember::cuda {
namespace {

template <class T>
__global__ void prod_rows_kernel(const T* x, T* out, T* nonzero, T* zeros, int64_t rows, int64_t r) {
  for (int64_t i = blockIdx.x * int64_t(blockDim.x) + threadIdx.x; i < rows; i += int64_t(gridDim.x) * blockDim.x) {
    T p = 1, q = 1;
    int64_t zeros_seen = 0;
    for (int64_t k = 0; k < r; ++k) {
      const T v = x[i * r + k];
      p *= v;
      if (v == T(0)) ++zeros_seen;
      else q *= v;
    }
    out[i] = p;
    nonzero[i] = q;
    zeros[i] = T(zeros_seen);
  }
}

}  // namespace

Tensor prod_rows(const Tensor& rows_in, Tensor* nonzero, Tensor* zeros) {
  EMBER_CHECK(rows_in.device() == Device::CUDA && rows_in.dim() == 2, "prod: expected 2-d CUDA rows");
  Tensor rows = rows_in.contiguous();
  const int64_t outer = rows.size(0), r = rows.size(1);
  Tensor out = empty({outer}, rows.dtype(), Device::CUDA);
  *nonzero = empty({outer}, rows.dtype(), Device::CUDA);
  *zeros = empty({outer}, rows.dtype(), Device::CUDA);
  if (outer == 0) return out;
  EMBER_DISPATCH_FLOAT(rows.dtype(), "prod", [&] {
    prod_rows_kernel<scalar_t><<<blocks_for(outer), kThreads>>>(rows.data<scalar_t>(), out.data<scalar_t>(),
                                                                nonzero->data<scalar_t>(), zeros->data<scalar_t>(),
                                                                outer, r);
  });
  EMBER_CUDA_CHECK_LAUNCH();
  return out;
}

// Fills the hooks that the ops call (ops/cuda_kernels.h) when libember_cuda.so is loaded.
namespace {
const bool registered = [] {
  cuda_kernels::prod_rows.set(&prod_rows);
  return true;
}();
}  // namespace

}  // namespace ember::cuda
