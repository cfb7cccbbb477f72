// Matrix multiplication with NumPy semantics: (..., m, k) @ (..., k, n) -> (..., m, n), batch dims
// broadcast, 1-d operands promoted as in NumPy. The library ships one kernel per device (packed
// panels or GEMV on the CPU, cuBLAS on CUDA) and a few named peers; studies and users add their
// own 2-D kernels by name (register_matmul_variant on the CPU, register_matmul_cuda_variant on
// CUDA) and select any of them with MatmulOptions::impl or a ScopedVariant (ops/op_list.h), so
// that one call site runs every variant and every test covers every registered one.
#pragma once
#include <functional>
#include <string>
#include <vector>

#include "framework/core/tensor.h"
#include "ops/matmul/cuda_gemm_view.h"

namespace ember {

struct MatmulOptions {
  // The kernel variant by name: "" (or "auto") is the library's kernel for the operands' device;
  // otherwise a variant registered for that device: "packed", "blas" on the CPU, "cublas",
  // "cublas_tf32" on CUDA, and whatever a program has registered (examples/matmul's study adds
  // "naive", "ikj" and "blocked" on the CPU; examples/matmul_cuda's adds "naive", "tiled" and
  // "register_tiled" on CUDA). A name here opens a ScopedVariant for the call, so it wins over an
  // enclosing one; "" leaves the choice to the enclosing ScopedVariant, if any.
  std::string impl;
  int tile = 16;  // a parameter that variants may read: the CUDA study's "tiled" takes 4, 8, 16 or 32
};

Tensor matmul(const Tensor& a, const Tensor& b, const MatmulOptions& opt = {});

// The names registered for `d`, in registration order (without "auto").
std::vector<std::string> matmul_variants(Device d);
// parse_variant (framework/core/autograd/op_table.h) for matmul: `s` if it names the library's
// kernel ("" or "auto") or a variant registered for `d`; otherwise an ember::Error that lists the
// registered names and says how a study's kernels join.
std::string parse_matmul_impl(const std::string& s, Device d = Device::CPU);

// The 2-D kernel interface of every CPU variant: C[m x n] = A[m x k] B[k x n] with arbitrary row
// and column strides (so transposed views need no copy). m, n, k >= 1; C is overwritten.
struct GemmArgs {
  int64_t m, n, k;
  const void* a;
  int64_t a_rs, a_cs;  // row stride, column stride, in elements
  const void* b;
  int64_t b_rs, b_cs;
  void* c;
  int64_t c_rs;  // C is row-major with row stride c_rs
  DType dtype;   // Float32 or Float64, the same for A, B and C
};
using Matmul2dKernel = std::function<void(const GemmArgs&)>;

// Adds a CPU variant of matmul named `name`: matmul's checks, 1-d promotion, broadcasting,
// batching, empty products, VJP and JVP all apply to it, and it joins the op table (ScopedVariant,
// the table-driven tests, bench_ops). Other threads may run matmul meanwhile. ember::Error for an
// empty kernel, an empty or reserved name ("auto"), or a name the CPU already has.
void register_matmul_variant(const std::string& name, Matmul2dKernel kernel);

// The 2-D kernel of a CPU variant ("" or "auto": the library's own choice per shape); ember::Error
// as parse_matmul_impl for an unknown name. Benchmarks time these on buffers they own.
Matmul2dKernel matmul_cpu_kernel(const std::string& impl);
// Runs one 2-D product with the chosen CPU variant (not recorded).
void cpu_gemm(const GemmArgs& args, const MatmulOptions& opt);

// The kernel interface of a CUDA variant: C[z] = A[z] B[z] for z < batch over device pointers with
// any element strides (the layout in ops/matmul/cuda_gemm_view.h), m, n, batch >= 1 and k >= 1,
// launched asynchronously on the default stream. A variant may leave one dtype empty: matmul then
// refuses that dtype with the variant's name. `opt` is the call's options (e.g. opt.tile).
template <class T>
using CudaMatmulKernel = std::function<void(const cuda::GemmView<T>& g, int64_t batch, const MatmulOptions& opt)>;
struct CudaMatmulKernels {
  CudaMatmulKernel<float> f32;
  CudaMatmulKernel<double> f64;
};

// Adds a CUDA variant of matmul named `name`, with the same guarantees as register_matmul_variant
// (checks, batching, VJP/JVP, the op table). Registering needs no GPU and no CUDA library: the
// kernels run only on CUDA tensors. ember::Error for no kernel at all, a reserved name, or a name
// CUDA already has.
void register_matmul_cuda_variant(const std::string& name, CudaMatmulKernels kernels);
// The kernels of a registered CUDA variant (not cuBLAS, which the backend runs itself); ember::Error
// as parse_matmul_impl for an unknown name.
CudaMatmulKernels matmul_cuda_kernels(const std::string& impl);

}  // namespace ember
