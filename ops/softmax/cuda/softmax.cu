// CUDA kernels of softmax, log_softmax and logsumexp along one dim, with the CPU kernels'
// contract (ops/softmax/softmax.cpp): any input strides, a contiguous result; logsumexp keeps
// the dim with size 1. The input is made contiguous and seen as (outer, r, inner):
// inner == 1 (the usual last dim): one block per row, threads stride the row and merge their
// running max/sum in shared memory, then write the row; inner > 1: one thread per column,
// neighbouring threads on neighbouring columns (coalesced).
#include "framework/cuda/indexing.cuh"
#include "framework/cuda/row_launch.h"
#include "ops/softmax/cuda/max_sum.cuh"
#include "ops/softmax/cuda/softmax_phases.h"
#include "ops/cuda_kernels.h"

namespace ember::cuda {
namespace {

using Kind = SoftmaxKind;

// One block per row: the row's max and sum (block_row_max_sum), then each thread writes its strided
// share (SoftmaxRow::write, softmax_phases.h).
template <class T>
__global__ void softmax_rows(const T* x, T* out, int64_t r, Kind kind) {
  __shared__ typename RowMaxSum<T>::Shared part;
  const DeviceMaxSum<T> ms = block_row_max_sum(x + blockIdx.x * r, r, part);
  SoftmaxRow<T>::write(x, out, r, kind, ms, blockIdx.x, threadIdx.x, blockDim.x);
}

template <class T>
__global__ void softmax_cols(const T* x, T* out, int64_t outer, int64_t r, int64_t inner, Kind kind) {
  int64_t n = outer * inner;
  for (int64_t p = blockIdx.x * int64_t(blockDim.x) + threadIdx.x; p < n; p += int64_t(gridDim.x) * blockDim.x) {
    int64_t o = p / inner, j = p % inner;
    const T* base = x + o * r * inner + j;
    DeviceMaxSum<T> ms = DeviceMaxSum<T>::empty();
    for (int64_t k = 0; k < r; ++k) ms.add(base[k * inner]);
    if (kind == Kind::LogSumExp) {
      out[p] = T(ms.log_sum_exp());
      continue;
    }
    T* dst = out + o * r * inner + j;
    for (int64_t k = 0; k < r; ++k) dst[k * inner] = softmax_finish(kind, base[k * inner], ms);
  }
}

Tensor run(const Tensor& x_in, int64_t dim, Kind kind, const char* op) {
  EMBER_CHECK(x_in.device() == Device::CUDA, op, ": expected a CUDA tensor");
  Tensor x = x_in.contiguous();
  const Shape& s = x.shape();
  int64_t outer = 1, r = x.dim() ? s[size_t(dim)] : 1, inner = 1;
  for (int64_t i = 0; i < dim; ++i) outer *= s[size_t(i)];
  for (int64_t i = dim + 1; i < x.dim(); ++i) inner *= s[size_t(i)];
  Shape os = s;
  if (kind == Kind::LogSumExp && x.dim()) os[size_t(dim)] = 1;
  Tensor out = empty(os, x.dtype(), Device::CUDA);
  if (out.numel() == 0 || r == 0) return kind == Kind::LogSumExp ? full(os, -INFINITY, x.dtype(), Device::CUDA) : out;
  EMBER_DISPATCH_FLOAT(x.dtype(), op, [&] {
    const scalar_t* in = x.data<scalar_t>();
    scalar_t* o = out.data<scalar_t>();
    if (inner == 1 && outer <= kMaxRowBlocks) softmax_rows<scalar_t><<<unsigned(outer), kRowThreads>>>(in, o, r, kind);
    else softmax_cols<scalar_t><<<blocks_for(outer * inner), kThreads>>>(in, o, outer, r, inner, kind);
  });
  EMBER_CUDA_CHECK_LAUNCH();
  return out;
}

}  // namespace

Tensor softmax(const Tensor& x, int64_t dim) { return run(x, dim, Kind::Softmax, "softmax"); }
Tensor log_softmax(const Tensor& x, int64_t dim) { return run(x, dim, Kind::LogSoftmax, "log_softmax"); }
Tensor logsumexp(const Tensor& x, int64_t dim) { return run(x, dim, Kind::LogSumExp, "logsumexp"); }

// Fills the hooks that the ops call (ops/cuda_kernels.h) when libember_cuda.so is loaded.
namespace {
const bool registered = [] {
  cuda_kernels::softmax.set(&softmax);
  cuda_kernels::log_softmax.set(&log_softmax);
  cuda_kernels::logsumexp.set(&logsumexp);
  return true;
}();
}  // namespace

}  // namespace ember::cuda
