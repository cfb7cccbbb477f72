// The online (running-max) log-sum-exp of one strided row, shared by the softmax family and
// cross_entropy: after one read of the row, max and sum satisfy sum = sum_k exp(x_k - max).
#pragma once
#include <cmath>
#include <cstdint>
#include <limits>
#include <type_traits>

#include "ops/softmax/cpu/exp_simd.h"

namespace ember::cpu {

template <class T>
struct MaxSum {
  using acc_t = std::conditional_t<std::is_same_v<T, float>, double, T>;  // sums in double
  T max = -std::numeric_limits<T>::infinity();
  acc_t sum = 0;
  // log(sum_k exp(x_k)); -inf for an all -inf row, NaN when the row holds a NaN.
  acc_t log_sum_exp() const { return acc_t(max) + std::log(sum); }
};

template <class T>
MaxSum<T> online_max_sum(const T* row, int64_t len, int64_t stride) {
  constexpr T kNegInf = -std::numeric_limits<T>::infinity();
  MaxSum<T> r;
  if constexpr (std::is_same_v<T, float>) {  // vectorised two-pass path; it declines NaN/inf rows
    if (stride == 1 && max_sum_exp_simd(row, len, r.max, r.sum)) return r;
  }
  for (int64_t k = 0; k < len; ++k) {
    T v = row[k * stride];
    if (v > r.max) {  // a new max: rescale what was summed so far (exp(-inf) = 0 on the first)
      r.sum = r.sum * std::exp(r.max - v) + 1;
      r.max = v;
    } else if (!(r.max == kNegInf && v == kNegInf)) {  // -inf - -inf would be NaN; the term is 0
      r.sum += std::exp(v - r.max);  // a NaN input fails `v > max`, lands here and makes sum NaN
    }
  }
  return r;
}

}  // namespace ember::cpu
