// The CUDA attention kernels on raw device pointers (contiguous (BH, N, d) arrays). They take their
// scratch from Ember's caching allocator, launch on the default stream without synchronising (a
// caller that reads the results on the host synchronises, as for any op), and check every CUDA and
// cuBLAS call, turning failures into ember::Error. Compiled only when CMake finds CUDA (EMBER_HAS_CUDA).
#pragma once
#include <cstdint>

#include "ops/cuda_kernels.h"

namespace ember::cuda_attn {

using Dims = cuda_kernels::AttentionDims;

// True when a CUDA device can be used; any CUDA error (no driver, no device) means false.
bool available();

// Flash: one thread block per (batch*head, block of rows) in the forward; the backward runs one
// kernel per (batch*head, block of columns) for dK, dV and one per (batch*head, block of rows) for dQ.
template <class T>
void flash_forward(const Dims& dims, const T* q, const T* k, const T* v, T* o, T* lse);
template <class T>
void flash_backward(const Dims& dims, const T* q, const T* k, const T* v, const T* o, const T* lse, const T* dout,
                    T* dq, T* dk, T* dv);

// Standard: cuBLAS strided-batched GEMMs and a row softmax kernel; p receives P (BH, Nq, Nk).
template <class T>
void standard_forward(const Dims& dims, const T* q, const T* k, const T* v, T* p, T* o, T* lse);
// ds: (BH, Nq, Nk) device scratch for dP and dS.
template <class T>
void standard_backward(const Dims& dims, const T* q, const T* k, const T* v, const T* o, const T* p, const T* dout,
                       T* ds, T* dq, T* dk, T* dv);

}  // namespace ember::cuda_attn
