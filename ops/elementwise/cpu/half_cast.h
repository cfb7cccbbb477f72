// Casts to and from the 16-bit floats on the CPU: float32 <-> half through the vector loops of
// ops/common/cpu/half_convert.h, every other pair element by element through float32 (float64 and
// int64 rounded to odd first, so that each value is rounded to 16 bits once).
#pragma once
#include "framework/core/tensor.h"

namespace ember::cpu {

// x (any strides, CPU) converted to `to`; one of the two dtypes is bfloat16 or float16. A half
// value that int64 cannot hold (NaN, an infinity) is an ember::Error, as from float32.
Tensor cast_half(const Tensor& x, DType to);

}  // namespace ember::cpu
