// The studies' own kernels (examples/<study>/), which join the library's ops as named variants
// only when a program registers them. Tests that select one by name, and the table-driven tests
// that cover every variant, call this first; it registers each study once per process.
#pragma once
#include "examples/attention/study/study_kernels.h"
#include "examples/matmul/study/study_kernels.h"
#ifdef EMBER_HAS_CUDA
#include "examples/matmul_cuda/study/study_kernels.h"
#endif

namespace ember::testing {

inline void register_study_kernels() {
  matmul_study::register_matmul_study_kernels();
  attention_study::register_attention_study_kernels();
#ifdef EMBER_HAS_CUDA
  matmul_cuda_study::register_matmul_cuda_study_kernels();  // needs no GPU: the kernels run only on CUDA tensors
#endif
}

}  // namespace ember::testing
