// The CUDA matmul variants as plain functions over device pointers (no CUDA headers needed), for
// the op's dispatcher (dispatch.cpp) and for benchmarks that time kernels on buffers they own.
#pragma once
#include <string>

#include "ops/matmul/cuda/gemm_view.h"
#include "ops/matmul/matmul.h"

namespace ember::cuda {

// Runs C[z] = A[z] B[z] for z < batch with the variant `impl` ("naive", "tiled", "register_tiled",
// "cublas", "cublas_tf32"; "" or "auto" means "cublas") on the default stream, asynchronously.
// `tile` is "tiled"'s TILE.
// Throws ember::Error for a variant the dtype does not support, a bad tile, or operands cuBLAS
// cannot express (see cublas_compatible).
void gemm(const GemmView<float>& g, int64_t batch, const std::string& impl, int tile = 16);
void gemm(const GemmView<double>& g, int64_t batch, const std::string& impl, int tile = 16);

// True when every matrix of the view is row- or column-major with a valid leading dimension,
// which cuBLAS needs (the study kernels take any strides).
template <class T>
bool cublas_compatible(const GemmView<T>& g);

// The study kernels' launchers (study_kernels.cu); batch <= 65535 here.
template <class T>
void launch_naive(const GemmView<T>& g, int batch);
template <class T>
void launch_tiled(const GemmView<T>& g, int batch, int tile);
// double_buffered: two shared tiles, the next step's global loads overlapping this step's math
// (the benchmark's register_tiled_db; matmul()'s "register_tiled" is the single-buffered kernel).
void launch_register_tiled(const GemmView<float>& g, int batch, bool double_buffered = false);

}  // namespace ember::cuda
