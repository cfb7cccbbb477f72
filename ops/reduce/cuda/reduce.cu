// CUDA reductions over the middle dim of a contiguous (outer, r, inner) view: sums, and max with
// its index. The result is contiguous (outer, inner).
//
// inner == 1 (row reductions, e.g. over the last dim): one block per row, threads stride the row
// (coalesced), then a shared-memory tree combines the partials. inner > 1 (column reductions):
// one thread per (outer, inner) output walks r, and neighbouring threads read neighbouring columns,
// so the loads coalesce without any shared memory. Float sums accumulate in double as on the CPU.
#include <type_traits>

#include "framework/cuda/indexing.cuh"
#include "framework/cuda/row_launch.h"
#include "ops/reduce/cuda/row_reduce_phases.h"
#include "framework/core/tensor.h"
#include "ops/cuda_kernels.h"

namespace ember::cuda {
namespace {

template <class T>
using acc_t = row_acc_t<T>;

// One block per row; the phases are in row_reduce_phases.h, the barriers here.
template <class T>
__global__ void sum_rows(const T* x, T* o, int64_t r) {
  using K = SumRows<T>;
  __shared__ typename K::Shared s;
  K::fold(x, r, s, blockIdx.x, threadIdx.x, blockDim.x);
  __syncthreads();
  for (int stride = blockDim.x / 2; stride > 0; stride >>= 1) {
    K::combine(s, threadIdx.x, stride);
    __syncthreads();
  }
  K::store(o, s, blockIdx.x, threadIdx.x);
}

template <class T>
__global__ void sum_cols(const T* x, T* o, int64_t outer, int64_t r, int64_t inner) {
  int64_t n = outer * inner;
  for (int64_t p = blockIdx.x * int64_t(blockDim.x) + threadIdx.x; p < n; p += int64_t(gridDim.x) * blockDim.x) {
    int64_t oi = p / inner, j = p % inner;
    const T* base = x + oi * r * inner + j;
    acc_t<T> acc = 0;
    for (int64_t k = 0; k < r; ++k) acc += base[k * inner];
    o[p] = T(acc);
  }
}

template <class T>
__global__ void max_rows(const T* x, T* vals, int64_t* idx, int64_t r) {
  using K = MaxRows<T>;
  __shared__ typename K::Shared s;
  K::fold(x, r, s, blockIdx.x, threadIdx.x, blockDim.x);
  __syncthreads();
  for (int stride = blockDim.x / 2; stride > 0; stride >>= 1) {
    K::combine(s, threadIdx.x, stride);
    __syncthreads();
  }
  K::store(vals, idx, s, blockIdx.x, threadIdx.x);
}

template <class T>
__global__ void max_cols(const T* x, T* vals, int64_t* idx, int64_t outer, int64_t r, int64_t inner) {
  int64_t n = outer * inner;
  for (int64_t p = blockIdx.x * int64_t(blockDim.x) + threadIdx.x; p < n; p += int64_t(gridDim.x) * blockDim.x) {
    int64_t oi = p / inner, j = p % inner;
    const T* base = x + oi * r * inner + j;
    T best = base[0];
    int64_t bi = 0;
    for (int64_t k = 1; k < r; ++k)
      if (beats(base[k * inner], k, best, bi)) {
        best = base[k * inner];
        bi = k;
      }
    if (vals) vals[p] = best;
    if (idx) idx[p] = bi;
  }
}

void check_input(const Tensor& x, const char* op) {
  EMBER_CHECK(x.device() == Device::CUDA && x.is_contiguous(), op, ": expected a contiguous CUDA tensor");
}

}  // namespace

Tensor sum_dim(const Tensor& x, int64_t outer, int64_t r, int64_t inner) {
  check_input(x, "sum");
  Tensor out = empty({outer, inner}, x.dtype(), Device::CUDA);
  if (out.numel() == 0) return out;
  if (r == 0) return out.zero_();
  EMBER_DISPATCH_ALL(x.dtype(), "sum", [&] {
    const scalar_t* in = x.data<scalar_t>();
    scalar_t* o = out.data<scalar_t>();
    // A grid dimension holds at most 2^31 - 1 blocks; beyond that the column kernel's grid-stride loop serves.
    if (inner == 1 && outer <= kMaxRowBlocks) sum_rows<scalar_t><<<unsigned(outer), kRowThreads>>>(in, o, r);
    else sum_cols<scalar_t><<<blocks_for(outer * inner), kThreads>>>(in, o, outer, r, inner);
  });
  EMBER_CUDA_CHECK_LAUNCH();
  return out;
}

// Values (want_index false) or int64 indices (want_index true) of the max over r.
Tensor max_dim(const Tensor& x, int64_t outer, int64_t r, int64_t inner, bool want_index) {
  check_input(x, "max");
  EMBER_CHECK(r > 0, "max: cannot take the max over an empty dimension");
  Tensor out = empty({outer, inner}, want_index ? DType::Int64 : x.dtype(), Device::CUDA);
  if (out.numel() == 0) return out;
  EMBER_DISPATCH_ALL(x.dtype(), "max", [&] {
    const scalar_t* in = x.data<scalar_t>();
    scalar_t* v = want_index ? nullptr : out.data<scalar_t>();
    int64_t* ix = want_index ? out.data<int64_t>() : nullptr;
    if (inner == 1 && outer <= kMaxRowBlocks) max_rows<scalar_t><<<unsigned(outer), kRowThreads>>>(in, v, ix, r);
    else max_cols<scalar_t><<<blocks_for(outer * inner), kThreads>>>(in, v, ix, outer, r, inner);
  });
  EMBER_CUDA_CHECK_LAUNCH();
  return out;
}

// Fills the hooks that the ops call (ops/cuda_kernels.h) when libember_cuda.so is loaded.
namespace {
const bool registered = [] {
  cuda_kernels::sum_dim.set(&sum_dim);
  cuda_kernels::max_dim.set(&max_dim);
  return true;
}();
}  // namespace

}  // namespace ember::cuda
