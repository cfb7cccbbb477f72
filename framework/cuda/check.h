// Status checks for every CUDA library call: each failure becomes an ember::Error naming the call,
// the file and line, and the library's own name and description of the status. Include only from
// code built with CUDA (it needs the CUDA headers).
#pragma once
#include <cublas_v2.h>
#include <cuda_runtime.h>
#include <curand.h>
#include <cusparse.h>

#include "framework/core/error.h"

namespace ember::cuda {

const char* curand_status_name(curandStatus_t s);

[[noreturn]] inline void fail(const char* lib, const char* expr, const char* file, int line, const char* name,
                              const char* what) {
  throw Error(str(lib, " call failed: ", expr, " -> ", name, " (", what, ") at ", file, ":", line));
}

inline void check(cudaError_t e, const char* expr, const char* file, int line) {
  if (e != cudaSuccess) {
    cudaGetLastError();  // clear a non-sticky error so that the next call does not report it again
    fail("CUDA", expr, file, line, cudaGetErrorName(e), cudaGetErrorString(e));
  }
}
inline void check(cublasStatus_t s, const char* expr, const char* file, int line) {
  if (s != CUBLAS_STATUS_SUCCESS) fail("cuBLAS", expr, file, line, cublasGetStatusName(s), cublasGetStatusString(s));
}
inline void check(curandStatus_t s, const char* expr, const char* file, int line) {
  if (s != CURAND_STATUS_SUCCESS) fail("cuRAND", expr, file, line, curand_status_name(s), "see curand.h");
}
inline void check(cusparseStatus_t s, const char* expr, const char* file, int line) {
  if (s != CUSPARSE_STATUS_SUCCESS) fail("cuSPARSE", expr, file, line, "cusparseStatus", cusparseGetErrorString(s));
}

// Ember's own cuBLAS handle for this thread (created on first use, bound to the default stream).
cublasHandle_t cublas_handle();

}  // namespace ember::cuda

// One macro for every library: the overload on the status type picks the right message.
#define EMBER_CUDA_CHECK(expr) ::ember::cuda::check((expr), #expr, __FILE__, __LINE__)
// After a kernel launch: reports launch-configuration errors at the launch site.
#define EMBER_CUDA_CHECK_LAUNCH() ::ember::cuda::check(cudaGetLastError(), "kernel launch", __FILE__, __LINE__)
