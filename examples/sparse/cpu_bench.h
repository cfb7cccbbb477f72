// The CPU side of bench_sparse: Ember's sparse kernels at each thread count, Ember's dense matmul,
// each with and without setup (dense -> CSR conversion), validated against float64 first.
#pragma once
#include <map>

#include "cases.h"

namespace bench {

// Fills row with ember_ms_t{T}, ember_setup_ms_t{T}, dense_ms (when `dense` is defined), the
// float64 validation error and sum(y). Throws ember::Error when Ember's result is wrong.
void cpu_spmv_case(const ember::CsrTensor& a, const ember::Tensor& x, const ember::Tensor& dense, const Config& cfg,
                   json& row);

// Same for C = A A. Ember's dense GEMM time does not depend on the density (its kernel skips no
// zeros), so it is measured once per size and kept in dense_cache.
void cpu_spgemm_case(const ember::CsrTensor& a, const ember::Tensor& dense, const Config& cfg,
                     std::map<int64_t, Timing>& dense_cache, json& row);

// Phase-by-phase times (ms) of one SpGEMM with setup and one SpMV with setup, at the default
// thread count: each statement of the pipeline timed on its own.
json cpu_profile(const ember::CsrTensor& a, const ember::Tensor& dense, const ember::Tensor& x, const Config& cfg);

}  // namespace bench
