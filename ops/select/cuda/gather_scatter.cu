// CUDA gather, scatter_add and one_hot, with the CPU kernels' contracts (ops/select/indexing.cpp).
// One thread per index element. Index values are checked on the device as the kernel reads them
// (BadIndex): the first bad one raises the CPU's ember::Error after the launch, and the kernels
// never read or write out of bounds meanwhile. scatter_add adds with atomics, so with repeated
// indices the float summation order (the last bits) may vary from run to run; the CPU's is fixed.
#include "framework/cuda/indexing.cuh"
#include "ops/cuda_kernels.h"

namespace ember::cuda {
namespace {

// The index's shape and the data's contiguous strides, by value into the kernel.
struct IndexGeometry {
  int ndim = 0, dim = 0;
  int64_t shape[kMaxDims];
  int64_t strides[kMaxDims];
  int64_t size = 0;  // the data's size along dim: the valid index range

  // The data offset that index element p addresses: p's coordinates with dim's replaced by `at`.
  __device__ int64_t target(int64_t p, int64_t at) const {
    int64_t off = 0;
    for (int d = ndim - 1; d >= 0; --d) {
      const int64_t c = p % shape[d];
      p /= shape[d];
      off += (d == dim ? at : c) * strides[d];
    }
    return off;
  }
};

IndexGeometry index_geometry(const char* op, const Tensor& x, int64_t dim, const Tensor& index) {
  EMBER_CHECK(index.dim() <= kMaxDims, op, ": CUDA kernels support at most ", kMaxDims, " dims, got index of shape ",
              to_string(index.shape()));
  IndexGeometry g;
  g.ndim = int(index.dim());
  g.dim = int(dim);
  Shape xs = contiguous_strides(x.shape());
  for (int d = 0; d < g.ndim; ++d) {
    g.shape[d] = index.size(d);
    g.strides[d] = xs[size_t(d)];
  }
  g.size = x.dim() > 0 ? x.size(dim) : 0;
  return g;
}

__device__ inline void atomic_add(float* p, float v) { atomicAdd(p, v); }
__device__ inline void atomic_add(double* p, double v) { atomicAdd(p, v); }
__device__ inline void atomic_add(int64_t* p, int64_t v) {  // two's complement: unsigned addition is the same
  atomicAdd(reinterpret_cast<unsigned long long*>(p), static_cast<unsigned long long>(v));
}

template <class T>
__global__ void gather_kernel(IndexGeometry g, const T* x, const int64_t* index, T* out, int64_t n,
                              unsigned long long* bad) {
  for (int64_t p = blockIdx.x * int64_t(blockDim.x) + threadIdx.x; p < n; p += int64_t(gridDim.x) * blockDim.x) {
    const int64_t at = index[p];
    if (at < 0 || at >= g.size) {
      BadIndex::report(bad, p);
      out[p] = T(0);
      continue;
    }
    out[p] = x[g.target(p, at)];
  }
}

template <class T>
__global__ void scatter_add_kernel(IndexGeometry g, const int64_t* index, const T* src, T* out, int64_t n,
                                   unsigned long long* bad) {
  for (int64_t p = blockIdx.x * int64_t(blockDim.x) + threadIdx.x; p < n; p += int64_t(gridDim.x) * blockDim.x) {
    const int64_t at = index[p];
    if (at < 0 || at >= g.size) {
      BadIndex::report(bad, p);
      continue;
    }
    atomic_add(out + g.target(p, at), src[p]);
  }
}

template <class T>
__global__ void one_hot_kernel(const int64_t* index, T* out, int64_t n, int64_t classes, unsigned long long* bad) {
  for (int64_t p = blockIdx.x * int64_t(blockDim.x) + threadIdx.x; p < n; p += int64_t(gridDim.x) * blockDim.x) {
    const int64_t at = index[p];
    if (at < 0 || at >= classes) {
      BadIndex::report(bad, p);
      continue;
    }
    out[p * classes + at] = T(1);
  }
}

// The CPU's message for the first bad index (ops/select/indexing.cpp, check_index_values).
void raise_bad_index(const BadIndex& bad, const char* op, const Tensor& index, int64_t size, int64_t dim,
                     const Shape& in_shape) {
  const int64_t i = bad.first();
  if (i < 0) return;
  const int64_t v = int64_t(index.reshape({index.numel()}).slice(0, i, i + 1).to(Device::CPU).item());
  throw Error(str(op, ": index ", v, " is out of range for dim ", dim, " of size ", size, " (input shape ",
                  to_string(in_shape), ")"));
}

void check_cuda(const char* op, const Tensor& a, const Tensor& index) {
  EMBER_CHECK(a.device() == Device::CUDA && index.device() == Device::CUDA, op, ": expected CUDA tensors");
  EMBER_CHECK(index.dtype() == DType::Int64, op, ": index must be int64, got ", index.dtype());
}

void zero_fill(const Tensor& t) {
  if (t.numel() > 0) EMBER_CUDA_CHECK(cudaMemsetAsync(t.raw_data(), 0, size_t(t.numel()) * itemsize(t.dtype()), nullptr));
}

}  // namespace

Tensor gather(const Tensor& x_in, int64_t dim, const Tensor& index_in) {
  check_cuda("gather", x_in, index_in);
  Tensor x = x_in.contiguous(), index = index_in.contiguous();
  Tensor out = empty(index.shape(), x.dtype(), Device::CUDA);
  const int64_t n = index.numel();
  if (n == 0) return out;
  IndexGeometry g = index_geometry("gather", x, dim, index);
  BadIndex bad;
  EMBER_DISPATCH_ALL(x.dtype(), "gather", [&] {
    gather_kernel<scalar_t><<<blocks_for(n), kThreads>>>(g, x.data<scalar_t>(), index.data<int64_t>(),
                                                         out.data<scalar_t>(), n, bad.ptr());
  });
  EMBER_CUDA_CHECK_LAUNCH();
  raise_bad_index(bad, "gather", index, g.size, dim, x.shape());
  return out;
}

Tensor scatter_add(const Tensor& x, int64_t dim, const Tensor& index_in, const Tensor& src_in) {
  check_cuda("scatter_add", x, index_in);
  EMBER_CHECK(src_in.device() == Device::CUDA && src_in.dtype() == x.dtype(), "scatter_add: src must be a CUDA ",
              x.dtype(), " tensor, got ", src_in.dtype(), " on ", src_in.device());
  // A fresh copy: the result must never alias x, even when x is contiguous.
  Tensor out = empty(x.shape(), x.dtype(), Device::CUDA);
  if (out.numel() > 0) cuda_kernels::copy_strided(out, x);
  Tensor index = index_in.contiguous(), src = src_in.contiguous();
  const int64_t n = index.numel();
  if (n == 0) return out;
  IndexGeometry g = index_geometry("scatter_add", x, dim, index);
  BadIndex bad;
  EMBER_DISPATCH_ALL(x.dtype(), "scatter_add", [&] {
    scatter_add_kernel<scalar_t><<<blocks_for(n), kThreads>>>(g, index.data<int64_t>(), src.data<scalar_t>(),
                                                              out.data<scalar_t>(), n, bad.ptr());
  });
  EMBER_CUDA_CHECK_LAUNCH();
  raise_bad_index(bad, "scatter_add", index, g.size, dim, x.shape());
  return out;
}

Tensor one_hot(const Tensor& indices, int64_t classes, DType dtype) {
  EMBER_CHECK(indices.device() == Device::CUDA && indices.dtype() == DType::Int64,
              "one_hot: expected an int64 CUDA tensor, got ", indices.dtype(), " on ", indices.device());
  Tensor ic = indices.contiguous();
  Shape shape = ic.shape();
  shape.push_back(classes);
  Tensor out = empty(shape, dtype, Device::CUDA);
  zero_fill(out);
  const int64_t n = ic.numel();
  if (n == 0) return out;
  BadIndex bad;
  EMBER_DISPATCH_ALL(dtype, "one_hot", [&] {
    one_hot_kernel<scalar_t><<<blocks_for(n), kThreads>>>(ic.data<int64_t>(), out.data<scalar_t>(), n, classes,
                                                          bad.ptr());
  });
  EMBER_CUDA_CHECK_LAUNCH();
  raise_bad_index(bad, "one_hot", ic, classes, ic.dim(), ic.shape());
  return out;
}

// Fills the hooks that the ops call (ops/cuda_kernels.h) when libember_cuda.so is loaded.
namespace {
const bool registered = [] {
  cuda_kernels::gather.set(&gather);
  cuda_kernels::scatter_add.set(&scatter_add);
  cuda_kernels::one_hot.set(&one_hot);
  return true;
}();
}  // namespace

}  // namespace ember::cuda
