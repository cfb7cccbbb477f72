// CPU dropout: one pass writes x * scale or 0 per element, and the mask (scale or 0) when asked.
#pragma once
#include <cstdint>

#include "framework/core/tensor.h"

namespace ember::cpu {

// Element i (row-major) is kept when dropout_keep(seed, i, p); kept values are scaled by 1/(1-p).
Tensor dropout(const Tensor& x, double p, uint64_t seed, Tensor* mask);

}  // namespace ember::cpu
