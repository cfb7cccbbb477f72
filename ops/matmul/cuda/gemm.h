// The CUDA matmul variants as plain functions over device pointers (no CUDA headers needed), for
// the op's dispatcher (dispatch.cpp) and for benchmarks that time kernels on buffers they own.
// The library's kernel is cuBLAS; any other name runs a registered variant's kernel
// (register_matmul_cuda_variant; the study's are in examples/matmul_cuda/study).
#pragma once
#include <string>

#include "ops/matmul/cuda_gemm_view.h"
#include "ops/matmul/matmul.h"

namespace ember::cuda {

// Runs C[z] = A[z] B[z] for z < batch with the variant `impl` ("cublas", "cublas_tf32", or a
// registered variant; "" or "auto" means "cublas") on the default stream, asynchronously. `tile`
// is passed to the variant as MatmulOptions::tile.
// Throws ember::Error for an unknown variant, one without a kernel for the dtype, or operands
// cuBLAS cannot express (see cublas_compatible).
void gemm(const GemmView<float>& g, int64_t batch, const std::string& impl, int tile = 16);
void gemm(const GemmView<double>& g, int64_t batch, const std::string& impl, int tile = 16);

// True when every matrix of the view is row- or column-major with a valid leading dimension,
// which cuBLAS needs (the study kernels take any strides).
template <class T>
bool cublas_compatible(const GemmView<T>& g);

}  // namespace ember::cuda
