// Matrix multiplication with NumPy semantics: (..., m, k) @ (..., k, n) -> (..., m, n), batch dims
// broadcast, 1-d operands promoted as in NumPy. The kernel variant is chosen by MatmulOptions, so
// that the matmul study can compare them; Auto picks the fastest of Ember's own for the device.
#pragma once
#include <string>

#include "framework/tensor.h"

namespace ember {

enum class MatmulImpl {
  Auto,
  Naive,          // CPU: the i-j-k triple loop; CUDA: one thread per output, global memory only
  Blocked,        // CPU: cache blocking with block sizes from MatmulOptions
  Packed,         // CPU: packed panels and a SIMD register micro-kernel, multi-threaded
  Blas,           // CPU peer: OpenBLAS cblas_sgemm (opened at run time where OpenBLAS is installed)
  Tiled,          // CUDA: TILE x TILE tiles staged in __shared__ memory
  RegisterTiled,  // CUDA: each thread computes a small register block of C
  Cublas,         // CUDA: cublasSgemm / cublasDgemm
  CublasTF32,     // CUDA: cuBLAS with TF32 tensor-core math (float32 only)
};
const char* name(MatmulImpl impl);
MatmulImpl parse_matmul_impl(const std::string& s);  // "naive", "blocked", ...; ember::Error otherwise

struct MatmulOptions {
  MatmulImpl impl = MatmulImpl::Auto;
  int tile = 16;         // CUDA Tiled: 4, 8, 16 or 32
  int block_m = 64;      // CPU Blocked: block sizes along m, n, k
  int block_n = 256;
  int block_k = 128;
};

Tensor matmul(const Tensor& a, const Tensor& b, const MatmulOptions& opt = {});

// Sets the impl that matmul uses when a call leaves it at Auto, for the guard's lifetime.
class MatmulImplGuard {
 public:
  explicit MatmulImplGuard(MatmulImpl impl);
  ~MatmulImplGuard();
  MatmulImplGuard(const MatmulImplGuard&) = delete;
  MatmulImplGuard& operator=(const MatmulImplGuard&) = delete;

 private:
  MatmulImpl prev_;
};
MatmulImpl default_matmul_impl();

// The 2-D kernel interface each CPU variant implements: C[m x n] = A[m x k] B[k x n] with
// arbitrary row and column strides (so transposed views need no copy).
struct GemmArgs {
  int64_t m, n, k;
  const void* a;
  int64_t a_rs, a_cs;  // row stride, column stride, in elements
  const void* b;
  int64_t b_rs, b_cs;
  void* c;
  int64_t c_rs;  // C is row-major with row stride c_rs
  DType dtype;
};
// Runs one 2-D product with the chosen CPU variant (not recorded).
void cpu_gemm(const GemmArgs& args, const MatmulOptions& opt);

}  // namespace ember
