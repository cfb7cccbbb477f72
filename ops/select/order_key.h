// The one ordering that topk and sort use on every device, as unsigned integer keys.
//
// A float's bits, read as an unsigned integer after flipping the sign bit of non-negative values
// and every bit of negative ones, grow with the float. Two adjustments make the order total and
// the same on the CPU and the GPU:
//   - -0.0 is read as +0.0, so that the two zeros tie (they compare equal as floats);
//   - every NaN (whatever its sign or payload) gets the largest key: NaN ranks above +inf.
// So an ascending sort puts NaNs last and a descending sort (largest = true) puts them first,
// as a "NaN is the largest value" rule (the one max/argmax follow in ops/reduce).
// Descending order uses the complemented key, so both directions sort keys ascending and break
// ties by the lower index (the sorts are stable over indices taken in increasing order).
// Header-only; usable from .cu files (the functions are __host__ __device__ there).
#pragma once
#include <cstdint>
#include <cstring>

#include "framework/core/host_device.h"

namespace ember::select {

template <class T>
struct KeyOf;
template <>
struct KeyOf<float> {
  using type = uint32_t;
};
template <>
struct KeyOf<double> {
  using type = uint64_t;
};

template <class T>
EMBER_HD inline typename KeyOf<T>::type order_key(T v, bool largest) {
  using K = typename KeyOf<T>::type;
  constexpr K kSign = K(1) << (sizeof(K) * 8 - 1);
  K key;
  if (v != v) {
    key = ~K(0);
  } else {
    if (v == T(0)) v = T(0);  // -0 -> +0
    K bits;
    memcpy(&bits, &v, sizeof bits);
    key = (bits & kSign) ? ~bits : (bits | kSign);
  }
  return largest ? ~key : key;
}

}  // namespace ember::select
