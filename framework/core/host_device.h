// EMBER_HD marks functions shared by CPU code and CUDA kernels (per-thread phases, scalar
// formulas, ordering keys): __host__ __device__ under nvcc, nothing in plain C++ builds.
#pragma once

#ifdef __CUDACC__
#define EMBER_HD __host__ __device__
#else
#define EMBER_HD
#endif
