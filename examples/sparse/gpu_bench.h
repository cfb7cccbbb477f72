// The GPU side of bench_sparse: cuSPARSE SpMV / SpGEMM and cuBLAS GEMV / GEMM, each timed as the
// operation alone (operands resident, handles, descriptors and workspace cached; CUDA events) and
// with every setup cost (dense -> CSR on the CPU, handle creation, host -> device transfers,
// descriptors, workspace, the operation, device -> host transfer of the result; host clock).
// In a build without CUDA, gpu_usable() says so and nothing else may be called.
#pragma once
#include <string>

#include "cases.h"

namespace bench {

bool gpu_usable(std::string* why);
std::string gpu_name();

// Adds cusparse_ms, cusparse_setup_ms, cublas_ms, cublas_setup_ms (the last two when `dense` is
// defined) and the GPU result's error against the CPU result.
void gpu_spmv_case(const ember::CsrTensor& a, const ember::Tensor& x, const ember::Tensor& dense,
                   const ember::Tensor& y_cpu, const Config& cfg, json& row);
void gpu_spgemm_case(const ember::CsrTensor& a, const ember::Tensor& dense, const ember::CsrTensor& c_cpu,
                     const Config& cfg, json& row);

// Phase-by-phase times of one SpMV and one SpGEMM with setup (each statement synchronised).
json gpu_profile(const ember::CsrTensor& a, const ember::Tensor& dense, const ember::Tensor& x, const Config& cfg);

}  // namespace bench
