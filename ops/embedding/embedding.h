// Embedding lookup: rows of a table gathered by int64 ids.
#pragma once
#include "framework/tensor.h"

namespace ember {

// weight: (V, D); ids: int64 of any shape with values in [0, V). Returns ids.shape + (D).
Tensor embedding(const Tensor& weight, const Tensor& ids);

}  // namespace ember
