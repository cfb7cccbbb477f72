// Picks the widest row kernels this CPU runs, once (exp_simd.h).
#include "ops/softmax/cpu/exp_simd.h"

#include <cmath>

#include "ops/common/cpu/avx2_math.h"
#include "ops/common/cpu/avx512_math.h"

namespace ember::cpu {

namespace {
enum class Isa { None, Avx2, Avx512 };
Isa detect() {
#if defined(EMBER_HAVE_AVX512_MATH) && defined(EMBER_HAVE_AVX2_MATH)
  if (avx512::avx512_available()) return Isa::Avx512;
  if (avx2::avx2_fma_available()) return Isa::Avx2;
#endif
  return Isa::None;
}
Isa isa() {
  static const Isa chosen = detect();
  return chosen;
}
}  // namespace

bool have_simd_exp() { return isa() != Isa::None; }
const char* simd_exp_isa() { return isa() == Isa::Avx512 ? "avx512" : isa() == Isa::Avx2 ? "avx2" : "none"; }

#if defined(EMBER_HAVE_AVX512_MATH) && defined(EMBER_HAVE_AVX2_MATH)
bool max_sum_exp_simd(const float* row, int64_t len, float& max, double& sum) {
  switch (isa()) {
    case Isa::Avx512: return rows_avx512::max_sum(row, len, max, sum);
    case Isa::Avx2: return rows_avx2::max_sum(row, len, max, sum);
    default: return false;
  }
}
bool softmax_row_simd(const float* row, int64_t len, float* dst) {
  switch (isa()) {
    case Isa::Avx512: return rows_avx512::softmax_row(row, len, dst);
    case Isa::Avx2: return rows_avx2::softmax_row(row, len, dst);
    default: return false;
  }
}
void exp_scale_simd(const float* row, int64_t len, float shift, float scale, float* dst) {
  switch (isa()) {
    case Isa::Avx512: return rows_avx512::exp_scale(row, len, shift, scale, dst);
    case Isa::Avx2: return rows_avx2::exp_scale(row, len, shift, scale, dst);
    default:
      for (int64_t k = 0; k < len; ++k) dst[k] = std::exp(row[k] - shift) * scale;
  }
}
float exp_simd_scalar_check(float x) {
  switch (isa()) {
    case Isa::Avx512: return rows_avx512::exp_one(x);
    case Isa::Avx2: return rows_avx2::exp_one(x);
    default: return std::exp(x);
  }
}
#else
bool max_sum_exp_simd(const float*, int64_t, float&, double&) { return false; }
bool softmax_row_simd(const float*, int64_t, float*) { return false; }
void exp_scale_simd(const float* row, int64_t len, float shift, float scale, float* dst) {
  for (int64_t k = 0; k < len; ++k) dst[k] = std::exp(row[k] - shift) * scale;
}
float exp_simd_scalar_check(float x) { return std::exp(x); }
#endif

}  // namespace ember::cpu
