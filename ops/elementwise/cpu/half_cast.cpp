#include "ops/elementwise/cpu/half_cast.h"

#include <atomic>
#include <type_traits>

#include "framework/core/parallel.h"
#include "ops/common/cpu/half_convert.h"
#include "ops/shape/shape_ops.h"

namespace ember::cpu {

namespace {

constexpr int64_t kGrain = 1 << 14;

template <class T>
constexpr bool is_half_v = std::is_same_v<T, bfloat16> || std::is_same_v<T, float16>;

template <class In, class Out>
void convert_loop(const In* in, Out* out, int64_t n, std::atomic<bool>& bad) {
  if constexpr (std::is_same_v<In, float> && is_half_v<Out>) {
    parallel_for(n, kGrain, [&](int64_t b, int64_t e) { from_float(in + b, out + b, e - b); });
  } else if constexpr (is_half_v<In> && std::is_same_v<Out, float>) {
    parallel_for(n, kGrain, [&](int64_t b, int64_t e) { to_float(in + b, out + b, e - b); });
  } else {
    parallel_for(n, kGrain, [&](int64_t b, int64_t e) {
      for (int64_t i = b; i < e; ++i) {
        double v;
        if constexpr (is_half_v<In>) v = double(float(in[i]));
        else v = double(in[i]);
        if constexpr (is_half_v<Out>) {
          out[i] = Out(float_for_half(v));
        } else if constexpr (std::is_same_v<Out, int64_t>) {
          if (!(v >= -9223372036854775808.0 && v < 9223372036854775808.0)) {
            bad.store(true, std::memory_order_relaxed);
            out[i] = 0;
          } else {
            out[i] = int64_t(v);
          }
        } else if constexpr (std::is_same_v<Out, bool>) {
          out[i] = v != 0;  // NaN is nonzero, so true, as for float32
        } else {
          out[i] = Out(v);
        }
      }
    });
  }
}

}  // namespace

Tensor cast_half(const Tensor& x_in, DType to) {
  check_cpu(x_in, "cast");
  EMBER_CHECK(is_half(x_in.dtype()) || is_half(to), "cast_half: neither ", x_in.dtype(), " nor ", to, " is a 16-bit float");
  Tensor x = x_in.is_contiguous() ? x_in : contiguous_kernel(x_in);
  Tensor out = empty(x.shape(), to);
  std::atomic<bool> bad{false};
  EMBER_DISPATCH_EVERY(x.dtype(), "cast", [&] {
    using In = scalar_t;
    EMBER_DISPATCH_EVERY(to, "cast", [&] {
      convert_loop<In, scalar_t>(static_cast<const In*>(x.raw_data()), static_cast<scalar_t*>(out.raw_data()), x.numel(),
                                 bad);
    });
  });
  EMBER_CHECK(!bad.load(), "cast: a ", x.dtype(), " value is NaN, infinite or outside int64's range",
              " (expected finite values in [-2^63, 2^63) to cast to int64)");
  return out;
}

}  // namespace ember::cpu
