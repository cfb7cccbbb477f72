// The matmul study's CUDA kernels, the steps from one thread per output towards cuBLAS
// (examples/matmul/GPU.md). They are not part of the library: a program or test that compares
// them links ember_matmul_cuda_study and calls register_matmul_cuda_study_kernels(), after which
// matmul selects each on CUDA tensors by name (MatmulOptions::impl = "naive", "tiled",
// "register_tiled" or "register_tiled_db") and every table-driven test covers it. This header
// needs no CUDA headers; the kernels are in kernels.cu.
#pragma once
#include <cstdint>

#include "ops/matmul/cuda_gemm_view.h"
#include "ops/matmul/matmul.h"

namespace ember::matmul_cuda_study {

// C[z] = A[z] B[z] for z < batch on the default stream, asynchronously; a batch beyond a grid's
// 65535 z-blocks runs in slices. ember::Error for an output too large for one grid, or (tiled) a
// tile other than 4, 8, 16 or 32.
template <class T>
void launch_naive(const cuda::GemmView<T>& g, int64_t batch);
template <class T>
void launch_tiled(const cuda::GemmView<T>& g, int64_t batch, int tile);
// float32 only. double_buffered: two shared tiles, the next step's global loads in flight during
// this step's math ("register_tiled_db").
void launch_register_tiled(const cuda::GemmView<float>& g, int64_t batch, bool double_buffered);

// Registers "naive" and "tiled" (float32 and float64; tiled reads MatmulOptions::tile) and
// "register_tiled" and "register_tiled_db" (float32) as CUDA variants of matmul. Once per process:
// later calls do nothing. Needs no GPU: the kernels run only when a CUDA tensor selects them.
void register_matmul_cuda_study_kernels();

}  // namespace ember::matmul_cuda_study

// The same registration under a C name, for a caller that opens libember_matmul_cuda_study.so
// at run time and looks it up (ember.register_study_kernels(cuda=True) in Python).
extern "C" void ember_matmul_cuda_study_register();
