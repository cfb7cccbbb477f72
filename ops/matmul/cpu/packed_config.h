// The blocking parameters and micro-kernel of the packed GEMM for each instruction set and dtype.
// MR x NR is the register block of C; kc x NR (the B sliver) should stay in L1 while the micro-
// kernel sweeps the A slivers of one mc x kc block, which should stay in L2; the kc x nc block of
// packed B lives in L3. See examples/matmul/README.md for the numbers of this machine.
#pragma once
#include <cstdint>

#include "ops/matmul/cpu/kernels.h"

namespace ember::cpu {

template <class T>
using MicroKernel = void (*)(int64_t kc, const T* ap, const T* bp, T* c, int64_t c_rs, bool accumulate);

// The same product with row p of the B sliver at bp + p * b_rs (B read where it lies, unpacked),
// prefetching the pf_rows rows of NR elements at pf + r * pf_rs on the way, and with `copy`
// storing the sliver there packed, as it is read (microkernel.h).
template <class T>
using MicroKernelStridedB = void (*)(int64_t kc, const T* ap, const T* bp, int64_t b_rs, T* c, int64_t c_rs,
                                     bool accumulate, const T* pf, int64_t pf_rs, int64_t pf_rows, T* copy);

// The same product with A read where it lies, a row-major matrix whose rows are a_rs apart, and B
// a packed sliver; pf_rows rows of the packed sliver at pf are prefetched on the way.
template <class T>
using MicroKernelRowsA = void (*)(int64_t kc, const T* a, int64_t a_rs, const T* bp, T* c, int64_t c_rs,
                                  bool accumulate, const T* pf, int64_t pf_rows);

// All the rows of a product with few rows against one stripe of B, both read where they lie
// (microkernel.h, kernel_body_stripe); `next` is the next stripe, prefetched on the way, and with
// fetch_c each panel's lines of C are asked for before its k loop.
template <class T>
using MicroKernelStripe = void (*)(int64_t kc, const T* a, int64_t a_rs, int64_t rows, const T* b, int64_t b_rs,
                                   T* c, int64_t c_rs, bool accumulate, bool fetch_c, const T* next);

template <class T>
struct PackedConfig {
  CpuIsa isa;
  int mr, nr;
  int64_t kc, mc, nc;
  MicroKernel<T> kernel;
  MicroKernelStridedB<T> kernel_strided_b;  // the same register block, B read unpacked (few_rows.cpp)
  // kernel_strided_b for only the first r < MR rows of an A sliver, nullptr where there is none:
  // the last row panel of a product with few rows (64 = 10 x 6 + 4) then does no padded work.
  MicroKernelStridedB<T> first_rows_strided_b[8] = {};
  // With A read in place (nullptr: this config always packs A), and for its first r < MR rows.
  MicroKernelRowsA<T> kernel_rows_a = nullptr;
  MicroKernelRowsA<T> first_rows_rows_a[8] = {};
  // The kernel that reads `rows` (1..mr) rows of A in place: kernel_rows_a for a full panel, else
  // first_rows_rows_a[rows] (a config with the one has all of the others).
  MicroKernelRowsA<T> rows_a_kernel(int64_t rows) const { return rows == mr ? kernel_rows_a : first_rows_rows_a[rows]; }
  // Stripes of stripe_nr columns in panels of stripe_mr rows (nullptr: the config has none), and
  // narrower ones for the last stripe of a product: stripe_narrow[v], v vectors of stripe_lanes.
  MicroKernelStripe<T> stripe = nullptr;
  int stripe_mr = 0, stripe_nr = 0, stripe_lanes = 0;
  MicroKernelStripe<T> stripe_narrow[4] = {};
};

PackedConfig<float> packed_config_f32(CpuIsa isa);
PackedConfig<double> packed_config_f64(CpuIsa isa);

}  // namespace ember::cpu
