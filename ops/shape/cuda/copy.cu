// dst[...] = src[...] between any two CUDA views of one shape and dtype (contiguous(), clone(),
// copy_ into a slice): contiguous pairs are one cudaMemcpy, the rest one strided kernel; and
// fill, which Tensor::fill_ and full() use for CUDA tensors.
#include "framework/cuda/indexing.cuh"
#include "framework/core/tensor.h"
#include "framework/core/cuda_hooks.h"
#include "ops/cuda_kernels.h"

namespace ember::cuda {
namespace {

template <class T>
__global__ void copy_kernel(T* dst, const T* src, int64_t n, OffsetCalc<2> calc) {
  for (int64_t i = blockIdx.x * int64_t(blockDim.x) + threadIdx.x; i < n; i += int64_t(gridDim.x) * blockDim.x) {
    int64_t off[2];
    calc.offsets(i, off);
    dst[off[0]] = src[off[1]];
  }
}

template <class T>
__global__ void fill_kernel(T* dst, T value, int64_t n, OffsetCalc<1> calc) {
  for (int64_t i = blockIdx.x * int64_t(blockDim.x) + threadIdx.x; i < n; i += int64_t(gridDim.x) * blockDim.x) {
    int64_t off[1];
    calc.offsets(i, off);
    dst[off[0]] = value;
  }
}

}  // namespace

// dst[...] = value through any view, on the GPU: scalars and constant tensors (x * 2.0, zeros)
// need no host buffer and no synchronous copy.
void fill(const Tensor& dst, double value) {
  EMBER_CHECK(dst.device() == Device::CUDA, "fill_: expected a CUDA tensor");
  int64_t n = dst.numel();
  if (n == 0) return;
  auto calc = make_offset_calc<1>(dst.shape(), {dst.strides()}, {dst.offset()}, "fill_");
  if (is_half(dst.dtype())) {  // the 16-bit pattern is rounded on the host and stored as it is
    const float f = float_for_half(value);
    const uint16_t bits = dst.dtype() == DType::BFloat16 ? float_to_bf16_bits(f) : float_to_fp16_bits(f);
    fill_kernel<uint16_t><<<blocks_for(n), kThreads>>>(static_cast<uint16_t*>(dst.impl()->storage->data()), bits, n,
                                                       calc);
    EMBER_CUDA_CHECK_LAUNCH();
    return;
  }
  EMBER_DISPATCH_ALL_AND_BOOL(dst.dtype(), "fill_", [&] {
    fill_kernel<scalar_t><<<blocks_for(n), kThreads>>>(static_cast<scalar_t*>(dst.impl()->storage->data()),
                                                       scalar_t(value), n, calc);
  });
  EMBER_CUDA_CHECK_LAUNCH();
}

void copy_strided(const Tensor& dst, const Tensor& src) {
  EMBER_CHECK(dst.device() == Device::CUDA && src.device() == Device::CUDA, "copy: expected CUDA tensors, got ",
              dst.device(), " and ", src.device());
  int64_t n = src.numel();
  if (n == 0) return;
  if (dst.is_contiguous() && src.is_contiguous()) {
    EMBER_CUDA_CHECK(cudaMemcpyAsync(dst.raw_data(), src.raw_data(), size_t(n) * itemsize(src.dtype()),
                                     cudaMemcpyDeviceToDevice, nullptr));
    return;
  }
  auto calc = make_offset_calc<2>(src.shape(), {dst.strides(), src.strides()}, {dst.offset(), src.offset()}, "copy");
  if (is_half(src.dtype())) {  // a copy moves bits: the 16-bit floats go as uint16_t
    copy_kernel<uint16_t><<<blocks_for(n), kThreads>>>(static_cast<uint16_t*>(dst.impl()->storage->data()),
                                                       static_cast<const uint16_t*>(src.impl()->storage->data()), n, calc);
    EMBER_CUDA_CHECK_LAUNCH();
    return;
  }
  EMBER_DISPATCH_ALL_AND_BOOL(src.dtype(), "copy", [&] {
    copy_kernel<scalar_t><<<blocks_for(n), kThreads>>>(static_cast<scalar_t*>(dst.impl()->storage->data()),
                                                       static_cast<const scalar_t*>(src.impl()->storage->data()), n, calc);
  });
  EMBER_CUDA_CHECK_LAUNCH();
}

// Fills the hooks that the ops call (ops/cuda_kernels.h) when libember_cuda.so is loaded.
namespace {
const bool registered = [] {
  runtime::fill.set(&fill);
  cuda_kernels::copy_strided.set(&copy_strided);
  return true;
}();
}  // namespace

}  // namespace ember::cuda
