#include "ops/softmax/cpu/softmax_kernels.h"

#include "framework/parallel.h"
#include "framework/rows.h"
#include "ops/softmax/cpu/online_max_sum.h"

namespace ember::cpu {
namespace {

enum class Kind { Softmax, LogSoftmax };

// Rows are independent, so threads split them; the grain keeps tiny inputs on one thread.
int64_t row_grain(int64_t len) { return std::max<int64_t>(1, 8192 / std::max<int64_t>(len, 1)); }

template <class T>
void softmax_rows(const Tensor& x, const Tensor& out, int64_t dim, Kind kind) {
  Rows in = rows_along(x, dim), o = rows_along(out, dim);
  const T* px = static_cast<const T*>(x.impl()->storage->data());
  T* po = out.data<T>() - out.offset();  // o.offset(r) counts from the storage start
  parallel_for(in.count, row_grain(in.len), [&](int64_t b, int64_t e) {
    for (int64_t r = b; r < e; ++r) {
      const T* row = px + in.offset(r);
      T* dst = po + o.offset(r);
      if constexpr (std::is_same_v<T, float>) {
        if (kind == Kind::Softmax && in.stride == 1 && o.stride == 1 && softmax_row_simd(row, in.len, dst)) continue;
      }
      MaxSum<T> ms = online_max_sum(row, in.len, in.stride);
      if (kind == Kind::Softmax) {
        T inv = T(1 / ms.sum);
        bool done = false;
        if constexpr (std::is_same_v<T, float>) {
          if (in.stride == 1 && o.stride == 1 && have_simd_exp() && std::isfinite(ms.max)) {
            exp_scale_simd(row, in.len, ms.max, inv, dst);
            done = true;
          }
        }
        if (!done)
          for (int64_t k = 0; k < in.len; ++k) dst[k * o.stride] = std::exp(row[k * in.stride] - ms.max) * inv;
      } else {
        T shift = T(ms.log_sum_exp());
        for (int64_t k = 0; k < in.len; ++k) dst[k * o.stride] = row[k * in.stride] - shift;
      }
    }
  });
}

Tensor run(const Tensor& x, int64_t dim, Kind kind, const char* op) {
  Tensor out = empty(x.shape(), x.dtype());
  if (x.numel() == 0) return out;
  EMBER_DISPATCH_FLOAT(x.dtype(), op, [&] { softmax_rows<scalar_t>(x, out, dim, kind); });
  return out;
}

}  // namespace

Tensor softmax(const Tensor& x, int64_t dim) { return run(x, dim, Kind::Softmax, "softmax"); }
Tensor log_softmax(const Tensor& x, int64_t dim) { return run(x, dim, Kind::LogSoftmax, "log_softmax"); }

Tensor logsumexp(const Tensor& x, int64_t dim) {
  Shape os = x.shape();
  if (!os.empty()) os[size_t(dim)] = 1;
  Tensor out = empty(os, x.dtype());
  if (out.numel() == 0) return out;
  EMBER_DISPATCH_FLOAT(x.dtype(), "logsumexp", [&] {
    Rows in = rows_along(x, dim), o = rows_along(out, dim);
    const scalar_t* px = static_cast<const scalar_t*>(x.impl()->storage->data());
    scalar_t* po = out.data<scalar_t>() - out.offset();  // o.offset(r) counts from the storage start
    parallel_for(in.count, row_grain(in.len), [&](int64_t b, int64_t e) {
      for (int64_t r = b; r < e; ++r)
        po[o.offset(r)] = scalar_t(online_max_sum(px + in.offset(r), in.len, in.stride).log_sum_exp());
    });
  });
  return out;
}

}  // namespace ember::cpu
