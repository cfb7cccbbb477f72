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

template <class T>
struct PackedConfig {
  CpuIsa isa;
  int mr, nr;
  int64_t kc, mc, nc;
  MicroKernel<T> kernel;
};

PackedConfig<float> packed_config_f32(CpuIsa isa);
PackedConfig<double> packed_config_f64(CpuIsa isa);

}  // namespace ember::cpu
