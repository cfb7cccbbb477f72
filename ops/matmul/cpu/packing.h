// The packing routines of the packed GEMM (packing.cpp), shared with kernels that drive the
// micro-kernel over their own blocks: the CPU flash attention packs K and V once per head and its
// P and dS tiles per block, then calls PackedConfig::kernel on them.
#pragma once
#include <cstdint>

#include "ops/matmul/matmul.h"

namespace ember::cpu {

// Rows [i0, i0+mr) x columns [p0, p0+kc) of A (strides g.a_rs, g.a_cs; g.m rows) into an MR-row
// sliver dst[p*mr + i], rows past g.m zero.
template <class T>
void pack_a_sliver(const GemmArgs& g, const T* a, int64_t i0, int64_t p0, int64_t kc, int mr, T* dst);
// Rows [p0, p0+kc) of B (strides g.b_rs, g.b_cs; g.n columns) for the nr-wide slivers [s0, s1) of
// the block starting at column jc: sliver s at bp + s*nr*kc as [p*nr + j], columns past g.n zero.
// `simd`: the CPU has AVX2 (a transposed float B is then packed by register transposes).
template <class T>
void pack_b_slivers(const GemmArgs& g, const T* b, int64_t p0, int64_t kc, int64_t jc, int64_t s0, int64_t s1, int nr,
                    T* bp, bool simd);

}  // namespace ember::cpu
