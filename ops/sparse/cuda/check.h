// Status checks for the sparse study's CUDA code: every CUDA runtime, cuSPARSE and cuBLAS call
// goes through one of these, and a failure becomes an ember::Error naming the call and the status.
#pragma once
#include <cublas_v2.h>
#include <cuda_runtime.h>
#include <cusparse.h>

#include "framework/error.h"

namespace ember::sparse::cuda::detail {

inline void check(cudaError_t s, const char* call) {
  if (s != cudaSuccess) throw Error(str("CUDA error in ", call, ": ", cudaGetErrorName(s), " (", cudaGetErrorString(s), ")"));
}
inline void check(cusparseStatus_t s, const char* call) {
  if (s != CUSPARSE_STATUS_SUCCESS)
    throw Error(str("cuSPARSE error in ", call, ": ", cusparseGetErrorName(s), " (", cusparseGetErrorString(s), ")"));
}
inline void check(cublasStatus_t s, const char* call) {
  if (s != CUBLAS_STATUS_SUCCESS) throw Error(str("cuBLAS error in ", call, ": status ", int(s)));
}

}  // namespace ember::sparse::cuda::detail

#define EMBER_SPARSE_CUDA_CHECK(call) ::ember::sparse::cuda::detail::check((call), #call)
