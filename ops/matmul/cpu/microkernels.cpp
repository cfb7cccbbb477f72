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
// AVX-512: 32 zmm registers. A 6 x 4-vector block = 24 accumulators + 4 for B + 1 broadcast:
// per step of k, 4 loads and 6 broadcasts feed 24 FMAs (12 cycles on 2 FMA pipes).
__attribute__((target("avx512f,avx512vl,avx2,fma"))) void avx512_f32(int64_t kc, const float* a, const float* b,
                                                                    float* c, int64_t rs, bool acc) {
  micro::kernel_body<float, 16, 6, 4>(kc, a, b, c, rs, acc);
}
__attribute__((target("avx512f,avx512vl,avx2,fma"))) void avx512_f32_sb(int64_t kc, const float* a, const float* b,
                                                                        int64_t b_rs, float* c, int64_t rs, bool acc,
                                                                        const float* pf, int64_t pf_rs, int64_t pf_rows,
                                                                        float* copy) {
  micro::kernel_body_strided<float, 16, 6, 4>(kc, a, b, b_rs, c, rs, acc, pf, pf_rs, pf_rows, copy);
}
template <int R>  // the first R rows of a 6-row sliver
__attribute__((target("avx512f,avx512vl,avx2,fma"))) void avx512_f32_sb_rows(int64_t kc, const float* a,
                                                                             const float* b, int64_t b_rs, float* c,
                                                                             int64_t rs, bool acc, const float* pf,
                                                                             int64_t pf_rs, int64_t pf_rows,
                                                                             float* copy) {
  micro::kernel_body_strided<float, 16, R, 4, 6>(kc, a, b, b_rs, c, rs, acc, pf, pf_rs, pf_rows, copy);
}
template <int R>  // R rows of a row-major A read in place
__attribute__((target("avx512f,avx512vl,avx2,fma"))) void avx512_f32_ra(int64_t kc, const float* a, int64_t a_rs,
                                                                        const float* b, float* c, int64_t rs, bool acc,
                                                                        const float* pf, int64_t pf_rows) {
  micro::kernel_body_rows_a<float, 16, R, 4>(kc, a, a_rs, b, c, rs, acc, pf, pf_rows);
}
// A stripe of 16 NV columns in panels of 8 rows: with NV = 3, 24 accumulators, 3 vectors of B and
// a broadcast per step, a row of the stripe three cache lines (stripes.cpp); NV = 1 and
// 2 for the last, narrower stripe of a product.
template <int NV>
__attribute__((target("avx512f,avx512vl,avx2,fma"))) void avx512_f32_stripe(int64_t kc, const float* a, int64_t a_rs,
                                                                            int64_t rows, const float* b, int64_t b_rs,
                                                                            float* c, int64_t rs, bool acc,
                                                                            bool fetch_c, const float* next) {
  micro::kernel_body_stripe<float, 16, 8, NV>(kc, a, a_rs, rows, b, b_rs, c, rs, acc, fetch_c, next);
}
__attribute__((target("avx512f,avx512vl,avx2,fma"))) void avx512_f64(int64_t kc, const double* a, const double* b,
                                                                    double* c, int64_t rs, bool acc) {
  micro::kernel_body<double, 8, 6, 4>(kc, a, b, c, rs, acc);
}
__attribute__((target("avx512f,avx512vl,avx2,fma"))) void avx512_f64_sb(int64_t kc, const double* a, const double* b,
                                                                        int64_t b_rs, double* c, int64_t rs, bool acc,
                                                                        const double* pf, int64_t pf_rs,
                                                                        int64_t pf_rows, double* copy) {
  micro::kernel_body_strided<double, 8, 6, 4>(kc, a, b, b_rs, c, rs, acc, pf, pf_rs, pf_rows, copy);
}
// AVX2: 16 ymm registers. 6 x 2 vectors = 12 accumulators + 2 for B + 1 broadcast.
__attribute__((target("avx2,fma"))) void avx2_f32(int64_t kc, const float* a, const float* b, float* c, int64_t rs,
                                                  bool acc) {
  micro::kernel_body<float, 8, 6, 2>(kc, a, b, c, rs, acc);
}
__attribute__((target("avx2,fma"))) void avx2_f32_sb(int64_t kc, const float* a, const float* b,
                                                     int64_t b_rs, float* c, int64_t rs, bool acc,
                                                     const float* pf, int64_t pf_rs, int64_t pf_rows, float* copy) {
  micro::kernel_body_strided<float, 8, 6, 2>(kc, a, b, b_rs, c, rs, acc, pf, pf_rs, pf_rows, copy);
}
template <int R>  // the first R rows of a 6-row sliver
__attribute__((target("avx2,fma"))) void avx2_f32_sb_rows(int64_t kc, const float* a, const float* b, int64_t b_rs,
                                                          float* c, int64_t rs, bool acc, const float* pf,
                                                          int64_t pf_rs, int64_t pf_rows, float* copy) {
  micro::kernel_body_strided<float, 8, R, 2, 6>(kc, a, b, b_rs, c, rs, acc, pf, pf_rs, pf_rows, copy);
}
template <int R>  // R rows of a row-major A read in place
__attribute__((target("avx2,fma"))) void avx2_f32_ra(int64_t kc, const float* a, int64_t a_rs, const float* b,
                                                     float* c, int64_t rs, bool acc, const float* pf,
                                                     int64_t pf_rows) {
  micro::kernel_body_rows_a<float, 8, R, 2>(kc, a, a_rs, b, c, rs, acc, pf, pf_rows);
}
__attribute__((target("avx2,fma"))) void avx2_f64(int64_t kc, const double* a, const double* b, double* c,
                                                  int64_t rs, bool acc) {
  micro::kernel_body<double, 4, 6, 2>(kc, a, b, c, rs, acc);
}
__attribute__((target("avx2,fma"))) void avx2_f64_sb(int64_t kc, const double* a, const double* b,
                                                     int64_t b_rs, double* c, int64_t rs, bool acc,
                                                     const double* pf, int64_t pf_rs, int64_t pf_rows, double* copy) {
  micro::kernel_body_strided<double, 4, 6, 2>(kc, a, b, b_rs, c, rs, acc, pf, pf_rs, pf_rows, copy);
}
#endif

