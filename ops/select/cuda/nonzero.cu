// CUDA nonzero: the positions of x's nonzero elements, row-major, int64 (count, x.dim()), as the
// CPU kernel (ops/select/indexing.cpp). The output's size depends on the data, so the count comes
// back to the host first (one count_if, one synchronising copy of a number, as PyTorch's nonzero
// also does); then copy_if compacts the flat positions on the device and one thread per nonzero
// element turns its flat position into coordinates.
#include <thrust/count.h>
#include <thrust/copy.h>
#include <thrust/iterator/counting_iterator.h>

#include "framework/cuda/indexing.cuh"
#include "ops/cuda_kernels.h"
#include "ops/select/cuda/thrust_policy.cuh"

namespace ember::cuda {
namespace {

template <class T>
struct IsNonzero {
  const T* x;
  __host__ __device__ bool operator()(int64_t i) const { return x[i] != T(0); }
};

struct Dims {
  int ndim = 0;
  int64_t size[kMaxDims];
};

__global__ void coordinates_kernel(const int64_t* flat, int64_t count, Dims dims, int64_t* out) {
  for (int64_t r = int64_t(blockIdx.x) * blockDim.x + threadIdx.x; r < count; r += int64_t(gridDim.x) * blockDim.x) {
    int64_t rest = flat[r];
    for (int d = dims.ndim - 1; d >= 0; --d) {
      out[r * dims.ndim + d] = rest % dims.size[d];
      rest /= dims.size[d];
    }
  }
}

}  // namespace

// x on cuda, any dtype; returns int64 (count, x.dim()) on cuda.
Tensor nonzero(const Tensor& x_in) {
  EMBER_CHECK(x_in.dim() <= kMaxDims, "nonzero: CUDA kernels support at most ", kMaxDims, " dims, got shape ",
              to_string(x_in.shape()));
  Tensor x = x_in.contiguous();
  const int64_t n = x.numel(), nd = x.dim();
  Dims dims;
  dims.ndim = int(nd);
  for (int d = 0; d < dims.ndim; ++d) dims.size[d] = x.size(d);
  Tensor out;
  EMBER_DISPATCH_ALL_AND_BOOL(x.dtype(), "nonzero", [&] {
    IsNonzero<scalar_t> pred{x.data<scalar_t>()};
    const thrust::counting_iterator<int64_t> first(0), last(n);
    int64_t count = 0;
    with_thrust("nonzero", [&](auto policy) { count = int64_t(thrust::count_if(policy, first, last, pred)); });
    out = empty({count, nd}, DType::Int64, Device::CUDA);
    if (count == 0 || nd == 0) return;
    DeviceBuffer<int64_t> flat(count);
    with_thrust("nonzero", [&](auto policy) { thrust::copy_if(policy, first, last, flat.get(), pred); });
    coordinates_kernel<<<blocks_for(count), kThreads>>>(flat.get(), count, dims, out.data<int64_t>());
    EMBER_CUDA_CHECK_LAUNCH();
  });
  return out;
}

// Fills the hook that nonzero calls (ops/cuda_kernels.h) when libember_cuda.so is loaded.
namespace {
const bool registered = [] {
  cuda_kernels::nonzero.set(&nonzero);
  return true;
}();
}  // namespace

}  // namespace ember::cuda
