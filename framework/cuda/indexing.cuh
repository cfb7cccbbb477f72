// Shared helpers for Ember's CUDA kernels: launch sizes and a strided-offset calculator that lets
// elementwise kernels read views (transposed, sliced, broadcast with stride 0) without copies.
// CUDA-only (.cu files).
#pragma once
#include <array>
#include <cstdint>

#include "framework/cuda/check.h"
#include "framework/core/shape.h"
#include "framework/core/tensor.h"

namespace ember::cuda {

constexpr int kMaxDims = 10;
constexpr int kThreads = 256;

// Blocks for a grid-stride loop over n items: enough to fill the GPU, never more than needed.
inline unsigned blocks_for(int64_t n, int threads = kThreads) {
  int64_t b = (n + threads - 1) / threads;
  return unsigned(b < 1 ? 1 : (b > 65535 * 8 ? 65535 * 8 : b));
}

// Maps a row-major linear index over `shape` to the element offsets of N operands.
template <int N>
struct OffsetCalc {
  int ndim = 0;
  int64_t sizes[kMaxDims];
  int64_t strides[N][kMaxDims];
  int64_t base[N];

  __host__ __device__ void offsets(int64_t linear, int64_t* out) const {
    for (int k = 0; k < N; ++k) out[k] = base[k];
    for (int d = ndim - 1; d >= 0; --d) {
      int64_t i = linear % sizes[d];
      linear /= sizes[d];
      for (int k = 0; k < N; ++k) out[k] += i * strides[k][d];
    }
  }
};

// Builds the calculator, merging adjacent dims that are contiguous with each other in every
// operand (a contiguous tensor becomes one dim), which makes the div/mod chain short.
template <int N>
OffsetCalc<N> make_offset_calc(const Shape& shape, const std::array<Shape, N>& strides, const std::array<int64_t, N>& base,
                               const char* op) {
  Shape sz;
  std::array<Shape, N> st;
  for (size_t d = 0; d < shape.size(); ++d) {
    if (shape[d] == 1) continue;  // size-1 dims never move an offset
    bool merge = !sz.empty();
    for (int k = 0; k < N && merge; ++k) merge = st[k].back() == strides[k][d] * shape[d];
    if (merge) {
      sz.back() *= shape[d];
      for (int k = 0; k < N; ++k) st[k].back() = strides[k][d];
    } else {
      sz.push_back(shape[d]);
      for (int k = 0; k < N; ++k) st[k].push_back(strides[k][d]);
    }
  }
  EMBER_CHECK(int(sz.size()) <= kMaxDims, op, ": CUDA kernels support at most ", kMaxDims,
              " non-mergeable dims, got shape ", to_string(shape));
  OffsetCalc<N> c;
  c.ndim = int(sz.size());
  for (int d = 0; d < c.ndim; ++d) {
    c.sizes[d] = sz[size_t(d)];
    for (int k = 0; k < N; ++k) c.strides[k][d] = st[k][size_t(d)];
  }
  for (int k = 0; k < N; ++k) c.base[k] = base[k];
  return c;
}

}  // namespace ember::cuda

namespace ember::cuda {

// Reports the first bad element a kernel met (an id or a target out of range): kernels call
// report(i) with the flat index, the host asks first() afterwards (one small synchronous copy).
class BadIndex {
 public:
  BadIndex() : flag_(empty({1}, DType::Int64, Device::CUDA)) {
    EMBER_CUDA_CHECK(cudaMemsetAsync(flag_.raw_data(), 0xff, sizeof(unsigned long long), nullptr));
  }
  unsigned long long* ptr() const { return static_cast<unsigned long long*>(flag_.raw_data()); }
  // The smallest reported flat index, or -1 when every element was fine.
  int64_t first() const {
    unsigned long long v = 0;
    EMBER_CUDA_CHECK(cudaMemcpy(&v, ptr(), sizeof v, cudaMemcpyDeviceToHost));
    return v == ~0ull ? -1 : int64_t(v);
  }
  __device__ static void report(unsigned long long* flag, int64_t i) { atomicMin(flag, (unsigned long long)i); }

 private:
  Tensor flag_;
};

}  // namespace ember::cuda
