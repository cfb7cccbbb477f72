#include "ops/elementwise/cpu/unary_avx2.h"

#include "ops/common/cpu/avx2_math.h"

namespace ember::cpu {

#ifdef EMBER_HAVE_AVX2_MATH
namespace {

// One loop per op (a macro rather than a lambda: __m256 arguments of a lambda trip GCC's ABI
// warning), so that each inlines its math. The tail goes through one masked load and store, so it
// gets exactly the values full vectors would.
#define EMBER_MAP8(NAME, F)                                                                           \
  __attribute__((target("avx2,fma"))) void NAME(const float* x, float* y, int64_t n) {                \
    int64_t i = 0;                                                                                    \
    for (; i + 8 <= n; i += 8) _mm256_storeu_ps(y + i, F(_mm256_loadu_ps(x + i)));                   \
    if (i < n) {                                                                                      \
      alignas(32) int32_t mask[8];                                                                    \
      for (int j = 0; j < 8; ++j) mask[j] = i + j < n ? -1 : 0;                                       \
      const __m256i m = _mm256_load_si256(reinterpret_cast<const __m256i*>(mask));                    \
      _mm256_maskstore_ps(y + i, m, F(_mm256_maskload_ps(x + i, m)));                                 \
    }                                                                                                 \
  }
EMBER_MAP8(exp_avx2, avx2::exp8_ieee)
EMBER_MAP8(tanh_avx2, avx2::tanh8)
EMBER_MAP8(sigmoid_avx2, avx2::sigmoid8)
EMBER_MAP8(gelu_tanh_avx2, avx2::gelu_tanh8)
EMBER_MAP8(gelu_avx2, avx2::gelu8)
EMBER_MAP8(erf_avx2, avx2::erf8)
#undef EMBER_MAP8

}  // namespace

bool unary_avx2_supported(UnaryOp op) {
  if (!avx2::avx2_fma_available()) return false;
  return op == UnaryOp::Exp || op == UnaryOp::Tanh || op == UnaryOp::Sigmoid || op == UnaryOp::GeluTanh ||
         op == UnaryOp::Gelu || op == UnaryOp::Erf;
}

void unary_avx2(UnaryOp op, const float* x, float* y, int64_t n) {
  switch (op) {
    case UnaryOp::Exp: return exp_avx2(x, y, n);
    case UnaryOp::Tanh: return tanh_avx2(x, y, n);
    case UnaryOp::Sigmoid: return sigmoid_avx2(x, y, n);
    case UnaryOp::GeluTanh: return gelu_tanh_avx2(x, y, n);
    case UnaryOp::Gelu: return gelu_avx2(x, y, n);
    case UnaryOp::Erf: return erf_avx2(x, y, n);
    default: break;
  }
}
#else
bool unary_avx2_supported(UnaryOp) { return false; }
void unary_avx2(UnaryOp, const float*, float*, int64_t) {}
#endif

}  // namespace ember::cpu
