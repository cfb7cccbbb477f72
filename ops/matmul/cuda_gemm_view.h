// What every CUDA matmul kernel computes, in a form that g++ can compile too: the interface of a
// CUDA variant (register_matmul_cuda_variant, ops/matmul/matmul.h), and the plain structs that the
// matmul study's per-thread phases take (examples/matmul_cuda/study/*_kernel.h), so that the CPU
// block emulator in tests/ops/matmul/cuda_emulator_test.cpp runs exactly the code the GPU runs.
#pragma once
#include <cstdint>

#ifndef EMBER_HD
#include "framework/core/host_device.h"
#endif

namespace ember::cuda {

// A block or thread index (the kernels' blockIdx / threadIdx, or the emulator's loop counters).
struct Idx3 {
  int x = 0, y = 0, z = 0;
};

// C[z] (m x n, row-major, row stride c_rs) = A[z] (m x k) * B[z] (k x n) for z in the batch,
// operands with any element strides, so transposed views need no copy. Batch z starts at
// a + z * a_bs (and likewise for b and c); a_bs may be 0 for a broadcast operand.
template <class T>
struct GemmView {
  int64_t m = 0, n = 0, k = 0;
  const T* a = nullptr;
  int64_t a_rs = 0, a_cs = 0, a_bs = 0;
  const T* b = nullptr;
  int64_t b_rs = 0, b_cs = 0, b_bs = 0;
  T* c = nullptr;
  int64_t c_rs = 0, c_bs = 0;

  EMBER_HD T a_at(int z, int64_t i, int64_t p) const { return a[z * a_bs + i * a_rs + p * a_cs]; }
  EMBER_HD T b_at(int z, int64_t p, int64_t j) const { return b[z * b_bs + p * b_rs + j * b_cs]; }
  EMBER_HD T& c_at(int z, int64_t i, int64_t j) const { return c[z * c_bs + i * c_rs + j]; }
};

// A kernel's launch shape: grid (x over columns of C, y over rows, z over the batch) and block.
struct LaunchShape {
  Idx3 grid, block;
};

inline int64_t ceil_div(int64_t a, int64_t b) { return (a + b - 1) / b; }

}  // namespace ember::cuda