// Portable: 16-byte vectors (SSE2 on any x86-64; GCC lowers them on other machines).
void portable_f32(int64_t kc, const float* a, const float* b, float* c, int64_t rs, bool acc) {
  micro::kernel_body<float, 4, 4, 2>(kc, a, b, c, rs, acc);
}
void portable_f32_sb(int64_t kc, const float* a, const float* b,
                     int64_t b_rs, float* c, int64_t rs, bool acc,
                     const float* pf, int64_t pf_rs, int64_t pf_rows, float* copy) {
  micro::kernel_body_strided<float, 4, 4, 2>(kc, a, b, b_rs, c, rs, acc, pf, pf_rs, pf_rows, copy);
}
void portable_f64(int64_t kc, const double* a, const double* b, double* c, int64_t rs, bool acc) {
  micro::kernel_body<double, 2, 4, 2>(kc, a, b, c, rs, acc);
}
void portable_f64_sb(int64_t kc, const double* a, const double* b,
                     int64_t b_rs, double* c, int64_t rs, bool acc,
                     const double* pf, int64_t pf_rs, int64_t pf_rows, double* copy) {
  micro::kernel_body_strided<double, 2, 4, 2>(kc, a, b, b_rs, c, rs, acc, pf, pf_rs, pf_rows, copy);
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

// kc, mc, nc for AVX-512 (sizes of the machine in examples/matmul/README.md): the B sliver kc x NR
// (512 x 64 floats = 128 KiB) and the A block mc x kc (192 x 512 = 384 KiB) share the 1 MiB L2, the
// A sliver MR x kc (12 KiB) stays in the 48 KiB L1d, the B block kc x nc (8 MiB) in the 32 MiB L3.
// A long kc also means fewer passes over C: each pass loads and stores every tile of C once.
// The others keep the B sliver (256 x NR) in L1, as their vectors are narrower.
PackedConfig<float> packed_config_f32(CpuIsa isa) {
#ifdef EMBER_X86
  if (isa == CpuIsa::Avx512)
    return {isa, 6, 64, 512, 192, 4096, avx512_f32, avx512_f32_sb,
            {nullptr, avx512_f32_sb_rows<1>, avx512_f32_sb_rows<2>, avx512_f32_sb_rows<3>, avx512_f32_sb_rows<4>,
             avx512_f32_sb_rows<5>},
            avx512_f32_ra<6>,
            {nullptr, avx512_f32_ra<1>, avx512_f32_ra<2>, avx512_f32_ra<3>, avx512_f32_ra<4>, avx512_f32_ra<5>},
            avx512_f32_stripe<3>,
            8,
            48,
            16,
            {nullptr, avx512_f32_stripe<1>, avx512_f32_stripe<2>}};
  if (isa == CpuIsa::Avx2)
    return {isa, 6, 16, 256, 288, 4096, avx2_f32, avx2_f32_sb,
            {nullptr, avx2_f32_sb_rows<1>, avx2_f32_sb_rows<2>, avx2_f32_sb_rows<3>, avx2_f32_sb_rows<4>,
             avx2_f32_sb_rows<5>},
            avx2_f32_ra<6>,
            {nullptr, avx2_f32_ra<1>, avx2_f32_ra<2>, avx2_f32_ra<3>, avx2_f32_ra<4>, avx2_f32_ra<5>}};
#endif
  return {CpuIsa::Portable, 4, 8, 256, 128, 4096, portable_f32, portable_f32_sb};
}

PackedConfig<double> packed_config_f64(CpuIsa isa) {
#ifdef EMBER_X86
  if (isa == CpuIsa::Avx512) return {isa, 6, 32, 512, 96, 2048, avx512_f64, avx512_f64_sb};
  if (isa == CpuIsa::Avx2) return {isa, 6, 8, 256, 144, 2048, avx2_f64, avx2_f64_sb};
#endif
  return {CpuIsa::Portable, 4, 4, 256, 64, 2048, portable_f64, portable_f64_sb};
}

}  // namespace ember::cpu
