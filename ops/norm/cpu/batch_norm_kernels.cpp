#include "ops/norm/cpu/batch_norm_kernels.h"

#include <cmath>
#include <type_traits>
#include <utility>

#include "framework/core/parallel.h"

namespace ember::cpu {
namespace {

struct Layout {
  int64_t n, c, s;  // x is (n, c, s) contiguous
};
Layout layout(const Tensor& x) {
  Layout l{x.size(0), x.size(1), 1};
  for (int64_t d = 2; d < x.dim(); ++d) l.s *= x.size(d);
  return l;
}

// The sums of f(k) and h(k) over row [0, s), in T lanes (vectorised) in one pass, returned in double.
template <class T, class F, class H>
std::pair<double, double> row_sums(int64_t s, F&& f, H&& h) {
  T a = 0, b = 0;
#pragma omp simd reduction(+ : a, b)
  for (int64_t k = 0; k < s; ++k) {
    a += f(k);
    b += h(k);
  }
  return {double(a), double(b)};
}

template <class T>
void train(const Layout& l, const T* x, const T* w, const T* b, double eps, T* y, T* mean, T* rstd, T* var) {
  const double count = double(l.n * l.s);
  parallel_for(l.c, std::max<int64_t>(1, 32768 / std::max<int64_t>(1, l.n * l.s)), [&](int64_t c0, int64_t c1) {
    for (int64_t c = c0; c < c1; ++c) {
      // Sums of (x - K) and (x - K)^2, K the channel's first element: no cancellation when the
      // mean is large against the spread; rows are summed in T, rows' sums in double.
      const T k0 = x[c * l.s];
      double s1 = 0, s2 = 0;
      for (int64_t i = 0; i < l.n; ++i) {
        const T* row = x + (i * l.c + c) * l.s;
        auto [a, b] = row_sums<T>(l.s, [&](int64_t k) { return row[k] - k0; },
                                  [&](int64_t k) { T v = row[k] - k0; return v * v; });
        s1 += a, s2 += b;
      }
      const double m1 = s1 / count, v = std::max(s2 / count - m1 * m1, 0.0), r = 1.0 / std::sqrt(v + eps);
      mean[c] = T(double(k0) + m1), rstd[c] = T(r), var[c] = T(v);
      const T scale = T(r * (w ? double(w[c]) : 1.0));
      const T shift = T((b ? double(b[c]) : 0.0) - (double(k0) + m1) * r * (w ? double(w[c]) : 1.0));
      for (int64_t i = 0; i < l.n; ++i) {
        const T* row = x + (i * l.c + c) * l.s;
        T* out = y + (i * l.c + c) * l.s;
#pragma omp simd
        for (int64_t k = 0; k < l.s; ++k) out[k] = row[k] * scale + shift;
      }
    }
  });
}

template <class T>
void backward(const Layout& l, const T* x, const T* mean, const T* rstd, const T* w, const T* g, T* dx, T* dw, T* db) {
  const double count = double(l.n * l.s);
  parallel_for(l.c, std::max<int64_t>(1, 32768 / std::max<int64_t>(1, l.n * l.s)), [&](int64_t c0, int64_t c1) {
    for (int64_t c = c0; c < c1; ++c) {
      const T m = mean[c], r = rstd[c];
      double sg = 0, sgx = 0;  // sum(g), sum(g * xhat)
      for (int64_t i = 0; i < l.n; ++i) {
        const T* xr = x + (i * l.c + c) * l.s;
        const T* gr = g + (i * l.c + c) * l.s;
        auto [a, b] = row_sums<T>(l.s, [&](int64_t k) { return gr[k]; }, [&](int64_t k) { return gr[k] * (xr[k] - m); });
        sg += a, sgx += b;
      }
      sgx *= double(r);
      if (dw) dw[c] = T(sgx);
      if (db) db[c] = T(sg);
      if (!dx) continue;
      const double wc = w ? double(w[c]) : 1.0;
      // dx = a * g + b * x + d with the channel's constants folded.
      const T a = T(double(r) * wc);
      const T bx = T(-double(r) * wc * sgx / count * double(r));
      const T d = T(-double(r) * wc * sg / count - double(bx) * double(m));
      for (int64_t i = 0; i < l.n; ++i) {
        const T* xr = x + (i * l.c + c) * l.s;
        const T* gr = g + (i * l.c + c) * l.s;
        T* out = dx + (i * l.c + c) * l.s;
#pragma omp simd
        for (int64_t k = 0; k < l.s; ++k) out[k] = a * gr[k] + bx * xr[k] + d;
      }
    }
  });
}

template <class T>
const T* ptr(const Tensor& t) {
  return t.defined() ? t.data<T>() : nullptr;
}

}  // namespace

Tensor batch_norm_train(const Tensor& x, const Tensor& weight, const Tensor& bias, double eps, Tensor* mean,
                        Tensor* rstd, Tensor* var) {
  Tensor xc = x.contiguous(), wc = weight.defined() ? weight.contiguous() : Tensor();
  Tensor bc = bias.defined() ? bias.contiguous() : Tensor();
  const Layout l = layout(x);
  Tensor y = empty(x.shape(), x.dtype());
  *mean = empty({l.c}, x.dtype()), *rstd = empty({l.c}, x.dtype()), *var = empty({l.c}, x.dtype());
  if (x.dtype() == DType::Float32)
    train<float>(l, ptr<float>(xc), ptr<float>(wc), ptr<float>(bc), eps, y.data<float>(), mean->data<float>(),
                 rstd->data<float>(), var->data<float>());
  else
    train<double>(l, ptr<double>(xc), ptr<double>(wc), ptr<double>(bc), eps, y.data<double>(), mean->data<double>(),
                  rstd->data<double>(), var->data<double>());
  return y;
}

BatchNormGrads batch_norm_backward(const Tensor& x, const Tensor& mean, const Tensor& rstd, const Tensor& weight,
                                   const Tensor& g, bool want_dx, bool want_dw, bool want_db) {
  Tensor xc = x.contiguous(), gc = g.contiguous(), wc = weight.defined() ? weight.contiguous() : Tensor();
  const Layout l = layout(x);
  BatchNormGrads r;
  if (want_dx) r.dx = empty(x.shape(), x.dtype());
  if (want_dw) r.dweight = empty({l.c}, x.dtype());
  if (want_db) r.dbias = empty({l.c}, x.dtype());
  if (x.dtype() == DType::Float32)
    backward<float>(l, ptr<float>(xc), ptr<float>(mean), ptr<float>(rstd), ptr<float>(wc), ptr<float>(gc),
                    want_dx ? r.dx.data<float>() : nullptr, want_dw ? r.dweight.data<float>() : nullptr,
                    want_db ? r.dbias.data<float>() : nullptr);
  else
    backward<double>(l, ptr<double>(xc), ptr<double>(mean), ptr<double>(rstd), ptr<double>(wc), ptr<double>(gc),
                     want_dx ? r.dx.data<double>() : nullptr, want_dw ? r.dweight.data<double>() : nullptr,
                     want_db ? r.dbias.data<double>() : nullptr);
  return r;
}

}  // namespace ember::cpu
