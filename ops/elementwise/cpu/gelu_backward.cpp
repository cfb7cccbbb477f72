#include "ops/elementwise/cpu/gelu_backward.h"

#include <cmath>

#include "framework/core/error.h"
#include "framework/core/parallel.h"
#include "ops/common/cpu/avx2_math.h"
#include "ops/elementwise/cpu/half_cast.h"
#include "ops/elementwise/cpu/loops.h"

namespace ember::cpu {

namespace {

constexpr double kC = 0.79788456080286535588;  // sqrt(2 / pi)
constexpr double kA = 0.044715;

// y = x/2 (1 + tanh u), u = c (x + a x^3): dy/dx = (1 + tanh u)/2 + x/2 (1 - tanh^2 u) c (1 + 3 a x^2).
// Where tanh u is +-1 the second term is 0 (the composite rule would multiply 0 by an infinite u'
// for |x| past 1e12; the limit is 0).
template <class T>
void scalar_range(const T* g, const T* x, T* out, int64_t n) {
  for (int64_t i = 0; i < n; ++i) {
    const T v = x[i], th = std::tanh(T(kC) * (v + T(kA) * v * v * v));
    const T sech2 = T(1) - th * th;
    const T slope = sech2 == T(0) ? T(0) : T(0.5) * v * sech2 * T(kC) * (T(1) + T(3 * kA) * v * v);
    out[i] = g[i] * (T(0.5) * (T(1) + th) + slope);
  }
}

#ifdef EMBER_HAVE_AVX2_MATH
__attribute__((target("avx2,fma"))) void avx2_range(const float* g, const float* x, float* out, int64_t n) {
  const __m256 c = _mm256_set1_ps(float(kC)), a = _mm256_set1_ps(float(kA)), a3 = _mm256_set1_ps(float(3 * kA));
  const __m256 half = _mm256_set1_ps(0.5f), one = _mm256_set1_ps(1.0f), zero = _mm256_setzero_ps();
  int64_t i = 0;
  for (; i + 8 <= n; i += 8) {
    const __m256 v = _mm256_loadu_ps(x + i), v2 = _mm256_mul_ps(v, v);
    const __m256 th = avx2::tanh8(_mm256_mul_ps(c, _mm256_fmadd_ps(_mm256_mul_ps(a, v2), v, v)));
    const __m256 sech2 = _mm256_fnmadd_ps(th, th, one);
    __m256 slope = _mm256_mul_ps(_mm256_mul_ps(half, v), _mm256_mul_ps(sech2, _mm256_mul_ps(c, _mm256_fmadd_ps(a3, v2, one))));
    slope = _mm256_blendv_ps(slope, zero, _mm256_cmp_ps(sech2, zero, _CMP_EQ_OQ));
    const __m256 d = _mm256_fmadd_ps(half, _mm256_add_ps(one, th), slope);
    _mm256_storeu_ps(out + i, _mm256_mul_ps(_mm256_loadu_ps(g + i), d));
  }
  scalar_range(g + i, x + i, out + i, n - i);
}
#endif

// y = x Phi(x): dy/dx = Phi(x) + x phi(x). Far out phi underflows to 0 before x can overflow the
// product, so no limit needs taking (x = +-inf gives NaN, as the composite rule does).
constexpr double kInvSqrt2 = 0.70710678118654752440;
constexpr double kInvSqrt2Pi = 0.39894228040143267794;

template <class T>
void scalar_range_erf(const T* g, const T* x, T* out, int64_t n) {
  for (int64_t i = 0; i < n; ++i) {
    const T v = x[i];
    out[i] = g[i] * (T(0.5) * std::erfc(-v * T(kInvSqrt2)) + v * T(kInvSqrt2Pi) * std::exp(T(-0.5) * v * v));
  }
}

#ifdef EMBER_HAVE_AVX2_MATH
__attribute__((target("avx2,fma"))) void avx2_range_erf(const float* g, const float* x, float* out, int64_t n) {
  const __m256 half = _mm256_set1_ps(0.5f), one = _mm256_set1_ps(1.0f), mhalf = _mm256_set1_ps(-0.5f);
  const __m256 k = _mm256_set1_ps(float(kInvSqrt2Pi)), m = _mm256_set1_ps(float(-kInvSqrt2));
  int64_t i = 0;
  for (; i + 8 <= n; i += 8) {
    const __m256 v = _mm256_loadu_ps(x + i);
    // Phi(x) from erfc(|u|), u = -x / sqrt 2, as gelu8 does: the left tail keeps its relative accuracy.
    const __m256 u = _mm256_mul_ps(v, m);
    const __m256 e = _mm256_mul_ps(half, avx2::erfc8_nonnegative(_mm256_andnot_ps(_mm256_set1_ps(-0.0f), u)));
    const __m256 cdf = _mm256_blendv_ps(_mm256_sub_ps(one, e), e, _mm256_cmp_ps(u, _mm256_setzero_ps(), _CMP_GE_OQ));
    const __m256 pdf = _mm256_mul_ps(k, avx2::exp8_nonpositive(_mm256_mul_ps(mhalf, _mm256_mul_ps(v, v))));
    _mm256_storeu_ps(out + i, _mm256_mul_ps(_mm256_loadu_ps(g + i), _mm256_fmadd_ps(v, pdf, cdf)));
  }
  scalar_range_erf(g + i, x + i, out + i, n - i);
}
#endif

enum class Form { Tanh, Erf };

Tensor run(const Tensor& g_in, const Tensor& x_in, bool allow_simd, Form form) {
  const char* name = form == Form::Tanh ? "gelu_tanh backward" : "gelu backward";
  EMBER_CHECK(g_in.device() == Device::CPU && x_in.device() == Device::CPU, name, ": expected CPU tensors");
  EMBER_CHECK(g_in.shape() == x_in.shape(), name, ": the gradient's shape ", to_string(g_in.shape()),
              " differs from the input's ", to_string(x_in.shape()));
  EMBER_CHECK(g_in.dtype() == x_in.dtype() && is_floating(x_in.dtype()),
              name, ": expected floating tensors of one dtype, got ", g_in.dtype(), " and ", x_in.dtype());
  if (is_half(x_in.dtype()))  // computed in float32, rounded once
    return cast_half(run(cast_half(g_in, DType::Float32), cast_half(x_in, DType::Float32), allow_simd, form), x_in.dtype());
  const Tensor g = g_in.contiguous(), x = x_in.contiguous();
  Tensor out = empty(x.shape(), x.dtype());
  const int64_t n = x.numel();
  if (x.dtype() == DType::Float32) {
    const float *gp = g.data<float>(), *xp = x.data<float>();
    float* op = out.data<float>();
#ifdef EMBER_HAVE_AVX2_MATH
    if (allow_simd && avx2::avx2_fma_available()) {
      auto simd = form == Form::Tanh ? avx2_range : avx2_range_erf;
      parallel_for(n, kElementwiseGrain, [&](int64_t b, int64_t e) { simd(gp + b, xp + b, op + b, e - b); });
      return out;
    }
#endif
    auto loop = form == Form::Tanh ? scalar_range<float> : scalar_range_erf<float>;
    parallel_for(n, kElementwiseGrain, [&](int64_t b, int64_t e) { loop(gp + b, xp + b, op + b, e - b); });
  } else {
    const double *gp = g.data<double>(), *xp = x.data<double>();
    double* op = out.data<double>();
    auto loop = form == Form::Tanh ? scalar_range<double> : scalar_range_erf<double>;
    parallel_for(n, kElementwiseGrain, [&](int64_t b, int64_t e) { loop(gp + b, xp + b, op + b, e - b); });
  }
  return out;
}

}  // namespace

Tensor gelu_tanh_backward(const Tensor& g, const Tensor& x) { return run(g, x, true, Form::Tanh); }
Tensor gelu_tanh_backward_scalar(const Tensor& g, const Tensor& x) { return run(g, x, false, Form::Tanh); }
Tensor gelu_backward(const Tensor& g, const Tensor& x) { return run(g, x, true, Form::Erf); }
Tensor gelu_backward_scalar(const Tensor& g, const Tensor& x) { return run(g, x, false, Form::Erf); }

}  // namespace ember::cpu
