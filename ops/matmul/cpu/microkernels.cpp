// Instantiates the micro-kernel body for each instruction set, each in a function with its own
// target attribute, and picks the best one the CPU supports at run time (__builtin_cpu_supports,
// which also checks that the OS saves the wide registers). Only these wrappers are compiled for
// AVX2/AVX-512, so the library still runs on any x86-64 (or other) CPU.
#include "ops/matmul/cpu/microkernel.h"
#include "ops/matmul/cpu/packed_config.h"

namespace ember::cpu {

namespace {

#if defined(__x86_64__) || defined(__i386__)
#define EMBER_X86 1
// AVX-512: 32 zmm registers. f32: 12 x 32 block = 24 accumulators + 2 for B + 1 broadcast.
__attribute__((target("avx512f,avx512vl,avx2,fma"))) void avx512_f32(int64_t kc, const float* a, const float* b,
                                                                    float* c, int64_t rs, bool acc) {
  micro::kernel_body<float, 16, 12, 2>(kc, a, b, c, rs, acc);
}
__attribute__((target("avx512f,avx512vl,avx2,fma"))) void avx512_f64(int64_t kc, const double* a, const double* b,
                                                                    double* c, int64_t rs, bool acc) {
  micro::kernel_body<double, 8, 12, 2>(kc, a, b, c, rs, acc);
}
// AVX2: 16 ymm registers. 6 x 2 vectors = 12 accumulators + 2 for B + 1 broadcast.
__attribute__((target("avx2,fma"))) void avx2_f32(int64_t kc, const float* a, const float* b, float* c, int64_t rs,
                                                  bool acc) {
  micro::kernel_body<float, 8, 6, 2>(kc, a, b, c, rs, acc);
}
__attribute__((target("avx2,fma"))) void avx2_f64(int64_t kc, const double* a, const double* b, double* c,
                                                  int64_t rs, bool acc) {
  micro::kernel_body<double, 4, 6, 2>(kc, a, b, c, rs, acc);
}
#endif

// Portable: 16-byte vectors (SSE2 on any x86-64; GCC lowers them on other machines).
void portable_f32(int64_t kc, const float* a, const float* b, float* c, int64_t rs, bool acc) {
  micro::kernel_body<float, 4, 4, 2>(kc, a, b, c, rs, acc);
}
void portable_f64(int64_t kc, const double* a, const double* b, double* c, int64_t rs, bool acc) {
  micro::kernel_body<double, 2, 4, 2>(kc, a, b, c, rs, acc);
}

CpuIsa detect() {
#ifdef EMBER_X86
  __builtin_cpu_init();
  if (__builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512vl")) return CpuIsa::Avx512;
  if (__builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma")) return CpuIsa::Avx2;
#endif
  return CpuIsa::Portable;
}

}  // namespace

const char* name(CpuIsa isa) {
  switch (isa) {
    case CpuIsa::Avx512: return "avx512";
    case CpuIsa::Avx2: return "avx2";
    default: return "portable";
  }
}

CpuIsa best_cpu_isa() {
  static const CpuIsa isa = detect();
  return isa;
}

// kc, mc, nc: a B sliver of kc x NR (32 KiB at 256 x 32 floats) within the 48 KiB L1d, an A block
// of mc x kc (240-384 KiB) within the 1 MiB L2, a B block of kc x nc (4 MiB) within the 32 MiB L3.
PackedConfig<float> packed_config_f32(CpuIsa isa) {
#ifdef EMBER_X86
  if (isa == CpuIsa::Avx512) return {isa, 12, 32, 256, 288, 4096, avx512_f32};
  if (isa == CpuIsa::Avx2) return {isa, 6, 16, 256, 288, 4096, avx2_f32};
#endif
  return {CpuIsa::Portable, 4, 8, 256, 128, 4096, portable_f32};
}

PackedConfig<double> packed_config_f64(CpuIsa isa) {
#ifdef EMBER_X86
  if (isa == CpuIsa::Avx512) return {isa, 12, 16, 256, 144, 2048, avx512_f64};
  if (isa == CpuIsa::Avx2) return {isa, 6, 8, 256, 144, 2048, avx2_f64};
#endif
  return {CpuIsa::Portable, 4, 4, 256, 64, 2048, portable_f64};
}

}  // namespace ember::cpu
