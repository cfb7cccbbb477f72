// Inverted dropout: zeroes each element with probability p and scales the rest by 1 / (1 - p).
#pragma once
#include "framework/core/tensor.h"

namespace ember {

// Identity when !training or p == 0. The mask comes from `gen` (the default generator when null),
// so seeded runs repeat exactly.
Tensor dropout(const Tensor& x, double p, bool training = true, Generator* gen = nullptr);

}  // namespace ember
