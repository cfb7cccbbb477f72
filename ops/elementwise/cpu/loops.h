// CPU loops shared by the elementwise kernels: a contiguous fast path that the compiler
// vectorises and OpenMP splits, and a strided path for views and broadcasting.
#pragma once
#include <algorithm>
#include <utility>
#include "framework/core/parallel.h"
#include "framework/core/strided.h"
#include "framework/core/tensor.h"

namespace ember::cpu {

constexpr int64_t kElementwiseGrain = 1 << 15;

// The strided paths' threading: f(r0, r1) over disjoint ranges of the rows of `shape`, each of about
// kElementwiseGrain elements or more, as the contiguous paths split their elements, so that a bias
// add over many short rows uses every thread too.
template <class F>
void parallel_rows(const Shape& shape, F&& f) {
  const int64_t len = shape.empty() ? 1 : std::max<int64_t>(shape.back(), 1);
  parallel_for(row_count(shape), std::max<int64_t>(1, kElementwiseGrain / len), std::forward<F>(f));
}

// out = f(x) elementwise; out is a fresh contiguous tensor of x's shape and dtype `out_dtype`.
template <class T, class U = T, class F>
Tensor unary_loop(const Tensor& x, DType out_dtype, F f) {
  Tensor out = empty(x.shape(), out_dtype);
  U* o = static_cast<U*>(out.raw_data());
  const T* base = static_cast<const T*>(x.impl()->storage->data());
  if (x.is_contiguous()) {
    const T* in = base + x.offset();
    parallel_for(x.numel(), kElementwiseGrain, [&](int64_t b, int64_t e) {
      for (int64_t i = b; i < e; ++i) o[i] = f(in[i]);
    });
    return out;
  }
  Shape ost = out.strides();
  const int64_t s = x.strides().back();
  parallel_rows(x.shape(), [&](int64_t r0, int64_t r1) {
    for_each_row_in<2>(x.shape(), {&x.strides(), &ost}, {x.offset(), 0}, r0, r1,
                       [&](const std::array<int64_t, 2>& off, int64_t len) {
                         for (int64_t i = 0; i < len; ++i) o[off[1] + i] = f(base[off[0] + i * s]);
                       });
  });
  return out;
}

// out = f(a, b) with broadcasting; out is fresh and contiguous.
template <class T, class U = T, class F>
Tensor binary_loop(const Tensor& a, const Tensor& b, const Shape& shape, DType out_dtype, F f) {
  Tensor out = empty(shape, out_dtype);
  U* o = static_cast<U*>(out.raw_data());
  const T* pa = static_cast<const T*>(a.impl()->storage->data());
  const T* pb = static_cast<const T*>(b.impl()->storage->data());
  int64_t n = out.numel();
  if (a.shape() == shape && b.shape() == shape && a.is_contiguous() && b.is_contiguous()) {
    const T* x = pa + a.offset();
    const T* y = pb + b.offset();
    parallel_for(n, kElementwiseGrain, [&](int64_t lo, int64_t hi) {
      for (int64_t i = lo; i < hi; ++i) o[i] = f(x[i], y[i]);
    });
    return out;
  }
  if (a.shape() == shape && a.is_contiguous() && b.numel() == 1) {
    const T* x = pa + a.offset();
    T y = pb[b.offset()];
    parallel_for(n, kElementwiseGrain, [&](int64_t lo, int64_t hi) {
      for (int64_t i = lo; i < hi; ++i) o[i] = f(x[i], y);
    });
    return out;
  }
  if (b.shape() == shape && b.is_contiguous() && a.numel() == 1) {
    T x = pa[a.offset()];
    const T* y = pb + b.offset();
    parallel_for(n, kElementwiseGrain, [&](int64_t lo, int64_t hi) {
      for (int64_t i = lo; i < hi; ++i) o[i] = f(x, y[i]);
    });
    return out;
  }
  Shape sa = broadcast_strides(a.shape(), a.strides(), shape);
  Shape sb = broadcast_strides(b.shape(), b.strides(), shape);
  Shape so = out.strides();
  int64_t ia = sa.empty() ? 0 : sa.back(), ib = sb.empty() ? 0 : sb.back();
  // Rows along the last dim. The common broadcasts (a bias row added to every row: both strides 1;
  // a column or a scalar per row: one stride 0) get loops with constant strides, which the
  // compiler vectorises (with runtime strides a bias add over GPT-2's 128 x 2304 activations took
  // 2.3x as long).
  parallel_rows(shape, [&](int64_t r0, int64_t r1) {
    for_each_row_in<3>(shape, {&sa, &sb, &so}, {a.offset(), b.offset(), 0}, r0, r1,
                       [&](const std::array<int64_t, 3>& off, int64_t len) {
                         const T* x = pa + off[0];
                         const T* y = pb + off[1];
                         U* z = o + off[2];
                         if (ia == 1 && ib == 1) {
                           for (int64_t i = 0; i < len; ++i) z[i] = f(x[i], y[i]);
                         } else if (ia == 1 && ib == 0) {
                           const T yv = *y;
                           for (int64_t i = 0; i < len; ++i) z[i] = f(x[i], yv);
                         } else if (ia == 0 && ib == 1) {
                           const T xv = *x;
                           for (int64_t i = 0; i < len; ++i) z[i] = f(xv, y[i]);
                         } else {
                           for (int64_t i = 0; i < len; ++i) z[i] = f(x[i * ia], y[i * ib]);
                         }
                       });
  });
  return out;
}

}  // namespace ember::cpu
